"""L5: the use cases, as a Python API: `fit_models` (model measurement files), `check` (compare a candidate with
its baseline and decide), `record` and `history` (measurements per commit in git), `cluster` (group processes by
the caller->callee pairs they execute), `overhead` (necessary time versus overhead in an event trace).

`fit_models` and `model` live in `scalecheck.modeling` and are re-exported here. Each use case imports what only it
needs (git, the comparison, the clustering, the overhead) when it runs, so this module loads little beyond modeling.

    >>> from scalecheck.api import fit_models
    >>> table = fit_models(["examples/mpi_data_mean.txt"], target={"p": 65536})
    >>> table.ranked()[0].kernel
"""

from __future__ import annotations

import difflib
import fnmatch
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scalecheck.config import Config
from scalecheck.core.cluster import MAX_CONCEPTS, MAX_SETS, ClusterOptions
from scalecheck.core.cluster import cluster as cluster_processes
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions
from scalecheck.core.segment import SegmentOptions
from scalecheck.core.tmax import DEFAULT_QUANTILE, NoiseOptions
from scalecheck.data.measurement import Run, Series, dropped_note
from scalecheck.data.outcome import ModelTable
from scalecheck.data.views import CheckContext, HistoryEntry, KernelPlot, Plots, findings_by_kernel, report_order
from scalecheck.errors import (ConfigError, HistoryError, InputError, Location, ModelingError,
                               NoBaselineError)
from scalecheck.formats import read_many
from scalecheck.formats.cube import is_cube_directory
from scalecheck.modeling import nothing_selected, plot_with_bands, selected, without_dropped
# re-exported: the model use case lives in scalecheck.modeling, which `scalecheck model` imports alone
from scalecheck.modeling import BAND_RESAMPLES as BAND_RESAMPLES
from scalecheck.modeling import ModelResult as ModelResult
from scalecheck.modeling import check_target as check_target
from scalecheck.modeling import fit_models as fit_models
from scalecheck.modeling import model as model
from scalecheck.modeling import model_plots as model_plots
from scalecheck.modeling import parse_target as parse_target
from scalecheck.modeling import varying as varying

# The use cases below import what only they need when they run: gitpython (so fit_models and a check of files work
# without it), the comparison and its statistics, the clustering, the overhead analysis, the pattern matcher.
if TYPE_CHECKING:
    from scalecheck.core.compare import Expectation
    from scalecheck.data.machine import MachineMatch
    from scalecheck.data.overhead import Calibration, EventTrace, OverheadTable
    from scalecheck.data.processes import Clustering, ProcessSet
    from scalecheck.data.provenance import SameJob
    from scalecheck.data.verdict import Finding, Verdict
    from scalecheck.history.store import Store


# --- the CI check ------------------------------------------------------------------------------------------------

# --baseline names a file, not a ref
_FILE_SUFFIXES = {".json", ".jsonl", ".ndjson", ".csv", ".txt", ".cubex", ".extra-p"}
TARGET_FACTOR = 4.0  # without a configured target, predictions are made at this multiple of the largest value


@dataclass(frozen=True)
class CheckResult:
    """A check's verdict and what it compared: the series of both sides and the search options (from which
    `check_plots` computes the plots of the HTML report), and those plots when `check(..., plots=N)` asked."""

    verdict: Verdict
    context: CheckContext
    baseline: tuple[Series, ...] = ()
    candidate: tuple[Series, ...] = ()
    options: FitOptions = FitOptions()
    plots: Plots = Plots()


