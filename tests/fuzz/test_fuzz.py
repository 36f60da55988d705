"""The fuzzer as part of the suite: a fixed, seeded sample of mutated inputs through `scalecheck model`, `check`,
`cluster` and `overhead`; hostile names through every report of each (a failing check in GitHub mode); extreme
but finite numbers through the models, plots and reports of `model` and `check`.

Each family of mutations is its own test and runs all of its cases, then lists every kind of broken promise it
met (`oracle.problems`) with one replayable case each, so that a known fault cannot hide another. Run more cases
with `python benchmarks/fuzz.py --cases 20000 --seed N`.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .cases import FAMILIES, SEEDS, Case, InputFile, make_case
from .mutations import HOSTILE_NAMES
from .oracle import Problem, evidence, problems, run_case

SEED = 20240601
CASES_PER_FAMILY = 150  # 17 families: 2,550 cases, about 25 s on one idle core
SLOW = 10.0  # seconds: the slowest case takes 3 s on an idle core; the suite may share the machine (-n 2)

pytestmark = [pytest.mark.wall_clock]  # every case is timed (a slow case is a problem of its own)


def report(found: dict[str, list[tuple[Case, Problem]]], total: int) -> str:
    """Every kind of problem: how many cases had it, and the first case's replay, command, inputs and evidence."""
    lines = [f"{len(found)} kind(s) of problem in {total} case(s):"]
    for kind, hits in sorted(found.items(), key=lambda item: -len(item[1])):
        case, problem = hits[0]
        lines += [f"\n[{len(hits)} case(s)] {kind}", case.describe(), "  evidence:", evidence(problem.detail)]
    return "\n".join(lines)


def run_cases(cases: list[Case], folder: Path) -> dict[str, list[tuple[Case, Problem]]]:
    """Run every case (each in a folder of its own, removed afterwards) and group their problems by kind."""
    found: dict[str, list[tuple[Case, Problem]]] = defaultdict(list)
    for case in cases:
        where = folder / str(case.index)
        outcome = run_case(case, where)
        for problem in problems(case, where, outcome, slow=SLOW):
            found[problem.kind].append((case, problem))
        shutil.rmtree(where, ignore_errors=True)
    return found


@pytest.mark.parametrize("family", FAMILIES)
def test_mutated_inputs_keep_the_command_line_promises(family: str, tmp_path: Path) -> None:
    start = FAMILIES.index(family)
    cases = [make_case(SEED, index) for index in range(start, start + CASES_PER_FAMILY * len(FAMILIES),
                                                         len(FAMILIES))]
    found = run_cases(cases, tmp_path)
    if found:
        pytest.fail(report(found, len(cases)), pytrace=False)


def regression_pair(name: str) -> tuple[bytes, bytes]:
    """Scalecheck JSON of a baseline in which kernel `name` grows as p and a candidate in which it grows as p^2
    (seeded noise of 1%), plus a steady kernel: a check fails with growth and prediction findings on `name`."""
    rng = np.random.default_rng(SEED)
    sizes = [2, 4, 8, 16, 32, 64]

    def document(grow: str) -> bytes:
        measurements = []
        for p in sizes:
            for kernel, value in ((name, 1 + (0.05 * p if grow == "linear" else 0.01 * p * p)), ("steady", 2.0)):
                values = (value * (1 + rng.uniform(-0.01, 0.01, 5))).round(6).tolist()
                measurements.append({"kernel": kernel, "metric": "time", "point": {"p": p}, "values": values})
        return json.dumps({"scalecheck": 1, "parameters": ["p"], "measurements": measurements}).encode()

    return document("quadratic"), document("linear")


