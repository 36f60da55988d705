"""L6: the `scalecheck` command. The only place that prints errors and picks exit codes.

Heavy modules (numpy, scipy, the readers) are imported inside the command functions, so `scalecheck --help`
stays fast.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

from scalecheck import __version__
from scalecheck.errors import ConfigError, ScalecheckError

OK, REGRESSION, USAGE_ERROR, INTERNAL_ERROR = 0, 1, 2, 3
INTERRUPTED = 130  # 128 + SIGINT, as shells report a program stopped by Ctrl-C
# Kept here, not imported from scalecheck.formats, so that --help does not load numpy (a test keeps them equal).
FORMAT_NAMES = ("scalecheck-json", "jsonl", "csv", "extrap-text", "extrap-json", "talpas")
AGGREGATE_NAMES = ("mean", "median", "min", "tmax")  # scalecheck.core.search.AGGREGATE_NAMES (a test keeps them equal)

_MODEL_EPILOG = """\
examples:
  scalecheck model examples/mpi_data_mean.txt --target p=65536
  scalecheck model results.json --kernel 'solver->*' --metric time --json models.json
  scalecheck model relearn.txt --target p=4096,n=100000
  scalecheck model examples/segmented.txt --target p=20      (a change point at p=6)

The model of each kernel is chosen from the performance model normal form (PMNF)
  f(x) = c0 + sum_k c_k * prod_l x_l^i_kl * log2(x_l)^j_kl
by leave-one-out cross-validation, with every term weighed against the noise the
repetitions show. Kernels with fewer than 3 distinct values of a parameter are
listed as insufficient data; all others are still modeled.

Single-parameter kernels with at least 6 distinct values are first searched for
segmented behaviour (a trend that changes at some scale: an MPI library switching
algorithms, data spilling out of a cache). A segmented kernel gets one model per
segment; its row shows the last segment, which is what predictions use, and the
segments and change points are listed below the table. A segment with fewer than
5 points is marked insufficient, with the range where more measurements are needed.

