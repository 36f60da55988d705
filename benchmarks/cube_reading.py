"""Time and memory of reading a folder of Score-P CUBE profiles (the folder-per-run layout Extra-P reads).

    python benchmarks/cube_reading.py [FOLDER] [--repeat 20] [--json FILE]

FOLDER defaults to tests/inputs/cube/single_parameter: Extra-P's 9 real profiles of a matrix multiply (x = 1..2000,
4 call paths, 7 metrics with data). Printed, in CPU time of this process and wall time: the first read (with the
import of pycubexr), then the best and the median of `--repeat` reads; the peak of Python's allocations during one
read (tracemalloc) and the process's peak resident memory. Target: the first read in under 2 s.

The references, measured in the same run: pycubexr alone opening every profile and reading every metric's values
(what any reader of these files pays), and scalecheck reading Extra-P's JSON export of the same data (`--json`,
defaulting to tests/inputs/extrap/cube_single_parameter.json when FOLDER is the default).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from scalecheck.formats import read_measurements  # noqa: E402

DEFAULT_FOLDER = ROOT / "tests" / "inputs" / "cube" / "single_parameter"
DEFAULT_EXPORT = ROOT / "tests" / "inputs" / "extrap" / "cube_single_parameter.json"


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call of `work`."""
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def pycubexr_only(profiles: list[Path]) -> None:
    """Open every profile with pycubexr and read every top-level metric's values: the cost of the file format."""
    from pycubexr import CubexParser
    from pycubexr.utils.exceptions import MissingMetricError

    for profile in profiles:
        with CubexParser(str(profile)) as parsed:
            for metric in parsed.get_metrics():
                try:
                    parsed.get_metric_values(metric, cache=False)
                except MissingMetricError:
                    pass


def summary(name: str, samples: list[tuple[float, float]]) -> str:
    cpu = [c for c, _ in samples]
    wall = [w for _, w in samples]
    return (f"{name:<34} CPU best {min(cpu) * 1e3:7.1f} ms, median {statistics.median(cpu) * 1e3:7.1f} ms; "
            f"wall median {statistics.median(wall) * 1e3:7.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None, help="Extra-P's JSON export of the same data")
    args = parser.parse_args(argv)
    export = args.json or (DEFAULT_EXPORT if args.folder == DEFAULT_FOLDER else None)
    profiles = sorted(p for p in args.folder.glob("*/[!.]*.cubex"))

    first_cpu, first_wall = timed(lambda: read_measurements(args.folder))  # pycubexr imported here
    run = read_measurements(args.folder)
    tracemalloc.start()
    read_measurements(args.folder)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ours = [timed(lambda: read_measurements(args.folder)) for _ in range(args.repeat)]
    format_only = [timed(lambda: pycubexr_only(profiles)) for _ in range(args.repeat)]

    values = sum(int(np.count_nonzero(~np.isnan(s.values))) for s in run.series)
    print(f"{args.folder}: {len(profiles)} profiles, {len(run.series)} (kernel, metric) series, {values} values, "
          f"parameters {', '.join(run.parameters)}")
    print(f"first read (pycubexr imported)     CPU {first_cpu * 1e3:7.1f} ms, wall {first_wall * 1e3:7.1f} ms "
          f"(target: under 2000 ms)")
    print(summary("scalecheck, folder of profiles", ours))
    print(summary("pycubexr alone, every metric", format_only))
    ratio = statistics.median(c for c, _ in ours) / statistics.median(c for c, _ in format_only)
    print(f"  ratio scalecheck / pycubexr alone: {ratio:.2f}")
    if export is not None and export.exists():
        json_reads = [timed(lambda: read_measurements(export)) for _ in range(args.repeat)]
        print(summary("scalecheck, Extra-P's JSON export", json_reads))
        ratio = statistics.median(c for c, _ in ours) / statistics.median(c for c, _ in json_reads)
        print(f"  ratio folder of profiles / JSON export: {ratio:.1f}")
    print(f"peak of Python allocations during one read: {peak / 2**20:.2f} MiB")
    print(f"peak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
