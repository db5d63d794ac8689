# Test sources of importers.
