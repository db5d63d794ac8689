# Test sources of render.
