"""L5, beside `scalecheck.api`: the `model` use case (`fit_models`, `model`) and what the other use cases share
with it: the selection of series, the parameters left out, the target, the plots with confidence bands.

`scalecheck.api` re-exports it. `scalecheck model` imports this module alone, so a modeling run loads neither git,
the comparison and its statistics, nor the clustering: its start-up stays near numpy's own.

    >>> from scalecheck.modeling import fit_models
    >>> table = fit_models(["examples/mpi_data_mean.txt"], target={"p": 65536})
    >>> table.ranked()[0].kernel
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from scalecheck.config import parse_target as config_parse_target
from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions
from scalecheck.core.segment import SegmentOptions
from scalecheck.data.measurement import Run, Series, dropped_note, single_valued, without_parameters
from scalecheck.data.outcome import KernelModel, ModelTable
from scalecheck.data.views import KernelPlot, Plots, kernel_plot, plot_grid, plot_side
from scalecheck.errors import ConfigError
from scalecheck.formats import read_many

if TYPE_CHECKING:
    from scalecheck.config import Config


def load_libraries() -> None:
    """Load what modeling computes with: numpy (by this module's imports) and the special functions of the
    statistical tests (scipy's compiled module, `core.special`). The CLI loads them once, at the start of a command,
    with the settings it wants for their BLAS."""
    from scalecheck.core import special  # noqa: F401


def fit_models(
    sources: Sequence[str | Path] | Run,
    *,
    fmt: str | None = None,
    options: FitOptions = FitOptions(),
    target: Mapping[str, float] | None = None,
    metrics: Sequence[str] = (),
    kernels: Sequence[str] = (),
    segmentation: SegmentOptions | None = SegmentOptions(),
) -> ModelTable:
    """Read `sources` (measurement files, or a `Run` already read) and model every (kernel, metric).

    `metrics` keeps only the named metrics; `kernels` keeps kernels matching any of the glob patterns. A target
    must give a value for every parameter. Single-parameter kernels are searched for change points first, with the
    thresholds of `segmentation` (None: no search); a segmented kernel gets one model per segment. A parameter with
    a single value in every measurement is left out (`ModelTable.notes` says so), as Extra-P does; the target may
    name it with that value.
    """
    run = sources if isinstance(sources, Run) else read_many([Path(s) for s in sources], fmt)
    (run,), dropped = varying([run])
    if target is not None:
        target = without_dropped(target, dropped)
        check_target(target, run.parameters)
    series = selected(run, metrics, kernels)
    if not series:
        raise ConfigError(nothing_selected(run, metrics, kernels),
                          fix="check --metric and --kernel against the names above")
    models = tuple(_with_tool_note(km, s) for km, s in zip(fit_kernels(series, options, segmentation), series))
    table = ModelTable(run.parameters, models, target, (dropped_note(dropped),) if dropped else ())
    if target is None:
        return table
    where = ", ".join(f"{name}={value:g}" for name, value in target.items())
    beyond = (f"its value at the target {where} is beyond the range of floating-point numbers (about 1.8e+308): "
              "choose a smaller target")
    return replace(table, models=tuple(replace(km, note="; ".join(filter(None, (km.note, beyond))))
                                       if table.beyond_target(km) else km for km in table.models))


@dataclass(frozen=True)
class ModelResult:
    """What `model` found: the ranked table, the series it was fitted to (for plots), the search options, the
    files read and the settings that shaped the models (for the report)."""

    table: ModelTable
    series: tuple[Series, ...]
    options: FitOptions
    sources: str
    settings: Mapping[str, object]
    plots: Plots = Plots()  # the HTML report's plots, confidence bands computed (`model(..., plots=N)`)


def model(sources: Sequence[str | Path] | Run, config: Config, *, plots: int = 0) -> ModelResult:
    """`scalecheck model`: read `sources` (or use the `Run` given) and model every (kernel, metric) that `config`
    selects, with its search settings and target; with the plots of the first `plots` kernels of the ranking (with
    their confidence bands) for `scalecheck.report.html_report.render_model_html`."""
    run = sources if isinstance(sources, Run) else read_many([Path(s) for s in sources], config.format,
                                                             config.scaling)
    options = config.fit_options()
    table = fit_models(run, options=options, target=config.target, metrics=config.metrics, kernels=config.kernels,
                       segmentation=SegmentOptions() if config.segmentation else None)
    (run,), _ = varying([run])  # the series the models were fitted to, for the plots
    settings = {"aggregate": options.aggregate, "max_terms": options.max_terms, "alpha": options.alpha,
                "refine": options.refine, "allow_decreasing": options.allow_decreasing,
                "segmentation": config.segmentation}
    shown = "measurements given" if isinstance(sources, Run) else ", ".join(map(str, sources))
    return ModelResult(table, run.series, options, shown, settings, model_plots(table, run.series, options, plots))


def varying(runs: Sequence[Run]) -> tuple[list[Run], dict[str, float]]:
    """`runs` without the parameters that keep a single value in all of them, and those parameters with their
    value: Extra-P leaves them out too, and a Score-P layout such as `mm.x1000y1z1` names y and z though only x
    varies. Kept when every parameter is single-valued, so that the models say what is missing."""
    runs = list(runs)
    measured = [run for run in runs if run.series]
    own: dict[str, float] = {}
    if measured and any(run.parameters != measured[0].parameters for run in measured[1:]):
        # a folder of Score-P runs (x, y, z) against Extra-P's export of it (x): each side's single-valued
        # parameters that the other side lacks go first
        shared = set.intersection(*(set(run.parameters) for run in measured))
        for k, run in enumerate(runs):
            alone = {name: value for name, value in single_valued([run]).items() if name not in shared}
            own.update((name, value) for name, value in alone.items() if name not in own)
            runs[k] = without_parameters(run, alone)
    dropped = single_valued(runs)
    return [without_parameters(run, dropped) for run in runs], {**own, **dropped}


def without_dropped(target: Mapping[str, float], dropped: Mapping[str, float]) -> dict[str, float]:
    """`target` without the left-out parameters, which it may name only at the one value they were measured at."""
    for name, value in dropped.items():
        if name in target and target[name] != value:
            raise ConfigError(f"the target gives {name}={target[name]:g}, but every measurement has {name}={value:g}",
                              fix=f"leave {name} out of the target, or measure several values of {name}")
    return {name: value for name, value in target.items() if name not in dropped}


def _with_tool_note(km: KernelModel, series: Series) -> KernelModel:
    """`km` with what the measuring tool says about its series (Google Benchmark's own complexity, say) in its note."""
    if not series.note:
        return km
    return replace(km, note="; ".join(filter(None, (km.note, series.note))))


parse_target = config_parse_target  # `p=65536,n=1e6` → {'p': 65536.0, 'n': 1000000.0} (the --target flag's rule)


def check_target(target: Mapping[str, float], parameters: Sequence[str]) -> None:
    """A target names exactly the measured parameters."""
    for name in target:
        if name not in parameters:
            close = difflib.get_close_matches(name, parameters, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"the parameters are {', '.join(parameters)}"
            raise ConfigError(f"--target names parameter '{name}', which the measurements do not have", fix=hint)
    missing = [name for name in parameters if name not in target]
    if missing:
        raise ConfigError(f"--target gives no value for {', '.join(missing)}",
                          fix=f"give every parameter a value, e.g. --target {','.join(f'{p}=...' for p in parameters)}")


def nothing_selected(run: Run, metrics: Sequence[str], kernels: Sequence[str]) -> str:
    """The problem to report when `metrics` and `kernels` select no series of `run`, with the names it has."""
    names = sorted({s.kernel for s in run.series})
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    wanted = []
    if metrics:
        wanted.append(f"metric {', '.join(metrics)} (the file has {', '.join(run.metrics)})")
    if kernels:
        wanted.append(f"kernel {' or '.join(kernels)} (the file has {shown})")
    return "no measurements match " + " and ".join(wanted)


def selected(run: Run, metrics: Sequence[str], kernels: Sequence[str]) -> list[Series]:
    """The series of the named metrics (all when none) whose kernel matches one of the globs (all when none)."""
    return [s for s in run.series if (not metrics or s.metric in metrics)
            and (not kernels or any(fnmatch.fnmatchcase(s.kernel, p) for p in kernels))]


# --- the plots of the HTML reports -------------------------------------------------------------------------------

BAND_RESAMPLES = 100  # bootstrap resamples behind a plot's confidence band (a plot costs about 0.2 s)


def model_plots(table: ModelTable, series: Sequence[Series], options: FitOptions, limit: int) -> Plots:
    """The plots of a model report: the first `limit` kernels of the ranking that have a model, with 95%
    confidence bands."""
    if limit < 1:
        return Plots()
    by_key = {(s.kernel, s.metric): s for s in series}
    plots: dict[tuple[str, str], KernelPlot] = {}
    for km in table.ranked()[:limit]:
        found = by_key.get((km.kernel, km.metric))
        if found is not None and km.ok:
            plots[(km.kernel, km.metric)] = plot_with_bands([("model", found, km)], table.target, options, 0.95, 0)
    return Plots(limit, plots)


def plot_with_bands(sides: Sequence[tuple[str, Series, KernelModel]], target: Mapping[str, float] | None,
                    options: FitOptions, confidence: float, seed: int) -> KernelPlot:
    """One kernel's plot: the grid along the last side's series, each side's model and bootstrap band along it."""
    from scalecheck.core.compare import prediction_band  # the bootstrap: only when a report draws plots

    axis, grid = plot_grid(sides[-1][1], target)
    drawn = []
    for role, series, km in sides:
        band = prediction_band(series, km, grid, options, confidence, BAND_RESAMPLES, seed)
        drawn.append(plot_side(role, series, km, axis, grid, model=band.model, band=(band.low, band.high),
                               band_note=band.note))
    return kernel_plot(sides[-1][1], axis, grid, target, drawn)
