# Sources of planner/src/render.
