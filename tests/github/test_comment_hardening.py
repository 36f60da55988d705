"""The sticky comment against a hostile or failing world: the token in messages, comments that others wrote,
Markdown that a fork wrote, rate limits, hangs and endless listings (the fake API of test_comment.py)."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from scalecheck.cli import OK, USAGE_ERROR, main
from scalecheck.errors import GitHubError
from scalecheck.github import comment as comment_module
from scalecheck.github.comment import comment_body, inert_markdown, upsert_comment

from .test_comment import (BOT, MARK, REPO, TOKEN, FakeGitHub, Handler, Request, error_of, github,  # noqa: F401
                           sleeps, upsert)

GOLD = Path(__file__).parent.parent / "gold" / "markdown" / "check_example.md"
ZW = "\u200b"  # what scalecheck puts after an '@'
DATE = "Sat, 01 Jun 2024 12:00:00 GMT"  # the fake's answers are dated then
EPOCH = 1717243200  # DATE in seconds


class FakeClock:
    """A monotonic clock and a sleep that only advance on demand, for deadline tests that take no real time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def pieces(secret: str, length: int = 6) -> list[str]:
    """Every run of `length` characters of `secret`: no message may hold any of them."""
    return [secret[i:i + length] for i in range(len(secret) - length + 1)]


def assert_no_token(text: str, secret: str = TOKEN) -> None:
    assert not [piece for piece in pieces(secret) if piece in text], text


# -- the token ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", [f"{TOKEN}\n", f"{TOKEN}\r\n", f"  {TOKEN}\t", f"\u00a0{TOKEN}\n"])
def test_token_with_surrounding_white_space_is_stripped(github: FakeGitHub, sleeps: list[float],
                                                         token: str) -> None:
    assert upsert(github, sleeps, token=token).action == "created"
    assert {r.headers["authorization"] for r in github.requests} == {f"Bearer {TOKEN}"}


@pytest.mark.parametrize("token, what", [
    ("ghs_Top\nSecret0123456789", "a line break at character 8"),
    ("ghs_TopSecret 0123456789", "a space at character 14"),
    ("ghs_TopSecret0123456789\x00x", "the control character U+0000 at character 24"),
    ("ghs_TopSecr\u00e9t0123456789", "the non-ASCII character U+00E9 at character 12"),
    ("ghs_\u200bTopSecret0123456789", "the non-ASCII character U+200B at character 5"),
])
def test_token_a_header_cannot_hold_is_an_error_that_shows_none_of_it(github: FakeGitHub, sleeps: list[float],
                                                                     token: str, what: str) -> None:
    with pytest.raises(GitHubError) as info:
        upsert(github, sleeps, token=token)
    assert info.value.problem == f"GITHUB_TOKEN holds {what}, which cannot be sent in an HTTP header"
    assert "GITHUB_TOKEN: ${{ github.token }}" in (info.value.fix or "")
    for secret in token.split():
        assert_no_token(str(info.value) + repr(info.value), secret)
    assert github.requests == []


