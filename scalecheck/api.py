"""L5: the use cases, as a Python API. `fit_models` reads measurement files (or takes a `Run`) and models them.

    >>> from scalecheck.api import fit_models
    >>> table = fit_models(["examples/mpi_data_mean.txt"], target={"p": 65536})
    >>> table.ranked()[0].kernel
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from scalecheck.core.modeler import fit_kernels
from scalecheck.core.search import FitOptions
from scalecheck.core.segment import SegmentOptions
from scalecheck.data.measurement import Run
from scalecheck.data.outcome import ModelTable
from scalecheck.errors import ConfigError
from scalecheck.formats import read_many


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
    thresholds of `segmentation` (None: no search); a segmented kernel gets one model per segment.
    """
    run = sources if isinstance(sources, Run) else read_many([Path(s) for s in sources], fmt)
    if target is not None:
        check_target(target, run.parameters)
    series = [s for s in run.series if (not metrics or s.metric in metrics)
              and (not kernels or any(fnmatch.fnmatchcase(s.kernel, pattern) for pattern in kernels))]
    if not series:
        raise ConfigError(_nothing_selected(run, metrics, kernels),
                          fix="check --metric and --kernel against the names above")
    return ModelTable(run.parameters, tuple(fit_kernels(series, options, segmentation)), target)


def parse_target(text: str) -> dict[str, float]:
    """`p=65536,n=1e6` → {'p': 65536.0, 'n': 1000000.0}."""
    target: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not sep or not name.strip() or not np.isfinite(number) or number <= 0:
            raise ConfigError(f"--target: cannot read '{item}'",
                              fix="write the target scale as NAME=VALUE with a positive number, e.g. --target p=65536")
        target[name.strip()] = number
    if not target:
        raise ConfigError("--target is empty", fix="write the target scale as NAME=VALUE, e.g. --target p=65536")
    return target


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


def _nothing_selected(run: Run, metrics: Sequence[str], kernels: Sequence[str]) -> str:
    names = sorted({s.kernel for s in run.series})
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    wanted = []
    if metrics:
        wanted.append(f"metric {', '.join(metrics)} (the file has {', '.join(run.metrics)})")
    if kernels:
        wanted.append(f"kernel {' or '.join(kernels)} (the file has {shown})")
    return "no measurements match " + " and ".join(wanted)
