"""The sticky pull-request comment: one comment per pull request and key, created once and then updated.

The comment is found again by an HTML marker on its first line (``<!-- scalecheck-comment:KEY -->``), through
GitHub's REST API with urllib only. Every problem a user can fix is a GitHubError naming repository#number, the
HTTP status and GitHub's own message; the token never appears in a message, not even in part.

- **Only its own comment.** A comment carrying the marker is updated only when the token's own account wrote it:
  the account is the GraphQL ``viewer`` (which answers for personal tokens, GitHub App installation tokens and the
  workflow's GITHUB_TOKEN, whose comments are by github-actions[bot]), else REST ``GET /user``. A marker that
  anyone else planted is ignored and a new comment is created.
- **Untrusted Markdown.** The body may come from a run that a fork controls (examples/workflows/fork-safe), so it
  is made inert before it is posted (`inert_markdown`): no @-mention, no HTML but scalecheck's own few tags and its
  marker, and no marker of another comment key.
- **Bounded.** The whole upsert has a deadline (DEADLINE seconds), not each request. A transient failure (HTTP 5xx
  or 429, a rate limit, a network error) retries the whole upsert once, after RETRY_DELAY seconds or after the wait
  GitHub asks for (``Retry-After``, ``x-ratelimit-reset``) when that is at most RATE_LIMIT_WAIT seconds; such a
  wait is added to the deadline, a longer one is an error. Listing again before writing means a retry updates a
  comment that the first attempt did create, instead of posting a second one; a listing that cannot be finished
  (a page linked twice, too many pages, a next page elsewhere) is an error, never a reason to post.
"""

from __future__ import annotations

import email.utils
import html
import http.client
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timezone
from email.message import Message
from pathlib import Path
from typing import Any

from scalecheck.errors import GitHubError

COMMENT_LIMIT = 65536  # characters: GitHub refuses a longer comment body
RETRY_DELAY = 1.5  # seconds before the one retry, when GitHub names no wait
DEADLINE = 30.0  # seconds for the whole upsert (every request and the retry), rate-limit waits aside
RATE_LIMIT_WAIT = 60.0  # seconds: the longest wait GitHub may ask for; a longer one is an error
DEFAULT_API_URL = "https://api.github.com"
_TRUNCATED = "… (truncated: the comment limit is 65,536 characters; see the full report in the workflow run)"
_MAX_PAGES = 100  # 10,000 comments; GitHub keeps far fewer on one pull request
_MAX_ANSWER = 64 * 1024 * 1024  # bytes: a page of 100 comments of 65,536 characters fits, JSON-escaped
_MAX_ERROR_BODY = 64 * 1024  # bytes of an error answer read for GitHub's message
_CHUNK = 1024 * 1024  # bytes read at a time, so the deadline is checked while a long answer arrives
_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_API_URL = re.compile(r"https?://[^\x00-\x20\x7f/?#@\\]+(?:/[^\x00-\x20\x7f?#\\]*)?")
_PULL_REF = re.compile(r"refs/pull/([0-9]+)/(?:merge|head)")
_LINK = re.compile(r'<([^>]*)>\s*;\s*rel="([^"]*)"')
_VIEWER_QUERY = "query { viewer { login } }"
_TOKEN_FIX = ("pass the token to the step with `env: GITHUB_TOKEN: ${{ github.token }}` and give the job "
              "`permissions: pull-requests: write`")
_FORK_FIX = ("pull requests from forks get a read-only token: use the two-workflow pattern in examples/workflows/ "
             "(the pull_request workflow uploads the report, a workflow_run workflow comments), or grant the job "
             "`permissions: pull-requests: write`")
_API_FIX = "check GITHUB_API_URL: it must be the REST API, e.g. https://api.github.com"