def check(candidate: Sequence[str | Path] | Run | None, baseline: str | Path | Run | None, config: Config, *,
          cwd: Path | None = None, env: Mapping[str, str] | None = None, same_job: SameJob | None = None,
          plots: int = 0) -> CheckResult:
    """Compare the candidate's measurements with the baseline's and decide (see `scalecheck.core.compare`).

    `candidate`: measurement files, a `Run`, or None for the files `config.measurements` names. `baseline`: a
    measurement file, a git ref (its merge-base with HEAD, walking back to the nearest commit with measurements),
    a `Run`, or None for the pull request's base branch in GitHub Actions (GITHUB_BASE_REF). `same_job` says that
    both runs were measured in this job (`scalecheck.samejob`), so they compare like with like. `plots`: how many
    of the worst kernels get a plot, with confidence bands, for `scalecheck.report.html_report.render_check_html`.

    When no commit on the baseline side has measurements yet, every kernel is new: the check passes with a notice
    (expectations still apply), unless `config.missing_baseline` is "fail". When the two sides' machines differ
    (`meta.machine`), findings that a machine difference can explain are held back unless
    `config.fail_across_machines` (see `scalecheck.core.gate`).
    """
    from scalecheck.core.compare import compare
    from scalecheck.core.gate import verdict
    from scalecheck.core.renames import with_renames

    cwd = Path.cwd() if cwd is None else cwd
    env = os.environ if env is None else env
    cand_run, cand_label, cand_paths = _candidate(candidate, config)
    notices: list[str] = []
    try:
        base_run, base_label, head = _baseline(baseline, config, cwd, env, cand_paths)
    except NoBaselineError as err:
        if config.missing_baseline == "fail":
            raise
        base_run, base_label, head = Run(cand_run.parameters, ()), "none yet", None
        notices.append(f"no baseline yet: {err.problem}; every kernel is new, so only expectations can fail. To "
                       "compare, measure both commits in one job (scalecheck check --same-job), or record "
                       "measurements on the base branch (missing_baseline = \"fail\", --missing-baseline fail or the "
                       "action's missing-baseline: fail make this an error)")
    head = env.get("GITHUB_SHA") or head
    (cand_run, base_run), dropped = varying([cand_run, base_run])
    if dropped:
        notices.append(dropped_note(dropped))
    if same_job is not None:
        base_label = f"commit {same_job.baseline_commit[:7]}, measured in this job"
        cand_label = "working tree, measured in this job"
        head = same_job.candidate_commit
    if base_run.series and base_run.parameters != cand_run.parameters:
        cand_file, base_file = _source(cand_run), _source(base_run)
        raise InputError(f"the candidate's parameters ({', '.join(cand_run.parameters)}) differ from those of the "
                         f"baseline {base_file or base_label} ({', '.join(base_run.parameters)})",
                         where=Location(Path(cand_file)) if cand_file else None,
                         fix="compare measurements taken with the same parameters")
    cand_series = selected(cand_run, config.metrics, config.kernels)
    base_series = selected(base_run, config.metrics, config.kernels)
    if not cand_series:
        raise ConfigError(nothing_selected(cand_run, config.metrics, config.kernels),
                          fix="check the metrics and kernels settings against the names above")
    shared = {(s.kernel, s.metric) for s in base_series} & {(s.kernel, s.metric) for s in cand_series}
    if base_run.series and not shared and not config.expectations:
        names = sorted({s.kernel for s in base_series})
        raise InputError(f"the candidate and the baseline ({base_label}) share no (kernel, metric): nothing to "
                         "compare", fix=f"check the kernel and metric names; the baseline has "
                                        f"{', '.join(names[:5])}{' and more' if len(names) > 5 else ''}")
    target, note = _target(config, cand_run, dropped)
    expectations = [_expectation(pattern, text, cand_run.parameters) for pattern, text in config.expectations]
    kernels = sorted({s.kernel for s in cand_series})
    for e in expectations:
        if not any(fnmatch.fnmatchcase(name, e.pattern) for name in kernels):
            close = difflib.get_close_matches(e.pattern, kernels, n=1)
            raise ConfigError(f"expectation '{e.pattern}' matches no kernel of the candidate",
                              fix=f"did you mean '{close[0]}'?" if close else
                              f"the kernels are {', '.join(kernels[:5])}{' and more' if len(kernels) > 5 else ''}")
    structure = _structure_findings(candidate, baseline, config)  # none unless both sides have processes sections
    settings = config.compare_options()
    segmentation = SegmentOptions() if config.segmentation else None
    comparison = compare(base_series, cand_series, target, config.fit_options(), segmentation, settings, expectations)
    # a renamed kernel is compared with its old name's baseline: warnings only (see scalecheck.core.renames)
    comparison = with_renames(comparison, base_series, cand_series, config.fit_options(), segmentation, settings)
    machines = _machines(base_run, cand_run, same_job, bool(base_run.series))
    held = "" if machines.same or config.fail_across_machines else machines.reason
    result = verdict(comparison, config.fail_on, extra=structure, machines_differ=held)
    if any(f.held for f in result.findings):
        notices.append(f"findings held back: {held}. They are reported as warnings: a different machine can "
                       "explain them. Measure both commits in one job (scalecheck check --same-job) to compare "
                       "like with like, or set fail_across_machines = true")
    context = CheckContext(base_label, cand_label, note, _settings_used(config), head or "",
                           baseline_machine=machines.baseline, candidate_machine=machines.candidate,
                           held_reason=held, same_job=same_job.text() if same_job else "", notices=tuple(notices))
    checked = CheckResult(result, context, tuple(base_series), tuple(cand_series), config.fit_options())
    return replace(checked, plots=check_plots(checked, plots)) if plots else checked


