"""L6: `scalecheck check`: compare the candidate's measurements with the baseline's and decide."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from scalecheck.cli._common import INTERRUPTED, OK, REGRESSION, command
from scalecheck.cli._settings import add_settings, settings
from scalecheck.errors import ConfigError, GitHubError, Location

EPILOG = """\
examples:
  scalecheck check bench/results.json --baseline origin/main
  scalecheck check new.json --baseline old.json --html report.html --markdown comment.md
  scalecheck check new.json --baseline old.json --target p=4096 --json check.json
  scalecheck check --expect 'solver->*=p log p' --fail-on growth,expectation
  scalecheck check --same-job --baseline origin/main -- pytest tests/perf --scalecheck-save {out}

The baseline is a measurement file, or a git ref: the merge-base of HEAD and that ref,
walking back its first-parent history to the nearest commit with measurements (on the
data branch written by `scalecheck record`, or committed files named by the measurements
setting). In GitHub Actions the pull request's base branch is the default.

Findings per (kernel, metric): growth, prediction, expectation, measured, segmentation,
structure, overhead (and improvement, which never fails). Settings come from
[tool.scalecheck] (pyproject.toml or scalecheck.toml); a flag overrides its setting.

exit status: 0 pass, 1 a new scalability problem, 2 bad input or usage, 3 internal error."""


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    check = command(commands, "check",
                    help="compare measurements against a baseline and fail on a new scalability problem",
                    description="Model the candidate's and the baseline's measurements, compare every (kernel, "
                                "metric) with noise-aware statistics, and fail (exit status 1) on a new scalability "
                                "problem.", epilog=EPILOG)
    # strings, not paths: with --same-job they are the command's words, and Path('./bench.sh') would drop the './'
    check.add_argument("files", nargs="*", metavar="CANDIDATE",
                       help="the candidate's measurement files (default: the measurements setting); with "
                            "--same-job, the measurement command after --")
    check.add_argument("--baseline", metavar="REF_OR_FILE",
                       help="a measurement file or a git ref; with --same-job, a git ref (default in GitHub "
                            "Actions: the pull request's base branch)")
    same = check.add_argument_group(
        "same-job mode", "measure the baseline commit and the working tree in this job, in alternating rounds, "
                         "then check: no stored baseline, and no difference of machine or load between the sides")
    same.add_argument("--same-job", action="store_true",
                      help="run the command after -- (an argument list, no shell; write -- bash -c '...' for one) "
                           "once per side and round: the baseline (the merge-base of HEAD and --baseline REF) in a "
                           "temporary git worktree, the candidate (the working tree as it is) here. Each run must "
                           "write its measurements to the file that {out} in its arguments becomes (also in "
                           "SCALECHECK_OUTPUT); {round} and {side} are replaced too, the environment has "
                           "SCALECHECK_ROUND, SCALECHECK_ROUNDS, SCALECHECK_SIDE (baseline or candidate) and "
                           "SCALECHECK_COMMIT, and PYTHONPATH starts with the side's top folder and its src folder")
    same.add_argument("--rounds", type=int, metavar="N",
                      help="rounds of --same-job, each running the command once per side: baseline first in odd "
                           "rounds, candidate first in even ones (default 2)")
    out = check.add_argument_group("reports (each written atomically)")
    out.add_argument("--json", type=Path, metavar="OUT", help="write the verdict as JSON")
    out.add_argument("--html", type=Path, metavar="OUT",
                     help="write a self-contained HTML report: verdict, sortable table of all kernels, plots of the "
                          "kernels with findings, configuration")
    out.add_argument("--markdown", type=Path, metavar="OUT",
                     help="write the Markdown for a pull-request comment (at most 65,536 characters; see "
                          "`scalecheck comment`)")
    out.add_argument("--max-plots", type=int, default=20, metavar="N",
                     help="plot at most the N worst kernels in the HTML report (default 20; 0: no plots)")
    out.add_argument("--report-url", metavar="URL",
                     help="link to the full report, shown when the Markdown is truncated (default in GitHub "
                          "Actions: the workflow run, where the report artifact is)")
    out.add_argument("--github", action=argparse.BooleanOptionalAction, default=None,
                     help="GitHub Actions mode (default: on when GITHUB_ACTIONS=true): append the Markdown to the job "
                          "summary, write the outputs verdict, findings and report to $GITHUB_OUTPUT, and annotate "
                          "the 10 worst errors and warnings")
    add_settings(check, "check")
    check.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from scalecheck.api import check
    from scalecheck.files import check_outputs

    if args.max_plots < 0:
        raise ConfigError(f"--max-plots must be 0 or more, got {args.max_plots}", fix="use --max-plots 20, say")
    check_outputs({"--json": args.json, "--html": args.html, "--markdown": args.markdown})  # before the work
    _check_baseline_name(args.baseline)
    if not args.same_job:
        if args.rounds is not None:
            raise ConfigError("--rounds counts the rounds of --same-job", fix="add --same-job and the measurement "
                                                                            "command, or drop --rounds")
        return report(args, check(args.files, args.baseline, settings(args, "check")))
    from scalecheck.samejob import DEFAULT_ROUNDS, measure_both

    config = settings(args, "check")  # before measuring: a wrong setting must not wait for the measurements

    def progress(line: str) -> None:
        sys.stdout.flush()  # what scalecheck printed comes before the command's own output
        print(f"scalecheck: {line}", file=sys.stderr, flush=True)

    try:
        candidate, baseline, same_job = measure_both(
            args.files, args.baseline, rounds=DEFAULT_ROUNDS if args.rounds is None else args.rounds,
            cwd=Path.cwd(), env=os.environ, fmt=config.format, progress=progress)
    except KeyboardInterrupt:
        print("scalecheck: interrupted; the baseline's worktree and the measurements were removed", file=sys.stderr)
        return INTERRUPTED
    return report(args, check(candidate, baseline, config, same_job=same_job))


def report(args: argparse.Namespace, result) -> int:  # type: ignore[no-untyped-def]
    """Write the reports a check asked for, print the verdict (the GitHub way in Actions) and pick the exit status."""
    from scalecheck.github.workflow import Actions, running_in_actions
    from scalecheck.report.check_report import render_check_json, render_check_text
    from scalecheck.files import write_all

    github = running_in_actions(os.environ) if args.github is None else args.github
    actions = Actions.from_env(os.environ)
    verdict, context = result.verdict, result.context
    report_url = args.report_url or actions.run_url
    outputs: list[tuple[Path, str]] = []  # all rendered before any is written: the reports are replaced as a set
    if args.json is not None:
        outputs.append((args.json, render_check_json(verdict, context)))
    if args.html is not None:
        from scalecheck.report.html_report import render_check_html

        from scalecheck.api import check_plots

        outputs.append((args.html, render_check_html(verdict, context, plots=check_plots(result, args.max_plots))))
    if args.markdown is not None:
        from scalecheck.report.markdown import render_check_markdown

        outputs.append((args.markdown, render_check_markdown(verdict, context, artifact_url=report_url)))
    text = render_check_text(verdict, context)
    write_all(outputs)
    if github:
        _github_report(result, actions, text, args.html, report_url)
    else:
        sys.stdout.write(text)
    return REGRESSION if verdict.failed else OK


def _github_report(result, actions, text: str, html: Path | None, report_url: str | None) -> None:  # type: ignore[no-untyped-def]
    """Print the text with workflow commands stopped (kernel names are untrusted), then the annotations; append the
    job summary and write the step outputs."""
    from scalecheck.github.workflow import annotation, annotations, append_summary, stop_commands, write_outputs
    from scalecheck.report.markdown import SUMMARY_LIMIT, render_check_markdown

    verdict = result.verdict
    stop, resume = stop_commands()
    sys.stdout.write(f"{stop}\n{text}{resume}\n")
    for line in annotations(verdict.findings):
        print(line)
    for notice in result.context.notices:  # no baseline yet, findings held back: said where the job shows it
        print(annotation("notice", notice, title="scalecheck"))
    if actions.summary is not None:
        used = _size(actions.summary)
        room = SUMMARY_LIMIT - used - 1
        if room < 4096:
            print(f"scalecheck: the job summary is full ({used} bytes); not appending", file=sys.stderr)
        else:
            append_summary(actions.summary, render_check_markdown(verdict, result.context, limit=room,
                                                                  artifact_url=report_url))
    else:
        print("scalecheck: --github: GITHUB_STEP_SUMMARY is not set; no job summary written", file=sys.stderr)
    if actions.output is not None:
        write_outputs(actions.output, {"verdict": "fail" if verdict.failed else "pass",
                                       "findings": str(len(verdict.findings)),
                                       "report": "" if html is None else str(html)})
    else:
        print("scalecheck: --github: GITHUB_OUTPUT is not set; no step outputs written", file=sys.stderr)


def _check_baseline_name(baseline: str | None) -> None:
    """A `ConfigError` for a --baseline the file system refuses to look up (a name too long, a folder that cannot
    be read), which could be neither a measurement file nor a git ref scalecheck can read."""
    if baseline is None:
        return
    try:
        Path(baseline).is_file()
    except OSError as err:
        raise ConfigError(f"--baseline '{baseline}': cannot look it up as a file: {err.strerror or err}",
                          fix="pass a git ref (a branch, a tag or a commit sha) or the path of a measurement "
                              "file") from None


def _size(summary: Path) -> int:
    """The size of the job summary file so far (0 when it does not exist yet)."""
    try:
        return summary.stat().st_size
    except FileNotFoundError:
        return 0
    except OSError as err:
        raise GitHubError(f"cannot read the job summary: {err.strerror or err}", where=Location(summary),
                          fix="point GITHUB_STEP_SUMMARY at a writable file (GitHub Actions sets it)") from None
