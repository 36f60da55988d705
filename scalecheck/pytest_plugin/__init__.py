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

import math
import re
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
    values: dict[tuple[float, ...], list[float]] = field(default_factory=dict)
    ran: set[str] = field(default_factory=set)


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

    def ready(self, config: pytest.Config) -> tuple[Settings, Recorder]:
        """The settings and the recorder, made on first use (this imports the modeling core)."""
        if self.settings is None or self.recorder is None:
            from scalecheck.pytest_plugin._scaling import Recorder

            self.settings = _settings(config, self.options)
            self.recorder = Recorder()
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
        "budget": _option(config, "budget", float, lambda v: v > 0 and math.isfinite(v), "a positive number of seconds"),
        "confidence": _option(config, "confidence", float, lambda v: 0.5 <= v < 1, "a number in [0.5, 1)"),
        "strict": _option(config, "strict", bool, lambda v: True, "true or false"),
        "seed": config.getoption("scalecheck_seed"),
    }
    save = config.getoption("scalecheck_save")
    path = None
    if save:
        path = Path(save)
        if not path.is_absolute():
            path = Path(config.invocation_params.dir) / path
        if not path.parent.is_dir():
            raise pytest.UsageError(f"--scalecheck-save {save}: folder {path.parent} does not exist; create it "
                                    "or choose another path")
        if path.is_dir():
            raise pytest.UsageError(f"--scalecheck-save {save} is a folder; give a file name such as "
                                    f"{Path(save) / 'scalecheck.json'}")
    config.stash[_STATE] = _State(path, hasattr(config, "workerinput"), options)


def _option(config: pytest.Config, name: str, kind: type, ok: Any, rule: str) -> Any:
    value = config.getoption(f"scalecheck_{name}")
    source = f"--scalecheck-{name}"
    if value is None:
        value = config.getini(f"scalecheck_{name}")
        source = f"ini option scalecheck_{name}"
        if value in (None, ""):
            return None
        if kind is float:
            try:
                value = float(value)
            except ValueError:
                raise pytest.UsageError(f"scalecheck: {source} = {value!r} must be {rule}") from None
    if not ok(value):
        raise pytest.UsageError(f"scalecheck: {source} = {value!r} must be {rule}")
    return value


def _settings(config: pytest.Config, options: dict[str, Any]) -> Settings:
    """Command line over ini over [tool.scalecheck] (pyproject.toml or scalecheck.toml) over the defaults."""
    from scalecheck.config import load_config
    from scalecheck.errors import ScalecheckError
    from scalecheck.pytest_plugin._scaling import Settings

    try:
        table = load_config(start=Path(config.rootpath))
    except ScalecheckError as err:
        raise pytest.UsageError(f"scalecheck: {err}") from None
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

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Name every test before any plugin renames it (xdist's loadgroup appends '@group' to node ids), and check
    the markers."""
    for item in items:
        marker = item.get_closest_marker("scalecheck")
        item.stash[_KERNEL] = item.nodeid if marker is None else _case(item, marker)[0]


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The groups of marker-form cases, after deselection (-k, -m, --lf): the last case of each asserts."""
    state = session.config.stash[_STATE]
    for item in session.items:
        marker = item.get_closest_marker("scalecheck")
        if marker is None:
            continue
        kernel, group = _case(item, marker)
        group = state.groups.setdefault(kernel, group)
        group.cases.append(item.nodeid)
        state.case_group[item.nodeid] = kernel


def _case(item: pytest.Item, marker: pytest.Mark) -> tuple[str, _Group]:
    """(kernel name, a fresh group) of a marker-form case; raises UsageError for a misused marker."""
    where = item.nodeid
    kwargs = dict(marker.kwargs)
    unknown = set(kwargs) - {"max", "param", "metric", "budget"}
    if marker.args or unknown:
        raise pytest.UsageError(f"{where}: write the marker as scalecheck(max='n log n', param='n'"
                                f"{', ...' if unknown else ''}), not with "
                                f"{', '.join(sorted(unknown)) or 'positional arguments'}")
    bound = kwargs.get("max")
    if not isinstance(bound, str):
        raise pytest.UsageError(f"{where}: scalecheck(max=...) must be a growth text such as 'n log n', "
                                f"not {bound!r}")
    param = kwargs.get("param", "n")
    names = (param,) if isinstance(param, str) else tuple(param) if isinstance(param, (list, tuple)) else ()
    if not names or not all(isinstance(n, str) for n in names):
        raise pytest.UsageError(f"{where}: scalecheck(param=...) must name the size parameter(s), not {param!r}")
    callspec = getattr(item, "callspec", None)
    params = dict(callspec.params) if callspec is not None else {}
    missing = [n for n in names if n not in params]
    if missing:
        raise pytest.UsageError(f"{where}: marked scalecheck(param={param!r}) but not parametrized over "
                                f"{', '.join(repr(n) for n in missing)}; add "
                                f"@pytest.mark.parametrize({missing[0]!r}, [...])")
    for n in names:
        value = params[n]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise pytest.UsageError(f"{where}: parameter {n!r} = {value!r} must be a positive size")
    try:
        from scalecheck.data.growth import parse_growth

        parse_growth(bound, names)
    except ValueError as err:
        raise pytest.UsageError(f"{where}: invalid bound {bound!r}: {err}") from None
    metric = kwargs.get("metric", "time")
    budget = kwargs.get("budget")
    if not isinstance(metric, str) or not metric:
        raise pytest.UsageError(f"{where}: scalecheck(metric=...) must be a name such as 'time', not {metric!r}")
    if budget is not None and not (isinstance(budget, (int, float)) and budget > 0):
        raise pytest.UsageError(f"{where}: scalecheck(budget=...) must be a positive number of seconds")
    others = sorted((k, v) for k, v in params.items() if k not in names)
    base = item.nodeid.split("[", 1)[0]
    kernel = base + (f"[{'-'.join(_id(v) for _, v in others)}]" if others else "")
    return kernel, _Group(kernel, bound, names, metric, budget)


def _id(value: object) -> str:
    text = str(value)
    return text if re.fullmatch(r"[\w.+-]{1,40}", text) else f"{zlib.crc32(repr(value).encode()):08x}"


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