def hostile_case(command: str, name: str) -> Case:
    """A run of `command` in which `name` is a kernel (`model`, and `check` of the regression pair in GitHub mode),
    a process and a function (`cluster`) or a source location (`overhead`), with every report written."""
    replay = f"python -m pytest tests/fuzz/test_fuzz.py -k hostile_name (command {command}, name {name!r})"
    made = f"hostile_case({command!r}, {name!r})"
    if command in ("model", "check"):
        candidate, baseline = regression_pair(name)
        inputs = [InputFile("CANDIDATE", "candidate.json", made, candidate)]
        if command == "model":
            args = ["model", "{CANDIDATE}", "--json", "{out:models.json}", "--html", "{out:models.html}",
                    "--max-plots", "0"]
        else:
            inputs.append(InputFile("BASELINE", "baseline.json", made, baseline))
            args = ["check", "{CANDIDATE}", "--baseline", "{BASELINE}", "--json", "{out:check.json}",
                    "--markdown", "{out:comment.md}"]
    elif command == "cluster":
        processes = [{"id": name, "paths": [f"main->{name}->MPI_Send", "main->solve"]},
                     {"id": "rank 1", "paths": ["main->solve->MPI_Recv"]}, {"id": "rank 2", "paths": ["main->solve"]}]
        inputs = [InputFile("FILE", "processes.jsonl", made,
                            "".join(json.dumps(p) + "\n" for p in processes).encode())]
        args = ["cluster", "{FILE}", "--json", "{out:groups.json}", "--dot", "{out:lattice.dot}"]
    else:
        events = (SEEDS / "overhead_events.jsonl").read_text(encoding="utf-8").replace(
            json.dumps("msg_stuff.cpp:364"), json.dumps(name))
        inputs = [InputFile("CALIBRATION", "calibration.jsonl", "tests/fuzz/seeds/overhead_calibration.jsonl",
                            (SEEDS / "overhead_calibration.jsonl").read_bytes()),
                  InputFile("EVENTS", "events.jsonl", made, events.encode("utf-8", "surrogatepass"))]
        args = ["overhead", "--calibration", "{CALIBRATION}", "{EVENTS}", "--json", "{out:overhead.json}"]
    outputs = tuple(arg[5:-1] for arg in args if arg.startswith("{out:"))
    return Case(seed=SEED, index=0, family="hostile name", command=command, inputs=tuple(inputs), args=tuple(args),
                outputs=outputs, github=command == "check", replay=replay)


Point = Callable[[dict[str, float]], float]  # a kernel's value at a point


def _along_p(sizes: list[float], value: Callable[[float], float]) -> tuple[list[dict[str, float]], Point]:
    return [{"p": p} for p in sizes], lambda point: value(point["p"])


SIZES = [2, 4, 8, 16, 32, 64]
# two parameters on a 3 x 3 grid (Extra-P's extended2.jsonl), one point at the largest double
GRID = [{"x": x, "y": 1.7976931348623157e308 if (x, y) == (2, 1) else y} for x in (1, 2, 3) for y in (1, 2, 3)]
# Valid files with extreme but finite numbers, to reach the models, the plots and the JSON: (points, value at point).
EXTREMES = {
    "huge values": _along_p(SIZES, lambda p: 1e307 * (1 + 0.1 * np.log2(p))),
    "subnormal values": _along_p(SIZES, lambda p: 1e-320 * p),
    "huge and tiny values": _along_p(SIZES, lambda p: 1e300 if p % 8 else 1e-300),
    "zero values": _along_p(SIZES, lambda p: 0.0),
    "constant values": _along_p(SIZES, lambda p: 2.0),
    "huge sizes": _along_p([1e300, 2e300, 4e300, 8e300, 1.6e301, 3.2e301], lambda p: 1 + p / 1e300),
    "tiny sizes": _along_p([1e-300, 2e-300, 4e-300, 8e-300, 1.6e-299, 3.2e-299], lambda p: 1 + p * 1e300),
    "growth to overflow": _along_p([1e10, 1e15, 1e20, 1e25, 1e30, 2e30], lambda p: p ** 10 / 1e10),
    "one size": _along_p([8], lambda p: 3.0),
    "huge target": _along_p(SIZES, lambda p: 1 + 0.5 * p),
    "huge second parameter": (GRID, lambda point: 3 * point["x"] + min(point["y"], 3)),
}


