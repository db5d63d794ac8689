# importer benchmarks
