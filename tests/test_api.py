"""scalecheck.api, the public Python API: `fit_models`, `check`, `cluster`, `overhead`, `parse_target` and
`check_target`, on the repository's examples (whose outcomes the README and the examples' READMEs state) and on
planted data, with the exact messages of the errors a user can get."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from scalecheck.api import check, check_target, cluster, fit_models, overhead, parse_target
from scalecheck.config import Config
from scalecheck.core.search import FitOptions
from scalecheck.data.measurement import Run
from scalecheck.errors import ConfigError, HistoryError, ModelingError, NoBaselineError
from scalecheck.formats import read_many
from scalecheck.report.model_table import render_json

from .conftest import planted_series
from .history.conftest import GitRepo, git_repo  # noqa: F401 - git_repo is the fixture

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MPI = EXAMPLES / "mpi_data_mean.txt"  # 14 MPI collectives at p = 32..512 (examples/README.md)
CANDIDATE, BASELINE = EXAMPLES / "check" / "candidate.json", EXAMPLES / "check" / "baseline.json"
WEATHER = EXAMPLES / "cluster" / "weather.json"
CALIBRATION, EVENTS = EXAMPLES / "overhead" / "calibration.jsonl", EXAMPLES / "overhead" / "events.csv"
MakeRepo = Callable[..., GitRepo]


def config_error(call: Callable[[], object]) -> str:
    """The full text of the ConfigError `call` raises (problem, then "; fix: ...")."""
    with pytest.raises(ConfigError) as info:
        call()
    assert info.value.fix, "every user error carries a fix"
    return str(info.value)


# -- fit_models ------------------------------------------------------------------------------------------------------

def test_fit_models_ranks_open_mpi_bcast_first_at_65536_ranks() -> None:
    """The README's table: OpenMPI->MPI_Bcast grows as p^3 log p and tops the ranking at p = 65,536."""
    table = fit_models([MPI], target={"p": 65536})
    ranked = table.ranked()
    assert len(ranked) == 14 and all(km.status == "ok" for km in ranked)
    top = ranked[0]
    assert (top.kernel, top.metric) == ("OpenMPI->MPI_Bcast", "time")
    assert top.model is not None and top.model.growth_text() == "p^3 * log2(p)"
    assert table.prediction(top) == pytest.approx(8.543e8, rel=1e-3)
    predictions = [table.prediction(km) for km in ranked]
    assert predictions == sorted(predictions, reverse=True)  # ranked by the value at the target
    assert ranked[-1].kernel == "OpenMPI->MPI_Barrier" and ranked[-1].model.growth_text() == "log2(p)"


def test_fit_models_without_target_predicts_nothing_and_ranks_by_growth() -> None:
    table = fit_models([MPI])
    ranked = table.ranked()
    assert table.target is None and all(table.prediction(km) is None for km in ranked)
    assert ranked[0].kernel == "OpenMPI->MPI_Bcast"  # p^3 log p grows fastest of all
    leads = [max(km.model.growth().values()) for km in ranked if km.model is not None]
    assert leads == sorted(leads, reverse=True)


def test_fit_models_takes_a_run_and_recovers_a_planted_model(rng: np.random.Generator) -> None:
    """A Run built in Python: 3 + 0.002 n^2 at 1% noise is modeled as n^2 and predicted at the target."""
    series = planted_series(lambda n: 3 + 0.002 * n**2, [[n] for n in (16, 32, 64, 128, 256, 512)], rng,
                            noise=0.01, parameters=("n",), kernel="sort")
    table = fit_models(Run(("n",), (series,)), target={"n": 4096})
    (km,) = table.models
    assert km.kernel == "sort" and km.model is not None and km.model.growth_text() == "n^2"
    assert table.prediction(km) == pytest.approx(3 + 0.002 * 4096**2, rel=0.05)


