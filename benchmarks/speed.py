"""Speed and memory: scalecheck beside Extra-P's CLI on the same files, and scalecheck's own limits, in one run.

    python benchmarks/speed.py [--quick] [--repeat 3] [--rows ID,ID,...] [--seed 7] [--extrap PATH]
                               [--million] [--timeout S] [--memory-cap GB]

Every figure is of a child process: its wall time, its CPU time (user + sys, from `os.wait4`), which a busy machine
inflates far less than the wall time, and its peak memory (maximum resident set size, from `os.wait4`). Each child
runs with its address space capped (`--memory-cap`, default 12 GB, `RLIMIT_AS`) and is killed after `--timeout`
seconds (default: per row), so a row that blows up prints "killed at 12 GB" or "timed out after N s". Runs of the
two tools (or of the two variants) of a row alternate, the first one changing every round; times are medians of
`--repeat` runs (default 3), peak memory the largest. Targets are judged on CPU time. Children run in a temporary
folder without SCALECHECK_* and GITHUB_* variables, so scalecheck's defaults apply.

Rows (ids for --rows; default: all):
  single        `scalecheck model` / `extrap --text`, 1,000 kernels, 1 parameter, 5 points x 5 repetitions
  multi         the same, 200 kernels, 2 parameters, 5 x 5 points x 5 repetitions
  single-large  the same, 10,000 kernels, 1 parameter
  multi-large   the same, 2,000 kernels, 2 parameters
  four          the 39 functions of Extra-P 4.2.5's four-parameter modeling test (test_modeling_4p, re-created by
                extrap_suite.py) as one Extra-P text file: 39 kernels at 625 points (5^4), one value each
  startup       `scalecheck model` of a 1-kernel file (at least 7 runs), beside `python -c "import numpy"`
  memory        peak memory per kernel at 5 and at 8 points: (peak at K2 - peak at K1) / (K2 - K1), K1 = 10,000,
                K2 = 100,000 (`--million`: also 1,000,000 kernels at 5 points); measured in process
                (`speed_fit.py`: `fit_kernels` on arrays) when one file of K2 kernels is beyond the readers' limits
  points        `scalecheck model` of one kernel at 30,000 distinct points
  check         `scalecheck check CANDIDATE --baseline BASELINE`, 1,000 kernels at 8 points, bootstrap 200
  check-large   the same, 10,000 kernels
  html          the `check` pair with and without `--html`: the share of the run that writes the report

Data (synthetic.py, seeded with --seed): single-parameter kernels c0 + c1 * p^i * log2(p)^j, (i, j) from the 42
default building blocks, one in ten constant, p = 4, 8, 16, 32, 64 (8 points: up to 512); two parameters on the
5 x 5 grid, additive or multiplicative; 5 repetitions with 5% lognormal noise; 8 significant digits, Extra-P's text
format (both tools read it). The check pairs measure every kernel twice with independent noise; in the candidate
5% of the growing kernels grow faster by p^(1/2). `--quick` shrinks every size for a smoke run (about a minute).
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
import extrap_suite  # noqa: E402
import synthetic  # noqa: E402
from extrap_reference import PRINT_FORMAT, extrap_version, find_extrap  # noqa: E402

from scalecheck.formats.limits import MAX_FILE_BYTES, MAX_RECORDS, MAX_SERIES  # noqa: E402

GB = 2**30
MB = 2**20
KB = 2**10
FIVE = (4.0, 8.0, 16.0, 32.0, 64.0)
EIGHT = tuple(4.0 * 2**k for k in range(8))
DIGITS = 8  # significant digits of the values written: a 10,000-kernel, 8-point file stays under the 8 MiB limit
# what Python, numpy and OpenBLAS print when an allocation fails (the address space is capped)
_OUT_OF_MEMORY = re.compile(r"MemoryError|Unable to allocate|Cannot allocate memory|Memory allocation", re.IGNORECASE)
_RAISED = re.compile(r"[\w.]*(Error|Exception|Interrupt)\b")
ROWS = ("single", "multi", "single-large", "multi-large", "four", "startup", "memory", "points", "check",
        "check-large", "html")


@dataclass(frozen=True)
class Sizes:
    """How much work each row does."""

    single: int = 1000
    multi: int = 200
    single_large: int = 10_000
    multi_large: int = 2000
    startup_runs: int = 7
    memory_small: int = 10_000  # K1
    memory_large: int = 100_000  # K2
    points: int = 30_000
    check: int = 1000
    check_large: int = 10_000


QUICK = Sizes(single=100, multi=20, single_large=300, multi_large=40, startup_runs=3, memory_small=200,
              memory_large=1000, points=2000, check=100, check_large=300)


@dataclass(frozen=True)
class Sample:
    """One child process: wall and CPU seconds, peak resident memory in bytes, and why it failed ("" if it did
    not)."""

    wall: float
    cpu: float
    peak: int
    failure: str = ""


@dataclass
class Runner:
    """Starts the children: each in a temporary folder, with a capped address space and a deadline."""

    folder: Path
    memory_cap: int  # bytes
    timeout: float | None  # seconds; None: each row's own
    env: dict[str, str] = field(default_factory=dict)

    def run(self, command: Sequence[str], timeout: float, ok: Sequence[int] = (0,)) -> Sample:
        """Run `command` to its end, or kill it (and its process group) after `timeout` seconds."""
        timeout = self.timeout or timeout
        cap = self.memory_cap
        with tempfile.TemporaryFile(dir=self.folder) as out, tempfile.TemporaryFile(dir=self.folder) as err:
            start = time.perf_counter()
            child = subprocess.Popen(list(command), stdout=out, stderr=err, cwd=self.folder, env=self.env,
                                     start_new_session=True, preexec_fn=lambda: _cap_memory(cap))
            expired = threading.Event()
            timer = threading.Timer(timeout, _kill_group, (child.pid, expired))
            timer.start()
            try:
                _, status, usage = os.wait4(child.pid, 0)
            except BaseException:  # interrupted: the child, in its own session, would outlive this run
                _kill_group(child.pid, expired)
                child.wait()
                raise
            finally:
                timer.cancel()
            wall = time.perf_counter() - start
            child.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            stdout = out.read().decode("utf-8", "replace")
            stderr = err.read().decode("utf-8", "replace")
        peak = usage.ru_maxrss * KB  # kilobytes on Linux
        cpu = usage.ru_utime + usage.ru_stime
        last = (stdout.strip().splitlines() or [""])[-1]
        failure = ""
        if expired.is_set():
            failure = f"timed out after {timeout:g} s"
        elif _OUT_OF_MEMORY.search(stderr):
            failure = f"killed at {cap / GB:g} GB"
        elif child.returncode not in ok:
            lines = stderr.strip().splitlines() or [last]
            raised = [line for line in lines if _RAISED.match(line)]  # a traceback's last line says what broke
            failure = f"exit {child.returncode}: {(raised or lines)[-1][:160]}"
        return Sample(wall, cpu, peak, failure)


def _cap_memory(limit: int) -> None:
    """Cap the address space of the child about to start (a `preexec_fn`)."""
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _kill_group(pid: int, expired: threading.Event) -> None:
    """Kill the process group `pid` leads (the child started in its own session), once its deadline passed."""
    expired.set()
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@dataclass(frozen=True)
class Figures:
    """The runs of one command: median times, the largest peak, the first failure."""

    samples: tuple[Sample, ...]

    @property
    def failure(self) -> str:
        return next((s.failure for s in self.samples if s.failure), "")

    @property
    def good(self) -> list[Sample]:
        return [s for s in self.samples if not s.failure]

    @property
    def wall(self) -> float:
        return statistics.median(s.wall for s in self.good)

    @property
    def cpu(self) -> float:
        return statistics.median(s.cpu for s in self.good)

    @property
    def peak(self) -> int:
        return max(s.peak for s in self.good)

    def text(self) -> str:
        """`0.62 s (CPU 0.31 s), 48 MB`, or the failure."""
        if not self.good:
            return self.failure
        runs = f", {len(self.good)} runs" if len(self.good) != len(self.samples) else ""
        return f"{seconds(self.wall)} (CPU {seconds(self.cpu)}), {size(self.peak)}{runs}"


def alternate(runner: Runner, commands: dict[str, Sequence[str]], repeat: int, timeout: float,
              ok: Sequence[int] = (0,)) -> dict[str, Figures]:
    """`repeat` rounds of every command, the first one changing every round; a command that failed is not run
    again (a run that timed out or hit the memory cap would only do so again)."""
    samples: dict[str, list[Sample]] = {name: [] for name in commands}
    names = list(commands)
    for round_ in range(repeat):
        order = names[round_ % len(names):] + names[:round_ % len(names)]
        for name in order:
            if not any(s.failure for s in samples[name]):
                samples[name].append(runner.run(commands[name], timeout, ok))
    return {name: Figures(tuple(found)) for name, found in samples.items()}


def seconds(value: float) -> str:
    return f"{value:.2f} s" if value < 100 else f"{value:.0f} s"


def size(value: float) -> str:
    """Bytes as KB, MB or GB (binary units)."""
    if value >= GB:
        return f"{value / GB:.2f} GB"
    if value >= MB:
        return f"{value / MB:.0f} MB"
    return f"{value / KB:.1f} KB"


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


@dataclass
class Table:
    """A Markdown table printed row by row, as the rows are measured."""

    header: tuple[str, ...]

    def __post_init__(self) -> None:
        print()
        print("| " + " | ".join(self.header) + " |")
        print("|" + "---|" * len(self.header), flush=True)

    def row(self, *cells: str) -> None:
        print("| " + " | ".join(cells) + " |", flush=True)


@dataclass
class Bench:
    """What every row needs: the runner, the data's random generator, the sizes and the tools."""

    runner: Runner
    rng: np.random.Generator
    sizes: Sizes
    repeat: int
    extrap: Path | None
    seed: int
    million: bool

    @property
    def scalecheck(self) -> list[str]:
        return [sys.executable, "-m", "scalecheck"]

    def extrap_command(self, path: Path, flag: str) -> list[str]:
        assert self.extrap is not None
        return [str(self.extrap), "--disable-progress", flag, str(path), "--print", PRINT_FORMAT]

    def file(self, name: str, kernels: list[synthetic.Kernel], parameters: tuple[str, ...]) -> Path:
        return synthetic.write_extrap_text(kernels, parameters, self.runner.folder / name, digits=DIGITS)