def _source(run: Run) -> str:
    """The files `run` was read from, as their series name them ("" when none does)."""
    paths = dict.fromkeys(str(s.source.path) for s in run.series if s.source is not None)
    return ", ".join(paths)


def _machines(base: Run, cand: Run, same_job: SameJob | None, has_baseline: bool) -> MachineMatch:
    """Whether the two sides were measured on one machine: by construction in a same-job run, else by the
    fingerprints in their `meta.machine` (without a baseline there is nothing to compare)."""
    from scalecheck.data.machine import MachineMatch
    from scalecheck.data.machine import match as match_machines

    found = match_machines(str(base.meta.get("machine") or "") or None, str(cand.meta.get("machine") or "") or None)
    if same_job is not None or not has_baseline:
        return MachineMatch(True, found.baseline, found.candidate, "")
    return found


def _settings_used(config: Config) -> dict[str, object]:
    """The settings a check ran with, for the reports (thresholds first, then the model search)."""
    return {"threshold": config.threshold, "confidence": config.confidence,
            "aggregate": config.aggregate, "max_terms": config.max_terms, "alpha": config.alpha,
            "segmentation": config.segmentation, "refine": config.refine, "allow_decreasing": config.allow_decreasing,
            "expectations": {pattern: text for pattern, text in config.expectations},
            "config_file": str(config.source) if config.source else "(none: defaults and flags)"}


def _candidate(candidate: Sequence[str | Path] | Run | None, config: Config) -> tuple[Run, str, list[Path]]:
    """The candidate's run, a label naming it, and the files it was read from."""
    if isinstance(candidate, Run):
        return candidate, "measurements given", []
    paths = [Path(p) for p in candidate] if candidate else _configured_files(config)
    return read_many(paths, config.format, config.scaling), ", ".join(str(p) for p in paths), paths


def _configured_files(config: Config) -> list[Path]:
    if not config.measurements:
        raise ConfigError("no candidate measurements: no files given and no `measurements` setting",
                          fix="name the measurement files, or set measurements = [\"bench/*.json\"] in "
                              "[tool.scalecheck]")
    from scalecheck.formats.paths import select_files  # wcmatch: only when files are selected by pattern

    found = select_files(config.root, config.measurements)
    if not found:
        raise ConfigError(f"no file matches measurements = {list(config.measurements)} in {config.root}",
                          where=Location(config.source) if config.source else None,
                          fix="run the benchmarks first, or correct the patterns")
    return found


def files_matching(pattern: str, root: Path) -> list[Path] | None:
    """The files below `root` that a measurement pattern selects, by the rules of the `measurements` setting
    (`scalecheck.formats.paths`); None when `pattern` has no wildcard, so it names one path."""
    from scalecheck.formats.paths import is_pattern, select_files

    return select_files(root, [pattern]) if is_pattern(pattern) else None


