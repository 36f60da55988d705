"""pytest-benchmark's JSON: files written by the real pytest-benchmark (in a subprocess and stored in
tests/inputs/pytest-benchmark), kernel names and points, summaries spread into values, one-line errors, and the
CLI on such files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from scalecheck.cli import OK, USAGE_ERROR, main
from scalecheck.data.measurement import Run
from scalecheck.errors import InputError
from scalecheck.formats import detect_format, read_measurements, read_measurements_text
from scalecheck.formats.pytest_benchmark import (
    is_pytest_benchmark,
    normal_spread,
    quantile_spread,
    read_pytest_benchmark,
    read_pytest_benchmark_text,
)
from tests.conftest import missing_tool

DIR = Path(__file__).parent.parent / "inputs" / "pytest-benchmark"
SOURCE = Path("bench.json")
SORT = "test_demo.py::test_sort[reversed]"  # the kernel of tests/inputs/pytest-benchmark/pb5_*.json


def document(*benchmarks: dict[str, object]) -> dict[str, object]:
    """A pytest-benchmark file's top level around `benchmarks`."""
    return {"machine_info": {"node": "box"}, "commit_info": {"id": "unversioned"}, "benchmarks": list(benchmarks),
            "datetime": "2026-01-01T00:00:00+00:00", "version": "5.1.0"}


def bench(name: str, fullname: str | None = None, *, params: object = None, group: object = None,
          data: Sequence[float] | None = (1.0, 2.0), stats: object = None) -> dict[str, object]:
    """One benchmark record as pytest-benchmark writes it (`stats` replaces the default one built from `data`)."""
    if stats is None and data is not None:
        stats = {"min": 1.0, "max": 2.0, "mean": 1.5, "stddev": 0.5, "rounds": 2, "median": 1.5, "q1": 1.0,
                 "q3": 2.0, "data": list(data), "iterations": 1}
    return {"group": group, "name": name, "fullname": fullname or f"tests/test_x.py::{name}", "params": params,
            "param": None, "extra_info": {}, "options": {}, "stats": stats}


def read_doc(doc: object, source: Path = SOURCE) -> Run:
    return read_pytest_benchmark_text(json.dumps(doc, indent=4), source)


def series(doc: object) -> dict[str, tuple[list[list[float]], list[list[float]], str]]:
    """kernel -> (points, values, note) of a document's run (metric time, unit s, checked here)."""
    run = read_doc(doc)
    assert all(s.metric == "time" and s.unit == "s" for s in run.series)
    return {s.kernel: (s.points.tolist(), s.values.tolist(), s.note) for s in run.series}


# --- files written by pytest-benchmark 5.3 (tests/inputs/pytest-benchmark/README.md) ---------------------------

def test_read_pytest_benchmark_json_with_raw_data() -> None:
    raw = json.loads((DIR / "pb5_json.json").read_text())
    run = read_pytest_benchmark(DIR / "pb5_json.json")

    assert run.parameters == ("n",)
    assert [s.kernel for s in run.series] == [SORT, "sum/test_demo.py::test_total"]
    sort, total = run.series
    assert sort.points.ravel().tolist() == [100, 200, 400, 800]
    np.testing.assert_array_equal(sort.values, [b["stats"]["data"] for b in raw["benchmarks"][:4]])
    assert (sort.metric, sort.unit, sort.note) == ("time", "s", "")
    assert total.points.tolist() == [[1.0]]  # a test without the parameter others have
    np.testing.assert_array_equal(total.values, [raw["benchmarks"][4]["stats"]["data"]])
    assert run.meta["source"] == "pytest-benchmark"
    assert json.loads(run.meta["machine"])["host"] == "vm"
    assert "commit" not in run.meta  # "unversioned"


