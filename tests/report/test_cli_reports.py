"""`scalecheck check --html/--markdown/--github`, `model --html` and `scalecheck comment` through main(argv)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scalecheck.cli import OK, REGRESSION, USAGE_ERROR, main
from scalecheck.github.comment import marker

from ..github.test_comment import BOT, REPO, TOKEN, FakeGitHub, github  # noqa: F401 - the fixture
from .conftest import Pair

FAST = ("--bootstrap", "20", "--max-plots", "2")


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def outputs(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT read back as the runner reads it (name<<DELIMITER ... DELIMITER)."""
    values, lines = {}, path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines) - 1:
        name, _, delimiter = lines[i].partition("<<")
        end = lines.index(delimiter, i + 1)
        values[name] = "\n".join(lines[i + 1:end])
        i = end + 1
    return values


@pytest.fixture
def actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    files = {"summary": tmp_path / "summary.md", "output": tmp_path / "output.txt"}
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(files["summary"]))
    monkeypatch.setenv("GITHUB_OUTPUT", str(files["output"]))
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    monkeypatch.setenv("GITHUB_SHA", "abcdef0123456789abcdef0123456789abcdef01")
    files["summary"].write_text("earlier step's summary\n", encoding="utf-8")
    return files


def test_github_mode_writes_summary_outputs_and_escaped_annotations(
        capsys: pytest.CaptureFixture[str], hostile_pair: Pair, actions: dict[str, Path], tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    code, out, err = cli(capsys, "check", hostile_pair.candidate, "--baseline", hostile_pair.baseline,
                         "--html", html, "--github", *FAST)
    assert code == REGRESSION and err == ""
    assert outputs(actions["output"]) == {"verdict": "fail", "findings": "12", "report": str(html)}
    summary = actions["summary"].read_text(encoding="utf-8")
    assert summary.startswith("earlier step's summary\n### :x: scalecheck: FAIL")
    assert "[Full report](https://github.com/octo-org/octo-repo/actions/runs/4242)" in summary
    assert "\\(commit abcdef0\\)" in summary  # the commit measured, from GITHUB_SHA
    lines = out.splitlines()
    stop = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0])
    assert stop is not None
    resume = lines.index(f"::{stop.group(1)}::")
    commands = [line for line in lines[1:resume] if line.startswith("::")]
    assert commands == []  # the text report cannot start a workflow command
    annotations = lines[resume + 1:]
    assert len(annotations) == 10 + 1  # 10 errors (the worst of 12), then a notice of the rest
    assert all(re.match(r"::(error|notice)[ :]", a) for a in annotations)
    assert any("a%3A%3Aerror%3A%3Ab%250A" in a for a in annotations)  # in the title property
    assert any("x\\n::error title=t::injected" in a for a in annotations)  # in the message: one line
    assert html.is_file() and "<svg" in html.read_text(encoding="utf-8")


