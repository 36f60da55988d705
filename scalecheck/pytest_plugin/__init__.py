"""L6: the pytest plugin (entry point `pytest11`): assert in tests how code scales, and save the measurements.

Two forms:

- the `scaling` fixture::

      def test_sort_scales(scaling):
          result = scaling.measure(sorted, n=scaling.sizes(1_000, 1_000_000), setup=random_list)
          result.assert_no_worse_than("n log n")

- the marker, for a test parametrized over the size: every case's body is timed (repeated within its share of
  the budget) and the growth over the cases is asserted when the last case has run::

      @pytest.mark.scalecheck(max="n log n", param="n")
      @pytest.mark.parametrize("n", [1_000, 2_000, 4_000, 8_000, 16_000, 32_000])
      def test_sort(n):
          sorted(random_list(n))

Loading the plugin costs nothing beyond this module: numpy, scipy and the modeling core are imported when a test
uses the fixture or the marker.

pytest-xdist: each worker measures its own tests; the workers send their measurements to the controller
(`workeroutput`), which writes the `--scalecheck-save` file once. The cases of a marker-form test must run on one
worker, which `--dist loadscope` and `--dist loadfile` guarantee (a test's cases share its module and class);
with `load` or `worksteal` a group split over workers fails with a message saying so. (`loadgroup` would need an
`xdist_group` mark on the cases, and pytest 9.2 broke that mark: pytest-xdist issue #1386.)
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from scalecheck.pytest_plugin._scaling import Recorder, Scaling, Settings

_HELP_MARKER = ("scalecheck(max, param='n', metric='time', budget=None): assert that this parametrized test's "
                "cost grows no faster than `max` (e.g. 'n log n') over the values of `param`")
_DEFAULT_BUDGET = 2.0


@dataclass
class _Group:
    """The cases of one marker-form test (same function, same values of the other parameters)."""

    kernel: str
    bound: str
    parameters: tuple[str, ...]
    metric: str
    budget: float | None
    cases: list[str] = field(default_factory=list)  # nodeids in run order; the last one asserts
    points: dict[str, tuple[float, ...]] = field(default_factory=dict)  # nodeid -> its sizes, one case per point
    reached: set[str] = field(default_factory=set)  # cases this process started (setup may have skipped them)
    ran: set[str] = field(default_factory=set)  # cases whose body ran here (to the end or to an error)


@dataclass
class _State:
    save: Path | None
    worker: bool
    options: dict[str, Any]
    settings: Settings | None = None
    recorder: Recorder | None = None
    groups: dict[str, _Group] = field(default_factory=dict)  # by kernel
    case_group: dict[str, str] = field(default_factory=dict)  # nodeid at collection -> kernel
    collected_from_workers: list[dict[str, Any]] = field(default_factory=list)
    problem: str = ""  # why the settings cannot be read: every test that uses the plugin fails with it

    def ready(self, config: pytest.Config) -> tuple[Settings, Recorder]:
        """The settings and the recorder, made on first use (this imports the modeling core). A broken
        [tool.scalecheck] fails each test that uses the plugin with one line; the other tests run."""
        if not self.problem and (self.settings is None or self.recorder is None):
            from scalecheck.errors import ScalecheckError
            from scalecheck.pytest_plugin._scaling import Recorder

            try:
                self.settings = _settings(config, self.options)
            except ScalecheckError as err:
                self.problem = f"scalecheck: {err}"
            self.recorder = Recorder()
        if self.problem or self.settings is None or self.recorder is None:
            pytest.fail(self.problem, pytrace=False)
        return self.settings, self.recorder


_STATE = pytest.StashKey[_State]()
_KERNEL = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("scalecheck", "scalecheck: assert how code scales")
    group.addoption("--scalecheck-budget", type=float, metavar="SECONDS", default=None,
                    help="seconds each measurement may take: the plugin picks sizes and repetitions to fit "
                         f"(ini: scalecheck_budget; default {_DEFAULT_BUDGET:g}); inconclusive evidence may take "
                         "up to two budgets more; a measurement past 3 budgets stops and is not judged (a warning)")
    group.addoption("--scalecheck-save", metavar="FILE", default=None,
                    help="write every measurement of the session to FILE in scalecheck's JSON format, for "
                         "`scalecheck check` (one file per set of parameter names: FILE, or FILE with the "
                         "names before its suffix when tests use several)")
    group.addoption("--scalecheck-confidence", type=float, metavar="LEVEL", default=None,
                    help="confidence a verdict needs (ini: scalecheck_confidence; default: [tool.scalecheck] "
                         "confidence, 0.95)")
    group.addoption("--scalecheck-strict", action="store_true", default=None,
                    help="fail a test whose evidence stays inconclusive, instead of passing it with a warning "
                         "(ini: scalecheck_strict)")
    group.addoption("--scalecheck-seed", type=int, metavar="N", default=None,
                    help="seed of the shuffled measuring order and of the bootstrap (default: [tool.scalecheck] "
                         "seed, 0)")
    parser.addini("scalecheck_budget", f"seconds per measurement (default {_DEFAULT_BUDGET:g})", default=None)
    parser.addini("scalecheck_confidence", "confidence a verdict needs (default 0.95)", default=None)
    parser.addini("scalecheck_strict", "fail inconclusive complexity assertions", type="bool", default=None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _HELP_MARKER)
    options = {
        "budget": _option(config, "budget", float, lambda v: v > 0 and math.isfinite(v), "a positive number of seconds",
                          f"{_DEFAULT_BUDGET:g}"),
        "confidence": _option(config, "confidence", float, lambda v: 0.5 <= v < 1, "a number in [0.5, 1)", "0.95"),
        "strict": _option(config, "strict", bool, lambda v: True, "true or false", "true"),
        "seed": config.getoption("scalecheck_seed"),
    }
    save = config.getoption("scalecheck_save")
    worker = hasattr(config, "workerinput")
    path = None if save is None else _save_path(save, Path(config.invocation_params.dir), check=not worker)
    config.stash[_STATE] = _State(path, worker, options)


def _save_path(save: str, start: Path, check: bool) -> Path:
    """The --scalecheck-save file, checked before any test runs (a long session must not end in 'cannot save')."""
    from scalecheck.text import visible

    shown = visible(save)
    if not save.strip():
        raise pytest.UsageError("--scalecheck-save is empty; fix: give a file name, e.g. --scalecheck-save "
                                "results.json (in CI: is the variable that names it set?)")
    path = Path(save)
    if not path.is_absolute():
        path = start / path
    if not check:
        return path
    if not path.parent.is_dir():
        raise pytest.UsageError(f"--scalecheck-save {shown}: folder {visible(str(path.parent))} does not exist; "
                                "fix: create it or choose another path")
    if path.is_dir():
        raise pytest.UsageError(f"--scalecheck-save {shown} is a folder; fix: give a file name such as "
                                f"{visible(str(Path(save) / 'scalecheck.json'))}")
    if path.exists() and not path.is_file():  # a device or a pipe would be replaced by the file, not written to
        raise pytest.UsageError(f"--scalecheck-save {shown} is not a regular file; fix: give a file name such as "
                                "results.json")
    try:  # the file is written atomically (a temporary file beside it, then a rename): the folder must take one
        handle, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise pytest.UsageError(f"--scalecheck-save {shown}: cannot write in folder {visible(str(path.parent))} "
                                f"({err.strerror}); fix: choose a folder you can write to") from None
    os.close(handle)
    os.unlink(probe)
    return path


def _option(config: pytest.Config, name: str, kind: type, ok: Any, rule: str, example: str) -> Any:
    """An option's value from the command line, else the ini file (None when neither gives it); a bad value stops
    the session before any test runs, since every test of the session would use it."""
    value = config.getoption(f"scalecheck_{name}")
    source, fix = f"--scalecheck-{name}", f"fix: give e.g. --scalecheck-{name}{'' if kind is bool else ' ' + example}"
    if value is None:
        source, fix = f"ini option scalecheck_{name}", f"fix: write e.g. scalecheck_{name} = {example}"
        try:
            value = config.getini(f"scalecheck_{name}")
        except ValueError as err:  # pytest's reading of a bool: "invalid truth value"
            raise pytest.UsageError(f"scalecheck: {source} must be {rule}: {err}; {fix}") from None
        if value in (None, ""):
            return None
        if kind is float:
            try:
                value = float(value)
            except ValueError:
                raise pytest.UsageError(f"scalecheck: {source} = {value!r} must be {rule}; {fix}") from None
    if not ok(value):
        raise pytest.UsageError(f"scalecheck: {source} = {value!r} must be {rule}; {fix}")
    return value


def _settings(config: pytest.Config, options: dict[str, Any]) -> Settings:
    """Command line over ini over [tool.scalecheck] (pyproject.toml or scalecheck.toml) over the defaults."""
    from scalecheck.config import load_config
    from scalecheck.pytest_plugin._scaling import Settings

    table = load_config(start=Path(config.rootpath))  # ScalecheckError: a broken [tool.scalecheck]
    return Settings(
        budget=options["budget"] if options["budget"] is not None else _DEFAULT_BUDGET,
        confidence=options["confidence"] if options["confidence"] is not None else table.confidence,
        resamples=table.bootstrap,
        seed=options["seed"] if options["seed"] is not None else table.seed,
        strict=bool(options["strict"]),
        fit=table.fit_options(),
    )


@pytest.fixture
def scaling(request: pytest.FixtureRequest) -> Scaling:
    """Measure how a function's cost grows with its input and assert a bound:
    `scaling.measure(func, n=scaling.sizes(1_000, 10**6), setup=make_input).assert_no_worse_than("n log n")`."""
    from scalecheck.pytest_plugin._scaling import Scaling

    state = request.config.stash[_STATE]
    settings, recorder = state.ready(request.config)
    return Scaling(request.node.stash.get(_KERNEL, request.node.nodeid), settings, recorder)


# --- the marker form ----------------------------------------------------------------------------------------------

_ARGUMENTS = ("max", "param", "metric", "budget")


@dataclass(frozen=True)
class _Case:
    """One marker-form case: its group's name and marker arguments, and its point (sizes in parameter order)."""

    kernel: str
    bound: str
    parameters: tuple[str, ...]
    param: object  # the marker's `param` as written, for messages
    metric: str
    budget: float | None
    point: tuple[float, ...]