def test_cli_comment_with_a_token_ending_in_a_newline_comments(capsys: pytest.CaptureFixture[str],
                                                               github: FakeGitHub, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("### :x: scalecheck: FAIL\n", encoding="utf-8")
    for name, value in {"GITHUB_TOKEN": f"{TOKEN}\n", "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": github.url}.items():
        monkeypatch.setenv(name, value)
    assert main(["comment", "--markdown", str(summary), "--pr", "7"]) == OK
    out, err = capsys.readouterr()
    assert err == "" and out.startswith(f"created the scalecheck comment on {REPO}#7: https://github.com/")
    assert_no_token(out)
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_Top\nSecret0123456789")
    assert main(["comment", "--markdown", str(summary), "--pr", "7"]) == USAGE_ERROR
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("scalecheck: error: GITHUB_TOKEN holds a line break at character 8, which cannot be sent in an "
                   "HTTP header; fix: set GITHUB_TOKEN to the token alone, e.g. `env: GITHUB_TOKEN: ${{ "
                   "github.token }}`; a pasted token is one word, without a line break, space or other character "
                   "inside\n")


ODD = "ghp_Odd\\Token'With\"Quotes%+/=0123"  # every character a header allows, but repr, JSON and URLs change


@pytest.mark.parametrize("failure", [
    lambda t: ValueError(f"Invalid header value {('Bearer ' + t).encode()!r}"),
    lambda t: ValueError(f"Invalid header value {('Bearer ' + t)!r}"),
    lambda t: urllib.error.URLError(f"proxy said: Authorization: Bearer {t}"),
    lambda t: OSError(f"echo {json.dumps(t)}"),
    lambda t: http.client.InvalidURL(f"bad url ?token={urllib.parse.quote(t, safe='')}"),
    lambda t: http.client.BadStatusLine(f"Bearer {t}"),
], ids=["bytes-repr", "str-repr", "url-error", "json", "url-quoted", "bad-status"])
@pytest.mark.parametrize("token", [TOKEN, ODD], ids=["plain", "odd"])
def test_no_exception_of_the_http_layer_shows_the_token(monkeypatch: pytest.MonkeyPatch, sleeps: list[float],
                                                        failure: Any, token: str) -> None:
    def fail(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        raise failure(token)

    monkeypatch.setattr(urllib.request.OpenerDirector, "open", fail)
    with pytest.raises(GitHubError) as info:
        upsert_comment("x", repository=REPO, number=7, token=token, api_url="https://api.github.com",
                       sleep=sleeps.append)
    assert info.value.problem.startswith(f"the GitHub API at https://api.github.com could not be reached for "
                                         f"{REPO}#7 (")
    assert "***" in info.value.problem
    assert_no_token(str(info.value) + repr(info.value), token)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert sleeps == [comment_module.RETRY_DELAY]


def test_a_message_cut_to_length_holds_no_piece_of_the_token(github: FakeGitHub, sleeps: list[float]) -> None:
    github.failures["GET"] = [(401, "x" * 290 + f" {TOKEN}")]  # the cut at 300 characters falls in the token
    err = error_of(github, sleeps)
    assert err.problem == f"GitHub rejected the token for {REPO}#7 (HTTP 401: {'x' * 290} ***)"
    assert_no_token(str(err))


@pytest.mark.parametrize("raw, what", [
    (b"[" * 100_000, "JSON"),  # nested too deep for json
    (b"\xff\xfe not utf-8", "JSON"),
])
def test_a_broken_answer_is_a_github_error(github: FakeGitHub, sleeps: list[float], raw: bytes, what: str) -> None:
    original = Handler.list_page

    def broken(self: Handler, api: FakeGitHub, page: int) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    Handler.list_page = broken  # type: ignore[method-assign]
    try:
        err = error_of(github, sleeps)
    finally:
        Handler.list_page = original  # type: ignore[method-assign]
    assert err.problem == f"the GitHub API at {github.url} did not answer {what} for {REPO}#7"


def test_an_answer_past_the_size_cap_is_a_github_error(github: FakeGitHub, sleeps: list[float],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comment_module, "_MAX_ANSWER", 1000)
    monkeypatch.setattr(comment_module, "_CHUNK", 100)
    for i in range(20):
        github.add(f"comment {i}")
    err = error_of(github, sleeps)
    assert err.problem == f"the GitHub API at {github.url} answered more than 0 MiB for {REPO}#7"
    assert github.methods() == ["GET"]


# -- only the token's own comment ----------------------------------------------------------------------------------


def test_a_planted_marker_is_never_updated_even_by_a_token_that_could(github: FakeGitHub,
                                                                      sleeps: list[float]) -> None:
    github.edit_others = True  # a maintainer's token, or a workflow token with write access, may edit any comment
    planted = github.add(f"{MARK}\nplanted by mallory", "mallory")
    result = upsert(github, sleeps, body="report")
    assert result.action == "created" and result.id != planted
    assert github.comments[0]["body"] == f"{MARK}\nplanted by mallory"
    assert github.calls() == [f"GET /repos/{REPO}/issues/7/comments", "POST /graphql",
                              f"POST /repos/{REPO}/issues/7/comments"]
    assert upsert(github, sleeps, body="again").action == "updated"  # the new one is ours: it is updated later
    assert github.comments[0]["body"] == f"{MARK}\nplanted by mallory"
    assert github.comments[1]["body"] == f"{MARK}\nagain"


def test_update_only_never_adopts_a_planted_marker(github: FakeGitHub, sleeps: list[float]) -> None:
    github.edit_others = True
    github.add(f"{MARK}\nplanted", "mallory")
    assert upsert(github, sleeps, update_only=True).action == "skipped"
    assert "PATCH" not in github.methods()


def test_a_personal_token_updates_its_own_comment_only(github: FakeGitHub, sleeps: list[float]) -> None:
    github.viewer, github.edit_others = "alice", True
    own = github.add(f"{MARK}\nalice's", "Alice")  # logins ignore case
    github.add(f"{MARK}\nthe bot's, later", BOT)
    result = upsert(github, sleeps, body="new")
    assert (result.action, result.id) == ("updated", own)
    assert github.calls()[-1] == f"PATCH /repos/{REPO}/issues/comments/{own}"


def test_the_account_comes_from_rest_when_graphql_is_refused(github: FakeGitHub, sleeps: list[float]) -> None:
    github.viewer = "alice"
    github.failures["POST"] = [(404, "Not Found")]  # the first POST is the GraphQL question
    own = github.add(f"{MARK}\nold", "alice")
    assert upsert(github, sleeps).id == own
    assert github.calls() == [f"GET /repos/{REPO}/issues/7/comments", "POST /graphql", "GET /user",
                              f"PATCH /repos/{REPO}/issues/comments/{own}"]


def test_a_bot_viewer_named_without_its_suffix_finds_its_comment(github: FakeGitHub, sleeps: list[float]) -> None:
    original = Handler.send

    def viewer_without_suffix(self: Handler, status: int, payload: Any, headers: dict[str, str] | None = None
                              ) -> None:
        if self.path == "/graphql":
            payload = {"data": {"viewer": {"login": "github-actions"}}}
        original(self, status, payload, headers)

    github.add(f"{MARK}\nsomeone else's", "mallory")
    own = github.add(f"{MARK}\nold", BOT)
    github.add(f"{MARK}\nanother app's", "other-app[bot]")
    Handler.send = viewer_without_suffix  # type: ignore[method-assign]
    try:
        result = upsert(github, sleeps)
    finally:
        Handler.send = original  # type: ignore[method-assign]
    assert (result.action, result.id) == ("updated", own)


def test_an_unknown_account_is_an_error_not_a_guess(github: FakeGitHub, sleeps: list[float]) -> None:
    github.failures["POST"] = [(404, "Not Found")]  # no GraphQL; GET /user refuses a bot's token
    github.add(f"{MARK}\nold", BOT)
    err = error_of(github, sleeps)
    assert err.problem == (f"GitHub did not say which account the token for {REPO}#7 belongs to, so scalecheck "
                           "cannot tell its own earlier comment from a copy that someone else wrote")
    assert github.calls() == [f"GET /repos/{REPO}/issues/7/comments", "POST /graphql", "GET /user"]


@pytest.mark.parametrize("api_url, graphql", [
    ("https://api.github.com", "https://api.github.com/graphql"),
    ("https://github.example.com/api/v3", "https://github.example.com/api/graphql"),
    ("https://api.example.ghe.com", "https://api.example.ghe.com/graphql"),
])
def test_graphql_endpoint_next_to_the_rest_api(api_url: str, graphql: str) -> None:
    assert comment_module._graphql_url(api_url) == graphql


# -- untrusted Markdown --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, inert", [
    ("cc @octocat and @octo-org/core-team", f"cc @{ZW}octocat and @{ZW}octo-org/core-team"),
    ("@octocat at the start, email a@b.example", f"@{ZW}octocat at the start, email a@{ZW}b.example"),
    ("\\@octocat escaped", f"\\@{ZW}octocat escaped"),
    ("&#64;octocat &#x40;o &#064;o &commat;o &#X40;o", f"@{ZW}octocat @{ZW}o @{ZW}o @{ZW}o @{ZW}o"),
    ("@&#111;ctocat", f"@{ZW}&#111;ctocat"),  # an entity right after the '@'
    ("\uff20octocat \ufe6bo", f"\uff20{ZW}octocat \ufe6b{ZW}o"),
    (f"@{ZW}already @\u2060joined", f"@{ZW}already @\u2060joined"),  # kept as they are
    ("`@octocat` in code", f"`@{ZW}octocat` in code"),
    ("trailing @", f"trailing @{ZW}"),
])
def test_inert_markdown_mentions_nobody(text: str, inert: str) -> None:
    assert inert_markdown(text) == inert


