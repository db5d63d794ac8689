# Sources of planner/src/cost (paths relative to this file).
