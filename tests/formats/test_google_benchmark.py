"""Google Benchmark's JSON: sizes from the names, repetitions, units, the tool's own complexity estimate, counters,
failed rows, the layout before 1.5, and one-line errors naming the file, the line and the benchmark."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from scalecheck.cli import OK, REGRESSION, USAGE_ERROR, main
from scalecheck.data.measurement import Run, Series
from scalecheck.errors import InputError
from scalecheck.formats import detect_format_text, read_measurements, read_measurements_text
from scalecheck.formats.google_benchmark import is_google_benchmark, read_google_benchmark_text
from scalecheck.formats.hyperfine import is_hyperfine

INPUTS = Path(__file__).parent.parent / "inputs" / "google-benchmark"
CONTEXT = {"date": "2026-11-24T21:11:44+00:00", "host_name": "vm", "executable": "./bench", "num_cpus": 2,
           "mhz_per_cpu": 2596, "library_build_type": "release"}
SeriesOf = Callable[[Run], dict[tuple[str, str], Series]]


def row(name: str, real: float = 2.0, cpu: float = 1.0, unit: str = "ns", **extra: object) -> dict[str, object]:
    """One iteration row as Google Benchmark 1.6 and later write it."""
    return {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
            "threads": 1, "iterations": 1000, "real_time": real, "cpu_time": cpu, "time_unit": unit, **extra}


def document(*rows: dict[str, object]) -> str:
    """A Google Benchmark file holding `rows`, indented as Google Benchmark writes it (one key per line)."""
    return json.dumps({"context": CONTEXT, "benchmarks": list(rows)}, indent=2)


def read(*rows: dict[str, object]) -> Run:
    return read_google_benchmark_text(document(*rows), Path("bench.json"))


def error_of(text: str) -> str:
    with pytest.raises(InputError) as info:
        read_google_benchmark_text(text, Path("bench.json"))
    assert info.value.fix
    return str(info.value)


# --- recognising the format -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sort_merge.json", "features.json", "gbench_test1_run1.json",
                                  "gbench_test2_run.json"])
def test_real_files_are_recognised_by_content(name: str) -> None:
    text = (INPUTS / name).read_text()
    assert is_google_benchmark(json.loads(text))
    assert detect_format_text(text, Path(name)) == "google-benchmark"
    assert detect_format_text(text, Path("stdout.txt")) == "google-benchmark"  # --benchmark_format=json > FILE


@pytest.mark.parametrize("doc", [
    {"benchmarks": []},  # --benchmark_list_tests with JSON: no context
    {"context": {"date": "today"}, "benchmarks": []},
    {"context": {"date": "today", "num_cpus": 2}, "benchmarks": {}},
    {"machine_info": {}, "commit_info": {}, "benchmarks": []},  # pytest-benchmark
    {"results": [{"command": "sleep 1", "mean": 1.0, "min": 1.0, "max": 1.0}]},  # hyperfine
    [{"name": "BM_x"}],
    "context",
], ids=["list-mode", "context-without-num_cpus", "benchmarks-not-a-list", "pytest-benchmark", "hyperfine", "list",
        "string"])
def test_other_documents_are_not_google_benchmark(doc: object) -> None:
    assert not is_google_benchmark(doc)


def test_a_google_benchmark_file_is_not_taken_for_hyperfine() -> None:
    assert not is_hyperfine(json.loads((INPUTS / "sort_merge.json").read_text()))


# --- sizes, kernels and parameters from the names ---------------------------------------------------------------

@pytest.mark.parametrize("name, kernel, arguments", [
    ("BM_Sort/1024", "BM_Sort", {"n": 1024}),
    ("BM_Mul/1024/8", "BM_Mul", {"n": 1024, "arg2": 8}),
    ("BM_Mul/n:1024/m:8", "BM_Mul", {"n": 1024, "m": 8}),
    ("BM_Mul/rows:64/8", "BM_Mul", {"rows": 64, "arg2": 8}),
    ("BM_Sort/-4", "BM_Sort", {"n": -4}),
    ("BM_Sort/1024/real_time", "BM_Sort/real_time", {"n": 1024}),
    ("BM_Sort/1024/manual_time", "BM_Sort/manual_time", {"n": 1024}),
    ("BM_Sort/1024/process_time/real_time", "BM_Sort/process_time/real_time", {"n": 1024}),
    ("BM_Sort/1024/threads:4", "BM_Sort/threads:4", {"n": 1024}),
    ("BM_Sort/1024/iterations:100", "BM_Sort", {"n": 1024}),
    ("BM_Sort/1024/repeats:3", "BM_Sort", {"n": 1024}),
    ("BM_Sort/1024/min_time:0.500", "BM_Sort", {"n": 1024}),
    ("BM_Sort/1024/min_time:0.500/min_warmup_time:0.100/repeats:3/real_time/threads:2", "BM_Sort/real_time/threads:2",
     {"n": 1024}),
    ("BM_Capture/random_input/1024", "BM_Capture/random_input", {"n": 1024}),
    ("BM_Sort<std::vector<int>>/64", "BM_Sort<std::vector<int>>", {"n": 64}),
    ("16/32", "16", {"n": 32}),  # the family's name is never an argument
])
def test_names_give_kernel_and_parameters(name: str, kernel: str, arguments: dict[str, float]) -> None:
    run = read(row(name))
    assert [s.kernel for s in run.series] == [kernel, kernel]
    assert dict(zip(run.parameters, run.series[0].points[0].tolist())) == arguments


def test_parameters_are_ordered_by_position_then_name_and_missing_arguments_are_zero(series_of: SeriesOf) -> None:
    run = read(row("BM_Mul/n:8/m:16"), row("BM_Mul/n:16/m:32"), row("BM_Copy/4096"), row("BM_Empty"),
               row("BM_Pad/k:1/2/3"))
    assert run.parameters == ("k", "n", "arg2", "m", "arg3")
    by = series_of(run)
    assert by["BM_Mul", "cpu_time"].points.tolist() == [[0, 8, 0, 16, 0], [0, 16, 0, 32, 0]]
    assert by["BM_Copy", "cpu_time"].points.tolist() == [[0, 4096, 0, 0, 0]]
    assert by["BM_Pad", "cpu_time"].points.tolist() == [[1, 0, 2, 0, 3]]
    assert by["BM_Copy", "cpu_time"].note == ("Google Benchmark: its name has no argument k, arg2, m, arg3, unlike "
                                              "other benchmarks of the file (k, arg2, m, arg3 = 0 here)")
    assert by["BM_Mul", "cpu_time"].note == ("Google Benchmark: its name has no argument k, arg2, arg3, unlike other "
                                             "benchmarks of the file (k, arg2, arg3 = 0 here)")


def test_a_name_with_more_arguments_than_a_model_takes_is_refused_before_it_is_taken_apart() -> None:
    message = error_of(document(row("BM_x" + "/1" * 100_000)))
    assert message.startswith("bench.json:11: benchmark 1 'BM_x/1/1/1/")
    assert message.endswith("...': 100,000 parameters, more than the 16 scalecheck can model; fix: give the "
                            "benchmarks at most 16 distinct arguments in all")


def test_one_kernel_registered_with_different_settings_keeps_them_in_its_names() -> None:
    run = read(row("BM_Sort/8/iterations:10"), row("BM_Sort/16/iterations:10"), row("BM_Sort/8/iterations:1000"),
               row("BM_Copy/8/min_time:0.010"))
    assert sorted({s.kernel for s in run.series}) == ["BM_Copy", "BM_Sort/iterations:10", "BM_Sort/iterations:1000"]


def test_a_name_that_gives_a_parameter_twice_is_refused() -> None:
    message = error_of(document(row("BM_Sort/8"), row("BM_Sort/8/n:4")))
    assert message == ("bench.json:23: benchmark 2 'BM_Sort/8/n:4': the name gives parameter 'n' twice; fix: give the "
                       "arguments distinct names with ->ArgNames({...}) (an unnamed first argument is called n, the "
                       "k-th arg<k>)")


# --- values: repetitions, units, aggregates, counters -------------------------------------------------------------

def test_real_file_with_repetitions_reads_every_repetition_in_seconds(series_of: SeriesOf) -> None:
    run = read_measurements(INPUTS / "sort_merge.json")
    assert run.parameters == ("n",)
    by = series_of(run)
    assert sorted(by) == [("BM_Sort", "cpu_time"), ("BM_Sort", "real_time")]
    cpu = by["BM_Sort", "cpu_time"]
    assert cpu.unit == "s" and cpu.points[:, 0].tolist() == [64, 128, 256, 512, 1024, 2048, 4096]
    assert cpu.values.shape == (7, 3)  # --benchmark_repetitions=3; the mean, median, stddev and cv rows are skipped
    rows = json.loads((INPUTS / "sort_merge.json").read_text())["benchmarks"]
    first = [r["cpu_time"] / 1e9 for r in rows if r["name"] == "BM_Sort/64" and r["run_type"] == "iteration"]
    np.testing.assert_allclose(cpu.values[0], first, rtol=1e-12)
    assert cpu.note == "Google Benchmark: O(N log N), coefficient 2.79 ns, RMS 0.74%"


@pytest.mark.parametrize("unit, seconds", [("ns", 3e-9), ("us", 3e-6), ("ms", 3e-3), ("s", 3.0)])
def test_times_are_converted_to_seconds(unit: str, seconds: float, series_of: SeriesOf) -> None:
    by = series_of(read(row("BM_x/8", real=3.0, cpu=0.25, unit=unit)))
    assert by["BM_x", "real_time"].values.tolist() == [[seconds]]  # exactly: 3 ns are 3e-09 s
    assert by["BM_x", "cpu_time"].values.tolist() == [[pytest.approx(seconds / 12, rel=1e-15)]]
    assert {by["BM_x", m].unit for m in ("real_time", "cpu_time")} == {"s"}


def test_version_1_0_without_time_unit_wrote_nanoseconds(series_of: SeriesOf) -> None:
    plain = {"name": "BM_x/8", "iterations": 10, "real_time": 40, "cpu_time": 30}
    assert series_of(read(plain))["BM_x", "cpu_time"].values.tolist() == [[30e-9]]


def test_counters_and_memory_figures_are_metrics_and_non_finite_counters_are_left_out(series_of: SeriesOf) -> None:
    by = series_of(read(row("BM_x/8", items_per_second=5e8, bytes_per_second=2e9, hits=7, ratio=float("nan"),
                            rate=float("inf"), max_bytes_used=4096, label="fast", allocs_per_iter=2.0),
                        row("BM_x/16", items_per_second=4e8, bytes_per_second=1e9, hits=9, ratio=0.5,
                            max_bytes_used=8192, allocs_per_iter=2.0)))
    assert sorted(metric for _, metric in by) == ["allocs_per_iter", "bytes_per_second", "cpu_time", "hits",
                                                   "items_per_second", "max_bytes_used", "ratio", "real_time"]
    assert by["BM_x", "items_per_second"].unit == "1/s" and by["BM_x", "bytes_per_second"].unit == "B/s"
    assert by["BM_x", "max_bytes_used"].unit == "B" and by["BM_x", "hits"].unit == ""
    assert by["BM_x", "hits"].values.tolist() == [[7], [9]]
    assert by["BM_x", "ratio"].points.tolist() == [[16]]  # NaN at 8: that point has no value


def test_a_negative_nan_that_google_benchmark_writes_is_read(series_of: SeriesOf) -> None:
    text = document(row("BM_x/8", ratio=1.0), row("BM_x/16", ratio=2.0)).replace('"ratio": 1.0', '"ratio": -NaN')
    by = series_of(read_google_benchmark_text(text, Path("bench.json")))
    assert by["BM_x", "ratio"].points.tolist() == [[16]]


def test_aggregates_are_skipped_when_repetitions_are_there(series_of: SeriesOf) -> None:
    rows = [row("BM_x/8", real=1.0, repetition_index=0), row("BM_x/8", real=3.0, repetition_index=1)]
    for statistic, value in (("mean", 2.0), ("median", 2.0), ("stddev", 1.4), ("cv", 0.7), ("max", 3.0)):
        rows.append({**row(f"BM_x/8_{statistic}", real=value), "run_name": "BM_x/8", "run_type": "aggregate",
                     "aggregate_name": statistic})
    by = series_of(read(*rows))
    assert by["BM_x", "real_time"].values.tolist() == [[1e-9, 3e-9]] and by["BM_x", "real_time"].note == ""


def test_only_aggregates_give_the_median_as_the_one_value(series_of: SeriesOf) -> None:
    rows = []
    for n in (8, 16):
        for statistic, value in (("mean", 2.0 * n), ("median", 1.5 * n), ("stddev", 0.1)):
            rows.append({**row(f"BM_x/{n}_{statistic}", real=value), "run_name": f"BM_x/{n}",
                         "run_type": "aggregate", "aggregate_name": statistic})
    real = series_of(read(*rows))["BM_x", "real_time"]
    assert real.values.tolist() == [[12e-9], [24e-9]]
    assert real.note == ("Google Benchmark: only aggregates were written (--benchmark_report_aggregates_only): the "
                         "median is the one value at 2 point(s), without repetitions")


# --- the tool's own complexity estimate ---------------------------------------------------------------------------

def test_big_o_and_rms_rows_become_the_note_of_the_time_series(series_of: SeriesOf) -> None:
    by = series_of(read(row("BM_Sort/8", items_per_second=1.0), row("BM_Sort/16", items_per_second=1.0),
                        {"name": "BM_Sort_BigO", "run_name": "BM_Sort", "run_type": "aggregate",
                         "aggregate_name": "BigO", "cpu_coefficient": 0.934, "real_coefficient": 1.02,
                         "big_o": "N^2", "time_unit": "ns"},
                        {"name": "BM_Sort_RMS", "run_name": "BM_Sort", "run_type": "aggregate",
                         "aggregate_name": "RMS", "rms": 0.0412}))
    assert by["BM_Sort", "cpu_time"].note == "Google Benchmark: O(N^2), coefficient 0.934 ns, RMS 4.1%"
    assert by["BM_Sort", "real_time"].note == "Google Benchmark: O(N^2), coefficient 1.02 ns, RMS 4.1%"
    assert by["BM_Sort", "items_per_second"].note == ""


@pytest.mark.parametrize("big_o, shown", [("(1)", "O(1)"), ("N", "O(N)"), ("N^3", "O(N^3)"), ("lgN", "O(log N)"),
                                          ("NlgN", "O(N log N)"), ("f(N)", "O(f(N)), the benchmark's own function")])
def test_every_big_o_of_google_benchmark_is_spelt_out(big_o: str, shown: str, series_of: SeriesOf) -> None:
    by = series_of(read(row("BM_x/8"), {"name": "BM_x_BigO", "run_name": "BM_x", "run_type": "aggregate",
                                         "cpu_coefficient": 2, "real_coefficient": 2, "big_o": big_o,
                                         "time_unit": "us"}))
    assert by["BM_x", "cpu_time"].note == f"Google Benchmark: {shown}, coefficient 2 us"


def test_the_layout_before_run_type_is_read_with_its_aggregates_and_complexity(series_of: SeriesOf) -> None:
    """Google Benchmark 1.4 and earlier: no run_type; X_mean, X_median, X_stddev after the rows of X; X_BigO and
    X_RMS named by the family alone."""
    plain = [{"name": f"BM_x/{n}", "iterations": 10, "real_time": r, "cpu_time": r, "time_unit": "ns"}
             for n, r in ((8, 10), (8, 12), (16, 40), (16, 44))]
    aggregates = [{"name": f"BM_x/{n}_{s}", "iterations": 2, "real_time": 1, "cpu_time": 1, "time_unit": "ns"}
                  for n in (8, 16) for s in ("mean", "median", "stddev")]
    own_name = {"name": "BM_peak_mean", "iterations": 1, "real_time": 5, "cpu_time": 5, "time_unit": "ns"}
    complexity = [{"name": "BM_x_BigO", "cpu_coefficient": 0.17, "real_coefficient": 0.17, "big_o": "N^2",
                   "time_unit": "ns"}, {"name": "BM_x_RMS", "rms": 0.05}]
    by = series_of(read(*plain, *aggregates, own_name, *complexity))
    assert by["BM_x", "cpu_time"].values.tolist() == [[10e-9, 12e-9], [40e-9, 44e-9]]
    assert by["BM_x", "cpu_time"].note == "Google Benchmark: O(N^2), coefficient 0.17 ns, RMS 5%"
    assert ("BM_peak_mean", "cpu_time") in by  # a benchmark of its own, not an aggregate


def test_the_old_layout_of_a_real_file_without_sizes_is_refused_with_how_to_add_them() -> None:
    with pytest.raises(InputError) as info:
        read_measurements(INPUTS / "gbench_test1_run1.json")
    assert str(info.value) == (
        f"{INPUTS / 'gbench_test1_run1.json'}: benchmark 1 'BM_SameTimes': no benchmark has an argument, so nothing "
        "gives a size to model the times over; fix: register the sizes as arguments, e.g. "
        "BENCHMARK(BM_Sort)->RangeMultiplier(2)->Range(64, 4096), and read the size with state.range(0)")


def test_a_real_file_with_and_without_arguments(series_of: SeriesOf) -> None:
    by = series_of(read_measurements(INPUTS / "gbench_test2_run.json"))
    assert by["Prefix/BM_Zero", "real_time"].points.tolist() == [[0], [3]]
    assert by["BM_Hi", "real_time"].values.tolist() == [[0.042]]  # 42 ms


# --- failed and skipped benchmarks --------------------------------------------------------------------------------

def test_failed_and_skipped_rows_are_left_out_with_a_note(series_of: SeriesOf) -> None:
    by = series_of(read(row("BM_x/8"), row("BM_x/16", error_occurred=True, error_message="out of memory"),
                        row("BM_x/32", error_occurred=True, error_message="out of memory"),
                        row("BM_x/64", skipped=True, skip_message="needs AVX-512")))
    real = by["BM_x", "real_time"]
    assert real.points.tolist() == [[8]]
    assert real.note == ("Google Benchmark: 2 run(s) failed and are left out (out of memory); 1 run(s) skipped and "
                         "are left out (needs AVX-512)")


def test_the_failed_rows_of_a_real_file_are_left_out(series_of: SeriesOf) -> None:
    by = series_of(read_measurements(INPUTS / "features.json"))
    assert by["BM_Fails", "cpu_time"].points.tolist() == [[1, 0], [2, 0]]  # (n, m); BM_Fails/3 failed
    assert by["BM_Fails", "cpu_time"].note.startswith("Google Benchmark: 2 run(s) failed and are left out (too large)")
    assert by["BM_Pairs/real_time/threads:2", "real_time"].points.tolist() == [[8, 16], [16, 32], [32, 64]]


def test_a_file_whose_benchmarks_all_failed_says_so() -> None:
    assert error_of(document(row("BM_x/8", error_occurred=True, error_message="no GPU"))) == (
        "bench.json: every benchmark in the file failed or was skipped: 'BM_x' failed (no GPU); fix: make the "
        "benchmarks run (one that calls SkipWithError or SkipWithMessage gives no times) and measure again")


# --- errors: one line naming the file, the line and the benchmark -------------------------------------------------

@pytest.mark.parametrize("bad, message", [
    ({"name": "BM_x/8", "cpu_time": 1.0, "time_unit": "ns"},
     "bench.json:23: benchmark 2 'BM_x/8': missing key 'real_time'; fix: add 'real_time' to this benchmark"),
    (row("BM_x/8", real="fast"),
     "bench.json:23: benchmark 2 'BM_x/8': 'real_time' must be a number, got 'fast'; fix: correct the time, or "
     "run the benchmark again"),
    (row("BM_x/8", unit="ps"),
     "bench.json:23: benchmark 2 'BM_x/8': 'time_unit' must be one of ns, us, ms, s, got \"ps\"; fix: correct "
     "the time_unit, or write the file again with Google Benchmark"),
    (row("BM_x/8", real=-5.0),
     "bench.json:23: benchmark 2 'BM_x/8': metric 'real_time' is a time but has a negative value -5e-09; fix: "
     "times cannot be negative: correct the value or the timer that produced it"),
    ({**row("BM_x/8"), "name": 8},
     "bench.json:23: benchmark 2: 'name' must be a non-empty string, got 8; fix: give every benchmark its name, "
     "e.g. \"name\": \"BM_Sort/1024\""),
    ({**row("BM_x/8"), "run_type": "warmup"},
     "bench.json:23: benchmark 2 'BM_x/8': 'run_type' must be \"iteration\" or \"aggregate\", got \"warmup\"; "
     "fix: correct the run_type, or write the file again with Google Benchmark"),
], ids=["missing-real_time", "time-not-a-number", "unknown-unit", "negative-time", "name-not-a-string",
        "unknown-run_type"])
def test_a_bad_benchmark_is_named_with_its_line(bad: dict[str, object], message: str) -> None:
    assert error_of(document(row("BM_x/4"), bad)) == message


@pytest.mark.parametrize("text, message", [
    ('{"context": {"date": "x", "num_cpus": 1}, "benchmarks": []}',
     'bench.json:1: the file lists no benchmarks ("benchmarks" is empty); fix: check that --benchmark_filter matches '
     "the benchmarks to measure"),
    ('{"context": {"date": "x", "num_cpus": 1}, "benchmarks": [3]}',
     "bench.json:1: benchmark 1: a benchmark must be an object, got a number; fix: write each benchmark as "
     '{"name": ..., "real_time": ..., "cpu_time": ...}'),
    ('{"context": {"date": "x"}, "benchmarks": []}',
     "bench.json:1: \"context\" lacks 'num_cpus', which Google Benchmark always writes; fix: name the file that "
     "--benchmark_out=FILE --benchmark_out_format=json (or --benchmark_format=json) wrote"),
    ('{"context": {"date": "x", "num_cpus": 1},\n "benchmarks": [\n',
     "bench.json:3: not valid JSON: Expecting value (column 1); fix: correct the JSON syntax on this line "
     "(`python -m json.tool FILE` shows where it breaks)"),
], ids=["empty", "row-not-an-object", "not-google-benchmark", "cut-short"])
def test_a_bad_file_is_one_line(text: str, message: str) -> None:
    assert error_of(text) == message


def test_read_measurements_names_a_file_from_git_history() -> None:
    text = (INPUTS / "sort_merge.json").read_text()
    run = read_measurements_text(text, "1a2b3c4:bench/sort.json")
    assert run.series[0].source is not None and str(run.series[0].source.path) == "1a2b3c4:bench/sort.json"


# --- through the command line -------------------------------------------------------------------------------------

def test_model_and_check_read_real_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "models.json"
    assert main(["model", str(INPUTS / "sort_bubble.json"), "--json", str(out)]) == OK
    models = {m["metric"]: m for m in json.loads(out.read_text())["models"]}
    assert set(models) == {"cpu_time", "real_time"}
    assert models["cpu_time"]["note"] == "Google Benchmark: O(N^2), coefficient 0.373 ns, RMS 0.17%"
    assert models["cpu_time"]["growth"].startswith("n^2")
    assert "Google Benchmark: O(N^2), coefficient 0.373 ns, RMS 0.17%" in capsys.readouterr().out
    assert main(["check", str(INPUTS / "sort_bubble.json"), "--baseline", str(INPUTS / "sort_merge.json")]) \
        == REGRESSION
    assert "BM_Sort" in capsys.readouterr().out


def test_a_bad_file_through_the_command_line_is_one_line_and_exit_2(make_file: Callable[[str, str], Path],
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = make_file("bench.json", document(row("BM_x/4"), row("BM_x/8", unit="ps")))
    assert main(["model", str(path)]) == USAGE_ERROR
    err = capsys.readouterr().err
    assert err == (f"scalecheck: error: {path}:23: benchmark 2 'BM_x/8': 'time_unit' must be one of ns, us, ms, s, "
                   "got \"ps\"; fix: correct the time_unit, or write the file again with Google Benchmark\n")