@pytest.mark.parametrize("text, inert", [
    ('<img src="https://t.example/p.png">', '&lt;img src="https://t.example/p.png">'),
    ("<a href=x>click</a>", "&lt;a href=x>click&lt;/a>"),
    ("<!-- hidden -->", "&lt;!-- hidden -->"),
    ("<https://evil.example>", "&lt;https://evil.example>"),
    ("<details open><summary>x</summary>", "&lt;details open><summary>x</summary>"),
    ("<DETAILS>", "&lt;DETAILS>"),
    ("<details><summary>kept</summary>\n<code>a&lt;b</code>\n</details>",
     "<details><summary>kept</summary>\n<code>a&lt;b</code>\n</details>"),
    (f"{MARK}\nown marker kept", f"{MARK}\nown marker kept"),
    ("<!--scalecheck-comment:default-->", "&lt;!--scalecheck-comment:default-->"),  # not the marker: text
    ("1 < 2 &lt; 3 &amp; 4 > 0", "1 &lt; 2 &lt; 3 &amp; 4 > 0"),
])
def test_inert_markdown_keeps_only_the_reports_own_html(text: str, inert: str) -> None:
    assert inert_markdown(text) == inert


@pytest.mark.parametrize("text, line, other", [
    ("x\n<!-- scalecheck-comment:linux -->\n", 2, "linux"),
    ("<!--scalecheck-comment:default --> <!--  scalecheck-comment:other-->", 1, "other"),
])
def test_inert_markdown_refuses_the_marker_of_another_key(text: str, line: int, other: str) -> None:
    with pytest.raises(GitHubError) as info:
        inert_markdown(text)
    assert info.value.problem == (f"the Markdown carries the marker of the comment key '{other}' on line {line}; "
                                  "the comment for key 'default' may carry only its own")