def test_read_pytest_benchmark_saved_without_data_spreads_min_quartiles_and_max() -> None:
    raw = json.loads((DIR / "pb5_saved_without_data.json").read_text())["benchmarks"][0]["stats"]
    low, q1, median, q3, high = (raw[key] for key in ("min", "q1", "median", "q3", "max"))
    run = read_pytest_benchmark(DIR / "pb5_saved_without_data.json")

    sort = run.series[0]
    assert raw["rounds"] == 5 and sort.kernel == SORT
    # k = 5 values at the plotting positions 0.1, 0.3, 0.5, 0.7, 0.9 of the piecewise-linear quantile function
    expected = [low + 0.4 * (q1 - low), q1 + 0.2 * (median - q1), median, median + 0.8 * (q3 - median),
                q3 + 0.6 * (high - q3)]
    np.testing.assert_allclose(sort.values[0], expected, rtol=1e-12)
    assert sort.aggregate("median")[0] == median and sort.aggregate("min")[0] > low
    assert sort.note == ("pytest-benchmark summary of 5 rounds, no raw data (--benchmark-save-data keeps them): "
                         "5 values spread over min, quartiles and max")


def test_read_pytest_benchmark_real_files_of_pytest_benchmark_itself() -> None:
    """Files from pytest-benchmark's own test data (2015): no params, the id only in the name."""
    run = read_measurements(DIR / "real_2.5_0001.json")

    assert run.parameters == ("param1",)
    (s,) = run.series
    assert s.kernel == "tests/test_normal.py::test_xfast_parametrized"
    assert s.points.tolist() == [[0.0]] and s.values.shape == (1, 25)
    assert s.aggregate("median")[0] == pytest.approx(2.2016643907464864e-07, rel=1e-12)
    assert s.note == ("pytest-benchmark summary of 9,987 rounds, no raw data (--benchmark-save-data keeps them): "
                      "25 values spread over min, quartiles and max; the file names no parameters (pytest-benchmark "
                      "before 3.1), so they are named param1, param2, ... by their place in the test id")


def test_read_pytest_benchmark_real_file_with_edited_data_names_record_line_and_entry() -> None:
    with pytest.raises(InputError) as info:
        read_measurements(DIR / "real_edited_data_placeholder.json")
    assert str(info.value) == (
        f"{DIR / 'real_edited_data_placeholder.json'}:63: benchmark 1 'test_fib_10': 'stats.data' holds "
        '"... omitted to keep this file small" at position 5, not a number of seconds; fix: keep the file as '
        "pytest-benchmark wrote it: 'stats.data' lists the seconds of each round")


@pytest.mark.parametrize("name", ["pb5_json.json", "pb5_saved_without_data.json", "real_2.5_0001.json",
                                  "real_2.5_0030.json", "real_edited_data_placeholder.json"])
def test_detect_format_knows_pytest_benchmark_files(name: str) -> None:
    assert detect_format(DIR / name) == "pytest-benchmark"


def test_is_pytest_benchmark_is_strict_about_the_top_level_keys() -> None:
    assert is_pytest_benchmark(document())
    for key in ("machine_info", "commit_info", "benchmarks", "datetime", "version"):
        assert not is_pytest_benchmark({k: v for k, v in document().items() if k != key}), key
    assert is_pytest_benchmark({**document(), "benchmarks": {}})  # the reader says what is wrong
    assert not is_pytest_benchmark([document()])
    # conbench's results carry "machine_info" too, with other keys
    assert not is_pytest_benchmark({"machine_info": {}, "context": {}, "stats": {}, "run_id": "1"})


# --- the real pytest-benchmark, run in a subprocess ---------------------------------------------------------------

SESSION = '''
    import pytest

    def work(n):
        return sorted(range(n, 0, -1))

    @pytest.mark.parametrize("n", [10, 20, 40])
    @pytest.mark.parametrize("order", ["reversed"])
    def test_sort(benchmark, order, n):
        benchmark.pedantic(work, args=(n,), rounds=3)

    class TestGroup:
        @pytest.mark.benchmark(group="small")
        @pytest.mark.parametrize("size", [1, 2])
        def test_sum(self, benchmark, size):
            benchmark.pedantic(sum, args=(range(size),), rounds=4)

    def test_broken(benchmark):
        benchmark.pedantic(sum, args=(None,), rounds=2)
    '''


