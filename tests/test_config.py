"""Settings files: every key read back, discovery, command-line overrides, and one exact message per mistake."""

from __future__ import annotations

import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from scalecheck.config import (FAILABLE_KINDS, FLAGS, FORMAT_NAMES, Config, building_blocks, find_config,
                               load_config)
from scalecheck.core.search import AGGREGATE_NAMES, FitOptions
from scalecheck.data.measurement import AGGREGATES
from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS
from scalecheck.errors import ConfigError, Location

F = Fraction


def make_file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository top (with .git) inside tmp_path, so that discovery never looks above the test's folder."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    return tmp_path / "repo"


EVERY_KEY = {
    "measurements": ("bench/*.json", "more/*.csv"),
    "format": "csv",
    "scaling": "strong",
    "store": "branch",
    "data_branch": "perf-data",
    "target": {"p": 65536.0, "n": 1e6},
    "metrics": ("time", "visits"),
    "kernels": ("solver->*",),
    "aggregate": "median",
    "segmentation": False,
    "max_terms": 3,
    "exponents": (F(0), F(1, 2), F(1), F(3, 2)),
    "log_exponents": (F(0), F(1)),
    "allow_decreasing": True,
    "negative_exponents": "always",
    "refine": True,
    "alpha": 0.05,
    "min_points": 4,
    "threshold": 0.25,
    "confidence": 0.9,
    "bootstrap": 500,
    "seed": 7,
    "fail_on": ("growth", "measured"),
    "fail_across_machines": True,
    "missing_baseline": "fail",
    "expectations": (("solver->*", "p log p"), ("main->init", "O(1)")),
}
SETTINGS = """
    measurements = ["bench/*.json", "more/*.csv"]
    format = "csv"
    scaling = "strong"
    store = "branch"
    data_branch = "perf-data"
    target = {p = 65536, n = 1e6}
    metrics = ["time", "visits"]
    kernels = ["solver->*"]
    aggregate = "median"
    segmentation = false

    [{prefix}search]
    max_terms = 3
    exponents = [0, "1/2", 1, 1.5, 1]
    log_exponents = [0, 1]
    allow_decreasing = true
    negative_exponents = "always"
    refine = true
    alpha = 0.05
    min_points = 4

    [{prefix}gate]
    threshold = 0.25
    confidence = 0.9
    bootstrap = 500
    seed = 7
    fail_on = ["growth", "measured"]
    fail_across_machines = true
    missing_baseline = "fail"

    [{prefix}expectations]
    "solver->*" = "p log p"
    "main->init" = "O(1)"
"""


def test_load_config_reads_every_key_of_pyproject(tmp_path: Path) -> None:
    path = make_file(tmp_path / "pyproject.toml", '[project]\nname = "demo"\n\n[tool.scalecheck]'
                     + SETTINGS.replace("{prefix}", "tool.scalecheck."))
    assert load_config(path) == Config(source=path, root=tmp_path, **EVERY_KEY)  # type: ignore[arg-type]


def test_load_config_reads_every_key_of_scalecheck_toml(tmp_path: Path) -> None:
    path = make_file(tmp_path / "scalecheck.toml", SETTINGS.replace("{prefix}", ""))
    assert load_config(path) == Config(source=path, root=tmp_path, **EVERY_KEY)  # type: ignore[arg-type]


def test_every_setting_is_read_from_some_file_key() -> None:
    fields = {f for f in Config.__dataclass_fields__ if f not in ("source", "root")}
    assert set(EVERY_KEY) == fields == set(FLAGS)
    assert all(value != getattr(Config(), name) for name, value in EVERY_KEY.items())


def test_config_defaults() -> None:
    config = Config()
    assert (config.source, config.root, config.measurements, config.format, config.store) == (None, Path("."), (),
                                                                                              None, "auto")
    assert (config.data_branch, config.target, config.aggregate, config.segmentation) == ("scalecheck-data", None,
                                                                                          "mean", True)
    assert (config.max_terms, config.exponents, config.alpha, config.allow_decreasing) == (2, None, 0.01, False)
    assert (config.threshold, config.confidence, config.bootstrap, config.seed) == (0.10, 0.95, 200, 0)
    assert config.fail_on == ("growth", "prediction", "expectation") and config.expectations == ()