# Untrusted Markdown (`inert_markdown`). GitHub mentions a user or team only when a name follows the '@' directly
# in the rendered text (entities decoded), so a zero-width space after every '@' keeps the text as it reads and
# notifies nobody: the character Renovate's '@&#8203;' puts there. The word joiner that the Markdown report puts
# after '@' (`scalecheck.report.templating.md_text`) does the same and is kept.
_NO_MENTION = "\u200b"
_QUIET_AFTER_AT = ("\u200b", "\u2060")
_AT_SIGNS = ("@", "\uff20", "\ufe6b")  # '@' and its full-width and small forms
_HTML_KEPT = ("<details>", "</details>", "<summary>", "</summary>", "<code>", "</code>")  # the report's own tags
_UNTRUSTED = re.compile(r"<|[@\uff20\ufe6b]|&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_ANY_MARKER = re.compile(r"<!--\s*scalecheck-comment:(.*?)\s*-->")


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
    """`body` made inert (`inert_markdown`), with the marker as its first line (unless it has it), cut to at most
    COMMENT_LIMIT characters."""
    mark = marker(key)
    body = inert_markdown(body, key)
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


def inert_markdown(text: str, key: str = "default") -> str:
    """Untrusted Markdown made safe to post as the token's account: it mentions nobody and holds no HTML but the
    Markdown report's own tags and the marker of `key`. Raises GitHubError if it carries another key's marker.

    A zero-width space follows every '@' (also one written as an entity such as ``&#64;``) that is not already
    followed by one or by a word joiner, so that no ``@user`` or ``@org/team`` notifies anyone. Every '<' that does
    not start ``<details>``, ``<summary>``, ``<code>``, their closing tags or the marker of `key` becomes ``&lt;``:
    other HTML, HTML comments and autolinks show as text. The Markdown report (`scalecheck check --markdown`)
    comes through unchanged. Cost: one pass, O(len(text)).
    """
    found = foreign_marker(text, key)
    if found is not None:
        line, other = found
        raise GitHubError(f"the Markdown carries the marker of the comment key '{other}' on line {line}; the "
                          f"comment for key '{key}' may carry only its own",
                          fix="post each key's Markdown with its own --key, and remove marker lines from the file "
                              "(scalecheck check writes none)")
    mark = marker(key)

    def inert(match: re.Match[str]) -> str:
        piece, start, end = match.group(), match.start(), match.end()
        if piece == "<":
            return "<" if text.startswith(mark, start) or text.startswith(_HTML_KEPT, start) else "&lt;"
        if piece[0] == "&":  # an entity: only one that stands for an '@' matters
            decoded = html.unescape(piece)
            return f"{decoded}{_NO_MENTION}" if decoded in _AT_SIGNS else piece
        return piece if text[end:end + 1] in _QUIET_AFTER_AT else f"{piece}{_NO_MENTION}"

    return _UNTRUSTED.sub(inert, text)


def foreign_marker(text: str, key: str = "default") -> tuple[int, str] | None:
    """The 1-based line and the key of the first scalecheck marker in `text` that is not the one of `key`."""
    marker(key)  # the key's own check
    for match in _ANY_MARKER.finditer(text):
        if match.group(1) != key:
            return text.count("\n", 0, match.start()) + 1, match.group(1)
    return None


def upsert_comment(body: str, *, repository: str, number: int, token: str | None,
                   api_url: str = DEFAULT_API_URL, key: str = "default", update_only: bool = False,
                   timeout: float = DEADLINE, sleep: Callable[[float], None] = time.sleep,
                   clock: Callable[[], float] = time.monotonic) -> CommentResult:
    """Create or update scalecheck's comment (for `key`) on pull request `number` of `repository`.

    `timeout` is the deadline in seconds of the whole upsert, rate-limit waits aside (`clock` measures it, `sleep`
    waits). Raises GitHubError for every failure of the network or the API; no message holds the token.
    """
    token = _usable_token(token)
    _check_target(repository, number, api_url)
    text = comment_body(body, key)
    client = _Client(api_url.rstrip("/"), token, f"{repository}#{number}", timeout, clock)
    try:
        try:
            return _upsert(client, text, marker(key), repository, number, update_only)
        except _Transient as err:
            _wait_for_retry(client, err, sleep)
        try:
            return _upsert(client, text, marker(key), repository, number, update_only)
        except _Transient as err:
            raise err.error from None
    except GitHubError as err:  # the one exit of every failure: no form of the token leaves it
        raise _scrubbed(err, token) from None


def _usable_token(token: str | None) -> str:
    """`token` without surrounding white space; GitHubError if it is empty or cannot go in an HTTP header."""
    token = token.strip() if isinstance(token, str) else ""
    if not token:
        raise GitHubError("GITHUB_TOKEN is not set: scalecheck cannot comment on the pull request", fix=_TOKEN_FIX)
    for place, char in enumerate(token, start=1):
        if not "!" <= char <= "~":  # only visible ASCII goes in a header value; never show the token itself
            raise GitHubError(f"GITHUB_TOKEN holds {_describe(char)} at character {place}, which cannot be sent in "
                              "an HTTP header",
                              fix="set GITHUB_TOKEN to the token alone, e.g. `env: GITHUB_TOKEN: ${{ github.token "
                                  "}}`; a pasted token is one word, without a line break, space or other character "
                                  "inside")
    return token


def _describe(char: str) -> str:
    if char in "\r\n":
        return "a line break"
    if char in " \t":
        return "a space" if char == " " else "a tab"
    kind = "control" if ord(char) < 0x20 or 0x7f <= ord(char) < 0xa0 else "non-ASCII"
    return f"the {kind} character U+{ord(char):04X}"


def _check_target(repository: str, number: int, api_url: str) -> None:
    if not isinstance(repository, str) or not _REPOSITORY.fullmatch(repository) \
            or any(part.strip(".") == "" for part in repository.split("/")):
        raise GitHubError(f"'{repository}' is not a GitHub repository name",
                          fix="give the repository as owner/name, e.g. octo-org/octo-repo (GITHUB_REPOSITORY)")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise GitHubError(f"'{number}' is not a pull request number of {repository}",
                          fix="give the pull request's number, a positive integer such as 42")
    if not isinstance(api_url, str) or not _API_URL.fullmatch(api_url):
        raise GitHubError(f"the GitHub API URL '{api_url}' is not an http:// or https:// URL of a host",
                          fix="set GITHUB_API_URL to your API's URL, e.g. https://api.github.com or "
                              "https://github.example.com/api/v3")


def _wait_for_retry(client: _Client, err: _Transient, sleep: Callable[[float], None]) -> None:
    """Sleep before the retry, or raise `err`'s error when the wait is too long or the deadline too near."""
    if err.wait is None:
        if client.remaining() < RETRY_DELAY:  # no time left for a second attempt
            raise err.error
        sleep(RETRY_DELAY)
        return
    if err.wait > RATE_LIMIT_WAIT:
        until = f" (until {_utc(err.until)})" if err.until is not None else ""
        raise GitHubError(f"{err.error.problem}; GitHub asks to wait {err.wait:,.0f} s{until}, longer than "
                          f"scalecheck waits ({RATE_LIMIT_WAIT:.0f} s)", fix=err.error.fix)
    sleep(err.wait)
    client.extend(err.wait)  # waiting as GitHub asked is not the API being slow


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch)) if 0 <= epoch < 1e11 else "much later"


