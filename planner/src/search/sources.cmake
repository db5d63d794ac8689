# Sources of planner/src/search (paths relative to this file).
