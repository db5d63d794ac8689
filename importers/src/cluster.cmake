# Sources of the cluster importer.
