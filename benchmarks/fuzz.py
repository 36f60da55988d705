"""Fuzz `scalecheck model`, `check`, `cluster` and `overhead` at scale: the cases of tests/fuzz/test_fuzz.py, as many
as asked, each in a forked process of its own (a hang is killed, a crash of the interpreter is seen, and the memory
a case needs is its process's peak).

Prints how the runs ended, the slowest case and the case that needed the most memory, then every kind of broken
promise (tests/fuzz/oracle.py) with how many cases showed it and one case to replay:

    python benchmarks/fuzz.py --cases 20000 --seed 7 --jobs 2
    python benchmarks/fuzz.py --seed 7 --replay 1234 --keep /tmp/case    (one case, its output and its files)

A case is a pure function of (seed, index), so a replay runs exactly the case that failed. Run it from the
repository's top folder with the test extra installed (`pip install -e '.[test]'`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scalecheck.text import visible  # noqa: E402
from tests.fuzz.cases import FAMILIES, Case, make_case  # noqa: E402
from tests.fuzz.oracle import SLOW, TIMEOUT, Outcome, Problem, evidence, problems, run_case  # noqa: E402

KILL_GRACE = 10.0  # seconds after --timeout: a case whose alarm could not stop it (a loop in C) is killed


@dataclass(frozen=True)
class Result:
    """How one case ended, and what it cost."""

    index: int
    command: str
    family: str
    status: int | None  # exit status; None when the run did not end with one
    seconds: float
    rise_kib: int  # how much the process's peak resident memory rose during the case
    peak_kib: int  # the process's peak resident memory after the case
    problems: tuple[tuple[str, str], ...]  # (kind, detail)


def _result(case: Case, outcome: Outcome, found: list[Problem], rise_kib: int) -> Result:
    return Result(case.index, case.command, case.family, outcome.status, outcome.seconds, rise_kib,
                  resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, tuple((p.kind, p.detail) for p in found))


def _child(seed: int, index: int, folder: Path, result: Path, timeout: float, slow: float) -> None:
    """Run one case in this (forked) process and write its `Result` to `result` as JSON."""
    start_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    case = make_case(seed, index)
    outcome = run_case(case, folder, timeout=timeout)
    found = problems(case, folder, outcome, slow=slow)
    done = _result(case, outcome, found, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start_peak)
    result.write_text(json.dumps(asdict(done)), encoding="utf-8")


def _died(index: int, how: str, seconds: float, seed: int) -> Result:
    case = make_case(seed, index)
    return Result(index, case.command, case.family, None, seconds, 0, 0, ((how, f"the case's process {how}"),))


def run_forked(seed: int, indices: list[int], jobs: int, timeout: float, slow: float,
               work: Path) -> Iterator[Result]:
    """Each case's result, running up to `jobs` forked cases at a time."""
    running: dict[int, tuple[int, float, Path]] = {}
    pending = list(reversed(indices))
    while pending or running:
        while pending and len(running) < jobs:
            index = pending.pop()
            folder = work / str(index)
            folder.mkdir(parents=True)
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                try:
                    _child(seed, index, folder / "case", folder / "result.json", timeout, slow)
                finally:
                    os._exit(0)
            running[pid] = (index, time.monotonic(), folder)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for child, (index, started, _) in running.items():
                if now - started > timeout + KILL_GRACE:
                    os.kill(child, signal.SIGKILL)
            time.sleep(0.002)
            continue
        index, started, folder = running.pop(pid)
        seconds = time.monotonic() - started
        result = folder / "result.json"
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL and seconds > timeout:
            yield _died(index, f"hang: killed after {timeout + KILL_GRACE:g} s", seconds, seed)
        elif os.WIFSIGNALED(status):
            yield _died(index, f"died of signal {signal.Signals(os.WTERMSIG(status)).name}", seconds, seed)
        elif not result.exists():
            yield _died(index, "ended without a result", seconds, seed)
        else:
            fields = json.loads(result.read_text(encoding="utf-8"))
            yield Result(**{**fields, "problems": tuple(tuple(p) for p in fields["problems"])})
        shutil.rmtree(folder, ignore_errors=True)


def run_here(seed: int, indices: list[int], timeout: float, slow: float, work: Path) -> Iterator[Result]:
    """Each case's result, running the cases one after another in this process (the peak memory of a case is
    then known only when it exceeds that of every case before it)."""
    for index in indices:
        case = make_case(seed, index)
        folder = work / str(index)
        outcome = run_case(case, folder, timeout=timeout)
        yield _result(case, outcome, problems(case, folder, outcome, slow=slow), outcome.rss_rise)
        shutil.rmtree(folder, ignore_errors=True)


def warm_up(work: Path) -> None:
    """Import what the commands import (numpy, scipy, jinja2) once, before the forks share it."""
    import contextlib
    import io

    from scalecheck.cli import main as scalecheck

    examples = Path(__file__).resolve().parents[1] / "examples"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        scalecheck(["model", str(examples / "mpi_data_mean.txt"), "--html", str(work / "m.html"), "--max-plots", "1"])
        scalecheck(["check", str(examples / "check" / "candidate.json"), "--baseline",
                    str(examples / "check" / "baseline.json"), "--markdown", str(work / "c.md")])
        scalecheck(["cluster", str(examples / "cluster" / "weather.json")])
    for path in work.iterdir():
        path.unlink()


