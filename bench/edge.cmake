# edge benchmarks
