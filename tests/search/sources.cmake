# Test sources of search.