# --------------------------------------------------------------------------- rows beside Extra-P

def beside_extrap(bench: Bench, table: Table, label: str, path: Path | None, flag: str, target: float,
                  missing: str = "", peak: int | None = None) -> None:
    """One row: `scalecheck model FILE` and Extra-P's CLI on the same file, alternating; the target is a CPU-time
    ratio, and scalecheck's peak memory at most `peak` bytes when given."""
    if path is None:
        table.row(label, missing, missing, "-", f">= {target:g}x: not measured")
        return
    commands: dict[str, Sequence[str]] = {"scalecheck": bench.scalecheck + ["model", str(path)]}
    if bench.extrap is not None:
        commands["Extra-P"] = bench.extrap_command(path, flag)
    figures = alternate(bench.runner, commands, bench.repeat, timeout=900)
    ours = figures["scalecheck"]
    theirs = figures.get("Extra-P")
    if theirs is None:
        table.row(label, ours.text(), "not installed", "-", f">= {target:g}x: not measured")
        return
    if not ours.good or not theirs.good:
        table.row(label, ours.text(), theirs.text(), "-", f">= {target:g}x: not measured")
        return
    ratio, cpu_ratio = theirs.wall / ours.wall, theirs.cpu / ours.cpu
    goal, met = f">= {target:g}x", cpu_ratio >= target
    if peak is not None:
        goal, met = f"{goal} and <= {peak // MB} MB", met and ours.peak <= peak
    table.row(label, ours.text(), theirs.text(), f"{ratio:.1f}x (CPU {cpu_ratio:.1f}x)", f"{goal}: {verdict(met)}")


