"""Run Extra-P's segmented modeler in-process on many single-parameter data sets.

The CLI (``extrap --modeler segmented``, see extrap_reference.py) pays Python
start-up and file reading per run; this module instead starts the Extra-P
venv's interpreter on this very file and feeds it all data sets at once.

* Under the project's Python (standard library only):
  :func:`run_extrap_segmented` splits the data sets over ``workers``
  subprocesses, sends each its share as JSON on stdin and reads one JSON line
  per data set from its stdout.
* Under the Extra-P venv's Python (``__main__``): builds one ``Measurement``
  per point (one repetition, parameter "p"), exactly as the CLI's text reader
  does, and calls ``SegmentedModeler().create_model`` with its default options
  (mean of the values, like ``--modeler segmented`` without ``--options``).

Try it by hand::

    echo '[[[1,2,3,4,5,6,7,8,9,10],[1,4,9,16,25,36,37,38,39,40]]]' | \\
        .venv-extrap/bin/python benchmarks/extrap_segmented.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

DataSet = tuple[Sequence[float], Sequence[float]]


@dataclass(frozen=True)
class ExtrapSegmentation:
    """Extra-P's verdict on one data set.

    ``change_point`` is None when not segmented, ``(x,)`` when both segments
    share the measured point x, and ``(x_low, x_high)`` when the change lies
    between two neighbouring measured points. ``formula`` is the model as the
    CLI prints it (two lines ``... for p<=a`` / ``... for p>=b`` if segmented);
    ``seconds`` is the time Extra-P spent on this data set in-process.
    """

    segmented: bool
    change_point: tuple[float, ...] | None
    formula: str
    seconds: float


def _chunks(items: Sequence[Any], parts: int) -> list[Sequence[Any]]:
    """Split ``items`` into ``parts`` contiguous slices of near-equal length."""
    size, extra = divmod(len(items), parts)
    bounds = [i * size + min(i, extra) for i in range(parts + 1)]
    return [items[lo:hi] for lo, hi in zip(bounds, bounds[1:])]


def _run_worker(python: Path, payload: list[list[list[float]]], timeout: float | None) -> list[dict[str, Any]]:
    """Model ``payload`` in one Extra-P subprocess; one result dict per data set."""
    cmd = [str(python), "-I", str(Path(__file__).resolve())]
    try:
        done = subprocess.run(cmd, input=json.dumps(payload), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"Extra-P segmented modeler timed out after {timeout} s") from exc
    if done.returncode != 0:
        raise RuntimeError(f"Extra-P segmented modeler exited with {done.returncode}:\n{done.stderr.strip()}")
    results = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if len(results) != len(payload):
        raise RuntimeError(f"Extra-P segmented modeler returned {len(results)} results for "
                           f"{len(payload)} data sets:\n{done.stderr.strip()}")
    return results


def run_extrap_segmented(extrap_exe: Path, datasets: Sequence[DataSet], workers: int = 2,
                         timeout: float | None = 3600.0) -> list[ExtrapSegmentation]:
    """Run Extra-P's segmented modeler on each (x values, y values) data set.

    ``extrap_exe`` is the ``extrap`` executable of the Extra-P venv (see
    ``extrap_reference.find_extrap``); its sibling ``python`` runs the models.
    Results come back in the order of ``datasets``. Raises ValueError for a
    data set whose x and y differ in length, RuntimeError if Extra-P fails.
    """
    payload = []
    for index, (xs, ys) in enumerate(datasets):
        if len(xs) != len(ys):
            raise ValueError(f"data set {index}: {len(xs)} x values but {len(ys)} y values")
        payload.append([[float(x) for x in xs], [float(y) for y in ys]])
    if not payload:
        return []
    python = Path(extrap_exe).parent / "python"
    chunks = _chunks(payload, max(1, min(workers, len(payload))))
    with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
        parts = list(pool.map(lambda chunk: _run_worker(python, list(chunk), timeout), chunks))
    return [ExtrapSegmentation(segmented=r["segmented"],
                               change_point=None if r["change_point"] is None else tuple(r["change_point"]),
                               formula=r["formula"], seconds=r["seconds"])
            for part in parts for r in part]


def _model_stdin() -> None:
    """Script half (Extra-P venv): model the JSON data sets on stdin, print JSON lines."""
    import contextlib
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    from extrap.entities.callpath import Callpath
    from extrap.entities.coordinate import Coordinate
    from extrap.entities.measurement import Measurement
    from extrap.entities.metric import Metric
    from extrap.entities.model import SegmentedModel
    from extrap.entities.parameter import Parameter
    from extrap.modelers.single_parameter.segmented import SegmentedModeler

    parameter, callpath, metric = Parameter("p"), Callpath("r"), Metric("time")
    modeler = SegmentedModeler()  # one instance for all data sets, as the CLI does
    datasets = json.load(sys.stdin)
    out = sys.stdout

    def measurements(xs: list[float], ys: list[float]) -> list[Measurement]:
        """One measurement of one repetition per point, as the CLI's text reader builds them."""
        return [Measurement(Coordinate(float(x)), callpath, metric, [float(y)]) for x, y in zip(xs, ys)]

    with contextlib.redirect_stdout(sys.stderr):  # keep stdout for the results only
        if datasets:  # the first model pays ~0.4 s of lazy initialisation: keep it out of the timings
            modeler.create_model(measurements(*datasets[0]))
        for xs, ys in datasets:
            start = time.perf_counter()
            model = modeler.create_model(measurements(xs, ys))
            seconds = time.perf_counter() - start
            segmented = isinstance(model, SegmentedModel)
            change_point = [float(m.coordinate[0]) for m in model.changing_points] if segmented else None
            result = {"segmented": segmented, "change_point": change_point, "seconds": seconds,
                      "formula": model.hypothesis.function.to_string(parameter)}
            out.write(json.dumps(result) + "\n")
    out.flush()


if __name__ == "__main__":
    _model_stdin()
