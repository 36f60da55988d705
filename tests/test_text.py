"""`scalecheck.text.visible`, the one sanitiser, and every printed channel that goes through it: the terminal text,
the Markdown (pull-request comment and job summary), the GitHub annotations and the error lines."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest

from scalecheck.api import CheckResult, check, fit_models
from scalecheck.config import Config
from scalecheck.errors import ConfigError, InputError, Location, ScalecheckError
from scalecheck.formats import read_many
from scalecheck.github.workflow import annotations
from scalecheck.report.check_report import render_check_text
from scalecheck.report.markdown import render_check_markdown
from scalecheck.text import visible

from .report.conftest import Function, write

# -- visible ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, shown", [
    ("main->solve", "main->solve"),
    ("Lösung ∑ 求解 ❤\ufe0f", "Lösung ∑ 求解 ❤\ufe0f"),  # letters, symbols and a variation selector stay
    ("a\nb\rc\td", "a\\nb\\rc\\td"),
    ("nul\x00 del\x7f nel\x85 csi\x9b", "nul\\x00 del\\x7f nel\\x85 csi\\x9b"),
    ("esc\x1b[31mred", "esc\\x1b[31mred"),
    ("ltr\u200e rtl\u200f alm\u061c lre\u202a rlo\u202e lri\u2066 pdi\u2069",
     "ltr\\u200e rtl\\u200f alm\\u061c lre\\u202a rlo\\u202e lri\\u2066 pdi\\u2069"),
    ("zw\u200bsp zwj\u200d wj\u2060 bom\ufeff shy\u00ad", "zw\\u200bsp zwj\\u200d wj\\u2060 bom\\ufeff shy\\xad"),
    ("line\u2028para\u2029", "line\\u2028para\\u2029"),
    ("tag\U000e0041 filler\u3164", "tag\\U000e0041 filler\\u3164"),
    ("lone\ud800surrogate", "lone\\ud800surrogate"),
    ("::error::x", "\\x3a:error::x"),
    ("  \u00a0::warning title=t::x", "  \u00a0\\x3a:warning title=t::x"),  # the runner trims leading space
    ("a::error::b", "a::error::b"),  # a command starts a line only
    ("see ##[error]x", "see ##\\x5berror]x"),  # the old form is read anywhere in a line
    ("\n::error::x", "\\n::error::x"),
])
def test_visible_shows_what_hides_and_stops_commands(text: str, shown: str) -> None:
    assert visible(text) == shown
    assert visible(shown) == shown  # applying it twice (an error that quotes a sanitised name) changes nothing


def test_visible_leaves_no_control_format_separator_or_surrogate_character() -> None:
    every = "".join(chr(code) for code in range(sys.maxunicode + 1))
    left = {unicodedata.category(ch) for ch in visible(every)}
    assert not left & {"Cc", "Cf", "Zl", "Zp", "Cs"}


# -- every channel ------------------------------------------------------------------------------------------------

PIECES = {"bidi override": "\u202e", "lone CR": "\r", "terminal colour": "\x1b[31m", "workflow command": "::error::x",
          "NUL": "\x00"}
P = (2, 4, 8, 16, 32, 64, 128, 256)


def kernel_of(piece: str) -> str:
    """A kernel name carrying `piece`: a workflow command at its start, where a printed line may begin with it."""
    return piece if piece.startswith("::") else f"solve{piece}fast"


def shown(piece: str) -> str:
    """How the kernel carrying `piece` reads in a report (its start escaped only where it starts a line)."""
    return visible(kernel_of(piece)).removeprefix("\\x3a")


def raw(piece: str, text: str) -> bool:
    """Whether `piece` is in `text` as it was: a hidden character anywhere, a command at the start of a line."""
    if piece.startswith("::"):
        return any(line.lstrip().startswith(piece) for line in text.splitlines())
    return piece in text


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    """A check in which every hostile kernel grows as p^(3/2) instead of p: each has findings in every report."""
    folder = tmp_path_factory.mktemp("hostile")
    base: dict[str, Function] = {kernel_of(p): (lambda x: 0.8 + 0.05 * x) for p in PIECES.values()}
    worse: dict[str, Function] = {kernel_of(p): (lambda x: 0.8 + 0.05 * x**1.5 / 2**0.5) for p in PIECES.values()}
    baseline, candidate = write(folder / "baseline.json", base, 1), write(folder / "candidate.json", worse, 2)
    return check([candidate], str(baseline), Config(root=folder).with_overrides(bootstrap=20), cwd=folder)


def test_every_hostile_kernel_has_findings(result: CheckResult) -> None:
    assert {f.kernel for f in result.verdict.failures} == {kernel_of(p) for p in PIECES.values()}


@pytest.mark.parametrize("piece", PIECES.values(), ids=PIECES.keys())
def test_a_hostile_kernel_name_reaches_no_report_raw(result: CheckResult, piece: str) -> None:
    text = render_check_text(result.verdict, result.context)
    markdown = render_check_markdown(result.verdict, result.context)
    lines = annotations(result.verdict.findings)
    assert shown(piece) in text
    assert not raw(piece, text)
    assert not raw(piece, markdown)
    assert lines and all("\n" not in line and "\r" not in line for line in lines)
    assert not raw(piece, "\n".join(line.split("::", 2)[2] for line in lines))  # each message
    assert not raw(piece, "\n".join(lines).replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%"))


@pytest.mark.parametrize("piece", PIECES.values(), ids=PIECES.keys())
def test_a_hostile_kernel_name_reaches_no_error_line_raw(result: CheckResult, piece: str) -> None:
    run = read_many([Path(result.context.candidate)])
    with pytest.raises(ConfigError) as info:  # the message lists the kernels the file has
        fit_models(run, kernels=["no-such-kernel"])
    line = str(info.value)
    assert shown(piece) in line
    assert not raw(piece, line) and len(line.splitlines()) == 1 and "; fix: " in line


@pytest.mark.parametrize("piece", [p for p in PIECES.values() if p != "\x00"],
                         ids=[k for k, p in PIECES.items() if p != "\x00"])
def test_a_hostile_file_name_reaches_no_error_line_raw(tmp_path: Path, piece: str) -> None:
    path = tmp_path / f"{piece}.json" if piece.startswith("::") else tmp_path / f"bench{piece}.json"
    path.write_text('{"scalecheck": 1, "parameters": ["p"], "measurements": [', encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_many([path])
    line = str(info.value)
    assert not raw(piece, line) and visible(str(path)) in line
    assert not raw(piece, str(info.value).removeprefix(str(tmp_path)))  # as if the path were relative


@pytest.mark.parametrize("piece", PIECES.values(), ids=PIECES.keys())
def test_every_part_of_an_error_line_is_sanitised(piece: str) -> None:
    """A NUL cannot be in a file name on disk; the error prints it visibly wherever it comes from."""
    error = ScalecheckError(f"{piece} is wrong", where=Location(Path(f"{piece}.json"), 3, f"{piece}[0]"),
                            fix=f"{piece} fix", details=[f"{piece} detail"])
    text = str(error)
    assert not raw(piece, text)
    assert len(text.splitlines()) == 1
    assert text.endswith(f"; {visible(piece)} detail; fix: {visible(piece)} fix")
    assert not raw(piece, str(ScalecheckError(f"{piece} alone")))


def test_an_error_is_one_line_even_with_a_line_break_inside_a_part() -> None:
    error = InputError("kernel 'a\n::error::x' is bad", where=Location(Path("m.json"), record="a\nb"), fix="fix\nit")
    assert str(error) == "m.json: a\\nb: kernel 'a\\n::error::x' is bad; fix: fix\\nit"

