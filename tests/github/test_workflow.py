"""Workflow commands and environment files, decoded back the way GitHub's runner reads them."""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from scalecheck.data.verdict import Finding
from scalecheck.github.workflow import (SUMMARY_LIMIT, Actions, annotation, annotations, append_summary,
                                        escape_data, escape_property, running_in_actions, stop_commands,
                                        write_outputs)
from scalecheck.text import visible

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "a::error::b%0A",
    "solver\n::error::injected",
    "solver\r\n::warning title=x::injected",
    "bcast, p: 64 :: 100%",
    "50%25 of time, a:b",
]
COMMAND = re.compile(r"::(error|warning|notice)( title=[^:]*)?::(.*)")


def decode_data(text: str) -> str:
    """The runner's unescaping of a command's message: %25 last, so '%250A' stays '%0A'."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def decode_property(text: str) -> str:
    """The runner's unescaping of a property value."""
    return (text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",")
            .replace("%25", "%"))


def parse_command(line: str) -> tuple[str, str | None, str]:
    """(level, title, message) of one annotation line, decoded."""
    assert "\n" not in line and "\r" not in line
    match = COMMAND.fullmatch(line)
    assert match, line
    title = match.group(2)
    return match.group(1), decode_property(title[len(" title="):]) if title else None, decode_data(match.group(3))


def read_outputs(text: str) -> dict[str, str]:
    """Parse $GITHUB_OUTPUT like the runner: `name<<DELIM`, value lines, a line equal to DELIM."""
    values: dict[str, str] = {}
    lines = iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        name, sep, delimiter = line.partition("<<")
        assert sep, f"not a heredoc line: {line!r}"
        body = []
        for value_line in lines:
            if value_line == delimiter:
                break
            body.append(value_line)
        else:
            raise AssertionError(f"no closing delimiter for {name}")
        values[name] = "\n".join(body)
    return values


def finding(kernel: str, severity: str, kind: str = "growth", message: str = "grows faster") -> Finding:
    return Finding(kernel=kernel, metric="time", kind=kind, message=message, severity=severity)


# -- escaping ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, data, prop", [
    ("plain", "plain", "plain"),
    ("100%", "100%25", "100%25"),
    ("a\r\nb", "a\\r\\nb", "a\\r\\nb"),  # one line: the break is shown, as in the terminal text
    ("%0A", "%250A", "%250A"),
    ("p: 64, n: 8", "p: 64, n: 8", "p%3A 64%2C n%3A 8"),
    ("a::error::b", "a::error::b", "a%3A%3Aerror%3A%3Ab"),
    ("::error::b", "\\x3a:error::b", "\\x3a%3Aerror%3A%3Ab"),
    ("esc\x1b[31mred", "esc\\x1b[31mred", "esc\\x1b[31mred"),
    ("nul\x00 tab\t nel\x85 del\x7f", "nul\\x00 tab\\t nel\\x85 del\\x7f", "nul\\x00 tab\\t nel\\x85 del\\x7f"),
    ("line\u2028para\u2029", "line\\u2028para\\u2029", "line\\u2028para\\u2029"),
    ("bidi\u202eevil", "bidi\\u202eevil", "bidi\\u202eevil"),
    ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff", "zero\\u200bwidth\\ufeff"),
])
def test_escape_data_and_property_exact(text: str, data: str, prop: str) -> None:
    assert escape_data(text) == data
    assert escape_property(text) == prop


