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
