"""Renamed kernels: a kernel that disappears while a new one with a similar name appears is compared as one kernel.

Without this, renaming a benchmark hides any regression made in the same change: the old name is "removed", the new
one "new", and a new kernel is judged only against a configured expectation. What users want, and what this does:

- Pairing (a guess). Among the kernels of the baseline only ("removed") and of the candidate only ("new") with the
  same metric, unit and parameters, two names are paired when they are equal once pytest-style parametrization ids
  (`[...]` groups) are stripped (`test_sort[100]` and `test_sort[n=100]`), or when their `name_similarity` reaches
  `SIMILARITY` (0.65). The similarity is the mean of two `difflib` ratios, over the characters and over the words
  (split at punctuation and camelCase), so that a long shared prefix of generic words ("test_", "main->") alone does
  not make two names similar: `test_sort_small` / `test_sort_tiny` 0.68 and `main->solve` / `main->solver` 0.73
  pair; `test_sort` / `test_hash` 0.58 and `matmul` / `matmul_blocked` 0.63 do not. Pairs are one-to-one, chosen
  greedily by best similarity (ties by name), so a kernel split in two is paired with the closer half only.
- Comparison. The baseline series of each old name, renamed to the new name, is compared with the candidate series
  of the new name by `compare` itself, all pairs in one call: their tests are adjusted for false discoveries
  together (Benjamini-Hochberg over the rename tests only; the main comparison is a separate family, as each
  `compare` call is). No expectation is tested there: the main comparison already tests a new kernel against the
  expectation that covers it.
- Findings. A pair whose new kernel grows faster than the old one (a `growth` finding of that comparison) or is
  predicted slower at the target (a `prediction` finding) gives one `renamed` finding, on the new kernel, with both
  names: "test_sort_small was renamed test_sort_tiny? it now grows as n^2, it grew as n * log2(n)". Every pair,
  regressed or not, is also noted on both kernels of the comparison ("renamed test_sort_tiny?", "renamed from
  test_sort_small?", with the ratio at the target).
- Replacements. A new kernel left unpaired whose fitted growth is higher than that of every removed kernel of its
  metric, unit and parameters gives a `replaced` finding: whatever it replaces, it scales worse than all of it. This
  reads the two models' lead orders without a statistical test, so it is a notice.
- Severity. A name similarity is a guess, so the gate (`core.gate`) makes `renamed` findings warnings and `replaced`
  findings notices; neither fails a build by itself, and neither can be listed in `fail_on`. What fails is the
  expectation test of the main comparison: an expectation whose pattern covers the new name.

Cost: O(k * m) name comparisons for k removed and m new kernels of a group, then one `compare` of the pairs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from scalecheck.core.compare import CompareOptions, compare
from scalecheck.core.search import FitOptions
from scalecheck.core.segment import SegmentOptions
from scalecheck.data.growth import exceeds
from scalecheck.data.measurement import Series
from scalecheck.data.spec import Exponents, format_growth
from scalecheck.data.verdict import Comparison, Finding, KernelComparison

SIMILARITY = 0.65  # least `name_similarity` of a pair (module docstring)
_IDS = re.compile(r"\[[^\[\]]*\]")  # a pytest parametrization id, e.g. [100] or [n=100-sorted]
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
Group = tuple[str, str, tuple[str, ...]]  # (metric, unit, parameters)


@dataclass(frozen=True)
class Rename:
    """One guessed rename of a (kernel, metric): `old` in the baseline only, `new` in the candidate only."""

    old: str
    new: str
    metric: str
    similarity: float  # `name_similarity(old, new)`, in [0, 1]


def name_similarity(a: str, b: str) -> float:
    """How alike two kernel names are, in [0, 1]: 1 when equal without their parametrization ids, else the mean of
    the `difflib` ratios of their characters and of their words (module docstring)."""
    if _IDS.sub("", a) == _IDS.sub("", b):
        return 1.0
    chars = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    words = difflib.SequenceMatcher(None, _words(a), _words(b), autojunk=False).ratio()
    return (chars + words) / 2


def _words(name: str) -> list[str]:
    return [word.lower() for word in _WORDS.findall(name)]


def pair_renamed(removed: Sequence[str], new: Sequence[str], threshold: float = SIMILARITY
                 ) -> list[tuple[str, str]]:
    """One-to-one (old, new) pairs of names whose `name_similarity` reaches `threshold`, greedily best first.

    Parameters
    ----------
    removed : names measured in the baseline only
    new : names measured in the candidate only
    threshold : least similarity of a pair, in (0, 1]

    Returns the pairs in descending similarity (ties by the names). Cost: len(removed) * len(new) similarities.
    """
    return [(old, name) for old, name, _ in _pairs(removed, new, threshold)]


def _pairs(removed: Sequence[str], new: Sequence[str], threshold: float) -> list[tuple[str, str, float]]:
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    scored = []
    for old in dict.fromkeys(removed):
        for name in dict.fromkeys(new):
            similarity = name_similarity(old, name)
            if similarity >= threshold:
                scored.append((-similarity, old, name))
    scored.sort()
    used_old: set[str] = set()
    used_new: set[str] = set()
    out = []
    for negative, old, name in scored:
        if old not in used_old and name not in used_new:
            used_old.add(old)
            used_new.add(name)
            out.append((old, name, -negative))
    return out


def find_renames(baseline: Sequence[Series], candidate: Sequence[Series], threshold: float = SIMILARITY
                 ) -> list[Rename]:
    """The guessed renames between two commits' series: `pair_renamed` within each (metric, unit, parameters)."""
    removed, new = _unmatched(baseline, candidate)
    return [Rename(old, name, group[0], similarity) for group in removed if group in new
            for old, name, similarity in _pairs(removed[group], new[group], threshold)]