def extreme_case(command: str, pattern: str) -> Case:
    """`model` or `check` (GitHub mode, against the same numbers halved) of a kernel with `pattern`'s numbers,
    with --json, --html with a plot, and (check) --markdown."""
    points, function = EXTREMES[pattern]
    rng = np.random.default_rng(SEED)

    def document(scale: float) -> bytes:
        measurements = [{"kernel": "solve", "metric": "time", "point": point,
                         "values": [float(function(point)) * scale * (1 + 1e-3 * rng.standard_normal())
                                    for _ in range(5)]} for point in points]
        return json.dumps({"scalecheck": 1, "parameters": list(points[0]), "measurements": measurements}).encode()

    made = f"extreme_case({command!r}, {pattern!r})"
    inputs = [InputFile("CANDIDATE", "candidate.json", made, document(1.0))]
    args = [command, "{CANDIDATE}"]
    if command == "check":
        inputs.append(InputFile("BASELINE", "baseline.json", made, document(0.5)))
        args += ["--baseline", "{BASELINE}", "--markdown", "{out:comment.md}"]
    args += ["--json", f"{{out:{command}.json}}", "--html", f"{{out:{command}.html}}", "--max-plots", "1"]
    if pattern == "huge target":
        args += ["--target", "p=1e308"]
    outputs = tuple(arg[5:-1] for arg in args if arg.startswith("{out:"))
    return Case(seed=SEED, index=0, family="extreme values", command=command, inputs=tuple(inputs),
                args=tuple(args), outputs=outputs, github=command == "check",
                replay=f"python -m pytest tests/fuzz/test_fuzz.py -k extreme (command {command}, {pattern})")


def _problems_of(case: Case) -> list[Problem]:
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder) / "case"
        return problems(case, where, run_case(case, where), slow=SLOW)


def test_regression_pair_fails_the_check_with_annotations() -> None:
    """The pair that carries the hostile names does reach the annotations: exit 1, two error annotations."""
    case = hostile_case("check", "solve")
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder) / "case"
        outcome = run_case(case, where)
        assert problems(case, where, outcome) == []
    assert outcome.status == 1
    annotations = [line for line in outcome.stdout.splitlines() if line.startswith("::error ")]
    assert [line.split("::")[1] for line in annotations] == ["error title=scalecheck growth%3A solve",
                                                              "error title=scalecheck prediction%3A solve"]


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=[ascii(name)[1:-1][:40] for name in HOSTILE_NAMES])
@pytest.mark.parametrize("command", ["model", "check", "cluster", "overhead"])
def test_hostile_name_through_every_report(command: str, name: str) -> None:
    case = hostile_case(command, name)
    found = _problems_of(case)
    if found:
        pytest.fail(report({p.kind: [(case, p)] for p in found}, 1), pytrace=False)


@pytest.mark.parametrize("pattern", EXTREMES)
@pytest.mark.parametrize("command", ["model", "check"])
def test_extreme_values_through_models_plots_and_reports(command: str, pattern: str) -> None:
    case = extreme_case(command, pattern)
    found = _problems_of(case)
    if found:
        pytest.fail(report({p.kind: [(case, p)] for p in found}, 1), pytrace=False)


@settings(max_examples=25, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(name=st.one_of(
    st.text(st.characters(codec=None, exclude_categories=()), min_size=1, max_size=24),
    st.builds(lambda head, hostile, tail: head + hostile + tail, st.text(max_size=4), st.sampled_from(HOSTILE_NAMES),
              st.text(max_size=4))))
def test_any_kernel_name_through_a_failing_check(name: str) -> None:
    case = hostile_case("check", name)
    found = _problems_of(case)
    if found:
        pytest.fail(report({p.kind: [(case, p)] for p in found}, 1), pytrace=False)