def test_fit_models_json_of_a_refined_fractional_log_exponent_is_valid(rng: np.random.Generator) -> None:
    """Search-space refinement can pick log2(p)^(3/2): the model JSON gives the exponent as a number."""
    series = planted_series(lambda p: 5 + 2 * np.log2(p) ** 1.5, [[2.0**k] for k in range(1, 11)], rng, noise=0.01)
    table = fit_models(Run(("p",), (series,)), options=FitOptions(refine=True))
    model = json.loads(render_json(table))["models"][0]
    assert model["formula"].endswith("* log2(p)^(3/2)")
    assert model["terms"][0]["factors"] == [{"parameter": "p", "exponent": 0, "log_exponent": 1.5}]


def test_fit_models_notes_a_prediction_beyond_the_floats_at_the_target(rng: np.random.Generator) -> None:
    series = planted_series(lambda n: 3 + 0.002 * n**3, [[n] for n in (16, 32, 64, 128, 256, 512)], rng, noise=0.01,
                            parameters=("n",))
    table = fit_models(Run(("n",), (series,)), target={"n": 1e300})
    (km,) = table.models
    assert (table.prediction(km), table.beyond_target(km)) == (None, True)
    assert km.note == ("its value at the target n=1e+300 is beyond the range of floating-point numbers (about "
                       "1.8e+308): choose a smaller target")


def test_check_names_the_file_whose_parameter_gives_no_finite_default_target(rng: np.random.Generator) -> None:
    points = [[p] for p in (2.0, 4.0, 8.0, 16.0, 1e308)]
    run = Run(("p",), (planted_series(lambda p: 1 + np.log2(p), points, rng, kernel="solve"),))
    with pytest.raises(ModelingError) as info:
        check(run, run, Config().with_overrides(bootstrap=20), env={})
    assert info.value.problem == ("the default target, 4x the largest measured p (1e+308), is beyond the range of "
                                  "floating-point numbers")
    assert info.value.fix == "give the scale to predict at, e.g. --target p=1e+308 (or target in [tool.scalecheck])"


def test_fit_models_of_a_run_equals_fit_models_of_its_file() -> None:
    from_file = fit_models([MPI], target={"p": 65536})
    from_run = fit_models(read_many([MPI]), target={"p": 65536})
    assert [(km.kernel, km.model.formula()) for km in from_run.ranked()] == \
           [(km.kernel, km.model.formula()) for km in from_file.ranked()]


def test_fit_models_selects_kernels_by_glob_and_metric_by_name() -> None:
    table = fit_models([MPI], kernels=["OpenMPI->*", "IntelMPI->MPI_Bcast"], metrics=["time"])
    kernels = sorted(km.kernel for km in table.models)
    assert kernels == ["IntelMPI->MPI_Bcast"] + sorted(k for k in kernels if k.startswith("OpenMPI->"))
    assert len(kernels) == 8


@pytest.mark.parametrize("selection, message", [
    ({"metrics": ["bytes"]}, "no measurements match metric bytes (the file has time)"),
    ({"kernels": ["solver->*"]},
     "no measurements match kernel solver->* (the file has IntelMPI->MPI_Allgather, IntelMPI->MPI_Allreduce, "
     "IntelMPI->MPI_Alltoall, IntelMPI->MPI_Barrier, IntelMPI->MPI_Bcast, IntelMPI->MPI_Gather, "
     "IntelMPI->MPI_Reduce, OpenMPI->MPI_Allgather and 6 more)"),
    ({"metrics": ["bytes"], "kernels": ["a", "b"]},
     "no measurements match metric bytes (the file has time) and kernel a or b (the file has "
     "IntelMPI->MPI_Allgather, IntelMPI->MPI_Allreduce, IntelMPI->MPI_Alltoall, IntelMPI->MPI_Barrier, "
     "IntelMPI->MPI_Bcast, IntelMPI->MPI_Gather, IntelMPI->MPI_Reduce, OpenMPI->MPI_Allgather and 6 more)"),
], ids=["metric", "kernel", "both"])
def test_fit_models_selecting_nothing_names_what_the_file_has(selection: dict[str, list[str]], message: str) -> None:
    assert config_error(lambda: fit_models([MPI], **selection)) == \
        f"{message}; fix: check --metric and --kernel against the names above"


