# Test sources of simulate.
