"""The pytest plugin end to end, through pytester: fixture and marker forms, messages, saving, xdist, JUnit."""

from __future__ import annotations

import json
import os
import platform
import textwrap
from importlib import metadata

import numpy as np
import numpy.fft  # noqa: F401  (in-process pytester runs drop modules first imported inside them, and numpy's
import pytest     # compiled parts cannot load twice: everything the plugin imports is imported here first)
import scipy.special  # noqa: F401
import scipy.stats  # noqa: F401

import scalecheck.pytest_plugin._marker  # noqa: F401
import scalecheck.pytest_plugin._save  # noqa: F401
from scalecheck.formats import read_many

pytest_plugins = ["pytester"]

# deterministic work counts keep these tests fast and exact; one timed test checks the clock path
COUNTS = """
import pytest

def linear(n):
    return 3 * n + 7

def quadratic(n):
    return n * n // 2

def n_log_n(n):
    return n * n.bit_length()
"""


def _plugin() -> list[str]:
    """Load the plugin by its entry point when installed (pip install .), else by module name."""
    names = {ep.name for ep in metadata.entry_points(group="pytest11")}
    return [] if "scalecheck" in names else ["-p", "scalecheck.pytest_plugin"]


def run(pytester: pytest.Pytester, *args: str, subprocess: bool = False) -> pytest.RunResult:
    runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    return runner(*_plugin(), "-p", "no:cacheprovider", "--scalecheck-budget", "0.3", *args)


def test_fixture_passes_within_the_bound(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(COUNTS + """
def test_linear(scaling):
    result = scaling.measure(linear, n=scaling.sizes(10, 100_000), metric="operations")
    check = result.assert_no_worse_than("n")
    assert check.outcome == "within"
    assert result.measured.exact

def test_loose_bound(scaling):
    scaling.measure(n_log_n, n=[16, 64, 256, 1024, 4096, 16384], metric="operations").assert_no_worse_than("O(n^2)")
""")
    result = run(pytester)
    result.assert_outcomes(passed=2)


def test_fixture_fails_with_model_bound_and_points(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(COUNTS + """
def test_quadratic(scaling):
    scaling.measure(quadratic, n=scaling.sizes(10, 10_000), metric="operations").assert_no_worse_than("n log n")
""")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "scalecheck: test_fixture_fails_with_model_bound_and_points.py::test_quadratic grows as n^2, faster than "
        "the bound n log n",
        "  model: operations = * n^2*",
        "  evidence: no model within n log n fits as well (p = *",
        "  measured:          n    operations  reps",
        "                    10            50     2",
    ])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.wall_clock
def test_timed_quadratic_fails_and_linear_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
def front_inserts(data):
    out = []
    for x in data:
        out.insert(0, x)
    return out

def test_quadratic(scaling):
    result = scaling.measure(front_inserts, n=scaling.sizes(500, 64_000), setup=lambda n: list(range(n)))
    result.assert_no_worse_than("n")

def test_linear(scaling):
    result = scaling.measure(lambda data: [x + 1 for x in data], n=scaling.sizes(1_000, 64_000),
                             setup=lambda n: list(range(n)))
    result.assert_no_worse_than("n^2")
""")
    result = run(pytester, "--scalecheck-budget", "1")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*test_quadratic grows as n^*, faster than the bound n",
                                 "  model: time (s) = * n^*(median of * repetitions per size)"])


def test_marker_form(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(COUNTS + """
SIZES = [16, 32, 64, 128, 256, 512, 1024]

@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", SIZES)
def test_linear(n):
    return linear(n)

@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", SIZES)
def test_quadratic(n):
    return quadratic(n)

@pytest.mark.scalecheck(max="n log n", param="n", metric="operations")
@pytest.mark.parametrize("kind", ["a", "b"])
@pytest.mark.parametrize("n", SIZES)
def test_grouped(n, kind):
    return n_log_n(n) if kind == "a" else linear(n)