def model_rows(bench: Bench, rows: Sequence[str]) -> None:
    if not any(r in rows for r in ("single", "multi", "single-large", "multi-large", "four")):
        return
    sizes = bench.sizes
    print("\nModeling, end to end (`scalecheck model FILE` beside Extra-P's CLI on the same file); ratio = Extra-P's "
          "time / scalecheck's; target judged on CPU time")
    table = Table(("work", "scalecheck", "Extra-P", "ratio", "target"))
    made: dict[str, Callable[[], tuple[str, Path]]] = {
        "single": lambda: (f"`model`, {sizes.single:,} kernels, 1 parameter, 5 points x 5 repetitions",
                           bench.file("single.txt", synthetic.single_parameter(bench.rng, sizes.single, noise=0.05,
                                                                               lognormal=True), ("p",))),
        "multi": lambda: (f"`model`, {sizes.multi:,} kernels, 2 parameters, 5x5 points x 5 repetitions",
                          bench.file("multi.txt", synthetic.two_parameter(bench.rng, sizes.multi, noise=0.05,
                                                                          lognormal=True), ("x", "y"))),
        "single-large": lambda: (f"`model`, {sizes.single_large:,} kernels, 1 parameter",
                                 bench.file("single-large.txt", synthetic.single_parameter(
                                     bench.rng, sizes.single_large, noise=0.05, lognormal=True), ("p",))),
        "multi-large": lambda: (f"`model`, {sizes.multi_large:,} kernels, 2 parameters",
                                bench.file("multi-large.txt", synthetic.two_parameter(
                                    bench.rng, sizes.multi_large, noise=0.05, lognormal=True), ("x", "y"))),
    }
    targets = {"single": 30, "multi": 20, "single-large": 50, "multi-large": 20}
    for row, make in made.items():
        if row in rows:
            label, path = make()
            beside_extrap(bench, table, label, path, "--text", target=targets[row])
    if "four" in rows:
        cases = [case for family in extrap_suite.select(extrap_suite.build_families(), ["4 parameters"])
                 for case in family.cases]
        path = extrap_suite.write_extrap_text(cases, bench.runner.folder / "four.txt")
        label = (f"Extra-P's four-parameter modeling test (tests/test_multi_param_modeler.py::test_modeling_4p): "
                 f"its {len(cases)} functions as one file, 5^4 points")
        beside_extrap(bench, table, label, path, "--text", target=10, peak=300 * MB)