def run_pytest_benchmark(folder: Path, *options: str) -> None:
    """Run the real pytest-benchmark on SESSION in `folder`, with a config of its own (not scalecheck's, whose addopts
    turn the plugin off) and without the scalecheck plugin and pytest's cache."""
    try:
        import pytest_benchmark  # noqa: F401
    except ImportError:
        missing_tool("pytest-benchmark is not installed (pip install 'scalecheck[test]')")
    (folder / "test_demo.py").write_text(textwrap.dedent(SESSION), encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SCALECHECK_"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:scalecheck",
                           "-p", "no:xdist", "-p", "benchmark", "test_demo.py", *options],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr  # test_broken fails on purpose
    assert "1 failed, 5 passed" in done.stdout, done.stdout


def test_real_pytest_benchmark_json_and_save_without_data(tmp_path: Path) -> None:
    run_pytest_benchmark(tmp_path, "--benchmark-json", "out.json", "--benchmark-save", "base")
    saved = next((tmp_path / ".benchmarks").glob("*/0001_base.json"))

    for path, spread in ((tmp_path / "out.json", False), (saved, True)):
        assert detect_format(path) == "pytest-benchmark"
        run = read_measurements(path)
        assert run.parameters == ("n", "size")
        by_kernel = {s.kernel: s for s in run.series}
        assert sorted(by_kernel) == ["small/test_demo.py::TestGroup::test_sum", "test_demo.py::test_sort[reversed]"]
        sort = by_kernel["test_demo.py::test_sort[reversed]"]
        assert sort.points.tolist() == [[10, 1], [20, 1], [40, 1]]
        assert sort.values.shape == (3, 3) and np.all(sort.values > 0)
        total = by_kernel["small/test_demo.py::TestGroup::test_sum"]
        assert total.points.tolist() == [[1, 1], [1, 2]] and total.values.shape == (2, 4)
        assert sort.note == ("pytest-benchmark summary of 3 rounds, no raw data (--benchmark-save-data keeps them): "
                             "3 values spread over min, quartiles and max" if spread else "")
    raw = json.loads((tmp_path / "out.json").read_text())
    np.testing.assert_array_equal(read_measurements(tmp_path / "out.json").series[0].values,
                                  [b["stats"]["data"] for b in raw["benchmarks"][:3]])


def test_real_pytest_benchmark_save_data_gives_the_rounds(tmp_path: Path) -> None:
    run_pytest_benchmark(tmp_path, "--benchmark-save", "base", "--benchmark-save-data")
    saved = next((tmp_path / ".benchmarks").glob("*/0001_base.json"))
    raw = json.loads(saved.read_text())

    sort = read_measurements(saved).series[0]
    assert sort.note == ""
    np.testing.assert_array_equal(sort.values, [b["stats"]["data"] for b in raw["benchmarks"][:3]])


# --- kernels and points ------------------------------------------------------------------------------------------

def test_kernel_is_group_and_node_id_without_the_parameter_id() -> None:
    found = series(document(
        bench("test_a[10]", params={"n": 10}),
        bench("test_a[20]", params={"n": 20}),
        bench("test_b[x::y-5]", "tests/test_x.py::TestC::test_b[x::y-5]", params={"mode": "x::y", "n": 5},
              group="io"),
        bench("test_c", group="")))
    assert list(found) == ["tests/test_x.py::test_a", "io/tests/test_x.py::TestC::test_b[x::y]",
                           "tests/test_x.py::test_c"]
    assert found["tests/test_x.py::test_a"][0] == [[10.0], [20.0]]
    assert found["io/tests/test_x.py::TestC::test_b[x::y]"][0] == [[5.0]]
    assert found["tests/test_x.py::test_c"][0] == [[1.0]]