def _baseline(baseline: str | Path | Run | None, config: Config, cwd: Path, env: Mapping[str, str],
              candidate_files: Sequence[Path] = ()) -> tuple[Run, str, str | None]:
    """The baseline's run, a label naming it, and the candidate's commit (HEAD) when the baseline came from git.

    Without a `measurements` setting, the committed-files store looks for the candidate's own files (those inside
    the repository) at the baseline commit."""
    if isinstance(baseline, Run):
        return baseline, "measurements given", None
    if baseline is not None and (_is_file(Path(baseline)) or Path(baseline).suffix.lower() in _FILE_SUFFIXES
                                 or _is_profile_folder(Path(baseline))):
        # a missing file: "no such file"
        return read_many([Path(baseline)], config.format, config.scaling), f"file {baseline}", None
    store = open_store(config, cwd, () if config.measurements else candidate_files)
    try:
        ref = str(baseline) if baseline is not None else store.default_base(env)
        if ref is None:
            raise ConfigError("no baseline given", fix="pass --baseline REF_OR_FILE, e.g. --baseline origin/main "
                                                       "or --baseline baseline.json")
        sha, how = store.baseline(ref)
        run = store.read(sha)
        if run is None:  # the walk found it, so this is a store bug, not a user error
            raise RuntimeError(f"store.baseline returned {sha}, which has no measurements")
        return run, how, store.resolve("HEAD")
    finally:
        store.close()


def open_store(config: Config, cwd: Path, files: Sequence[Path] = ()) -> Store:
    """The git store of the repository around `cwd`, with the measurement patterns made relative to its top, plus
    `files` (paths relative to `cwd`) that lie inside the repository."""
    from scalecheck.formats.paths import escape as escape_path
    from scalecheck.history.store import Store  # gitpython: imported by the use cases that need git only

    root = config.root.resolve()
    top = next((p for p in (root, *root.parents) if (p / ".git").exists()), None)
    prefix = root.relative_to(top).as_posix() if top is not None and top != root else ""
    patterns = [f"{prefix}/{p}" if prefix else p for p in config.measurements]
    repo_top = next((p for p in (cwd.resolve(), *cwd.resolve().parents) if (p / ".git").exists()), None)
    for path in files:
        full = (cwd / path).resolve()
        if repo_top is not None and full.is_relative_to(repo_top):
            name = escape_path(full.relative_to(repo_top).as_posix())  # a name, not a pattern
            # git holds the files of a folder of Score-P runs, not the folder: its profiles, one run per sub-folder
            patterns.append(f"{name}/*/*.cubex" if _is_profile_folder(full) else name)
    return Store(cwd, data_branch=config.data_branch, measurements=patterns, fmt=config.format, kind=config.store,
                 scaling=config.scaling)


def _target(config: Config, run: Run, dropped: Mapping[str, float]) -> tuple[dict[str, float], str]:
    if config.target is not None:
        target = without_dropped(config.target, dropped)
        check_target(target, run.parameters)
        return target, ""
    largest = np.max(np.vstack([s.points for s in run.series]), axis=0)
    with np.errstate(over="ignore"):
        target = {name: float(TARGET_FACTOR * value) for name, value in zip(run.parameters, largest)}
    for k, (name, value) in enumerate(target.items()):
        if not np.isfinite(value):
            top = max(run.series, key=lambda s: float(np.max(s.points[:, k])))
            raise ModelingError(f"the default target, {TARGET_FACTOR:g}x the largest measured {name} "
                                f"({largest[k]:g}), is beyond the range of floating-point numbers",
                                where=top.source,
                                fix=f"give the scale to predict at, e.g. --target {name}={largest[k]:g} (or target "
                                    "in [tool.scalecheck])")
    return target, f"{TARGET_FACTOR:g}x the largest measured value; set target in [tool.scalecheck] or --target"


def _expectation(pattern: str, text: str, parameters: Sequence[str]) -> Expectation:
    from scalecheck.core.compare import Expectation
    from scalecheck.data.growth import parse_growth

    try:
        return Expectation(pattern, parse_growth(text, parameters), text)
    except ValueError as err:
        raise ConfigError(f"expectation '{pattern}' = '{text}': {err}",
                          fix=f"write the growth in the measured parameters ({', '.join(parameters)}), "
                              "e.g. 'p log p'") from None


# --- the plots of the HTML reports -------------------------------------------------------------------------------

