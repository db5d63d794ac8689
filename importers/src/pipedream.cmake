# Sources of the pipedream importer.