def _unmatched(baseline: Sequence[Series], candidate: Sequence[Series]
               ) -> tuple[dict[Group, list[str]], dict[Group, list[str]]]:
    """Kernel names of the baseline only and of the candidate only, per (metric, unit, parameters)."""
    base = {(s.kernel, s.metric) for s in baseline}
    cand = {(s.kernel, s.metric) for s in candidate}
    removed: dict[Group, list[str]] = {}
    new: dict[Group, list[str]] = {}
    for series, other, out in ((baseline, cand, removed), (candidate, base, new)):
        for s in series:
            if (s.kernel, s.metric) not in other:
                out.setdefault((s.metric, s.unit, s.parameters), []).append(s.kernel)
    return removed, new


def renamed_findings(comparison: Comparison, baseline: Sequence[Series], candidate: Sequence[Series],
                     options: FitOptions = FitOptions(), segmentation: SegmentOptions | None = SegmentOptions(),
                     settings: CompareOptions = CompareOptions(), threshold: float = SIMILARITY) -> list[Finding]:
    """The `renamed` and `replaced` findings of a comparison made by `compare(baseline, candidate, ...)`.

    Pass the same options, segmentation and settings as to that call; the target is the comparison's. Give the
    findings to `gate.verdict(comparison, extra=...)`, or use `with_renames` to add them (and the notes) to the
    comparison itself. Cost: one `compare` of the paired series (module docstring).
    """
    return list(_analyse(comparison, baseline, candidate, options, segmentation, settings, threshold)[1])


def with_renames(comparison: Comparison, baseline: Sequence[Series], candidate: Sequence[Series],
                 options: FitOptions = FitOptions(), segmentation: SegmentOptions | None = SegmentOptions(),
                 settings: CompareOptions = CompareOptions(), threshold: float = SIMILARITY) -> Comparison:
    """`comparison` with the `renamed_findings` added and every guessed rename noted on both of its kernels."""
    notes, findings = _analyse(comparison, baseline, candidate, options, segmentation, settings, threshold)
    if not notes and not findings:
        return comparison
    kernels = tuple(_noted(k, notes[(k.kernel, k.metric)]) if (k.kernel, k.metric) in notes else k
                    for k in comparison.kernels)
    return replace(comparison, kernels=kernels, findings=(*comparison.findings, *findings))


def _noted(k: KernelComparison, note: str) -> KernelComparison:
    return replace(k, note=f"{k.note}; {note}" if k.note else note)


def _analyse(comparison: Comparison, baseline: Sequence[Series], candidate: Sequence[Series], options: FitOptions,
             segmentation: SegmentOptions | None, settings: CompareOptions, threshold: float
             ) -> tuple[dict[tuple[str, str], str], list[Finding]]:
    """(notes by (kernel, metric), findings) of the renames and replacements of `comparison`."""
    renames = find_renames(baseline, candidate, threshold)
    notes: dict[tuple[str, str], str] = {}
    findings: list[Finding] = []
    if renames:
        pairs = _compare_pairs(renames, baseline, candidate, comparison.target, options, segmentation, settings)
        for rename, (kc, found) in zip(renames, pairs):
            ratio = f": {kc.ratio:.3g}x at the target" if kc.ratio is not None else ""
            compared = f"compared with the old name's baseline{ratio}" if kc.status == "compared" else \
                f"not compared ({kc.note or kc.status})"
            notes[(rename.old, rename.metric)] = f"renamed {rename.new}? (name similarity {rename.similarity:.2f})"
            notes[(rename.new, rename.metric)] = (f"renamed from {rename.old}? (name similarity "
                                                  f"{rename.similarity:.2f}); {compared}")
            if found:
                findings.append(_renamed(rename, found))
    findings += _replacements(comparison, baseline, candidate, {(r.new, r.metric) for r in renames})
    return notes, findings