def check_plots(result: CheckResult, limit: int) -> Plots:
    """The plots of a check's HTML report: the `limit` worst kernels with a finding (in the report's order) that
    have a model on some side; each side with its confidence band at the check's confidence and seed."""
    if limit < 1:
        return Plots()
    verdict = result.verdict
    comparison = verdict.comparison
    by_kernel = findings_by_kernel(verdict)
    series_b = {(s.kernel, s.metric): s for s in result.baseline}
    series_c = {(s.kernel, s.metric): s for s in result.candidate}
    models_b = {(k.kernel, k.metric): k.baseline for k in comparison.kernels}
    # a renamed kernel is plotted against its old name's baseline, as it was compared
    renamed = {(f.kernel, f.metric): (str(f.evidence["renamed from"]), f.metric) for f in verdict.findings
               if f.kind == "renamed" and f.evidence.get("renamed from")}
    confidence = float(result.context.settings.get("confidence", 0.95))  # type: ignore[arg-type]
    plots: dict[tuple[str, str], KernelPlot] = {}
    for k in report_order(verdict):
        key = (k.kernel, k.metric)
        if len(plots) >= limit or key not in by_kernel:
            break  # the kernels with findings come first
        old = renamed.get(key, key) if k.baseline is None else key
        sides = [(role, s, m) for role, s, m in (("baseline", series_b.get(old), models_b.get(old)),
                                                 ("candidate", series_c.get(key), k.candidate))
                 if s is not None and m is not None and m.ok]
        if sides:
            plots[key] = plot_with_bands(sides, comparison.target, result.options, confidence, comparison.seed)
    return Plots(limit, plots)


# --- history in git ----------------------------------------------------------------------------------------------

def record(files: Sequence[str | Path] | None, commit: str, config: Config, *, cwd: Path | None = None
           ) -> tuple[str, str, Run]:
    """Store the measurements of `commit` on the data branch; returns (commit sha, data-branch commit sha, run).

    A run without `meta.machine` gets this machine's fingerprint: the machine that records normally measured too.
    """
    from scalecheck.machine import fingerprint

    run = read_many([Path(p) for p in files] if files else _configured_files(config), config.format,
                    config.scaling)
    if not run.meta.get("machine"):
        run = Run(run.parameters, run.series, {**run.meta, "machine": fingerprint()})
    store = open_store(config, Path.cwd() if cwd is None else cwd)
    try:
        sha = store.resolve(commit)
        return sha, store.record(run, sha), run
    finally:
        store.close()


def history(ref: str, config: Config, *, limit: int = 50, cwd: Path | None = None) -> list[HistoryEntry]:
    """Models of every measured commit on the first-parent line of `ref`, oldest first."""
    store = open_store(config, Path.cwd() if cwd is None else cwd)
    try:
        found = store.commits_with_measurements(ref, limit=limit)
        if not found:
            raise HistoryError(f"no measurements recorded on the first-parent history of '{ref}'",
                               fix="record some with `scalecheck record FILE --commit REF`")
        entries = []
        for sha, run in reversed(found):
            (run,), _ = varying([run])
            series = selected(run, config.metrics, config.kernels)
            table = ModelTable(run.parameters, tuple(fit_kernels(series, config.fit_options(),
                               SegmentOptions() if config.segmentation else None)), None) if series else \
                ModelTable(run.parameters, ())
            entries.append(HistoryEntry(sha, store.describe(sha), table))
        return entries
    finally:
        store.close()


# --- process clustering ------------------------------------------------------------------------------------------

