"""`scalecheck check`, `record` and `history` end to end through main(argv): measurement files written from planted
functions with a seeded generator, real git repositories in tmp_path, exit codes, text and JSON reports, and the
one-line errors of everything a user can get wrong."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import git
import numpy as np
import pytest

from scalecheck.cli import OK, REGRESSION, USAGE_ERROR, main

from .history.conftest import GitRepo, git_repo  # noqa: F401 - git_repo is the fixture

P = (2, 4, 8, 16, 32, 64, 128, 256)
REPETITIONS = 5
NOISE = 0.05  # multiplicative Gaussian noise of every value
Function = Callable[[float], float]
KERNELS: dict[str, Function] = {
    "main->solve": lambda p: 0.5 + 0.1 * p,
    "main->io": lambda p: 1.0 + 0.4 * np.log2(p),
    "main->halo": lambda p: 0.2 + 0.02 * p * np.log2(p),
}
# main->solve grows as p^(3/2) instead of p; both give 0.7 at p = 2
WORSE = {**KERNELS, "main->solve": lambda p: 0.5 + 0.1 * p**1.5 / 2**0.5}
# the seeds of the base and the candidate measurements (fixed: a different seed may let the model search pick a
# neighbouring class such as p^(3/4) * log2(p), which 5% noise on 8 points allows)
BASE_SEED, CAND_SEED, AGAIN_SEED = 1, 101, 301
FAST = ("--bootstrap", "20")  # the least resampling the settings allow; one test keeps the default (200)

MakeRepo = Callable[..., GitRepo]


def measurements(functions: Mapping[str, Function], seed: int, *, scale: float = 1.0,
                 parameter: str = "p") -> dict[str, object]:
    """A native scalecheck JSON document: every kernel at P x REPETITIONS, values f(p) * scale * (1 + 5% N(0, 1))."""
    rng = np.random.default_rng(seed)
    rows = [{"kernel": kernel, "metric": "time", "unit": "s", "point": {parameter: p},
             "values": [float(v) for v in scale * f(float(p)) * (1 + NOISE * rng.standard_normal(REPETITIONS))]}
            for kernel, f in functions.items() for p in P]
    return {"scalecheck": 1, "parameters": [parameter], "measurements": rows}


def write_run(path: Path, functions: Mapping[str, Function] = KERNELS, seed: int = BASE_SEED, **options: object
              ) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = measurements(functions, seed, **options)  # type: ignore[arg-type]
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return path


def text_of(functions: Mapping[str, Function] = KERNELS, seed: int = BASE_SEED) -> str:
    return json.dumps(measurements(functions, seed), indent=1) + "\n"


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """main([...]) and what it printed: (exit status, stdout, stderr)."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(result: tuple[int, str, str]) -> str:
    """The error line of a run that must fail as a user error: exit 2, 'scalecheck: error: ...', a fix line, no
    traceback and no report. Returns the line without its prefix and its fix."""
    code, out, err = result
    assert code == USAGE_ERROR, (out, err)
    assert out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("scalecheck: error: ")
    head, _, fix = lines[0].rpartition("; fix: ")
    assert head and fix, err
    return head.removeprefix("scalecheck: error: ")


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of the suite inside GitHub Actions must not hand the tests a default baseline."""
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder outside any git repository holding base.json, cand.json (main->solve p -> p^(3/2)) and again.json
    (the base's functions measured again); the working folder, so that no settings file of the project is read."""
    folder = tmp_path / "files"
    write_run(folder / "base.json", KERNELS, BASE_SEED)
    write_run(folder / "cand.json", WORSE, CAND_SEED)
    write_run(folder / "again.json", KERNELS, AGAIN_SEED)
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def feature(git_repo: MakeRepo) -> GitRepo:
    """main: c1, c2; branch feature from c2, with its commit f1 checked out."""
    return git_repo([("commit", "c1", {"src/solve.c": "int n = 1;\n"}),
                     ("commit", "c2", {"src/solve.c": "int n = 2;\n"}),
                     ("branch", "feature"), ("commit", "f1", {"src/solve.c": "int n = 3;\n"})])


def state(repo: GitRepo) -> tuple[str, str, str]:
    """What record must not change: the status of work tree and index, the checked-out branch, HEAD."""
    return repo.status(), repo.branch(), repo.repo.head.commit.hexsha


# -- measurement files only --------------------------------------------------------------------------------------


