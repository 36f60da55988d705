"""The option table: every setting's TOML key, flag, help and default come from one declaration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scalecheck.cli import OK, USAGE_ERROR, build_parser, main
from scalecheck.config import COMMANDS, FLAGS, OPTIONS, Config, settings_reference
from scalecheck.core.options import CompareOptions, FitOptions

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "mpi_data_mean.txt"
SETTINGS_PAGE = ROOT / "docs" / "settings.md"
UPDATE = os.environ.get("SCALECHECK_UPDATE_GOLD") == "1"  # read before the tests clear SCALECHECK_* variables


def _flags(command: str) -> dict[str, str]:
    """dest -> the first option string of every flag of `command`."""
    parser = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    return {action.dest: action.option_strings[0] for action in parser._actions if action.option_strings}


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_the_flags_the_table_gives_it(command: str) -> None:
    flags = _flags(command)
    wanted = {name: FLAGS[name] for name, option in OPTIONS.items() if command in option.commands}
    assert {name: flags.get(name) for name in wanted} == wanted
    assert flags["config"] == "--config"


def test_the_defaults_are_the_core_records() -> None:
    config = Config()
    records = {"FitOptions": FitOptions(), "CompareOptions": CompareOptions()}
    sourced = [(name, option.source.split(".")) for name, option in OPTIONS.items() if option.source is not None]
    assert {record for _, (record, _) in sourced} == set(records)
    for name, (record, field) in sourced:
        assert getattr(config, name) == getattr(records[record], field)
    assert config.fit_options() == FitOptions() and config.compare_options() == CompareOptions()
    assert Config(bootstrap=50, seed=3).compare_options() == CompareOptions(resamples=50, seed=3)


def test_help_shows_the_default_from_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--bootstrap N bootstrap resamples per kernel and side (default: 200)" in out
    assert "--max-terms N most terms per parameter besides the constant; a second term needs at least 7 points " \
           "(default: 2)" in out


@pytest.mark.parametrize("args, message", [
    (["--threshold", "abc"], "scalecheck: error: --threshold must be a number, got 'abc'"
                             "; fix: for example --threshold 0.1\n"),
    (["--threshold", "-1"], "scalecheck: error: --threshold must be greater than 0, got -1.0"
                            "; fix: for example --threshold 0.1\n"),
    (["--alpha", "1"], "scalecheck: error: --alpha must be greater than 0 and less than 1, got 1.0"
                       "; fix: for example --alpha 0.01\n"),
    (["--fail-on", "growht"], "scalecheck: error: --fail-on holds unknown kind 'growht'; fix: did you mean "
                              "'growth'? (the kinds are growth, prediction, measured, expectation, segmentation, "
                              "overhead, structure)\n"),
])
def test_a_bad_flag_value_is_the_rule_of_its_setting(args: list[str], message: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    candidate = ROOT / "examples" / "check" / "candidate.json"
    assert main(["check", str(candidate), "--baseline", str(candidate), *args]) == USAGE_ERROR
    assert capsys.readouterr().err == message


def test_model_reads_the_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "scalecheck.toml").write_text('kernels = ["*Bcast"]\n[search]\nmax_terms = 1\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "models.json"
    assert main(["model", str(EXAMPLE), "--json", str(out)]) == OK
    table = capsys.readouterr().out
    assert "IntelMPI->MPI_Bcast" in table and "MPI_Allreduce" not in table
    (tmp_path / "scalecheck.toml").write_text("[search]\nmax_term = 1\n", encoding="utf-8")
    assert main(["model", str(EXAMPLE)]) == USAGE_ERROR
    assert capsys.readouterr().err == (f"scalecheck: error: {tmp_path / 'scalecheck.toml'}:2: [search]: unknown key "
                                       "'max_term'; fix: did you mean 'max_terms'?\n")


def test_a_flag_overrides_the_settings_file_in_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "scalecheck.toml").write_text('kernels = ["*Bcast"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["model", str(EXAMPLE), "--kernel", "*Allreduce"]) == OK
    table = capsys.readouterr().out
    assert "MPI_Allreduce" in table and "MPI_Bcast" not in table


def test_the_settings_page_is_generated_from_the_table() -> None:
    """docs/settings.md is `settings_reference()`; regenerate it with SCALECHECK_UPDATE_GOLD=1."""
    text = settings_reference()
    if UPDATE:
        SETTINGS_PAGE.write_text(text, encoding="utf-8")
    assert SETTINGS_PAGE.read_text(encoding="utf-8") == text
    for name in OPTIONS:
        assert f"| `{name}` |" in text


def test_help_builds_without_the_numerics() -> None:
    probe = ("import sys, scalecheck.cli, scalecheck.config; scalecheck.cli.build_parser(); "
             "print(sorted(m for m in ('numpy', 'scipy', 'jinja2', 'git') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def test_min_points_marks_kernels_with_fewer_points_insufficient(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The example has 5 process counts per kernel: modeled by default, insufficient with min_points = 6."""
    out = tmp_path / "models.json"
    assert main(["model", str(EXAMPLE), "--json", str(out)]) == OK
    assert {m["status"] for m in json.loads(out.read_text())["models"]} == {"ok"}
    assert main(["model", str(EXAMPLE), "--min-points", "6", "--json", str(out)]) == OK
    assert {m["status"] for m in json.loads(out.read_text())["models"]} == {"insufficient"}
    assert main(["model", str(EXAMPLE), "--min-points", "2"]) == USAGE_ERROR
    assert capsys.readouterr().err.endswith("scalecheck: error: --min-points must be at least 3, got 2"
                                            "; fix: for example --min-points 5\n")


def test_a_target_names_each_parameter_once() -> None:
    from scalecheck.config import parse_target
    from scalecheck.errors import ConfigError

    assert parse_target("p=64,n=1e3") == {"p": 64.0, "n": 1000.0}
    with pytest.raises(ConfigError) as info:
        parse_target("p=1,p=2")
    assert str(info.value) == "--target gives p twice; fix: give each parameter one value, e.g. --target p=65536"