def test_fit_models_target_must_name_the_measured_parameter() -> None:
    assert config_error(lambda: fit_models([MPI], target={"n": 1e6})) == \
        "--target names parameter 'n', which the measurements do not have; fix: the parameters are p"


# -- parse_target and check_target ---------------------------------------------------------------------------------

def test_parse_target_reads_every_parameter() -> None:
    assert parse_target("p=65536,n=1e6") == {"p": 65536.0, "n": 1e6}


@pytest.mark.parametrize("text", ["p", "p=", "p=0", "p=-1", "p=x", "=3", "p=inf"])
def test_parse_target_refuses_what_is_not_a_positive_value(text: str) -> None:
    assert config_error(lambda: parse_target(text)) == (
        f"--target: cannot read '{text}'"
        "; fix: write the target scale as NAME=VALUE with a positive number, e.g. --target p=65536")


def test_parse_target_refuses_an_empty_target() -> None:
    assert config_error(lambda: parse_target("")) == \
        "--target is empty; fix: write the target scale as NAME=VALUE, e.g. --target p=65536"


@pytest.mark.parametrize("target, parameters, message", [
    ({"proc": 8.0}, ("procs", "n"),
     "--target names parameter 'proc', which the measurements do not have; fix: did you mean 'procs'?"),
    ({"q": 8.0}, ("p", "n"),
     "--target names parameter 'q', which the measurements do not have; fix: the parameters are p, n"),
    ({"p": 8.0}, ("p", "n"),
     "--target gives no value for n; fix: give every parameter a value, e.g. --target p=...,n=..."),
], ids=["did-you-mean", "unknown", "missing"])
def test_check_target_names_the_parameter_and_the_fix(target: dict[str, float], parameters: tuple[str, ...],
                                                      message: str) -> None:
    assert config_error(lambda: check_target(target, parameters)) == message


def test_check_target_accepts_every_parameter_once() -> None:
    assert check_target({"n": 1.0, "p": 2.0}, ("p", "n")) is None


# -- check -----------------------------------------------------------------------------------------------------------

def test_check_of_the_example_pair_fails_on_the_exchange_kernel_alone() -> None:
    """The README's example: main->solve->exchange grows as p^(5/4) log p instead of p (growth and prediction
    findings, about 32x at p = 4096); main->io, 5% slower, stays within the noise and the threshold."""
    config = Config(root=BASELINE.parent).with_overrides(target={"p": 4096.0})
    result = check([CANDIDATE], BASELINE, config, cwd=BASELINE.parent, env={})
    verdict = result.verdict
    assert verdict.failed
    assert [(f.kernel, f.kind) for f in verdict.failures] == [("main->solve->exchange", "growth"),
                                                              ("main->solve->exchange", "prediction")]
    assert [f.kernel for f in verdict.findings] == ["main->solve->exchange"] * 2  # main->io is not reported
    growth = verdict.failures[0]
    assert (growth.baseline_growth, growth.candidate_growth) == ("p", "p^(5/4) * log2(p)")
    assert growth.ratio == pytest.approx(32, rel=0.05) and 1 < growth.bound < growth.ratio
    assert result.context.baseline == f"file {BASELINE}" and result.context.candidate == str(CANDIDATE)
    assert result.context.baseline_machine == result.context.candidate_machine == "example-runner"
    assert sorted(s.kernel for s in result.candidate) == sorted(s.kernel for s in result.baseline) == [
        "main->io", "main->solve->allreduce", "main->solve->compute", "main->solve->exchange"]


def test_check_of_the_baseline_against_itself_passes() -> None:
    config = Config(root=BASELINE.parent).with_overrides(target={"p": 4096.0}, bootstrap=20)
    verdict = check([BASELINE], BASELINE, config, cwd=BASELINE.parent, env={}).verdict
    assert not verdict.failed and verdict.findings == ()


