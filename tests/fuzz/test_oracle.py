"""The fuzzer's own checks: each broken promise planted in a run's outcome is found, with its kind; a clean run
has none; cases replay exactly; the limits stop a hang and a runaway allocation."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .cases import FAMILIES, SENTINEL, Case, InputFile, make_case
from .oracle import PACKAGE, Outcome, problems, run_case, stream_problems

TRACE = f"""Traceback (most recent call last):
  File "{PACKAGE}/cli/__init__.py", line 40, in main
    return int(args.run(args))
  File "{PACKAGE}/formats/jsonl.py", line 99, in read_jsonl_text
    value = int(token)
  File "/usr/lib/python3/json/decoder.py", line 9, in decode
    raise ValueError(text)
ValueError: Exceeds the limit (4300 digits) for integer string conversion
scalecheck: internal error - please report it with the traceback above
"""


def model_case(*, outputs: tuple[str, ...] = (), previous: bool = False, github: bool = False) -> Case:
    args = ["model", "{FILE}"]
    for name in outputs:
        args += ["--json" if name.endswith(".json") else "--html", f"{{out:{name}}}"]
    return Case(seed=1, index=0, family="bit-flip", command="model",
                inputs=(InputFile("FILE", "file.json", "tests/inputs/scalecheck-json/ok_basic.json", b"{}"),),
                args=tuple(args), outputs=outputs, previous=previous, github=github)


def kinds(case: Case, folder: Path, **outcome: object) -> list[str]:
    """The kinds of problem of a run of `case` in `folder` (its files written first, unless they are there)."""
    if not folder.exists() or not any(folder.iterdir()):
        case.write(folder)
    return [p.kind for p in problems(case, folder, Outcome(**outcome))]  # type: ignore[arg-type]


def test_a_clean_run_has_no_problem(tmp_path: Path) -> None:
    assert kinds(model_case(), tmp_path, status=0, stdout="kernel  model\nsolve   p\n") == []
    error = f"scalecheck: error: {tmp_path / 'file.json'}:3: not valid JSON; fix: correct the JSON syntax\n"
    assert kinds(model_case(), tmp_path, status=2, stderr=error) == []


@pytest.mark.parametrize("outcome, kind", [
    ({"status": 3, "stderr": TRACE}, "exit 3: ValueError in scalecheck/formats/jsonl.py read_jsonl_text"),
    ({"status": 0, "uncaught": TRACE}, "uncaught ValueError in scalecheck/formats/jsonl.py read_jsonl_text"),
    ({"status": 4}, "exit status 4"),
    ({"status": 141}, "exit status 141"),  # a closed standard output, but this case's was open
    ({"timed_out": True}, "hang: still running after 15 s"),
    ({"status": 0, "seconds": 6.0}, "slow: over 5 s"),
    ({"status": 0, "stdout": "solve\x1b[31m\n"}, "stdout: hidden character (C0 control)"),
    ({"status": 0, "stdout": "solve\u202e\n"}, "stdout: hidden character (bidirectional control)"),
    ({"status": 0, "stderr": "a\x9bb\n"}, "stderr: hidden character (DEL or C1 control)"),
    ({"status": 0, "stdout": "\ud800\n"}, "stdout: hidden character (lone surrogate)"),
    ({"status": 0, "stdout": "x\n  ::error file=x::PWNED\n"}, "stdout: a workflow command scalecheck did not write"),
    ({"status": 0, "stdout": "solve ##[error] x\n"}, "stdout: a line holds '##['"),
    ({"status": 0, "warnings": [("RuntimeWarning", "overflow encountered in 1 power", "/np/core.py", 9, "")]},
     "warning: RuntimeWarning in core.py: overflow encountered in N power"),
    ({"status": 0, "warnings": [("RuntimeWarning", "overflow", "/np/core.py", 9, "scalecheck/core/fit.py:95 fit")]},
     "warning: RuntimeWarning in scalecheck/core/fit.py fit: overflow"),
    ({"status": 0, "stderr": "/x/fit.py:95: RuntimeWarning: divide by zero\n  y = 1 / x\n"}, "stderr: warning text"),
    ({"status": 2, "stderr": "scalecheck: error: a; fix: b\nscalecheck: error: c; fix: d\n"},
     "exit 2 with 2 error lines"),
    ({"status": 2, "stderr": "Traceback (most recent call last):\n"}, "exit 2 without an error line"),
    ({"status": 2, "stderr": "scalecheck: error: no kernel 'x' in common; fix: rename\n"},
     "exit 2: the error does not name the input file: no kernel '…' in common; fix: rename"),
    ({"status": 1, "stderr": "scalecheck: error: x\n"}, "an error line with exit 1"),
])
def test_each_broken_promise_is_found(outcome: dict[str, object], kind: str, tmp_path: Path) -> None:
    assert kind in kinds(model_case(), tmp_path, **outcome)


def test_an_error_without_a_fix_or_followed_by_more_is_found(tmp_path: Path) -> None:
    line = f"scalecheck: error: {tmp_path / 'file.json'}: broken"
    assert kinds(model_case(), tmp_path, status=2, stderr=f"{line}\nmore\n") == [
        "exit 2: stderr goes on after the error line", "exit 2: the error has no fix: DIR/file.json: broken"]


def test_github_mode_allows_scalecheck_s_own_commands_only() -> None:
    token = "0123456789abcdef" * 2
    ours = (f"::stop-commands::{token}\nFAIL: solve\n::{token}::\n"
            "::error title=scalecheck growth%3A solve::solve [time]: grows as p^2 at 95%25 confidence\n")
    assert stream_problems("stdout", ours, github=True) == []
    assert stream_problems("stdout", ours, github=False) != []  # outside GitHub mode, no command at all
    injected = [
        f"::stop-commands::{token}\n::error::PWNED\n::{token}::\n",  # inside the stopped part: still not ours
        "::error title=scalecheck x::100% sure\n",  # an unescaped % that GitHub would decode
        "::error title=scalecheck a,b::x\n",  # an unescaped ',' ends the title property
        "::error title=pwned::x\n",
        f"::stop-commands::{token}\nFAIL\n",  # never resumed
        "::error file=x::PWNED\n",
    ]
    for text in injected:
        assert stream_problems("stdout", text, github=True) != [], text


def test_outputs_must_be_valid_or_untouched(tmp_path: Path) -> None:
    case = model_case(outputs=("models.json", "models.html"), previous=True)
    case.write(tmp_path)
    assert (tmp_path / "models.json").read_bytes() == SENTINEL
    assert kinds(case, tmp_path, status=2, stderr=f"scalecheck: error: {tmp_path / 'file.json'}: x; fix: y") == []
    assert kinds(case, tmp_path, status=0) == ["--json output not rewritten after exit 0",
                                               "--html output not rewritten after exit 0"]
    (tmp_path / "models.json").write_text('{"models": [NaN]}')
    (tmp_path / "models.html").write_text("<!DOCTYPE html><html><body>cut off")
    (tmp_path / ".models.json.abc.tmp").write_text("")
    assert kinds(case, tmp_path, status=0) == ["--json output invalid: NaN is not JSON",
                                               "--html output invalid: not a whole HTML page",
                                               "temporary file left behind"]
    fresh = model_case(outputs=("models.json",))
    assert kinds(fresh, tmp_path / "fresh", status=1) == ["--json output missing after exit 1"]


def test_github_files_are_checked(tmp_path: Path) -> None:
    case = model_case(github=True)
    case.write(tmp_path)
    (tmp_path / "github_output").write_text("verdict=fail\n")
    (tmp_path / "step_summary").write_text("| \u202e |\n")
    assert kinds(case, tmp_path, status=0) == ["job summary: hidden character (bidirectional control)",
                                               "GITHUB_OUTPUT not in name<<delimiter blocks"]


def test_cases_replay_exactly_and_cover_every_family() -> None:
    assert make_case(7, 123) == make_case(7, 123)
    assert make_case(7, 123) != make_case(8, 123)
    assert [make_case(3, i).family for i in range(len(FAMILIES))] == list(FAMILIES)
    mutated = make_case(3, FAMILIES.index("huge-int"))
    assert any(item.mutations for item in mutated.inputs)


@pytest.mark.wall_clock
def test_a_hang_is_stopped_and_a_runaway_allocation_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import scalecheck.cli

    monkeypatch.setattr(scalecheck.cli, "main", lambda argv: time.sleep(5))
    start = time.monotonic()
    outcome = run_case(model_case(), tmp_path / "hang", timeout=0.2)
    assert outcome.timed_out and time.monotonic() - start < 2
    monkeypatch.setattr(scalecheck.cli, "main", lambda argv: len(bytearray(4 << 30)))
    outcome = run_case(model_case(), tmp_path / "memory", memory=1 << 30)
    assert outcome.uncaught is not None and outcome.uncaught.rstrip().endswith("MemoryError")


def real_case(**changes: object) -> Case:
    """`scalecheck model` of a small valid file, with --json."""
    case = model_case(outputs=("models.json",))
    data = json.dumps({"scalecheck": 1, "parameters": ["p"], "measurements": [
        {"kernel": "solve", "metric": "time", "point": {"p": p}, "values": [1.0 + p, 1.01 + p]}
        for p in (2, 4, 8, 16, 32)]}).encode()
    return Case(**{**case.__dict__, "inputs": (InputFile("FILE", "file.json", "", data),), **changes})


def test_a_real_run_is_captured(tmp_path: Path) -> None:
    case = real_case()
    outcome = run_case(case, tmp_path)
    assert (outcome.status, outcome.stderr) == (0, "")
    assert outcome.stdout.splitlines()[0].startswith("kernel")
    assert problems(case, tmp_path, outcome) == []


def test_a_closed_standard_output_ends_the_run_quietly(tmp_path: Path) -> None:
    case = real_case(stdout_room=10)
    outcome = run_case(case, tmp_path)
    assert (outcome.status, outcome.stdout, outcome.stderr) == (141, "kernel  me", "")
    assert problems(case, tmp_path, outcome) == []
