# Test sources of report.