def test_inert_markdown_is_idempotent() -> None:
    text = "@a &#64;b <img> <details> &lt; \uff20c"
    once = inert_markdown(text)
    assert inert_markdown(once) == once


def test_the_markdown_report_passes_unchanged() -> None:
    report = GOLD.read_text(encoding="utf-8")  # the report of examples/check, as `scalecheck check` writes it
    assert "<details>" in report and "<code>" in report
    assert inert_markdown(report) == report


def test_comment_posts_a_forks_markdown_inert(capsys: pytest.CaptureFixture[str], github: FakeGitHub,
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("### :x: scalecheck: FAIL\n@octocat please look <img src=https://t.example/p.png>\n",
                       encoding="utf-8")
    for name, value in {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": github.url}.items():
        monkeypatch.setenv(name, value)
    assert main(["comment", "--markdown", str(summary), "--pr", "7"]) == OK
    assert github.comments[0]["body"] == (f"{MARK}\n### :x: scalecheck: FAIL\n@{ZW}octocat please look "
                                          "&lt;img src=https://t.example/p.png>\n")


def test_comment_refuses_markdown_with_another_keys_marker(capsys: pytest.CaptureFixture[str], github: FakeGitHub,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("report\n\n<!-- scalecheck-comment:linux -->\n", encoding="utf-8")
    for name, value in {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": github.url}.items():
        monkeypatch.setenv(name, value)
    assert main(["comment", "--markdown", str(summary), "--pr", "7"]) == USAGE_ERROR
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"scalecheck: error: {summary}:3: the marker of the comment key 'linux' is not allowed in the "
                   "comment for key 'default'; fix: post each key's Markdown with its own --key, and remove marker "
                   "lines from the file (scalecheck check writes none)\n")
    assert github.requests == []


def test_comment_reads_a_huge_file_only_as_far_as_a_comment_goes(capsys: pytest.CaptureFixture[str],
                                                                 github: FakeGitHub, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("x" * 3_000_000, encoding="utf-8")
    for name, value in {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": github.url}.items():
        monkeypatch.setenv(name, value)
    opened: list[int] = []
    original = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: opened.append(1) or original(self, *a, **k))
    assert main(["comment", "--markdown", str(summary), "--pr", "7"]) == OK
    body = github.comments[0]["body"]
    assert body == comment_body("x" * 3_000_000) and len(body) <= 65536 and body.endswith("workflow run)")
    assert opened == []  # read with a limit, not whole


def test_comment_prints_the_answers_url_visibly(capsys: pytest.CaptureFixture[str], github: FakeGitHub,
                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("x\n", encoding="utf-8")
    for name, value in {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": github.url}.items():
        monkeypatch.setenv(name, value)
    original = Handler.send

    def hostile_url(self: Handler, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if status == 201:
            payload = payload | {"html_url": "https://x\n::error::injected\u202e"}
        original(self, status, payload, headers)

    Handler.send = hostile_url  # type: ignore[method-assign]
    try:
        assert main(["comment", "--markdown", str(summary), "--pr", "7"]) == OK
    finally:
        Handler.send = original  # type: ignore[method-assign]
    out = capsys.readouterr().out
    assert out == f"created the scalecheck comment on {REPO}#7: https://x\\n::error::injected\\u202e\n"


# -- rate limits ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status, headers, wait", [
    (429, {"Retry-After": "7"}, 7.0),
    (429, {"Retry-After": "Sat, 01 Jun 2024 12:00:20 GMT"}, 20.0),
    (403, {"Retry-After": "0"}, 0.0),  # a secondary rate limit
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(EPOCH + 30)}, 30.0),
    (429, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(EPOCH - 5)}, 0.0),  # already reset
    (503, {"Retry-After": "2"}, 2.0),
])
def test_rate_limit_wait_that_github_asks_for_is_honoured(github: FakeGitHub, status: int,
                                                          headers: dict[str, str], wait: float) -> None:
    github.date = DATE
    github.failures["GET"] = [(status, "API rate limit exceeded", headers)]
    clock = FakeClock()
    result = upsert(github, [], sleep=clock.sleep, clock=clock)
    assert result.action == "created"
    assert clock.slept == [wait]
    assert github.methods() == ["GET", "GET", "POST"]


@pytest.mark.parametrize("headers, asked", [
    ({"Retry-After": "3600"}, "3,600 s (until 2024-06-01 13:00:00 UTC)"),
    ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(EPOCH + 900)}, "900 s (until 2024-06-01 12:15:00 UTC)"),
    ({"Retry-After": "99999999999999999999"}, "1,000,000,000,000 s (until much later)"),
])
def test_rate_limit_longer_than_the_cap_gives_up_at_once(github: FakeGitHub, headers: dict[str, str],
                                                         asked: str) -> None:
    github.date = DATE
    github.failures["GET"] = [(429, "API rate limit exceeded", headers)]
    clock = FakeClock()
    err = error_of(github, [], sleep=clock.sleep, clock=clock)
    assert err.problem == (f"GitHub's API rate limit stopped scalecheck commenting on {REPO}#7 (HTTP 429: API rate "
                           f"limit exceeded); GitHub asks to wait {asked}, longer than scalecheck waits (60 s)")
    assert err.fix == "re-run the job later; use the job's own GITHUB_TOKEN rather than a shared token"
    assert clock.slept == [] and github.methods() == ["GET"]


