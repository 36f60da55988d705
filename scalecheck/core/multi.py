"""Multi-parameter models: Extra-P's hierarchical search, selected with cross-validation.

Stage 1, per parameter: every single-parameter hypothesis is scored on every *line* of the design (points where
only that parameter varies), and the leave-one-out errors are summed over lines, so all the data speak, not one
line as in Extra-P. A parameter whose lines are all consistent with a constant drops out; otherwise its best
`candidates_per_parameter` terms go on.
Stage 2: the candidate terms are combined as sums and products (every family of compound terms that involves each
remaining parameter) and the noise-aware rule of `search.select` picks among them on all points. Extra-P selects
stage 2 in-sample and overfits; here every extra term pays the per-term penalty.
"""

from __future__ import annotations

import itertools

import numpy as np

from scalecheck.core.search import (Choice, FitOptions, PointStats, constant_test, noise_and_penalty,
                                    score_specs, select, single_parameter_specs, terms_allowed)
from scalecheck.data.spec import ModelSpec, Term


def lines(points: np.ndarray, param: int, min_values: int) -> list[np.ndarray]:
    """Index arrays of the lines of `param`: points equal in every other parameter, with >= min_values values."""
    others = np.delete(points, param, axis=1)
    _, label = np.unique(others, axis=0, return_inverse=True)
    out = []
    for group in range(label.max() + 1):
        index = np.flatnonzero(label.ravel() == group)
        if np.unique(points[index, param]).size >= min_values:
            out.append(index)
    return out


def inseparable_parameters(points: np.ndarray) -> tuple[int, ...]:
    """Parameters that never change alone (no two points differ in that parameter only): a diagonal design."""
    if points.shape[1] < 2:
        return ()
    return tuple(k for k in range(points.shape[1]) if not lines(points, k, 2))


def fit_multi_parameter(points: np.ndarray, stats: PointStats, options: FitOptions) -> list[Choice]:
    """One Choice per kernel of `stats` on a multi-parameter point set (shape (n, m), m >= 2)."""
    m = points.shape[1]
    candidates = [_candidates(points, k, stats, options) for k in range(m)]  # per parameter: (K,) lists of terms
    K = stats.y.shape[0]
    plans: dict[tuple, list[int]] = {}
    for kernel in range(K):
        plan = tuple(tuple(candidates[k][kernel]) for k in range(m))
        plans.setdefault(plan, []).append(kernel)
    choices: list[Choice | None] = [None] * K
    max_terms = terms_allowed(points.shape[0], options.max_terms * m)
    for plan, kernels in plans.items():
        specs = [ModelSpec()] + _combinations(plan, max_terms)
        sub = PointStats(stats.y[kernels], stats.weights[kernels], stats.sigma2[kernels], stats.dof[kernels])
        for kernel, choice in zip(kernels, select(points, specs, sub, options)):
            choices[kernel] = choice
    return [c for c in choices if c is not None]


def _candidates(points: np.ndarray, param: int, stats: PointStats, options: FitOptions) -> list[list[Term]]:
    """Per kernel, the best single terms in `param` (best first), or [] where `param` looks constant."""
    K = stats.y.shape[0]
    specs = [s for s in single_parameter_specs(points[:, param], options, param) if s.n_terms <= 1]
    loo = np.zeros((len(specs), K))
    wrss_constant = np.zeros(K)
    constant_dof = 0
    for index in lines(points, param, options.min_distinct_values):
        sub = PointStats(stats.y[:, index], stats.weights[:, index], stats.sigma2, stats.dof)
        scored = score_specs(points[index], specs, sub, options)
        sigma2, _ = noise_and_penalty(sub, scored.wrss, specs, index.size, options)
        # On a line where a term is not eligible (wrong sign, too small), it explains nothing: score it as constant.
        line_loo = np.where(np.isfinite(scored.loo), scored.loo, scored.loo[0][None]) / sigma2[None]
        loo += line_loo
        wrss_constant += scored.wrss[0] / sigma2
        constant_dof += index.size - 1
    sigma2_all, _ = noise_and_penalty(stats, np.full((1, K), np.inf), [ModelSpec()], points.shape[0], options)
    keeps = constant_test(wrss_constant, np.ones(K), stats.dof, constant_dof + 1, options.alpha)
    if not constant_dof:
        keeps = np.zeros(K, dtype=bool)
    order = np.argsort(loo[1:], axis=0)  # specs[0] is the constant model
    out = []
    for kernel in range(K):
        if keeps[kernel] and stats.dof[kernel] > 0:
            out.append([])
            continue
        best = [specs[1 + h].terms[0] for h in order[: options.candidates_per_parameter, kernel]
                if loo[1 + h, kernel] < loo[0, kernel]]
        out.append(best)
    del sigma2_all
    return out


def _combinations(plan: tuple[tuple[Term, ...], ...], max_terms: int) -> list[ModelSpec]:
    """Sums and products of one candidate term per varying parameter: every family of compound terms (products
    over a subset of the parameters) that involves each varying parameter, with at most `max_terms` terms."""
    varying = [k for k, terms in enumerate(plan) if terms]
    if not varying:
        return []
    subsets = [s for r in range(1, len(varying) + 1) for s in itertools.combinations(varying, r)]
    shapes = [family for r in range(1, max_terms + 1) for family in itertools.combinations(subsets, r)
              if set().union(*family) == set(varying)]
    specs = []
    for pick in itertools.product(*(plan[k] for k in varying)):
        chosen = dict(zip(varying, pick))
        for family in shapes:
            terms = tuple(Term(tuple(f for k in subset for f in chosen[k].factors)) for subset in family)
            specs.append(ModelSpec(terms))
    return specs
