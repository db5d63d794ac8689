# Sources of planner/src/report (paths relative to this file).