def _upsert(client: _Client, text: str, mark: str, repository: str, number: int,
            update_only: bool) -> CommentResult:
    """One attempt: list, then update our own comment or create one. Raises _Transient for a retry."""
    issue = f"{client.api_url}/repos/{repository}/issues"
    found = _find(client, _marked(client, repository, number, mark))
    if found is not None:
        try:
            return _result("updated", client.send("PATCH", f"{issue}/comments/{found}", {"body": text}))
        except _HttpError as err:
            if err.status != 404:  # 404: deleted since it was listed; a new one takes its place
                raise client.error(err, "update the comment on") from None
    if update_only:  # no comment of ours to update
        return CommentResult("skipped", None, None)
    try:
        return _result("created", client.send("POST", f"{issue}/{number}/comments", {"body": text}))
    except _HttpError as err:
        raise client.error(err, "write comments on") from None


def _marked(client: _Client, repository: str, number: int, mark: str) -> list[dict[str, Any]]:
    """Every comment of the pull request that carries `mark`, from all pages.

    A listing that cannot be finished is an error, never a reason to post: a page linked twice, more than
    _MAX_PAGES pages, or a next page that is not this pull request's comments on this API.
    """
    path = f"issues/{number}/comments"
    url: str | None = f"{client.api_url}/repos/{repository}/{path}?per_page=100"
    # GitHub's next links name the repository by owner/name or by its id (/repositories/123/...)
    same_list = re.compile(rf"{re.escape(client.api_url)}/(?:repos/{re.escape(repository)}|repositories/[0-9]+)/"
                           rf"{re.escape(path)}\?[^#\x00-\x20\x7f]*", re.IGNORECASE)
    seen: set[str] = set()
    matches: list[dict[str, Any]] = []
    while url is not None:
        if url in seen or len(seen) == _MAX_PAGES:
            why = "linked a page twice" if url in seen else f"has more than {_MAX_PAGES} pages"
            raise GitHubError(f"the list of comments on {client.target} {why}: scalecheck stops reading it and "
                              "comments nothing", fix=f"re-run the job; if it happens again, {_API_FIX}")
        seen.add(url)
        try:
            page, headers = client.get(url)
        except _HttpError as err:
            raise client.error(err, "read the comments of") from None
        if not isinstance(page, list):
            raise client.unexpected("a list of comments")
        matches += [c for c in page if isinstance(c, dict) and mark in str(c.get("body") or "")]
        url = _next_page(headers.get("Link") or "")
        if url is not None and not same_list.fullmatch(url):
            raise GitHubError(f"the list of comments on {client.target} links its next page outside "
                              f"{client.api_url}: scalecheck sends the token nowhere else and comments nothing",
                              fix=_API_FIX)
    return matches


