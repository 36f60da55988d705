"""L6: `scalecheck comment`: create or update the sticky pull-request comment with a check's Markdown."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scalecheck.cli._common import OK, command
from scalecheck.text import visible

READ_LIMIT = 1024 * 1024  # characters: more than any comment keeps, even after `inert_markdown` shrinks entities

EPILOG = """\
examples:
  scalecheck check new.json --baseline origin/main --markdown summary.md
  scalecheck comment --markdown summary.md
  scalecheck comment --markdown summary.md --pr 42 --key linux      (from a workflow_run workflow)

The comment carries a hidden marker (<!-- scalecheck-comment:KEY -->) on its first
line; a later run finds the comment by it and updates it instead of adding another,
but only a comment that the token's own account wrote: a copied marker is ignored.
The Markdown is treated as untrusted (a fork's run may have written it): every '@'
is followed by a zero-width space so that nobody is mentioned, HTML other than
<details>, <summary> and <code> shows as text, and a marker of another key is refused.
In GitHub Actions the token comes from GITHUB_TOKEN, the repository from
GITHUB_REPOSITORY, the API from GITHUB_API_URL and the pull request from the event.
Pull requests from forks get a read-only token: see examples/workflows/fork-safe/.
All requests end within 30 s, plus a rate-limit wait GitHub asks for (at most 60 s).

exit status: 0 commented (or skipped with --update-only), 2 no token, no pull request,
a read-only token, a marker of another key, a timeout or another API error."""


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    comment = command(
        commands, "comment", help="create or update the sticky pull-request comment with a check's Markdown",
        description="Post the Markdown written by `scalecheck check --markdown` as a pull-request comment, or "
                    "update the comment an earlier run posted.",
        epilog=EPILOG)
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
    comment.set_defaults(run=run)


def _positive_int(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a pull request number (a positive whole number)")
    return int(text)


def run(args: argparse.Namespace) -> int:
    import os

    from scalecheck.errors import GitHubError, InputError, Location
    from scalecheck.github.comment import foreign_marker, pull_request_number, upsert_comment
    from scalecheck.github.workflow import Actions

    try:
        with open(args.markdown, encoding="utf-8") as handle:
            body = handle.read(READ_LIMIT)  # the comment is cut to 65,536 characters: the rest is never posted
    except FileNotFoundError:
        raise InputError(f"{args.markdown}: no such file",
                         fix="write it first with scalecheck check --markdown FILE") from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{args.markdown}: cannot read it ({err})", fix="pass the Markdown file scalecheck check "
                                                                         "wrote") from None
    found = foreign_marker(body, args.key)
    if found is not None:
        line, other = found
        raise InputError(f"the marker of the comment key '{other}' is not allowed in the comment for key "
                         f"'{args.key}'", where=Location(args.markdown, line),
                         fix="post each key's Markdown with its own --key, and remove marker lines from the file "
                             "(scalecheck check writes none)")
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
    target = visible(f"{repository}#{number}")
    if result.action == "skipped":
        print(f"no earlier scalecheck comment on {target} to update (--update-only): nothing posted")
    else:
        print(f"{result.action} the scalecheck comment on {target}: {visible(str(result.url))}")
    return OK
