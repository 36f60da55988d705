"""The batched bootstrap: many kernels re-selected at once give each kernel exactly the outcome it has alone; and a
comparison does not import scipy.stats (seeded)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from scalecheck.core.bootstrap import Reselection, hypotheses, neighbourhood, resample, reselect, reselect_many
from scalecheck.core.compare import (CompareOptions, Expectation, KernelInput, KernelOutcome, Setup, compare,
                                     compare_kernel, compare_kernels)
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions
from scalecheck.data.measurement import Series
from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS, Factor, ModelSpec, Term

P = 2.0 ** np.arange(1, 9)  # 2 .. 256
TARGET = np.array([4096.0])
OPTIONS = FitOptions()
FAST = CompareOptions(resamples=40)
FIELDS = ("chosen", "criterion", "wrss", "noise", "dof", "predictions")


def series(function: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator, kernel: str, reps: int = 5,
           rounds: int = 0) -> Series:
    values = function(P)[:, None] * (1 + 0.05 * rng.standard_normal((P.size, reps)))
    if rounds:
        values *= np.repeat(rng.choice([1.0, 1.3], rounds), reps // rounds)[None]
    labels = np.broadcast_to(np.repeat(np.arange(1.0, rounds + 1), reps // rounds), values.shape) if rounds else None
    return Series(kernel, "time", ("p",), P[:, None], values, rounds=labels)


def spec(*blocks: tuple[int, int]) -> ModelSpec:
    return ModelSpec(tuple(Term((Factor(0, Fraction(i), j),)) for i, j in blocks))


def test_reselect_many_equals_each_kernel_alone(rng: np.random.Generator) -> None:
    """Kernels with different hypotheses (one and two terms, different lead terms), resample counts, widths, NaN
    padding and point sets, re-selected in one call: every array equals the kernel's own `reselect`."""
    chosen = [spec((1, 0)), spec((2, 0)), spec((1, 1)), spec((0, 1), (2, 0)), spec((1, 0), (3, 0)), spec()]
    jobs = []
    for k in range(18):
        points = P[:, None] if k % 5 else P[:6, None]
        specs = hypotheses(neighbourhood(chosen[k % len(chosen)], DEFAULT_BUILDING_BLOCKS)
                           + neighbourhood(chosen[(k + 2) % len(chosen)], DEFAULT_BUILDING_BLOCKS), points, TARGET)
        noise = 1 + 0.05 * rng.standard_normal((len(points), 5))
        values = (3 + 0.1 * points[:, 0] ** (1 + k % 3 / 2))[:, None] * noise
        if k % 4 == 0:
            values[1, 3:] = np.nan  # fewer repetitions at one point
        jobs.append(Reselection(points, resample(values, 30 + k % 3, rng), tuple(specs)))
    together = reselect_many(jobs, TARGET, OPTIONS)
    for job, batched in zip(jobs, together):
        alone = reselect(job.points, job.samples, job.specs, TARGET, OPTIONS)
        assert batched.specs == job.specs
        for field in FIELDS:
            np.testing.assert_array_equal(getattr(batched, field), getattr(alone, field), err_msg=field)


def kernels(rng: np.random.Generator) -> list[KernelInput]:
    """Kernels along every path of the bootstrap: unchanged, a planted growth change, no repetitions (parametric
    resamples), rounds (whole rounds resampled), a new kernel held against its expectation, a removed one."""
    pairs = {
        "unchanged": (lambda p: 2 + 0.1 * p, lambda p: 2 + 0.1 * p, 5, 0),
        "planted": (lambda p: 1 + 0.1 * p, lambda p: 1 + 0.1 * p**1.5 / 2**0.5, 5, 0),
        "quadratic": (lambda p: 5 + 0.01 * p**2, lambda p: 5 + 0.01 * p**2, 5, 0),
        "single": (lambda p: 1 + 0.3 * np.log2(p), lambda p: 1 + 0.3 * np.log2(p), 1, 0),
        "rounds": (lambda p: 1 + 0.2 * p, lambda p: 1 + 0.2 * p, 6, 3),
    }
    expected = Expectation("new", {"p": (Fraction(1), 0)}, "p")
    out = []
    for name, (before, after, reps, rounds) in pairs.items():
        base, cand = series(before, rng, name, reps, rounds), series(after, rng, name, reps, rounds)
        out.append(KernelInput(key=(name, "time"), baseline=base, candidate=cand,
                               baseline_model=fit_kernels([base])[0], candidate_model=fit_kernels([cand])[0],
                               expected=None))
    new = series(lambda p: 1 + 0.01 * p**2, rng, "new")
    out.append(KernelInput(key=("new", "time"), baseline=None, candidate=new, baseline_model=None,
                           candidate_model=fit_kernels([new])[0], expected=expected))
    gone = series(lambda p: 1 + p, rng, "gone")
    out.append(KernelInput(key=("gone", "time"), baseline=gone, candidate=None,
                           baseline_model=fit_kernels([gone])[0], candidate_model=None, expected=None))
    return out


