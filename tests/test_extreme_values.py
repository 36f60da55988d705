"""Extreme but finite values through every command and report: no crash (exit 3), no numpy warning on stderr, valid
JSON (no NaN or Infinity tokens), finite numbers in every report, and no regression that passes because its values
were too large to model.

The inputs (values or parameters near 1e308, candidates 1e300 times their baseline, a custom metric of 10**400) go
through `main(argv)` with every warning an error, or through pytester.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from scalecheck.cli import OK, REGRESSION, USAGE_ERROR, main
from scalecheck.data.views import KernelPlot, PlotSide
from scalecheck.report.plots import kernel_svg

pytest_plugins = ["pytester"]

P = (2, 4, 8, 16, 32, 64)
MACHINE = {"cpu": "test cpu", "cores": 4, "os": "Linux"}  # both sides on one machine: findings are not held back
Value = Callable[[float, int], float]  # (p, repetition) -> the measured value


def linear(scale: float = 1.0, seed: int = 1) -> Value:
    """10 + p / 2 times `scale`, with 1% seeded noise per repetition."""
    noise = np.random.default_rng(seed).standard_normal(1000)
    return lambda p, i: scale * (10 + 0.5 * p) * (1 + 0.01 * noise[(int(p) * 7 + i) % 1000])


def write(path: Path, value: Value, points: Sequence[float] = P, *, repetitions: int = 3,
          rounds: Sequence[int] | None = None, kernels: Sequence[str] = ("solve",)) -> Path:
    """A native measurement file: every kernel at every point, `repetitions` values each."""
    rows = []
    for kernel in kernels:
        for p in points:
            row: dict[str, object] = {"kernel": kernel, "metric": "time", "unit": "s", "point": {"p": p},
                                      "values": [value(p, i) for i in range(repetitions)]}
            if rounds is not None:
                row["rounds"] = list(rounds)
            rows.append(row)
    doc = {"scalecheck": 1, "parameters": ["p"], "meta": {"machine": MACHINE}, "measurements": rows}
    path.write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """`main(argv)` with every warning an error (so a numpy warning shows as exit 3): (exit status, stdout, stderr)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def strict_json(path: Path) -> object:
    """The JSON document at `path`; NaN and Infinity are not JSON, so reading them fails."""
    def refuse(token: str) -> object:
        raise AssertionError(f"{path.name} holds {token}")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def no_infinities(text: str) -> None:
    assert not re.search(r"\b(inf|nan)x?\b", text, re.IGNORECASE), text


# --- the default target and every reported value are finite -----------------------------------------------------------

