# Test sources of edge.
