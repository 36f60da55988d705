"""Renamed kernels: the pairing rule, and a regression hidden by a rename found as a warning that never fails."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from scalecheck.core.compare import CompareOptions, Expectation, compare
from scalecheck.core.gate import verdict
from scalecheck.core.renames import (SIMILARITY, find_renames, name_similarity, pair_renamed, renamed_findings,
                                     with_renames)
from scalecheck.data.growth import parse_growth
from scalecheck.data.measurement import Series
from scalecheck.data.verdict import Comparison

P = 2.0 ** np.arange(1, 9)  # 2 .. 256
FAST = CompareOptions(resamples=40)
TARGET = {"p": 4096.0}
Function = Callable[[np.ndarray], np.ndarray]
LINEAR: Function = lambda p: 1 + 0.1 * p  # noqa: E731
N_LOG_N: Function = lambda p: 2 + 0.05 * p * np.log2(p)  # noqa: E731
QUADRATIC: Function = lambda p: 2 + 0.05 * p**2 / 2  # noqa: E731


def series(kernel: str, function: Function, rng: np.random.Generator, *, metric: str = "time", unit: str = "s",
           parameters: tuple[str, ...] = ("p",)) -> Series:
    values = function(P)[:, None] * (1 + 0.02 * rng.standard_normal((P.size, 5)))
    return Series(kernel, metric, parameters, P[:, None], values, unit)


# -- the pairing rule ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("old, new", [
    ("test_sort_small", "test_sort_tiny"),
    ("main->solve", "main->solver"),
    ("TestSort::test_small", "TestSort::test_tiny"),
    ("test_sort[100]", "test_sort[n=100]"),  # the same test with other parametrization ids
])
def test_similar_names_are_paired(old: str, new: str) -> None:
    assert name_similarity(old, new) >= SIMILARITY
    assert pair_renamed([old], [new]) == [(old, new)]


@pytest.mark.parametrize("old, new", [
    ("test_sort", "test_hash"),  # a shared generic word only
    ("test_insert", "test_delete"),
    ("solve", "assemble"),
    ("main->io", "main->halo"),
])
def test_dissimilar_names_are_not_paired(old: str, new: str) -> None:
    assert name_similarity(old, new) < SIMILARITY
    assert pair_renamed([old], [new]) == []


def test_parametrization_ids_alone_make_names_equal() -> None:
    assert name_similarity("test_sort[small-1]", "test_sort[tiny]") == 1.0
    assert name_similarity("test_sort", "test_sort") == 1.0


def test_pairing_is_one_to_one_best_first() -> None:
    # both new names resemble test_sort_small; each old name is used once, the closest pair first
    pairs = pair_renamed(["test_sort_small", "test_sort_large"], ["test_sort_smaller", "test_sort_huge"])
    assert pairs[0] == ("test_sort_small", "test_sort_smaller")
    assert sorted(pairs) == [("test_sort_large", "test_sort_huge"), ("test_sort_small", "test_sort_smaller")]
    # one removed kernel and two candidates: only the closer one is paired
    assert pair_renamed(["test_sort_small"], ["test_sort_tiny", "test_sort_smallest"]) == [
        ("test_sort_small", "test_sort_smallest")]
    assert pair_renamed(["a_b_c", "a_b_d"], ["a_b_c"]) == [("a_b_c", "a_b_c")]


def test_pairing_is_deterministic_on_ties() -> None:
    assert pair_renamed(["test_b", "test_a"], ["test_c"]) == pair_renamed(["test_a", "test_b"], ["test_c"]) == [
        ("test_a", "test_c")]


def test_threshold_is_checked() -> None:
    with pytest.raises(ValueError, match="threshold"):
        pair_renamed(["a"], ["b"], threshold=0.0)


def test_no_pairing_across_metrics_units_or_parameters(rng: np.random.Generator) -> None:
    base = [series("test_sort_small", LINEAR, rng), series("test_scan_small", LINEAR, rng, metric="bytes"),
            series("test_copy_small", LINEAR, rng, unit="ms")]
    cand = [series("test_sort_tiny", LINEAR, rng, metric="bytes"), series("test_scan_tiny", LINEAR, rng),
            series("test_copy_tiny", LINEAR, rng, unit="s", parameters=("n",))]
    assert find_renames(base, cand) == []
    same = [series("test_sort_tiny", LINEAR, rng)]
    [rename] = find_renames(base, same)
    assert (rename.old, rename.new, rename.metric) == ("test_sort_small", "test_sort_tiny", "time")


def test_kernels_in_both_commits_are_never_paired(rng: np.random.Generator) -> None:
    base = [series("test_sort_small", LINEAR, rng), series("test_sort_tiny", LINEAR, rng)]
    cand = [series("test_sort_tiny", LINEAR, rng)]
    assert find_renames(base, cand) == []


# -- the comparison of a pair --------------------------------------------------------------------------------------


def checked(base: list[Series], cand: list[Series], expectations: tuple[Expectation, ...] = ()
            ) -> tuple[Comparison, Comparison]:
    """The comparison of compare alone, and with the renames."""
    comparison = compare(base, cand, TARGET, settings=FAST, expectations=expectations)
    return comparison, with_renames(comparison, base, cand, settings=FAST)


def test_a_rename_hiding_a_quadratic_regression_is_a_warning_naming_both(rng: np.random.Generator) -> None:
    base = [series("test_sort_small", N_LOG_N, rng), series("test_hash", LINEAR, rng)]
    cand = [series("test_sort_tiny", QUADRATIC, rng), series("test_hash", LINEAR, rng)]
    plain, comparison = checked(base, cand)
    assert not plain.findings  # what compare alone says: one kernel removed, one new, nothing to report

    [finding] = comparison.findings
    assert (finding.kind, finding.kernel, finding.metric) == ("renamed", "test_sort_tiny", "time")
    assert finding.message.startswith("test_sort_small was renamed test_sort_tiny? it now grows as p^2, it grew as "
                                      "p * log2(p); predicted ")
    assert (finding.baseline_growth, finding.candidate_growth) == ("p * log2(p)", "p^2")
    assert finding.evidence["renamed from"] == "test_sort_small"
    assert finding.q_value is not None and finding.q_value <= 0.05
    assert finding.ratio is not None and finding.ratio > 10
    notes = {k.kernel: k.note for k in comparison.kernels}
    assert notes["test_sort_tiny"].startswith("renamed from test_sort_small? (name similarity 0.68); compared")
    assert notes["test_sort_small"] == "measured in the baseline only; renamed test_sort_tiny? (name similarity 0.68)"

    decided = verdict(comparison, fail_on=("growth", "prediction", "expectation", "measured"))
    assert not decided.failed
    assert [f.severity for f in decided.findings] == ["warning"]


def test_renamed_findings_is_the_same_analysis_without_the_notes(rng: np.random.Generator) -> None:
    base = [series("test_sort_small", N_LOG_N, rng)]
    cand = [series("test_sort_tiny", QUADRATIC, rng)]
    comparison = compare(base, cand, TARGET, settings=FAST)
    found = renamed_findings(comparison, base, cand, settings=FAST)
    assert [f.kind for f in found] == ["renamed"]
    assert found == list(with_renames(comparison, base, cand, settings=FAST).findings)
    assert not verdict(comparison, extra=found).failed


def test_a_rename_without_a_regression_is_only_noted(rng: np.random.Generator) -> None:
    base = [series("test_sort_small", N_LOG_N, rng), series("test_hash", LINEAR, rng)]
    cand = [series("test_sort_tiny", N_LOG_N, rng), series("test_hash", LINEAR, rng)]
    _, comparison = checked(base, cand)
    assert comparison.findings == ()
    note = next(k.note for k in comparison.kernels if k.kernel == "test_sort_tiny")
    assert note.startswith("renamed from test_sort_small? (name similarity 0.68); compared with the old name's "
                           "baseline: ")


def test_a_dissimilar_new_kernel_is_not_compared_with_the_removed_one(rng: np.random.Generator) -> None:
    base = [series("test_sort", N_LOG_N, rng), series("test_scan", LINEAR, rng)]
    cand = [series("test_hash", N_LOG_N, rng), series("test_scan", LINEAR, rng)]
    _, comparison = checked(base, cand)
    assert comparison.findings == () and all("renamed" not in k.note for k in comparison.kernels)


def test_an_expectation_covering_the_new_name_fails_the_build(rng: np.random.Generator) -> None:
    base = [series("test_sort_small", N_LOG_N, rng)]
    cand = [series("test_sort_tiny", QUADRATIC, rng)]
    expect = Expectation("test_sort_*", parse_growth("p log p", ("p",)), "p log p")
    _, comparison = checked(base, cand, (expect,))
    decided = verdict(comparison)
    assert decided.failed
    assert [(f.kind, f.severity) for f in decided.findings] == [("expectation", "error"), ("renamed", "warning")]


# -- a new kernel that grows faster than everything removed --------------------------------------------------------


def test_a_new_kernel_growing_faster_than_every_removed_one_is_a_notice(rng: np.random.Generator) -> None:
    base = [series("assemble", LINEAR, rng), series("solve", N_LOG_N, rng), series("test_scan", LINEAR, rng)]
    cand = [series("build_index", QUADRATIC, rng), series("test_scan", LINEAR, rng)]
    _, comparison = checked(base, cand)
    [finding] = comparison.findings
    assert (finding.kind, finding.kernel) == ("replaced", "build_index")
    assert finding.message.startswith("new, and grows as p^2: faster than each of the 2 kernels (assemble, solve; "
                                      "the fastest, solve, grew as p * log2(p)) of this metric")
    decided = verdict(comparison)
    assert not decided.failed and [f.severity for f in decided.findings] == ["notice"]


def test_no_notice_when_a_removed_kernel_grows_as_fast(rng: np.random.Generator) -> None:
    base = [series("assemble", LINEAR, rng), series("solve", QUADRATIC, rng), series("test_scan", LINEAR, rng)]
    cand = [series("build_index", QUADRATIC, rng), series("test_scan", LINEAR, rng)]
    _, comparison = checked(base, cand)
    assert comparison.findings == ()


def test_a_paired_kernel_gets_no_replacement_notice(rng: np.random.Generator) -> None:
    base = [series("test_sort_small", LINEAR, rng)]
    cand = [series("test_sort_tiny", QUADRATIC, rng)]
    _, comparison = checked(base, cand)
    assert [f.kind for f in comparison.findings] == ["renamed"]


def test_without_renames_the_comparison_is_returned_unchanged(rng: np.random.Generator) -> None:
    base = [series("k", LINEAR, rng)]
    cand = [series("k", LINEAR, rng)]
    comparison = compare(base, cand, TARGET, settings=FAST)
    assert with_renames(comparison, base, cand, settings=FAST) is comparison