def _find(client: _Client, marked: list[dict[str, Any]]) -> int | None:
    """Id of the last of the `marked` comments that the token's own account wrote (None if there is none)."""
    if not marked:
        return None  # nothing to tell apart: no need to ask who the token is
    login = client.login()
    own = [c for c in marked if _written_by(c.get("user"), login)]
    chosen = own[-1].get("id") if own else None
    return chosen if isinstance(chosen, int) and not isinstance(chosen, bool) else None


def _written_by(user: object, login: str) -> bool:
    """Whether a comment's `user` is the account `login`. GitHub logins ignore case. An app's comments are by
    "<slug>[bot]", so a bot's "<login>[bot]" counts too, in case the viewer is named without the suffix: GitHub lets
    an app take an existing account's name only when that account owns the app."""
    if not isinstance(user, dict) or not isinstance(user.get("login"), str):
        return False
    name = user["login"].casefold()
    return name == login.casefold() or (user.get("type") == "Bot" and name == f"{login}[bot]".casefold())


def _next_page(link: str) -> str | None:
    """The rel="next" URL of a Link header, if there is one."""
    for match in _LINK.finditer(link):
        if "next" in match.group(2).split():
            return match.group(1)
    return None


def _result(action: str, answer: Any) -> CommentResult:
    answer = answer if isinstance(answer, dict) else {}
    url, ident = answer.get("html_url"), answer.get("id")
    return CommentResult(action, url if isinstance(url, str) else None, ident if isinstance(ident, int) else None)


class _HttpError(Exception):
    """A 4xx answer (5xx and rate limits are _Transient), with GitHub's message; translated by the caller."""

    def __init__(self, status: int, message: str, rate_limited: bool = False) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status, self.message, self.rate_limited = status, message, rate_limited