def test_github_mode_is_on_in_actions_and_can_be_turned_off(
        capsys: pytest.CaptureFixture[str], hostile_pair: Pair, actions: dict[str, Path],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, _ = cli(capsys, "check", hostile_pair.candidate, "--baseline", hostile_pair.baseline, *FAST)
    assert code == REGRESSION and out.startswith("::stop-commands::")
    assert outputs(actions["output"])["report"] == ""
    actions["output"].unlink()
    code, out, _ = cli(capsys, "check", hostile_pair.candidate, "--baseline", hostile_pair.baseline, *FAST,
                       "--no-github")
    assert code == REGRESSION and out.startswith("FAIL: 6 kernel(s)")
    assert not actions["output"].exists()


def test_github_mode_without_the_files_says_so(capsys: pytest.CaptureFixture[str], hostile_pair: Pair) -> None:
    code, _, err = cli(capsys, "check", hostile_pair.candidate, "--baseline", hostile_pair.baseline, *FAST,
                       "--github")
    assert code == REGRESSION
    assert err.splitlines() == ["scalecheck: --github: GITHUB_STEP_SUMMARY is not set; no job summary written",
                                "scalecheck: --github: GITHUB_OUTPUT is not set; no step outputs written"]


def test_markdown_file_for_the_comment(capsys: pytest.CaptureFixture[str], hostile_pair: Pair,
                                       tmp_path: Path) -> None:
    md = tmp_path / "comment.md"
    code, _, _ = cli(capsys, "check", hostile_pair.candidate, "--baseline", hostile_pair.baseline, *FAST,
                     "--markdown", md, "--report-url", "https://example.test/report")
    assert code == REGRESSION
    text = md.read_text(encoding="utf-8")
    assert text.startswith("### :x: scalecheck: FAIL") and len(text) <= 65536
    assert "[Full report](https://example.test/report)" in text
    assert "<script" not in text and "<img" not in text


def test_a_passing_check_writes_a_passing_report(capsys: pytest.CaptureFixture[str], hostile_pair: Pair,
                                                 tmp_path: Path) -> None:
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    code, _, _ = cli(capsys, "check", hostile_pair.baseline, "--baseline", hostile_pair.baseline, *FAST,
                     "--html", html, "--markdown", md)
    assert code == OK
    assert '<section class="verdict pass" id="verdict">' in html.read_text(encoding="utf-8")
    assert md.read_text(encoding="utf-8").startswith("### :white_check_mark: scalecheck: PASS")


def test_reports_go_to_existing_folders_only(capsys: pytest.CaptureFixture[str], hostile_pair: Pair,
                                             tmp_path: Path) -> None:
    code, out, err = cli(capsys, "check", hostile_pair.candidate, "--baseline", hostile_pair.baseline, *FAST,
                         "--html", tmp_path / "missing" / "r.html")
    assert code == USAGE_ERROR and out == ""
    assert err.startswith(f"scalecheck: error: cannot write {tmp_path / 'missing' / 'r.html'}: folder")


def test_model_html(capsys: pytest.CaptureFixture[str], hostile_pair: Pair, tmp_path: Path) -> None:
    html = tmp_path / "models.html"
    code, out, _ = cli(capsys, "model", hostile_pair.candidate, "--target", "p=1024", "--html", html,
                       "--max-plots", "1")
    assert code == OK and "kernel" in out
    page = html.read_text(encoding="utf-8")
    assert page.count("<svg") == 1 and "<h1>scalecheck models</h1>" in page


# -- scalecheck comment ------------------------------------------------------------------------------------------

@pytest.fixture
def summary_md(tmp_path: Path) -> Path:
    path = tmp_path / "summary.md"
    path.write_text("### :x: scalecheck: FAIL\n", encoding="utf-8")
    return path


def test_comment_updates_the_sticky_comment(capsys: pytest.CaptureFixture[str], github: FakeGitHub,  # noqa: F811
                                            summary_md: Path, monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}), encoding="utf-8")
    for name, value in {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": github.url,
                        "GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request"}.items():
        monkeypatch.setenv(name, value)
    existing = github.add(f"{marker()}\nold", login=BOT)
    code, out, err = cli(capsys, "comment", "--markdown", summary_md)
    assert (code, err) == (OK, "")
    assert out == f"updated the scalecheck comment on {REPO}#7: https://github.com/{REPO}/pull/7#issuecomment-" \
                  f"{existing}\n"
    assert github.comments[0]["body"] == f"{marker()}\n### :x: scalecheck: FAIL\n"
    code, out, _ = cli(capsys, "comment", "--markdown", summary_md, "--key", "linux", "--update-only")
    assert code == OK and out.startswith(f"no earlier scalecheck comment on {REPO}#7 to update (--update-only)")
    code, out, _ = cli(capsys, "comment", "--markdown", summary_md, "--key", "linux")
    assert code == OK and out.startswith(f"created the scalecheck comment on {REPO}#7")
    assert len(github.comments) == 2


