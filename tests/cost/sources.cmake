# Test sources of cost.