def test_non_numeric_parameters_join_the_kernel_name_in_parameter_order() -> None:
    found = series(document(
        bench("test_s[merge-True-100]", params={"algo": "merge", "stable": True, "n": 100}),
        bench("test_s[merge-True-200]", params={"algo": "merge", "stable": True, "n": 200}),
        bench("test_s[f-None-100]", params={"algo": "UNSERIALIZABLE[<function bubble at 0x7f3a2c1b0e50>]",
                                            "stable": None, "n": 100}),
        bench("test_t[big]", params={"n": "big"}),
    ))
    assert found == {"tests/test_x.py::test_s[merge-True]": ([[100.0], [200.0]], [[1.0, 2.0], [1.0, 2.0]], ""),
                     "tests/test_x.py::test_s[bubble-None]": ([[100.0]], [[1.0, 2.0]], ""),
                     "tests/test_x.py::test_t[big]": ([[1.0]], [[1.0, 2.0]], "")}


def test_a_parameter_is_numeric_only_when_it_is_a_number_in_every_record_of_its_test() -> None:
    found = series(document(
        bench("test_e[None]", params={"eps": None}),
        bench("test_e[0.5]", params={"eps": 0.5}),
        bench("test_f[8]", params={"eps": 8}),
        bench("test_f[16]", params={"eps": 16}),
    ))
    assert found["tests/test_x.py::test_e[None]"][0] == [[1.0]]
    assert found["tests/test_x.py::test_e[0.5]"][0] == [[1.0]]
    assert found["tests/test_x.py::test_f"][0] == [[8.0], [16.0]]


def test_numpy_numbers_pytest_benchmark_could_not_serialise_are_numbers() -> None:
    found = series(document(bench("test_n[1000]", params={"n": "UNSERIALIZABLE[np.int64(1000)]"}),
                            bench("test_n[0.5]", params={"n": "UNSERIALIZABLE[0.5]"}),
                            bench("test_t[1000]", params={"n": "1000"})))  # a string parameter stays a string
    assert found["tests/test_x.py::test_n"][0] == [[0.5], [1000.0]]
    assert found["tests/test_x.py::test_t[1000]"][0] == [[1.0]]


def test_ids_without_params_become_positional_parameters() -> None:
    """pytest-benchmark before 3.1 wrote no params: numbers in the id are parameters, the rest stays in the name."""
    doc = document(bench("test_x[bubble-100]"), bench("test_x[bubble-200]"), bench("test_y[1e-05]"),
                   bench("test_y[0.001]"))
    for record in doc["benchmarks"]:
        del record["params"], record["param"]
    run = read_doc(doc)
    assert run.parameters == ("param2", "param1")
    found = {s.kernel: s.points.tolist() for s in run.series}
    assert found == {"tests/test_x.py::test_x[bubble]": [[100.0, 1.0], [200.0, 1.0]],
                     "tests/test_x.py::test_y": [[1.0, 1e-05], [1.0, 0.001]]}


# --- summaries without raw data ------------------------------------------------------------------------------------

def test_quantile_spread_places_values_at_plotting_positions() -> None:
    values = quantile_spread((0.0, 0.25, 0.5, 0.75, 1.0), (0.0, 1.0, 2.0, 3.0, 8.0), 4)
    # positions 0.125, 0.375, 0.625, 0.875
    assert values == pytest.approx([0.5, 1.5, 2.5, 5.5])
    assert quantile_spread((0.0, 0.25, 0.5, 0.75, 1.0), (1.0, 2.0, 3.0, 4.0, 5.0), 1) == [3.0]


def test_quantile_spread_repairs_crossed_rounded_knots() -> None:
    assert quantile_spread((0.0, 0.5, 1.0), (1.0, 0.9, 2.0), 2) == pytest.approx([1.0, 1.5])


