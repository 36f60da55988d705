"""Same-job mode end to end on a real git repository, with the pytest plugin as the measurement command, under load.

What it shows: `scalecheck check --same-job` measures the baseline commit (in a temporary worktree) and the
working tree in one job, in alternating rounds, and then compares them. This script builds a small git repository
in a temporary folder (a `wordcount.py` whose `distinct(words)` is linear with a set, and a plugin test
`tests/perf/test_scaling.py` asserting `n log n`), commits it as "base", and adds two candidate branches:

- `rename`: the candidate only renames a local variable of `distinct` (same code, same cost): every check must
  pass (exit status 0);
- `quadratic`: the candidate tests membership on a list instead of a set (O(n^2)): every check must fail (exit
  status 1) and its report must name the kernel, the test id `tests/perf/test_scaling.py::test_distinct_scales`.

For each run it checks out the candidate branch and runs, in the repository,

    python -m scalecheck check --same-job --baseline <base sha> --rounds R --json <tmp>/check.json --
        python -m pytest -q -p no:cacheprovider tests/perf --scalecheck-budget B --scalecheck-save {out}

Each pair runs first with the machine idle (--idle-runs, default 3), then with every core kept busy by a
busy-loop process (`while True: pass`, one per core, started right before the loaded runs and stopped by process
id right after, also on Ctrl-C) for --runs runs (default 10). It prints one line per run (exit status, wall time,
verdict, the failing kernels, every finding's kind and the failing growth with its ratio, rise and q), the JSON
findings in full (and the kernel's models, ratio interval and growth probabilities) of every run that missed its
target, of every rename run with any finding (warnings and notices included) and of every quadratic run that failed
without a growth finding, a table per scenario and PASS/FAIL per acceptance target. It exits 0 unless it breaks itself.

It also runs the GitHub Action's path once per pair under load, when action.yml has the `command` input: the
action's `check` step (`scalecheck ci`) runs locally with bash, as tests/test_action.py runs it (a pull-request event,
`baseline: main`, `comment: never`, `command: python -m pytest ... --scalecheck-save "$SCALECHECK_OUTPUT"`), and the
job must pass for the rename pair and fail, with an error annotation naming the kernel, for the quadratic one.
It needs PyYAML (the test extra); without it, or without the input, that part is skipped with a line saying why.

Run it from the repository root with the project's Python (numpy, scipy, pytest and scalecheck installed):

    python benchmarks/same_job_under_load.py              # 3 idle + 10 loaded runs per pair: about 5-8 min
    python benchmarks/same_job_under_load.py --quick      # 1 idle + 2 loaded runs per pair: about 2 min
    python benchmarks/same_job_under_load.py --runs 20 --idle-runs 0 --budget 0.5 --rounds 3 --keep

On a 2-core machine one check takes about 5 s idle for the rename pair and 9 s for the quadratic pair (the plugin
confirms its failing assertion on more repetitions), and 10-25 s under load (more when other work shares the
machine). "Idle" means only that this script starts no busy loops: the load average it prints says what else ran
(it lags by about a minute, so runs right after a loaded phase still show it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from busy import start_busy_loops, stop_busy_loops

KERNEL = "tests/perf/test_scaling.py::test_distinct_scales"

BASE = '''"""wordcount: small text statistics (the same-job benchmark's package)."""


def distinct(words):
    """The distinct words, in the order of their first occurrence."""
    seen = set()
    kept = []
    for word in words:
        if word not in seen:
            seen.add(word)
            kept.append(word)
    return kept
'''

RENAME = BASE.replace("seen", "already")  # the same code, a local variable renamed

QUADRATIC = '''"""wordcount: small text statistics (the same-job benchmark's package)."""


def distinct(words):
    """The distinct words, in the order of their first occurrence."""
    seen = []
    kept = []
    for word in words:
        if word not in seen:  # a list: every lookup scans it
            seen.append(word)
            kept.append(word)
    return kept
'''

TEST = '''"""The growth wordcount promises, asserted with scalecheck's pytest plugin."""

import random

from wordcount import distinct

SIZES = [250, 500, 1_000, 2_000, 4_000, 8_000]


def random_words(n):
    rng = random.Random(n)
    return [f"w{rng.getrandbits(40):x}" for _ in range(n)]


def test_distinct_scales(scaling):
    scaling.measure(distinct, n=SIZES, setup=random_words).assert_no_worse_than("n log n")
'''

PYTEST_INI = "[pytest]\npythonpath = .\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def build_repo(repo: Path) -> str:
    """The benchmark's repository at `repo`: base on main, branches rename and quadratic. Returns base's sha."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Same-Job Benchmark")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "commit.gpgsign", "false")
    (repo / "tests" / "perf").mkdir(parents=True)
    (repo / ".gitignore").write_text("__pycache__/\n")
    (repo / "pytest.ini").write_text(PYTEST_INI)
    (repo / "wordcount.py").write_text(BASE)
    (repo / "tests" / "perf" / "test_scaling.py").write_text(TEST)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    for branch, source, message in (("rename", RENAME, "distinct: rename seen to already"),
                                    ("quadratic", QUADRATIC, "distinct: remember seen words in a list")):
        git(repo, "checkout", "-q", "-b", branch, base)
        (repo / "wordcount.py").write_text(source)
        git(repo, "commit", "-q", "-am", message)
    git(repo, "checkout", "-q", "main")
    return base


@dataclass
class Run:
    scenario: str  # "rename" or "quadratic"
    load: str  # "idle" or "loaded"
    index: int
    status: int
    wall: float
    verdict: str | None
    failing: list[str]
    named: bool  # the check's own report (after its PASS/FAIL line) names the kernel, not only pytest's output
    findings: list[dict] = field(default_factory=list)
    kernel: dict = field(default_factory=dict)  # the kernel's row of the JSON report: ratio, bound, upper, growths
    loadavg: tuple[float, float, float] = (0.0, 0.0, 0.0)
    output: str = ""

    @property
    def expected(self) -> int:
        return 0 if self.scenario == "rename" else 1

    @property
    def on_target(self) -> bool:
        return self.status == self.expected and (self.scenario == "rename" or self.named)


def check_report(stdout: str) -> str:
    """The check's own text report: from its last PASS:/FAIL: line to the end (pytest's output comes before)."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(("PASS:", "FAIL:"))]
    return "\n".join(lines[starts[-1]:]) if starts else ""


def one_run(repo: Path, base: str, scenario: str, load: str, index: int, args: argparse.Namespace,
            tmp: Path) -> Run:
    git(repo, "checkout", "-q", scenario)
    report = tmp / "check.json"
    report.unlink(missing_ok=True)
    command = [sys.executable, "-m", "scalecheck", "check", "--same-job", "--baseline", base,
               "--rounds", str(args.rounds), "--json", str(report), "--no-github", "--",
               sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/perf",
               "--scalecheck-budget", f"{args.budget:g}", "--scalecheck-save", "{out}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "SCALECHECK_"))}
    start = time.perf_counter()
    done = subprocess.run(command, cwd=repo, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.perf_counter() - start
    verdict, failing, findings, kernel = None, [], [], {}
    if report.exists():
        data = json.loads(report.read_text())
        verdict = data.get("verdict")
        findings = data.get("findings", [])
        kernel = next((k for k in data.get("kernels", []) if k.get("kernel") == KERNEL), {})
        failing = sorted({f["kernel"] for f in findings if f.get("severity") == "error"})
    own = check_report(done.stdout)
    return Run(scenario, load, index, done.returncode, wall, verdict, failing, KERNEL in own, findings,
               kernel, os.getloadavg(),
               f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")


def fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def describe_finding(f: dict) -> str:
    keys = ("kind", "severity", "kernel", "baseline_growth", "candidate_growth", "rise", "span", "held", "ratio",
            "bound", "probability", "p_value", "q_value")
    head = "  ".join(f"{k}={fmt(f.get(k))}" for k in keys if k in f)
    extra = f"\n          message: {f.get('message', '')}"
    evidence = f.get("evidence") or {}
    if evidence:
        extra += "\n          evidence: " + "; ".join(f"{k}: {v}" for k, v in evidence.items())
    return head + extra


def print_run(run: Run) -> None:
    kinds = ",".join(f"{f['kind']}/{f.get('severity', '?')}{'(held)' if f.get('held') else ''}"
                     for f in run.findings) or "none"
    mark = "ok  " if run.on_target else "MISS"
    growth = next((f for f in run.findings if f["kind"] == "growth" and f.get("severity") == "error"), None)
    if growth is not None:
        kinds += (f" ({growth.get('baseline_growth')} -> {growth.get('candidate_growth')}, "
                  f"ratio {fmt(growth.get('ratio'))} >= {fmt(growth.get('bound'))}, rise {fmt(growth.get('rise'))}, "
                  f"q {fmt(growth.get('q_value'))})")
    print(f"  {mark} {run.scenario:9s} {run.load:6s} #{run.index + 1:<2d} exit {run.status}  {run.wall:6.1f} s  "
          f"verdict {fmt(run.verdict):4s}  ratio {fmt(run.kernel.get('ratio'))} [{fmt(run.kernel.get('bound'))}, "
          f"{fmt(run.kernel.get('upper'))}]  failing {','.join(run.failing) or '-'}  findings {kinds}  "
          f"named {'yes' if run.named else 'no'}  load {run.loadavg[0]:.2f}", flush=True)


def print_miss(run: Run, args: argparse.Namespace) -> None:
    k = run.kernel
    if k:
        models = "; ".join(f"{side}: {(k.get(side) or {}).get('formula', '-')}"
                           + (f" (change points {', '.join(cps)})" if (cps := (k.get(side) or {}).get('change_points'))
                              else "")
                           for side in ("baseline", "candidate"))
        print(f"       kernel: ratio {fmt(k.get('ratio'))} [{fmt(k.get('bound'))}, {fmt(k.get('upper'))}], "
              f"growth_up {fmt(k.get('growth_up'))}, growth_down {fmt(k.get('growth_down'))}, "
              f"basis {k.get('basis') or '-'}; {models}")
    print(f"       findings of this run ({len(run.findings)}):")
    for f in run.findings:
        print("        - " + describe_finding(f))
    if args.verbose or run.status not in (0, 1):
        print("       " + run.output.replace("\n", "\n       "))


# -- the Action's path: action.yml's `check` step (scalecheck ci) runs locally, as tests/test_action.py runs it ---

ROOT = Path(__file__).resolve().parents[1]
ACTION = ROOT / "action.yml"
sys.path.insert(0, str(ROOT))  # tests.test_action: the Action tests' YAML loader and expression evaluator
ACTION_COMMAND = ('python -m pytest -q -p no:cacheprovider tests/perf --scalecheck-budget {budget} '
                  '--scalecheck-save "$SCALECHECK_OUTPUT"')
def load_action() -> tuple[dict | None, str]:
    """action.yml when it has the `command` input and the steps this script runs; else None and why not. The YAML
    reading and the expression evaluator are the Action tests' own (tests/test_action.py)."""
    try:
        import yaml  # noqa: F401 - tests/test_action.py needs it
    except ImportError:
        return None, "skipped: PyYAML is not installed (pip install pyyaml)"
    from tests.test_action import load

    try:
        action = load(ACTION)
    except OSError as error:
        return None, f"skipped: cannot read {ACTION}: {error}"
    if "command" not in (action.get("inputs") or {}):
        return None, "skipped: action.yml has no input named `command` (same-job mode) yet"
    ids = {step.get("id") for step in action["runs"]["steps"]}
    if "check" not in ids:
        return None, f"skipped: action.yml has no step with the id check (ids: {sorted(map(str, ids))})"
    return action, ""


def action_run(action: dict, repo: Path, base: str, scenario: str, args: argparse.Namespace, tmp: Path) -> str:
    """One pull-request job through the Action (inputs command, baseline=main, comment=never): its check step, whose
    exit status is the job's. A line saying what happened."""
    git(repo, "checkout", "-q", scenario)
    temp = tmp / f"runner-{scenario}"
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir()
    summary = temp / "step-summary.md"
    summary.touch()
    event = {"pull_request": {"number": 7, "head": {"repo": {"full_name": "octo/project"}}},
             "repository": {"default_branch": "main"}}
    (temp / "event.json").write_text(json.dumps(event))
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(command=ACTION_COMMAND.format(budget=f"{args.budget:g}"), baseline="main", comment="never",
                  rounds=str(args.rounds))
    outputs: dict[str, dict[str, str]] = {"install": {"python": sys.executable}}
    github = {"action_path": str(ACTION.parent), "token": "", "event": event, "event_name": "pull_request"}
    bindir = str(Path(sys.executable).parent)  # `python` in the command is this venv's, as setup-python would give
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "SCALECHECK_", "INPUT_"))}
    env.update(PATH=bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin"), GITHUB_ACTIONS="true", CI="true",
               GITHUB_EVENT_NAME="pull_request", GITHUB_EVENT_PATH=str(temp / "event.json"),
               GITHUB_REPOSITORY="octo/project", GITHUB_JOB="scalecheck", GITHUB_RUN_ID="4242",
               GITHUB_RUN_ATTEMPT="1", GITHUB_WORKSPACE=str(repo), GITHUB_STEP_SUMMARY=str(summary),
               GITHUB_API_URL="http://127.0.0.1:9", GITHUB_SERVER_URL="https://github.com", RUNNER_TEMP=str(temp),
               GITHUB_BASE_REF="main", GITHUB_HEAD_REF=scenario, GITHUB_REF="refs/pull/7/merge",
               GITHUB_SHA=git(repo, "rev-parse", "HEAD"))
    from tests.test_action import evaluate, parse_output_file

    steps = {step.get("id"): step for step in action["runs"]["steps"]}
    results = {}
    start = time.perf_counter()
    for step_id in ("check",):
        step = steps[step_id]
        contexts = {"github": github, "strategy": {"job-index": 0}, "runner": {"temp": str(temp)},
                    "steps": {sid: {"outputs": out} for sid, out in outputs.items()}}
        contexts["inputs"] = {name: evaluate(value, contexts) for name, value in inputs.items()}
        step_env = {name: evaluate(str(value), contexts) for name, value in (step.get("env") or {}).items()}
        script, output_file = temp / f"step-{step_id}.sh", temp / f"output-{step_id}"
        script.write_text(step["run"])
        output_file.write_text("")
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=repo,
                              env={**env, "GITHUB_OUTPUT": str(output_file), **step_env}, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
        outputs[step_id] = parse_output_file(output_file.read_text())
        results[step_id] = done
    wall = time.perf_counter() - start
    check = results["check"]
    # named: an error annotation for the kernel (the job summary has it too, Markdown-escaped)
    named = any(line.startswith("::error") and KERNEL in line for line in check.stdout.splitlines())
    expected = 0 if scenario == "rename" else 1
    ok = check.returncode == expected and (scenario == "rename" or named)
    line = (f"{'ok  ' if ok else 'MISS'} {scenario:9s} loaded: check step exit {check.returncode}, verdict "
            f"{outputs['check'].get('verdict') or '-'}, findings {outputs['check'].get('findings') or '-'} (job "
            f"{'fails' if check.returncode else 'passes'}), error annotation naming the kernel: "
            f"{'yes' if named else 'no'}, {wall:.1f} s")
    if not ok or args.verbose:
        line += "\n       " + (check.stdout + check.stderr)[-6000:].replace(
            "\n", "\n       ")
    return line


def run_block(repo: Path, base: str, load: str, runs: int, args: argparse.Namespace, tmp: Path) -> list[Run]:
    done = []
    for scenario in ("rename", "quadratic"):
        for i in range(runs):
            run = one_run(repo, base, scenario, load, i, args, tmp)
            print_run(run)
            no_growth = scenario == "quadratic" and not any(
                f["kind"] == "growth" and f.get("severity") == "error" for f in run.findings)
            if not run.on_target or (scenario == "rename" and run.findings) or no_growth:
                print_miss(run, args)
            done.append(run)
    return done


def table(results: list[Run], loads: list[str]) -> None:
    head = (f"{'scenario':10s} {'load':7s} {'runs':>4s} {'passes':>6s} {'failures':>8s} {'other':>5s} "
            f"{'kernel named':>12s} {'median wall/run':>15s} {'range wall':>13s} {'load avg':>8s}")
    print(head)
    print("-" * len(head))
    for load in loads:
        for scenario in ("rename", "quadratic"):
            rows = [r for r in results if r.scenario == scenario and r.load == load]
            if not rows:
                continue
            walls = [r.wall for r in rows]
            print(f"{scenario:10s} {load:7s} {len(rows):4d} {sum(r.status == 0 for r in rows):6d} "
                  f"{sum(r.status == 1 for r in rows):8d} {sum(r.status not in (0, 1) for r in rows):5d} "
                  f"{sum(r.named for r in rows):12d} {statistics.median(walls):13.1f} s "
                  f"{min(walls):5.1f}-{max(walls):5.1f} s {statistics.median(r.loadavg[0] for r in rows):8.2f}")


def ratio_spread(results: list[Run]) -> None:
    """The rename pair's predicted ratio at the target per run, and how often its 95% interval excludes 1."""
    for load in ("idle", "loaded"):
        rows = [r for r in results if r.scenario == "rename" and r.load == load and r.kernel.get("ratio")]
        if not rows:
            continue
        ratios = sorted(r.kernel["ratio"] for r in rows)
        above = sum((r.kernel.get("bound") or 0) > 1 for r in rows)
        below = sum((r.kernel.get("upper") or 2) < 1 for r in rows)
        print(f"rename {load}: candidate/baseline at the target {' '.join(f'{x:.3g}' for x in ratios)}; "
              f"95% interval above 1 in {above}, below 1 in {below} of {len(rows)} runs "
              f"(a prediction failure needs the lower bound above 1.1)")


def targets(results: list[Run], plan: dict[str, int]) -> bool:
    met = True
    for load in ("loaded", "idle"):
        if not plan[load]:
            continue
        for scenario in ("rename", "quadratic"):
            rows = [r for r in results if r.scenario == scenario and r.load == load]
            good = sum(r.on_target for r in rows)
            ok = len(rows) == plan[load] and good == plan[load]
            met &= ok
            want = ("passes (exit 0)" if scenario == "rename"
                    else "failures (exit 1) naming the kernel")
            print(f"{'PASS' if ok else 'FAIL'}: {scenario} pair, {load}: {good}/{plan[load]} {want}")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=1.0, help="the plugin's seconds per measurement (default 1)")
    parser.add_argument("--rounds", type=int, default=2, help="--rounds of the same-job check (default 2)")
    parser.add_argument("--runs", type=int, default=10, help="loaded runs per pair (default 10)")
    parser.add_argument("--idle-runs", type=int, default=3, help="idle runs per pair (default 3)")
    parser.add_argument("--quick", action="store_true", help="2 loaded and 1 idle run per pair")
    parser.add_argument("--load", type=int, default=os.cpu_count() or 2,
                        help="busy-loop processes during the loaded runs (default: one per core)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    parser.add_argument("--verbose", action="store_true", help="print the full output of runs that missed")
    parser.add_argument("--no-action", action="store_true", help="skip the Action's path")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.idle_runs = 2, 1
    tmp = Path(tempfile.mkdtemp(prefix="scalecheck-samejob-"))
    repo = tmp / "repo"
    results: list[Run] = []
    procs: list[subprocess.Popen] = []
    actions: list[str] = []
    action, skipped_action = (None, "skipped (--no-action)") if args.no_action else load_action()
    if action is not None and not args.runs:
        action, skipped_action = None, "skipped: it runs under load, and --runs is 0"
    began = time.perf_counter()
    try:
        base = build_repo(repo)
        print(f"repository {repo}: base {base[:7]}, branches rename and quadratic; kernel {KERNEL}")
        print(f"python {sys.version.split()[0]} ({sys.executable}); {os.cpu_count()} cores; "
              f"budget {args.budget:g} s, rounds {args.rounds}; load average before: "
              + " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
        if args.idle_runs:
            print(f"\n== idle: {args.idle_runs} run(s) per pair", flush=True)
            results += run_block(repo, base, "idle", args.idle_runs, args, tmp)
        if args.runs:
            print(f"\n== loaded: {args.runs} run(s) per pair", flush=True)
            try:
                start_busy_loops(args.load, procs)
                print(f"   busy loops started, pids {' '.join(str(p.pid) for p in procs)}", flush=True)
                time.sleep(5)  # let the load average begin to rise
                print("   load average at the start: " + " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
                results += run_block(repo, base, "loaded", args.runs, args, tmp)
                if action is not None:
                    for scenario in ("rename", "quadratic"):
                        actions.append(action_run(action, repo, base, scenario, args, tmp))
                        print("  action: " + actions[-1], flush=True)
                print("   load average at the end:   " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
                loaded = [r.loadavg[0] for r in results if r.load == "loaded"]
                print(f"   1-minute load average after each loaded run: min {min(loaded):.2f}, "
                      f"median {statistics.median(loaded):.2f}, max {max(loaded):.2f}")
            finally:
                stop_busy_loops(procs)
                if procs:
                    print(f"   busy loops {' '.join(str(p.pid) for p in procs)} stopped", flush=True)
        print(f"\nresults (budget {args.budget:g} s, rounds {args.rounds}; "
              f"total {time.perf_counter() - began:.0f} s):\n")
        table(results, ["idle", "loaded"])
        print("(passes: exit 0; failures: exit 1; other: any other exit status; kernel named: the check's own report "
              "names the kernel; load avg: median 1-minute load average at the end of each run)\n")
        ratio_spread(results)
        print()
        met = targets(results, {"loaded": args.runs, "idle": args.idle_runs})
        print("targets: all met" if met else "targets: missed (see the MISS lines and their findings above)")
        if actions:
            print("\nthe Action's path (action.yml's check step, scalecheck ci, run locally, input `command`, "
                  "under load), one run per pair:")
            for a in actions:
                print("  " + a)
        else:
            print(f"\nthe Action's path: {skipped_action}")
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        stop_busy_loops(procs)
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
