"""The history store: measurements per commit in real git repositories built by the `git_repo` fixture."""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from scalecheck.data.measurement import Run, Series
from scalecheck.errors import ConfigError, HistoryError, InputError
from scalecheck.formats.writer import dumps_run
from scalecheck.history.store import Store

from .conftest import GitRepo

MakeRepo = Callable[..., GitRepo]
DATA = "refs/heads/scalecheck-data"


def run_of(kernel: str, scale: float = 1.0) -> Run:
    """A small one-parameter run whose kernel name tells where it was read from."""
    values = [[1.0 * scale, 1.5 * scale], [2.0 * scale, float("nan")], [4.0 * scale, 4.25 * scale]]
    return Run(("n",), (Series(kernel, "time", ("n",), [[8], [16], [32]], values, unit="s"),))


def native(kernel: str) -> str:
    """A committed measurement file in scalecheck's format."""
    return dumps_run(run_of(kernel))


def kernels(run: Run | None) -> list[str]:
    assert run is not None
    return sorted(s.kernel for s in run.series)


@pytest.fixture
def store_of() -> Callable[..., Store]:
    """Store(repo.path, **options), closed after the test."""
    stores: list[Store] = []

    def make(repo: GitRepo, **options: object) -> Store:
        stores.append(Store(repo.path, **options))  # type: ignore[arg-type]
        return stores[-1]

    yield make  # type: ignore[misc]
    for store in stores:
        store.close()


# -- record and read back -----------------------------------------------------------------------------------------


