# Sources of the work-list (bubble filling) importer.