def test_default_target_beyond_the_floats_is_an_error_naming_the_file(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    near_max = write(tmp_path / "cand.json", linear(1e-300), (*P[:-1], 1e308))
    base = write(tmp_path / "base.json", linear(1e-300), (*P[:-1], 1e308))
    code, out, err = run(capsys, "check", near_max, "--baseline", base, "--json", tmp_path / "r.json")
    assert (code, out) == (USAGE_ERROR, "")
    assert err == (f"scalecheck: error: {near_max}: kernel 'solve', metric 'time': the default target, 4x the largest "
                   "measured p (1e+308), is beyond the range of floating-point numbers; fix: give the scale to predict "
                   "at, e.g. --target p=1e+308 (or target in [tool.scalecheck])\n")
    assert not (tmp_path / "r.json").exists()


def test_a_parameter_near_1e308_gives_valid_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write(tmp_path / "m.json", lambda p, i: 10 + math.log2(p) * (1 + 0.01 * i), (*P[:-1], 1e308))
    code, out, err = run(capsys, "model", data, "--json", tmp_path / "m.out.json", "--html", tmp_path / "m.html")
    assert (code, err) == (OK, "")
    model = strict_json(tmp_path / "m.out.json")["models"][0]  # type: ignore[index]
    assert (model["status"], model["growth"]) == ("ok", "log2(p)")
    no_infinities(out)


def test_a_measured_value_of_1e308_is_out_of_range_with_valid_reports(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    data = write(tmp_path / "m.json", lambda p, i: 1e308 if p == 64 else linear()(p, i))
    code, out, err = run(capsys, "model", data, "--json", tmp_path / "m.out.json", "--html", tmp_path / "m.html")
    assert (code, err) == (OK, "")
    model = strict_json(tmp_path / "m.out.json")["models"][0]  # type: ignore[index]
    assert (model["status"], model["formula"], model["noise"]) == ("out of range", None, None)
    assert model["note"] == ("the values reach 1e+308 in magnitude, beyond the 1e+100 a model can be fitted to (its "
                             "sums of squares would overflow): record them in a larger unit, or check what produced "
                             "them")
    assert out.splitlines()[2] == "solve   time    (out of range)"


def test_a_prediction_beyond_the_floats_at_the_target_is_no_number(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cubic = write(tmp_path / "cubic.json", lambda p, i: (10 + p**3) * (1 + 0.01 * i))
    code, out, err = run(capsys, "model", cubic, "--target", "p=1e300", "--json", tmp_path / "m.json",
                         "--html", tmp_path / "m.html")
    assert (code, err) == (OK, "")
    assert out.splitlines()[2] == "solve   time    10.1 + 1.01 * p^3     0.00   1.0000  p^3               -"
    assert out.splitlines()[-1] == ("  solve [time]: its value at the target p=1e+300 is beyond the range of "
                                    "floating-point numbers (about 1.8e+308): choose a smaller target")
    assert strict_json(tmp_path / "m.json")["models"][0]["prediction"] is None  # type: ignore[index]


def test_a_check_whose_prediction_overflows_at_the_target_fails_on_growth(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    cubic = write(tmp_path / "cand.json", lambda p, i: (10 + p**3) * (1 + 0.01 * i))
    base = write(tmp_path / "base.json", linear())
    code, out, err = run(capsys, "check", cubic, "--baseline", base, "--target", "p=1e300", "--bootstrap", "20",
                         "--json", tmp_path / "r.json", "--html", tmp_path / "r.html", "--markdown", tmp_path / "r.md",
                         "--no-github")
    assert (code, err) == (REGRESSION, "")
    assert out.splitlines()[0] == "FAIL: 1 kernel(s) with a new scalability problem (growth 1)"
    kernel = strict_json(tmp_path / "r.json")["kernels"][0]  # type: ignore[index]
    assert (kernel["ratio"], kernel["note"]) == (None, "no ratio at the target: the candidate's prediction there is "
                                                       "beyond the range of floating-point numbers (choose a smaller "
                                                       "target)")
    for text in (out, (tmp_path / "r.md").read_text(encoding="utf-8")):
        no_infinities(text)


@pytest.mark.parametrize("top", [1e250, 1.7e308])
def test_plot_of_a_model_up_to_near_the_largest_float_on_log_axes(top: float) -> None:
    # drawn on linear axes first, 300 decades made matplotlib's transform singular; its margins overflowed
    x = np.array([2.0, 4.0, 8.0])
    side = PlotSide("candidate", x, median=x, low=x / 2, high=x * 2, start=2.0, measured_top=8.0,
                    model=np.geomspace(1.0, top, 20), band_low=np.geomspace(0.5, top / 2, 20),
                    band_high=np.geomspace(2.0, top, 20), change_points=(5.0,))
    plot = KernelPlot("p", "time [s]", np.geomspace(2.0, 1e30, 20), 1e30, 2, (side,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kernel_svg(plot, salt="k").startswith("<svg")


def test_two_parameters_with_one_near_the_largest_float(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"kernel": "solve", "metric": "time", "unit": "s", "point": {"x": x, "y": 1.7976931348623157e308 if
             (x, y) == (2, 1) else y}, "values": [3.0 * x + min(y, 3) + 0.01 * i for i in range(3)]}
            for x in (1, 2, 3) for y in (1, 2, 3)]
    data = tmp_path / "grid.json"
    data.write_text(json.dumps({"scalecheck": 1, "parameters": ["x", "y"], "measurements": rows}), encoding="utf-8")
    code, _, err = run(capsys, "model", data, "--json", tmp_path / "m.json", "--html", tmp_path / "m.html")
    assert (code, err) == (OK, "")
    strict_json(tmp_path / "m.json")


def test_plot_draws_what_it_can_of_values_near_the_largest_float() -> None:
    # the median of two values of 1e308 overflowed to inf, above their range: a negative error bar
    x = np.array([2.0, 4.0, 8.0])
    side = PlotSide("model", x, median=np.array([1.0, 2.0, np.inf]), low=np.array([1.0, 2.0, 1e308]),
                    high=np.array([1.0, 2.0, 1e308]), start=2.0, measured_top=8.0,
                    model=np.geomspace(1.0, 1e308, 5), band_low=np.zeros(5), band_high=np.full(5, 1e308))
    plot = KernelPlot("p", "time [s]", np.geomspace(2.0, 1e300, 5), 1e300, 2, (side,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svg = kernel_svg(plot, salt="k")
    assert svg.startswith("<svg")


# --- no numpy warning reaches the user; errors name their files -------------------------------------------------------

@pytest.mark.parametrize("scale", [1e-200, 1e160, 1e300])
def test_extreme_scales_model_and_check_without_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         scale: float) -> None:
    data = write(tmp_path / "data.json", linear(scale))
    base = write(tmp_path / "base.json", linear())
    code, out, err = run(capsys, "model", data, "--json", tmp_path / "m.json")
    assert (code, err) == (OK, "")
    assert strict_json(tmp_path / "m.json")["models"][0]["status"] == "out of range"  # type: ignore[index]
    code, out, err = run(capsys, "check", base, "--baseline", data, "--bootstrap", "20", "--json",
                         tmp_path / "r.json", "--no-github")
    assert (code, err) == (OK if scale > 1 else REGRESSION, "")
    strict_json(tmp_path / "r.json")


def test_parameters_that_differ_name_both_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cand = write(tmp_path / "cand.json", linear())
    base = tmp_path / "base.json"
    base.write_text(cand.read_text(encoding="utf-8").replace('"p"', '"n"'), encoding="utf-8")
    code, _, err = run(capsys, "check", cand, "--baseline", base)
    assert code == USAGE_ERROR
    assert err == (f"scalecheck: error: {cand}: the candidate's parameters (p) differ from those of the baseline "
                   f"{base} (n); fix: compare measurements taken with the same parameters\n")
    code, _, err = run(capsys, "model", cand, base)
    assert err == (f"scalecheck: error: {base}: parameters (n) differ from the first file's (p) in {cand}; fix: model "
                   "files with different parameters separately\n")


# --- a result that cannot be modeled never passes silently ------------------------------------------------------------

def test_a_candidate_1e300_times_its_baseline_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cand = write(tmp_path / "cand.json", linear(1e300, seed=2))
    base = write(tmp_path / "base.json", linear())
    code, out, err = run(capsys, "check", cand, "--baseline", base, "--json", tmp_path / "r.json",
                         "--html", tmp_path / "r.html", "--markdown", tmp_path / "r.md", "--bootstrap", "20",
                         "--no-github")
    assert (code, err) == (REGRESSION, "")
    report = strict_json(tmp_path / "r.json")
    (finding,) = report["findings"]  # type: ignore[index]
    assert (finding["kind"], finding["severity"]) == ("prediction", "error")
    assert finding["message"] == ("9.98e+299x the baseline at the 6 measured point(s) both commits share, compared as "
                                  "measured: the candidate's values are beyond the magnitudes a model can be fitted "
                                  "to")
    assert finding["evidence"] == {"basis": "the measured points both commits share", "points": 6}
    assert report["kernels"][0]["status"] == "unmodeled"  # type: ignore[index]


@pytest.mark.parametrize(("repetitions", "rounds"), [(1, None), (4, (1, 1, 2, 2))], ids=["one-value", "rounds"])
def test_a_1e300_slowdown_fails_without_repetitions_and_in_rounds(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  repetitions: int, rounds: tuple[int, ...] | None
                                                                  ) -> None:
    cand = write(tmp_path / "cand.json", linear(1e300, seed=2), repetitions=repetitions, rounds=rounds)
    base = write(tmp_path / "base.json", linear(), repetitions=repetitions, rounds=rounds)
    code, out, err = run(capsys, "check", cand, "--baseline", base, "--bootstrap", "20", "--no-github")
    assert (code, err) == (REGRESSION, "")
    assert out.splitlines()[0] == "FAIL: 1 kernel(s) with a new scalability problem (prediction 1)"


def test_a_baseline_beyond_range_and_a_normal_candidate_pass(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    cand = write(tmp_path / "cand.json", linear())
    base = write(tmp_path / "base.json", linear(1e300, seed=2))
    code, out, err = run(capsys, "check", cand, "--baseline", base, "--bootstrap", "20", "--no-github")
    assert (code, err) == (OK, "")
    assert out.splitlines()[0] == "PASS: no new scalability problem"


# --- a custom metric of the pytest plugin beyond the floats -----------------------------------------------------------

def _plugin() -> list[str]:
    names = {ep.name for ep in metadata.entry_points(group="pytest11")}
    return [] if "scalecheck" in names else ["-p", "scalecheck.pytest_plugin"]


def test_custom_metric_beyond_the_floats_fails_the_test_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_huge="""
import pytest

def test_fixture(scaling):
    scaling.measure(lambda n: 10**400, n=[10, 20, 40, 80, 160], metric="ops")

@pytest.mark.scalecheck(max="n", metric="ops")
@pytest.mark.parametrize("n", [10, 20, 40])
def test_marker(n):
    return 10**400
""")
    result = pytester.runpytest(*_plugin(), "-p", "no:cacheprovider", "--scalecheck-budget", "0.3")
    result.assert_outcomes(failed=4)
    message = ("metric 'ops' is the number the function returns, but it returned an integer of 401 digits, which is "
               "not a finite floating-point number (at most about 1.8e308): return the count to model in a unit that "
               "keeps it finite, or measure metric='time'")
    result.stdout.fnmatch_lines([f"scalecheck: test_huge.py::test_fixture: {message}",
                                 f"scalecheck: test_huge.py::test_marker?10?: {message}"])
    assert "Traceback" not in result.stdout.str() and "OverflowError" not in result.stdout.str()
