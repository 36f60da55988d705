"""The sticky pull-request comment: one comment per pull request and key, created once and then updated.

The comment is found again by an HTML marker on its first line (``<!-- scalecheck-comment:KEY -->``), through
GitHub's REST API with urllib only. Every problem a user can fix is a GitHubError naming repository#number, the
HTTP status and GitHub's own message; the token never appears in a message. A transient failure (HTTP 5xx or 429,
or a network error) retries the whole upsert once after RETRY_DELAY seconds: listing again before writing means a
retry updates a comment that the first attempt did create, instead of posting a second one.
"""

from __future__ import annotations

import http.client
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalecheck.errors import GitHubError

COMMENT_LIMIT = 65536  # characters: GitHub refuses a longer comment body
RETRY_DELAY = 1.5  # seconds before the one retry
DEFAULT_API_URL = "https://api.github.com"
BOT_LOGIN = "github-actions[bot]"  # the author of comments made with a workflow's GITHUB_TOKEN
_TRUNCATED = "… (truncated: the comment limit is 65,536 characters; see the full report in the workflow run)"
_MAX_PAGES = 100  # 10,000 comments: a bound on following Link headers
_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_PULL_REF = re.compile(r"refs/pull/([0-9]+)/(?:merge|head)")
_LINK = re.compile(r'<([^>]*)>\s*;\s*rel="([^"]*)"')
_TOKEN_FIX = ("pass the token to the step with `env: GITHUB_TOKEN: ${{ github.token }}` and give the job "
              "`permissions: pull-requests: write`")
_FORK_FIX = ("pull requests from forks get a read-only token: use the two-workflow pattern in examples/workflows/ "
             "(the pull_request workflow uploads the report, a workflow_run workflow comments), or grant the job "
             "`permissions: pull-requests: write`")


@dataclass(frozen=True)
class CommentResult:
    """What `upsert_comment` did: "created", "updated" or "skipped" (update_only and no comment yet)."""

    action: str
    url: str | None
    id: int | None


def marker(key: str = "default") -> str:
    """The HTML comment that identifies scalecheck's comment for `key` (invisible in the rendered comment)."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise GitHubError(f"the comment key {key!r} is not allowed",
                          fix="use 1 to 64 letters, digits, '_', '.' or '-' as the comment key")
    return f"<!-- scalecheck-comment:{key} -->"


def pull_request_number(env: Mapping[str, str]) -> int | None:
    """The pull request of this workflow run: from the event payload, else from GITHUB_REF; None if there is none."""
    number = _number_from_event(env.get("GITHUB_EVENT_PATH") or "")
    if number is not None:
        return number
    match = _PULL_REF.fullmatch(env.get("GITHUB_REF") or "")
    return int(match.group(1)) if match and int(match.group(1)) > 0 else None


def _number_from_event(path: str) -> int | None:
    if not path:
        return None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(event, dict):
        return None
    pull = event.get("pull_request")
    if isinstance(pull, dict):
        return _positive(pull.get("number"))
    issue = event.get("issue")
    if isinstance(issue, dict) and issue.get("pull_request"):
        return _positive(issue.get("number"))
    return None


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def comment_body(body: str, key: str = "default") -> str:
    """`body` with the marker as its first line (unless it has it) and cut to at most COMMENT_LIMIT characters."""
    mark = marker(key)
    if mark not in body:
        body = f"{mark}\n{body}"
    if len(body) <= COMMENT_LIMIT:
        return body
    head = body[:COMMENT_LIMIT - len(_TRUNCATED) - 1]
    if mark not in head:  # the marker was beyond the cut: it moves to the first line
        head = f"{mark}\n{body}"[:len(head)]
    keep_from = head.index(mark) + len(mark)
    newline = head.rfind("\n")
    if newline >= keep_from:  # end at a whole line unless that would lose the marker
        head = head[:newline]
    return f"{head}\n{_TRUNCATED}"


def upsert_comment(body: str, *, repository: str, number: int, token: str | None,
                   api_url: str = DEFAULT_API_URL, key: str = "default", update_only: bool = False,
                   timeout: float = 30.0, sleep: Callable[[float], None] = time.sleep) -> CommentResult:
    """Create or update scalecheck's comment (for `key`) on pull request `number` of `repository`."""
    if not token:
        raise GitHubError("GITHUB_TOKEN is not set: scalecheck cannot comment on the pull request", fix=_TOKEN_FIX)
    _check_target(repository, number, api_url)
    client = _Client(api_url.rstrip("/"), token, f"{repository}#{number}", timeout)
    text = comment_body(body, key)
    try:
        return _upsert(client, text, marker(key), repository, number, update_only)
    except _Transient:
        sleep(RETRY_DELAY)
    try:
        return _upsert(client, text, marker(key), repository, number, update_only)
    except _Transient as err:
        raise err.error from None