def summary(outcome: KernelOutcome) -> tuple[object, ...]:
    row = outcome.comparison
    return (row.kernel, row.status, row.ratio, row.bound, row.upper, row.growth_up, row.growth_down, row.basis,
            row.note, [(p.test, p.p_value, p.condition, replace(p.finding, evidence={})) for p in outcome.pending],
            outcome.plain)


def test_compare_kernels_equals_each_kernel_alone(rng: np.random.Generator) -> None:
    inputs = kernels(rng)
    setup = Setup(target=TARGET, options=OPTIONS, settings=FAST, between=0.0)
    together = compare_kernels([(k, np.random.default_rng([3, i])) for i, k in enumerate(inputs)], setup)
    assert [o.comparison.status for o in together] == ["compared"] * 5 + ["new", "removed"]
    assert any(p.test == "growth" for p in together[1].pending) and together[5].pending  # found on this path
    for i, (kernel, outcome) in enumerate(zip(inputs, together)):
        alone = compare_kernel(kernel, Setup(target=TARGET, options=OPTIONS, settings=FAST, between=0.0),
                               np.random.default_rng([3, i]))
        assert summary(outcome) == summary(alone)


def test_a_comparison_gives_each_kernel_the_row_it_has_alone(rng: np.random.Generator,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """In blocks smaller than the comparison, too: a kernel's figures do not depend on the kernels beside it."""
    import scalecheck.core.compare as module

    monkeypatch.setattr(module, "BLOCK_COLUMNS", 3 * (FAST.resamples + 1))  # blocks of three kernels
    inputs = [k for k in kernels(rng) if k.baseline is not None and k.candidate is not None and k.key[0] != "rounds"]
    base, cand = [k.baseline for k in inputs], [k.candidate for k in inputs]
    both = compare(base, cand, {"p": 4096.0}, settings=FAST)  # type: ignore[arg-type]
    for k, row in zip(inputs, both.kernels):
        alone = compare([k.baseline], [k.candidate], {"p": 4096.0}, settings=FAST).kernels[0]  # type: ignore[list-item]
        assert (row.kernel, row.ratio, row.bound, row.upper, row.growth_up, row.basis) == \
            (alone.kernel, alone.ratio, alone.bound, alone.upper, alone.growth_up, alone.basis)


def test_a_comparison_does_not_import_scipy_stats() -> None:
    """scipy.stats costs 0.3-0.5 s at start-up; the tests every comparison runs use numpy and core.special."""
    code = """if True:
        import sys
        import numpy as np
        from scalecheck.core.compare import CompareOptions, compare
        from scalecheck.data.measurement import Series
        rng = np.random.default_rng(5)
        p = 2.0 ** np.arange(1, 9)
        def side(f):
            noise = 1 + 0.05 * rng.standard_normal((3, 8, 5))
            return [Series(f"k{i}", "time", ("p",), p[:, None], f(p)[:, None] * noise[i]) for i in range(3)]
        result = compare(side(lambda p: 1 + 0.1 * p), side(lambda p: 1 + 0.1 * p**2), {"p": 4096.0},
                         settings=CompareOptions(resamples=20))
        assert any(f.kind == "growth" for f in result.findings)
        print(sorted(name for name in sys.modules if name.startswith("scipy.stats")))
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# --- the per-kernel work around the batched selections: the same floats as the numpy calls they stand for ----------

def _resample_by_floor(values: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """Resamples as first written: floor(u * reps) per element, gathered point by point, NaN beyond reps."""
    n, r = values.shape
    reps = np.sum(~np.isnan(values), axis=1)
    draw = np.floor(rng.random((count, n, r)) * reps[None, :, None]).astype(int)
    out = values[np.arange(n)[None, :, None], draw]
    return np.where(np.arange(r)[None, None, :] < reps[None, :, None], out, np.nan)


@pytest.mark.parametrize("padded", [False, True], ids=["full", "padded"])
def test_resample_with_data_puts_the_data_first_then_the_same_draws(padded: bool, rng: np.random.Generator) -> None:
    values = 1 + rng.random((8, 5))
    if padded:
        values[2, 3:] = np.nan
        values[5, 1:] = np.nan  # one repetition: every draw takes it
    drawn = resample(values, 50, np.random.default_rng(11), with_data=True)
    reference = np.random.default_rng(11)
    assert drawn.shape == (51, 8, 5)
    np.testing.assert_array_equal(drawn[0], values)
    np.testing.assert_array_equal(drawn[1:], _resample_by_floor(values, 50, reference))
    np.testing.assert_array_equal(resample(values, 50, np.random.default_rng(11)), drawn[1:])
    generator = np.random.default_rng(11)
    resample(values, 50, generator)
    assert generator.random() == reference.random()  # the same draws consumed


def test_draw_holds_the_data_then_resamples_of_each_kind(rng: np.random.Generator) -> None:
    """Repetitions, rounds (resamples wider than the data: NaN-padded) and no repetitions (parametric)."""
    from scalecheck.core.bootstrap import jitter, resample_rounds, residual_spread
    from scalecheck.core.side import draw, prepare_side

    for reps, rounds in ((5, 0), (6, 3), (1, 0)):
        data = series(lambda p: 1 + 0.2 * p, rng, "k", reps, rounds)
        side = prepare_side(data, fit_kernels([data])[0], OPTIONS)
        drawn = draw(side, 30, np.random.default_rng(4))
        reference = np.random.default_rng(4)
        if rounds:
            expected = resample_rounds(side.values, side.rounds, 30, reference)  # type: ignore[arg-type]
        elif reps > 1:
            expected = resample(side.values, 30, reference)
        else:
            fitted = side.fitted.predict(side.points)
            expected = jitter(fitted, residual_spread(side.stats, fitted), 30, reference)
        width = max(side.values.shape[1], expected.shape[2])
        assert drawn.shape == (31, P.size, width)
        np.testing.assert_array_equal(drawn[0, :, :side.values.shape[1]], side.values)
        np.testing.assert_array_equal(drawn[1:, :, :expected.shape[2]], expected)
        assert np.isnan(drawn[0, :, side.values.shape[1]:]).all() and np.isnan(drawn[1:, :, expected.shape[2]:]).all()


def _bits(values: object) -> bytes:
    """The bytes of float values: tells -0.0 from 0.0, and NaN equals NaN."""
    return np.asarray(values, dtype=float).tobytes()


def _median_cases(rng: np.random.Generator) -> list[np.ndarray]:
    """Arrays as series hold them: odd and even repetitions, NaN padding, a point without values, values whose
    middle two overflow when added, zeros of both signs, and no repetitions at all."""
    full = 1 + rng.random((6, 5))
    even = 1 + rng.random((6, 4))
    padded = 1 + rng.random((6, 5))
    padded[1, 3:], padded[4, 2:] = np.nan, np.nan
    empty_row = 1 + rng.random((3, 4))
    empty_row[2] = np.nan
    huge = np.full((2, 4), 1.5e308)
    zeros = np.array([[-0.0, -0.0, -0.0], [0.0, -0.0, 1.0], [-0.0, 2.0, -0.0]])
    return [full, even, padded, empty_row, huge, zeros, full.copy(), np.empty((3, 0))]


def test_nan_medians_are_the_nan_median_of_each_array(rng: np.random.Generator) -> None:
    from scalecheck.core.measured import nan_medians
    from scalecheck.core.search import nan_median

    arrays = _median_cases(rng)
    with np.errstate(invalid="ignore"):
        together = nan_medians(arrays)
        for values, median in zip(arrays, together):
            assert _bits(median) == _bits(nan_median(values))


def test_row_medians_are_the_nan_median_of_those_rows(rng: np.random.Generator) -> None:
    from scalecheck.core.measured import row_medians
    from scalecheck.core.search import nan_median

    for values in _median_cases(rng)[:-1]:
        last = values.shape[0] - 1
        for rows in ([0, 1], [last, 0, 1], list(range(last + 1)), [last]):
            with np.errstate(invalid="ignore"):
                assert _bits(row_medians(values, rows)) == _bits(nan_median(values[rows])), (values, rows)


def test_log_sizes_are_each_points_sum_of_logs(rng: np.random.Generator) -> None:
    from scalecheck.core.measured import log_sizes

    for m in (1, 2, 3):
        points = np.exp(rng.uniform(0, 40, (9, m)))
        rows = [4, 0, 8, 2]
        assert _bits(log_sizes(points, rows)) == _bits([float(np.sum(np.log(points[j]))) for j in rows])


def test_designs_decide_once_whether_a_spec_is_defined() -> None:
    from scalecheck.core.bootstrap import Designs

    designs = Designs()
    cubic, log_term = spec((3, 0)), spec((0, 1))
    far = np.array([[1e200]])
    assert designs.defined(cubic, P[:, None]) and not designs.defined(cubic, far)
    assert designs.defined(cubic, far, overflow=True)  # beyond the floats, not undefined
    assert not designs.defined(log_term, np.array([[0.0]])) and designs.defined(log_term, np.array([[0.0]]),
                                                                                  overflow=True)  # -inf
    assert not designs.defined(log_term, np.array([[-1.0]]), overflow=True)  # log2(-1): NaN


def test_a_comparison_finds_the_hypotheses_once_per_combination_of_models(rng: np.random.Generator,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels that repeat their sides' models, expectation and points share their hypotheses: the list is
    built once per combination, and each kernel's row is the one it has alone."""
    import scalecheck.core.compare as module

    calls: list[int] = []
    found = hypotheses  # bootstrap.hypotheses, which compare calls

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return found(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "hypotheses", counted)
    functions = [lambda p: 2 + 0.1 * p, lambda p: 1 + 0.05 * p**2]
    base = [series(functions[k % 2], rng, f"k{k}") for k in range(8)]
    cand = [series(functions[k % 2], rng, f"k{k}") for k in range(8)]
    result = compare(base, cand, {"p": 4096.0}, settings=FAST, expectations=[Expectation("k1", {"p": (Fraction(1), 0)},
                                                                                          "p")])
    combinations = {(row.candidate.model.spec, row.baseline.model.spec, row.kernel == "k1")  # type: ignore[union-attr]
                    for row in result.kernels}
    assert [row.status for row in result.kernels] == ["compared"] * 8
    assert len(calls) == len(combinations) < 8
    for b, c, row in zip(base, cand, result.kernels):
        alone = compare([b], [c], {"p": 4096.0}, settings=FAST,
                        expectations=[Expectation("k1", {"p": (Fraction(1), 0)}, "p")]).kernels[0]
        assert (row.ratio, row.bound, row.upper, row.growth_up, row.basis) == \
            (alone.ratio, alone.bound, alone.upper, alone.growth_up, alone.basis)


def test_measured_findings_of_many_kernels_equal_each_kernels_alone(rng: np.random.Generator) -> None:
    """Kernels whose points all have one repetition count (one block of rank tests), ragged ones (several) and one
    missing a point: each kernel's p-value and ratio are those it has alone, and Stouffer's combination of the
    per-point rank tests."""
    from scalecheck.core import special
    from scalecheck.core.measured import SeriesPair, mann_whitney_greater, measured_findings

    pairs = []
    for k in range(6):
        base, cand = (series(lambda p: 1 + 0.1 * p * scale, rng, f"k{k}") for scale in (1.0, 1.0 + 0.1 * k))
        if k % 3 == 1:  # ragged: fewer repetitions at some points
            values = cand.values.copy()
            values[2, 3:], values[5, 2:] = np.nan, np.nan
            cand = replace(cand, values=values)
        if k % 3 == 2:  # the candidate lacks a point
            cand = Series(cand.kernel, "time", ("p",), cand.points[1:], cand.values[1:])
        pairs.append(SeriesPair(baseline=base, candidate=cand))
    together = measured_findings(pairs, 0.1)
    assert sorted(together) == [(f"k{k}", "time") for k in range(6)]
    for pair in pairs:
        alone = measured_findings([pair], 0.1)[pair.key]
        found = together[pair.key]
        assert (found.p_value, found.finding.ratio, found.condition) == (alone.p_value, alone.finding.ratio,
                                                                       alone.condition)
        z = [float(-special.ndtri(np.clip(mann_whitney_greater(
                 pair.candidate.values[j][None, ~np.isnan(pair.candidate.values[j])],
                 pair.baseline.values[i][None, ~np.isnan(pair.baseline.values[i])])[0], 1e-300, 1.0)))
             for i, j in pair.shared()]
        assert found.p_value == pytest.approx(float(special.ndtr(-sum(z) / np.sqrt(len(z)))), rel=1e-12)
        assert found.finding.evidence == {"points": len(z)}