def test_primary_rate_limit_403_without_a_reset_is_retried_after_the_delay(github: FakeGitHub) -> None:
    github.failures["GET"] = [(403, "API rate limit exceeded for installation", {"x-ratelimit-remaining": "0"})] * 2
    clock = FakeClock()
    err = error_of(github, [], sleep=clock.sleep, clock=clock)
    assert err.problem == (f"GitHub's API rate limit stopped scalecheck commenting on {REPO}#7 (HTTP 403: API rate "
                           "limit exceeded for installation)")
    assert clock.slept == [comment_module.RETRY_DELAY]


# -- the deadline --------------------------------------------------------------------------------------------------


def slow_api(github: FakeGitHub, clock: FakeClock, seconds: float) -> None:
    """Every answer of the fake takes `seconds` on `clock`."""
    def tick(request: Request) -> None:
        clock.now += seconds
    github.tick = tick


def test_the_whole_upsert_has_one_deadline(github: FakeGitHub) -> None:
    clock = FakeClock()
    slow_api(github, clock, 20.0)
    github.failures["GET"] = [(502, "Bad Gateway")]
    err = error_of(github, [], sleep=clock.sleep, clock=clock, timeout=30.0)
    assert err.problem == f"the GitHub API at {github.url} did not finish answering for {REPO}#7 within 30 s"
    assert github.methods() == ["GET", "GET"]  # each within its time, but nothing is posted after the deadline
    assert clock.slept == [comment_module.RETRY_DELAY]