def _check_target(repository: str, number: int, api_url: str) -> None:
    if not isinstance(repository, str) or not _REPOSITORY.fullmatch(repository) \
            or any(part.strip(".") == "" for part in repository.split("/")):
        raise GitHubError(f"'{repository}' is not a GitHub repository name",
                          fix="give the repository as owner/name, e.g. octo-org/octo-repo (GITHUB_REPOSITORY)")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise GitHubError(f"'{number}' is not a pull request number of {repository}",
                          fix="give the pull request's number, a positive integer such as 42")
    if not api_url.startswith(("http://", "https://")):
        raise GitHubError(f"the GitHub API URL '{api_url}' does not start with http:// or https://",
                          fix="set GITHUB_API_URL to your API's URL, e.g. https://api.github.com or "
                              "https://github.example.com/api/v3")


def _upsert(client: _Client, text: str, mark: str, repository: str, number: int,
            update_only: bool) -> CommentResult:
    """One attempt: list, then update the comment found or create one. Raises _Transient for a retry."""
    issue = f"{client.api_url}/repos/{repository}/issues"
    found = _find(client, f"{issue}/{number}/comments?per_page=100", mark)
    if found is not None:
        try:
            answer = client.send("PATCH", f"{issue}/comments/{found}", {"body": text})
            return _result("updated", answer)
        except _HttpError as err:
            if err.status not in (403, 404):  # 403/404: someone else's comment that carries our marker
                raise client.error(err, "update the comment on") from None
    if update_only:  # no comment of ours to update (none found, or the one found is someone else's)
        return CommentResult("skipped", None, None)
    try:
        return _result("created", client.send("POST", f"{issue}/{number}/comments", {"body": text}))
    except _HttpError as err:
        raise client.error(err, "write comments on") from None


def _find(client: _Client, url: str | None, mark: str) -> int | None:
    """Id of the comment carrying `mark`: the last one by github-actions[bot], else the last one."""
    matches: list[dict[str, Any]] = []
    for _ in range(_MAX_PAGES):
        if url is None:
            break
        try:
            page, headers = client.get(url)
        except _HttpError as err:
            raise client.error(err, "read the comments of") from None
        if not isinstance(page, list):
            raise client.unexpected("a list of comments")
        matches += [c for c in page if isinstance(c, dict) and mark in str(c.get("body") or "")]
        url = _next_page(headers.get("Link") or "", client.api_url)
    if not matches:
        return None
    by_bot = [c for c in matches if isinstance(c.get("user"), dict) and c["user"].get("login") == BOT_LOGIN]
    chosen = (by_bot or matches)[-1].get("id")
    return chosen if isinstance(chosen, int) else None


def _next_page(link: str, api_url: str) -> str | None:
    """The rel="next" URL of a Link header, if it is on the same API (never send the token elsewhere)."""
    for match in _LINK.finditer(link):
        url, rel = match.group(1), match.group(2)
        if "next" in rel.split() and url.startswith(f"{api_url}/"):
            return url
    return None


def _result(action: str, answer: Any) -> CommentResult:
    answer = answer if isinstance(answer, dict) else {}
    url, ident = answer.get("html_url"), answer.get("id")
    return CommentResult(action, url if isinstance(url, str) else None, ident if isinstance(ident, int) else None)


class _HttpError(Exception):
    """A 4xx answer (5xx and 429 are _Transient), with GitHub's message; translated by the caller."""

    def __init__(self, status: int, message: str, rate_limited: bool = False) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status, self.message, self.rate_limited = status, message, rate_limited