class _Transient(Exception):
    """A failure worth one retry; `error` is what to raise if the retry fails too. `wait`: the seconds GitHub asks
    to wait first (None: it named none); `until`: the time (epoch seconds) its rate limit resets, if it said."""

    def __init__(self, error: GitHubError, wait: float | None = None, until: float | None = None) -> None:
        super().__init__(str(error))
        self.error, self.wait, self.until = error, wait, until


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
    """Requests to GitHub's API for one pull request (`target`, "owner/name#N", names it in messages), all within
    one deadline: `timeout` seconds from now on `clock`."""

    def __init__(self, api_url: str, token: str, target: str, timeout: float, clock: Callable[[], float]) -> None:
        self.api_url, self.target, self.timeout = api_url, target, timeout
        self._token, self._clock = token, clock
        self._deadline = clock() + timeout
        self._login: str | None = None
        self._opener = urllib.request.build_opener(_NoRedirect(api_url))

    def remaining(self) -> float:
        return self._deadline - self._clock()

    def extend(self, seconds: float) -> None:
        self._deadline += seconds

    def get(self, url: str) -> tuple[Any, Mapping[str, str]]:
        return self._request("GET", url, None)

    def send(self, method: str, url: str, payload: Mapping[str, object]) -> Any:
        return self._request(method, url, payload)[0]

    def login(self) -> str:
        """The login of the token's account, asked once: GraphQL's viewer (personal tokens, app installation
        tokens and GITHUB_TOKEN alike), else REST's /user (which installation tokens may not read)."""
        if self._login is None:
            self._login = self._ask_login()
        return self._login

    def _ask_login(self) -> str:
        for method, url, payload, path in (
                ("POST", _graphql_url(self.api_url), {"query": _VIEWER_QUERY}, ("data", "viewer", "login")),
                ("GET", f"{self.api_url}/user", None, ("login",))):
            try:
                answer = self._request(method, url, payload)[0]
            except _HttpError as err:
                if err.status == 401:
                    raise self.error(err, "find out who wrote the comments on") from None
                continue  # refused (403 for /user with an installation token) or missing: try the other one
            login = _dig(answer, path)
            if isinstance(login, str) and login:
                return login
        raise GitHubError(f"GitHub did not say which account the token for {self.target} belongs to, so "
                          "scalecheck cannot tell its own earlier comment from a copy that someone else wrote",
                          fix="use the job's GITHUB_TOKEN, a GitHub App installation token or a personal token "
                              f"(all may ask GraphQL for their viewer); {_API_FIX}")

    def _request(self, method: str, url: str, payload: Mapping[str, object] | None) -> tuple[Any, Mapping[str, str]]:
        left = self.remaining()
        if left <= 0:
            raise self.late()
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/vnd.github+json",
                   "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "scalecheck"}
        data = None
        if payload is not None:
            data = json.dumps(payload).encode("utf-8")
            headers["Content-Type"] = "application/json"
        try:
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            with self._opener.open(request, timeout=left) as response:  # each wait on the socket ends by then
                raw, answer_headers = self._read(response), response.headers
        except urllib.error.HTTPError as err:
            raise self._http_error(err) from None
        except (OSError, http.client.HTTPException, ValueError) as err:  # URLError, timeouts, resets, broken answers
            if self.remaining() <= 0:
                raise self.late() from None
            reason = _short(self._clean(str(getattr(err, "reason", None) or err) or type(err).__name__))
            raise _Transient(GitHubError(
                f"the GitHub API at {self.api_url} could not be reached for {self.target} ({reason})",
                fix="check the runner's network; on GitHub Enterprise Server set GITHUB_API_URL")) from None
        try:
            return (json.loads(raw) if raw else None), answer_headers
        except (ValueError, RecursionError):
            raise self.unexpected("JSON") from None

    def _read(self, response: Any) -> bytes:
        """The answer's body, read in chunks so that a slow or endless one stops at the deadline or the size cap."""
        chunks: list[bytes] = []
        size = 0
        while True:
            if chunks and self.remaining() <= 0 and getattr(response, "length", None) != 0:
                raise self.late()
            chunk = response.read(_CHUNK)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > _MAX_ANSWER:
                raise GitHubError(f"the GitHub API at {self.api_url} answered more than {_MAX_ANSWER // 2**20} MiB "
                                  f"for {self.target}", fix=_API_FIX)
            chunks.append(chunk)

    def late(self) -> GitHubError:
        return GitHubError(f"the GitHub API at {self.api_url} did not finish answering for {self.target} within "
                           f"{self.timeout:g} s", fix="GitHub may be slow or unreachable from the runner "
                                                      "(https://www.githubstatus.com): re-run the job later; on "
                                                      "GitHub Enterprise Server check GITHUB_API_URL")

    def _http_error(self, err: urllib.error.HTTPError) -> Exception:
        message = _short(self._clean(_github_message(err)))
        headers = err.headers if err.headers is not None else http.client.HTTPMessage()
        limited = err.code == 429 or (err.code == 403 and (
            headers.get("x-ratelimit-remaining") == "0" or headers.get("Retry-After") is not None
            or "rate limit" in message.lower()))
        if err.code >= 500 or limited:
            wait, until = _asked_wait(headers)
            return _Transient(self.error(_HttpError(err.code, message, limited), "reach"), wait, until)
        return _HttpError(err.code, message)

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
            problem = f"GitHub's API failed for {self.target} ({status})"
            fix = "GitHub may be having an outage (https://www.githubstatus.com): re-run the job later"
        else:
            problem = f"GitHub refused to {action} {self.target} ({status})"
            fix = "see GitHub's message above; if the comment is too long, shorten the report"
        return GitHubError(problem, fix=fix)

    def unexpected(self, what: str) -> GitHubError:
        return GitHubError(f"the GitHub API at {self.api_url} did not answer {what} for {self.target}", fix=_API_FIX)

    def _clean(self, text: str) -> str:
        return _without_token(text, self._token)