def test_no_retry_when_the_deadline_leaves_no_time_for_it(github: FakeGitHub) -> None:
    clock = FakeClock()
    slow_api(github, clock, 29.0)
    github.failures["GET"] = [(502, "Bad Gateway")]
    err = error_of(github, [], sleep=clock.sleep, clock=clock, timeout=30.0)
    assert err.problem == f"GitHub's API failed for {REPO}#7 (HTTP 502: Bad Gateway)"
    assert clock.slept == [] and github.methods() == ["GET"]


def test_a_rate_limit_wait_does_not_count_against_the_deadline(github: FakeGitHub) -> None:
    clock = FakeClock()
    slow_api(github, clock, 10.0)
    github.failures["GET"] = [(429, "API rate limit exceeded", {"Retry-After": "50"})]
    result = upsert(github, [], sleep=clock.sleep, clock=clock, timeout=30.0)
    assert result.action == "created" and clock.slept == [50.0] and clock.now == 80.0


@pytest.mark.wall_clock
def test_an_unresponsive_api_stops_at_the_deadline(sleeps: list[float]) -> None:
    with socket.socket() as server:  # accepts connections (the backlog) but never answers
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        start = time.monotonic()
        with pytest.raises(GitHubError) as info:
            upsert_comment("x", repository=REPO, number=7, token=TOKEN, api_url=url, sleep=sleeps.append,
                           timeout=0.4)
        elapsed = time.monotonic() - start
    assert info.value.problem == f"the GitHub API at {url} did not finish answering for {REPO}#7 within 0.4 s"
    assert 0.35 <= elapsed < 0.8 and sleeps == []


# -- listings that do not end --------------------------------------------------------------------------------------


def link_pages(github: FakeGitHub, next_url: Any) -> Any:
    """Make the fake link every page of comments to next_url(page)."""
    original = Handler.list_page

    def linked(self: Handler, api: FakeGitHub, page: int) -> None:
        self.send(200, api.comments if page == 1 else [], {"Link": f'<{next_url(page)}>; rel="next"'})

    Handler.list_page = linked  # type: ignore[method-assign]
    return original


