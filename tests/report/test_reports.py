"""The HTML and Markdown reports: content, inert hostile names, size limits, strict templates."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import jinja2
import pytest
from markupsafe import escape

from scalecheck.api import check_plots
from scalecheck.data.verdict import SEVERITIES, Verdict
from scalecheck.report.check_report import render_check_text
from scalecheck.report.html_report import render_check_html, render_model_html
from scalecheck.report.markdown import COMMENT_LIMIT, render_check_markdown
from scalecheck.report.templating import html_environment, md_code, md_text, templates_dir
from scalecheck.text import visible

from .conftest import HOSTILE, Pair


@pytest.fixture(scope="module")
def page(hostile_pair: Pair) -> str:
    r = hostile_pair.result
    return render_check_html(r.verdict, r.context, plots=check_plots(r, 3))


def test_the_planted_kernels_fail_and_the_html_says_why(hostile_pair: Pair, page: str) -> None:
    failing = {f.kernel for f in hostile_pair.result.verdict.failures}
    assert failing == {"main->solve", *HOSTILE}
    assert '<section class="verdict fail" id="verdict">' in page
    assert "FAIL: 6 kernel(s) with a new scalability problem" in page
    assert "main-&gt;solve" in page and "grows as p^(3/2), the baseline as p" in page
    assert "<h2>Configuration</h2>" in page and "<dt>threshold</dt>" in page and "<dt>bootstrap</dt>" in page
    assert f"file {html.escape(str(hostile_pair.baseline))}" in page  # the commits (here: files) compared


def test_the_html_is_self_contained(page: str) -> None:
    assert "<link" not in page and 'src="http' not in page and "@import" not in page
    assert all(ref.startswith("#") for ref in re.findall(r"url\(([^)]*)\)", page))  # in-page references only
    assert "xlink:href" not in page and " href=\"http" not in page
    assert re.search(r"""<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; """
                     r"""style-src 'unsafe-inline'; script-src 'sha256-[A-Za-z0-9+/=]+'">""", page)
    assert page.count("<svg") == 3  # --max-plots 3
    assert page.count("Not plotted: only the 3 worst kernels are (--max-plots).") == 3


def test_the_kernel_table_lists_every_kernel_worst_first(hostile_pair: Pair, page: str) -> None:
    body = page.split('<table id="kernels">')[1].split("</table>")[0]
    rows = body.split("<tr data-severity=")[1:]
    assert len(rows) == len(hostile_pair.result.verdict.comparison.kernels) == 7
    assert [row.split('"')[1] for row in rows] == ["error"] * 6 + ["none"]
    assert "main-&gt;io" in rows[-1]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_inert_in_html(page: str, name: str) -> None:
    if any(c in name for c in "<>&\"'"):
        assert name not in page
    assert str(escape(visible(name))) in page  # a line break shows as \n, as in the text and the annotations
    assert "<script>alert" not in page and "<img src=x" not in page


def test_only_the_report_script_runs(page: str) -> None:
    scripts = re.findall(r"<script[^>]*>", page)
    assert scripts == ["<script>"]  # the one inline script, allowed by its hash
    assert "onerror=" not in page.replace("onerror=alert(1)&gt;", "")


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_inert_in_markdown(hostile_pair: Pair, name: str) -> None:
    r = hostile_pair.result
    text = render_check_markdown(r.verdict, r.context)
    assert "<script" not in text and "<img" not in text
    assert "@octocat" not in text  # no mention: '@' is followed by a word joiner or sits in a code span
    for line in text.splitlines():
        if line.startswith("| :x:"):
            cells = re.split(r"(?<!\\)\|", line)
            assert len(cells) == 9, line  # a '|' in a name does not add a column
    assert md_code(name) in text


def test_markdown_escaping_rules() -> None:
    assert md_code("a|b") == "<code>a\\|b</code>"
    assert md_code("x`y<") == "<code>x\\`y&lt;</code>"
    assert md_code("a\nb") == "<code>a\\\\nb</code>"  # the newline as the text '\\n', its backslash escaped
    assert md_text("<b>@team</b>") == "&lt;b&gt;@\u2060team&lt;/b&gt;"
    assert md_text("[x](http://e.example)") == "\\[x\\]\\(http\\://e\\.example\\)"


def test_markdown_puts_the_verdict_first_and_folds_the_evidence(hostile_pair: Pair) -> None:
    r = hostile_pair.result
    text = render_check_markdown(r.verdict, r.context, artifact_url="https://github.com/o/r/actions/runs/1")
    first = text.splitlines()[0]
    assert first.startswith("### :x: scalecheck: FAIL")
    assert "<details><summary>Evidence for 12 finding(s)</summary>" in text
    assert "<details><summary>All 7 kernels</summary>" in text
    assert "[Full report](https://github.com/o/r/actions/runs/1)" in text