def cluster(source: str | Path | ProcessSet, *, closure: bool = True, similarity: float | None = None,
            max_sets: int = MAX_SETS, max_concepts: int = MAX_CONCEPTS) -> Clustering:
    """Group the processes of `source` by the caller->callee pairs they execute, with the concept lattice.

    `source`: a file (a scalecheck JSON `processes` section, JSON Lines of processes, or measurements whose kernels
    are named `[process] call path`; see `scalecheck.formats.processes`) or a `ProcessSet`. `closure` compares
    transitive closures; `similarity` (a Jaccard index in (0, 1]) merges near-identical sets; the lattice is built
    for at most `max_sets` distinct sets and `max_concepts` nodes, else the groups come without it (`note` says so).
    """
    from scalecheck.data.processes import ProcessSet
    from scalecheck.formats.processes import read_processes

    if similarity is not None and not 0 < similarity <= 1:
        raise ConfigError(f"the similarity must be a Jaccard index in (0, 1], got {similarity:g}",
                          fix="use for example --similarity 0.9 (1 keeps only identical sets together)")
    for name, value in (("max_sets", max_sets), ("max_concepts", max_concepts)):
        if value < 1:
            raise ConfigError(f"{name} must be at least 1, got {value}", fix=f"use the default {name}")
    processes = source if isinstance(source, ProcessSet) else read_processes(Path(source))
    return cluster_processes(processes, ClusterOptions(closure, similarity, max_sets, max_concepts))


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; False for a name the system refuses to look up (too long, say), as for a git ref."""
    try:
        return path.is_file()
    except OSError:
        return False


def _is_profile_folder(path: Path) -> bool:
    """Whether `path` is a folder of Score-P profiles, one run per sub-folder (read as measurements, not a ref)."""
    try:
        return path.is_dir() and is_cube_directory(path)
    except OSError:
        return False


def _structure_findings(candidate: Sequence[str | Path] | Run | None, baseline: str | Path | Run | None,
                        config: Config) -> tuple[Finding, ...]:
    """`structure` findings when the candidate's and the baseline's files both carry a `processes` section (both
    clustered together, with the transitive closure); none otherwise. A baseline from git has no such section."""
    from scalecheck.core.structure import structure_findings
    from scalecheck.formats.processes import read_processes_sections

    if isinstance(baseline, Run) or baseline is None or not _is_file(Path(baseline)):
        return ()
    if isinstance(candidate, Run):
        return ()
    base = read_processes_sections([Path(baseline)])
    if base is None:
        return ()
    cand = read_processes_sections([Path(p) for p in candidate] if candidate else _configured_files(config))
    return () if cand is None else structure_findings(base, cand)


# --- necessary time versus overhead ------------------------------------------------------------------------------

@dataclass(frozen=True)
class OverheadResult:
    """The overhead ranking (with the profiles and noise models behind it) and the inputs it was computed from."""

    table: OverheadTable
    calibration: Calibration
    trace: EventTrace


def overhead(calibration: str | Path | Calibration, events: str | Path | EventTrace, *,
             quantile: float = DEFAULT_QUANTILE, resolution: float | None = None, interpolation: str = "linear",
             alpha: float = 0.01, refine: bool = False) -> OverheadResult:
    """t_max per operation, process count and message size from `calibration`, and the overhead of every event of
    `events` above it, summed per location and operation and ranked (see `scalecheck.core.overhead`).

    `quantile` is q_max, in [0.8, 1); `resolution` the timer resolution in seconds for calibration samples that do
    not give one (None: from the data, see `scalecheck.core.tmax`); `interpolation` "linear" or "log"; `alpha` the
    level of the chi-square test of the noise models; `refine` moves their parameters to the minimum of chi^2.
    """
    from scalecheck.core.overhead import attribute, build_profiles
    from scalecheck.data.overhead import INTERPOLATIONS, Calibration, EventTrace
    from scalecheck.formats.calibration import read_calibration, read_events

    if not 0.8 <= quantile < 1:
        raise ConfigError(f"the quantile must be at least 0.8 and less than 1, got {quantile:g}",
                          fix="use a quantile such as 0.95 (Kluge et al.: 0.8 <= q_max < 1)")
    if resolution is not None and not (np.isfinite(resolution) and resolution > 0):
        raise ConfigError(f"the timer resolution must be a positive number of seconds, got {resolution:g}",
                          fix="give it in seconds, e.g. 1e-07, or leave it out")
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be between 0 and 1, got {alpha:g}", fix="use a level such as 0.01")
    if interpolation not in INTERPOLATIONS:
        raise ConfigError(f"unknown interpolation '{interpolation}'",
                          fix=f"use one of {', '.join(INTERPOLATIONS)}")
    cal = calibration if isinstance(calibration, Calibration) else read_calibration(Path(calibration), resolution)
    trace = events if isinstance(events, EventTrace) else read_events(Path(events))
    profiles = build_profiles(cal, NoiseOptions(quantile=quantile, resolution=resolution, alpha=alpha, refine=refine))
    return OverheadResult(attribute(trace, profiles, interpolation), cal, trace)