def test_a_page_linked_twice_is_an_error_and_nothing_is_posted(github: FakeGitHub, sleeps: list[float]) -> None:
    original = link_pages(github, lambda page: f"{github.url}/repos/{REPO}/issues/7/comments?per_page=100&page=2")
    try:
        err = error_of(github, sleeps)
    finally:
        Handler.list_page = original  # type: ignore[method-assign]
    assert err.problem == (f"the list of comments on {REPO}#7 linked a page twice: scalecheck stops reading it and "
                           "comments nothing")
    assert github.methods() == ["GET", "GET"] and github.comments == []


def test_a_listing_without_end_stops_at_the_page_limit(github: FakeGitHub, sleeps: list[float],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comment_module, "_MAX_PAGES", 5)
    original = link_pages(github, lambda page: f"{github.url}/repos/{REPO}/issues/7/comments?page={page + 1}")
    try:
        err = error_of(github, sleeps)
    finally:
        Handler.list_page = original  # type: ignore[method-assign]
    assert err.problem == (f"the list of comments on {REPO}#7 has more than 5 pages: scalecheck stops reading it "
                           "and comments nothing")
    assert github.methods() == ["GET"] * 5


def test_a_next_page_of_another_pull_request_is_not_read(github: FakeGitHub, sleeps: list[float]) -> None:
    original = link_pages(github, lambda page: f"{github.url}/repos/{REPO}/issues/8/comments?page=2")
    try:
        err = error_of(github, sleeps)
    finally:
        Handler.list_page = original  # type: ignore[method-assign]
    assert err.problem.startswith(f"the list of comments on {REPO}#7 links its next page outside {github.url}")
    assert github.methods() == ["GET"]


def test_next_pages_named_by_repository_id_are_followed(github: FakeGitHub, sleeps: list[float]) -> None:
    """GitHub's own next links say /repositories/ID/... rather than /repos/OWNER/NAME/..."""
    github.per_page = 1
    github.add("first")
    wanted = github.add(f"{MARK}\nsecond", BOT)
    original = Handler.list_page

    def by_id(self: Handler, api: FakeGitHub, page: int) -> None:
        links = {"Link": f'<{api.url}/repositories/1/issues/7/comments?per_page=1&page=2>; rel="next"'}
        self.send(200, api.comments[page - 1:page], links if page == 1 else {})

    Handler.list_page = by_id  # type: ignore[method-assign]
    try:
        result = upsert(github, sleeps)
    finally:
        Handler.list_page = original  # type: ignore[method-assign]
    assert (result.action, result.id) == ("updated", wanted)
    assert github.calls()[1] == "GET /repositories/1/issues/7/comments"


# -- the Markdown report: escaped once -----------------------------------------------------------------------------


def test_markdown_report_escapes_an_apostrophe_once() -> None:
    from scalecheck.report.templating import md_code, md_text

    assert md_text("each commit's own model") == "each commit&#39;s own model"
    assert md_code("it's") == "<code>it&#39;s</code>"
    assert md_text("&#39; typed") == "&amp;\\#39; typed"  # an entity typed in a name shows as typed
    assert "&\\#39;" not in GOLD.read_text(encoding="utf-8")
    markdown_it = pytest.importorskip("markdown_it")
    render = markdown_it.MarkdownIt("commonmark").renderInline
    assert render(md_text("each commit's own model")) == "each commit's own model"
    assert render(md_text("&#39; typed")) == "&amp;#39; typed"
    assert render(md_text("<b>@team</b> [x](http://e.example)")) == \
        "&lt;b&gt;@\u2060team&lt;/b&gt; [x](http://e.example)"
    assert render(md_text("> not a quote, a->b")) == "&gt; not a quote, a-&gt;b"
    assert render(md_text('say "hi" #1')) == "say &quot;hi&quot; #1"