""")
    result = run(pytester, "-v")
    result.assert_outcomes(passed=27, failed=1)
    result.stdout.fnmatch_lines(["*test_quadratic?1024? FAILED*"])
    result.stdout.fnmatch_lines(["scalecheck: test_marker_form.py::test_quadratic grows as n^2, faster than the "
                                 "bound n"])


@pytest.mark.wall_clock
def test_marker_times_the_body(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
import pytest

@pytest.mark.scalecheck(max="n^2", param="n")
@pytest.mark.parametrize("n", [1000, 2000, 4000, 8000, 16000])
def test_sum(n):
    sum(range(n))
""")
    run(pytester).assert_outcomes(passed=5)


def _messages(result: pytest.RunResult) -> list[str]:
    """The plugin's one-line messages in the output (each failure's, in the order pytest reports them)."""
    return [line for line in result.stdout.lines if line.startswith("scalecheck: ")]


MISUSED = {  # marker arguments -> the problem and fix its cases fail with
    "bound": ('max="n lg n"', "scalecheck(max='n lg n'): invalid bound: cannot read 'n lg n': unknown word 'lg'; "
                              "fix: write a growth such as 'p log p', 'n^2' or 'O(n log n)'"),
    "parameter": ('max="m^2"', "scalecheck(max='m^2'): invalid bound: cannot read 'm^2': unknown parameter 'm'; the "
                               "parameters are n; fix: write a growth in n, such as 'n log n'"),
    "not_parametrized": ('max="n", param="size"', "scalecheck(param='size'): the test is not parametrized over "
                                                  "'size'; fix: add @pytest.mark.parametrize('size', [...]) or name "
                                                  "one of its parameters: n"),
    "positional": ('"n"', "scalecheck('n'): positional arguments are not accepted; fix: write the marker as "
                          "scalecheck(max='n log n', param='n')"),
    "unknown": ('max="n", parm="n"', "scalecheck(parm='n'): unknown argument 'parm'; fix: did you mean 'param'?"),
    "no_bound": ('param="n"', "scalecheck(param='n'): the bound max is missing; fix: write the marker as "
                              "scalecheck(max='n log n', param='n')"),
    "bound_type": ("max=2", "scalecheck(max=2): the bound must be a growth text; fix: write max='n log n' (or 'n', "
                            "'n^2', 'O(p log p)')"),
    "param_type": ('max="n", param=["n", "n"]', "scalecheck(param=['n', 'n']): must name the size parameter(s), each "
                                                "once; fix: write param='n', or param=('p', 'n') for several"),
    "budget": ('max="n", budget=float("inf")', "scalecheck(budget=inf): must be a positive number of seconds; fix: "
                                               "write budget=2.0, or leave it out for --scalecheck-budget"),
    "metric": ('max="n", metric=""', "scalecheck(metric=''): must be a name; fix: write metric='time', 'memory', or "
                                     "a name for the number the test returns"),
}


def test_marker_misuse_fails_its_cases_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad=COUNTS + "".join(f"""
@pytest.mark.scalecheck({marker})
@pytest.mark.parametrize("n", [16, 32])
def test_{name}(n):
    pass
""" for name, (marker, _) in MISUSED.items()) + """
@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [16, 32, 64])
def test_good(n):
    return linear(n)

def test_unrelated():
    pass
""")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=2 * len(MISUSED), passed=4)
    assert _messages(result) == [f"scalecheck: test_bad.py::test_{name}[{n}]: {message}"
                                 for name, (_, message) in MISUSED.items() for n in (16, 32)]
    assert "Traceback" not in result.stdout.str() and not result.stderr.lines


BAD_SIZES = {  # a size -> what is wrong with it
    "zero": ("0", "n=0 is not a positive size"),
    "negative": ("-5", "n=-5 is not a positive size"),
    "nan": ('float("nan")', "n=nan is not a positive size"),
    "huge": ("10**400", "n=<an integer of about 401 digits> is too large (sizes are floats, at most about 1.8e308)"),
    "text": ('"big"', "n='big' is not a number"),
}