def replay(seed: int, index: int, keep: Path | None, timeout: float, slow: float) -> int:
    """Run one case here and print it, its output (made visible) and its problems; keep its files in `keep`."""
    case = make_case(seed, index)
    print(case.describe())
    folder = keep if keep is not None else Path(tempfile.mkdtemp(prefix="scalecheck-fuzz-"))
    if keep is not None and keep.exists():
        shutil.rmtree(keep)
    outcome = run_case(case, folder, timeout=timeout)
    print(f"\nscalecheck {' '.join(visible(a) for a in case.argv(folder))}")
    print(f"exit status {outcome.status}, {outcome.seconds:.2f} s, peak memory rose {outcome.rss_rise / 1024:.0f} MiB")
    for name, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        print(f"--- {name} ({len(text):,} characters, shown made visible) ---")
        for line in text[:20_000].split("\n"):
            print(visible(line)[:500])
    if outcome.uncaught:
        print("--- uncaught ---\n" + outcome.uncaught)
    found = problems(case, folder, outcome, slow=slow)
    print(f"--- {len(found)} problem(s) ---")
    for problem in found:
        print(f"{problem.kind}\n{evidence(problem.detail, lines=40)}")
    if keep is None:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        print(f"the case's files are in {keep}")
    return 1 if found else 0


def summary(results: list[Result], seed: int, seconds: float, jobs: int) -> str:
    """How the cases ended per command, the worst time and memory, and every kind of problem with one case."""
    statuses = Counter((r.command, r.status) for r in results)
    lines = [f"scalecheck fuzz: {len(results):,} cases, seed {seed}, {jobs} job(s), {seconds:.0f} s "
             f"({len(results) / max(seconds, 1e-9):.1f} cases/s)", "exit status per command:"]
    for command in ("model", "check", "cluster", "overhead"):
        counts = {status: n for (c, status), n in statuses.items() if c == command}
        shown = ", ".join(f"{status}: {n}" for status, n in sorted(counts.items(), key=lambda kv: str(kv[0])))
        lines.append(f"  {command:9} {sum(counts.values()):6,}   {shown}")
    times = sorted(r.seconds for r in results)
    slowest = max(results, key=lambda r: r.seconds)
    hungriest = max(results, key=lambda r: r.rise_kib)
    lines += [f"time per case: median {times[len(times) // 2]:.3f} s, 99th percentile "
              f"{times[int(len(times) * 0.99)]:.2f} s, worst {slowest.seconds:.2f} s "
              f"(case {slowest.index}, {slowest.command}, {slowest.family})",
              f"memory per case: worst rise of the peak resident memory {hungriest.rise_kib / 1024:.0f} MiB "
              f"(case {hungriest.index}, {hungriest.command}, {hungriest.family}), to "
              f"{hungriest.peak_kib / 1024:.0f} MiB; highest peak of a case "
              f"{max(r.peak_kib for r in results) / 1024:.0f} MiB"]
    kinds: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for r in results:
        for kind, detail in r.problems:
            kinds[kind].append((r.index, detail))
    lines.append(f"\n{len(kinds)} kind(s) of problem in {sum(1 for r in results if r.problems):,} case(s)"
                 + (":" if kinds else ""))
    for kind, hits in sorted(kinds.items(), key=lambda item: -len(item[1])):
        index, detail = hits[0]
        lines += [f"\n[{len(hits):,} case(s)] {kind}", make_case(seed, index).describe(), "  evidence:",
                  evidence(detail)]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2_000, help="number of cases (default 2000)")
    parser.add_argument("--seed", type=int, default=1, help="the run's seed (default 1)")
    parser.add_argument("--start", type=int, default=0, help="index of the first case (default 0)")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1)")
    parser.add_argument("--families", help="only these families, comma-separated: " + ", ".join(FAMILIES))
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help=f"seconds before a case is stopped "
                                                                       f"(default {TIMEOUT:g})")
    parser.add_argument("--slow", type=float, default=SLOW, help=f"seconds above which a case is a problem "
                                                                 f"(default {SLOW:g})")
    parser.add_argument("--in-process", action="store_true", help="run the cases in this process, as the suite "
                                                                  "does, instead of one fork each")
    parser.add_argument("--replay", type=int, metavar="INDEX", help="run case INDEX of --seed alone and show it")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="with --replay: leave the case's files in DIR")
    args = parser.parse_args()
    if args.replay is not None:
        return replay(args.seed, args.replay, args.keep, args.timeout, args.slow)
    indices = list(range(args.start, args.start + args.cases))
    if args.families:
        wanted = {FAMILIES.index(name) for name in args.families.split(",")}
        indices = [i for i in range(args.start, args.start + args.cases * len(FAMILIES))
                   if i % len(FAMILIES) in wanted][:args.cases]
    work = Path(tempfile.mkdtemp(prefix="scalecheck-fuzz-"))
    try:
        warm_up(work)
        start = time.monotonic()
        runner = run_here(args.seed, indices, args.timeout, args.slow, work) if args.in_process \
            else run_forked(args.seed, indices, args.jobs, args.timeout, args.slow, work)
        results = []
        for done, result in enumerate(runner, start=1):
            results.append(result)
            if done % 500 == 0:
                print(f"{done:,} of {len(indices):,} cases, {time.monotonic() - start:.0f} s", file=sys.stderr,
                      flush=True)
        print(summary(results, args.seed, time.monotonic() - start, 1 if args.in_process else args.jobs))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `python benchmarks/fuzz.py ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