def _graphql_url(api_url: str) -> str:
    """GitHub's GraphQL endpoint next to its REST API: https://api.github.com/graphql, and on GitHub Enterprise
    Server https://HOST/api/graphql next to https://HOST/api/v3."""
    return f"{api_url[:-len('/v3')]}/graphql" if api_url.endswith("/api/v3") else f"{api_url}/graphql"


def _dig(answer: Any, path: Iterable[str]) -> Any:
    for name in path:
        answer = answer.get(name) if isinstance(answer, dict) else None
    return answer


def _asked_wait(headers: Message) -> tuple[float | None, float | None]:
    """The seconds GitHub asks to wait before retrying (``Retry-After``, else the reset of an exhausted rate limit,
    ``x-ratelimit-reset``) and the time (epoch seconds) that wait ends, both None when it names none. Times are
    measured against the answer's ``Date``, so the runner's clock does not matter."""
    now = _epoch(headers.get("Date")) or time.time()
    retry_after = (headers.get("Retry-After") or "").strip()
    if retry_after.isascii() and retry_after.isdigit():
        wait = float(int(retry_after)) if len(retry_after) <= 12 else 1e12
        return wait, now + wait
    when = _epoch(retry_after) if retry_after else None
    if when is None and headers.get("x-ratelimit-remaining") == "0":
        reset = (headers.get("x-ratelimit-reset") or "").strip()
        when = float(int(reset)) if reset.isascii() and reset.isdigit() and len(reset) <= 12 else None
    return (max(0.0, when - now), when) if when is not None else (None, None)


def _epoch(date: str | None) -> float | None:
    """An HTTP date as epoch seconds, None if it is none."""
    try:
        parsed = email.utils.parsedate_to_datetime(date or "")
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    try:
        return parsed.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def _github_message(err: urllib.error.HTTPError) -> str:
    """GitHub's `message` from a JSON error body (read up to _MAX_ERROR_BODY bytes), else the HTTP reason."""
    try:
        body = json.loads(err.read(_MAX_ERROR_BODY) or b"null")
    except (OSError, ValueError, RecursionError, http.client.HTTPException):
        body = None
    message = body.get("message") if isinstance(body, dict) else None
    return str(message or err.reason or "no message")


def _short(text: str) -> str:
    """`text` on one line and at most 300 characters (cut after the token was taken out of it)."""
    text = " ".join(text.split())
    return text if len(text) <= 300 else f"{text[:299]}…"


def _without_token(text: str, token: str) -> str:
    """`text` with the token, in every form a message may quote it (as is, in a repr, JSON, URL-encoded), as ***."""
    forms = {token, repr(token)[1:-1], repr(token.encode())[2:-1], json.dumps(token)[1:-1],
             urllib.parse.quote(token, safe=""), urllib.parse.quote_plus(token)}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    return text


def _scrubbed(error: GitHubError, token: str) -> GitHubError:
    """The same error with any form of the token replaced by ***."""
    def clean(text: str | None) -> str | None:
        return _without_token(text, token) if text is not None else None
    return GitHubError(clean(error.problem) or "", where=error.where, fix=clean(error.fix),
                       details=[_without_token(detail, token) for detail in error.details])