@pytest.mark.parametrize(("env", "args", "message"), [
    ({"GITHUB_REPOSITORY": REPO}, ["--pr", "7"],
     "scalecheck: error: GITHUB_TOKEN is not set: scalecheck cannot comment on the pull request"),
    ({"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "push"}, [],
     "scalecheck: error: no pull request number: this push event is not about a pull request"),
    ({"GITHUB_TOKEN": TOKEN}, ["--pr", "7"], "scalecheck: error: no repository: GITHUB_REPOSITORY is not set"),
])
def test_comment_errors(capsys: pytest.CaptureFixture[str], summary_md: Path, monkeypatch: pytest.MonkeyPatch,
                        env: dict[str, str], args: list[str], message: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, out, err = cli(capsys, "comment", "--markdown", summary_md, *args)
    assert (code, out) == (USAGE_ERROR, "")
    assert len(err.splitlines()) == 1 and err.startswith(f"{message}; fix: ")
    assert TOKEN not in err


def test_comment_posts_the_markdown_report_of_hostile_names_unchanged(
        capsys: pytest.CaptureFixture[str], github: FakeGitHub, hostile_pair: Pair,  # noqa: F811
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`scalecheck comment` treats its Markdown as untrusted; the report's own Markdown passes as it is."""
    from scalecheck.report.markdown import render_check_markdown

    report = render_check_markdown(hostile_pair.result.verdict, hostile_pair.result.context)
    assert "@\u2060octocat" in report and "&lt;script&gt;" in report and "<details>" in report
    md = tmp_path / "comment.md"
    md.write_text(report, encoding="utf-8")
    for name, value in {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": github.url}.items():
        monkeypatch.setenv(name, value)
    code, out, err = cli(capsys, "comment", "--markdown", md, "--pr", "7")
    assert (code, err) == (OK, "")
    assert github.comments[0]["body"] == f"{marker()}\n{report}"


def test_comment_rejects_a_pr_number_that_is_not_a_number(capsys: pytest.CaptureFixture[str],
                                                          summary_md: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["comment", "--markdown", str(summary_md), "--pr", "7; rm -rf /"])
    assert exit_info.value.code == USAGE_ERROR
    err = capsys.readouterr().err
    assert "argument --pr: '7; rm -rf /' is not a pull request number (a positive whole number)" in err


def test_comment_needs_the_markdown_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = cli(capsys, "comment", "--markdown", tmp_path / "nope.md", "--pr", "1")
    assert code == USAGE_ERROR
    assert err.splitlines() == [f"scalecheck: error: {tmp_path / 'nope.md'}: no such file; fix: write it first with "
                                "scalecheck check --markdown FILE"]


def test_github_mode_says_which_findings_were_held_back_across_machines(
        capsys: pytest.CaptureFixture[str], actions: dict[str, Path], tmp_path: Path) -> None:
    """A uniform 30% slowdown measured on another machine: reported, held back, explained in the annotations, the
    job summary and the JSON, and the build passes."""
    from .conftest import BASE, document

    files = {}
    for name, scale, machine in (("base", 1.0, '{"cpu": "AMD EPYC 7763", "host": "a"}'),
                                 ("cand", 1.3, '{"cpu": "Intel Xeon 8370C", "host": "b"}')):
        doc = document({k: (lambda f: lambda p: scale * f(p))(f) for k, f in BASE.items()}, 7)
        doc["meta"] = {"machine": json.loads(machine)}
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = cli(capsys, "check", files["cand"], "--baseline", files["base"], "--github",
                         "--json", tmp_path / "check.json", *FAST)
    assert (code, err) == (OK, "")
    held = [line for line in out.splitlines() if line.startswith("::warning ") and "(held back: " in line]
    assert held and all("cpu 'AMD EPYC 7763' vs 'Intel Xeon 8370C'" in line for line in held)
    notice = [line for line in out.splitlines() if line.startswith("::notice title=scalecheck::findings held back")]
    assert len(notice) == 1 and "scalecheck check --same-job" in notice[0]
    summary = actions["summary"].read_text(encoding="utf-8")
    assert "findings held back" in summary and "Intel Xeon 8370C" in summary
    doc = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    assert doc["verdict"] == "pass" and doc["machines"]["held_back"].startswith("the machines differ")
    assert {f["kind"] for f in doc["findings"] if f["held"]} >= {"prediction"}
