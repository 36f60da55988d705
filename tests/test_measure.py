"""`scalecheck measure`: real commands (small Python scripts run with sys.executable) driven through main(argv), and
as `python -m scalecheck` for the plain case and for Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from scalecheck.cli import INTERRUPTED, OK, USAGE_ERROR, main
from scalecheck.formats import read_measurements
from scalecheck.formats.metric_lines import MetricLineError, parse_metric_line
from scalecheck.measure import FOREIGN_SUFFIXES, default_kernel, progress_line, spell

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
FAST = [PY, "-S"]  # no site import: a child starts in ~15 ms instead of ~70 ms

# Sleeps p milliseconds; reports kernel solve's time through descriptor 3 and its bytes through the path.
BENCH = """\
import json, os, sys, time
p = float(sys.argv[1])
time.sleep(p / 1000)
os.write(int(os.environ["SCALECHECK_METRICS_FD"]),
         (json.dumps({"kernel": "solve", "unit": "s", "value": p / 1000}) + "\\n").encode())
with open(os.environ["SCALECHECK_METRICS"], "a") as f:
    f.write(json.dumps({"kernel": "solve", "metric": "bytes", "values": [8 * p, 8 * p]}) + "\\n")
"""


def script(tmp_path: Path, body: str, name: str = "bench.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def measurements(path: Path) -> dict[tuple[str, str], dict[float, list[float]]]:
    """(kernel, metric) -> {p: values} of a one-parameter file, read as plain JSON."""
    doc = json.loads(path.read_text())
    out: dict[tuple[str, str], dict[float, list[float]]] = {}
    for m in doc["measurements"]:
        out.setdefault((m["kernel"], m["metric"]), {})[m["point"]["p"]] = m["values"]
    return out


@pytest.mark.wall_clock
def test_measure_writes_a_file_that_model_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench, out = script(tmp_path, BENCH), tmp_path / "m.json"
    assert main(["measure", "--param", "p=1,2,4", "--repeat", "2", "--out", str(out), "--commit", "abc1234",
                 "--", PY, bench, "{p}"]) == OK
    captured = capsys.readouterr()
    assert captured.err == ""  # not a terminal: no progress bar
    assert captured.out.startswith("measured 6 runs (3 points x 2 repetitions) in ")
    assert captured.out.endswith(f" s; wrote {out}\n")
    doc = json.loads(out.read_text())
    assert doc["scalecheck"] == 1 and doc["parameters"] == ["p"]
    assert doc["meta"] == {"machine": doc["meta"]["machine"], "commit": "abc1234"}
    assert set(doc["meta"]["machine"]) == {"cpu", "cores", "os", "host"}  # the fingerprint, an object in the file
    assert doc["meta"]["machine"]["cores"] == str(os.cpu_count())
    found = measurements(out)
    assert sorted(found) == [("bench.py", "time"), ("solve", "bytes"), ("solve", "time")]
    wall = found[("bench.py", "time")]
    assert sorted(wall) == [1, 2, 4] and all(len(v) == 2 for v in wall.values())
    assert all(0.001 * p <= t < 5 for p, values in wall.items() for t in values)  # at least the sleep
    assert found[("solve", "time")] == {p: [p / 1000] * 2 for p in (1, 2, 4)}
    assert found[("solve", "bytes")] == {p: [8.0 * p] * 4 for p in (1, 2, 4)}
    assert {m["unit"] for m in doc["measurements"] if m["metric"] == "time"} == {"s"}
    run = read_measurements(out)
    assert [int(r) for s in run.series for r in s.repetitions] == [2] * 3 + [2] * 3 + [4] * 3
    assert main(["model", str(out)]) == OK
    table = capsys.readouterr().out
    assert "solve" in table and "bench.py" in table
    assert sorted(tmp_path.iterdir()) == [tmp_path / "bench.py", out]  # no temp file left beside the output


def test_points_run_in_rounds_with_values_in_arguments_and_environment(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    probe = script(tmp_path, f"""\
        import os, sys
        env = os.environ
        with open({str(log)!r}, "a") as f:
            f.write(" ".join(sys.argv[1:] + [env["p"], env["n"], env["SCALECHECK_METRICS_FD"],
                                             str(os.path.exists(env["SCALECHECK_METRICS"]))]) + "\\n")
        os.write(3, b'{{"kernel": "probe", "metric": "fd", "value": 3}}\\n')
        """)
    out = tmp_path / "m.json"
    assert main(["measure", "--param", "p=1,2", "--param", "n=1e3,0.50", "--repeat", "2", "--out", str(out),
                 "--", *FAST, probe, "{p}", "x{n}", "{{p}}"]) == OK
    point = ["1 x1000 {p} 1 1000", "1 x0.5 {p} 1 0.5", "2 x1000 {p} 2 1000", "2 x0.5 {p} 2 0.5"]
    assert log.read_text().splitlines() == [f"{line} 3 True" for line in point] * 2  # rounds, first --param slowest
    doc = json.loads(out.read_text())
    assert doc["parameters"] == ["p", "n"]
    assert sorted((m["point"]["p"], m["point"]["n"]) for m in doc["measurements"] if m["kernel"] == "probe") == [
        (1, 0.5), (1, 1000), (2, 0.5), (2, 1000)]
    assert all(m["values"] == [3.0, 3.0] for m in doc["measurements"] if m["kernel"] == "probe")


def test_metrics_temp_files_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read TMPDIR
    paths = tmp_path / "paths.txt"
    probe = script(tmp_path, f"import os; open({str(paths)!r}, 'a').write(os.environ['SCALECHECK_METRICS'] + '\\n')")
    assert main(["measure", "--param", "p=1,2", "--repeat", "1", "--out", str(tmp_path / "m.json"),
                 "--kernel", "k", "--", *FAST, probe]) == OK
    used = paths.read_text().split()
    assert len(set(used)) == 2 and all(Path(p).parent == temp for p in used)  # a fresh file per run
    assert list(temp.iterdir()) == []


def test_appending_keeps_earlier_measurements(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench, out = script(tmp_path, BENCH), tmp_path / "m.json"
    argv = ["measure", "--param", "p=1,2", "--repeat", "2", "--out", str(out), "--commit", "c1"]
    assert main([*argv, "--", *FAST, bench, "{p}"]) == OK
    before = measurements(out)
    capsys.readouterr()
    assert main([*argv[:2], "p=2,3", "--repeat", "1", *argv[5:], "--", *FAST, bench, "{p}"]) == OK
    assert capsys.readouterr().out.endswith(f" s; added them to {out}\n")
    after = measurements(out)
    kernel = next(key for key in after if key[0] != "solve")  # python -S bench.py: the interpreter's name
    assert after[kernel][1] == before[kernel][1]  # untouched point, values bit for bit
    assert after[kernel][2][:2] == before[kernel][2] and len(after[kernel][2]) == 3  # a third repetition
    assert len(after[kernel][3]) == 1
    assert after[("solve", "bytes")][2] == [16.0] * 6
    assert json.loads(out.read_text())["meta"]["commit"] == "c1"


def test_each_value_keeps_its_round_and_an_added_session_continues_the_rounds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench, out = script(tmp_path, BENCH), tmp_path / "m.json"
    argv = ["measure", "--param", "p=1,2", "--out", str(out)]
    assert main([*argv, "--repeat", "2", "--", *FAST, bench, "{p}"]) == OK
    assert main([*argv, "--repeat", "1", "--", *FAST, bench, "{p}"]) == OK
    capsys.readouterr()
    records = json.loads(out.read_text())["measurements"]
    assert {(r["kernel"], r["point"]["p"]): r["rounds"] for r in records if r["kernel"] != "solve"} == {
        (records[0]["kernel"], 1): [1, 2, 3], (records[0]["kernel"], 2): [1, 2, 3]}
    bytes_rounds = [r["rounds"] for r in records if r["kernel"] == "solve" and r["metric"] == "bytes"]
    assert bytes_rounds and all(sorted(set(rounds)) == [1, 2, 3] for rounds in bytes_rounds)


def test_machine_name_from_the_environment_is_kept_when_appending(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "m.json"
    noop = script(tmp_path, "")
    argv = ["measure", "--param", "p=1", "--repeat", "1", "--out", str(out), "--", *FAST, noop]
    monkeypatch.setenv("SCALECHECK_MACHINE", "perf-box-1")
    assert main(argv) == OK
    assert json.loads(out.read_text())["meta"]["machine"] == "perf-box-1"
    monkeypatch.delenv("SCALECHECK_MACHINE")
    assert main([*argv[:2], "p=2", *argv[3:]]) == OK  # this machine's fingerprint would be an object
    doc = json.loads(out.read_text())
    assert doc["meta"]["machine"] == "perf-box-1"
    assert [m["point"]["p"] for m in doc["measurements"]] == [1, 2]


def test_appending_to_a_file_without_machine_adds_the_fingerprint(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    out.write_text('{"scalecheck": 1, "parameters": ["p"], "meta": {"commit": "c1"}, '
                   '"measurements": [{"kernel": "other", "point": {"p": 1}, "values": [1.0]}]}')
    assert main(["measure", "--param", "p=1", "--repeat", "1", "--out", str(out), "--commit", "c1",
                 "--", *FAST, script(tmp_path, "")]) == OK
    meta = json.loads(out.read_text())["meta"]
    assert meta["commit"] == "c1" and {"cpu", "cores", "os", "host"} <= set(meta["machine"])


def test_appending_with_parameters_in_another_order_keeps_the_files_order(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    noop = script(tmp_path, "")
    assert main(["measure", "--param", "p=1", "--param", "n=5", "--repeat", "1", "--out", str(out),
                 "--", *FAST, noop]) == OK
    assert main(["measure", "--param", "n=6", "--param", "p=1", "--repeat", "1", "--out", str(out),
                 "--", *FAST, noop]) == OK
    doc = json.loads(out.read_text())
    assert doc["parameters"] == ["p", "n"]
    assert [m["point"] for m in doc["measurements"]] == [{"p": 1, "n": 5}, {"p": 1, "n": 6}]


def errors_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == USAGE_ERROR
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.err


def test_mismatched_parameters_are_an_error_before_anything_runs(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out, marker = tmp_path / "m.json", tmp_path / "ran"
    touch = script(tmp_path, f"open({str(marker)!r}, 'a').write('x')")
    assert main(["measure", "--param", "p=1", "--repeat", "1", "--out", str(out), "--", *FAST, touch]) == OK
    marker.unlink()
    before = out.read_text()
    err = errors_of(["measure", "--param", "p=1", "--param", "n=2", "--out", str(out), "--", *FAST, touch], capsys)
    assert err == (f"scalecheck: error: {out}: the file has parameters (p), but --param gives (p, n)"
                   "; fix: measure the same parameters, or choose another --out\n")
    assert not marker.exists() and out.read_text() == before


@pytest.mark.parametrize("content, message", [
    ("not json at all\n", ":1: not valid JSON: Expecting value"),
    ('{"scalecheck": 1, "parameters": ["p"], "measurements": [{"kernel": "k", "point": {"p": 1}, "values": ["x"]}]}',
     "the measured value must be a number, got 'x'"),
    ('{"kernel": "k", "point": {"p": 1}, "value": 1}\n{"kernel": "k", "point": {"p": 2}, "value": 1}\n',
     "the file is in format jsonl; measure adds only to scalecheck JSON files"),
    ('{"scalecheck": 1, "parameters": ["p"], "measurements": [{"kernel": "k", "point": {"p": 1}, "values": [1]}],'
     ' "processes": [{"id": "0", "paths": ["a->b"]}]}', "the file has a processes section"),
])
def test_an_unusable_output_file_is_an_error_before_anything_runs(content: str, message: str, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out, marker = tmp_path / "m.json", tmp_path / "ran"
    out.write_text(content)
    touch = script(tmp_path, f"open({str(marker)!r}, 'a').write('x')")
    err = errors_of(["measure", "--param", "p=1", "--out", str(out), "--", *FAST, touch], capsys)
    assert err.startswith(f"scalecheck: error: {out}") and message in err and "; fix: " in err
    assert not marker.exists() and out.read_text() == content


def test_another_commit_in_the_output_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, noop = tmp_path / "m.json", script(tmp_path, "")
    argv = ["measure", "--param", "p=1", "--repeat", "1", "--out", str(out)]
    assert main([*argv, "--commit", "aaa", "--", *FAST, noop]) == OK
    err = errors_of([*argv, "--commit", "bbb", "--", *FAST, noop], capsys)
    assert err == (f"scalecheck: error: {out}: the file holds measurements of commit aaa, not bbb"
                   "; fix: choose another --out for another commit\n")


@pytest.mark.parametrize("args, message", [
    (["--param", "p=1", "--", "echo", "{q}"],
     "the command uses {q}, but there is no parameter 'q' (parameters: p)"
     "; fix: add --param q=..., or write {{q}} for literal braces\n"),
    (["--param", "p=1", "--", "echo", "{}"],
     "the command uses {}, but it names no parameter (parameters: p); fix: "),
    (["--param", "p=1", "--", "echo", "{p:03d}"],
     "the command argument '{p:03d}' has '{p:03d}': format specifications are not supported; fix: "),
    (["--param", "p=1", "--", "echo", "a}b"], "the command argument 'a}b' has an unmatched brace"),
    (["--param", "p=1", "--shell", "--", "echo", "{p", "}"], "the command uses {p }, but there is no parameter 'p '"),
    (["--param", "p", "--", "echo"], "--param 'p': expected NAME=VALUES; fix: "),
    (["--param", "2p=1", "--", "echo"], "--param '2p=1': '2p' is not a valid parameter name; fix: "),
    (["--param", "SCALECHECK_X=1", "--", "echo"], "--param 'SCALECHECK_X=1': names starting with SCALECHECK_ are "
                                                  "reserved; fix: "),
    (["--param", "p=1,x", "--", "echo"], "--param 'p=1,x': 'x' is not a number; fix: "),
    (["--param", "p=", "--", "echo"], "--param 'p=': a value is empty; fix: "),
    (["--param", "p=4,0", "--", "echo"], "--param 'p=4,0': values must be positive numbers, got 0; fix: "),
    (["--param", "p=1,nan", "--", "echo"], "--param 'p=1,nan': values must be positive numbers, got nan; fix: "),
    (["--param", "p=1,2,1.0", "--", "echo"], "--param 'p=1,2,1.0': value 1 is given twice; fix: "),
    (["--param", "p=1", "--param", "p=2", "--", "echo"], "--param p is given twice; fix: "),
    (["--param", "p=1", "--repeat", "0", "--", "echo"], "--repeat must be at least 1, got 0; fix: "),
    (["--param", "p=1", "--timeout", "0", "--", "echo"],
     "--timeout must be a positive number of seconds, got 0; fix: "),
    (["--param", "p=1", "--kernel", " ", "--", "echo"], "--kernel is empty; fix: "),
    (["--param", "p=1"], "no command given; fix: put the command after --, e.g. -- ./bench {p}\n"),
    (["--param", "p=1", "--", "no-such-program-4711", "{p}"],
     "cannot run 'no-such-program-4711': not found on PATH"
     "; fix: check the spelling, or give its path (./no-such-program-4711)\n"),
    (["--param", "p=1", "--", "./no/such/program"], "cannot run './no/such/program': no such file; fix: "),
    (["--param", "p=1,2", "--", "no-such-{p}"], "cannot run 'no-such-1': not found on PATH; fix: "),
])
def test_usage_errors_name_the_problem(args: list[str], message: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    err = errors_of(["measure", "--out", str(out), *args], capsys)
    assert err.startswith("scalecheck: error: " + message)
    assert not out.exists()


@pytest.mark.parametrize("name", ["m.csv", "m.jsonl", "M.NDJSON"])
def test_output_names_read_as_another_format_are_refused(name: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    err = errors_of(["measure", "--param", "p=1", "--out", str(tmp_path / name), "--", "true"], capsys)
    assert "measure writes scalecheck JSON" in err and "fix: name the output file *.json" in err


def test_foreign_suffixes_are_the_ones_detect_format_reads_by_name(tmp_path: Path) -> None:
    from scalecheck.formats import detect_format

    for suffix in FOREIGN_SUFFIXES:
        assert detect_format(tmp_path / f"x{suffix}") != "scalecheck-json"


def test_output_folder_must_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "no" / "m.json"
    err = errors_of(["measure", "--param", "p=1", "--out", str(out), "--", "true"], capsys)
    assert err == (f"scalecheck: error: cannot write {out}: folder {out.parent} does not exist"
                   "; fix: create the folder first, or choose another --out\n")


def test_an_output_name_the_system_refuses_is_an_error_line(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"{'m' * 300}.json"  # longer than a file name may be: looking it up fails with ENAMETOOLONG
    err = errors_of(["measure", "--param", "p=1", "--out", str(out), "--", "true"], capsys)
    assert err == f"scalecheck: error: cannot write {out}: File name too long; fix: choose a shorter --out\n"


def test_program_that_is_not_executable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = script(tmp_path, "print('hi')")
    err = errors_of(["measure", "--param", "p=1", "--out", str(tmp_path / "m.json"), "--", plain], capsys)
    assert err.startswith(f"scalecheck: error: cannot run '{plain}': not an executable file"
                          f"; fix: make it executable (chmod +x {plain}), or run it through its interpreter\n")


def test_program_that_cannot_be_executed_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    no_shebang = tmp_path / "no_shebang"
    no_shebang.write_text("echo hi\n")
    no_shebang.chmod(0o755)
    out = tmp_path / "m.json"
    err = errors_of(["measure", "--param", "p=1", "--out", str(out), "--", str(no_shebang), "{p}"], capsys)
    assert err == (f"scalecheck: error: cannot run {no_shebang} 1: Exec format error"
                   "; fix: check that the program exists and is executable\n")
    assert not out.exists()


FAILS_AT_4 = """\
import sys, time
p = int(sys.argv[1])
if p == 4:
    for i in range(30):
        print(f"line {i} \\x1b[31mred\\x1b[0m", file=sys.stderr)
    sys.exit(3)