# --------------------------------------------------------------------------- scalecheck's own rows

def startup_row(bench: Bench, table: Table) -> None:
    path = bench.file("one.txt", synthetic.single_parameter(bench.rng, 1, noise=0.05, lognormal=True), ("p",))
    runs = max(bench.sizes.startup_runs, bench.repeat)
    figures = alternate(bench.runner, {"model": bench.scalecheck + ["model", str(path)],
                                       "numpy": [sys.executable, "-c", "import numpy"]}, runs, timeout=60)
    model, floor = figures["model"], figures["numpy"]
    met = bool(model.good) and model.cpu <= 0.25
    table.row(f"fixed start-up: `scalecheck model` of a 1-kernel file ({runs} runs)", model.text(),
              f"<= 0.25 s: {verdict(met)}" if model.good else "<= 0.25 s: not measured")
    table.row("floor: `python -c \"import numpy\"`", floor.text(), "-")


def _limits_refuse(kernels: int, points: int) -> str:
    """Why one Extra-P text file of `kernels` single-parameter kernels at `points` points would be refused, or ""."""
    records = kernels * points
    estimate = kernels * (12 + points * (6 + 5 * (DIGITS + 6)))  # bytes: REGION line, DATA lines
    reasons = []
    if kernels > MAX_SERIES:
        reasons.append(f"{kernels:,} kernels > {MAX_SERIES:,} per file")
    if records > MAX_RECORDS:
        reasons.append(f"{records:,} DATA lines > {MAX_RECORDS:,}")
    if estimate > MAX_FILE_BYTES:
        reasons.append(f"about {size(estimate)} > {size(MAX_FILE_BYTES)}")
    return ", ".join(reasons)


def _memory_peaks(bench: Bench, counts: Sequence[int], points: int, in_process: bool) -> dict[int, Figures]:
    """Peak memory of modeling each count of kernels, from a file or in process, one run each."""
    peaks: dict[int, Figures] = {}
    for count in counts:
        if in_process:
            command = [sys.executable, str(HERE / "speed_fit.py"), str(count), str(points), "--seed", str(bench.seed)]
        else:
            path = bench.file(f"memory-{count}-{points}.txt", synthetic.single_parameter(
                bench.rng, count, noise=0.05, points=EIGHT[:points], lognormal=True), ("p",))
            command = bench.scalecheck + ["model", str(path)]
        peaks[count] = Figures((bench.runner.run(command, timeout=1800),))
    return peaks