def test_check_takes_runs(rng: np.random.Generator) -> None:
    """Both sides as `Run`s: the candidate's kernel grows as p^2 where the baseline's grows as p."""
    points = [[p] for p in (2, 4, 8, 16, 32, 64, 128, 256)]
    base = Run(("p",), (planted_series(lambda p: 1 + 0.1 * p, points, rng, kernel="solve"),))
    cand = Run(("p",), (planted_series(lambda p: 1 + 0.1 * p**2 / 2, points, rng, kernel="solve"),))
    result = check(cand, base, Config().with_overrides(bootstrap=20), env={})
    assert result.verdict.failed and {f.kind for f in result.verdict.failures} >= {"growth"}
    assert result.verdict.failures[0].candidate_growth == "p^2"
    assert result.context.baseline == result.context.candidate == "measurements given"


@pytest.fixture
def first_pull_request(git_repo: MakeRepo) -> GitRepo:  # noqa: F811 - the fixture imported above
    """main with one commit and no measurements anywhere; branch feature checked out with a commit of its own."""
    return git_repo([("commit", "c1", {"README": "x\n"}), ("branch", "feature"), ("commit", "f1", {"a.py": "1\n"})])


def test_check_without_any_baseline_passes_with_a_notice(first_pull_request: GitRepo) -> None:
    repo = first_pull_request
    config = Config(root=repo.path).with_overrides(bootstrap=20)
    result = check([CANDIDATE], "main", config, cwd=repo.path, env={})
    assert not result.verdict.failed and result.verdict.findings == ()
    assert result.context.baseline == "none yet" and result.baseline == ()
    (notice,) = result.context.notices
    assert notice.startswith(f"no baseline yet: no measurements recorded at {repo.commits['c1'][:7]}")
    assert "every kernel is new" in notice and "missing_baseline" in notice


def test_a_baseline_name_too_long_for_a_file_is_looked_up_as_a_git_ref(first_pull_request: GitRepo) -> None:
    config = Config(root=first_pull_request.path).with_overrides(bootstrap=20)
    with pytest.raises(HistoryError, match=r"repo: unknown git ref 'a{300}': no branch, tag or commit of that name"):
        check([CANDIDATE], "a" * 300, config, cwd=first_pull_request.path, env={})


def test_check_without_any_baseline_fails_when_missing_baseline_is_fail(first_pull_request: GitRepo) -> None:
    repo = first_pull_request
    config = Config(root=repo.path).with_overrides(bootstrap=20, missing_baseline="fail")
    with pytest.raises(NoBaselineError) as info:
        check([CANDIDATE], "main", config, cwd=repo.path, env={})
    assert info.value.problem.startswith(f"no measurements recorded at {repo.commits['c1'][:7]}")
    assert info.value.fix


def test_check_without_a_baseline_outside_a_pull_request_says_how_to_name_one(first_pull_request: GitRepo) -> None:
    repo = first_pull_request
    assert config_error(lambda: check([CANDIDATE], None, Config(root=repo.path), cwd=repo.path, env={})) == (
        "no baseline given; fix: pass --baseline REF_OR_FILE, e.g. --baseline origin/main or --baseline "
        "baseline.json")


# -- cluster ---------------------------------------------------------------------------------------------------------

def test_cluster_finds_the_theses_three_groups_and_shares() -> None:
    """examples/cluster/README.md: without closure, threads, ranks 1-3 and rank 0; 37% of the 27 pairs shared by
    all, 41% first appearing at ranks 1-3; rank 0 does everything ranks 1-3 do, the threads are not below them."""
    found = cluster(WEATHER, closure=False)
    assert [g.label for g in found.groups] == ["rank 0-3 thread 1-2", "rank 1-3", "rank 0"]
    assert (found.processes, found.total_pairs) == (12, 27)
    assert found.subsumes == ((2, 1),)
    shares = {tuple(found.groups[g].label for g in c.groups): round(c.share, 2) for c in found.concepts}
    assert shares[("rank 0-3 thread 1-2", "rank 1-3", "rank 0")] == 0.37
    assert shares[("rank 1-3", "rank 0")] == 0.41


