"""A seeded mutation fuzzer of the commands that read users' files: cases (`cases`), mutations (`mutations`) and
the properties every run must keep (`oracle`); `test_fuzz` runs a fixed sample, benchmarks/fuzz.py runs many."""
