"""`scalecheck model` driven through main(argv): output, JSON contract, exit codes, one-line errors."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from scalecheck import cli
from scalecheck.cli import INTERNAL_ERROR, INTERRUPTED, OK, OUTPUT_CLOSED, USAGE_ERROR, main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "mpi_data_mean.txt"


def test_model_prints_ranked_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", str(EXAMPLE), "--target", "p=65536"]) == OK
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:6] == ["kernel", "metric", "model", "SMAPE", "%", "adj"]
    assert out[0].rstrip().endswith("at p=65536")
    rows = [line for line in out[2:] if line.strip()]
    assert len(rows) == 14
    allreduce = next(line for line in rows if line.startswith("IntelMPI->MPI_Allreduce "))
    assert "* p^(3/4)" in allreduce


def test_model_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "models.json"
    assert main(["model", str(EXAMPLE), "--target", "p=65536", "--json", str(out)]) == OK
    doc = json.loads(out.read_text())
    assert doc["scalecheck"] == 1 and doc["parameters"] == ["p"] and doc["target"] == {"p": 65536.0}
    assert len(doc["models"]) == 14
    predictions = [m["prediction"] for m in doc["models"]]
    assert predictions == sorted(predictions, reverse=True)
    model = next(m for m in doc["models"] if m["kernel"] == "IntelMPI->MPI_Allreduce")
    assert {"kernel", "metric", "formula", "constant", "terms", "smape", "rss", "ar2", "points", "prediction"} <= set(model)
    assert model["points"] == 5 and model["metric"] == "time"
    [term] = model["terms"]
    assert term["factors"] == [{"parameter": "p", "exponent": 0.75, "log_exponent": 0}]
    expected = model["constant"] + term["coefficient"] * 65536**0.75
    assert model["prediction"] == pytest.approx(expected)
    assert list(tmp_path.iterdir()) == [out]  # no temp file left behind


def test_model_filters_kernels_and_metrics(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    assert main(["model", str(EXAMPLE), "--kernel", "IntelMPI->*", "--metric", "time", "--json", str(out)]) == OK
    assert {m["kernel"].split("->")[0] for m in json.loads(out.read_text())["models"]} == {"IntelMPI"}


def test_model_without_target_ranks_by_growth(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", str(EXAMPLE)]) == OK
    rows = capsys.readouterr().out.splitlines()[2:]
    assert rows[0].split()[0] == "OpenMPI->MPI_Bcast"  # p^3 * log2(p) grows fastest
    assert rows[-1].split()[0] == "OpenMPI->MPI_Barrier"  # log2(p) slowest


def test_insufficient_kernel_is_listed_while_others_are_modeled(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "m.csv"
    rows = ["kernel,p,value"] + [f"good,{p},{2 * p + r}" for p in (4, 8, 16, 32) for r in (0, 0.1)]
    rows += [f"short,{p},{p}" for p in (4, 8)]
    data.write_text("\n".join(rows) + "\n")
    assert main(["model", str(data)]) == OK
    out = capsys.readouterr().out
    json_out = tmp_path / "m.json"
    assert main(["model", str(data), "--target", "p=64", "--json", str(json_out)]) == OK
    short = next(m for m in json.loads(json_out.read_text())["models"] if m["kernel"] == "short")
    assert short["status"] == "insufficient" and short["prediction"] is None and short["formula"] is None
    assert [line.split() for line in out.splitlines() if line.startswith("short ")] == [["short", "time",
                                                                                          "(insufficient)"]]
    assert "short [time]: 2 distinct value(s) of p, a model needs at least 3" in out
    assert "good" in out and "* p" in out


@pytest.mark.parametrize("args, message", [
    (["--target", "pp=5"], "scalecheck: error: --target names parameter 'pp', which the measurements do not have"
                           "; fix: did you mean 'p'?\n"),
    (["--target", "p=abc"], "scalecheck: error: --target: cannot read 'p=abc'; fix: "),
    (["--metric", "bytes"], "scalecheck: error: no measurements match metric bytes (the file has time); fix: "),
    (["--kernel", "nope*"], "scalecheck: error: no measurements match kernel nope* (the file has IntelMPI->"),
    (["--exponents", "1,x"], "scalecheck: error: --exponents holds a string ('x'), which is not a number or a "
                              "fraction; fix: "),
    (["--max-terms", "0"], "scalecheck: error: --max-terms must be at least 1, got 0; fix: "),
])
def test_model_bad_options_are_one_line_errors(args: list[str], message: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", str(EXAMPLE), *args]) == USAGE_ERROR
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert "Traceback" not in err


def test_missing_file_is_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", str(tmp_path / "nope.json")]) == USAGE_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"scalecheck: error: {tmp_path / 'nope.json'}: ") and "Traceback" not in err


def test_json_into_missing_folder_is_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", str(EXAMPLE), "--json", str(tmp_path / "no" / "m.json")]) == USAGE_ERROR
    assert "folder" in capsys.readouterr().err


def test_json_is_not_half_written_on_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    out.write_text("previous")
    assert main(["model", str(tmp_path / "missing.txt"), "--json", str(out)]) == USAGE_ERROR
    assert out.read_text() == "previous"


def test_unknown_format_option_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["model", str(EXAMPLE), "--format", "xml"])
    assert info.value.code == USAGE_ERROR
    assert "invalid choice: 'xml'" in capsys.readouterr().err


def test_crash_is_internal_error_not_regression(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import scalecheck.modeling

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(scalecheck.modeling, "fit_models", boom)
    assert main(["model", str(EXAMPLE)]) == INTERNAL_ERROR
    assert "internal error" in capsys.readouterr().err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == USAGE_ERROR
    assert "model" in capsys.readouterr().out


def test_cli_format_names_match_readers() -> None:
    from scalecheck.formats import ARCHIVE_FORMATS, FORMATS

    assert cli.FORMAT_NAMES == tuple(FORMATS) + tuple(ARCHIVE_FORMATS)


def test_cli_aggregate_choices_match_the_model_search() -> None:
    from scalecheck.core.search import AGGREGATE_NAMES

    assert cli.AGGREGATE_NAMES == AGGREGATE_NAMES
    for command in ("model", "check"):
        action = next(a for a in cli.build_parser()._subparsers._group_actions[0].choices[command]._actions
                      if a.dest == "aggregate")
        assert tuple(action.choices) == AGGREGATE_NAMES


def test_python_m_scalecheck_runs_and_help_is_light() -> None:
    done = subprocess.run([sys.executable, "-m", "scalecheck", "model", str(EXAMPLE), "--kernel", "*Bcast"],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == OK, done.stderr
    assert "IntelMPI->MPI_Bcast" in done.stdout
    probe = "import sys, scalecheck.cli; scalecheck.cli.build_parser(); print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def closed_stdout_run(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m scalecheck ARGS | true`, without the race: the reader's end is closed before scalecheck starts."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "scalecheck", *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT, check=False, timeout=60)
    finally:
        os.close(write)


# a command's output cut short is 141 (128 + SIGPIPE, as for `git log | head`); help that could not be shown is
# argparse's affair, which ignores the failed write and exits 0
@pytest.mark.parametrize("args, status", [(["model", str(EXAMPLE)], OUTPUT_CLOSED), (["--help"], OK),
                                          (["model", "--help"], OK)], ids=["model", "help", "command-help"])
def test_a_closed_output_pipe_ends_quietly(args: list[str], status: int) -> None:
    done = closed_stdout_run(*args)
    assert (done.returncode, done.stderr) == (status, "")


def test_a_pipe_closed_while_writing_ends_quietly(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Gone())
    assert main(["model", str(EXAMPLE)]) == OUTPUT_CLOSED
    assert capsys.readouterr().err == ""


def test_a_pipe_closed_after_a_user_error_keeps_the_error_status(tmp_path: Path) -> None:
    done = closed_stdout_run("model", str(tmp_path / "nope.json"))
    assert done.returncode == USAGE_ERROR
    assert done.stderr.startswith(f"scalecheck: error: {tmp_path / 'nope.json'}: ") and "Traceback" not in done.stderr


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import scalecheck.modeling

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(scalecheck.modeling, "fit_models", interrupted)
    try:
        status = main(["model", str(EXAMPLE)])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped main() (a traceback for the user)")
    assert status == INTERRUPTED
    assert capsys.readouterr().err == "scalecheck: interrupted\n"


def test_sigterm_ends_a_command_like_ctrl_c_and_restores_the_handler(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import scalecheck.modeling

    class Unhandled(Exception):
        pass

    def terminated(*args: object, **kwargs: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs in this thread before kill returns to Python code
        raise AssertionError("SIGTERM did not stop the command")

    def outside(signum: int, frame: object) -> None:  # what would have ended the process
        raise Unhandled

    monkeypatch.setattr(scalecheck.modeling, "fit_models", terminated)
    before = signal.signal(signal.SIGTERM, outside)
    try:
        status = main(["model", str(EXAMPLE)])
        assert signal.getsignal(signal.SIGTERM) is outside
    finally:
        signal.signal(signal.SIGTERM, before)
    assert status == 128 + signal.SIGTERM
    assert capsys.readouterr().err == "scalecheck: stopped by SIGTERM\n"


BAD_INPUTS = sorted((ROOT / "tests" / "inputs").glob("*/bad_*"))
REAL_FILES = ["mpi_data_mean.txt", "relearn_data.txt", "cube_single_parameter.json", "cube_multi_parameter.json",
              "experiment_3_mp.json", "format-samples/extended2.jsonl", "format-samples/legacy_input_1.JSON",
              "format-samples/new_json_input2.json", "format-samples/one_parameter_segmented_1.txt",
              "format-samples/two_parameter_segmented_1.txt", "format-samples/talpas_1.txt"]


@pytest.mark.parametrize("path", BAD_INPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_bad_input_is_one_error_line_with_a_fix(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", str(path)]) == USAGE_ERROR
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"scalecheck: error: {path}")
    assert len(err) == 1 and "; fix: " in err[0]


def test_bad_inputs_cover_every_case_the_issue_names() -> None:
    names = {p.name.split(".")[0] for p in BAD_INPUTS}
    assert len(BAD_INPUTS) >= 20
    for case in ("bad_nan", "bad_inf", "bad_negative_time", "bad_value"):
        assert case in names


@pytest.mark.parametrize("name", REAL_FILES)
def test_every_real_extrap_file_models(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "tests" / "inputs" / "extrap" / Path(name).name  # copies of ../shared/extrap-data
    out = tmp_path / "m.json"
    assert main(["model", str(path), "--json", str(out)]) == OK, capsys.readouterr().err
    models = json.loads(out.read_text())["models"]
    assert models and all(m["status"] in {"ok", "insufficient", "inseparable"} for m in models)
    assert any(m["status"] == "ok" for m in models) or name.endswith("new_json_input2.json")