def test_record_then_read_round_trips_without_touching_work_tree_or_index(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1", {"src/a.py": "x = 1\n"}), ("commit", "c2", {"src/a.py": "x = 2\n"})])
    (repo.path / "src" / "a.py").write_text("x = 3  # uncommitted\n")  # a dirty tree must stay as dirty as it was
    before = (repo.status(), repo.branch(), repo.repo.head.commit.hexsha)
    store = store_of(repo)

    data_commit = store.record(run_of("sort"), repo.commits["c1"])

    assert (repo.status(), repo.branch(), repo.repo.head.commit.hexsha) == before
    assert repo.repo.commit(DATA).hexsha == data_commit
    assert repo.repo.commit(DATA).message.strip() == f"scalecheck: measurements of {repo.commits['c1'][:7]}"
    assert [blob.name for blob in repo.repo.commit(DATA).tree.blobs] == [f"{repo.commits['c1']}.json"]
    run = store.read(repo.commits["c1"])
    assert kernels(run) == ["sort"]
    assert run.series[0].unit == "s"
    assert run.series[0].values.tolist()[0] == [1.0, 1.5]
    assert run.meta == {"commit": repo.commits["c1"]}
    assert store.read(repo.commits["c2"]) is None
    assert store.read("HEAD~1") is not None  # any ref, resolved


def test_record_defaults_to_head_and_keeps_earlier_commits_files(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1"), ("commit", "c2")])
    store = store_of(repo)
    first = store.record(run_of("one"), "HEAD~1")
    second = store.record(run_of("two"))
    assert repo.repo.commit(second).parents[0].hexsha == first
    assert kernels(store.read(repo.commits["c1"])) == ["one"]
    assert kernels(store.read(repo.commits["c2"])) == ["two"]
    assert repo.repo.commit(second).author.name == "Test Author"  # the repository's own user


def test_record_twice_for_the_same_commit_replaces_its_file(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1")])
    store = store_of(repo)
    store.record(run_of("old"))
    second = store.record(run_of("new"))
    assert [blob.name for blob in repo.repo.commit(second).tree.blobs] == [f"{repo.commits['c1']}.json"]
    assert kernels(store.read("HEAD")) == ["new"]


def test_record_works_without_a_configured_git_user(git_repo: MakeRepo, store_of, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    repo = git_repo([("commit", "c1")])
    with repo.repo.config_writer() as config:
        config.remove_section("user")
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.gitconfig
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-such-gitconfig"))
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    try:
        repo.repo.git.var("GIT_COMMITTER_IDENT")
        git_knows_someone = True  # git derived an identity from the host; scalecheck leaves it alone
    except git.GitCommandError:
        git_knows_someone = False

    data_commit = store_of(repo).record(run_of("sort"))

    author = repo.repo.commit(data_commit).author
    if not git_knows_someone:
        assert (author.name, author.email) == ("scalecheck", "scalecheck@localhost")
    assert repo.repo.commit(data_commit).committer.name == author.name


def test_record_starts_from_origins_data_branch(git_repo: MakeRepo, store_of, tmp_path: Path) -> None:
    origin = git_repo([("commit", "c1"), ("commit", "c2")], name="origin")
    pushed = store_of(origin).record(run_of("from-ci"), "HEAD~1")
    clone = GitRepo(tmp_path / "clone", git.Repo.clone_from(str(origin.path), str(tmp_path / "clone")))
    try:
        assert clone.repo.git.branch("--list", "scalecheck-data") == ""  # only the remote-tracking ref
        store = store_of(clone)
        assert kernels(store.read(origin.commits["c1"])) == ["from-ci"]  # read from origin/scalecheck-data

        local = store.record(run_of("mine"))

        assert clone.repo.commit(local).parents[0].hexsha == pushed
        assert kernels(store.read(origin.commits["c1"])) == ["from-ci"]
        assert kernels(store.read(origin.commits["c2"])) == ["mine"]
        assert clone.status() == "" and clone.branch() == "refs/heads/main"
    finally:
        clone.repo.close()


def test_corrupt_data_branch_file_is_an_input_error_naming_branch_and_file(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1")])
    sha = repo.commits["c1"]
    broken = '{"scalecheck": 1,\n "parameters": ["n"],\n "measurements": [\n  {"kernel": "k", "point": {"n": 8}, ' \
             '"values": [1.0, "n/a"]}\n]}\n'
    repo.apply([("branch", "scalecheck-data"), ("commit", "data", {f"{sha}.json": broken}), ("checkout", "main")])

    with pytest.raises(InputError) as info:
        store_of(repo).read(sha)

    assert str(info.value).startswith(f"scalecheck-data:{sha}.json:4: measurements[0]: the measured value must be")
    assert info.value.fix


def test_record_refuses_while_the_data_branch_is_checked_out(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1"), ("branch", "scalecheck-data")])
    with pytest.raises(HistoryError, match="the data branch 'scalecheck-data' is checked out"):
        store_of(repo).record(run_of("k"))


# -- committed measurement files ------------------------------------------------------------------------------------


def test_committed_files_are_read_at_an_old_commit_without_checkout(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([
        ("commit", "c1", {"bench/results.json": native("v1")}),
        ("commit", "c2", {"bench/results.json": native("v2")}),
        ("commit", "c3", {"bench/results.json": None}),
    ])
    store = store_of(repo, measurements=["bench/results.json"], kind="repo")
    assert kernels(store.read(repo.commits["c1"])) == ["v1"]
    assert kernels(store.read(repo.commits["c2"])) == ["v2"]
    assert store.read(repo.commits["c3"]) is None
    assert repo.status() == "" and repo.repo.head.commit.hexsha == repo.commits["c3"]


def test_committed_file_series_name_the_commit_and_path(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1", {"bench/results.json": native("k")})])
    run = store_of(repo, measurements=["./bench/results.json"]).read("HEAD")
    assert str(run.series[0].source) == f"{repo.commits['c1'][:7]}:bench/results.json: kernel 'k', metric 'time'"


def test_corrupt_committed_file_is_an_input_error_naming_commit_and_path(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1", {"bench/results.json": '{"scalecheck": 1,\n "parameters": [\n'})])
    with pytest.raises(InputError, match=rf"^{repo.commits['c1'][:7]}:bench/results\.json:3: not valid JSON"):
        store_of(repo, measurements=["bench/results.json"]).read("HEAD")


def test_committed_files_that_merge_past_the_cell_limit_are_refused(git_repo: MakeRepo, store_of,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    repo = git_repo([("commit", "c1", {"bench/a.json": native("solve"), "bench/b.json": native("solve")})])
    monkeypatch.setattr("scalecheck.formats.limits.MAX_CELLS", 8)  # 6 cells each, 12 merged
    with pytest.raises(InputError, match=r"merged with the other files, kernel 'solve', metric 'time' has "):
        store_of(repo, measurements=["bench/*.json"]).read("HEAD")


def test_a_committed_file_past_the_size_limit_is_refused_before_it_is_read(git_repo: MakeRepo, store_of,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    repo = git_repo([("commit", "c1", {"bench/results.json": native("solve") + " " * 100})])
    monkeypatch.setattr("scalecheck.history.store.MAX_ARCHIVE_BYTES", 100)
    with pytest.raises(InputError, match=rf"^{repo.commits['c1'][:7]}:bench/results\.json: the file is larger than "):
        store_of(repo, measurements=["bench/results.json"]).read("HEAD")


@pytest.mark.parametrize("data, message", [
    ("kernel,p,value\nl\xf6sen,2,1.0\n".encode("latin-1"), r"bench/r\.csv:2: the file is not UTF-8 text"),
    (b" \n", r"bench/r\.csv: the file is empty"),
    (b"kernel,p,value\nsort,2,n/a\n", r"bench/r\.csv:2: the measured value must be a number"),
])
def test_committed_files_are_read_in_memory_with_the_errors_of_a_file(
        git_repo: MakeRepo, store_of, monkeypatch: pytest.MonkeyPatch, data: bytes, message: str) -> None:
    repo = git_repo([("commit", "c1")])
    (repo.path / "bench").mkdir()
    (repo.path / "bench" / "r.csv").write_bytes(data)
    repo.apply([("commit", "c2")])
    store = store_of(repo, measurements=["bench/*.csv"], kind="repo")
    monkeypatch.setattr(tempfile, "mkdtemp", _no_temporary_files)  # what TemporaryDirectory calls
    monkeypatch.setattr(tempfile, "mkstemp", _no_temporary_files)
    with pytest.raises(InputError, match=rf"^{repo.commits['c2'][:7]}:{message}") as info:
        store.read("HEAD")
    assert info.value.fix


def _no_temporary_files(*args: object, **kwargs: object) -> str:
    raise AssertionError("a committed file must be read in memory")


@pytest.mark.parametrize("patterns, expected", [
    (["bench/*.json"], ["a"]),  # '*' stays within one folder, as in the working tree
    (["bench/*/*.json"], ["deep"]),
    (["bench/a.json"], ["a"]),
    (["**/results.jsonl"], ["other", "top"]),  # '**/' also matches no folder
    (["bench/**/*.json"], ["a", "deep"]),
    (["results.jsonl", "bench/a.json"], ["a", "top"]),
    (["bench/?.json"], ["a"]),
    (["nowhere/*.json", "bench/missing.json"], None),
])
def test_measurement_globs_match_paths_in_the_commits_tree(git_repo: MakeRepo, store_of, patterns: list[str],
                                                           expected: list[str] | None) -> None:
    jsonl = '{"kernel": "%s", "point": {"n": 8}, "values": [1.0]}\n'
    repo = git_repo([("commit", "c1", {
        "bench/a.json": native("a"),
        "bench/sub/deep.json": native("deep"),
        "bench/notes.txt": "not measurements\n",
        "results.jsonl": jsonl % "top",
        "other/results.jsonl": jsonl % "other",
    })])
    run = store_of(repo, measurements=patterns, kind="repo").read("HEAD")
    assert (run and kernels(run)) == expected


# -- which store is read ----------------------------------------------------------------------------------------


@pytest.fixture
def both_stores(git_repo: MakeRepo, store_of) -> GitRepo:
    """c1 has a recorded run and a committed file; c2 has a committed file only."""
    repo = git_repo([
        ("commit", "c1", {"bench/results.json": native("committed-1")}),
        ("commit", "c2", {"bench/results.json": native("committed-2")}),
    ])
    store_of(repo).record(run_of("recorded-1"), "HEAD~1")
    return repo


@pytest.mark.parametrize("kind, at_c1, at_c2", [
    ("auto", ["recorded-1"], ["committed-2"]),  # the data branch first, then the committed files
    ("branch", ["recorded-1"], None),
    ("repo", ["committed-1"], ["committed-2"]),
])
def test_kind_chooses_the_store(both_stores: GitRepo, store_of, kind: str, at_c1: list[str] | None,
                                at_c2: list[str] | None) -> None:
    store = store_of(both_stores, measurements=["bench/*.json"], kind=kind)
    c1, c2 = both_stores.commits["c1"], both_stores.commits["c2"]
    assert [kernels(store.read(c1)), store.read(c2) and kernels(store.read(c2))] == [at_c1, at_c2]


def test_repo_kind_needs_measurement_files_and_cannot_record(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1")])
    with pytest.raises(ConfigError, match="none are configured"):
        store_of(repo, kind="repo")
    with pytest.raises(ConfigError, match="would never be read"):
        store_of(repo, kind="repo", measurements=["bench/*.json"]).record(run_of("k"))


@pytest.mark.parametrize("options, message", [
    ({"kind": "files"}, "unknown history store 'files'"),
    ({"data_branch": "bad..name"}, "'bad..name' is not a valid branch name"),
    ({"data_branch": "-f"}, "'-f' is not a valid branch name"),
])
def test_bad_store_settings_are_config_errors(git_repo: MakeRepo, store_of, options: dict[str, str],
                                             message: str) -> None:
    repo = git_repo([("commit", "c1")])
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        store_of(repo, **options)
    assert info.value.fix


# -- refs -----------------------------------------------------------------------------------------------------------


def test_not_a_git_repository(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match=rf"^{re.escape(str(tmp_path))}: not inside a git repository") as info:
        Store(tmp_path)
    assert "--baseline FILE" in str(info.value.fix)


def test_store_finds_the_repository_from_a_subdirectory(git_repo: MakeRepo) -> None:
    repo = git_repo([("commit", "c1", {"src/deep/a.py": ""})])
    store = Store(repo.path / "src" / "deep")
    try:
        assert store.resolve("main") == repo.commits["c1"]
    finally:
        store.close()


def test_resolve_accepts_branches_tags_and_expressions(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1"), ("commit", "c2")])
    repo.repo.create_tag("v1", ref=repo.commits["c1"], message="annotated")
    store = store_of(repo)
    assert store.resolve("v1") == repo.commits["c1"]  # peeled to the commit
    assert store.resolve("main~1") == repo.commits["c1"]
    assert store.resolve(repo.commits["c2"][:8]) == repo.commits["c2"]


def test_unknown_ref_is_a_history_error_naming_it(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1")])
    with pytest.raises(HistoryError, match="unknown git ref 'origin/mian'") as info:
        store_of(repo).resolve("origin/mian")
    assert "git rev-parse --verify origin/mian" in str(info.value.fix)


@pytest.mark.parametrize("ref", ["-x", "--output=/tmp/scalecheck-pwned", "", "main\nHEAD"])
def test_option_like_or_empty_refs_are_refused(git_repo: MakeRepo, store_of, ref: str) -> None:
    repo = git_repo([("commit", "c1")])
    store = store_of(repo)
    with pytest.raises(HistoryError, match="refusing the git ref"):
        store.resolve(ref)
    with pytest.raises(HistoryError, match="refusing the git ref"):
        store.baseline(ref)


def test_default_base_follows_github_base_ref(git_repo: MakeRepo, store_of, tmp_path: Path) -> None:
    origin = git_repo([("commit", "c1")], name="origin")
    clone = git.Repo.clone_from(str(origin.path), str(tmp_path / "clone"))
    try:
        store = Store(tmp_path / "clone")
        assert store.default_base({"GITHUB_BASE_REF": "main"}) == "origin/main"
        assert store.default_base({"GITHUB_BASE_REF": "release"}) == "release"  # no such remote-tracking ref
        assert store.default_base({"GITHUB_BASE_REF": ""}) is None
        assert store.default_base({}) is None
        store.close()
    finally:
        clone.close()


def test_describe_gives_short_sha_subject_and_date(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "Speed up the sort\n\nLonger body.")])
    text = store_of(repo).describe("HEAD")
    sha = repo.repo.head.commit.hexsha
    assert re.fullmatch(rf"{sha[:7]} Speed up the sort \(\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d\)", text)


# -- baseline -------------------------------------------------------------------------------------------------------


def test_baseline_is_the_merge_base_of_a_feature_branch(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([
        ("commit", "c1"), ("branch", "feature"), ("commit", "f1"), ("commit", "f2"),
        ("checkout", "main"), ("commit", "c2"), ("checkout", "feature"),
    ])
    store = store_of(repo)
    store.record(run_of("base"), "main~1")
    store.record(run_of("newer"), "main")
    store.record(run_of("feature"), "feature")
    sha, explanation = store.baseline("main")
    assert sha == repo.commits["c1"]
    assert explanation == f"commit {sha[:7]} (merge-base of HEAD and main)"


def test_baseline_walks_back_the_first_parent_line_only(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([
        ("commit", "c1"), ("branch", "side"), ("commit", "s1"), ("checkout", "main"), ("commit", "c2"),
        ("merge", "side", "m"), ("commit", "c3"), ("branch", "feature"), ("commit", "f1"),
    ])
    store = store_of(repo)
    store.record(run_of("old"), repo.commits["c1"])
    store.record(run_of("side"), repo.commits["s1"])  # reachable from main only through the merge's second parent
    sha, explanation = store.baseline("main", head="feature")
    assert sha == repo.commits["c1"]
    assert explanation == f"commit {sha[:7]} (merge-base of feature and main, 3 commits back on the " \
                          "first-parent line)"


def test_baseline_finds_committed_files_too(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([
        ("commit", "c1", {"bench/r.json": native("k")}), ("commit", "c2", {"bench/r.json": None}),
        ("branch", "feature"), ("commit", "f1"),
    ])
    sha, explanation = store_of(repo, measurements=["bench/*.json"]).baseline("main")
    assert sha == repo.commits["c1"]
    assert explanation.endswith("1 commit back on the first-parent line)")


def test_missing_baseline_is_an_error_never_a_silent_pass(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1"), ("commit", "c2"), ("commit", "c3"), ("branch", "feature"), ("commit", "f1")])
    store = store_of(repo, measurements=["bench/*.json"])
    with pytest.raises(HistoryError) as info:
        store.baseline("main")
    short = repo.commits["c3"][:7]
    assert info.value.problem == (f"no measurements recorded at {short} or its 2 first-parent ancestors "
                                  "(store: data branch 'scalecheck-data' and files bench/*.json)")
    assert f"scalecheck record FILE --commit {short}" in str(info.value.fix)
    assert "--baseline FILE" in str(info.value.fix)
    assert "git fetch origin scalecheck-data" in str(info.value.fix)  # the branch does not exist anywhere


def test_baseline_looks_at_most_max_walk_commits(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1"), ("commit", "c2"), ("commit", "c3")])
    store = store_of(repo)
    store.record(run_of("k"), repo.commits["c1"])
    assert store.baseline("main", max_walk=3)[0] == repo.commits["c1"]
    with pytest.raises(HistoryError, match=rf"at {repo.commits['c3'][:7]} or its 1 first-parent ancestor "):
        store.baseline("main", max_walk=2)
    with pytest.raises(HistoryError, match=rf"recorded at {repo.commits['c3'][:7]} \(store"):
        store.baseline("main", max_walk=1)


def test_unrelated_histories_have_no_baseline(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1")])
    repo.repo.git.checkout("-q", "--orphan", "other")
    repo.apply([("commit", "o1")])
    with pytest.raises(HistoryError, match="HEAD and main have no common history") as info:
        store_of(repo).baseline("main")
    assert "fetch-depth: 0" in str(info.value.fix)


def test_shallow_clone_without_merge_base_says_to_fetch_the_history(git_repo: MakeRepo, store_of,
                                                                   tmp_path: Path) -> None:
    origin = git_repo([
        ("commit", "c1"), ("commit", "c2"), ("branch", "feature"), ("commit", "f1"), ("checkout", "main"),
        ("commit", "c3"), ("checkout", "feature"),
    ], name="origin")
    clone = git.Repo.clone_from(f"file://{origin.path}", str(tmp_path / "clone"), depth=1, no_single_branch=True)
    try:
        store = Store(tmp_path / "clone")
        with pytest.raises(HistoryError, match="shallow clone") as info:
            store.baseline("origin/main")
        assert "fetch-depth: 0" in str(info.value.fix)
        store.close()
    finally:
        clone.close()


def test_commits_with_measurements_newest_first_on_the_first_parent_line(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([
        ("commit", "c1"), ("branch", "side"), ("commit", "s1"), ("checkout", "main"), ("commit", "c2"),
        ("merge", "side", "m"), ("commit", "c3"), ("commit", "c4"),
    ])
    store = store_of(repo)
    for label in ("c1", "s1", "c2", "c4"):
        store.record(run_of(label), repo.commits[label])
    found = store.commits_with_measurements()
    assert [(sha, kernels(run)) for sha, run in found] == [
        (repo.commits["c4"], ["c4"]), (repo.commits["c2"], ["c2"]), (repo.commits["c1"], ["c1"])]
    assert [sha for sha, _ in store.commits_with_measurements("main~1", limit=1)] == [repo.commits["c2"]]
    assert [sha for sha, _ in store.commits_with_measurements(max_walk=2)] == [repo.commits["c4"]]  # c4, c3


def test_recorded_file_is_native_json_with_the_commit_in_meta(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1")])
    store_of(repo).record(run_of("k"))
    blob = repo.repo.commit(DATA).tree / f"{repo.commits['c1']}.json"
    doc = json.loads(blob.data_stream.read())
    assert doc["scalecheck"] == 1 and doc["meta"] == {"commit": repo.commits["c1"]}


def test_record_fast_forwards_a_local_data_branch_that_is_behind_origin(git_repo: MakeRepo, store_of,
                                                                       tmp_path: Path) -> None:
    origin = git_repo([("commit", "c1"), ("commit", "c2")], name="origin")
    origin_store = store_of(origin)
    first = origin_store.record(run_of("first"), "HEAD~1")
    clone = git.Repo.clone_from(str(origin.path), str(tmp_path / "clone"))
    try:
        clone.git.branch("scalecheck-data", "origin/scalecheck-data")  # a local copy, then origin moves on
        second = origin_store.record(run_of("second"), "HEAD")
        clone.git.fetch("-q", "origin")
        store = Store(tmp_path / "clone")
        assert kernels(store.read(origin.commits["c2"])) == ["second"]  # a file only origin has is found there
        store.record(run_of("third"), origin.commits["c2"])
        new = clone.commit("scalecheck-data")
        assert new.parents[0].hexsha == second and clone.is_ancestor(first, new.hexsha)
        assert kernels(store.read(origin.commits["c1"])) == ["first"]
        assert kernels(store.read(origin.commits["c2"])) == ["third"]
        store.close()
    finally:
        clone.close()


# -- a data-branch entry that is not a file is corrupt, never skipped --------------------------------------------

NOT_A_FILE = {"tree": ("040000", "a folder (git tree)"), "submodule": ("160000", "a submodule (git commit link)"),
              "symlink": ("120000", "a symbolic link")}


@pytest.mark.parametrize("kind", NOT_A_FILE)
def test_a_data_branch_entry_that_is_not_a_file_is_a_history_error(git_repo: MakeRepo, store_of, kind: str) -> None:
    repo = git_repo([("commit", "c0"), ("commit", "c1")])
    store = store_of(repo)
    store.record(run_of("older"), repo.commits["c0"])  # where a skipped entry would silently take the baseline
    sha, git_ = repo.commits["c1"], repo.repo.git
    mode, what = NOT_A_FILE[kind]
    target = {"040000": lambda: git_.mktree(istream=tempfile.TemporaryFile()),  # an empty folder
              "160000": lambda: sha,  # a submodule at some commit
              "120000": lambda: git_.hash_object("-w", "--stdin", istream=_stream(b"elsewhere.json"))}[mode]()
    kind_word = {"040000": "tree", "160000": "commit", "120000": "blob"}[mode]
    entries = git_.ls_tree("-z", DATA).rstrip("\0") + f"\0{mode} {kind_word} {target}\t{sha}.json\0"
    tree = git_.mktree("-z", istream=_stream(entries.encode()))
    git_.update_ref(DATA, git_.commit_tree(tree, "-p", DATA, "-m", "corrupt"))

    with pytest.raises(HistoryError) as info:
        store_of(repo).baseline("HEAD")

    assert str(info.value) == (
        f"scalecheck-data:{sha}.json: the data branch 'scalecheck-data' holds {what} named {sha}.json, not a "
        f"measurement file; fix: replace it by recording that commit again (`scalecheck record FILE --commit "
        f"{sha[:7]}`, then `git push origin scalecheck-data` to share it), or remove the entry from the branch")
    store_of(repo).record(run_of("again"), sha)  # the fix works
    assert kernels(store_of(repo).read(sha)) == ["again"]


def test_an_executable_data_file_is_read(git_repo: MakeRepo, store_of) -> None:
    repo = git_repo([("commit", "c1")])
    sha, git_ = repo.commits["c1"], repo.repo.git
    blob = git_.hash_object("-w", "--stdin", istream=_stream(native("k").encode()))
    tree = git_.mktree("-z", istream=_stream(f"100755 blob {blob}\t{sha}.json\0".encode()))
    git_.update_ref(DATA, git_.commit_tree(tree, "-m", "data"))
    assert kernels(store_of(repo).read(sha)) == ["k"]


def _stream(data: bytes) -> tempfile._TemporaryFileWrapper:  # type: ignore[type-arg]
    stream = tempfile.TemporaryFile()
    stream.write(data)
    stream.seek(0)
    return stream  # type: ignore[return-value]


# -- records racing for the data branch all land -------------------------------------------------------------------

RACERS = 20


def _record_in_child(start: object, folder: str, sha: str) -> None:
    """A forked process: wait for the others, then `scalecheck record` one commit; its exit status is record's."""
    import os
    import sys

    from scalecheck.cli import main

    os.chdir(folder)
    start.wait()  # type: ignore[attr-defined]
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the process ends right after
    sys.exit(main(["record", "run.json", "--commit", sha]))


@pytest.mark.wall_clock  # how often the records collide depends on timing
@pytest.mark.skipif(sys.platform == "win32", reason="forks the test process")
def test_records_racing_for_the_data_branch_all_land(git_repo: MakeRepo) -> None:
    import multiprocessing

    import scalecheck.api  # noqa: F401 - imported before the fork, so that every child starts at once

    repo = git_repo([("commit", f"c{i}") for i in range(RACERS)])
    (repo.path / "run.json").write_text(native("k"), encoding="utf-8")
    context = multiprocessing.get_context("fork")
    start = context.Barrier(RACERS)
    children = [context.Process(target=_record_in_child, args=(start, str(repo.path), repo.commits[f"c{i}"]))
                for i in range(RACERS)]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=60)

    assert [child.exitcode for child in children] == [0] * RACERS
    recorded = {blob.name for blob in repo.repo.commit(DATA).tree.blobs}
    assert recorded == {f"{repo.commits[f'c{i}']}.json" for i in range(RACERS)}
    assert int(repo.repo.git.rev_list("--count", DATA)) == RACERS  # one data commit each, none lost


def test_a_record_whose_branch_keeps_moving_gives_up_after_its_tries(git_repo: MakeRepo, store_of,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import scalecheck.history.store as store_module

    repo = git_repo([("commit", "c1"), ("commit", "c2")])
    store = store_of(repo)
    store.record(run_of("first"), "HEAD~1")
    build = Store._data_commit
    sleeps: list[float] = []

    def build_then_lose_the_race(self: Store, *args: object) -> str:
        new = build(self, *args)  # type: ignore[arg-type]
        tip = repo.repo.git.rev_parse(DATA)
        repo.repo.git.update_ref(DATA, repo.repo.git.commit_tree(f"{tip}^{{tree}}", "-p", tip, "-m", "other"))
        return new

    monkeypatch.setattr(Store, "_data_commit", build_then_lose_the_race)
    monkeypatch.setattr(store_module.time, "sleep", sleeps.append)
    with pytest.raises(HistoryError) as info:
        store.record(run_of("second"))

    tries = store_module.RECORD_TRIES
    assert str(info.value) == (
        f"{repo.path}: the data branch 'scalecheck-data' kept moving: other records updated it {tries} times in "
        f"{tries} tries to record commit {repo.commits['c2'][:7]}; fix: run scalecheck record again when fewer "
        "records run at the same time")
    assert len(sleeps) == tries - 1 and all(0 <= s <= 1.0 for s in sleeps)
    assert max(sleeps[:3]) <= 0.08  # short waits first, growing with each lost race


def test_a_stale_lock_on_the_data_branch_is_named_with_its_fix(git_repo: MakeRepo, store_of,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import scalecheck.history.store as store_module

    repo = git_repo([("commit", "c1")])
    store = store_of(repo)
    store.record(run_of("first"))
    lock = repo.path / ".git" / "refs" / "heads" / "scalecheck-data.lock"
    lock.touch()  # what a git process killed while it updated the branch leaves behind
    monkeypatch.setattr(store_module.time, "sleep", lambda seconds: None)

    with pytest.raises(HistoryError) as info:
        store.record(run_of("second"))

    assert str(info.value) == (
        f"{repo.path}: the data branch 'scalecheck-data' stays locked by {lock}: a git process is updating it, or "
        f"one that was stopped left the lock behind; fix: if no git process runs in this repository, delete {lock} "
        "and record again")


def test_a_linked_worktree_of_a_shallow_clone_is_known_to_be_shallow(git_repo: MakeRepo, tmp_path: Path) -> None:
    origin = git_repo([("commit", "c1"), ("commit", "c2"), ("commit", "c3")], name="origin")
    clone = git.Repo.clone_from(f"file://{origin.path}", str(tmp_path / "clone"), depth=1)
    try:
        clone.git.worktree("add", "--detach", str(tmp_path / "linked"), "HEAD")
        store = Store(tmp_path / "linked")  # its git_dir is .git/worktrees/linked; `shallow` is in .git
        with pytest.raises(HistoryError) as info:
            store.baseline("HEAD", max_walk=5)
        store.close()
    finally:
        clone.close()
    assert "the walk stopped at the end of this shallow clone" in str(info.value.fix)