def test_markdown_is_cut_to_the_limit_worst_first_with_a_link(hostile_pair: Pair) -> None:
    r = hostile_pair.result
    many = tuple(replace(f, kernel=f"{f.kernel}-{i}") for i in range(300) for f in r.verdict.findings)
    verdict = Verdict(r.verdict.comparison, many, r.verdict.fail_on)
    full = render_check_markdown(verdict, r.context, limit=10**9)
    assert len(full) > COMMENT_LIMIT
    cut = render_check_markdown(verdict, r.context, artifact_url="https://example.test/run")
    assert len(cut.encode("utf-8")) <= COMMENT_LIMIT
    assert "**Truncated** to fit GitHub's limit. [Full report](https://example.test/run)" in cut
    assert md_code(many[0].kernel) in cut  # the worst finding is kept
    assert re.search(r"^\d+ more finding\(s\) not listed here\.$", cut, re.M)


def test_a_kernel_name_longer_than_the_limit_still_gives_a_comment(hostile_pair: Pair) -> None:
    r = hostile_pair.result
    huge = tuple(replace(f, kernel="k" * 100_000) for f in r.verdict.findings)
    text = render_check_markdown(Verdict(r.verdict.comparison, huge, r.verdict.fail_on), r.context)
    assert len(text.encode("utf-8")) <= COMMENT_LIMIT
    assert text.startswith("### :x: scalecheck: FAIL")
    assert f"{len(huge)} finding(s) not listed here." in text and "k" * 1000 not in text


def test_text_output_keeps_a_hostile_name_on_one_line(hostile_pair: Pair) -> None:
    r = hostile_pair.result
    text = render_check_text(r.verdict, r.context)
    assert not any(line.startswith("::") for line in text.splitlines())
    assert "x\\n::error title=t::injected" in text


def test_templates_fail_on_undefined_variables(hostile_pair: Pair) -> None:
    template = html_environment().get_template("check.html.j2")
    with pytest.raises(jinja2.UndefinedError):
        template.render(script="", script_hash="", version="0")
    assert (templates_dir() / "base.html.j2").is_file()


def test_model_report_ranks_and_plots(hostile_pair: Pair) -> None:
    from scalecheck.api import fit_models, model_plots
    from scalecheck.core.search import FitOptions
    from scalecheck.formats import read_many

    run = read_many([hostile_pair.candidate])
    table = fit_models(run, target={"p": 1024})
    page = render_model_html(table, model_plots(table, run.series, FitOptions(), 2), sources="candidate.json")
    assert page.count("<svg") == 2
    assert page.count('<tr data-severity="none">') == 7
    for name in HOSTILE:
        assert str(escape(visible(name))) in page
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "p^(3/2)" in page


def test_a_finding_kind_the_gate_reports_has_a_severity_style() -> None:
    css = (templates_dir() / "report.css").read_text()
    for severity in (*SEVERITIES, "none"):
        assert f".sev-{severity}" in css


def test_every_report_names_the_machines_the_notices_and_held_findings(hostile_pair: Pair) -> None:
    """The same verdict as if measured on two machines: HTML, Markdown and text say where each side ran, which
    findings were held back and why, and recommend the same-job mode; a hostile machine name stays inert."""
    r = hostile_pair.result
    held = "held back: the machines differ: cpu 'A' vs 'B'"
    findings = tuple(replace(f, severity="warning", held=held) if f.kind == "prediction" else f
                     for f in r.verdict.findings)
    verdict = replace(r.verdict, findings=findings)
    notice = "findings held back: the machines differ. Measure both commits in one job (scalecheck check --same-job)"
    context = replace(r.context, baseline_machine="<b>A</b>", candidate_machine="B", held_reason="the machines differ",
                      notices=(notice,))
    page = render_check_html(verdict, context)
    assert f'<p class="notice">{escape(notice)}</p>' in page
    assert "<dt>machines</dt><dd>baseline &lt;b&gt;A&lt;/b&gt;; candidate B</dd>" in page
    assert f"<em>{escape(held)}</em>" in page
    markdown = render_check_markdown(verdict, context)
    assert "\n> :information_source: findings held back\\: the machines differ\\. Measure both commits in one job " \
           "\\(scalecheck check \\-\\-same\\-job\\)\n" in markdown
    assert " · **machines** baseline &lt;b&gt;A&lt;/b&gt;; candidate B\n\n|" in markdown and "<b>A</b>" not in markdown
    text = render_check_text(verdict, context)
    assert text.splitlines()[1] == f"notice: {notice}"
    assert "machines:  baseline <b>A</b>; candidate B" in text and f"    {held}" in text
    same = replace(context, same_job="both sides measured in this job, 2 rounds alternating baseline and candidate")
    assert "measured:  both sides measured in this job, 2 rounds" in render_check_text(verdict, same)