class _Misuse(Exception):
    """A scalecheck marker written wrong: its case fails with this one line when it runs; other tests run."""

    def __init__(self, where: str, argument: str, problem: str, fix: str) -> None:
        from scalecheck.text import visible

        super().__init__(visible(f"scalecheck: {where}: scalecheck({argument}): {problem}; fix: {fix}"))


_CASE = pytest.StashKey[_Case]()
_PROBLEM = pytest.StashKey[str]()  # why a case's marker is misused: the case fails with it


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Name every test before any plugin renames it (xdist's loadgroup appends '@group' to node ids), and check
    the markers: a misused one fails its own case, and the other tests run as usual."""
    for item in items:
        item.stash[_KERNEL] = item.nodeid
        marker = item.get_closest_marker("scalecheck")
        if marker is None:
            continue
        try:
            case = _case(item, marker)
        except _Misuse as err:
            item.stash[_PROBLEM] = str(err)
        else:
            item.stash[_CASE] = case
            item.stash[_KERNEL] = case.kernel


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The groups of marker-form cases, after deselection (-k, -m, --lf): the last case of each asserts. A case
    skipped by a mark is left out, so that the last case is one that runs; a size given twice fails the repeat
    (its measurement would replace the first one's)."""
    state = session.config.stash[_STATE]
    for item in session.items:
        case = item.stash.get(_CASE, None)
        if case is None or _skipped_by_mark(item):
            continue
        group = state.groups.setdefault(case.kernel, _Group(case.kernel, case.bound, case.parameters, case.metric,
                                                            case.budget))
        first = next((nodeid for nodeid, point in group.points.items() if point == case.point), None)
        if first is not None:
            sizes = ", ".join(f"{name}={value!r}" for name, value in zip(case.parameters, case.point))
            item.stash[_PROBLEM] = str(_Misuse(item.nodeid, f"param={case.param!r}",
                                               f"{sizes} is given twice, also in {first}",
                                               "give each case its own size: remove the repeat from "
                                               "@pytest.mark.parametrize"))
            continue
        group.cases.append(item.nodeid)
        group.points[item.nodeid] = case.point
        state.case_group[item.nodeid] = case.kernel


def _skipped_by_mark(item: pytest.Item) -> bool:
    """Whether a skip or skipif mark skips `item` for sure (a condition given as a string is not evaluated)."""
    if item.get_closest_marker("skip") is not None:
        return True
    for mark in item.iter_markers("skipif"):
        conditions = mark.args if mark.args else ((mark.kwargs["condition"],) if "condition" in mark.kwargs else ())
        try:
            if not conditions or any(not isinstance(c, str) and bool(c) for c in conditions):
                return True
        except Exception:  # noqa: BLE001 - a condition without a truth value is left to pytest to report
            continue
    return False


def _case(item: pytest.Item, marker: pytest.Mark) -> _Case:
    """The case that a marker-form test item is; raises _Misuse naming the marker argument that is wrong."""
    from scalecheck.pytest_plugin._measure import shown, size_problem  # numpy: only for a marker's tests

    where = item.nodeid
    kwargs = dict(marker.kwargs)
    example = "write the marker as scalecheck(max='n log n', param='n')"
    if marker.args:
        raise _Misuse(where, ", ".join(shown(a) for a in marker.args), "positional arguments are not accepted",
                      example)
    for name in sorted(set(kwargs) - set(_ARGUMENTS)):
        close = difflib.get_close_matches(name, _ARGUMENTS, n=1)
        raise _Misuse(where, f"{name}={shown(kwargs[name])}", f"unknown argument '{name}'",
                      f"did you mean '{close[0]}'?" if close else f"the arguments are {', '.join(_ARGUMENTS)}")
    if "max" not in kwargs:
        raise _Misuse(where, ", ".join(f"{k}={shown(v)}" for k, v in kwargs.items()), "the bound max is missing",
                      example)
    bound = kwargs["max"]
    if not isinstance(bound, str):
        raise _Misuse(where, f"max={shown(bound)}", "the bound must be a growth text",
                      "write max='n log n' (or 'n', 'n^2', 'O(p log p)')")
    param = kwargs.get("param", "n")
    names = (param,) if isinstance(param, str) else tuple(param) if isinstance(param, (list, tuple)) else ()
    if not names or not all(isinstance(n, str) and n for n in names) or len(set(names)) < len(names):
        raise _Misuse(where, f"param={shown(param)}", "must name the size parameter(s), each once",
                      "write param='n', or param=('p', 'n') for several")
    callspec = getattr(item, "callspec", None)
    params = dict(callspec.params) if callspec is not None else {}
    missing = [n for n in names if n not in params]
    if missing:
        choices = f" or name one of its parameters: {', '.join(params)}" if params else ""
        raise _Misuse(where, f"param={param!r}", f"the test is not parametrized over "
                      f"{', '.join(repr(n) for n in missing)}",
                      f"add @pytest.mark.parametrize({missing[0]!r}, [...]){choices}")
    for n in names:
        problem = size_problem(params[n])
        if problem:
            raise _Misuse(where, f"param={param!r}", f"{n}={shown(params[n])} {problem}",
                          f"parametrize {n!r} over positive sizes, e.g. [1000, 2000, 4000, 8000, 16000]")
    try:
        from scalecheck.data.growth import parse_growth

        parse_growth(bound, names)
    except ValueError as err:
        problem, _, hint = str(err).rpartition("; ")
        if not hint.startswith(("write", "add")):
            problem, hint = str(err), f"write a growth in {', '.join(names)}, such as '{names[0]} log {names[0]}'"
        raise _Misuse(where, f"max={shown(bound)}", f"invalid bound: {problem}", hint) from None
    metric = kwargs.get("metric", "time")
    if not isinstance(metric, str) or not metric:
        raise _Misuse(where, f"metric={shown(metric)}", "must be a name",
                      "write metric='time', 'memory', or a name for the number the test returns")
    budget = kwargs.get("budget")
    if budget is not None and size_problem(budget):  # a positive finite number, as a size is
        raise _Misuse(where, f"budget={shown(budget)}", "must be a positive number of seconds",
                      "write budget=2.0, or leave it out for --scalecheck-budget")
    others = sorted((k, v) for k, v in params.items() if k not in names)
    base = item.nodeid.split("[", 1)[0]
    kernel = base + (f"[{'-'.join(_id(v) for _, v in others)}]" if others else "")
    return _Case(kernel, bound, names, param, metric, budget, tuple(params[n] for n in names))


def _id(value: object) -> str:
    text = str(value)
    return text if re.fullmatch(r"[\w.+-]{1,40}", text) else f"{zlib.crc32(repr(value).encode()):08x}"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    """Note that this process runs a marker-form case (setup may still skip it): the group's last case tells the
    cases skipped here from those another pytest-xdist worker ran."""
    state = item.config.stash.get(_STATE, None)
    if state is not None and item.nodeid in state.case_group:
        state.groups[state.case_group[item.nodeid]].reached.add(item.nodeid)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """A case whose marker is misused fails with its one-line message (and nothing else fails with it)."""
    problem = item.stash.get(_PROBLEM, None)
    if problem is not None:
        pytest.fail(problem, pytrace=False)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a marker-form case: time its body within its share of the budget; the last case asserts."""
    state = pyfuncitem.config.stash[_STATE]
    kernel = state.case_group.get(pyfuncitem.nodeid)
    if kernel is None:
        return None
    from scalecheck.pytest_plugin._marker import run_case

    settings, recorder = state.ready(pyfuncitem.config)
    run_case(pyfuncitem, state.groups[kernel], settings, recorder)
    return True


# --- saving -------------------------------------------------------------------------------------------------------

@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: keep the measurements a worker sends when it finishes."""
    state = node.config.stash[_STATE]
    output = getattr(node, "workeroutput", None) or {}
    state.collected_from_workers.extend(output.get("scalecheck", []))


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    records = state.recorder.records() if state.recorder is not None else []
    if state.worker:
        session.config.workeroutput["scalecheck"] = records  # type: ignore[attr-defined]
        return
    if state.save is None:
        return
    from scalecheck.pytest_plugin._save import save

    lines = save(state.save, records + state.collected_from_workers)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for line in lines:
        if reporter is not None:
            reporter.write_line(line)
    if any(line.startswith("scalecheck: cannot") for line in lines) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
