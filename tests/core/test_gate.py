"""The gate: severities from the failing kinds, and findings held back when the two sides' machines differ."""

from __future__ import annotations

import pytest

from scalecheck.core.gate import DEFAULT_FAIL_ON, CrossMachine, verdict
from scalecheck.data.verdict import KINDS, Comparison, Finding
from scalecheck.names import DEFAULT_FAIL_ON as NAMED_FAIL_ON
from scalecheck.names import FINDING_KINDS

DIFFER = "the machines differ: cpu 'A' vs 'B'"


def comparison(*findings: Finding) -> Comparison:
    return Comparison(parameters=("p",), target={"p": 64.0}, kernels=(), findings=findings, resamples=20, seed=0)


def finding(kind: str, message: str = "x", kernel: str = "k", **fields: object) -> Finding:
    return Finding(kernel=kernel, metric="time", kind=kind, message=message, **fields)  # type: ignore[arg-type]


def growth(rise: float | None, span: float | None) -> Finding:
    return finding("growth", "grows as p^2, the baseline as p", rise=rise, span=span)


def test_like_with_like_every_failing_kind_is_an_error() -> None:
    v = verdict(comparison(growth(1.2, 128.0), finding("prediction", "slower")))
    assert [f.severity for f in v.findings] == ["error", "error"] and v.failed
    assert all(f.held == "" for f in v.findings)


@pytest.mark.parametrize("kind", ["growth", "prediction", "measured", "overhead", "segmentation"])
def test_across_machines_level_findings_are_held_back(kind: str) -> None:
    v = verdict(comparison(finding(kind, "slower")), fail_on=(kind,), machines_differ=DIFFER)
    assert not v.failed
    (f,) = v.findings
    assert f.severity == "warning" and f.held == f"held back: {DIFFER}, and this can be a level difference"


@pytest.mark.parametrize("rise, span, fails", [
    (11.3, 128.0, True),  # p -> p^(3/2) over sizes 1k..128k
    (75.0, 128.0, True),  # log p -> p there
    (8.0, 128.0, True),  # p -> p log p over sizes 2..256
    (3.9, 128.0, False),  # a rise a memory hierarchy can give
    (1.7, 128.0, False),  # a log factor over 1k..128k: the cache case
    (20.0, 1e6, False),  # a log factor over 1..10^6: slope 0.22
    (None, 128.0, False),  # no rise known: not proven beyond a hierarchy
    (11.3, None, False),
], ids=["p_to_p1.5", "log_to_p", "log_factor_small_sizes", "small_rise", "log_factor", "log_factor_huge_range",
        "unknown_rise", "unknown_span"])
def test_across_machines_growth_fails_only_beyond_a_memory_hierarchy(rise: float | None, span: float | None,
                                                                       fails: bool) -> None:
    v = verdict(comparison(growth(rise, span)), machines_differ=DIFFER)
    assert v.failed is fails
    assert (v.findings[0].held == "") is fails
    if not fails:
        assert v.findings[0].held.startswith(f"held back: {DIFFER}, and this can be a ")
        if rise is not None:
            assert f"within what a memory hierarchy does (the ratio rises {rise:.3g}x" in v.findings[0].held


def test_across_machines_a_prediction_far_beyond_a_memory_hierarchy_fails() -> None:
    """A growth change the growth test alone did not prove still shows as a prediction whose ratio keeps rising."""
    rising = finding("prediction", "predicted 30x", rise=12.0, span=128.0)
    level = finding("prediction", "predicted 1.3x", "k2", rise=1.02, span=128.0)
    v = verdict(comparison(rising, level), machines_differ=DIFFER)
    assert [(f.kernel, f.severity) for f in v.findings] == [("k", "error"), ("k2", "warning")]


@pytest.mark.parametrize("kind", ["expectation", "structure"])
def test_across_machines_expectations_and_structure_still_fail(kind: str) -> None:
    v = verdict(comparison(finding(kind)), fail_on=(kind,), machines_differ=DIFFER)
    assert v.failed and v.findings[0].held == ""


def test_a_kind_outside_fail_on_is_a_plain_warning_and_improvements_are_notices() -> None:
    v = verdict(comparison(finding("measured"), finding("improvement", "y")),
                machines_differ=DIFFER)
    assert [(f.kind, f.severity, f.held) for f in v.findings] == [("measured", "warning", ""),
                                                                  ("improvement", "notice", "")]


def test_cross_machine_thresholds_are_parameters() -> None:
    strict = CrossMachine(min_rise=20.0)
    assert not verdict(comparison(growth(11.3, 128.0)), machines_differ=DIFFER, cross_machine=strict).failed
    with pytest.raises(ValueError, match="min_rise"):
        CrossMachine(min_rise=1.0)


@pytest.mark.parametrize("differ", ["", DIFFER], ids=["same-machine", "machines-differ"])
def test_rename_findings_never_fail(differ: str) -> None:
    """A name similarity is a guess: a renamed kernel's regression is a warning, a replacement a notice, whatever
    the failing kinds and the machines, and even when the producer marked them as errors."""
    renamed = finding("renamed", "test_sort_small was renamed test_sort_tiny? ...", "test_sort_tiny",
                      severity="error", rise=50.0, span=128.0)
    replaced = finding("replaced", "new, and grows as p^2: ...", "build_index")
    every = ("growth", "prediction", "expectation", "measured", "segmentation", "overhead", "structure")
    v = verdict(comparison(replaced, renamed), fail_on=every, machines_differ=differ)
    assert not v.failed
    assert [(f.kind, f.severity, f.held) for f in v.findings] == [("renamed", "warning", ""),
                                                                  ("replaced", "notice", "")]


@pytest.mark.parametrize("kind", ["renamed", "replaced"])
def test_rename_kinds_cannot_be_made_to_fail(kind: str) -> None:
    with pytest.raises(ValueError, match=kind):
        verdict(comparison(), fail_on=("growth", kind))


def test_findings_come_out_worst_first_then_in_kind_order_then_by_kernel() -> None:
    found = [finding("improvement", kernel="a"), finding("measured", kernel="b"), finding("prediction", kernel="b"),
             finding("growth", kernel="z"), finding("growth", kernel="a"), finding("overhead", kernel="a")]
    v = verdict(comparison(*found))
    assert [(f.severity, f.kind, f.kernel) for f in v.findings] == [
        ("error", "growth", "a"), ("error", "growth", "z"), ("error", "prediction", "b"),
        ("warning", "measured", "b"), ("warning", "overhead", "a"), ("notice", "improvement", "a")]


def test_kinds_and_default_fail_on_are_the_names_declared_once() -> None:
    assert KINDS is FINDING_KINDS and DEFAULT_FAIL_ON is NAMED_FAIL_ON
    assert verdict(comparison(*(finding(kind) for kind in DEFAULT_FAIL_ON))).failures == tuple(
        finding(kind, severity="error") for kind in DEFAULT_FAIL_ON)


def test_findings_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Finding("k", "time", "growth", "x")  # type: ignore[misc]