def memory_rows(bench: Bench, table: Table) -> None:
    k1, k2 = bench.sizes.memory_small, bench.sizes.memory_large
    for points in (5, 8):
        refused = _limits_refuse(k2, points)
        how = (f"in process: fit_kernels on arrays in a child (a file of {k2:,} kernels is beyond the readers' "
               f"limits: {refused})" if refused else "`scalecheck model FILE`")
        peaks = _memory_peaks(bench, (k1, k2), points, bool(refused))
        low, high = k1, k2
        if not peaks[k2].good and peaks[k1].good:  # the larger count blew up: estimate from a tenth of K1 and K1
            low, high = k1 // 10, k1
            peaks.update(_memory_peaks(bench, (low,), points, bool(refused)))
        label = f"memory per kernel, {points} points, 1 parameter, 5 repetitions ({how})"
        if not (peaks[low].good and peaks[high].good):
            table.row(label, "; ".join(f"{count:,} kernels: {peaks[count].text()}" for count in peaks),
                      "<= 20 KB/kernel: not measured")
            continue
        per_kernel = (peaks[high].peak - peaks[low].peak) / (high - low)
        detail = "; ".join(f"{count:,} kernels: {peaks[count].text()}" for count in sorted(peaks))
        table.row(label, f"**{size(per_kernel)}/kernel** from {low:,} and {high:,} kernels ({detail})",
                  f"<= 20 KB/kernel: {verdict(per_kernel <= 20 * KB)}")
    if bench.million:
        million = _memory_peaks(bench, (1_000_000,), 5, in_process=True)[1_000_000]
        table.row("1,000,000 kernels, 5 points, 1 parameter, 5 repetitions (in process)", million.text(),
                  f"<= 8 GB: {verdict(million.peak <= 8 * GB)}" if million.good else "<= 8 GB: MISSED")


def points_row(bench: Bench, table: Table) -> None:
    count = bench.sizes.points
    path = bench.file("dense.txt", [synthetic.dense_kernel(bench.rng, count)], ("p",))
    figures = alternate(bench.runner, {"model": bench.scalecheck + ["model", str(path)]}, bench.repeat,
                        timeout=300)["model"]
    met = bool(figures.good) and figures.cpu <= 5 and figures.peak <= 500 * MB
    table.row(f"one kernel at {count:,} distinct points, 1 parameter, 5 repetitions (`scalecheck model`)",
              figures.text(), f"<= 5 s and <= 500 MB: {verdict(met)}" if figures.good else "<= 5 s and <= 500 MB: "
              "MISSED")


def _check_files(bench: Bench, count: int) -> tuple[Path, Path]:
    baseline, candidate, _ = synthetic.check_pair(bench.rng, count, EIGHT)
    return (bench.file(f"candidate-{count}.txt", candidate, ("p",)),
            bench.file(f"baseline-{count}.txt", baseline, ("p",)))


def check_rows(bench: Bench, table: Table, rows: Sequence[str]) -> None:
    pairs: dict[int, tuple[Path, Path]] = {}
    for row, count, target, timeout in (("check", bench.sizes.check, 3, 300),
                                        ("check-large", bench.sizes.check_large, 30, 1200)):
        if row not in rows:
            continue
        candidate, baseline = pairs[count] = _check_files(bench, count)
        command = bench.scalecheck + ["check", str(candidate), "--baseline", str(baseline)]
        checked = alternate(bench.runner, {"check": command}, bench.repeat, timeout, ok=(0, 1))["check"]
        met = bool(checked.good) and checked.cpu <= target
        table.row(f"`scalecheck check` of {count:,} kernels at 8 points, bootstrap 200 (5% of the growing kernels "
                  f"regressed)", checked.text(), f"<= {target} s: {verdict(met)}" if checked.good
                  else f"<= {target} s: MISSED")
    if "html" in rows:
        count = bench.sizes.check
        candidate, baseline = pairs.get(count) or _check_files(bench, count)
        command = bench.scalecheck + ["check", str(candidate), "--baseline", str(baseline)]
        report = bench.runner.folder / "report.html"
        figures = alternate(bench.runner, {"plain": command, "html": command + ["--html", str(report)]},
                            bench.repeat, timeout=300, ok=(0, 1))
        plain, html = figures["plain"], figures["html"]
        label = f"`scalecheck check --html` of {count:,} kernels: share of the run writing the report (CPU)"
        if not (plain.good and html.good):
            table.row(label, f"with --html: {html.text()}; without: {plain.text()}", "<= 25%: not measured")
            return
        share = (html.cpu - plain.cpu) / html.cpu
        table.row(label, f"**{share:.0%}** ({html.cpu - plain.cpu:.2f} s of {seconds(html.cpu)}); with --html: "
                  f"{html.text()}; without: {plain.text()}; report {size(report.stat().st_size)}",
                  f"<= 25%: {verdict(share <= 0.25)}")


