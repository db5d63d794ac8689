# planner benchmarks