def test_normal_spread_is_mean_plus_normal_scores_clipped() -> None:
    z = NormalDist().inv_cdf(1 / 6)
    assert normal_spread(10.0, 2.0, 2.0, 3) == pytest.approx([10 + 2 * z, 10.0, 10 - 2 * z])
    assert normal_spread(1.0, 2.0, 2.0, 3, 0.5, 2.0) == pytest.approx([0.5, 1.0, 2.0])


def test_summary_of_many_rounds_becomes_25_values() -> None:
    stats = {"min": 1.0, "q1": 2.0, "median": 3.0, "q3": 4.0, "max": 9.0, "mean": 3.5, "stddev": 1.0,
             "rounds": 10_000}
    (points, values, note), = series(document(bench("test_y", stats=stats))).values()
    assert len(values[0]) == 25 and np.median(values[0]) == 3.0
    # the outermost plotting positions are 0.02 and 0.98
    assert min(values[0]) == pytest.approx(1.0 + 0.08 * 1) and max(values[0]) == pytest.approx(4.0 + 0.92 * 5)
    assert note == ("pytest-benchmark summary of 10,000 rounds, no raw data (--benchmark-save-data keeps them): "
                    "25 values spread over min, quartiles and max")


def test_summary_without_quartiles_uses_mean_and_stddev() -> None:
    stats = {"min": 0.9, "max": 1.1, "mean": 1.0, "stddev": 0.5, "rounds": 3}
    (_, values, note), = series(document(bench("test_y", stats=stats))).values()
    assert values == [[0.9, 1.0, 1.1]]  # 1 -/+ 0.5 * 0.967, clipped at min and max
    assert note == ("pytest-benchmark summary of 3 rounds, no raw data (--benchmark-save-data keeps them): "
                    "3 values spread over mean ± stddev (normal scores)")


def test_summaries_of_several_round_counts_say_so() -> None:
    def stats(rounds: int) -> dict[str, object]:
        return {"min": 1.0, "q1": 2.0, "median": 3.0, "q3": 4.0, "max": 5.0, "rounds": rounds}

    found = series(document(bench("test_z[8]", params={"n": 8}, stats=stats(12)),
                            bench("test_z[16]", params={"n": 16}, stats=stats(40)),
                            bench("test_z[32]", params={"n": 32})))  # raw data
    assert found["tests/test_x.py::test_z"][2] == (
        "pytest-benchmark summaries of 12 to 40 rounds (2 of 3 points), no raw data (--benchmark-save-data keeps "
        "them): 12 to 25 values per point spread over min, quartiles and max")


def test_records_without_stats_are_left_out() -> None:
    found = series(document(bench("test_ok"), bench("test_failed", stats=None, data=None),
                            {k: v for k, v in bench("test_gone").items() if k != "stats"}))
    assert list(found) == ["tests/test_x.py::test_ok"]


# --- errors: one line naming the file, the record and the fix -------------------------------------------------------

