# Sources of planner/src/simulate (paths relative to this file).
