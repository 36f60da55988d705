"""Speed: scalecheck against Extra-P's CLI on the same files, in the same run.

    python benchmarks/speed.py [--single 1000] [--multi 200] [--seed 7] [--extrap PATH]

Prints, for 1,000 single-parameter kernels (5 points x 5 repetitions), 200 two-parameter kernels (5 x 5 grid) and
a single kernel: the end-to-end wall time of `scalecheck model FILE` and `extrap --text FILE` and their ratio (for
one kernel that is the start-up of both tools); the in-process rate of single-parameter models per second (file
already read); the fixed start-up of `scalecheck model` (one kernel's wall time less its in-process reading and
modeling); and the start-up time of `scalecheck --help`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
import synthetic  # noqa: E402
from extrap_reference import find_extrap, run_extrap  # noqa: E402

from scalecheck.core.modeler import fit_kernels  # noqa: E402
from scalecheck.formats import read_measurements  # noqa: E402


def wall(command: list[str], repeat: int) -> float:
    """Best wall time of `repeat` runs of `command` (output discarded)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env, cwd=ROOT)
        best = min(best, time.perf_counter() - start)
    return best


def _timed(call: Callable[[], object]) -> float:
    """Wall time of one call, in seconds."""
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--single", type=int, default=1000, help="single-parameter kernels (default 1000)")
    parser.add_argument("--multi", type=int, default=200, help="two-parameter kernels (default 200)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement, best taken (default 3)")
    parser.add_argument("--extrap", help="path of Extra-P's `extrap` command (default: found automatically)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    exe = find_extrap(args.extrap)
    scalecheck = [sys.executable, "-m", "scalecheck"]
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            f"{args.single} kernels, 1 parameter": synthetic.write_extrap_text(
                synthetic.single_parameter(rng, args.single), ("p",), Path(tmp) / "single.txt"),
            f"{args.multi} kernels, 2 parameters": synthetic.write_extrap_text(
                synthetic.two_parameter(rng, args.multi), ("x", "y"), Path(tmp) / "multi.txt"),
            "1 kernel (start-up)": synthetic.write_extrap_text(
                synthetic.single_parameter(rng, 1), ("p",), Path(tmp) / "one.txt"),
        }
        walls: dict[str, float] = {}
        print(f"{'file':<28} {'scalecheck':>11} {'Extra-P':>9} {'ratio':>7}")
        for label, path in files.items():
            ours = walls[label] = wall(scalecheck + ["model", str(path)], args.repeat)
            if exe is not None:
                theirs = min(run_extrap(exe, path, "text").seconds for _ in range(args.repeat))
                print(f"{label:<28} {ours:>10.2f}s {theirs:>8.2f}s {theirs / ours:>6.1f}x")
            else:
                print(f"{label:<28} {ours:>10.2f}s {'-':>9} {'-':>7}")
        series = read_measurements(files[f"{args.single} kernels, 1 parameter"]).series
        fit_kernels(series)  # warm up imports and caches
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            fit_kernels(series)
            best = min(best, time.perf_counter() - start)
        print(f"in-process: {len(series) / best:,.0f} single-parameter models per second "
              f"({len(series)} kernels in {best * 1000:.0f} ms)")
        work = min(_timed(lambda: fit_kernels(read_measurements(files["1 kernel (start-up)"]).series))
                   for _ in range(args.repeat))
        one_kernel = walls["1 kernel (start-up)"]
        print(f"`scalecheck model` start-up: {one_kernel - work:.3f} s (one kernel: {one_kernel:.3f} s wall, "
              f"{work * 1000:.1f} ms of it reading and modeling)")
    help_time = wall(scalecheck + ["--help"], 5)
    print(f"`scalecheck --help`: {help_time:.3f} s")
    if exe is None:
        print("Extra-P not found: install it as benchmarks/README.md says to print the ratios")
    return 0


if __name__ == "__main__":
    sys.exit(main())