"""


def test_a_failing_run_stops_and_keeps_the_runs_before_it(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    fails, out = script(tmp_path, FAILS_AT_4), tmp_path / "m.json"
    err = errors_of(["measure", "--param", "p=1,2,4,8", "--repeat", "2", "--out", str(out), "--kernel", "k",
                     "--", *FAST, fails, "{p}"], capsys)
    lines = err.splitlines()
    assert lines[0] == (f"scalecheck: error: run 3/8 failed (exit status 3) at p=4, repetition 1/2: "
                        f"{PY} -S {fails} 4")
    assert lines[1] == "  stderr, last 20 lines:"
    assert lines[2:22] == [f"  | line {i} \\x1b[31mred\\x1b[0m" for i in range(10, 30)]
    assert lines[22:] == [f"scalecheck: stopped; kept 2 of 8 runs in {out}",
                          "  fix: correct the command, or pass --keep-going to skip failed runs"]
    found = measurements(out)  # valid JSON, with the runs before the failure and nothing of it
    assert list(found) == [("k", "time")] and {p: len(v) for p, v in found[("k", "time")].items()} == {1: 1, 2: 1}


def test_keep_going_skips_failed_runs_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fails, out = script(tmp_path, FAILS_AT_4), tmp_path / "m.json"
    assert main(["measure", "--param", "p=1,2,4,8", "--repeat", "2", "--out", str(out), "--kernel", "k",
                 "--keep-going", "--", *FAST, fails, "{p}"]) == USAGE_ERROR
    captured = capsys.readouterr()
    assert captured.out.startswith("measured 6 of 8 runs (4 points x 2 repetitions) in ")
    reports = [line for line in captured.err.splitlines() if line.startswith("scalecheck:")]
    assert reports == [f"scalecheck: run 3/8 failed (exit status 3) at p=4, repetition 1/2: {PY} -S {fails} 4",
                       f"scalecheck: run 7/8 failed (exit status 3) at p=4, repetition 2/2: {PY} -S {fails} 4",
                       f"scalecheck: error: 2 of 8 runs failed (reported above); kept 6 of 8 runs in {out}"]
    wall = measurements(out)[("k", "time")]
    assert {p: len(v) for p, v in wall.items()} == {1: 2, 2: 2, 8: 2}


@pytest.mark.wall_clock
def test_timeout_kills_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slow, out = script(tmp_path, "import sys, time\nprint('started', file=sys.stderr, flush=True)\n"
                                 "time.sleep(30 if sys.argv[1] == '2' else 0)\n"), tmp_path / "m.json"
    start = time.perf_counter()
    err = errors_of(["measure", "--param", "p=1,2,3", "--repeat", "1", "--timeout", "0.5", "--out", str(out),
                     "--kernel", "k", "--", *FAST, slow, "{p}"], capsys)
    assert time.perf_counter() - start < 5
    assert err.splitlines()[:3] == [
        f"scalecheck: error: run 2/3 failed (timed out after 0.5 s) at p=2, repetition 1/1: {PY} -S {slow} 2",
        "  stderr, last 1 line:", "  | started"]
    assert sorted(measurements(out)[("k", "time")]) == [1]


def test_shell_runs_one_string_through_the_shell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    assert main(["measure", "--param", "p=1,2", "--repeat", "1", "--out", str(out), "--shell", "--",
                 "echo '{{\"kernel\": \"sh\", \"metric\": \"p\", \"value\": {p}}}' >> \"$SCALECHECK_METRICS\"",
                 "&& test", "$p", "=", "{p}"]) == OK
    found = measurements(out)
    assert found[("sh", "p")] == {1: [1.0], 2: [2.0]}
    assert sorted(found[("echo", "time")]) == [1, 2]  # the default kernel: the command's first word


def test_shell_failure_shows_the_shells_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = errors_of(["measure", "--param", "p=1", "--out", str(tmp_path / "m.json"), "--shell", "--",
                     "no-such-program-4711 {p}"], capsys)
    assert err.startswith("scalecheck: error: run 1/5 failed (exit status 127) at p=1, repetition 1/5: "
                          "no-such-program-4711 1\n")
    assert "no-such-program-4711" in err.splitlines()[2]


@pytest.mark.parametrize("line, problem", [
    ('{"kernel": "solve", "value": "fast"}', '"fast" is not a finite number'),
    ('{"kernel": "solve", "valeu": 1}', "unknown key 'valeu'"),
    ("[1, 2]", "expected a JSON object, got list"),
    ('{"kernel": "solve", "value": 1', "not JSON: Expecting ',' delimiter (column 31)"),
    ('{"value": 1}', "missing key 'kernel'"),
    ('{"kernel": "solve"}', "missing key 'value' (or 'values')"),
    ('{"kernel": "solve", "value": 1, "values": [1]}', "both 'value' and 'values'"),
    ('{"kernel": "solve", "values": []}', "'values' must be a non-empty list of numbers"),
    ('{"kernel": "solve", "value": true}', "true is not a finite number"),
    ('{"kernel": "solve", "value": NaN}', "NaN is not a finite number"),
    ('{"kernel": "solve", "value": -1}', "metric 'time' is a time but has a negative value -1"),
    ('{"kernel": "solve", "metric": "", "value": 1}', "'metric' must be a non-empty string"),
    ('{"kernel": "solve", "unit": 1, "value": 1}', "'unit' must be a string"),
])
def test_parse_metric_line_rejects_bad_lines(line: str, problem: str) -> None:
    with pytest.raises(MetricLineError) as info:
        parse_metric_line(7, line)
    assert info.value.problem == problem and info.value.number == 7 and info.value.text == line
    assert info.value.fix


def test_parse_metric_line_defaults() -> None:
    line = parse_metric_line(1, '{"kernel": "solve", "values": [1, 2.5]}')
    assert (line.kernel, line.metric, line.unit, line.values) == ("solve", "time", "", (1.0, 2.5))


def test_a_malformed_metrics_line_stops_and_keeps_nothing_of_that_run(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    bad, out = script(tmp_path, """\
        import os, sys
        with open(os.environ["SCALECHECK_METRICS"], "a") as f:
            f.write('{"kernel": "solve", "value": 1}\\n\\n')
            if sys.argv[1] == "2":
                f.write('{"kernel": "solve", "value": "\\x1b[2J"}\\n')
        """), tmp_path / "m.json"
    err = errors_of(["measure", "--param", "p=1,2,3", "--repeat", "2", "--keep-going", "--kernel", "k",
                     "--out", str(out), "--", *FAST, bad, "{p}"], capsys)
    assert err == (f"scalecheck: error: {PY} -S {bad} 2 at p=2, repetition 1/2: $SCALECHECK_METRICS line 3: "
                   'not JSON: Invalid control character at (column 31); '
                   'line 3: {"kernel": "solve", "value": "\\x1b[2J"}'
                   '; fix: write one JSON object per line, e.g. {"kernel": "solve", "metric": "time", "unit": "s", '
                   '"value": 0.12}\n')
    found = measurements(out)
    assert {key: sorted(v) for key, v in found.items()} == {("k", "time"): [1], ("solve", "time"): [1]}


@pytest.mark.parametrize("lines, problem", [
    (['{"kernel": "k", "value": 1}'], "kernel 'k', metric 'time' is the wall time scalecheck records itself"),
    (['{"kernel": "a", "unit": "s", "value": 1}', '{"kernel": "a", "unit": "ms", "value": 1}'],
     "unit 'ms', but kernel 'a', metric 'time' is in 's'"),
])
def test_metrics_lines_must_agree_with_the_measurement(lines: list[str], problem: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    text = "".join(line + "\n" for line in lines)
    writes = script(tmp_path, f"import os\nopen(os.environ['SCALECHECK_METRICS'], 'a').write({text!r})\n")
    err = errors_of(["measure", "--param", "p=1", "--kernel", "k", "--out", str(tmp_path / "m.json"),
                     "--", *FAST, writes], capsys)
    assert f": $SCALECHECK_METRICS line {len(lines)}: {problem}; line {len(lines)}: " in err


@pytest.mark.wall_clock
def test_progress_bar_only_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    noop = script(tmp_path, "")
    assert main(["measure", "--param", "p=1,2", "--repeat", "1", "--out", str(tmp_path / "m.json"),
                 "--", *FAST, noop, "{p}"]) == OK
    shown = terminal.getvalue()
    frames = shown.split("\r")
    assert frames[1].startswith("measure [--------------------] 1/2 p=1 rep 1/1 0.")
    assert frames[2].startswith("measure [##########----------] 2/2 p=2 rep 1/1 0.")
    assert frames[-1] == "" and frames[-2].strip() == ""  # cleared at the end
    assert capsys.readouterr().out.startswith("measured 2 runs")


def test_progress_line_fits_the_width() -> None:
    from scalecheck.measure import Step

    step = Step(14, 40, (("p", 8.0),), 2, 5, ("bench",))
    assert progress_line(step, 3.14) == "measure [######--------------] 14/40 p=8 rep 2/5 3.1s"
    assert len(progress_line(step, 3.14, width=30)) < 30


@pytest.mark.parametrize("command, shell, kernel", [
    (["./solver", "{p}"], False, "solver"),
    (["/usr/bin/python3", "bench/run.py", "{p}"], False, "run.py"),
    (["python3.12", "-u", "run.py"], False, "python3.12"),
    (["pypy3", "x.py"], False, "x.py"),
    (["mpirun -n {p} ./a.out"], True, "mpirun"),
    (["python3 'my bench.py' {p}"], True, "my bench.py"),
])
def test_default_kernel(command: list[str], shell: bool, kernel: str) -> None:
    assert default_kernel(command, shell) == kernel


def test_values_are_spelled_canonically() -> None:
    assert [spell(v) for v in (1e3, 0.5, 8.0, 1e20, 2.0**53)] == ["1000", "0.5", "8", "1e+20",
                                                                   "9007199254740992.0"]


def test_python_m_scalecheck_measure(tmp_path: Path) -> None:
    bench = script(tmp_path, BENCH)
    done = subprocess.run([PY, "-m", "scalecheck", "measure", "--param", "p=1,2", "--repeat", "1", "--",
                           *FAST, bench, "{p}"], capture_output=True, text=True, cwd=tmp_path, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == OK, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("measured 2 runs (2 points x 1 repetition) in ")
    assert done.stdout.endswith(" s; wrote measurements.json\n")
    assert sorted(measurements(tmp_path / "measurements.json")[("solve", "time")]) == [1, 2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is not running


@pytest.mark.wall_clock
@pytest.mark.skipif(os.name != "posix", reason="SIGINT to another process")
def test_ctrl_c_keeps_the_completed_runs_and_exits_130(tmp_path: Path) -> None:
    started, out, temp = tmp_path / "started.txt", tmp_path / "m.json", tmp_path / "tmp"
    temp.mkdir()
    # the first two runs return at once; the third sleeps until it is stopped
    slow = script(tmp_path, f"""\
        import os, time
        with open({str(started)!r}, "a") as f:
            f.write(f"{{os.getpid()}}\\n")
        if len(open({str(started)!r}).read().split()) > 2:
            time.sleep(30)
        """)
    proc = subprocess.Popen([PY, "-m", "scalecheck", "measure", "--param", "p=1,2", "--repeat", "10", "--out", str(out),
                             "--kernel", "k", "--", *FAST, slow], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env={**os.environ, "TMPDIR": str(temp)})
    try:
        deadline = time.monotonic() + 10
        while not (started.exists() and len(started.read_text().split()) == 3) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(started.read_text().split()) == 3, "the third run never started"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == INTERRUPTED, stderr
    assert stderr == f"scalecheck: interrupted; kept 2 of 20 runs in {out}\n" and stdout == ""
    assert {p: len(v) for p, v in measurements(out)[("k", "time")].items()} == {1: 1, 2: 1}
    assert not _alive(int(started.read_text().split()[2]))  # the running command was stopped and reaped
    assert list(temp.iterdir()) == []


@pytest.mark.skipif(os.name != "posix", reason="the metrics descriptor is a POSIX feature")
def test_the_parents_own_descriptor_3_is_never_borrowed(tmp_path: Path) -> None:
    """A thread of the measuring process that uses descriptor 3 (pytest-xdist's channel, say) keeps it while
    children are started: the metrics file reaches descriptor 3 in the child only."""
    import threading

    bench, out = script(tmp_path, BENCH), tmp_path / "m.json"
    read_end, write_end = os.pipe()
    saved = os.dup(3) if _is_open(3) else None
    os.dup2(write_end, 3)
    stop, writes = threading.Event(), [0]

    def write_to_3() -> None:
        while not stop.is_set():
            os.write(3, b"x")
            writes[0] += 1
            time.sleep(0.0005)

    writer = threading.Thread(target=write_to_3)
    writer.start()
    try:
        assert main(["measure", "--param", "p=1,2,3", "--repeat", "3", "--out", str(out), "--", *FAST, bench,
                     "{p}"]) == OK
    finally:
        stop.set()
        writer.join()
        os.close(write_end)
        if saved is None:
            os.close(3)
        else:
            os.dup2(saved, 3)
            os.close(saved)
    received = b""
    while chunk := os.read(read_end, 65536):
        received += chunk
    os.close(read_end)
    assert writes[0] > 0 and received == b"x" * writes[0]  # every write of the thread reached its own pipe
    assert measurements(out)[("solve", "time")] == {1.0: [0.001] * 3, 2.0: [0.002] * 3, 3.0: [0.003] * 3}


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