def test_check_fails_on_growth_regression_with_default_resampling(files: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "check", "cand.json", "--baseline", "base.json")

    assert code == REGRESSION, err
    lines = out.splitlines()
    assert lines[0].startswith("FAIL")
    assert "baseline:  file base.json" in lines and "candidate: cand.json" in lines
    growth = next(line for line in lines if line.startswith("error ") and " growth " in line)
    assert growth.split()[:6] == ["error", "growth", "main->solve", "time", "p", "p^(3/2)"]
    assert "grows as p^(3/2), the baseline as p" in out
    assert not any(kernel in line for line in lines if line.startswith(("error", "warning"))
                   for kernel in ("main->io", "main->halo"))
    assert "200 bootstrap resamples per side, seed 0" in out


@pytest.mark.parametrize("candidate", ["base.json", "again.json"], ids=["same-file", "measured-again"])
def test_check_passes_without_a_change(files: Path, capsys: pytest.CaptureFixture[str], candidate: str) -> None:
    code, out, _ = cli(capsys, "check", candidate, "--baseline", "base.json", *FAST)

    assert code == OK
    assert out.startswith("PASS: no new scalability problem\n")
    assert "3 kernel(s): 3 compared" in out


def test_check_json_report_contract_written_atomically(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = files / "out"
    out_dir.mkdir()
    report = out_dir / "check.json"

    code, out, _ = cli(capsys, "check", "cand.json", "--baseline", "base.json", *FAST, "--json", report)

    assert code == REGRESSION and out.startswith("FAIL")
    assert list(out_dir.iterdir()) == [report]  # no temp file left behind
    doc = json.loads(report.read_text(encoding="utf-8"))
    assert doc["scalecheck"] == 1 and doc["verdict"] == "fail"
    assert doc["baseline"] == "file base.json" and doc["candidate"] == "cand.json"
    assert doc["target"] == {"p": 1024.0}
    assert doc["settings"]["bootstrap"] == 20 and doc["settings"]["seed"] == 0
    assert doc["settings"]["fail_on"] == ["growth", "prediction", "expectation"]
    assert doc["findings"], "a failing verdict has findings"
    for finding in doc["findings"]:
        assert {"kind", "severity", "kernel", "metric", "message"} <= set(finding)
    growth = next(f for f in doc["findings"] if f["kind"] == "growth")
    assert (growth["kernel"], growth["metric"], growth["severity"]) == ("main->solve", "time", "error")
    assert (growth["baseline_growth"], growth["candidate_growth"]) == ("p", "p^(3/2)")
    assert {f["kernel"] for f in doc["findings"]} == {"main->solve"}
    kernels = {(k["kernel"], k["metric"]): k for k in doc["kernels"]}
    assert set(kernels) == {(name, "time") for name in KERNELS}
    solve = kernels["main->solve", "time"]
    assert solve["status"] == "compared" and solve["unit"] == "s"
    assert (solve["baseline"]["growth"], solve["candidate"]["growth"]) == ("p", "p^(3/2)")


def test_check_json_is_reproducible_with_the_same_seed(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    texts = []
    for name in ("first.json", "second.json"):
        assert cli(capsys, "check", "cand.json", "--baseline", "base.json", *FAST, "--seed", "7",
                   "--json", name)[0] == REGRESSION
        texts.append((files / name).read_text(encoding="utf-8"))

    assert texts[0] == texts[1]
    assert json.loads(texts[0])["settings"]["seed"] == 7


def test_uniform_slowdown_with_unchanged_growth_passes(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(files / "slower.json", KERNELS, CAND_SEED, scale=1.05)

    code, out, _ = cli(capsys, "check", "slower.json", "--baseline", "base.json", *FAST)

    assert code == OK and out.startswith("PASS")
    assert "growth " not in out


# -- expectations and what fails -----------------------------------------------------------------------------------


def test_expect_flag_violated_fails_with_an_expectation_finding(files: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "check", "again.json", "--baseline", "base.json", *FAST, "--expect", "main->halo=p",
                       "--json", "check.json")

    assert code == REGRESSION
    assert out.startswith("FAIL: 1 kernel(s) with a new scalability problem (expectation 1)")
    assert "grows as p * log2(p), faster than the expected p (pattern 'main->halo')" in out
    [finding] = json.loads((files / "check.json").read_text())["findings"]
    assert (finding["kind"], finding["kernel"], finding["severity"]) == ("expectation", "main->halo", "error")


def test_configured_expectations_pass_when_kernels_grow_slower(files: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (files / "pyproject.toml").write_text('[tool.scalecheck.gate]\nbootstrap = 20\n\n'
                                          '[tool.scalecheck.expectations]\n"main->*" = "p^2"\n', encoding="utf-8")

    code, out, _ = cli(capsys, "check", "again.json", "--baseline", "base.json", "--json", "check.json")

    assert code == OK and out.startswith("PASS")
    doc = json.loads((files / "check.json").read_text())
    assert doc["settings"]["bootstrap"] == 20  # the file's setting was read
    assert {k["kernel"]: k["expectation"] for k in doc["kernels"]} == dict.fromkeys(KERNELS, "p^2")


def test_expect_flag_replaces_configured_expectations(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "pyproject.toml").write_text('[tool.scalecheck.expectations]\n"main->*" = "p^2"\n', encoding="utf-8")

    code, out, _ = cli(capsys, "check", "again.json", "--baseline", "base.json", *FAST, "--expect", "main->io=1")

    assert code == REGRESSION
    assert "(pattern 'main->io')" in out and "pattern 'main->*'" not in out


def test_new_kernel_violating_an_expectation_fails(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(files / "new.json", {**KERNELS, "main->setup": lambda p: 0.1 + 0.01 * p**2}, CAND_SEED)
    (files / "pyproject.toml").write_text('[tool.scalecheck.expectations]\n"main->setup" = "p log p"\n',
                                          encoding="utf-8")

    code, out, _ = cli(capsys, "check", "new.json", "--baseline", "base.json", *FAST, "--json", "check.json")

    assert code == REGRESSION and out.startswith("FAIL")
    doc = json.loads((files / "check.json").read_text())
    assert [(f["kind"], f["kernel"]) for f in doc["findings"] if f["severity"] == "error"] == [
        ("expectation", "main->setup")]
    setup = next(k for k in doc["kernels"] if k["kernel"] == "main->setup")
    assert setup["status"] == "new" and setup["baseline"] is None
    assert "1 new" in out


def test_fail_on_nothing_reports_the_regression_as_a_warning(files: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "check", "cand.json", "--baseline", "base.json", *FAST, "--fail-on", "")

    assert code == OK
    assert out.startswith("PASS: no new scalability problem (")
    growth = next(line for line in out.splitlines() if " growth " in line and "main->solve" in line)
    assert growth.split()[:3] == ["warning", "growth", "main->solve"]
    assert "failing kinds: none" in out


def test_fail_on_other_kinds_lets_growth_pass(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "check", "cand.json", "--baseline", "base.json", *FAST, "--fail-on", "expectation")

    assert code == OK and "failing kinds: expectation" in out


# -- git: the data branch ---------------------------------------------------------------------------------------------


def test_record_then_check_against_a_branch(feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    base = write_run(tmp_path / "files" / "base.json", KERNELS, BASE_SEED)
    cand = write_run(tmp_path / "files" / "cand.json", WORSE, CAND_SEED)
    (feature.path / "src" / "solve.c").write_text("int n = 4;  /* not committed */\n")
    monkeypatch.chdir(feature.path)
    before = state(feature)
    c2 = feature.commits["c2"]

    code, out, err = cli(capsys, "record", base, "--commit", c2)

    assert code == OK, err
    assert state(feature) == before  # work tree, index, branch and HEAD as they were
    data = feature.repo.git.rev_parse("scalecheck-data")
    assert out == (f"recorded 3 series for commit {c2[:7]} on branch 'scalecheck-data' (data commit {data[:7]}); "
                   "share it with: git push origin scalecheck-data\n")
    assert feature.repo.git.ls_tree("--name-only", "scalecheck-data").split() == [f"{c2}.json"]

    code, out, err = cli(capsys, "check", cand, "--baseline", "main", *FAST)

    assert code == REGRESSION, err
    assert out.startswith("FAIL")
    baseline = next(line for line in out.splitlines() if line.startswith("baseline:"))
    assert f"{c2[:7]} (merge-base of HEAD and main)" in baseline
    assert state(feature) == before


def test_git_baseline_line_is_not_labelled_twice(feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    assert cli(capsys, "record", write_run(tmp_path / "base.json"), "--commit", "main")[0] == OK

    code, out, _ = cli(capsys, "check", write_run(tmp_path / "again.json", seed=AGAIN_SEED), "--baseline", "main",
                       *FAST, "--json", tmp_path / "check.json")

    assert code == OK
    assert "baseline:  baseline:" not in out
    assert not json.loads((tmp_path / "check.json").read_text())["baseline"].startswith("baseline:")


def test_check_walks_back_to_an_older_measured_commit(feature: GitRepo, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    c1 = feature.commits["c1"]
    assert cli(capsys, "record", write_run(tmp_path / "base.json"), "--commit", c1)[0] == OK

    code, out, err = cli(capsys, "check", write_run(tmp_path / "cand.json", WORSE, CAND_SEED), "--baseline", "main",
                         *FAST)

    assert code == REGRESSION, err
    baseline = next(line for line in out.splitlines() if line.startswith("baseline:"))
    assert f"{c1[:7]} (merge-base of HEAD and main, 1 commit back on the first-parent line)" in baseline


def test_github_base_ref_is_the_default_baseline(feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    assert cli(capsys, "record", write_run(tmp_path / "base.json"), "--commit", "main")[0] == OK
    monkeypatch.setenv("GITHUB_BASE_REF", "main")

    code, out, err = cli(capsys, "check", write_run(tmp_path / "cand.json", WORSE, CAND_SEED), *FAST)

    assert code == REGRESSION, err
    assert f"{feature.commits['c2'][:7]} (merge-base of HEAD and main)" in out


def test_fresh_clone_in_actions_uses_origin_base_and_the_pushed_data_branch(
        feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    assert cli(capsys, "record", write_run(tmp_path / "base.json"), "--commit", "main")[0] == OK
    clone = git.Repo.clone_from(feature.path, tmp_path / "clone", branch="feature")
    clone.close()
    monkeypatch.chdir(tmp_path / "clone")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")

    code, out, err = cli(capsys, "check", write_run(tmp_path / "cand.json", WORSE, CAND_SEED), *FAST)

    assert code == REGRESSION, err
    assert f"{feature.commits['c2'][:7]} (merge-base of HEAD and origin/main)" in out


# -- git: measurement files committed with the code ----------------------------------------------------------------

REPO_SETTINGS = ('[tool.scalecheck]\nmeasurements = ["bench/results.json"]\nstore = "repo"\n\n'
                 '[tool.scalecheck.gate]\nbootstrap = 20\n')


@pytest.mark.parametrize("committed", [False, True], ids=["uncommitted", "committed"])
def test_repo_store_compares_the_work_tree_file_with_the_merge_base(
        git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        committed: bool) -> None:
    repo = git_repo([("commit", "c1", {"pyproject.toml": REPO_SETTINGS, "bench/results.json": text_of()}),
                     ("commit", "c2", {"src/solve.c": "int n;\n"}), ("branch", "feature")])
    worse = {"bench/results.json": text_of(WORSE, CAND_SEED)}
    if committed:
        repo.apply([("commit", "f1", worse)])
    else:
        (repo.path / "bench" / "results.json").write_text(worse["bench/results.json"], encoding="utf-8")
    monkeypatch.chdir(repo.path)

    code, out, err = cli(capsys, "check", "--baseline", "main", "--json", repo.path / "check.json")

    assert code == REGRESSION, err
    doc = json.loads((repo.path / "check.json").read_text())
    assert Path(doc["candidate"]) == repo.path / "bench" / "results.json"
    assert f"{repo.commits['c2'][:7]} (merge-base of HEAD and main)" in doc["baseline"]
    assert doc["settings"]["bootstrap"] == 20
    assert [(f["kind"], f["kernel"]) for f in doc["findings"] if f["kind"] == "growth"] == [("growth", "main->solve")]


def test_repo_store_passes_when_the_file_is_unchanged(git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo = git_repo([("commit", "c1", {"pyproject.toml": REPO_SETTINGS, "bench/results.json": text_of()}),
                     ("branch", "feature"), ("commit", "f1", {"src/solve.c": "int n;\n"})])
    monkeypatch.chdir(repo.path)

    code, out, err = cli(capsys, "check", "--baseline", "main")

    assert code == OK, err
    assert out.startswith("PASS") and f"{repo.commits['c1'][:7]} (merge-base of HEAD and main)" in out


def test_repo_store_with_settings_in_a_subfolder_run_from_below_it(git_repo: MakeRepo,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A monorepo: perf/pyproject.toml names bench/results.json relative to perf/, the store reads perf/bench/..."""
    repo = git_repo([("commit", "c1", {"perf/pyproject.toml": REPO_SETTINGS, "perf/bench/results.json": text_of(),
                                       "src/solve.c": "int n;\n"}), ("branch", "feature")])
    (repo.path / "perf" / "bench" / "results.json").write_text(text_of(WORSE, CAND_SEED), encoding="utf-8")
    (repo.path / "perf" / "out").mkdir()
    monkeypatch.chdir(repo.path / "perf" / "out")

    code, out, err = cli(capsys, "check", "--baseline", "main")

    assert code == REGRESSION, err
    head = repo.repo.head.commit.hexsha[:7]  # the candidate is the work tree on top of HEAD
    assert f"candidate: {repo.path / 'perf' / 'bench' / 'results.json'} (commit {head})" in out.splitlines()
    assert f"{repo.commits['c1'][:7]} (merge-base of HEAD and main)" in out


# -- errors: exit status 2, one line and a fix, no traceback ---------------------------------------------------------


def test_no_measurements_recorded_anywhere_passes_with_a_notice(
        feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    code, out, err = cli(capsys, "check", write_run(tmp_path / "cand.json"), "--baseline", "main",
                         "--json", tmp_path / "check.json", *FAST)
    assert (code, err) == (OK, "")
    lines = out.splitlines()
    assert lines[0] == "PASS: no new scalability problem"
    assert lines[1].startswith(f"notice: no baseline yet: no measurements recorded at {feature.commits['c2'][:7]}")
    assert "scalecheck check --same-job" in lines[1] and "missing_baseline" in lines[1]
    doc = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    assert doc["verdict"] == "pass" and doc["baseline"] == "none yet"
    assert {k["status"] for k in doc["kernels"]} == {"new"} and doc["notices"][0].startswith("no baseline yet")


def test_no_measurements_recorded_anywhere_fails_when_configured(
        feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    message = usage_error(cli(capsys, "check", write_run(tmp_path / "cand.json"), "--baseline", "main",
                              "--missing-baseline", "fail", *FAST))
    assert f"no measurements recorded at {feature.commits['c2'][:7]}" in message


def test_committed_files_are_found_at_the_baseline_without_configuration(
        git_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """No `measurements` setting: the candidate's own file, committed on main, is the baseline's."""
    def text(functions: Mapping[str, Function], seed: int) -> str:
        return json.dumps({**measurements(functions, seed), "meta": {"machine": "ci-runner"}}) + "\n"

    repo = git_repo([("commit", "c1", {"bench/results.json": text(KERNELS, BASE_SEED)}), ("branch", "feature")])
    (repo.path / "bench" / "results.json").write_text(text(WORSE, CAND_SEED), encoding="utf-8")
    monkeypatch.chdir(repo.path / "bench")
    code, out, err = cli(capsys, "check", "results.json", "--baseline", "main", *FAST)
    assert (code, err) == (REGRESSION, "")
    assert f"baseline:  commit {repo.commits['c1'][:7]} (merge-base of HEAD and main)" in out.splitlines()
    assert "error     growth      main->solve" in out and "machine:   ci-runner (both sides)" in out


def test_a_candidate_file_outside_the_repository_has_no_committed_baseline(
        feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    message = usage_error(cli(capsys, "check", write_run(tmp_path / "cand.json"), "--baseline", "main",
                              "--missing-baseline", "fail", *FAST))
    assert "(store: data branch 'scalecheck-data')" in message  # no file pattern: the file is not in the repo


def test_no_baseline_still_checks_expectations(feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    code, out, _ = cli(capsys, "check", write_run(tmp_path / "cand.json", WORSE), "--baseline", "main",
                       "--expect", "main->solve=p", *FAST)
    assert code == REGRESSION and "expectation" in out and "no baseline yet" in out


def test_unknown_baseline_ref(feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    message = usage_error(cli(capsys, "check", write_run(tmp_path / "cand.json"), "--baseline", "mian", *FAST))
    assert "unknown git ref 'mian'" in message


@pytest.mark.parametrize("ref", ["-main", "--output=/tmp/x"], ids=["dash", "option"])
def test_baseline_ref_starting_with_a_dash_is_refused(feature: GitRepo, tmp_path: Path, ref: str,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    message = usage_error(cli(capsys, "check", write_run(tmp_path / "cand.json"), f"--baseline={ref}", *FAST))
    assert f"refusing the git ref {ref!r}" in message


def test_no_baseline_given_outside_actions(feature: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    assert usage_error(cli(capsys, "check", write_run(tmp_path / "cand.json"), *FAST)) == "no baseline given"


def test_corrupt_baseline_file_names_file_and_line(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "broken.json").write_text('{"scalecheck": 1,\n "parameters": ["p"],\n "measurements": [\n  {,\n]}\n')
    message = usage_error(cli(capsys, "check", "cand.json", "--baseline", "broken.json", *FAST))
    assert message.startswith("broken.json:4: ") and "not valid JSON" in message


def test_corrupt_file_on_the_data_branch_names_branch_and_file(feature: GitRepo, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    c2 = feature.commits["c2"]
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"scalecheck": 1,\n "parameters": ["p"],\n "measurements": [ garbage\n')

    def plumbing(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(["git", *args], cwd=feature.path, input=stdin, capture_output=True, text=True,
                              check=True).stdout.strip()

    blob = plumbing("hash-object", "-w", str(garbage))
    tree = plumbing("mktree", stdin=f"100644 blob {blob}\t{c2}.json\n")
    commit = plumbing("commit-tree", tree, "-m", "corrupt measurements")
    plumbing("update-ref", "refs/heads/scalecheck-data", commit)
    monkeypatch.chdir(feature.path)

    message = usage_error(cli(capsys, "check", write_run(tmp_path / "cand.json"), "--baseline", "main", *FAST))

    assert message.startswith(f"scalecheck-data:{c2}.json:3: ") and "not valid JSON" in message


def test_parameters_differ_between_baseline_and_candidate(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(files / "n.json", KERNELS, CAND_SEED, parameter="n")
    message = usage_error(cli(capsys, "check", "n.json", "--baseline", "base.json", *FAST))
    assert message == "n.json: the candidate's parameters (n) differ from those of the baseline base.json (p)"


@pytest.mark.parametrize("settings, start", [
    ('[tool.scalecheck]\nthreshold = \nseed = 1\n', "pyproject.toml:2: not valid TOML: "),
    ('[tool.scalecheck]\nmetrics = ["time"]\n[tool.scalecheck.gate]\nthreshhold = 0.2\n',
     "pyproject.toml:4: [tool.scalecheck.gate]: unknown key 'threshhold'"),
    ('[tool.scalecheck]\nthreshold = 0.2\n', "pyproject.toml:2: [tool.scalecheck]: unknown key 'threshold'"),
    ('[tool.scalecheck.gate]\nbootstrap = 10\n', "pyproject.toml:2: [tool.scalecheck.gate] bootstrap: must be at "
                                                 "least 20, got 10"),
    ('[tool.scalecheck.expectations]\n"main->*" = "p^^2"\n', "pyproject.toml:2: [tool.scalecheck.expectations] "
                                                             '"main->*": '),
], ids=["toml-syntax", "unknown-gate-key", "gate-key-at-the-top", "bootstrap-below-20", "expectation-syntax"])
def test_bad_settings_file(files: Path, capsys: pytest.CaptureFixture[str], settings: str, start: str) -> None:
    (files / "pyproject.toml").write_text(settings, encoding="utf-8")
    message = usage_error(cli(capsys, "check", "cand.json", "--baseline", "base.json"))
    assert message.startswith(f"{files / start}"), message


@pytest.mark.parametrize("settings, fix", [
    ("[tool.scalecheck.gate]\nthreshhold = 0.2\n", "did you mean 'threshold'?"),
    ("[tool.scalecheck]\nthreshold = 0.2\n", "threshold belongs in [tool.scalecheck.gate]"),
], ids=["misspelt", "misplaced"])
def test_settings_key_errors_say_what_to_write(files: Path, capsys: pytest.CaptureFixture[str], settings: str,
                                               fix: str) -> None:
    (files / "pyproject.toml").write_text(settings, encoding="utf-8")
    result = cli(capsys, "check", "cand.json", "--baseline", "base.json")
    usage_error(result)
    assert result[2].splitlines()[0].endswith(f"; fix: {fix}")


@pytest.mark.parametrize("expect, part", [
    ("main->solve=p^^2", "--expect for 'main->solve': "),
    ("main->solve", "--expect: cannot read 'main->solve'"),
    ("main->solve=q log q", "expectation 'main->solve' = 'q log q': "),  # parses, but q is not a parameter
], ids=["bad-growth", "no-equals-sign", "unknown-parameter"])
def test_expectation_that_does_not_parse(files: Path, capsys: pytest.CaptureFixture[str], expect: str,
                                         part: str) -> None:
    message = usage_error(cli(capsys, "check", "cand.json", "--baseline", "base.json", *FAST, "--expect", expect))
    assert message.startswith(part), message


@pytest.mark.parametrize("args, part", [
    (["--bootstrap", "10"], "--bootstrap must be at least 20, got 10"),
    (["--fail-on", "growht"], "--fail-on holds unknown kind 'growht'"),
    (["--target", "n=100"], "--target names parameter 'n'"),
], ids=["bootstrap-below-20", "unknown-kind", "unknown-target-parameter"])
def test_bad_flag_values(files: Path, capsys: pytest.CaptureFixture[str], args: list[str], part: str) -> None:
    message = usage_error(cli(capsys, "check", "cand.json", "--baseline", "base.json", *args))
    assert message.startswith(part), message


def test_missing_candidate_file(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = usage_error(cli(capsys, "check", "nope.json", "--baseline", "base.json", *FAST))
    assert "nope.json" in message


def test_mistyped_baseline_file_is_reported_as_a_missing_file(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = usage_error(cli(capsys, "check", "cand.json", "--baseline", "base.jsn.json", *FAST))
    assert message == "base.jsn.json: no such file"


def test_nothing_in_common_is_an_error_not_a_pass(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(files / "renamed.json", {"other->" + name: f for name, f in KERNELS.items()}, CAND_SEED)
    message = usage_error(cli(capsys, "check", "renamed.json", "--baseline", "base.json", *FAST))
    assert message == "the candidate and the baseline (file base.json) share no (kernel, metric): nothing to compare"


def test_expectation_matching_no_kernel_is_an_error(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "check", "cand.json", "--baseline", "base.json", "--expect", "mian->*=1", *FAST)
    assert code == USAGE_ERROR
    assert "expectation 'mian->*' matches no kernel of the candidate" in err
    assert "did you mean 'main->" in err


# -- history ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def measured(git_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> GitRepo:
    """main: c1, c2 (main->solve linear) and c3 (p^(3/2)), each recorded with `scalecheck record`; cwd the repo."""
    repo = git_repo([("commit", f"c{i}", {"src/solve.c": f"int n = {i};\n"}) for i in (1, 2, 3)])
    monkeypatch.chdir(repo.path)
    for label, functions, seed in (("c1", KERNELS, BASE_SEED), ("c2", KERNELS, AGAIN_SEED), ("c3", WORSE, CAND_SEED)):
        path = write_run(tmp_path / "files" / f"{label}.json", functions, seed)
        code, out, err = cli(capsys, "record", path, "--commit", repo.commits[label] if label != "c3" else "HEAD")
        assert code == OK, err
        assert f"for commit {repo.commits[label][:7]} on branch 'scalecheck-data'" in out
    return repo


def test_history_shows_where_the_growth_changed(measured: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "history")

    assert code == OK, err
    shas = [measured.commits[f"c{i}"][:7] for i in (1, 2, 3)]
    lines = out.splitlines()
    assert lines[0] == f"3 measured commit(s), oldest first: {shas[0]} .. {shas[2]}"
    changed = lines[lines.index("growth changed:") + 1:lines.index("main->halo [time]") - 1]
    # a single fit per commit, no noise test: another kernel's class may flip at 5% noise, so only solve is pinned
    [solve_change] = [line for line in changed if line.startswith("  main->solve ")]
    assert solve_change.startswith(f"  main->solve [time]: p -> p^(3/2) at {shas[2]} c3 (")
    solve = lines[lines.index("main->solve [time]") + 1:][:3]
    assert [row.split()[:2] for row in solve] == [[shas[0], "p"], [shas[1], "p"], [shas[2], "p^(3/2)"]]


def test_history_kernel_filter_and_json(measured: GitRepo, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "history", "--kernel", "main->io")

    assert code == OK, err
    assert "main->io [time]" in out and "main->solve" not in out and "main->halo" not in out
    assert "no kernel's growth changed" in out

    code, out, err = cli(capsys, "history", "--kernel", "main->s*", "--json", tmp_path / "history.json")

    assert code == OK, err
    assert list(tmp_path.glob(".history.json*")) == []  # written atomically: no temp file left
    doc = json.loads((tmp_path / "history.json").read_text())
    assert doc["scalecheck"] == 1
    assert [c["commit"] for c in doc["commits"]] == [measured.commits[f"c{i}"] for i in (1, 2, 3)]
    assert [[k["kernel"] for k in c["kernels"]] for c in doc["commits"]] == [["main->solve"]] * 3
    assert doc["changes"] == [{"kernel": "main->solve", "metric": "time", "commit": measured.commits["c3"],
                               "before": "p", "after": "p^(3/2)"}]


def test_history_limit_and_ref(measured: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "history", "--ref", "HEAD~1", "--limit", "1")

    assert code == OK
    assert out.startswith(f"1 measured commit(s), oldest first: {measured.commits['c2'][:7]} .. ")


def test_history_without_measurements(feature: GitRepo, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(feature.path)
    message = usage_error(cli(capsys, "history"))
    assert message == "no measurements recorded on the first-parent history of 'HEAD'"


# -- record -----------------------------------------------------------------------------------------------------------


def test_record_outside_a_git_repository(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = usage_error(cli(capsys, "record", "base.json"))
    assert message == f"{files}: not inside a git repository"


def test_record_with_the_repo_store_is_refused(git_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    repo = git_repo([("commit", "c1", {"pyproject.toml": REPO_SETTINGS, "bench/results.json": text_of()})])
    monkeypatch.chdir(repo.path)
    before = state(repo)

    message = usage_error(cli(capsys, "record"))

    assert message.startswith("the history store 'repo' reads committed files")
    assert state(repo) == before


# -- help -------------------------------------------------------------------------------------------------------------


def test_check_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["check", "--help"])

    assert info.value.code == OK
    out = capsys.readouterr().out
    for text in ("--baseline", "--expect", "--fail-on", "GitHub Actions",
                 "exit status: 0 pass, 1 a new scalability problem, 2 bad input or usage"):
        assert text in out


def test_search_flags_reach_the_comparison(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "check", "cand.json", "--baseline", "base.json", "--exponents", "0,1,2",
                       "--log-exponents", "0", *FAST)
    assert code == REGRESSION
    assert "p^2" in out  # p^(3/2) is not in the search space: the growth is read as p^2
    message = usage_error(cli(capsys, "check", "cand.json", "--baseline", "base.json", "--exponents", "x", *FAST))
    assert message.startswith("--exponents")


# -- renamed kernels ------------------------------------------------------------------------------------------------

SORTS: dict[str, Function] = {"test_sort_small": lambda n: 0.2 + 0.02 * n * np.log2(n),
                              "test_hash": lambda n: 1 + 0.1 * n}
# test_sort_small renamed test_sort_tiny in the same change that made it quadratic
RENAMED: dict[str, Function] = {"test_sort_tiny": lambda n: 0.2 + 0.01 * n**2, "test_hash": SORTS["test_hash"]}


@pytest.fixture
def renamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "renamed"
    write_run(folder / "base.json", SORTS, BASE_SEED, parameter="n")
    write_run(folder / "cand.json", RENAMED, CAND_SEED, parameter="n")
    monkeypatch.chdir(folder)
    return folder


def test_a_rename_hiding_a_regression_passes_with_a_warning_naming_both(renamed: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "check", "cand.json", "--baseline", "base.json", *FAST, "--json", "check.json")

    assert code == OK
    assert out.startswith("PASS: no new scalability problem (1 finding(s) reported below)")
    row = next(line for line in out.splitlines() if " renamed " in line)
    assert row.split()[:6] == ["warning", "renamed", "test_sort_tiny", "time", "n", "*"]
    assert ("test_sort_small was renamed test_sort_tiny? it now grows as n^2, it grew as n * log2(n); predicted "
            in out)
    assert "test_sort_tiny [time]: renamed from test_sort_small? (name similarity 0.68)" in out
    [finding] = json.loads((renamed / "check.json").read_text())["findings"]
    assert (finding["kind"], finding["kernel"], finding["severity"]) == ("renamed", "test_sort_tiny", "warning")
    assert finding["evidence"]["renamed from"] == "test_sort_small"


def test_a_renamed_kernel_covered_by_an_expectation_fails(renamed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "check", "cand.json", "--baseline", "base.json", *FAST, "--expect",
                       "test_sort_*=n log n", "--json", "check.json")

    assert code == REGRESSION
    assert out.startswith("FAIL: 1 kernel(s) with a new scalability problem (expectation 1)")
    findings = json.loads((renamed / "check.json").read_text())["findings"]
    assert [(f["severity"], f["kind"], f["kernel"]) for f in findings] == [
        ("error", "expectation", "test_sort_tiny"), ("warning", "renamed", "test_sort_tiny")]


def test_a_dissimilar_new_kernel_is_not_taken_for_a_rename(renamed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(renamed / "other.json", {"test_hash": SORTS["test_hash"], "test_sort_small": SORTS["test_sort_small"],
                                       "build_index": RENAMED["test_sort_tiny"]}, CAND_SEED, parameter="n")
    write_run(renamed / "base2.json", {**SORTS, "test_scan": lambda n: 0.5 + 0.3 * n}, BASE_SEED, parameter="n")

    code, out, _ = cli(capsys, "check", "other.json", "--baseline", "base2.json", *FAST, "--json", "check.json")

    assert code == OK
    findings = json.loads((renamed / "check.json").read_text())["findings"]
    # build_index is new and test_scan removed: no pair, but build_index grows faster than test_scan did
    assert [(f["severity"], f["kind"], f["kernel"]) for f in findings] == [("notice", "replaced", "build_index")]
    assert "renamed" not in out
    assert "new, and grows as n^2: faster than test_scan (which grew as n), the only kernel of this metric" in out


# -- names the file system refuses: one error line, never a traceback ---------------------------------------------

LONG = "a" * 300  # longer than a file name may be (255 bytes): looking it up fails with ENAMETOOLONG


@pytest.mark.parametrize("same_job", [False, True], ids=["files", "same-job"])
def test_a_baseline_name_too_long_for_a_file_is_an_error_line(files: Path, same_job: bool,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--same-job", "--", "true"] if same_job else []
    problem = usage_error(cli(capsys, "check", *([] if same_job else ["cand.json"]), "--baseline", LONG, *args))
    assert problem == f"--baseline '{LONG}': cannot look it up as a file: File name too long"


def test_an_output_folder_name_too_long_is_an_error_line(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem = usage_error(cli(capsys, "check", "cand.json", "--baseline", "base.json", *FAST, "--json",
                              f"{LONG}/check.json"))
    assert problem == f"cannot write {LONG}/check.json: File name too long"


def test_a_job_summary_name_too_long_is_an_error_line(files: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(files / LONG))
    code, _, err = cli(capsys, "check", "cand.json", "--baseline", "base.json", *FAST, "--github")
    assert code == USAGE_ERROR
    assert err.splitlines()[-1] == (f"scalecheck: error: {files / LONG}: cannot read the job summary: File name too "
                                    "long; fix: point GITHUB_STEP_SUMMARY at a writable file (GitHub Actions sets it)")
