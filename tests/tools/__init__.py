"""Tests that run the benchmark tools whose files scalecheck reads, on the same sorting scenario."""