def test_integers_are_read_as_numbers(tmp_path: Path) -> None:
    path = make_file(tmp_path / "scalecheck.toml", "[gate]\nthreshold = 1\n")
    threshold = load_config(path).threshold
    assert threshold == 1.0 and isinstance(threshold, float)


def test_empty_fail_on_only_reports(tmp_path: Path) -> None:
    path = make_file(tmp_path / "scalecheck.toml", "[gate]\nfail_on = []\n")
    assert load_config(path).fail_on == ()


def test_target_may_be_its_own_table(tmp_path: Path) -> None:
    path = make_file(tmp_path / "scalecheck.toml", "[target]\np = 64\nn = 1000\n")
    assert load_config(path).target == {"p": 64.0, "n": 1000.0}


def test_choices_follow_the_readers_and_aggregates() -> None:
    from scalecheck.formats import FORMAT_NAMES as READERS

    assert FORMAT_NAMES == READERS
    assert "improvement" not in FAILABLE_KINDS
    assert set(AGGREGATES) == {"mean", "median", "min"}
    assert AGGREGATE_NAMES == ("mean", "median", "min", "tmax")  # tmax needs scipy, so it lives in core


# --- discovery -----------------------------------------------------------------------------------------------------

def test_find_config_prefers_scalecheck_toml_in_the_same_folder(repo: Path) -> None:
    make_file(repo / "pyproject.toml", "[tool.scalecheck]\nstore = 'repo'\n")
    own = make_file(repo / "scalecheck.toml", "store = 'branch'\n")
    assert find_config(repo) == own
    assert load_config(start=repo).store == "branch"


def test_find_config_skips_pyproject_without_table(repo: Path) -> None:
    top = make_file(repo / "pyproject.toml", "[tool.scalecheck.gate]\nseed = 3\n")
    make_file(repo / "sub" / "pyproject.toml", '[project]\nname = "sub"\n')
    make_file(repo / "sub2" / "pyproject.toml", '[tool.other]\nscalecheck = "mentioned, no table"\n')
    assert find_config(repo / "sub") == top
    assert find_config(repo / "sub2") == top
    config = load_config(start=repo / "sub")
    assert (config.seed, config.source, config.root) == (3, top, repo)


def test_find_config_looks_in_parents_up_to_the_repository_top(repo: Path) -> None:
    make_file(repo.parent / "scalecheck.toml", "[gate]\nseed = 4\n")  # above the repository: not this project's
    (repo / "a" / "b").mkdir(parents=True)
    assert find_config(repo / "a" / "b") is None
    nearest = make_file(repo / "a" / "scalecheck.toml", "[gate]\nseed = 5\n")
    assert find_config(repo / "a" / "b") == nearest


def test_find_config_checks_the_repository_top_itself(repo: Path) -> None:
    top = make_file(repo / "scalecheck.toml", "[gate]\nseed = 6\n")
    assert find_config(repo / ".") == top


def test_load_config_without_file_gives_defaults_rooted_at_start(repo: Path) -> None:
    assert load_config(start=repo) == Config(root=repo)