def _compare_pairs(renames: Sequence[Rename], baseline: Sequence[Series], candidate: Sequence[Series],
                   target: Mapping[str, float], options: FitOptions, segmentation: SegmentOptions | None,
                   settings: CompareOptions) -> list[tuple[KernelComparison, list[Finding]]]:
    """Per rename: the comparison of the old name's baseline with the new name's candidate series, and its growth
    and prediction findings. One `compare` call for all pairs, so that one adjustment covers their tests."""
    base = {(s.kernel, s.metric): s for s in baseline}
    cand = {(s.kernel, s.metric): s for s in candidate}
    old = [replace(base[(r.old, r.metric)], kernel=r.new) for r in renames]
    new = [cand[(r.new, r.metric)] for r in renames]
    paired = compare(old, new, target, options, segmentation, settings)
    kernels = {(k.kernel, k.metric): k for k in paired.kernels}
    out = []
    for r in renames:
        found = [f for f in paired.findings if (f.kernel, f.metric) == (r.new, r.metric)
                 and f.kind in ("growth", "prediction")]
        out.append((kernels[(r.new, r.metric)], found))
    return out


def _renamed(rename: Rename, found: Sequence[Finding]) -> Finding:
    """One `renamed` finding from the growth and prediction findings of a pair."""
    growth = next((f for f in found if f.kind == "growth"), None)
    prediction = next((f for f in found if f.kind == "prediction"), None)
    parts = []
    if growth is not None:
        parts.append(f"it now grows as {growth.candidate_growth}, it grew as {growth.baseline_growth}")
    if prediction is not None:
        parts.append(prediction.message.replace("the baseline", f"{rename.old}'s baseline", 1))
    first = growth or prediction
    assert first is not None
    q_values = [f.q_value for f in found if f.q_value is not None]
    p_values = [f.p_value for f in found if f.p_value is not None]
    evidence = {"renamed from": rename.old, "name similarity": round(rename.similarity, 3), **first.evidence,
                **(prediction.evidence if prediction is not None else {})}
    return replace(first, kind="renamed", severity="warning",
                   message=f"{rename.old} was renamed {rename.new}? {'; '.join(parts)}",
                   probability=growth.probability if growth is not None else first.probability,
                   p_value=min(p_values) if p_values else None,
                   q_value=min(q_values) if q_values else None, evidence=evidence)


def _replacements(comparison: Comparison, baseline: Sequence[Series], candidate: Sequence[Series],
                  paired: set[tuple[str, str]]) -> list[Finding]:
    """`replaced` notices: unpaired new kernels whose fitted growth exceeds that of every removed kernel of their
    (metric, unit, parameters)."""
    removed, new = _unmatched(baseline, candidate)
    models = {(k.kernel, k.metric): k for k in comparison.kernels}
    out = []
    for group, names in new.items():
        metric = group[0]
        olds = []
        for name in removed.get(group, []):
            km = models[(name, metric)].baseline if (name, metric) in models else None
            if km is not None and km.model is not None:
                olds.append((name, km.model.growth()))
        if not olds:
            continue
        for name in names:
            km = models[(name, metric)].candidate if (name, metric) in models else None
            if (name, metric) in paired or km is None or km.model is None:
                continue
            growth = km.model.growth()
            if all(exceeds(growth, old) for _, old in olds):
                out.append(_replaced(name, metric, growth, km.model.formula(), olds))
    return out


def _replaced(name: str, metric: str, growth: Mapping[str, Exponents], formula: str,
              olds: Sequence[tuple[str, Mapping[str, Exponents]]]) -> Finding:
    """A `replaced` notice: new kernel `name` grows as `growth`, faster than every removed kernel in `olds`."""
    fastest_name, fastest = max(olds, key=lambda item: sorted(item[1].values(), reverse=True))
    if len(olds) == 1:
        whom = f"{fastest_name} (which grew as {format_growth(dict(fastest))}), the only kernel"
    else:
        listed = ", ".join(n for n, _ in olds[:5]) + (f" and {len(olds) - 5} more" if len(olds) > 5 else "")
        whom = (f"each of the {len(olds)} kernels ({listed}; the fastest, {fastest_name}, grew as "
                f"{format_growth(dict(fastest))})")
    return Finding(kernel=name, metric=metric, kind="replaced", severity="notice",
                   message=f"new, and grows as {format_growth(dict(growth))}: faster than {whom} of this metric "
                           f"measured in the baseline only. If it replaces {'it' if len(olds) == 1 else 'them'}, "
                           "it scales worse",
                   baseline_growth=format_growth(dict(fastest)), candidate_growth=format_growth(dict(growth)),
                   evidence={"candidate": formula, "removed": len(olds)})