def test_marker_bad_size_fails_that_case_and_the_others_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sizes=COUNTS + "".join(f"""
@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [{size}, 10, 20, 40])
def test_{name}(n):
    return linear(n)
""" for name, (size, _) in BAD_SIZES.items()) + """
def test_unrelated():
    pass
""")
    result = run(pytester, "-v")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=len(BAD_SIZES), passed=3 * len(BAD_SIZES) + 1)  # the other sizes: measured, asserted
    result.stdout.fnmatch_lines([f"*::test_{name}?40? PASSED*" for name in BAD_SIZES], consecutive=False)
    ids = {"zero": "0", "negative": "-5", "nan": "nan", "huge": "1" + "0" * 400, "text": "big"}
    assert _messages(result) == [f"scalecheck: test_sizes.py::test_{name}[{ids[name]}]: scalecheck(param='n'): "
                                 f"{problem}; fix: parametrize 'n' over positive sizes, e.g. [1000, 2000, 4000, 8000, "
                                 "16000]" for name, (_, problem) in BAD_SIZES.items()]


def test_marker_repeated_size_fails_the_repeat_and_counts_honestly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_repeat=COUNTS + """
@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [10, 10, 20])
def test_two_sizes(n):
    return linear(n)

@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [10, 20, 20, 40])
def test_three_sizes(n):
    return linear(n)
""")
    result = run(pytester, "-v")
    result.assert_outcomes(failed=3, passed=4)
    result.stdout.fnmatch_lines(["*::test_three_sizes?40? PASSED*"])
    fix = "fix: give each case its own size: remove the repeat from @pytest.mark.parametrize"
    assert _messages(result) == [
        "scalecheck: test_repeat.py::test_two_sizes[10_1]: scalecheck(param='n'): n=10 is given twice, also in "
        f"test_repeat.py::test_two_sizes[10_0]; {fix}",
        "scalecheck: test_repeat.py::test_two_sizes: 2 of its 2 case(s) measured; asserting a growth needs at least "
        "3 sizes (better 5)",
        "scalecheck: test_repeat.py::test_three_sizes[20_1]: scalecheck(param='n'): n=20 is given twice, also in "
        f"test_repeat.py::test_three_sizes[20_0]; {fix}",
    ]


def test_marker_counts_failed_and_skipped_cases(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_counts=COUNTS + """
@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [10, 20, 40, 80])
def test_broken(n):
    if n == 20:
        raise RuntimeError("broken at 20")
    if n == 40:
        pytest.skip("not at 40")
    return linear(n)
""")
    result = run(pytester)
    result.assert_outcomes(failed=2, passed=1, skipped=1)
    result.stdout.fnmatch_lines(["scalecheck: test_counts.py::test_broken: 2 of its 4 case(s) measured (1 failed, 1 "
                                 "did not run); asserting a growth needs at least 3 sizes (better 5)"])


def test_marker_case_skipped_by_a_mark_is_left_out(pytester: pytest.Pytester) -> None:
    # a skipped last case must not leave the group unjudged, nor a skipped case pass for another worker's
    pytester.makepyfile(test_skips=COUNTS + """
SIZES = [16, 32, 64, 128, 256]

@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", SIZES + [pytest.param(512, marks=pytest.mark.skip)])
def test_quadratic_last_skipped(n):
    return quadratic(n)

@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [16, 32, pytest.param(48, marks=pytest.mark.skipif(True, reason="no")), 64, 128])
def test_linear_middle_skipped(n):
    return linear(n)

@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", SIZES)
def test_quadratic_skips_in_its_last_body(n):
    if n == SIZES[-1]:
        pytest.skip("the largest size is skipped")
    return quadratic(n)
""")
    result = run(pytester, "-v")
    result.assert_outcomes(failed=2, passed=12, skipped=2)
    result.stdout.fnmatch_lines(["*::test_quadratic_last_skipped?256? FAILED*",
                                 "*::test_linear_middle_skipped?128? PASSED*",
                                 "*::test_quadratic_skips_in_its_last_body?256? FAILED*"], consecutive=False)
    result.stdout.fnmatch_lines(["scalecheck: test_skips.py::test_quadratic_last_skipped grows as n^2, faster than "
                                 "the bound n"])
    assert "pytest-xdist" not in result.stdout.str()


