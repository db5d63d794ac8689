# Test sources of core.
