"""GitHub Actions workflow commands (annotations, stop-commands) and environment files (outputs, step summary).

Every annotation's text is first made visible (`scalecheck.text.visible`, the sanitiser of every printed line: no
line break, control, bidirectional or other hidden character, no workflow command of its own), then %-escaped the
way GitHub's runner decodes it: ``%0D``, ``%0A`` (and in properties ``%3A``, ``%2C``), and ``%25`` last.
stdlib only, and no numpy at import time: `Finding` is imported for type checking alone.
"""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scalecheck.text import visible

if TYPE_CHECKING:
    from scalecheck.data.verdict import Finding

LEVELS = ("error", "warning", "notice")
SUMMARY_LIMIT = 1024 * 1024  # bytes: GitHub drops a larger step summary and shows an error instead
DEFAULT_API_URL = "https://api.github.com"

_OUTPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def escape_data(text: str) -> str:
    """Escape the message of a workflow command: `visible`, then GitHub's %-escaping of %, \\r and \\n (which
    `visible` has already turned into text; kept so that the escaping is GitHub's whole rule on its own)."""
    return visible(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value of a workflow command (such as a title): `escape_data` plus ':' and ','."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, *, title: str | None = None) -> str:
    """One workflow-command line, ``::error title=T::MESSAGE``, that GitHub shows as an annotation."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    properties = f" title={escape_property(title)}" if title else ""
    return f"::{level}{properties}::{escape_data(message)}"


# The name the callers expect; it shadows the `annotations` feature name, harmless after the import ran.
def annotations(findings: Sequence[Finding], limit: int = 10) -> list[str]:  # type: ignore[no-redef]
    """Annotation lines of the error and warning findings (worst first, at most `limit` of each).

    GitHub shows at most 10 error and 10 warning annotations per step, so more would be lost silently; when some
    are left out, a final notice says how many and where the full list is. Notices are not annotated.
    """
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    lines: list[str] = []
    shown = {"error": 0, "warning": 0}
    left_out = {"error": 0, "warning": 0}
    for finding in findings:
        level = finding.severity
        if level not in shown:
            continue
        if shown[level] >= limit:
            left_out[level] += 1
            continue
        shown[level] += 1
        held = f" ({finding.held})" if finding.held else ""
        lines.append(annotation(level, f"{finding.kernel} [{finding.metric}]: {finding.message}{held}",
                                title=f"scalecheck {finding.kind}: {finding.kernel}"))
    if left_out["error"] or left_out["warning"]:
        lines.append(annotation("notice", _left_out_text(left_out["error"], left_out["warning"])))
    return lines


def _left_out_text(errors: int, warnings: int) -> str:
    parts = [f"{count} {name}{'' if count == 1 else 's'}"
             for count, name in ((errors, "error"), (warnings, "warning")) if count]
    return (f"scalecheck: {' and '.join(parts)} more are not annotated (GitHub shows few annotations per step); "
            "the full list is in the job summary and the report")


def stop_commands() -> tuple[str, str]:
    """The lines that stop and resume command processing around untrusted output, with a fresh random token."""
    token = secrets.token_hex(16)
    return f"::stop-commands::{token}", f"::{token}::"


def write_outputs(path: Path, values: Mapping[str, str]) -> None:
    """Append step outputs to `path` ($GITHUB_OUTPUT) as ``name<<DELIMITER`` blocks, in one write."""
    for name in values:
        if not _OUTPUT_NAME.fullmatch(name):
            raise ValueError(f"output name must match [A-Za-z_][A-Za-z0-9_-]*, got {name!r}")
    text = "".join(_heredoc(name, value) for name, value in values.items())
    if not text:
        return
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def _heredoc(name: str, value: str) -> str:
    """``name<<DELIMITER``, the value, and the delimiter: a fresh random one that does not occur in `value`."""
    delimiter = f"ghadelimiter_{uuid.uuid4().hex}"
    while delimiter in value:
        delimiter = f"ghadelimiter_{uuid.uuid4().hex}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def append_summary(path: Path, markdown: str) -> None:
    """Append `markdown` and a newline to `path` ($GITHUB_STEP_SUMMARY).

    A guard, not a renderer: raises ValueError when the file would exceed GitHub's SUMMARY_LIMIT bytes (the
    renderer must stay under it), and then writes nothing.
    """
    data = f"{markdown}\n".encode("utf-8")
    existing = path.stat().st_size if path.exists() else 0
    if existing + len(data) > SUMMARY_LIMIT:
        raise ValueError(f"the step summary would be {existing + len(data):,} bytes; GitHub's limit is "
                         f"{SUMMARY_LIMIT:,} bytes")
    with open(path, "ab") as handle:
        handle.write(data)


@dataclass(frozen=True)
class Actions:
    """What a step of a GitHub Actions job knows from its environment. Empty variables count as missing."""

    summary: Path | None = None  # GITHUB_STEP_SUMMARY
    output: Path | None = None  # GITHUB_OUTPUT
    repository: str | None = None  # owner/name
    run_url: str | None = None  # the workflow run's page
    event_name: str | None = None  # pull_request, push, workflow_run, ...
    event_path: Path | None = None  # the event's JSON payload
    api_url: str = DEFAULT_API_URL
    token: str | None = field(default=None, repr=False)  # GITHUB_TOKEN: never printed

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Actions:
        """Read the GITHUB_* variables of `env` (usually os.environ)."""
        def get(name: str) -> str | None:
            return env.get(name) or None

        def path(name: str) -> Path | None:
            value = get(name)
            return Path(value) if value else None

        server, repository, run_id = get("GITHUB_SERVER_URL"), get("GITHUB_REPOSITORY"), get("GITHUB_RUN_ID")
        run_url = f"{server.rstrip('/')}/{repository}/actions/runs/{run_id}" if server and repository and run_id \
            else None
        return cls(summary=path("GITHUB_STEP_SUMMARY"), output=path("GITHUB_OUTPUT"), repository=repository,
                   run_url=run_url, event_name=get("GITHUB_EVENT_NAME"), event_path=path("GITHUB_EVENT_PATH"),
                   api_url=(get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"), token=get("GITHUB_TOKEN"))


def running_in_actions(env: Mapping[str, str]) -> bool:
    """True inside a GitHub Actions job (GITHUB_ACTIONS is "true")."""
    return env.get("GITHUB_ACTIONS") == "true"
