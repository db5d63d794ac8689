# Sources of the pipeedge importer.
