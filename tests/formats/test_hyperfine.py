"""hyperfine's JSON export: parameters as the point, runs as repetitions, the command with its placeholders put
back as the kernel, failed runs, older versions, and one-line errors naming the file, the line and the result."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scalecheck.cli import OK, USAGE_ERROR, main
from scalecheck.data.measurement import Run, Series
from scalecheck.errors import InputError
from scalecheck.formats import detect_format_text, read_measurements
from scalecheck.formats.google_benchmark import is_google_benchmark
from scalecheck.formats.hyperfine import is_hyperfine, read_hyperfine_text

INPUTS = Path(__file__).parent.parent / "inputs" / "hyperfine"
SeriesOf = Callable[[Run], dict[tuple[str, str], Series]]


def result(command: str, times: list[object] | None = None, **extra: object) -> dict[str, object]:
    """One result as hyperfine 1.12 and later write it; `parameters` and the rest through `extra`."""
    runs = [0.1, 0.2] if times is None else times
    return {"command": command, "mean": 0.15, "stddev": 0.01, "median": 0.1, "user": 0.05, "system": 0.01,
            "min": 0.1, "max": 0.2, "times": runs, "exit_codes": [0] * len(runs), **extra}


def scan(template: str, name: str, values: list[str], **extra: object) -> list[dict[str, object]]:
    """The results of `hyperfine --parameter-scan` / `-L name values` of one command."""
    return [result(template.replace("{" + name + "}", value), parameters={name: value}, **extra) for value in values]


def document(*results: dict[str, object]) -> str:
    """A hyperfine file holding `results`, indented as hyperfine writes it."""
    return json.dumps({"results": list(results)}, indent=2)


def read(*results: dict[str, object]) -> Run:
    return read_hyperfine_text(document(*results), Path("hf.json"))


def kernels(run: Run) -> list[str]:
    return list(dict.fromkeys(s.kernel for s in run.series))


def error_of(text: str) -> str:
    with pytest.raises(InputError) as info:
        read_hyperfine_text(text, Path("hf.json"))
    assert info.value.fix
    return str(info.value)


# --- recognising the format -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["msq_c.json", "msq_rust.json", "sort_opt_scan.json", "plain_comparison.json",
                                  "failing_runs.json"])
def test_real_files_are_recognised_by_content(name: str) -> None:
    text = (INPUTS / name).read_text()
    doc = json.loads(text)
    assert is_hyperfine(doc) and not is_google_benchmark(doc)
    assert detect_format_text(text, Path(name)) == "hyperfine"


@pytest.mark.parametrize("doc", [
    {"results": {"sort": [1.0]}},  # asv's results are an object
    {"results": [{"command": "sleep 1", "mean": 1.0}]},  # min and max are always there
    {"results": ["sleep 1"]},
    {"results": [], "params": {}},
    {"context": {"date": "x", "num_cpus": 1}, "benchmarks": []},
    [{"command": "sleep 1", "mean": 1.0, "min": 1.0, "max": 1.0}],
], ids=["asv", "no-min-max", "strings", "empty-with-other-keys", "google-benchmark", "list"])
def test_other_documents_are_not_hyperfine(doc: object) -> None:
    assert not is_hyperfine(doc)


def test_the_oldest_layout_is_hyperfine_too() -> None:
    """hyperfine 1.0 to 1.5: command, mean, stddev, user, system, min, max and times only."""
    assert is_hyperfine({"results": [{"command": "sleep 1", "mean": 1.0, "stddev": 0.0, "user": 0.0, "system": 0.0,
                                      "min": 1.0, "max": 1.0, "times": [1.0]}]})


# --- points, repetitions and kernels -------------------------------------------------------------------------------

def test_a_real_scan_reads_every_run_of_every_value(series_of: SeriesOf) -> None:
    run = read_measurements(INPUTS / "msq_c.json")
    assert run.parameters == ("num_threads",)
    # "c-reference/msqueue 7 7" at num_threads = 7 belongs to the same kernel as the other values
    assert kernels(run) == ["c-reference/msqueue {num_threads} 7"]
    time = series_of(run)["c-reference/msqueue {num_threads} 7", "time"]
    assert time.unit == "s" and time.points[:, 0].tolist() == list(range(1, 17)) and time.values.shape == (16, 20)
    first = json.loads((INPUTS / "msq_c.json").read_text())["results"][0]["times"]
    assert time.values[0].tolist() == first and time.note == ""


@pytest.mark.parametrize("template, values, kernel", [
    ("./sort {n}", ["1000", "2000", "4000"], "./sort {n}"),
    ("./run --size={n} --out=out_{n}.txt", ["100", "1000"], "./run --size={n} --out=out_{n}.txt"),
    ("./sort -j 4 {n}", ["2", "4", "8"], "./sort -j 4 {n}"),  # 4 at n = 4 stays 4: the other results show it
    ("./sort 1000 {n}", ["100", "1000", "10"], "./sort 1000 {n}"),  # 100 is not taken out of 1000
    ("./solve --tol 10.5 {n}", ["5", "10"], "./solve --tol 10.5 {n}"),  # nor 10 out of 10.5
    ("./step {n}", ["0.25", "0.50", "0.75"], "./step {n}"),  # -D 0.25 writes decimals
    ("./shift {n}", ["-2", "0", "2"], "./shift {n}"),
    ("./run --offset=-{n}", ["1", "2", "3"], "./run --offset=-{n}"),
    ("./gen-input; ./sort", ["1", "2", "3"], "./gen-input; ./sort"),  # the size is used in --prepare only
])
def test_the_kernel_is_the_command_with_its_placeholder(template: str, values: list[str], kernel: str) -> None:
    run = read(*scan(template, "n", values))
    assert kernels(run) == [kernel]
    assert sorted(run.series[0].points[:, 0].tolist()) == sorted(float(v) for v in values)


def test_two_numeric_parameters_with_the_same_value_keep_their_placeholders() -> None:
    results = [result(f"./grid {x} {y}", parameters={"x": x, "y": y}) for x in ("1", "2") for y in ("1", "2", "4")]
    run = read(*results)
    assert run.parameters == ("x", "y") and kernels(run) == ["./grid {x} {y}"]
    assert run.series[0].points.tolist() == [[1, 1], [1, 2], [1, 4], [2, 1], [2, 2], [2, 4]]


def test_non_numeric_parameters_are_part_of_the_kernel(series_of: SeriesOf) -> None:
    run = read_measurements(INPUTS / "sort_opt_scan.json")
    assert run.parameters == ("n",)
    assert kernels(run) == ["./sort-O0 {n}", "./sort-O2 {n}"]
    assert series_of(run)["./sort-O2 {n}", "time"].points[:, 0].tolist() == [20000, 40000, 60000, 80000]


def test_a_non_numeric_value_the_command_does_not_show_is_added_as_hyperfine_shows_it() -> None:
    results = [result(f"make -j{n}", parameters={"n": n, "cc": cc}) for cc in ("gcc", "clang") for n in ("1", "2")]
    assert kernels(read(*results)) == ["make -j{n} (cc = gcc)", "make -j{n} (cc = clang)"]


def test_a_command_name_is_the_kernel() -> None:
    """--command-name 'sort' (or 'sort {n}'): hyperfine writes the name where the command was."""
    assert kernels(read(*scan("sort", "n", ["10", "20"]))) == ["sort"]
    assert kernels(read(*scan("sort-{n}", "n", ["10", "20"]))) == ["sort-{n}"]


def test_memory_usage_is_a_metric_in_bytes(series_of: SeriesOf) -> None:
    by = series_of(read(*scan("./sort {n}", "n", ["10", "20"], memory_usage_byte=[1024, 2048])))
    assert by["./sort {n}", "memory"].unit == "B"
    assert by["./sort {n}", "memory"].values.tolist() == [[1024, 2048], [1024, 2048]]
    assert sorted(metric for _, metric in by) == ["cpu_time", "memory", "time"]


def test_user_plus_system_time_is_the_cpu_time(series_of: SeriesOf) -> None:
    """hyperfine writes both as means over the runs: one value per point."""
    results = [result(f"./sort {n}", parameters={"n": n}, user=user, system=0.25) for n, user in (("10", 0.5),
                                                                                                  ("20", 1.5))]
    cpu = series_of(read(*results))["./sort {n}", "cpu_time"]
    assert cpu.unit == "s" and cpu.values.tolist() == [[0.75], [1.75]] and cpu.note == ""


def test_the_cpu_time_of_a_result_with_failed_runs_is_left_out(series_of: SeriesOf) -> None:
    by = series_of(read_measurements(INPUTS / "failing_runs.json"))
    assert by["./sort-O2 {n}", "cpu_time"].points[:, 0].tolist() == [1, 2]
    results = scan("./sort {n}", "n", ["10", "20"])
    results[1]["exit_codes"] = [0, 1]  # its mean user time includes the failed run
    by = series_of(read(*results))
    assert by["./sort {n}", "cpu_time"].points[:, 0].tolist() == [10]
    assert by["./sort {n}", "time"].repetitions.tolist() == [2, 1]


# --- failed runs and older versions --------------------------------------------------------------------------------

def test_runs_that_failed_are_left_out_with_a_note(series_of: SeriesOf) -> None:
    by = series_of(read_measurements(INPUTS / "failing_runs.json"))
    time = by["./sort-O2 {n}", "time"]
    assert time.points[:, 0].tolist() == [1, 2]  # `sort 0` exits with 2 in every run
    assert time.note == "hyperfine: 3 of 9 run(s) exited with a non-zero code (2) and are left out"


def test_a_run_that_a_signal_ended_is_left_out(series_of: SeriesOf) -> None:
    results = scan("./sort {n}", "n", ["10", "20"])
    results[1]["times"], results[1]["exit_codes"] = [0.1, 0.2, 9.0], [0, 0, None]
    time = series_of(read(*results))["./sort {n}", "time"]
    assert time.values.tolist() == [[0.1, 0.2], [0.1, 0.2]]
    assert time.note == "hyperfine: 1 of 5 run(s) exited with a non-zero code (a signal) and are left out"


def test_a_file_where_every_run_failed_says_so() -> None:
    results = scan("./sort {n}", "n", ["10", "20"])
    for item in results:
        item["exit_codes"] = [1, 1]
    assert error_of(document(*results)) == (
        "hf.json: every run exited with a non-zero code (1): hyperfine kept them because of --ignore-failure, but "
        "they time a failed command; fix: make the command succeed (exit code 0) at every size; when its exit code "
        "says nothing about failure, append `|| true` to the command")


def test_hyperfine_1_6_to_1_10_wrote_one_unnamed_parameter(series_of: SeriesOf) -> None:
    results = [{"command": f"./sort {n}", "mean": 0.1, "stddev": 0.0, "median": 0.1, "user": 0.1, "system": 0.0,
                "min": 0.1, "max": 0.1, "times": [0.1, 0.1], "parameter": value} for n, value in
               (("10", 10), ("20", "20"), ("0.5", 0.5))]
    run = read(*results)
    assert run.parameters == ("parameter",) and kernels(run) == ["./sort {parameter}"]
    assert series_of(run)["./sort {parameter}", "time"].points[:, 0].tolist() == [0.5, 10, 20]


def test_results_without_runs_give_their_median(series_of: SeriesOf) -> None:
    results = scan("./sort {n}", "n", ["10", "20"])
    for item in results:
        del item["times"], item["exit_codes"]
    time = series_of(read(*results))["./sort {n}", "time"]
    assert time.values.tolist() == [[0.1], [0.1]]
    assert time.note == ("hyperfine wrote no run times: the median is the one value at 2 point(s), without "
                         "repetitions")


def test_a_plain_comparison_of_commands_has_no_size() -> None:
    with pytest.raises(InputError) as info:
        read_measurements(INPUTS / "plain_comparison.json")
    assert str(info.value) == (
        f"{INPUTS / 'plain_comparison.json'}: result 1 './sort-O0 50000': the results have no parameters: a "
        "comparison of commands gives no size to model the times over; fix: run hyperfine with --parameter-scan "
        "NAME MIN MAX (or -L NAME V1,V2,...) and {NAME} in the command, so that each result records its size")


def test_a_parameter_without_numbers_gives_no_size() -> None:
    assert error_of(document(*scan("cc-{cc} x.c", "cc", ["gcc", "clang"]))) == (
        "hf.json: result 1 'cc-gcc x.c': no parameter is a number in every result (parameter 'cc' is \"gcc\"); fix: "
        "run hyperfine with --parameter-scan NAME MIN MAX (or -L NAME V1,V2,...) and {NAME} in the command, so that "
        "each result records its size")


# --- errors: one line naming the file, the line and the result -----------------------------------------------------

@pytest.mark.parametrize("bad, message", [
    ({"command": "./sort 20", "mean": 0.1, "max": 0.1, "times": [0.1], "parameters": {"n": "20"}},
     "hf.json:24: result 2 './sort 20': missing key 'min'; fix: add 'min' to this result"),
    (result("./sort 20", times=[0.1, "slow"], parameters={"n": "20"}),
     "hf.json:24: result 2 './sort 20': a value of 'times' must be a number, got 'slow'; fix: correct the result, "
     "or measure again with hyperfine"),
    (result("./sort 20", times=[0.1, -0.2], parameters={"n": "20"}),
     "hf.json:24: result 2 './sort 20': metric 'time' is a time but has a negative value -0.2; fix: times cannot be "
     "negative: correct the value or the timer that produced it"),
    ({**result("./sort 20", parameters={"n": "20"}), "exit_codes": [0]},
     "hf.json:24: result 2 './sort 20': 'exit_codes' must be a list of one code per run (2), got [0]; fix: correct "
     "the result, or measure again with hyperfine"),
    (result("./sort 20", parameters={"n": ["20"]}),
     "hf.json:24: result 2 './sort 20': parameter 'n' must be a string or a number, got a list; fix: write the "
     "parameters as {\"n\": \"1000\", ...}, or measure again with hyperfine"),
    (result("./sort 20", parameters={"n": "1e999"}),
     "hf.json:24: result 2 './sort 20': parameter 'n' must be a finite number, got '1e999'; fix: correct the "
     "parameter's value"),
    (result("./sort 20"),
     "hf.json:24: result 2 './sort 20': the result lacks parameter 'n', which other results have; fix: measure "
     "every command with the same parameters (one hyperfine run gives them all), or model the files separately"),
    ({**result("", parameters={"n": "20"})},
     "hf.json:24: result 2 '': 'command' must be a non-empty string, got \"\"; fix: give every result the command "
     "it measured"),
    ("./sort 20",
     "hf.json:24: result 2: a result must be an object, got a string; fix: write each result as {\"command\": ..., "
     "\"mean\": ..., \"times\": [...], ...}"),
], ids=["missing-min", "time-not-a-number", "negative-time", "exit-codes-per-run", "parameter-not-a-value",
        "parameter-infinite", "parameter-missing", "empty-command", "result-not-an-object"])
def test_a_bad_result_is_named_with_its_line(bad: object, message: str) -> None:
    text = json.dumps({"results": [result("./sort 10", parameters={"n": "10"}), bad]}, indent=2)
    assert error_of(text) == message


@pytest.mark.parametrize("text, message", [
    ('{"results": []}',
     'hf.json: the file lists no results ("results" is empty); fix: check that hyperfine ran the commands to measure'),
    ('{"results": [], "other": 1}',
     'hf.json:1: the file lists no results ("results" is empty); fix: name the file that hyperfine --export-json '
     "FILE wrote"),
    ('{"results": [{"command": "x", "mean": 1}]}',
     "hf.json:1: result 1 lacks 'min', which hyperfine always writes; fix: name the file that hyperfine "
     "--export-json FILE wrote"),
    ('{"results": [\n  {"command": "x",\n',
     "hf.json:3: not valid JSON: Expecting property name enclosed in double quotes (column 1); fix: correct the JSON "
     "syntax on this line (`python -m json.tool FILE` shows where it breaks)"),
], ids=["empty", "empty-with-other-keys", "not-hyperfine", "cut-short"])
def test_a_bad_file_is_one_line(text: str, message: str) -> None:
    assert error_of(text) == message


# --- through the command line -------------------------------------------------------------------------------------

def test_model_and_check_read_a_real_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "models.json"
    assert main(["model", str(INPUTS / "msq_c.json"), "--json", str(out)]) == OK
    models = {m["metric"]: m for m in json.loads(out.read_text())["models"]}
    assert set(models) == {"time", "cpu_time"}
    assert (models["time"]["kernel"], models["time"]["unit"], models["time"]["points"]) == (
        "c-reference/msqueue {num_threads} 7", "s", 16)
    assert main(["check", str(INPUTS / "msq_c.json"), "--baseline", str(INPUTS / "msq_c.json")]) == OK
    assert "c-reference/msqueue {num_threads} 7" in capsys.readouterr().out


def test_a_bad_file_through_the_command_line_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(INPUTS / "plain_comparison.json"), "--baseline", str(INPUTS / "msq_c.json")]) \
        == USAGE_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"scalecheck: error: {INPUTS / 'plain_comparison.json'}: result 1 './sort-O0 50000': the "
                          "results have no parameters") and err.count("\n") == 1 and "Traceback" not in err