def test_broken_settings_fail_the_plugins_tests_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject="[tool.scalecheck]\nconfidnce = 0.9\n")
    pytester.makepyfile(test_settings=COUNTS + """
def test_fixture(scaling):
    pass

@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [10, 20, 40])
def test_marked(n):
    return linear(n)

def test_unrelated():
    pass
""")
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=3, errors=1)
    message = (f"scalecheck: {pytester.path / 'pyproject.toml'}:2: [tool.scalecheck]: unknown key 'confidnce'; fix: "
               "the keys here are measurements, format, scaling, store, data_branch, target, metrics, kernels, "
               "aggregate, segmentation, search, gate, expectations")
    assert _messages(result) == [message] * 4  # the fixture's setup error, then the three cases
    assert "Traceback" not in result.stdout.str() and "UsageError" not in result.stdout.str()


def test_invalid_bound_in_a_test_fails_it_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(COUNTS + """
def test_it(scaling):
    scaling.measure(linear, n=[10, 20, 40, 80, 160], metric="operations").assert_no_worse_than("n^3/2")
""")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["scalecheck: invalid bound 'n^3/2': cannot read 'n^3/2': 'n^3/2' is ambiguous; write "
                                 "'n^(3/2)' for a fractional exponent"])
    assert "During handling" not in result.stdout.str() and "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(("call", "message"), [
    ("scaling.measure(linear)", "scalecheck: measure() needs at least one parameter, e.g. "
                                "n=scaling.sizes(1_000, 1_000_000)"),
    ("scaling.measure(linear, n=scaling.sizes(5, 8))", "scalecheck: sizes(5, 8) holds only 4 whole numbers; a model "
                                                       "needs 5 sizes: widen the range"),
    ("scaling.measure(linear, n=[1, 1, 2])", "scalecheck: n=[1, 1, 2] has 2 distinct size(s); a model needs at "
                                             "least 3 (better 5)"),
    ("scaling.measure(lambda n: None, n=[1, 2, 3], metric='ops')",
     "scalecheck: test_measure_misuse.py::test_it: metric 'ops' is the number the function returns, but it "
     "returned None: return the count to model, or measure metric='time'"),
    ("scaling.sizes(1, 10**5000)", "scalecheck: sizes(1, <an integer of about 5001 digits>): high is too large "
                                   "(sizes are floats, at most about 1.8e308)"),
    ("scaling.sizes(1, 100, count='8')", "scalecheck: sizes(..., count='8') needs a whole number from 5 (a model "
                                         "needs 5 sizes) to 100"),
    ("scaling.sizes(1, 10**6, count=10**9)", "scalecheck: sizes(..., count=1000000000) needs a whole number from 5 (a "
                                             "model needs 5 sizes) to 100"),
    ("scaling.measure(linear, n=[1, 2, 10**400])", "scalecheck: n=[1, 2, <an integer of about 401 digits>]: every "
                                                   "size must be a positive number, not <an integer of about 401 "
                                                   "digits>"),
    ("scaling.measure(linear, n=[1, 2, 3], metric='ops').assert_no_worse_than(2)",
     "scalecheck: assert_no_worse_than(bound) needs a growth text such as 'n log n', not 2"),
])
def test_measure_misuse(pytester: pytest.Pytester, call: str, message: str) -> None:
    pytester.makepyfile(test_measure_misuse=COUNTS + f"""
def test_it(scaling):
    {call}
""")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    assert _messages(result) == [message]
    assert "Traceback" not in result.stdout.str()


