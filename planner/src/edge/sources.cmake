# Sources of planner/src/edge (paths relative to this file).