def test_cluster_with_closure_orders_the_groups_in_a_chain() -> None:
    found = cluster(WEATHER)
    assert found.lattice and len(found.concepts) == 3
    assert set(found.subsumes) == {(1, 0), (2, 1)}  # ranks 1-3 below the threads, rank 0 below ranks 1-3
    assert [len(c.groups) for c in found.concepts] == [3, 2, 1]


def test_cluster_over_the_concept_cap_lists_the_groups_without_a_lattice() -> None:
    found = cluster(WEATHER, max_concepts=1)
    assert not found.lattice and len(found.groups) == 3
    assert found.note.startswith("the lattice of the 3 distinct pair sets has more than 1 nodes")


@pytest.mark.parametrize("options, message", [
    ({"similarity": 0.0}, "the similarity must be a Jaccard index in (0, 1], got 0"
                          "; fix: use for example --similarity 0.9 (1 keeps only identical sets together)"),
    ({"similarity": 1.5}, "the similarity must be a Jaccard index in (0, 1], got 1.5"
                          "; fix: use for example --similarity 0.9 (1 keeps only identical sets together)"),
    ({"max_sets": 0}, "max_sets must be at least 1, got 0; fix: use the default max_sets"),
    ({"max_concepts": 0}, "max_concepts must be at least 1, got 0; fix: use the default max_concepts"),
])
def test_cluster_options_are_checked(options: dict[str, float], message: str) -> None:
    assert config_error(lambda: cluster(WEATHER, **options)) == message  # type: ignore[arg-type]


# -- overhead --------------------------------------------------------------------------------------------------------

def test_overhead_ranks_the_late_receives_first() -> None:
    """examples/overhead/README.md: 3.46 ms of 13.8 ms above t_max in 1,057 events; the late receives at
    msg_stuff.cpp:364 first, growing with p; the checkpoint send at io.c:88 beyond the calibrated sizes (clamped)."""
    table = overhead(CALIBRATION, EVENTS).table
    assert table.total.events == 1057
    assert table.total.overhead == pytest.approx(3.46e-3, rel=2e-3)
    assert table.total.time == pytest.approx(13.8e-3, rel=5e-3)
    assert [(r.location, r.operation) for r in table.rows] == [
        ("msg_stuff.cpp:364", "MPI_Recv"), ("io.c:88", "MPI_Send"), ("msg_stuff.cpp:311", "MPI_Send"),
        ("sweep.f:411", "MPI_Allreduce")]
    late = table.rows[0]
    assert late.overhead == pytest.approx(1.9708e-3, rel=1e-4) and late.clamped == 0
    assert [p for p, _ in late.by_processes] == [4, 8, 12, 14, 21, 24, 28]
    by_p = [seconds for _, seconds in late.by_processes]
    assert by_p == sorted(by_p)  # more waiting the more processes take part
    assert (table.rows[1].events, table.rows[1].clamped) == (7, 7)
    assert [r.operation for r in table.operations] == ["MPI_Recv", "MPI_Send", "MPI_Allreduce"]


@pytest.mark.parametrize("options, message", [
    ({"quantile": 0.5}, "the quantile must be at least 0.8 and less than 1, got 0.5"
                        "; fix: use a quantile such as 0.95 (Kluge et al.: 0.8 <= q_max < 1)"),
    ({"resolution": 0.0}, "the timer resolution must be a positive number of seconds, got 0"
                          "; fix: give it in seconds, e.g. 1e-07, or leave it out"),
    ({"alpha": 1.0}, "alpha must be between 0 and 1, got 1; fix: use a level such as 0.01"),
    ({"interpolation": "cubic"}, "unknown interpolation 'cubic'; fix: use one of linear, log"),
])
def test_overhead_options_are_checked(options: dict[str, object], message: str) -> None:
    assert config_error(lambda: overhead(CALIBRATION, EVENTS, **options)) == message  # type: ignore[arg-type]