def test_escape_data_leaves_no_control_or_format_character() -> None:
    every = "".join(chr(code) for code in range(0x3000))
    escaped = escape_data(every)
    assert not [ch for ch in escaped if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")]


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("level", ["error", "warning"])
def test_annotation_of_hostile_name_is_one_line_that_decodes_back(name: str, level: str) -> None:
    line = annotation(level, f"{name} [time]: grows, 100%", title=f"scalecheck growth: {name}")
    assert line.startswith(f"::{level} title=")
    assert parse_command(line) == (level, visible(f"scalecheck growth: {name}"), visible(f"{name} [time]: grows, 100%"))


def test_annotation_without_title_and_unknown_level() -> None:
    assert annotation("notice", "ok") == "::notice::ok"
    with pytest.raises(ValueError, match="level"):
        annotation("debug", "x")


def test_annotations_of_hostile_findings_start_only_the_intended_commands() -> None:
    findings = [finding(name, severity) for name in HOSTILE for severity in ("error", "warning")]
    lines = annotations(findings)
    output = "\n".join(lines)
    assert len(output.splitlines()) == len(lines) == len(findings)
    for line, original in zip(lines, findings):
        level, title, message = parse_command(line)
        assert (level, title) == (original.severity, visible(f"scalecheck growth: {original.kernel}"))
        assert message == visible(f"{original.kernel} [time]: grows faster")
        assert "\n" not in message and "\r" not in message  # shown as \n, as in the terminal text


# -- annotations ------------------------------------------------------------------------------------------------


def test_annotations_limit_errors_and_warnings_worst_first_with_notice() -> None:
    findings = ([finding(f"e{i}", "error") for i in range(13)] + [finding(f"w{i}", "warning") for i in range(11)]
                + [finding(f"n{i}", "notice", kind="improvement") for i in range(4)])
    lines = annotations(findings)
    assert len(lines) == 21
    assert [parse_command(line)[1] for line in lines[:20]] == (
        [f"scalecheck growth: e{i}" for i in range(10)] + [f"scalecheck growth: w{i}" for i in range(10)])
    level, title, message = parse_command(lines[-1])
    assert (level, title) == ("notice", None)
    assert "3 errors and 1 warning more are not annotated" in message
    assert "job summary" in message and "report" in message


def test_annotations_skip_notices_and_need_no_notice_under_the_limit() -> None:
    findings = [finding("a", "warning"), finding("b", "notice", kind="improvement"), finding("c", "error")]
    assert [parse_command(line)[:2] for line in annotations(findings, limit=2)] == [
        ("warning", "scalecheck growth: a"), ("error", "scalecheck growth: c")]
    assert annotations([]) == []


def test_annotations_with_small_limit() -> None:
    lines = annotations([finding("a", "error"), finding("b", "error")], limit=1)
    assert len(lines) == 2 and "1 error more" in parse_command(lines[1])[2]


# -- stop-commands ----------------------------------------------------------------------------------------------


def test_stop_commands_pair_uses_a_fresh_token() -> None:
    stop, resume = stop_commands()
    token = stop.removeprefix("::stop-commands::")
    assert re.fullmatch(r"[0-9a-f]{32}", token)
    assert resume == f"::{token}::"
    assert stop_commands()[0] != stop


# -- outputs ----------------------------------------------------------------------------------------------------


def test_write_outputs_round_trips_multi_line_values_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier<<EOF\nkept\nEOF\n", encoding="utf-8")
    values = {"verdict": "fail", "summary": "line 1\nline 2\n\nline 4", "empty": "", "kebab-name_2": "x<<y"}
    write_outputs(path, values)
    assert read_outputs(path.read_text(encoding="utf-8")) == {"earlier": "kept", **values}


def test_write_outputs_value_with_a_fake_delimiter_stays_whole(tmp_path: Path, monkeypatch) -> None:
    import uuid

    fixed = [uuid.UUID(int=1), uuid.UUID(int=1), uuid.UUID(int=2)]
    monkeypatch.setattr("scalecheck.github.workflow.uuid.uuid4", lambda: fixed.pop(0))
    fake = f"ghadelimiter_{uuid.UUID(int=1).hex}"
    value = f"before\n{fake}\ninjected<<X\nafter"
    write_outputs(tmp_path / "output", {"report": value})
    text = (tmp_path / "output").read_text(encoding="utf-8")
    assert text.startswith(f"report<<ghadelimiter_{uuid.UUID(int=2).hex}\n")
    assert read_outputs(text) == {"report": value}


def test_write_outputs_real_delimiters_are_random(tmp_path: Path) -> None:
    write_outputs(tmp_path / "output", {"a": "1", "b": "2"})
    first, _, _, second, _, _ = (tmp_path / "output").read_text(encoding="utf-8").splitlines()
    assert re.fullmatch(r"a<<ghadelimiter_[0-9a-f]{32}", first)
    assert second.startswith("b<<ghadelimiter_") and second[3:] != first[3:]


@pytest.mark.parametrize("name", ["", "1st", "a b", "x\ny", "a<<b", "é"])
def test_write_outputs_refuses_bad_names_before_writing(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="output name"):
        write_outputs(tmp_path / "output", {"ok": "1", name: "2"})
    assert not (tmp_path / "output").exists()


# -- step summary -----------------------------------------------------------------------------------------------


def test_append_summary_appends_with_newline(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    append_summary(path, "# one")
    append_summary(path, "two ✓")
    assert path.read_text(encoding="utf-8") == "# one\ntwo ✓\n"


def test_append_summary_guards_the_limit_in_utf8_bytes(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    append_summary(path, "x" * (SUMMARY_LIMIT - 1))  # exactly the limit with the newline
    assert path.stat().st_size == SUMMARY_LIMIT
    with pytest.raises(ValueError, match="limit"):
        append_summary(tmp_path / "other.md", "é" * (SUMMARY_LIMIT // 2))  # fewer characters, too many bytes
    with pytest.raises(ValueError, match="limit"):
        append_summary(path, "")  # the file is full already
    assert path.stat().st_size == SUMMARY_LIMIT and not (tmp_path / "other.md").exists()


# -- environment ------------------------------------------------------------------------------------------------


def test_actions_from_env() -> None:
    env = {"GITHUB_STEP_SUMMARY": "/tmp/summary", "GITHUB_OUTPUT": "/tmp/out", "GITHUB_REPOSITORY": "o/r",
           "GITHUB_SERVER_URL": "https://github.com/", "GITHUB_RUN_ID": "42", "GITHUB_EVENT_NAME": "pull_request",
           "GITHUB_EVENT_PATH": "/tmp/event.json", "GITHUB_API_URL": "https://ghe.example/api/v3",
           "GITHUB_TOKEN": "ghs_secret123"}
    actions = Actions.from_env(env)
    assert actions == Actions(summary=Path("/tmp/summary"), output=Path("/tmp/out"), repository="o/r",
                              run_url="https://github.com/o/r/actions/runs/42", event_name="pull_request",
                              event_path=Path("/tmp/event.json"), api_url="https://ghe.example/api/v3",
                              token="ghs_secret123")
    assert "ghs_secret123" not in repr(actions) and "ghs_secret123" not in str(actions)


def test_actions_from_env_treats_empty_as_missing() -> None:
    actions = Actions.from_env({"GITHUB_STEP_SUMMARY": "", "GITHUB_TOKEN": "", "GITHUB_API_URL": "",
                                "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "", "GITHUB_SERVER_URL": "x"})
    assert actions == Actions(repository="o/r")
    assert actions.api_url == "https://api.github.com" and actions.token is None and actions.run_url is None


def test_running_in_actions() -> None:
    assert running_in_actions({"GITHUB_ACTIONS": "true"})
    assert not running_in_actions({}) and not running_in_actions({"GITHUB_ACTIONS": "1"})


def test_github_package_imports_no_numpy() -> None:
    code = ("import sys, scalecheck.github.workflow, scalecheck.github.comment; "
            "bad = {'numpy', 'jinja2', 'requests'} & set(sys.modules); assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])