exit status: 0 success, 2 bad input or usage, 3 internal error.
"""


class _Parser(argparse.ArgumentParser):
    """argparse with scalecheck's error line (exit status 2, no usage dump for a bad value)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"scalecheck: error: {message}", file=sys.stderr)
        sys.exit(USAGE_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scalecheck", description="Catch scalability bugs: fit performance models to "
                     "measurements taken at several scales, and find the kernels that will not scale.")
    parser.add_argument("--version", action="version", version=f"scalecheck {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    model = commands.add_parser(
        "model", help="fit a performance model to every kernel and rank them",
        description="Fit a performance model to every (kernel, metric) in the measurement files and print them "
                    "ranked by predicted value at the target scale (or by growth without a target).",
        epilog=_MODEL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    model.add_argument("files", nargs="+", metavar="FILE", type=Path,
                       help="measurement files; several files are merged (same parameters)")
    model.add_argument("--format", choices=FORMAT_NAMES, metavar="NAME",
                       help=f"read every FILE in this format instead of detecting it: {', '.join(FORMAT_NAMES)}")
    model.add_argument("--target", metavar="P=V[,Q=W]",
                       help="scale to predict at and rank by, one value per parameter, e.g. p=65536")
    model.add_argument("--metric", action="append", default=[], metavar="M",
                       help="model only this metric (repeatable; default: all)")
    model.add_argument("--kernel", action="append", default=[], metavar="GLOB",
                       help="model only kernels matching this glob, e.g. 'main->solve*' (repeatable)")
    model.add_argument("--json", type=Path, metavar="OUT",
                       help="also write the models as JSON to OUT (written atomically)")
    model.add_argument("--html", type=Path, metavar="OUT",
                       help="also write a self-contained HTML report: the ranked table (sortable, filterable) and "
                            "plots of the first kernels with their confidence bands (written atomically)")
    model.add_argument("--max-plots", type=int, default=20, metavar="N",
                       help="plot at most the first N kernels of the ranking in the HTML report (default 20)")
    fit = model.add_argument_group("model search")
    fit.add_argument("--aggregate", choices=AGGREGATE_NAMES, default="mean",
                     help="statistic of the repetitions at each point: mean (default, as Extra-P), median, min, or "
                          "tmax (min(S) plus the 0.95 quantile of the noise model fitted to the repetitions; "
                          "needs about 10 or more repetitions per point)")
    fit.add_argument("--max-terms", type=int, default=2, metavar="N",
                     help="most terms per parameter besides the constant; a second term needs at least 7 points "
                          "(default: 2)")
    fit.add_argument("--allow-decreasing", action="store_true",
                     help="accept models whose lead term decreases (default: such kernels are modeled as constant)")
    fit.add_argument("--exponents", metavar="LIST",
                     help="polynomial exponents i to search, e.g. '0,1/2,1,3/2,2' (default: Extra-P's 20)")
    fit.add_argument("--log-exponents", metavar="LIST",
                     help="logarithm exponents j to search, e.g. '0,1,2'; with --exponents every (i, j) pair is "
                          "searched (default: Extra-P's 42 pairs)")
    fit.add_argument("--refine", action="store_true",
                     help="search-space refinement (Reisert et al.): search exponents on a grid of 1/24 along "
                          "Extra-P's four slices (single-parameter kernels)")
    fit.add_argument("--alpha", type=float, default=0.01, metavar="A",
                     help="significance level of the constant test, of each extra term and of the test that "
                          "confirms a change point (default: 0.01)")
    fit.add_argument("--no-segmentation", action="store_true",
                     help="do not search for change points: one model per kernel over all its points")
    model.set_defaults(run=_model)
    _add_check(commands)
    _add_record(commands)
    _add_history(commands)
    _add_comment(commands)
    _add_cluster(commands)
    _add_overhead(commands)
    _add_measure(commands)
    from scalecheck.cli import ci

    ci.add_parser(commands)
    return parser


_CHECK_EPILOG = """\
examples:
  scalecheck check bench/results.json --baseline origin/main
  scalecheck check new.json --baseline old.json --html report.html --markdown comment.md
  scalecheck check new.json --baseline old.json --target p=4096 --json check.json
  scalecheck check --expect 'solver->*=p log p' --fail-on growth,expectation
  scalecheck check --same-job --baseline origin/main -- pytest tests/perf --scalecheck-save {out}

The baseline is a measurement file, or a git ref: scalecheck takes the merge-base of
HEAD and that ref and walks back its first-parent history to the nearest commit with
measurements (on the data branch written by `scalecheck record`, or committed files
named by the measurements setting), and says which commit it used. In GitHub Actions
the pull request's base branch is the default.

Findings, per (kernel, metric):
  growth       the lead-order growth rose (e.g. p -> p^(3/2)); a test of whether one
               model class fits both commits, and the bootstrap probability
  prediction   slower at the target scale: the lower confidence bound of the ratio
               candidate/baseline exceeds 1 + threshold
  expectation  grows faster than configured ([tool.scalecheck.expectations])
  measured     slower at the measured points (rank tests, median ratio > 1 + threshold)
  segmentation the trend now changes at some scale
  structure    a group of processes appears, disappears or changes its call pairs
               (when both sides' files have a processes section; see scalecheck cluster)
  overhead     more of the candidate's repetitions lie above the baseline's t_max (its
               0.95 noise quantile) than chance allows, at points where the baseline
               has at least 10 repetitions of a time (see scalecheck overhead)
  improvement  growth or prediction down (reported, never fails)
p-values of all kernels are adjusted together (Benjamini-Hochberg); resamples are
seeded, so the verdict is reproducible.

Settings come from [tool.scalecheck] in pyproject.toml or from scalecheck.toml (found
from the working folder upwards); every flag below overrides its setting.

exit status: 0 pass, 1 a new scalability problem, 2 bad input or usage, 3 internal error.
"""


def _add_settings(parser: argparse.ArgumentParser) -> None:
    """Flags that override [tool.scalecheck] settings (default None: keep the file's value)."""
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="settings file (pyproject.toml or scalecheck.toml; default: found from the working "
                             "folder upwards)")
    parser.add_argument("--format", choices=FORMAT_NAMES, metavar="NAME",
                        help=f"read measurement files in this format: {', '.join(FORMAT_NAMES)}")
    parser.add_argument("--store", choices=("auto", "branch", "repo"),
                        help="where measurements of past commits are: the data branch, files committed in the "
                             "repository, or auto (branch first; default)")
    parser.add_argument("--data-branch", metavar="BRANCH", help="data branch name (default: scalecheck-data)")


