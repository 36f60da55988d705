"""The marker form: time one parametrized case's body; when the group's last case has run, assert the bound."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import pytest

from scalecheck.pytest_plugin._measure import OVER_BUDGET, Measured, MetricError, measure_point
from scalecheck.pytest_plugin._scaling import Recorder, ScalingResult, Settings

if TYPE_CHECKING:
    from scalecheck.pytest_plugin import _Group


def run_case(item: pytest.Function, group: _Group, settings: Settings, recorder: Recorder) -> None:
    """Measure `item`'s body at its point; assert the group's bound if it is the group's last case."""
    if inspect.iscoroutinefunction(item.obj):
        pytest.fail(f"scalecheck: {item.nodeid}: the scalecheck marker times plain functions, not coroutines",
                    pytrace=False)
    group.ran.add(item.nodeid)  # started here (a case that raises below counts as run, without a value)
    arguments = {name: item.funcargs[name] for name in item._fixtureinfo.argnames}
    point = group.points[item.nodeid]  # checked at collection: positive finite numbers, one case per point
    budget = (group.budget or settings.budget) / max(1, len(group.cases))
    last = item.nodeid == group.cases[-1]
    skipped: BaseException | None = None
    values: list[float] = []
    seconds = 0.0
    try:
        values, seconds = measure_point(lambda: item.obj(**arguments), group.metric, budget,
                                        warm_up=not (group.kernel in recorder.measured and
                                                     recorder.measured[group.kernel].stopped))
    except MetricError as err:
        problem = str(err)
    except pytest.skip.Exception as err:  # the body skipped: the case did not run; the last one still asserts
        group.ran.discard(item.nodeid)
        if not last:
            raise
        problem, skipped = "", err
    else:
        problem = ""
    if problem:
        pytest.fail(f"scalecheck: {item.nodeid}: {problem}", pytrace=False)
    measured = recorder.measured.get(group.kernel)
    if measured is None:
        measured = Measured(group.parameters, group.metric, {"time": "s", "memory": "B"}.get(group.metric, ""))
        recorder.add(group.kernel, measured)
    if values:
        measured.values[point] = values  # no rounds: each case is measured in one go (see measure_point)
    measured.seconds += seconds
    if seconds > OVER_BUDGET * budget and not measured.stopped:
        where = ", ".join(f"{name}={x:g}" for name, x in zip(group.parameters, point))
        measured.stopped = (f"{len(values)} repetition(s) of the case {where}, which alone took {seconds:.1f} s "
                            f"(its share of the budget: {budget:.2g} s)")
    if not last:
        return
    _assert_group(item, group, settings, measured)
    if skipped is not None:
        raise skipped


def _assert_group(item: pytest.Function, group: _Group, settings: Settings, measured: Measured) -> None:
    """The group's assertion, made by its last case: the bound over every case measured."""
    elsewhere = [case for case in group.cases if case not in group.reached and case != item.nodeid]
    if elsewhere:
        pytest.fail(f"scalecheck: {group.kernel}: {len(elsewhere)} of its {len(group.cases)} cases ran on another "
                    "pytest-xdist worker, so no worker saw the whole growth; run with --dist loadscope or "
                    "--dist loadfile", pytrace=False)
    if measured.stopped:  # over its budget: not judged (a warning; a failure under --scalecheck-strict)
        ScalingResult(group.kernel, None, measured, settings, group.budget or settings.budget).assert_no_worse_than(
            group.bound)
        return
    measured_cases = [case for case in group.cases if group.points[case] in measured.values]
    if len(measured_cases) < 3:
        failed = [case for case in group.cases if case in group.ran and case not in measured_cases]
        idle = [case for case in group.cases if case not in group.ran]  # skipped, or failed in setup
        why = ([f"{len(failed)} failed"] if failed else []) + ([f"{len(idle)} did not run"] if idle else [])
        counts = f" ({', '.join(why)})" if why else ""
        pytest.fail(f"scalecheck: {group.kernel}: {len(measured_cases)} of its {len(group.cases)} case(s) measured"
                    f"{counts}; asserting a growth needs at least 3 sizes (better 5)", pytrace=False)
    result = ScalingResult(group.kernel, None, measured, settings, group.budget or settings.budget)
    result.assert_no_worse_than(group.bound)