def test_save_writes_every_measurement(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_saved=COUNTS + """
def test_a(scaling):
    scaling.measure(linear, n=[10, 20, 40, 80, 160], metric="operations")

def test_b(scaling):
    scaling.measure(quadratic, n=[10, 20, 40, 80, 160], metric="operations", name="quad")
    scaling.measure(lambda p, n: p * n, p=[1, 2, 4], n=[10, 20, 40], metric="operations")

@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [10, 20, 40])
def test_c(n):
    return linear(n)
""")
    result = run(pytester, "--scalecheck-save", "out/results.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # the folder does not exist
    result.stderr.fnmatch_lines(["ERROR: --scalecheck-save out/results.json: folder * does not exist; fix: create it "
                                 "or choose another path"])
    (pytester.path / "out").mkdir()
    result = run(pytester, "--scalecheck-save", "out/results.json")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines([
        "scalecheck: saved 13 measurements of 3 test(s) over n to *results.json",
        "scalecheck: saved 9 measurements of 1 test(s) over p, n to *results.p-n.json",
    ])
    run_ = read_many([pytester.path / "out" / "results.json"])
    kernels = {s.kernel: s for s in run_.series}
    assert sorted(kernels) == ["test_saved.py::test_a", "test_saved.py::test_b::quad", "test_saved.py::test_c"]
    series = kernels["test_saved.py::test_b::quad"]
    assert series.metric == "operations"
    assert series.points[:, 0].tolist() == [10, 20, 40, 80, 160]
    assert series.values[:, 0].tolist() == [50, 200, 800, 3200, 12800]
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    assert data["meta"]["source"] == "pytest"


@pytest.mark.wall_clock
def test_save_writes_the_rounds_of_timed_values(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_rounds="""
import pytest

def test_timed(scaling):
    scaling.measure(sum, n=scaling.sizes(100, 10_000), setup=lambda n: list(range(n)))

@pytest.mark.scalecheck(max="n", param="n")
@pytest.mark.parametrize("n", [100, 200, 400])
def test_marked(n):
    sum(range(n))
""")
    result = run(pytester, "--scalecheck-save", "results.json")
    result.assert_outcomes(passed=4)
    data = json.loads((pytester.path / "results.json").read_text())
    timed = [r for r in data["measurements"] if r["kernel"] == "test_rounds.py::test_timed"]
    assert timed and all(len(r["rounds"]) == len(r["values"]) for r in timed)
    series = {s.kernel: s for s in read_many([pytester.path / "results.json"]).series}
    read = series["test_rounds.py::test_timed"]
    assert read.rounds is not None and read.round_count >= 5
    assert np.array_equal(np.isnan(read.rounds), np.isnan(read.values))
    rounds = read.rounds[~np.isnan(read.rounds)]
    assert rounds.min() >= 0 and set(rounds.tolist()) == set(range(int(rounds.min()), int(rounds.max()) + 1))
    assert series["test_rounds.py::test_marked"].rounds is None  # one case at a time: no rounds across cases


@pytest.mark.wall_clock
def test_a_slow_function_stops_over_its_budget(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_slow="""
import time

def test_slow(scaling):
    result = scaling.measure(lambda n: time.sleep(0.2), n=scaling.sizes(1_000, 10**6), budget=0.05)
    assert result.assert_no_worse_than("n") is None
    assert result.measured.seconds < 1.0
""")
    result = run(pytester)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*ScalingInconclusiveWarning: scalecheck: test_slow.py::test_slow: bound n not judged: "
                                 "measuring took 0.* s, more than 3x the budget of 0.05 s, and stopped after the first "
                                 "call, at the smallest size; raise the budget (--scalecheck-budget SECONDS, or "
                                 "budget=SECONDS) or lower the sizes"])
    run(pytester, "--scalecheck-strict").assert_outcomes(failed=1)


