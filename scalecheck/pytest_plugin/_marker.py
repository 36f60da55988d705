"""The marker form: time one parametrized case's body; when the group's last case has run, assert the bound."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, cast

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
    params = item.callspec.params
    point = tuple(cast(float, params[name]) for name in group.parameters)  # checked at collection: positive numbers
    budget = (group.budget or settings.budget) / max(1, len(group.cases))
    try:
        values, seconds = measure_point(lambda: item.obj(**arguments), group.metric, budget,
                                        warm_up=not (group.kernel in recorder.measured and
                                                     recorder.measured[group.kernel].stopped))
    except MetricError as err:
        problem = str(err)
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
    if item.nodeid != group.cases[-1]:
        return
    elsewhere = [case for case in group.cases if case not in group.ran]
    if elsewhere:
        pytest.fail(f"scalecheck: {group.kernel}: {len(elsewhere)} of its {len(group.cases)} cases ran on another "
                    "pytest-xdist worker, so no worker saw the whole growth; run with --dist loadscope or "
                    "--dist loadfile", pytrace=False)
    if measured.stopped:  # over its budget: not judged (a warning; a failure under --scalecheck-strict)
        ScalingResult(group.kernel, None, measured, settings, group.budget or settings.budget).assert_no_worse_than(
            group.bound)
        return
    failed = len(group.cases) - len(measured.values)
    if len({p for p in measured.values}) < 3:
        pytest.fail(f"scalecheck: {group.kernel}: {len(measured.values)} case(s) measured"
                    f"{f' ({failed} failed)' if failed else ''}; asserting a growth needs at least 3 sizes (better 5)",
                    pytrace=False)
    result = ScalingResult(group.kernel, None, measured, settings, group.budget or settings.budget)
    result.assert_no_worse_than(group.bound)