class _Transient(Exception):
    """A failure worth one retry; `error` is what to raise if the retry fails too."""

    def __init__(self, error: GitHubError) -> None:
        super().__init__(str(error))
        self.error = error


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only for GET and only on the same API, so the token never leaves it."""

    def __init__(self, api_url: str) -> None:
        self.api_url = api_url

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        if req.get_method() != "GET" or not newurl.startswith(f"{self.api_url}/"):
            return None  # urllib then raises the 3xx as an HTTPError
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _Client:
    """Requests to GitHub's REST API for one pull request (`target`, "owner/name#N", names it in messages)."""

    def __init__(self, api_url: str, token: str, target: str, timeout: float) -> None:
        self.api_url, self.target, self.timeout = api_url, target, timeout
        self._token = token
        self._opener = urllib.request.build_opener(_NoRedirect(api_url))

    def get(self, url: str) -> tuple[Any, Mapping[str, str]]:
        return self._request("GET", url, None)

    def send(self, method: str, url: str, payload: Mapping[str, object]) -> Any:
        return self._request(method, url, payload)[0]

    def _request(self, method: str, url: str, payload: Mapping[str, object] | None) -> tuple[Any, Mapping[str, str]]:
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/vnd.github+json",
                   "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "scalecheck"}
        data = None
        if payload is not None:
            data = json.dumps(payload).encode("utf-8")
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw, answer_headers = response.read(), response.headers
        except urllib.error.HTTPError as err:
            raise self._http_error(err) from None
        except (OSError, http.client.HTTPException) as err:  # URLError, timeouts, resets, broken answers
            reason = getattr(err, "reason", None) or err
            raise _Transient(self._scrub(GitHubError(
                f"the GitHub API at {self.api_url} could not be reached for {self.target} ({reason})",
                fix="check the runner's network; on GitHub Enterprise Server set GITHUB_API_URL"))) from None
        try:
            return (json.loads(raw) if raw else None), answer_headers
        except ValueError:
            raise self.unexpected("JSON") from None

    def _http_error(self, err: urllib.error.HTTPError) -> Exception:
        message = _github_message(err)
        if err.code >= 500 or err.code == 429:
            return _Transient(self.error(_HttpError(err.code, message), "reach"))
        limited = err.headers.get("x-ratelimit-remaining") == "0" or "rate limit" in message.lower()
        return _HttpError(err.code, message, limited)

    def error(self, err: _HttpError, action: str) -> GitHubError:
        """The GitHubError for an HTTP error while doing `action` ("write comments on") on the pull request."""
        status = f"HTTP {err.status}: {err.message}"
        if err.status == 401:
            problem = f"GitHub rejected the token for {self.target} ({status})"
            fix = f"the token is missing, wrong or expired: {_TOKEN_FIX}"
        elif err.status == 429 or err.rate_limited:
            problem = f"GitHub's API rate limit stopped scalecheck commenting on {self.target} ({status})"
            fix = "re-run the job later; use the job's own GITHUB_TOKEN rather than a shared token"
        elif err.status == 403:
            problem = f"the token cannot {action} {self.target} ({status})"
            fix = _FORK_FIX
        elif err.status == 404:
            problem = f"{self.target} was not found, or the token cannot see it ({status})"
            fix = "check the repository and the pull request number; a token of another repository cannot " \
                  "see a private one"
        elif 300 <= err.status < 400:
            problem = f"GitHub redirected the request for {self.target} elsewhere ({status})"
            fix = "the repository may have been renamed or moved: give its current owner/name"
        elif err.status >= 500:
            problem = f"GitHub's API failed for {self.target} twice ({status})"
            fix = "GitHub may be having an outage (https://www.githubstatus.com): re-run the job later"
        else:
            problem = f"GitHub refused to {action} {self.target} ({status})"
            fix = "see GitHub's message above; if the comment is too long, shorten the report"
        return self._scrub(GitHubError(problem, fix=fix))

    def unexpected(self, what: str) -> GitHubError:
        return GitHubError(f"the GitHub API at {self.api_url} did not answer {what} for {self.target}",
                           fix="check GITHUB_API_URL: it must be the REST API, e.g. https://api.github.com")

    def _scrub(self, error: GitHubError) -> GitHubError:
        """The same error with the token, should anything have echoed it, replaced by ***."""
        def clean(text: str | None) -> str | None:
            return text.replace(self._token, "***") if text is not None else None
        return GitHubError(clean(error.problem) or "", fix=clean(error.fix))


def _github_message(err: urllib.error.HTTPError) -> str:
    """GitHub's `message` from a JSON error body, else the HTTP reason; on one line and short."""
    try:
        body = json.loads(err.read() or b"null")
    except (OSError, ValueError, http.client.HTTPException):
        body = None
    message = body.get("message") if isinstance(body, dict) else None
    text = " ".join(str(message or err.reason or "no message").split())
    return text if len(text) <= 300 else f"{text[:299]}…"