def test_load_config_without_start_uses_working_folder(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_file(repo / "scalecheck.toml", "[gate]\nseed = 8\n")
    monkeypatch.chdir(repo)
    assert load_config().source == path


def test_load_config_reads_explicit_file_of_any_name(repo: Path) -> None:
    make_file(repo / "scalecheck.toml", "[gate]\nseed = 1\n")
    path = make_file(repo / "ci" / "perf.toml", "[gate]\nseed = 9\n")
    config = load_config(path, start=repo)
    assert (config.seed, config.source, config.root) == (9, path, repo / "ci")


def test_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nope.toml")
    assert str(info.value) == (f"{tmp_path / 'nope.toml'}: no such file; fix: check the path given to --config, "
                               "or leave --config out to use the pyproject.toml or scalecheck.toml found from the "
                               "working folder")


def test_explicit_file_name_the_system_refuses_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / f"{'c' * 300}.toml"  # longer than a file name may be: looking it up fails
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: cannot read it: File name too long; fix: check the path given to --config"


def test_explicit_pyproject_without_table_is_an_error(tmp_path: Path) -> None:
    path = make_file(tmp_path / "pyproject.toml", '[project]\nname = "demo"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}: has no [tool.scalecheck] table; fix: add a [tool.scalecheck] table, or "
                               "leave --config out to use the defaults")


def test_discovered_malformed_pyproject_is_an_error(repo: Path) -> None:
    path = make_file(repo / "pyproject.toml", "[tool.scalecheck]\nstore = \n")
    with pytest.raises(ConfigError, match="not valid TOML") as info:
        find_config(repo)
    assert info.value.where == Location(path, 2)


# --- overrides -----------------------------------------------------------------------------------------------------

def test_with_overrides_replaces_given_values_only() -> None:
    config = Config(threshold=0.2, seed=3).with_overrides(threshold=0.5, seed=None, fail_on=[], target={"p": 64},
                                                          exponents=[F(1), "1/2"], expectations={"a*": "n^2"},
                                                          measurements=[Path("r.json")])
    assert (config.threshold, config.seed, config.fail_on, config.target) == (0.5, 3, (), {"p": 64.0})
    assert config.exponents == (F(1, 2), F(1)) and config.expectations == (("a*", "n^2"),)
    assert config.measurements == ("r.json",)


def test_with_overrides_accepts_expectations_as_pairs() -> None:
    config = Config(expectations=(("x", "n"),)).with_overrides(expectations=[("solver->*", "p log p")])
    assert config.expectations == (("solver->*", "p log p"),)


@pytest.mark.parametrize("settings, message", [
    ({"threshold": -1}, "--threshold must be greater than 0, got -1; fix: for example --threshold 0.1"),
    ({"max_terms": True}, "--max-terms must be an integer, got a boolean (true); fix: for example --max-terms 2"),
    ({"fail_on": ["growht"]}, "--fail-on holds unknown kind 'growht'; fix: did you mean 'growth'? (the kinds are "
                              "growth, prediction, measured, expectation, segmentation, overhead, structure)"),
    ({"data_branch": "my branch"}, "--data-branch must be a git branch name, got 'my branch'; fix: for example "
                                   "--data-branch scalecheck-data"),
    ({"expectations": {"solver->*": "p lg p"}}, "--expect for 'solver->*': cannot read 'p lg p': unknown word 'lg'; "
                                                "write a growth such as 'p log p', 'n^2' or 'O(n log n)'"
                                                "; fix: for example --expect 'solver->*=p log p'"),
    ({"metrics": "time"}, "--metric must be a list of strings, got a string ('time'); fix: for example --metric "
                          "time"),
    ({"exponents": [F(0)], "log_exponents": [F(0)]}, "the exponent lists leave no term to search"
                                                     "; fix: give at least one exponent other than 0"),
], ids=["threshold", "bool_is_not_int", "fail_on", "data_branch", "expect", "metric_not_list", "no_term"])
def test_with_overrides_checks_values_and_names_the_flag(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        Config().with_overrides(**settings)
    assert str(info.value) == message and info.value.where is None


def test_with_overrides_rejects_unknown_setting() -> None:
    with pytest.raises(TypeError, match="no setting 'treshold'"):
        Config().with_overrides(treshold=0.1)


def test_flag_names_follow_field_names() -> None:
    assert (FLAGS["fail_on"], FLAGS["data_branch"], FLAGS["expectations"], FLAGS["max_terms"]) == (
        "--fail-on", "--data-branch", "--expect", "--max-terms")


# --- fit options ---------------------------------------------------------------------------------------------------

def test_fit_options_from_defaults_are_the_default_search() -> None:
    assert Config().fit_options() == FitOptions()


def test_fit_options_carry_the_search_settings() -> None:
    config = Config(max_terms=1, exponents=(F(1), F(2)), log_exponents=(F(0), F(1)), allow_decreasing=True,
                    refine=True, alpha=0.05, aggregate="min")
    assert config.fit_options() == FitOptions(
        building_blocks=((F(1), 0), (F(1), 1), (F(2), 0), (F(2), 1)), max_terms=1, allow_decreasing=True,
        refine=True, alpha=0.05, aggregate="min")


def test_building_blocks_fill_a_missing_list() -> None:
    assert building_blocks(None, None) == DEFAULT_BUILDING_BLOCKS
    assert building_blocks([F(1)], None) == ((F(1), 0), (F(1), 1), (F(1), 2))
    powers = sorted({b[0] for b in DEFAULT_BUILDING_BLOCKS})
    assert building_blocks(None, [F(1, 2)]) == tuple((i, F(1, 2)) for i in powers)
    blocks = building_blocks([F(0), F(1)], [F(0), F(1)])
    assert blocks == ((F(0), 1), (F(1), 0), (F(1), 1)) and all(type(j) is int for _, j in blocks)


# --- mistakes in files ---------------------------------------------------------------------------------------------

GATE = "[tool.scalecheck.gate]"
MISTAKES = {
    "unknown_key": (f"[tool.scalecheck]\nstore = 'repo'\n\n{GATE}\nthreshold = 0.1\ntreshold = 0.2\n", 6,
                    f"{GATE}: unknown key 'treshold'; fix: did you mean 'threshold'?"),
    "unknown_key_no_match": (f"{GATE}\nwhatever = 1\n", 2,
                             f"{GATE}: unknown key 'whatever'; fix: the keys here are threshold, confidence, "
                             "bootstrap, seed, fail_on, fail_across_machines, missing_baseline"),
    "key_in_wrong_table": ("[tool.scalecheck]\nthreshold = 0.1\n", 2,
                           "[tool.scalecheck]: unknown key 'threshold'; fix: threshold belongs in "
                           "[tool.scalecheck.gate]"),
    "unknown_table": ("[tool.scalecheck]\nstore = 'repo'\n\n[tool.scalecheck.gates]\nthreshold = 0.1\n", 4,
                      "[tool.scalecheck]: unknown table 'gates'; fix: did you mean 'gate'?"),
    "unknown_dotted_table": ("[tool.scalecheck]\nstore = 'repo'\ngates.threshold = 0.1\n", 3,
                             "[tool.scalecheck]: unknown table 'gates'; fix: did you mean 'gate'?"),
    "table_not_table": ("[tool.scalecheck]\ngate = 5\n", 2,
                        "[tool.scalecheck] gate: must be a table, got an integer (5); fix: write the settings of "
                        "gate under [tool.scalecheck.gate]"),
    "string_for_number": (f"{GATE}\nthreshold = '10%'\n", 2,
                          f"{GATE} threshold: must be a number, got a string ('10%'); fix: write threshold = 0.1"),
    "dotted_key": ("[tool.scalecheck]\ngate.threshold = 0\n", 2,
                   f"{GATE} threshold: must be greater than 0, got 0; fix: write threshold = 0.1"),
    "confidence_too_high": (f"{GATE}\nconfidence = 1.5\n", 2,
                            f"{GATE} confidence: must be at least 0.5 and less than 1, got 1.5"
                            "; fix: write confidence = 0.95"),
    "bootstrap_zero": (f"{GATE}\nbootstrap = 0\n", 2,
                       f"{GATE} bootstrap: must be at least 20, got 0; fix: write bootstrap = 200"),
    "seed_negative": (f"{GATE}\nseed = -1\n", 2, f"{GATE} seed: must be at least 0, got -1; fix: write seed = 0"),
    "seed_float": (f"{GATE}\nseed = 1.0\n", 2,
                   f"{GATE} seed: must be an integer, got a number (1.0); fix: write seed = 0"),
    "fail_on_typo": (f'{GATE}\nfail_on = ["growht"]\n', 2,
                     f"{GATE} fail_on: holds unknown kind 'growht'; fix: did you mean 'growth'? (the kinds are "
                     "growth, prediction, measured, expectation, segmentation, overhead, structure)"),
    "fail_on_improvement": (f'{GATE}\nfail_on = ["growth", "improvement"]\n', 2,
                            f"{GATE} fail_on: improvements never fail the build; fix: leave 'improvement' out; "
                            "the kinds that can fail are growth, prediction, measured, expectation, segmentation, "
                            "overhead, structure"),
    "max_terms_bool": ("[tool.scalecheck.search]\nmax_terms = true\n", 2,
                       "[tool.scalecheck.search] max_terms: must be an integer, got a boolean (true)"
                       "; fix: write max_terms = 2"),
    "alpha_one": ("[tool.scalecheck.search]\nalpha = 1\n", 2,
                  "[tool.scalecheck.search] alpha: must be greater than 0 and less than 1, got 1"
                  "; fix: write alpha = 0.01"),
    "aggregate_typo": ('[tool.scalecheck]\naggregate = "meen"\n', 2,
                       "[tool.scalecheck] aggregate: must be one of mean, median, min, tmax, got 'meen'"
                       "; fix: did you mean 'mean'?"),
    "aggregate_unknown": ('[tool.scalecheck]\naggregate = "avg"\n', 2,
                          "[tool.scalecheck] aggregate: must be one of mean, median, min, tmax, got 'avg'"
                          '; fix: write aggregate = "mean"'),
    "store_unknown": ('[tool.scalecheck]\nstore = "git"\n', 2,
                      "[tool.scalecheck] store: must be one of auto, branch, repo, got 'git'"
                      '; fix: write store = "auto"'),
    "format_typo": ('[tool.scalecheck]\nformat = "cvs"\n', 2,
                    "[tool.scalecheck] format: must be one of scalecheck-json, jsonl, csv, extrap-text, extrap-json, "
                    "talpas, pytest-benchmark, google-benchmark, hyperfine, asv, cube, extrap-experiment, got 'cvs'; "
                    "fix: did you mean 'csv'?"),
    "segmentation_string": ('[tool.scalecheck]\nsegmentation = "no"\n', 2,
                            "[tool.scalecheck] segmentation: must be true or false, got a string ('no')"
                            "; fix: write segmentation = false"),
    "target_negative": ("[tool.scalecheck]\ntarget = {p = -1}\n", 2,
                        "[tool.scalecheck] target: must give each parameter a positive number, got p = -1"
                        "; fix: write target = {p = 65536}"),
    "target_string": ('[tool.scalecheck]\ntarget = {n = "big"}\n', 2,
                      "[tool.scalecheck] target: must give each parameter a positive number, got n = a string "
                      "('big'); fix: write target = {n = 65536}"),
    "target_not_table": ("[tool.scalecheck]\ntarget = 5\n", 2,
                         "[tool.scalecheck] target: must be a table of parameter values, got an integer (5)"
                         "; fix: write target = {p = 65536}"),
    "measurements_string": ('[tool.scalecheck]\nmeasurements = "bench/*.json"\n', 2,
                            "[tool.scalecheck] measurements: must be a list of strings, got a string "
                            "('bench/*.json'); fix: write measurements = [\"bench/*.json\"]"),
    "exponents_word": ('[tool.scalecheck.search]\nexponents = [1, "x"]\n', 2,
                       "[tool.scalecheck.search] exponents: holds a string ('x'), which is not a number or a "
                       "fraction; fix: write exponents = [0, \"1/2\", 1, \"3/2\", 2]"),
    "negative_exponents_word": ('[tool.scalecheck.search]\nnegative_exponents = "yes"\n', 2,
                                "[tool.scalecheck.search] negative_exponents: must be one of auto, always, never, "
                                "got 'yes'; fix: write negative_exponents = \"always\""),
    "exponents_empty": ("[tool.scalecheck.search]\nexponents = []\n", 2,
                        "[tool.scalecheck.search] exponents: is empty"
                        "; fix: write exponents = [0, \"1/2\", 1, \"3/2\", 2]"),
    "no_term_left": ("[tool.scalecheck.search]\nexponents = [0]\nlog_exponents = [0]\n", 2,
                     "[tool.scalecheck.search] exponents: the exponent lists leave no term to search"
                     "; fix: give at least one exponent other than 0"),
    "expectation_unreadable": ('[tool.scalecheck.expectations]\n"main->init" = "1"\n"solver->*" = "p lg p"\n', 3,
                               "[tool.scalecheck.expectations] \"solver->*\": cannot read 'p lg p': unknown word "
                               "'lg'; write a growth such as 'p log p', 'n^2' or 'O(n log n)'"
                               "; fix: write each expectation as \"KERNEL GLOB\" = \"GROWTH\", e.g. "
                               "\"solver->*\" = \"p log p\""),
    "expectation_dotted_kernel": ('[tool.scalecheck.expectations]\nmain.solve = "n"\n', 2,
                                  "[tool.scalecheck.expectations] \"main\": must be a growth as text, such as "
                                  "\"p log p\", got a table; fix: quote the kernel glob, e.g. \"main.solve\" = "
                                  "\"p log p\""),
    "malformed_toml": ("[tool.scalecheck]\nstore = 'repo'\nthreshold 0.1\n", 3,
                       "not valid TOML: Expected '=' after a key in a key/value pair at column 11"
                       "; fix: correct the TOML syntax"),
    "malformed_toml_at_end": ("[tool.scalecheck]\nstore = ", 2,
                              "not valid TOML: Invalid value (at end of document)"
                              "; fix: correct the TOML syntax"),
}


@pytest.mark.parametrize("text, line, message", MISTAKES.values(), ids=MISTAKES.keys())
def test_load_config_names_file_line_key_and_fix(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = make_file(tmp_path / "pyproject.toml", text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:{line}: {message}"
    assert info.value.where is not None and info.value.where.line == line


def test_scalecheck_toml_records_name_tables_without_prefix(tmp_path: Path) -> None:
    path = make_file(tmp_path / "scalecheck.toml", "store = 'repo'\n\n[gate]\nthreshold = -0.1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:4: [gate] threshold: must be greater than 0, got -0.1; " \
                              "fix: write threshold = 0.1"


def test_scalecheck_toml_top_level_key_has_no_table(tmp_path: Path) -> None:
    path = make_file(tmp_path / "scalecheck.toml", 'format = 3\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}:1: format: must be one of scalecheck-json, jsonl, csv, extrap-text, "
                               "extrap-json, talpas, pytest-benchmark, google-benchmark, hyperfine, asv, cube, "
                               "extrap-experiment, got an integer (3); fix: write format = \"csv\"")


def test_scalecheck_toml_with_tool_table_says_settings_stand_at_top(tmp_path: Path) -> None:
    path = make_file(tmp_path / "scalecheck.toml", "[tool.scalecheck]\nstore = 'repo'\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}:1: unknown key 'tool'; fix: in scalecheck.toml the settings stand at the "
                               "top level, without [tool.scalecheck]")


def test_scalecheck_toml_key_of_top_level_in_a_table(tmp_path: Path) -> None:
    path = make_file(tmp_path / "scalecheck.toml", "[gate]\nmeasurements = []\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:2: [gate]: unknown key 'measurements'; fix: measurements belongs at the " \
                              "top level"


def test_every_file_error_carries_a_fix(tmp_path: Path) -> None:
    for text, _, _ in MISTAKES.values():
        path = make_file(tmp_path / "pyproject.toml", text)
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert info.value.fix
