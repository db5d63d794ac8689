# Test sources of cli.