@pytest.mark.parametrize("doc, message", [
    ([], "bench.json:1: the top level must be an object with the keys machine_info, commit_info, benchmarks, "
         "datetime, version, got a list"),
    ({k: v for k, v in document().items() if k != "commit_info"},
     "bench.json: missing key 'commit_info': not a pytest-benchmark file"),
    ({**document(), "benchmarks": {}}, 'bench.json:8: benchmarks: "benchmarks" must be a list, got an object'),
    (document(), "bench.json: the file lists no benchmarks"),
    (document(bench("test_a", stats=None, data=None), bench("test_b", stats=None, data=None)),
     "bench.json: none of its 2 benchmark(s) has measurements (no 'stats': each failed or was skipped)"),
    (document(bench("test_a"), 3), "bench.json:33: benchmark 2: a benchmark must be an object, got a number"),
    (document({**bench("test_a"), "name": 7}), "bench.json:11: benchmark 1: 'name' must be a non-empty string, got 7"),
    (document(bench("test_a", stats=[1.0])), "bench.json:17: benchmark 1 'test_a': 'stats' must be an object, got "
                                            "a list"),
    (document(bench("test_a", params=[1])), "bench.json:13: benchmark 1 'test_a': 'params' must be an object or "
                                            "null, got a list"),
    (document(bench("test_a", data=(1.0, float("nan")))),
     "bench.json:26: benchmark 1 'test_a': the measured value must be a finite number, got nan"),
    (document(bench("test_a", data=(1.0, -2.0))),
     "bench.json:26: benchmark 1 'test_a': metric 'time' is a time but has a negative value -2"),
    (document(bench("test_a", stats={"min": 1.0, "median": 2.0})),
     "bench.json:17: benchmark 1 'test_a': the stats have neither raw data ('data') nor 'rounds'"),
    (document(bench("test_a", stats={"median": 2.0, "rounds": 0})),
     "bench.json:17: benchmark 1 'test_a': 'stats.rounds' must be a whole number from 1, got 0"),
    (document(bench("test_a", stats={"median": 2.0, "rounds": 5})),
     "bench.json:17: benchmark 1 'test_a': the stats have neither raw data ('data') nor a summary (missing min, q1, "
     "q3, max)"),
    (document(bench("test_a", stats={"min": 1, "q1": 1, "median": "fast", "q3": 2, "max": 2, "rounds": 5})),
     "bench.json:17: benchmark 1 'test_a': 'stats.median' must be a number, got 'fast'"),
], ids=["top-list", "missing-key", "benchmarks-object", "no-benchmarks", "all-without-stats", "record-number",
        "name-number", "stats-list", "params-list", "nan", "negative", "no-rounds", "zero-rounds", "no-summary",
        "summary-text"])
def test_errors_name_file_line_and_record(doc: object, message: str) -> None:
    with pytest.raises(InputError) as info:
        read_doc(doc)
    assert str(info.value).split("; fix: ")[0] == message
    assert info.value.fix


def test_a_damaged_pytest_benchmark_file_gets_the_pytest_benchmark_reader_s_error(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({**document(), "benchmarks": {}}, indent=4))
    with pytest.raises(InputError) as info:
        read_measurements(path)
    assert str(info.value).split("; fix: ")[0] == f'{path}:8: benchmarks: "benchmarks" must be a list, got an object'


def test_every_error_of_a_git_source_names_it() -> None:
    with pytest.raises(InputError, match=r"^1a2b3c4:bench/r\.json: the file lists no benchmarks"):
        read_measurements_text(json.dumps(document()), "1a2b3c4:bench/r.json")


# --- the command line ------------------------------------------------------------------------------------------------

def test_cli_model_reads_a_pytest_benchmark_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "models.json"
    assert main(["model", str(DIR / "pb5_json.json"), "--json", str(out)]) == OK
    models = {m["kernel"]: m for m in json.loads(out.read_text())["models"]}
    assert set(models) == {SORT, "sum/test_demo.py::test_total"}
    assert models[SORT]["points"] == 4 and models[SORT]["unit"] == "s"


def test_cli_check_of_a_pytest_benchmark_file_against_itself_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # no settings file of this repository
    path = str(DIR / "pb5_saved_without_data.json")
    assert main(["check", path, "--baseline", path, "--bootstrap", "20"]) == OK
    assert capsys.readouterr().out.startswith("PASS")


def test_cli_bad_pytest_benchmark_file_is_one_line_and_exit_2(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(document(bench("test_a", stats={"median": 2.0, "rounds": 5})), indent=4))
    assert main(["model", str(path)]) == USAGE_ERROR
    err = capsys.readouterr().err
    assert err == (f"scalecheck: error: {path}:17: benchmark 1 'test_a': the stats have neither raw data ('data') nor "
                   "a summary (missing min, q1, q3, max); fix: give 'stats' its 'rounds' and either 'data' or the "
                   "summary min, q1, median, q3, max (or mean and stddev): write the file with pytest "
                   "--benchmark-json FILE (or --benchmark-save NAME)\n")
