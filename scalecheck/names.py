"""L0: the names a user can write (formats, aggregates, finding kinds, stores), declared once.

Stdlib only and free of numpy, so that the option table, the command line's help and the readers all use these
tuples without loading the numerics.
"""

from __future__ import annotations

# Measurement formats, in the order detection tries them (scalecheck.formats.FORMATS has one reader per name).
FORMAT_NAMES = ("scalecheck-json", "jsonl", "csv", "extrap-text", "extrap-json", "talpas", "pytest-benchmark",
                "google-benchmark", "hyperfine", "asv", "cube", "extrap-experiment")
# How a Score-P profile's values over processes and threads make one value, as in Extra-P: their mean (weak
# scaling), the mean of the threads that ran the call path (weak_threaded), their sum (strong scaling).
SCALINGS = ("weak", "weak_threaded", "strong")
# Statistics of the repetitions at a point: the first three are plain numpy statistics; tmax is min(S) plus the
# 0.95 quantile of a noise model fitted to the repetitions.
AGGREGATE_NAMES = ("mean", "median", "min", "tmax")
# When the search adds falling terms x^-i * log2(x)^-j (strong scaling: work that shrinks as processes grow): for
# the kernels whose values fall with a parameter (auto), for every kernel (always), or never.
NEGATIVE_EXPONENTS = ("auto", "always", "never")
# Every kind of finding, in the order a report lists them. "renamed", "replaced" and "improvement" never fail a
# build: the first two rest on a guess from names, the last is good news.
FINDING_KINDS = ("growth", "prediction", "expectation", "measured", "segmentation", "overhead", "structure",
                 "renamed", "replaced", "improvement")
# The kinds `fail_on` may list.
FAILABLE_KINDS = ("growth", "prediction", "measured", "expectation", "segmentation", "overhead", "structure")
DEFAULT_FAIL_ON = ("growth", "prediction", "expectation")
# Where the measurements of past commits are found in git.
STORES = ("auto", "branch", "repo")
# What a check does when no commit on the baseline side has measurements yet.
MISSING_BASELINE = ("pass", "fail")
