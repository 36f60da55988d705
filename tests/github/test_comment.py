"""The sticky comment against a local HTTP server that answers like GitHub's REST API."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from scalecheck.errors import GitHubError
from scalecheck.github.comment import (COMMENT_LIMIT, CommentResult, comment_body, marker, pull_request_number,
                                       upsert_comment)

TOKEN = "ghs_TopSecret0123456789"
REPO = "octo-org/octo-repo"
MARK = "<!-- scalecheck-comment:default -->"
BOT = "github-actions[bot]"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class FakeGitHub:
    """State of the fake API: the pull request's comments, planned failures and the requests received."""

    url: str = ""
    comments: list[dict[str, Any]] = field(default_factory=list)
    per_page: int = 100  # the real API's page size is per_page; tests shrink it to get several pages
    # "GET"/"POST"/"PATCH" -> planned answers (status, message) or (status, message, headers), first come first out
    failures: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    next_id: int = 1000
    viewer: str = BOT  # the token's account: GraphQL's viewer; GET /user refuses a bot, as GitHub does
    edit_others: bool = False  # True: the token may edit anyone's comment (a maintainer's personal token)
    date: str | None = None  # the answers' Date header (None: now)
    tick: Callable[[Request], None] | None = None  # called on each request, e.g. to advance a fake clock

    def add(self, body: str, login: str = "someone") -> int:
        self.next_id += 1
        user = {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"}
        self.comments.append({"id": self.next_id, "body": body, "user": user,
                              "html_url": f"https://github.com/{REPO}/pull/7#issuecomment-{self.next_id}"})
        return self.next_id

    def methods(self) -> list[str]:
        return [r.method for r in self.requests]

    def calls(self) -> list[str]:
        """The requests as "METHOD /path" (without the API's address and the query)."""
        return [f"{r.method} {r.path}" for r in self.requests]


class Handler(BaseHTTPRequestHandler):
    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep pytest output clean
        pass

    def date_time_string(self, timestamp: float | None = None) -> str:
        return self.server.api.date or super().date_time_string(timestamp)

    def do_GET(self) -> None:
        self.answer("GET")

    def do_POST(self) -> None:
        self.answer("POST")

    def do_PATCH(self) -> None:
        self.answer("PATCH")

    def answer(self, method: str) -> None:
        api: FakeGitHub = self.server.api
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        headers = {name.lower(): value for name, value in self.headers.items()}  # HTTP header names ignore case
        api.requests.append(Request(method, parts.path, parse_qs(parts.query), headers, body))
        if api.tick is not None:
            api.tick(api.requests[-1])
        planned = api.failures.get(method)
        if planned:
            status, message, *extra = planned.pop(0)
            return self.send(status, {"message": message, "documentation_url": "https://docs.github.com"},
                             extra[0] if extra else None)
        issue = f"/repos/{REPO}/issues"
        if method == "POST" and parts.path == "/graphql":
            return self.send(200, {"data": {"viewer": {"login": api.viewer}}})
        if method == "GET" and parts.path == "/user":
            if api.viewer.endswith("[bot]"):
                return self.send(403, {"message": "Resource not accessible by integration"})
            return self.send(200, {"login": api.viewer, "type": "User"})
        if method == "GET" and parts.path in (f"{issue}/7/comments", "/repositories/1/issues/7/comments"):
            return self.list_page(api, int(parse_qs(parts.query).get("page", ["1"])[0]))
        if method == "POST" and parts.path == f"{issue}/7/comments":
            new = api.add(body["body"], api.viewer)
            return self.send(201, api.comments[-1] | {"id": new})
        if method == "PATCH" and parts.path.startswith(f"{issue}/comments/"):
            ident = int(parts.path.rsplit("/", 1)[1])
            for comment in api.comments:
                if comment["id"] == ident:
                    if comment["user"]["login"] != api.viewer and not api.edit_others:
                        return self.send(403, {"message": "Resource not accessible by integration"})
                    comment["body"] = body["body"]
                    return self.send(200, comment)
        self.send(404, {"message": "Not Found"})

    def list_page(self, api: FakeGitHub, page: int) -> None:
        pages = max(1, -(-len(api.comments) // api.per_page))
        start = (page - 1) * api.per_page
        links = {}
        if page < pages:
            links["next"] = f"{api.url}/repos/{REPO}/issues/7/comments?per_page=100&page={page + 1}"
            links["last"] = f"{api.url}/repos/{REPO}/issues/7/comments?per_page=100&page={pages}"
        self.send(200, api.comments[start:start + api.per_page],
                  {"Link": ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items())} if links else {})

    def send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    """A fake GitHub API on 127.0.0.1, shut down after the test."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = False  # so that server_close() joins every handler thread
    server.api = FakeGitHub(url=f"http://127.0.0.1:{server.server_address[1]}")  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield server.api  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert not thread.is_alive()


@pytest.fixture
def sleeps() -> list[float]:
    return []


def upsert(github: FakeGitHub, sleeps: list[float], body: str = "## scalecheck\nall good", **options: Any
           ) -> CommentResult:
    options = {"repository": REPO, "number": 7, "token": TOKEN, "api_url": github.url, "sleep": sleeps.append,
               "timeout": 5.0} | options
    return upsert_comment(body, **options)


def error_of(github: FakeGitHub, sleeps: list[float], **options: Any) -> GitHubError:
    with pytest.raises(GitHubError) as info:
        upsert(github, sleeps, **options)
    text = str(info.value)
    assert TOKEN not in text and TOKEN not in repr(info.value)
    assert info.value.fix
    return info.value


# -- create and update ------------------------------------------------------------------------------------------


def test_creates_comment_when_no_marker_comment_exists(github: FakeGitHub, sleeps: list[float]) -> None:
    github.add("LGTM")
    github.add("<!-- scalecheck-comment:other -->\nanother key's comment", BOT)
    result = upsert(github, sleeps)
    assert result == CommentResult("created", github.comments[-1]["html_url"], github.comments[-1]["id"])
    assert github.methods() == ["GET", "POST"]
    post = github.requests[-1]
    assert post.path == f"/repos/{REPO}/issues/7/comments"
    assert post.body == {"body": f"{MARK}\n## scalecheck\nall good"}
    assert post.headers["content-type"] == "application/json"
    assert sleeps == []


def test_sends_github_headers(github: FakeGitHub, sleeps: list[float]) -> None:
    upsert(github, sleeps)
    listing = github.requests[0]
    assert listing.query == {"per_page": ["100"]}
    for request in github.requests:
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert request.headers["accept"] == "application/vnd.github+json"
        assert request.headers["x-github-api-version"] == "2022-11-28"
        assert request.headers["user-agent"] == "scalecheck"
    assert "content-type" not in listing.headers


def test_updates_bot_comment_found_on_second_page(github: FakeGitHub, sleeps: list[float]) -> None:
    github.per_page = 3
    for i in range(3):
        github.add(f"comment {i}")
    github.add(f"someone quoting\n{MARK}")
    wanted = github.add(f"{MARK}\nold report", BOT)
    github.add(f"> {MARK}\nquoted again later")  # the last match, but not the bot's
    result = upsert(github, sleeps, body="new report")
    assert result == CommentResult("updated", f"https://github.com/{REPO}/pull/7#issuecomment-{wanted}", wanted)
    assert github.calls() == [f"GET /repos/{REPO}/issues/7/comments", f"GET /repos/{REPO}/issues/7/comments",
                              "POST /graphql", f"PATCH /repos/{REPO}/issues/comments/{wanted}"]
    assert github.requests[1].query == {"per_page": ["100"], "page": ["2"]}
    assert github.requests[2].body == {"query": "query { viewer { login } }"}
    assert github.requests[3].body == {"body": f"{MARK}\nnew report"}


def test_update_keeps_a_body_that_carries_the_marker(github: FakeGitHub, sleeps: list[float]) -> None:
    github.add(f"{MARK}\nold", BOT)
    upsert(github, sleeps, body=f"# report\n{MARK}\nnew")
    assert github.requests[-1].body == {"body": f"# report\n{MARK}\nnew"}


def test_someone_elses_marker_comment_leads_to_a_new_comment(github: FakeGitHub, sleeps: list[float]) -> None:
    github.add(f"{MARK}\ncopied by a person", "mallory")
    result = upsert(github, sleeps)
    assert result.action == "created"
    assert github.methods() == ["GET", "POST", "POST"]  # the list, who the token is, the new comment


def test_update_only_skips_without_writing(github: FakeGitHub, sleeps: list[float]) -> None:
    github.add("LGTM")
    assert upsert(github, sleeps, update_only=True) == CommentResult("skipped", None, None)
    assert github.methods() == ["GET"]


def test_update_only_skips_when_the_marker_comment_is_someone_elses(github: FakeGitHub, sleeps: list[float]
                                                                     ) -> None:
    github.add(f"{MARK}\ncopied by a person", "mallory")
    assert upsert(github, sleeps, update_only=True).action == "skipped"
    assert github.calls() == [f"GET /repos/{REPO}/issues/7/comments", "POST /graphql"]


def test_update_only_still_updates(github: FakeGitHub, sleeps: list[float]) -> None:
    github.add(f"{MARK}\nold", BOT)
    assert upsert(github, sleeps, update_only=True).action == "updated"


def test_key_selects_its_own_comment(github: FakeGitHub, sleeps: list[float]) -> None:
    github.add(f"{MARK}\ndefault key", BOT)
    other = github.add("<!-- scalecheck-comment:linux-x86_64 -->\nother key", BOT)
    result = upsert(github, sleeps, key="linux-x86_64")
    assert (result.action, result.id) == ("updated", other)


def test_next_link_to_another_host_is_not_followed(github: FakeGitHub, sleeps: list[float]) -> None:
    github.per_page = 1
    github.add("first")
    github.add(f"{MARK}\nsecond", BOT)
    real_url = github.url
    github.url = "http://evil.example"  # the fake now links page 2 to another host
    err = error_of(github, sleeps, api_url=real_url)
    assert err.problem == (f"the list of comments on {REPO}#7 links its next page outside {real_url}: scalecheck "
                           "sends the token nowhere else and comments nothing")
    assert github.methods() == ["GET"]  # neither followed nor a comment posted on an unfinished list


# -- body -------------------------------------------------------------------------------------------------------


def test_long_body_is_cut_at_a_line_and_keeps_the_marker(github: FakeGitHub, sleeps: list[float]) -> None:
    body = "\n".join(f"| kernel {i} | p^2 | 1.5 |" for i in range(5000))
    upsert(github, sleeps, body=body)
    sent = github.requests[-1].body["body"]
    assert len(sent) <= COMMENT_LIMIT
    assert sent.startswith(f"{MARK}\n| kernel 0 |")
    lines = sent.split("\n")
    assert lines[-1].startswith("… (truncated: the comment limit is 65,536 characters")
    assert lines[-2].endswith("| 1.5 |") and lines[-2] in body.split("\n")


@pytest.mark.parametrize("body", [
    "x" * 100_000,  # no newline to cut at
    "intro\n" + "y" * 70_000 + f"\n{MARK}\nend",  # the body's own marker is beyond the cut
    "a\n" + MARK + "z" * 70_000,  # the marker sits on a long line
])
def test_comment_body_fits_and_keeps_marker(body: str) -> None:
    text = comment_body(body)
    assert len(text) <= COMMENT_LIMIT and MARK in text
    assert text.endswith("see the full report in the workflow run)")


def test_comment_body_short_is_unchanged_but_for_the_marker() -> None:
    assert comment_body("hi", key="k") == "<!-- scalecheck-comment:k -->\nhi"
    exact = f"{MARK}\n" + "x" * (COMMENT_LIMIT - len(MARK) - 1)
    assert comment_body(exact) == exact


@pytest.mark.parametrize("key", ["", "a b", "x" * 65, "-->", "ключ"])
def test_marker_refuses_bad_keys(key: str) -> None:
    with pytest.raises(GitHubError, match="comment key") as info:
        marker(key)
    assert "letters, digits" in (info.value.fix or "")


# -- errors -----------------------------------------------------------------------------------------------------


def test_missing_token(github: FakeGitHub, sleeps: list[float]) -> None:
    for token in (None, ""):
        err = error_of(github, sleeps, token=token)
        assert err.problem == "GITHUB_TOKEN is not set: scalecheck cannot comment on the pull request"
        assert "GITHUB_TOKEN: ${{ github.token }}" in (err.fix or "") and "pull-requests: write" in (err.fix or "")
    assert github.requests == []


@pytest.mark.parametrize("options, match", [
    ({"repository": "octo-repo"}, "not a GitHub repository name"),
    ({"repository": "a/b/c"}, "not a GitHub repository name"),
    ({"repository": "../.."}, "not a GitHub repository name"),
    ({"repository": "o/r?x=1"}, "not a GitHub repository name"),
    ({"number": 0}, "not a pull request number"),
    ({"number": -3}, "not a pull request number"),
    ({"number": True}, "not a pull request number"),
    ({"number": "7"}, "not a pull request number"),
    ({"api_url": "ftp://api.github.com"}, "is not an http:// or https:// URL of a host"),
    ({"api_url": "https://"}, "is not an http:// or https:// URL of a host"),
    ({"api_url": "https://api.github.com x"}, "is not an http:// or https:// URL of a host"),
    ({"api_url": "https://api.github.com\r\nX: y"}, "is not an http:// or https:// URL of a host"),
    ({"api_url": "https://user:pw@api.github.com"}, "is not an http:// or https:// URL of a host"),
])
def test_invalid_target(github: FakeGitHub, sleeps: list[float], options: dict[str, Any], match: str) -> None:
    assert re.search(match, error_of(github, sleeps, **options).problem)
    assert github.requests == []


def test_read_only_token_on_create_gives_the_fork_message(github: FakeGitHub, sleeps: list[float]) -> None:
    github.failures["POST"] = [(403, "Resource not accessible by integration")]
    err = error_of(github, sleeps)
    assert err.problem == (f"the token cannot write comments on {REPO}#7 "
                           "(HTTP 403: Resource not accessible by integration)")
    assert "examples/workflows/" in (err.fix or "") and "workflow_run" in (err.fix or "")
    assert "pull-requests: write" in (err.fix or "")
    assert sleeps == []


def test_forbidden_list(github: FakeGitHub, sleeps: list[float]) -> None:
    github.failures["GET"] = [(403, "Resource not accessible by integration")]
    err = error_of(github, sleeps)
    assert err.problem.startswith(f"the token cannot read the comments of {REPO}#7 (HTTP 403")
    assert "examples/workflows/" in (err.fix or "")


def test_bad_token(github: FakeGitHub, sleeps: list[float]) -> None:
    github.failures["GET"] = [(401, f"Bad credentials {TOKEN}")]  # even if an answer echoed the token
    err = error_of(github, sleeps)
    assert err.problem == f"GitHub rejected the token for {REPO}#7 (HTTP 401: Bad credentials ***)"
    assert "expired" in (err.fix or "")


def test_not_found(github: FakeGitHub, sleeps: list[float]) -> None:
    err = error_of(github, sleeps, number=8)
    assert err.problem == f"{REPO}#8 was not found, or the token cannot see it (HTTP 404: Not Found)"


def test_other_client_error_names_status_and_message(github: FakeGitHub, sleeps: list[float]) -> None:
    github.failures["POST"] = [(422, "Body is too long")]
    err = error_of(github, sleeps)
    assert err.problem == f"GitHub refused to write comments on {REPO}#7 (HTTP 422: Body is too long)"
    assert sleeps == []


def test_rate_limit_is_retried_once_then_reported(github: FakeGitHub, sleeps: list[float]) -> None:
    github.failures["GET"] = [(429, "API rate limit exceeded"), (429, "API rate limit exceeded")]
    err = error_of(github, sleeps)
    assert "rate limit" in err.problem and "(HTTP 429: API rate limit exceeded)" in err.problem
    assert len(sleeps) == 1 and 1 <= sleeps[0] <= 2


def test_server_error_once_is_retried(github: FakeGitHub, sleeps: list[float]) -> None:
    github.failures["POST"] = [(500, "Internal Server Error")]
    result = upsert(github, sleeps)
    assert result.action == "created"
    assert github.methods() == ["GET", "POST", "GET", "POST"]
    assert len(sleeps) == 1 and 1 <= sleeps[0] <= 2
    assert len(github.comments) == 1


def test_server_error_after_a_created_comment_updates_on_retry(github: FakeGitHub, sleeps: list[float]) -> None:
    """A 502 whose request did create the comment: the retry lists again and updates it, no duplicate."""
    original = Handler.send

    def lose_first_create(self: Handler, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if status == 201 and not sleeps:
            status, payload = 502, {"message": "Bad Gateway"}
        original(self, status, payload, headers)

    Handler.send = lose_first_create  # type: ignore[method-assign]
    try:
        result = upsert(github, sleeps)
    finally:
        Handler.send = original  # type: ignore[method-assign]
    assert result.action == "updated" and len(github.comments) == 1
    assert github.methods() == ["GET", "POST", "GET", "POST", "PATCH"]  # the second POST asks who the token is


def test_server_error_twice_is_reported(github: FakeGitHub, sleeps: list[float]) -> None:
    github.failures["GET"] = [(503, "Service Unavailable"), (502, "Bad Gateway")]
    err = error_of(github, sleeps)
    assert err.problem == f"GitHub's API failed for {REPO}#7 (HTTP 502: Bad Gateway)"
    assert github.methods() == ["GET", "GET"]
    assert "githubstatus" in (err.fix or "")


def test_unreachable_api_is_retried_once_then_reported(sleeps: list[float]) -> None:
    import socket

    with socket.socket() as sock:  # a port that is bound but not listening refuses connections
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with pytest.raises(GitHubError) as info:
            upsert_comment("x", repository=REPO, number=7, token=TOKEN, api_url=url, sleep=sleeps.append,
                           timeout=2.0)
    assert info.value.problem.startswith(f"the GitHub API at {url} could not be reached for {REPO}#7")
    assert TOKEN not in str(info.value) and len(sleeps) == 1


def test_redirect_of_a_write_is_not_followed(github: FakeGitHub, sleeps: list[float]) -> None:
    original = Handler.send

    def moved(self: Handler, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if self.command == "POST":
            status, payload, headers = 307, {"message": "Moved"}, {"Location": "http://evil.example/x"}
        original(self, status, payload, headers)

    Handler.send = moved  # type: ignore[method-assign]
    try:
        err = error_of(github, sleeps)
    finally:
        Handler.send = original  # type: ignore[method-assign]
    assert "(HTTP 307: Moved)" in err.problem and "renamed or moved" in (err.fix or "")


def test_api_answering_something_else_than_a_list(github: FakeGitHub, sleeps: list[float]) -> None:
    original = Handler.list_page
    Handler.list_page = lambda self, api, page: self.send(200, {"not": "a list"})  # type: ignore[method-assign]
    try:
        err = error_of(github, sleeps)
    finally:
        Handler.list_page = original  # type: ignore[method-assign]
    assert "did not answer a list of comments" in err.problem


# -- pull request number ----------------------------------------------------------------------------------------


def write_event(tmp_path: Path, event: Any) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    return str(path)


def test_pull_request_number_from_pull_request_event(tmp_path: Path) -> None:
    path = write_event(tmp_path, {"action": "opened", "number": 12, "pull_request": {"number": 12}})
    assert pull_request_number({"GITHUB_EVENT_PATH": path, "GITHUB_REF": "refs/pull/99/merge"}) == 12


def test_pull_request_number_from_issue_comment_event(tmp_path: Path) -> None:
    on_pull = {"issue": {"number": 5, "pull_request": {"url": "https://api.github.com/..."}}}
    on_issue = {"issue": {"number": 6}}
    assert pull_request_number({"GITHUB_EVENT_PATH": write_event(tmp_path, on_pull)}) == 5
    assert pull_request_number({"GITHUB_EVENT_PATH": write_event(tmp_path, on_issue)}) is None


@pytest.mark.parametrize("ref, number", [
    ("refs/pull/42/merge", 42), ("refs/pull/42/head", 42), ("refs/heads/main", None), ("refs/pull/x/merge", None),
    ("refs/pull/0/merge", None), ("", None),
])
def test_pull_request_number_from_ref(tmp_path: Path, ref: str, number: int | None) -> None:
    push = write_event(tmp_path, {"ref": "refs/heads/main", "pull_request": None})
    assert pull_request_number({"GITHUB_REF": ref, "GITHUB_EVENT_PATH": push}) == number


@pytest.mark.parametrize("content", [None, "not json", "[1, 2]", '{"pull_request": {"number": "12"}}'])
def test_pull_request_number_ignores_missing_or_odd_event_file(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "event.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert pull_request_number({"GITHUB_EVENT_PATH": str(path), "GITHUB_REF": "refs/pull/3/merge"}) == 3
    assert pull_request_number({"GITHUB_EVENT_PATH": str(path)}) is None
    assert pull_request_number({}) is None