def test_save_writes_the_machine_fingerprint_with_python(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_saved=COUNTS + """
def test_a(scaling):
    scaling.measure(linear, n=[10, 20, 40, 80, 160], metric="operations")
""")
    result = run(pytester, "--scalecheck-save", "results.json")
    result.assert_outcomes(passed=1)
    meta = json.loads((pytester.path / "results.json").read_text())["meta"]
    assert meta["source"] == "pytest"
    machine = meta["machine"]
    assert isinstance(machine, dict) and {"cpu", "cores", "os", "host", "python"} <= set(machine)
    assert machine["python"] == f"{platform.python_implementation()} {platform.python_version()}"
    assert "python" not in meta  # named in the fingerprint already


def test_save_uses_the_users_machine_name(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCALECHECK_MACHINE", "perf-box-1")
    pytester.makepyfile(test_saved=COUNTS + """
def test_a(scaling):
    scaling.measure(linear, n=[10, 20, 40, 80, 160], metric="operations")
""")
    run(pytester, "--scalecheck-save", "results.json").assert_outcomes(passed=1)
    meta = json.loads((pytester.path / "results.json").read_text())["meta"]
    assert meta == {"source": "pytest", "machine": "perf-box-1", "python": platform.python_version()}


def test_without_the_fixtures_numpy_is_not_imported(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
import sys

def test_plain():
    assert "numpy" not in sys.modules
    assert "scalecheck.pytest_plugin" in sys.modules
""")
    result = run(pytester, subprocess=True)
    result.assert_outcomes(passed=1)


def test_failure_is_in_junit_xml(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_junit=COUNTS + """
def test_quadratic(scaling):
    scaling.measure(quadratic, n=[10, 20, 40, 80, 160, 320], metric="operations").assert_no_worse_than("n")
""")
    result = run(pytester, "--junitxml=report.xml")
    result.assert_outcomes(failed=1)
    xml = (pytester.path / "report.xml").read_text()
    assert '<failure message="Failed: scalecheck: test_junit.py::test_quadratic grows as n^2, faster than the bound n' in xml


@pytest.mark.parametrize(("args", "ini", "message"), [
    (["--scalecheck-budget", "-1"], "", "scalecheck: --scalecheck-budget = -1.0 must be a positive number of seconds; "
                                        "fix: give e.g. --scalecheck-budget 2"),
    (["--scalecheck-budget", "inf"], "", "scalecheck: --scalecheck-budget = inf must be a positive number of seconds; "
                                         "fix: give e.g. --scalecheck-budget 2"),
    (["--scalecheck-confidence", "nan"], "", "scalecheck: --scalecheck-confidence = nan must be a number in [0.5, 1); "
                                             "fix: give e.g. --scalecheck-confidence 0.95"),
    ([], "scalecheck_confidence = 2", "scalecheck: ini option scalecheck_confidence = 2.0 must be a number in "
                                      "[0.5, 1); fix: write e.g. scalecheck_confidence = 0.95"),
    ([], "scalecheck_confidence = high", "scalecheck: ini option scalecheck_confidence = 'high' must be a number in "
                                         "[0.5, 1); fix: write e.g. scalecheck_confidence = 0.95"),
    (["--scalecheck-save="], "", "--scalecheck-save is empty; fix: give a file name, e.g. --scalecheck-save "
                                 "results.json (in CI: is the variable that names it set?)"),
    (["--scalecheck-save", "."], "", "--scalecheck-save . is a folder; fix: give a file name such as scalecheck.json"),
], ids=["budget", "budget_inf", "confidence_nan", "ini_confidence", "ini_text", "save_empty", "save_folder"])
def test_options_are_checked(pytester: pytest.Pytester, args: list[str], ini: str, message: str) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == f"ERROR: {message}"
    assert "Traceback" not in result.stderr.str()


def test_save_refuses_a_file_it_would_replace_by_another_kind(pytester: pytest.Pytester) -> None:
    # the file is written by a rename: a device or a named pipe would be replaced, not written to
    pytester.makepyfile("def test_nothing():\n    pass\n")
    os.mkfifo(pytester.path / "pipe")
    result = run(pytester, "--scalecheck-save", "pipe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == ("ERROR: --scalecheck-save pipe is not a regular file; fix: give a file name such "
                                      "as results.json")
    assert (pytester.path / "pipe").is_fifo()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only folder")
def test_save_into_a_folder_it_cannot_write_stops_before_the_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    (pytester.path / "locked").mkdir(mode=0o555)
    result = run(pytester, "--scalecheck-save", "locked/results.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == (f"ERROR: --scalecheck-save locked/results.json: cannot write in folder "
                                      f"{pytester.path / 'locked'} (Permission denied); fix: choose a folder you can "
                                      "write to")


def test_inconclusive_passes_with_a_warning_or_fails_when_strict(pytester: pytest.Pytester) -> None:
    # exact counts that grow, but by less than a log factor over these sizes: neither within nor a failure
    pytester.makepyfile(test_vague="""
def test_vague(scaling):
    scaling.measure(lambda n: 1000 + n, n=[100, 110, 120, 130, 140], metric="work").assert_no_worse_than("1")
""")
    result = run(pytester)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*ScalingInconclusiveWarning: scalecheck: test_vague.py::test_vague may grow faster "
                                 "than the bound 1*"])
    result = run(pytester, "--scalecheck-strict")
    result.assert_outcomes(failed=1)


def test_xdist_workers_send_their_measurements(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_spread=COUNTS + "\n" + "\n".join(textwrap.dedent(f"""
def test_{k}(scaling):
    scaling.measure(linear, n=[10, 20, 40, 80, 160], metric="operations").assert_no_worse_than("n")
""") for k in range(4)) + """
@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [10, 20, 40, 80, 160])
def test_marked(n):
    return linear(n)
""")
    result = run(pytester, "-n", "2", "--dist", "loadscope", "--scalecheck-save", "all.json", subprocess=True)
    result.assert_outcomes(passed=9)
    kernels = {s.kernel for s in read_many([pytester.path / "all.json"]).series}
    assert kernels == {f"test_spread.py::test_{k}" for k in range(4)} | {"test_spread.py::test_marked"}


def test_xdist_split_group_says_how_to_run(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_split=COUNTS + """
@pytest.mark.scalecheck(max="n", param="n", metric="operations")
@pytest.mark.parametrize("n", [10, 20, 40, 80, 160, 320])
def test_marked(n):
    return linear(n)
""")
    result = run(pytester, "-n", "2", "--dist", "load", subprocess=True)
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["scalecheck: test_split.py::test_marked: * of its 6 cases ran on another pytest-xdist "
                                 "worker, so no worker saw the whole growth; run with --dist loadscope or --dist "
                                 "loadfile"])


@pytest.mark.wall_clock
def test_a_slow_marked_case_stops_the_group_over_its_budget(pytester: pytest.Pytester) -> None:
    calls = pytester.path / "calls.txt"
    pytester.makepyfile(test_slow_marked=f"""
import time
import pytest

@pytest.mark.scalecheck(max="n", param="n", budget=0.1)
@pytest.mark.parametrize("n", [10, 20, 40, 80])
def test_sleepy(n):
    with open({str(calls)!r}, "a") as log:
        log.write(f"{{n}}\\n")
    time.sleep(0.15)
""")
    result = run(pytester)
    result.assert_outcomes(passed=4, warnings=1)
    result.stdout.fnmatch_lines(["*ScalingInconclusiveWarning: scalecheck: test_slow_marked.py::test_sleepy: bound n "
                                 "not judged: measuring took * s, more than 3x the budget of 0.1 s, and stopped after "
                                 "1 repetition(s) of the case n=10, which alone took 0.* s (its share of the budget: "
                                 "0.025 s); raise the budget*"])
    assert calls.read_text().split() == ["10", "20", "40", "80"]  # one call per case once over budget, not 2 + 5