def own_rows(bench: Bench, rows: Sequence[str]) -> None:
    if not any(r in rows for r in ("startup", "memory", "points", "check", "check-large", "html")):
        return
    print("\nscalecheck alone (no Extra-P equivalent); targets judged on CPU time")
    table = Table(("work", "scalecheck", "target"))
    if "startup" in rows:
        startup_row(bench, table)
    if "memory" in rows:
        memory_rows(bench, table)
    if "points" in rows:
        points_row(bench, table)
    check_rows(bench, table, rows)


# --------------------------------------------------------------------------- main

def _row_ids(text: str) -> list[str]:
    ids = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [i for i in ids if i not in ROWS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown row(s) {', '.join(unknown)}; the rows are {', '.join(ROWS)}")
    return ids


def _child_env() -> dict[str, str]:
    """The environment of the children: scalecheck's defaults (no SCALECHECK_* or GITHUB_*), this checkout first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCALECHECK_", "GITHUB_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return env


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


def _compile_bytecode() -> None:
    """Compile this checkout's modules, as installing the package does (Extra-P's venv has its bytecode): with
    PYTHONDONTWRITEBYTECODE set, every child would otherwise compile each module it loads, at start-up."""
    if not compileall.compile_dir(str(ROOT / "scalecheck"), quiet=1):
        print("speed.py: could not compile scalecheck's bytecode: start-up figures include compiling it")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--repeat", type=int, help="runs per command, alternating (default 3; 1 with --quick)")
    parser.add_argument("--rows", type=_row_ids, default=list(ROWS), help=f"rows to run (default: all): "
                        f"{','.join(ROWS)}")
    parser.add_argument("--seed", type=int, default=7, help="random seed of the synthetic data (default 7)")
    parser.add_argument("--extrap", help="path of Extra-P's `extrap` command (default: found automatically)")
    parser.add_argument("--million", action="store_true", help="also model 1,000,000 kernels (in process)")
    parser.add_argument("--timeout", type=float, help="seconds before a child is killed (default: per row)")
    parser.add_argument("--memory-cap", type=float, default=12, metavar="GB",
                        help="address space of each child, in GB (default 12)")
    args = parser.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        parser.error("--repeat must be 1 or more")
    repeat = args.repeat or (1 if args.quick else 3)
    exe = find_extrap(args.extrap)
    print(f"speed.py: {platform.python_implementation()} {platform.python_version()}, "
          f"{exe and extrap_version(exe) or 'Extra-P not installed'}, seed {args.seed}, {repeat} run(s) per "
          f"command{', quick sizes' if args.quick else ''}; {_load()}", flush=True)
    start = time.perf_counter()
    _compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="scalecheck-speed-") as tmp:
        runner = Runner(Path(tmp), int(args.memory_cap * GB), args.timeout, _child_env())
        bench = Bench(runner, np.random.default_rng(args.seed), QUICK if args.quick else Sizes(), repeat, exe,
                      args.seed, args.million)
        model_rows(bench, args.rows)
        own_rows(bench, args.rows)
    print(f"\n{time.perf_counter() - start:.0f} s in all; {_load()}")
    if exe is None:
        print("Extra-P not installed: install it as benchmarks/README.md says to print its column")
    return 0


if __name__ == "__main__":
    sys.exit(main())