def _add_check(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    check = commands.add_parser(
        "check", help="compare measurements against a baseline and fail on a new scalability problem",
        description="Model the candidate's and the baseline's measurements, compare every (kernel, metric) with "
                    "noise-aware statistics, and fail (exit status 1) on a new scalability problem.",
        epilog=_CHECK_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    _add_settings(check)
    check.add_argument("--target", metavar="P=V[,Q=W]",
                       help="scale to compare predictions at (default: 4x the largest measured value)")
    check.add_argument("--metric", action="append", metavar="M", help="check only this metric (repeatable)")
    check.add_argument("--kernel", action="append", metavar="GLOB", help="check only matching kernels (repeatable)")
    gate = check.add_argument_group("gate")
    gate.add_argument("--threshold", type=float, metavar="X",
                      help="relative slowdown that counts as a regression (default 0.10)")
    gate.add_argument("--confidence", type=float, metavar="C",
                      help="confidence of bounds and probabilities; 1 - C is the false discovery rate "
                           "(default 0.95)")
    gate.add_argument("--bootstrap", type=int, metavar="N", help="resamples per kernel and side (default 200)")
    gate.add_argument("--seed", type=int, metavar="S", help="seed of the resampling (default 0)")
    gate.add_argument("--fail-on", metavar="KINDS",
                      help="comma-separated kinds that fail the build (default growth,prediction,expectation; "
                           "'' to only report)")
    gate.add_argument("--fail-across-machines", action="store_true", default=None,
                      help="let level findings (prediction, measured, overhead, segmentation) and growth within what "
                           "a memory hierarchy does fail the build even when the two sides were measured on "
                           "different machines (default: such findings are reported as warnings)")
    gate.add_argument("--missing-baseline", choices=("pass", "fail"),
                      help="when no commit on the baseline side has measurements yet: pass with a notice (default; "
                           "expectations still apply) or fail with an error (exit status 2)")
    gate.add_argument("--expect", action="append", metavar="GLOB=GROWTH",
                      help="kernels matching GLOB must grow no faster than GROWTH, e.g. 'solver->*=p log p' "
                           "(repeatable; replaces the configured expectations)")
    fit = check.add_argument_group("model search")
    fit.add_argument("--aggregate", choices=AGGREGATE_NAMES,
                     help="statistic of the repetitions: mean, median, min or tmax (default mean)")
    fit.add_argument("--max-terms", type=int, metavar="N", help="most terms per parameter (default 2)")
    fit.add_argument("--alpha", type=float, metavar="A", help="significance level of the model search (0.01)")
    fit.add_argument("--exponents", metavar="LIST", help="polynomial exponents i to search, e.g. '0,1/2,1,2'")
    fit.add_argument("--log-exponents", metavar="LIST", help="logarithm exponents j to search, e.g. '0,1,2'")
    fit.add_argument("--allow-decreasing", action="store_true", default=None,
                     help="accept models whose lead term decreases")
    fit.add_argument("--refine", action="store_true", default=None,
                     help="search-space refinement (exponents on a 1/24 grid)")
    fit.add_argument("--no-segmentation", action="store_true", default=None,
                     help="do not search for change points")
    check.set_defaults(run=_check)


def _add_record(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    record = commands.add_parser(
        "record", help="store a commit's measurements on the data branch",
        description="Commit the measurement files, converted to scalecheck's JSON, to the data branch as "
                    "<commit sha>.json, without touching the working tree or the index. Push the branch to share "
                    "it (git push origin scalecheck-data).",
        epilog="example:\n  scalecheck record bench/results.json --commit HEAD\n\nexit status: 0 recorded, "
               "2 bad input or usage, 3 internal error.", formatter_class=argparse.RawDescriptionHelpFormatter)
    record.add_argument("files", nargs="*", metavar="FILE", type=Path,
                        help="measurement files (default: the measurements setting)")
    record.add_argument("--commit", default="HEAD", metavar="REF", help="the commit measured (default HEAD)")
    _add_settings(record)
    record.set_defaults(run=_record)


def _add_history(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    history = commands.add_parser(
        "history", help="each kernel's model and growth over the measured commits",
        description="Model the measurements of every commit on the first-parent history of REF that has some, "
                    "and show each kernel's growth class per commit and the commits where it changed.",
        epilog="example:\n  scalecheck history --ref main --kernel 'solver->*'\n\nexit status: 0 success, "
               "2 bad input or usage, 3 internal error.", formatter_class=argparse.RawDescriptionHelpFormatter)
    history.add_argument("--ref", default="HEAD", help="where the walk starts (default HEAD)")
    history.add_argument("--kernel", action="append", metavar="GLOB", help="only matching kernels (repeatable)")
    history.add_argument("--metric", action="append", metavar="M", help="only this metric (repeatable)")
    history.add_argument("--limit", type=int, default=50, metavar="N",
                         help="most measured commits to show (default 50)")
    history.add_argument("--json", type=Path, metavar="OUT", help="also write the history as JSON (atomically)")
    _add_settings(history)
    history.set_defaults(run=_history)


_COMMENT_EPILOG = """\
examples:
  scalecheck check new.json --baseline origin/main --markdown summary.md
  scalecheck comment --markdown summary.md
  scalecheck comment --markdown summary.md --pr 42 --key linux      (from a workflow_run workflow)

The comment carries a hidden marker (<!-- scalecheck-comment:KEY -->) on its first
line; a later run finds the comment by it and updates it instead of adding another.
In GitHub Actions the token comes from GITHUB_TOKEN, the repository from
GITHUB_REPOSITORY, the API from GITHUB_API_URL and the pull request from the event.
Pull requests from forks get a read-only token: see examples/workflows/fork-safe/.

exit status: 0 commented (or skipped with --update-only), 2 no token, no pull request,
a read-only token or another API error.
"""


def _add_comment(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    comment = commands.add_parser(
        "comment", help="create or update the sticky pull-request comment with a check's Markdown",
        description="Post the Markdown written by `scalecheck check --markdown` as a pull-request comment, or "
                    "update the comment an earlier run posted.",
        epilog=_COMMENT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    comment.add_argument("--markdown", type=Path, required=True, metavar="FILE",
                         help="the Markdown to post (from scalecheck check --markdown)")
    comment.add_argument("--pr", type=_positive_int, metavar="N",
                         help="pull request number (default: from the GitHub Actions event)")
    comment.add_argument("--repo", metavar="OWNER/NAME", help="repository (default: $GITHUB_REPOSITORY)")
    comment.add_argument("--key", default="default", metavar="KEY",
                         help="which sticky comment, when several checks comment on one pull request "
                              "(letters, digits, '_', '.', '-'; default 'default')")
    comment.add_argument("--update-only", action="store_true",
                         help="update an earlier comment but never create one (for a passing check that should "
                              "only replace an earlier failure)")
    comment.set_defaults(run=_comment)


def _positive_int(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a pull request number (a positive whole number)")
    return int(text)


def _comment(args: argparse.Namespace) -> int:
    import os

    from scalecheck.errors import GitHubError, InputError
    from scalecheck.github.comment import pull_request_number, upsert_comment
    from scalecheck.github.workflow import Actions

    try:
        body = args.markdown.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{args.markdown}: no such file",
                         fix="write it first with scalecheck check --markdown FILE") from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{args.markdown}: cannot read it ({err})", fix="pass the Markdown file scalecheck check "
                                                                         "wrote") from None
    actions = Actions.from_env(os.environ)
    repository = args.repo or actions.repository
    if not repository:
        raise GitHubError("no repository: GITHUB_REPOSITORY is not set", fix="pass --repo OWNER/NAME")
    number = args.pr or pull_request_number(os.environ)
    if number is None:
        raise GitHubError(f"no pull request number: this {actions.event_name or 'run'} event is not about a pull "
                          "request", fix="run it on pull_request events, or pass --pr N")
    result = upsert_comment(body, repository=repository, number=number, token=actions.token,
                            api_url=actions.api_url, key=args.key, update_only=args.update_only)
    if result.action == "skipped":
        print(f"no earlier scalecheck comment on {repository}#{number} to update (--update-only): nothing posted")
    else:
        print(f"{result.action} the scalecheck comment on {repository}#{number}: {result.url}")
    return OK


def _settings(args: argparse.Namespace):  # -> Config (imported lazily)
    from scalecheck.api import parse_target
    from scalecheck.config import load_config

    config = load_config(args.config)
    given = {name: getattr(args, name, None) for name in ("format", "store", "data_branch", "threshold",
                                                           "confidence", "bootstrap", "seed", "aggregate",
                                                           "max_terms", "alpha", "allow_decreasing", "refine",
                                                           "fail_across_machines", "missing_baseline")}
    for name in ("exponents", "log_exponents"):
        if getattr(args, name, None) is not None:
            given[name] = [item.strip() for item in getattr(args, name).split(",") if item.strip()]
    if getattr(args, "target", None) is not None:
        given["target"] = parse_target(args.target)
    if getattr(args, "metric", None):
        given["metrics"] = tuple(args.metric)
    if getattr(args, "kernel", None):
        given["kernels"] = tuple(args.kernel)
    if getattr(args, "fail_on", None) is not None:
        given["fail_on"] = tuple(k.strip() for k in args.fail_on.split(",") if k.strip())
    if getattr(args, "expect", None):
        given["expectations"] = tuple(_expect(item) for item in args.expect)
    if getattr(args, "no_segmentation", None):
        given["segmentation"] = False
    return config.with_overrides(**given)


def _expect(item: str) -> tuple[str, str]:
    pattern, sep, growth = item.rpartition("=")
    if not sep or not pattern.strip() or not growth.strip():
        raise ConfigError(f"--expect: cannot read '{item}'", fix="write --expect 'GLOB=GROWTH', e.g. "
                                                                 "--expect 'solver->*=p log p'")
    return pattern.strip(), growth.strip()


def _check(args: argparse.Namespace) -> int:
    from scalecheck.api import check

    if args.max_plots < 0:
        raise ConfigError(f"--max-plots must be 0 or more, got {args.max_plots}", fix="use --max-plots 20, say")
    if not args.same_job:
        if args.rounds is not None:
            raise ConfigError("--rounds counts the rounds of --same-job", fix="add --same-job and the measurement "
                                                                            "command, or drop --rounds")
        return _check_report(args, check(args.files, args.baseline, _settings(args)))
    import os

    from scalecheck.samejob import DEFAULT_ROUNDS, measure_both

    config = _settings(args)  # before measuring: a wrong setting must not wait for the measurements

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
    return _check_report(args, check(candidate, baseline, config, same_job=same_job))


def _check_report(args: argparse.Namespace, result) -> int:  # type: ignore[no-untyped-def]
    """Write the reports a check asked for, print the verdict (the GitHub way in Actions) and pick the exit status."""
    import os

    from scalecheck.github.workflow import Actions, running_in_actions
    from scalecheck.report.check_report import render_check_json, render_check_text
    from scalecheck.report.output import write_atomic

    github = running_in_actions(os.environ) if args.github is None else args.github
    actions = Actions.from_env(os.environ)
    verdict, context = result.verdict, result.context
    report_url = args.report_url or actions.run_url
    if args.json is not None:
        write_atomic(args.json, render_check_json(verdict, context))
    if args.html is not None:
        from scalecheck.report.html_report import render_check_html

        write_atomic(args.html, render_check_html(verdict, context, baseline=result.baseline,
                                                  candidate=result.candidate, options=result.options,
                                                  max_plots=args.max_plots))
    if args.markdown is not None:
        from scalecheck.report.markdown import render_check_markdown

        write_atomic(args.markdown, render_check_markdown(verdict, context, artifact_url=report_url))
    text = render_check_text(verdict, context)
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
        used = actions.summary.stat().st_size if actions.summary.exists() else 0
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


def _record(args: argparse.Namespace) -> int:
    from scalecheck.api import record

    config = _settings(args)
    sha, data_sha, run = record(args.files, args.commit, config)
    print(f"recorded {len(run.series)} series for commit {sha[:7]} on branch '{config.data_branch}' "
          f"(data commit {data_sha[:7]}); share it with: git push origin {config.data_branch}")
    return OK


def _history(args: argparse.Namespace) -> int:
    from scalecheck.api import history
    from scalecheck.report.history_report import render_history_json, render_history_text
    from scalecheck.report.output import write_atomic

    if args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}", fix="use --limit 1 or more")
    entries = history(args.ref, _settings(args), limit=args.limit)
    if args.json is not None:
        write_atomic(args.json, render_history_json(entries))
    sys.stdout.write(render_history_text(entries))
    return OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        return int(args.run(args))
    except ScalecheckError as err:
        print(f"scalecheck: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    except Exception:  # noqa: BLE001 - the one place that turns a crash into exit status 3
        traceback.print_exc()
        print("scalecheck: internal error - please report it with the traceback above", file=sys.stderr)
        return INTERNAL_ERROR


def _model(args: argparse.Namespace) -> int:
    from scalecheck.api import fit_models, parse_target
    from scalecheck.report.model_table import render_json, render_table
    from scalecheck.report.output import write_atomic

    options = _fit_options(args)
    target = parse_target(args.target) if args.target is not None else None
    from scalecheck.core.segment import SegmentOptions

    from scalecheck.formats import read_many

    if args.max_plots < 0:
        raise ConfigError(f"--max-plots must be 0 or more, got {args.max_plots}", fix="use --max-plots 20, say")
    run = read_many(args.files, args.format)
    table = fit_models(run, options=options, target=target, metrics=args.metric,
                       kernels=args.kernel, segmentation=None if args.no_segmentation else SegmentOptions())
    if args.json is not None:
        write_atomic(args.json, render_json(table))
    if args.html is not None:
        from scalecheck.report.html_report import render_model_html

        settings = {"aggregate": options.aggregate, "max_terms": options.max_terms, "alpha": options.alpha,
                    "refine": options.refine, "allow_decreasing": options.allow_decreasing,
                    "segmentation": not args.no_segmentation}
        write_atomic(args.html, render_model_html(table, run.series, sources=", ".join(map(str, args.files)),
                                                  options=options, max_plots=args.max_plots, settings=settings))
    sys.stdout.write(render_table(table))
    return OK


def _fit_options(args: argparse.Namespace):  # -> FitOptions (imported lazily)
    from scalecheck.config import building_blocks
    from scalecheck.core.search import FitOptions

    if args.max_terms < 1:
        raise ConfigError(f"--max-terms must be at least 1, got {args.max_terms}", fix="use --max-terms 1 or more")
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {args.alpha}", fix="use a level such as 0.01")
    blocks = building_blocks(_fractions("--exponents", args.exponents) if args.exponents else None,
                             _fractions("--log-exponents", args.log_exponents) if args.log_exponents else None)
    return FitOptions(building_blocks=blocks, max_terms=args.max_terms, allow_decreasing=args.allow_decreasing,
                      aggregate=args.aggregate, alpha=args.alpha, refine=args.refine)


def _fractions(option: str, text: str) -> list[Fraction]:
    out = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        try:
            value = Fraction(item)
        except (ValueError, ZeroDivisionError):
            raise ConfigError(f"{option}: '{item}' is not a number",
                              fix=f"write {option} as numbers or fractions, e.g. '0,1/2,1,2'") from None
        if value < 0:
            raise ConfigError(f"{option}: '{item}' is negative",
                              fix="use exponents >= 0 (use --allow-decreasing for falling trends)")
        out.append(value)
    if not out:
        raise ConfigError(f"{option} is empty", fix=f"write {option} as a list, e.g. '0,1/2,1,2'")
    return sorted(set(out))


_CLUSTER_EPILOG = """\
examples:
  scalecheck cluster examples/cluster/weather.json
  scalecheck cluster examples/cluster/weather.json --no-closure
  scalecheck cluster processes.jsonl --similarity 0.9 --dot lattice.dot --json groups.json
  dot -Tsvg lattice.dot -o lattice.svg          (Graphviz draws the lattice)

Each process (an MPI rank, a thread) is characterized by the set of caller->callee
pairs it executed, regardless of counts and timing. Processes with equal sets form a
group. The concept lattice orders the groups: a node's processes do everything the
nodes above it do, and more; each node shows only its own processes and the pairs
that first appear there, with their share of all pairs.

By default every set is transitively closed first (a->b and b->c add a->c), so that
recording technicalities, such as a thread whose stack starts below the function that
spawned it, do not split groups. Recursion is fine. --similarity T puts a set into
the group of a more common set when their Jaccard index is at least T.

FILE holds the processes as
  scalecheck JSON  {"scalecheck": 1, "processes": [
                     {"id": "rank 0", "paths": ["main->solve->MPI_Send"]},
                     {"id": "rank 0 thread 1", "tag": "run 2", "pairs": [["solve", "compute"]]}]}
                   beside "measurements" or alone; a path gives its consecutive pairs;
                   "tag" (optional) names the run, ids are distinct within a tag
  JSON Lines       one process object per line
  measurements     in any format, with kernels named '[rank 3] main->solve->MPI_Send'

The lattice is built for at most 100 distinct pair sets and 1000 nodes (its size can
grow exponentially with the sets); beyond that the groups are listed with their
subsumption order and similarities among the 100 largest, and the output says so.

`scalecheck check` compares the processes too when the candidate's and the baseline's
files both have a processes section: a group that appears, disappears or changes its
pairs is a `structure` finding (add structure to --fail-on to fail the build on it).

exit status: 0 success, 2 bad input or usage, 3 internal error.
"""


def _add_cluster(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cluster = commands.add_parser(
        "cluster", help="group processes (ranks, threads) by the caller->callee pairs they execute",
        description="Group processes by the sets of caller->callee pairs they execute and print the hierarchy of "
                    "the groups (a concept lattice) as an indented tree, with process ranges and shares of pairs.",
        epilog=_CLUSTER_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    cluster.add_argument("file", metavar="FILE", type=Path,
                         help="processes: a scalecheck JSON file with a processes section, JSON Lines of processes, "
                              "or measurements with kernels named '[process] call path'")
    cluster.add_argument("--no-closure", action="store_true",
                         help="compare the pair sets as recorded, without their transitive closure")
    cluster.add_argument("--similarity", type=float, metavar="T",
                         help="also group sets whose Jaccard index with a more common set is at least T, in (0, 1] "
                              "(default: only equal sets)")
    cluster.add_argument("--dot", type=Path, metavar="OUT", help="also write the lattice as Graphviz dot (atomically)")
    cluster.add_argument("--json", type=Path, metavar="OUT",
                         help="also write groups, lattice, order and similarities as JSON (atomically)")
    cluster.set_defaults(run=_cluster)


def _cluster(args: argparse.Namespace) -> int:
    from scalecheck.api import cluster
    from scalecheck.report.cluster_report import render_cluster_dot, render_cluster_json, render_cluster_text
    from scalecheck.report.output import write_atomic

    if args.similarity is not None and not 0 < args.similarity <= 1:
        raise ConfigError(f"--similarity must be a Jaccard index in (0, 1], got {args.similarity:g}",
                          fix="use for example --similarity 0.9 (1 keeps only equal sets together)")
    result = cluster(args.file, closure=not args.no_closure, similarity=args.similarity)
    if args.json is not None:
        write_atomic(args.json, render_cluster_json(result, str(args.file)))
    if args.dot is not None:
        write_atomic(args.dot, render_cluster_dot(result))
    sys.stdout.write(render_cluster_text(result, str(args.file)))
    return OK


_OVERHEAD_EPILOG = """\
examples:
  scalecheck overhead --calibration examples/overhead/calibration.jsonl examples/overhead/events.csv
  scalecheck overhead --calibration cal.csv trace.jsonl --quantile 0.9 --json overhead.json
  scalecheck overhead --calibration cal.jsonl trace.csv --resolution 1e-7 --interpolation log

The calibration holds, per operation, samples of repeated timings at process counts p
and message sizes b (at least 10 per sample, about 200 recommended). Recommended base
points (Kluge et al.): p = 2^n and 1.5 * 2^n; b = 1, 10, 20, ..., 100, 200, ..., 1000,
... up to 4 MiB. Each sample's noise t - min(S) is binned in classes no finer than the
timer resolution and fitted with a Poisson and a discretized exponential distribution;
the accepted model with the lowest chi^2 (the sample's own quantile when both are
rejected) gives t_max = min(S) + its q_max quantile: the longest time the operation
may take without overhead. Between calibrated (p, b), t_max is interpolated
bilinearly; outside the grid it is taken at the grid's edge and the events are flagged.

The overhead of an event is max(0, t - t_max(p, b)); the ranking sums it per source
location and operation (with a column per process count), then per operation, and
lists every calibration point with its noise model and chi-square p-value.

files (JSON Lines or CSV, told apart by the extension; times in seconds unless a unit
of ms, us or ns is given):
  calibration  {"operation": "MPI_Send", "p": 8, "bytes": 1024, "times": [2.1e-05, ...]}
               or CSV operation,p,bytes,time[,unit][,resolution], a row per timing
  events       {"location": "msg.c:311", "operation": "MPI_Send", "p": 8, "bytes": 1024,
                "time": 3.1e-05}, or CSV location,operation,p,bytes,time[,unit]

exit status: 0 success, 2 bad input or usage, 3 internal error.
"""


def _add_overhead(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    overhead = commands.add_parser(
        "overhead", help="separate necessary time from overhead in an event trace (t_max per operation)",
        description="Fit a noise model to every calibration sample, derive t_max per operation, process count and "
                    "message size, and rank the source locations of an event trace by their time above t_max.",
        epilog=_OVERHEAD_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    overhead.add_argument("events", metavar="EVENTS", type=Path,
                          help="the event trace: location, operation, p, bytes and time of every event")
    overhead.add_argument("--calibration", metavar="CAL", type=Path, required=True,
                          help="repeated timings of each operation at several process counts and message sizes")
    overhead.add_argument("--quantile", type=float, default=0.95, metavar="Q",
                          help="q_max: t_max is this quantile of the noise model, in [0.8, 1) (default 0.95)")
    overhead.add_argument("--resolution", type=float, metavar="SECONDS",
                          help="timer resolution for samples that do not give one (default: the step the timings "
                               "lie on, else a sixteenth of their interquartile range)")
    overhead.add_argument("--interpolation", choices=("linear", "log"), default="linear",
                          help="between calibrated points: bilinear in (p, b) (default), or in (log p, log(1 + b)) "
                               "with log t_max")
    overhead.add_argument("--alpha", type=float, default=0.01, metavar="A",
                          help="level of the chi-square test that accepts or rejects a noise model (default 0.01)")
    overhead.add_argument("--refine", action="store_true",
                          help="move each model's parameter to the minimum of chi^2 after maximum likelihood")
    overhead.add_argument("--json", type=Path, metavar="OUT",
                          help="also write the ranking and every calibration point's noise model as JSON "
                               "(atomically)")
    overhead.set_defaults(run=_overhead)


def _overhead(args: argparse.Namespace) -> int:
    from scalecheck.api import overhead
    from scalecheck.report.output import write_atomic
    from scalecheck.report.overhead_report import OverheadContext, render_overhead_json, render_overhead_text

    if not 0.8 <= args.quantile < 1:
        raise ConfigError(f"--quantile must be at least 0.8 and less than 1, got {args.quantile:g}",
                          fix="use a quantile such as 0.95 (Kluge et al.: 0.8 <= q_max < 1)")
    if args.resolution is not None and not args.resolution > 0:
        raise ConfigError(f"--resolution must be a positive number of seconds, got {args.resolution:g}",
                          fix="give the timer resolution in seconds, e.g. --resolution 1e-7, or leave it out")
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {args.alpha:g}", fix="use a level such as 0.01")
    result = overhead(args.calibration, args.events, quantile=args.quantile, resolution=args.resolution,
                      interpolation=args.interpolation, alpha=args.alpha, refine=args.refine)
    context = OverheadContext(str(args.calibration), str(args.events))
    if args.json is not None:
        write_atomic(args.json, render_overhead_json(result.table, context))
    sys.stdout.write(render_overhead_text(result.table, context))
    return OK


_MEASURE_EPILOG = """\
examples:
  scalecheck measure --param p=1,2,4,8,16 --repeat 5 -- ./bench --procs {p}
  scalecheck measure --param p=2,4,8 --param n=1000,10000 --out bench.json -- python3 bench.py {p} {n}
  scalecheck measure --param n=64,128,256 --timeout 60 --keep-going --commit "$(git rev-parse HEAD)" \\
      --shell -- 'mpirun -n 4 ./solver --size {n} > /dev/null'

The command runs once per combination of the --param values (the cross product, the
first --param varying slowest), in rounds: every point once, then every point again,
--repeat times, so that slow drift of the machine affects all points alike.

Parameters: NAME is a letter or '_' followed by letters, digits or '_'; values are
positive numbers, written into the command canonically (1e3 -> 1000, 0.50 -> 0.5).
{NAME} in the command is replaced by the value ({{ and }} are literal braces), and
the value is also in the environment as NAME. Without --shell the arguments run as
a list, never through a shell; with --shell they are joined with spaces into one
shell command.

Each run's wall time is recorded as kernel KERNEL (default: the program's file name,
or the script's for `python3 script.py`), metric time, unit s. The command can
report its own metrics: SCALECHECK_METRICS is the path of a fresh file per run (on
POSIX also open as file descriptor 3, SCALECHECK_METRICS_FD=3); write JSON lines
  {"kernel": "solve", "metric": "time", "unit": "s", "value": 0.12}
with "values": [...] for several values, "metric" defaulting to time, "unit"
optional. A malformed line stops the measurement (also with --keep-going).

The output file is scalecheck JSON, rewritten atomically after every completed run;
an existing file is added to (same kernel, metric and point: more repetitions) and
must have the same parameters. meta.machine is this machine's fingerprint (CPU,
cores, OS, host; SCALECHECK_MACHINE names it instead; an existing file keeps its
own), meta.commit the --commit given. The command's stdin is empty and its stdout discarded (unless
--show-output); the end of its stderr is shown when a run fails. A progress bar is
drawn on stderr when it is a terminal.

A failed run (non-zero exit status, a signal, --timeout) adds nothing and stops the
measurement, keeping the runs before it, unless --keep-going. Ctrl-C stops too,
keeping every completed run; the running command is stopped (SIGINT, then SIGKILL).

exit status: 0 every run succeeded, 2 bad usage or input, a failed run or a malformed
metrics line, 3 internal error, 130 interrupted (Ctrl-C).
"""


def _add_measure(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    measure = commands.add_parser(
        "measure", help="run a command at several parameter values and write a measurement file",
        usage="scalecheck measure --param NAME=V1,V2,... [--param ...] [options] -- COMMAND [ARG ...]",
        description="Run COMMAND for every combination of parameter values, --repeat times each, and write its "
                    "wall time and the metrics it reports to a scalecheck JSON measurement file.",
        epilog=_MEASURE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    measure.add_argument("--param", action="append", required=True, metavar="NAME=V1,V2,...",
                         help="a parameter and its values, e.g. p=1,2,4,8 (repeatable: the cross product is measured)")
    measure.add_argument("--repeat", type=int, default=5, metavar="N",
                         help="repetitions per point (default 5)")
    measure.add_argument("--kernel", metavar="NAME",
                         help="kernel name of the wall time (default: the program's file name, or the script's "
                              "for a Python interpreter running a .py file)")
    measure.add_argument("--out", type=Path, default=Path("measurements.json"), metavar="FILE",
                         help="the measurement file; an existing one is added to (default measurements.json)")
    measure.add_argument("--shell", action="store_true",
                         help="run the command, its arguments joined with spaces, through the shell")
    measure.add_argument("--timeout", type=float, metavar="SECONDS",
                         help="kill a run after this long and count it as failed (default: no limit)")
    measure.add_argument("--keep-going", action="store_true",
                         help="report a failed run, skip it and go on; exit status 2 at the end if any failed")
    measure.add_argument("--show-output", action="store_true",
                         help="pass the command's stdout through (default: discarded; turns the progress bar off)")
    measure.add_argument("--commit", metavar="SHA", help="the commit measured, stored as meta.commit")
    measure.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG ...]",
                         help="the command; {NAME} is replaced by the value of parameter NAME")
    measure.set_defaults(run=_measure)


def _measure(args: argparse.Namespace) -> int:
    from scalecheck.measure import failure_text, measure, plan_measurements, progress_line, summary_line

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    plan = plan_measurements(args.param, command, repeat=args.repeat, kernel=args.kernel, out=args.out,
                             shell=args.shell, timeout=args.timeout, keep_going=args.keep_going,
                             show_output=args.show_output, commit=args.commit)
    bar = _ProgressBar() if sys.stderr.isatty() and not args.show_output else None

    def on_failure(failure) -> None:  # type: ignore[no-untyped-def]
        if bar is not None:
            bar.clear()
        prefix = "scalecheck: " if args.keep_going else "scalecheck: error: "
        print(prefix + failure_text(failure), file=sys.stderr)

    try:
        summary = measure(plan, on_step=(lambda step, seconds: bar.show(progress_line(step, seconds, bar.width)))
                          if bar is not None else None, on_failure=on_failure)
    finally:
        if bar is not None:
            bar.clear()
    kept = f"kept {summary.runs} of {summary.total} runs in {summary.out}" if summary.runs \
        else f"no run completed; {summary.out} {'unchanged' if summary.appended else 'not written'}"
    if summary.interrupted:
        print(f"scalecheck: interrupted; {kept}", file=sys.stderr)
        return INTERRUPTED
    if summary.stopped:
        print(f"scalecheck: stopped; {kept}\n  fix: correct the command, or pass --keep-going to skip failed runs",
              file=sys.stderr)
        return USAGE_ERROR
    print(summary_line(summary))
    if summary.failures:
        print(f"scalecheck: error: {len(summary.failures)} of {summary.total} runs failed (reported above); {kept}",
              file=sys.stderr)
        return USAGE_ERROR
    return OK


class _ProgressBar:
    """One status line on stderr, redrawn in place with \\r."""

    def __init__(self) -> None:
        import shutil

        self.width = shutil.get_terminal_size((80, 24)).columns
        self._shown = 0

    def show(self, line: str) -> None:
        sys.stderr.write("\r" + line + " " * max(self._shown - len(line), 0))
        sys.stderr.flush()
        self._shown = len(line)

    def clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r" + " " * self._shown + "\r")
            sys.stderr.flush()
            self._shown = 0
