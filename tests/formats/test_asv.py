"""asv's results files: real files of versions 1 and 2 (tests/inputs/asv, with their benchmarks.json), a real
`asv run`, parameter names with and without benchmarks.json, summaries spread into values, one-line errors, and the
CLI on such files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from scalecheck.cli import OK, REGRESSION, USAGE_ERROR, main
from scalecheck.errors import InputError
from scalecheck.formats import detect_format, read_measurements, read_measurements_text
from scalecheck.formats.asv import is_asv, read_asv, read_asv_text
from tests.conftest import missing_tool

DIR = Path(__file__).parent.parent / "inputs" / "asv"
BARTZ = DIR / "bartz" / "gattocrucco-m1" / "1119f48f-virtualenv-py3.13.json"
BARTZ_BEFORE = DIR / "bartz" / "gattocrucco-m1" / "b145bd73-virtualenv-py3.13.json"
NAPARI = DIR / "napari" / "czipa1osx041" / "c23307f4-virtualenv-py3.7.json"
PSYGNAL = DIR / "psygnal" / "GitHubRunner" / "24ee1571-conda-py3.9.json"
Z75 = NormalDist().inv_cdf(0.75)
COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b", "stats_q_25",
           "stats_q_75", "stats_number", "stats_repeat", "samples", "profile"]


def results(rows: dict[str, list[object]], **top: object) -> dict[str, object]:
    """A version 2 results file around `rows` (benchmark name -> one entry per column of COLUMNS)."""
    return {"commit_hash": "a1b2c3d4e5f6", "env_name": "existing-py", "date": 1, "params": {"machine": "box"},
            "python": "3.12", "requirements": {}, "env_vars": {}, "result_columns": COLUMNS, "results": rows,
            "durations": {}, "version": 2, **top}


def row(result: object, params: Sequence[object] = (), samples: object = None, q25: object = None, q75: object = None,
        repeat: object = None) -> list[object]:
    """One benchmark's entry of a version 2 file."""
    return [result, list(params), "v", 1, 0.1, None, None, q25, q75, None, repeat, samples, None]


def write_results(folder: Path, doc: object, names: dict[str, list[str]] | None = None) -> Path:
    """`doc` as folder/results/box/a1b2c3d4-py.json as asv lays it out, and benchmarks.json naming the parameters of
    the benchmarks in `names` one level up (none when `names` is None)."""
    path = folder / "results" / "box" / "a1b2c3d4-py.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    if names is not None:
        described = {name: {"name": name, "param_names": params, "params": [], "type": "time", "unit": "seconds"}
                     for name, params in names.items()}
        (folder / "results" / "benchmarks.json").write_text(json.dumps({**described, "version": 2}))
    return path


# --- real files (tests/inputs/asv/README.md) -------------------------------------------------------------------------

def test_read_asv_version_2_with_benchmarks_json() -> None:
    run = read_asv(BARTZ)

    assert run.parameters == ("niters", "nchains")
    by_kernel = {(s.kernel, s.metric): s for s in run.series}
    assert len(by_kernel) == 19
    cold = by_kernel["speed.TimeGbart.time_gbart[cold]", "time"]  # NaN results (skipped) are left out
    warm = by_kernel["speed.TimeGbart.time_gbart[warm]", "time"]
    assert cold.points.tolist() == [[0, 1], [10, 1]]
    assert warm.points.tolist() == [[0, 1], [10, 1], [10, 2], [10, 8], [10, 32]]
    assert cold.unit == "s" and cold.values.shape == (2, 10)
    assert by_kernel["speed.TimeRunMcmc.time_run_mcmc[run, cold]", "time"].points.tolist() == [[0, 1], [10, 1]]
    step = by_kernel["speed.TimeStep.time_step[compile, plain]", "time"]
    assert step.points.tolist() == [[1, 1]]  # neither parameter: the value a benchmark without it gets
    track = by_kernel["rmse.EvalGbart.track_rmse", "track"]
    assert (track.unit, track.values.tolist(), track.note) == ("latent_sdev", [[0.5359137058258057]], "")
    assert run.meta["commit"] == "1119f48ff708d49d1a31965ffa0fe540a23cab1d"
    assert json.loads(run.meta["machine"]) == {"cpu": "Apple M1 Pro", "cores": "8", "host": "gattocrucco-m1",
                                               "os": "Darwin-arm64"}


def test_read_asv_version_2_spreads_median_and_quartiles_into_normal_scores() -> None:
    step = next(s for s in read_asv(BARTZ).series if s.kernel == "speed.TimeStep.time_step[compile, plain]")
    median, q25, q75 = 0.8965204374981113, 0.87863, 0.92631  # the file's result, stats_q_25, stats_q_75
    normal = NormalDist()
    z = [normal.inv_cdf((i + 0.5) / 10) for i in range(10)]  # stats_repeat is 10
    expected = [median + zi * ((median - q25) if zi < 0 else (q75 - median)) / Z75 for zi in z]
    np.testing.assert_allclose(step.values[0], expected, rtol=1e-12)
    assert step.values[0][4] < median < step.values[0][5]  # an even count: asv's median lies between the middle two
    assert np.quantile(step.values[0], [0.25, 0.75]) == pytest.approx([q25, q75], rel=0.02)
    assert step.note == ("asv summary of 10 samples, no samples recorded (asv run --record-samples keeps them): "
                         "10 values spread over the median and quartiles (normal tails)")


def test_read_asv_without_benchmarks_json_names_parameters_by_position(tmp_path: Path) -> None:
    path = tmp_path / "gattocrucco-m1" / BARTZ.name
    path.parent.mkdir()
    shutil.copy(BARTZ, path)

    run = read_measurements(path)
    assert run.parameters == ("param1", "param3", "param2")
    gbart = next(s for s in run.series if s.kernel == "speed.TimeGbart.time_gbart[cold]")
    assert gbart.points.tolist() == [[0, 1, 1], [10, 1, 1]]
    assert gbart.note.endswith(f"; parameters named param1, param2, ... by position: asv's benchmarks.json, which "
                               f"names them, is not at {tmp_path / 'benchmarks.json'}")
    track = next(s for s in run.series if s.metric == "track")
    assert track.note == "" and track.unit == ""  # the type comes from the name, the unit from benchmarks.json


def test_read_asv_version_1_with_min_max_and_failed_benchmarks() -> None:
    raw = json.loads(NAPARI.read_text())["results"]
    run = read_measurements(NAPARI)

    assert run.parameters == ("param1",)  # napari left its parameters unnamed: asv calls them param1
    kernels = {s.kernel for s in run.series}
    assert len(kernels) == 25
    failed = [name for name, value in raw.items() if value is None]
    assert len(failed) == 5 and not kernels & set(failed)
    mem = next(s for s in run.series if s.kernel == "benchmark_image_layer.Image2DSuite.mem_data")
    assert (mem.metric, mem.unit) == ("memory", "bytes")
    assert mem.points.ravel().tolist() == [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    assert mem.values.ravel().tolist() == raw["benchmark_image_layer.Image2DSuite.mem_data"]["result"]
    layer = next(s for s in run.series if s.kernel == "benchmark_image_layer.ImageSuite.time_create_layer")
    stats = raw["benchmark_image_layer.ImageSuite.time_create_layer"]["stats"][0]
    low, q25, median, q75, high = (stats["min"], stats["q_25"],
                                   raw["benchmark_image_layer.ImageSuite.time_create_layer"]["result"][0],
                                   stats["q_75"], stats["max"])
    knots = np.interp((np.arange(10) + 0.5) / 10, [0, 0.25, 0.5, 0.75, 1], [low, q25, median, q75, high])
    np.testing.assert_allclose(layer.values[0], knots, rtol=1e-12)
    assert layer.note == ("asv summary of 10 samples, no samples recorded (asv run --record-samples keeps them): 10 "
                          "values spread over min, quartiles and max; parameters named param1, param2, ... by "
                          f"position: {NAPARI.parent.parent / 'benchmarks.json'} does not describe this benchmark")


def test_read_asv_version_1_bare_values() -> None:
    run = read_measurements(PSYGNAL)
    assert run.parameters == ()
    mem = next(s for s in run.series if s.kernel == "benchmarks.MemSuite.mem_list")
    assert mem.values.tolist() == [[2104]] and mem.metric == "memory"
    assert len(run.series) == 5


@pytest.mark.parametrize("path", [BARTZ, BARTZ_BEFORE, NAPARI, PSYGNAL], ids=lambda p: p.parent.parent.name)
def test_detect_format_knows_asv_results(path: Path) -> None:
    assert detect_format(path) == "asv"


def test_is_asv_is_strict_about_asv_keys() -> None:
    assert is_asv(results({}))
    assert is_asv(json.loads(NAPARI.read_text())) and is_asv(json.loads(PSYGNAL.read_text()))
    assert not is_asv({k: v for k, v in results({}).items() if k != "result_columns"})  # version 2 needs them
    assert not is_asv({k: v for k, v in results({}).items() if k != "commit_hash"})
    assert not is_asv({**results({}), "version": "2"})
    assert is_asv({**results({}), "results": []})  # the reader says what is wrong
    assert not is_asv({"results": [{"command": "sleep 1", "times": [1.0]}]})  # hyperfine
    assert not is_asv([results({})])


# --- samples, summaries, names ---------------------------------------------------------------------------------------

def test_recorded_samples_are_the_repetitions(tmp_path: Path) -> None:
    doc = results({"bench.Sort.time_sort": row([0.2, 0.4], [["100", "200"], ["'merge'"]],
                                               samples=[[0.1, 0.2, 0.3], [0.4, 0.5]], q25=[0.15, 0.45],
                                               q75=[0.25, 0.45], repeat=[3, 2])})
    run = read_measurements(write_results(tmp_path, doc, {"bench.Sort.time_sort": ["n", "algo"]}))
    (s,) = run.series
    assert (s.kernel, run.parameters, s.note) == ("bench.Sort.time_sort[merge]", ("n",), "")
    np.testing.assert_array_equal(s.values, [[0.1, 0.2, 0.3], [0.4, 0.5, np.nan]])


def test_parameter_values_numeric_only_when_all_are(tmp_path: Path) -> None:
    doc = results({"b.time_x": row([1.0, 2.0, 3.0, 4.0], [["None", "0.0"], ["np.int64(8)", "1e-05"]]),
                   "b.time_y": row([1.0, 2.0], [["True", "False"]])})
    run = read_asv_text(json.dumps(doc), tmp_path / "r.json")
    assert run.parameters == ("param2",)
    assert {s.kernel: s.points.ravel().tolist() for s in run.series} == {
        "b.time_x[None]": [1e-05, 8.0], "b.time_x[0.0]": [1e-05, 8.0], "b.time_y[True]": [1.0],
        "b.time_y[False]": [1.0]}


def test_a_result_without_quartiles_is_one_value_and_a_time_says_so(tmp_path: Path) -> None:
    doc = results({"b.time_x": row([1.5]), "b.mem_x": row([64]), "b.peakmem_x": row([1024]),
                   "b.track_x": row([-3])})
    run = read_asv_text(json.dumps(doc), tmp_path / "r.json")
    found = {s.kernel: (s.metric, s.unit, s.values.tolist(), s.note) for s in run.series}
    assert found == {"b.time_x": ("time", "s", [[1.5]], "asv gave the median only (no samples, no quartiles)"),
                     "b.mem_x": ("memory", "bytes", [[64.0]], ""),
                     "b.peakmem_x": ("peakmemory", "bytes", [[1024.0]], ""),
                     "b.track_x": ("track", "", [[-3.0]], "")}


def test_a_foreign_benchmarks_json_is_not_used(tmp_path: Path) -> None:
    path = write_results(tmp_path, results({"b.time_x": row([1.0, 2.0], [["1", "2"]])}))
    (tmp_path / "results" / "benchmarks.json").write_text('{"context": {}, "benchmarks": []}')
    assert read_measurements(path).parameters == ("param1",)


@pytest.mark.parametrize("kind", [{"time": 1}, ["time"], 7, None, "timing"])
def test_a_benchmark_type_asv_does_not_write_falls_back_to_the_name(tmp_path: Path, kind: object) -> None:
    path = write_results(tmp_path, results({"b.mem_x": row([64, 128], [["1", "2"]])}), {"b.mem_x": ["n"]})
    described = json.loads((tmp_path / "results" / "benchmarks.json").read_text())
    described["b.mem_x"]["type"] = kind
    (tmp_path / "results" / "benchmarks.json").write_text(json.dumps(described))
    (s,) = read_measurements(path).series
    assert (s.metric, s.unit, s.points.ravel().tolist()) == ("memory", "bytes", [1.0, 2.0])


def test_a_broken_benchmarks_json_is_an_error_naming_it(tmp_path: Path) -> None:
    path = write_results(tmp_path, results({"b.time_x": row([1.0, 2.0], [["1", "2"]])}))
    (tmp_path / "results" / "benchmarks.json").write_text('{"b.time_x": {\n')
    with pytest.raises(InputError, match=r"results/benchmarks\.json:2: not valid JSON"):
        read_measurements(path)


# --- errors ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("doc, message", [
    ([], "r.json:1: the top level must be an object (an asv results file), got a list"),
    (results({}, version=3), "r.json: top level: unsupported asv results version 3; scalecheck reads versions 1 and 2"),
    ({k: v for k, v in results({}).items() if k != "result_columns"},
     "r.json: top level: missing key 'result_columns': not an asv results file"),
    (results({}, result_columns=["params"]),
     'r.json: result_columns: "result_columns" must be a list of column names with "result", got ["params"]'),
    (results({"b.time_x": {"result": 1}}),
     "r.json:1: benchmark 'b.time_x': a benchmark's results must be a list (one entry per column of result_columns), "
     "got an object"),
    (results({"b.time_x": row([1.0], [["1", "2"]])}),
     "r.json:1: benchmark 'b.time_x': 1 result(s) for 2 combination(s) of the parameter values"),
    (results({"b.time_x": row([1.0], [[1]])}),
     "r.json:1: benchmark 'b.time_x': 'params' must be a list of lists of parameter values (their reprs), got [[1]]"),
    (results({"b.time_x": row([1.0, 2.0], [["1", "2"]], samples=[[1.0]])}),
     "r.json:1: benchmark 'b.time_x': 'samples' must be a list with one entry per combination of the parameter "
     "values, got [[1.0]]"),
    (results({"b.time_x": row(["fast"])}), "r.json:1: benchmark 'b.time_x': the result must be a number, got 'fast'"),
    (results({"b.time_x": row([1.0], samples=[[0.5, -0.1]])}),
     "r.json:1: benchmark 'b.time_x': metric 'time' is a time but has a negative value -0.1"),
    (results({"b.time_x": row([1.0], [["1"]], q25="x")}),
     "r.json:1: benchmark 'b.time_x': 'stats_q_25' must be a list (one entry per combination) or null, got a string"),
    (results({"b.time_x": row([None, float("nan")], [["1", "2"]]), "b.time_y": [None]}),
     "r.json: no benchmark has a result: each failed, timed out or was skipped"),
], ids=["top-list", "version-3", "no-columns", "columns-without-result", "row-object", "count", "params-numbers",
        "samples-count", "result-text", "negative-sample", "stats-text", "all-failed"])
def test_errors_name_file_and_benchmark(tmp_path: Path, doc: object, message: str) -> None:
    with pytest.raises(InputError) as info:
        read_asv_text(json.dumps(doc), Path("r.json"))
    assert str(info.value).split("; fix: ")[0] == message
    assert info.value.fix


def test_a_damaged_asv_file_gets_the_asv_reader_s_error(tmp_path: Path) -> None:
    path = write_results(tmp_path, results({}, results=[]))
    with pytest.raises(InputError) as info:
        read_measurements(path)
    assert str(info.value).split("; fix: ")[0] == f'{path}: top level: "results" must be an object, got a list'


@pytest.mark.parametrize("name", ["benchmarks.json", "czipa1osx041/machine.json"])
def test_asv_s_other_files_are_refused_by_name(name: str) -> None:
    # the machine.json beside napari's results file in napari's repository (tests/inputs/asv/README.md)
    machine = {"arch": "x86_64", "cpu": "Intel(R) Core(TM) i7-7567U CPU @ 3.50GHz", "machine": "czipa1osx041",
               "num_cpu": "4", "os": "Darwin 18.5.0", "ram": "17179869184", "version": 1}
    text = (DIR / "napari" / "benchmarks.json").read_text() if name == "benchmarks.json" else json.dumps(machine)
    doc = json.loads(text)
    assert is_asv(doc)
    with pytest.raises(InputError) as info:
        read_measurements_text(text, name, "asv")
    what = "the benchmarks' descriptions" if name == "benchmarks.json" else "the machine's description"
    assert str(info.value) == (f"{name}: this is asv's {Path(name).name} ({what}), not a results file; fix: name "
                               "asv's results files, .asv/results/MACHINE/COMMIT-ENV.json (scalecheck reads "
                               "benchmarks.json from there itself)")


def test_a_newer_version_says_to_upgrade() -> None:
    with pytest.raises(InputError) as info:
        read_asv_text(json.dumps(results({}, version=3)), Path("r.json"))
    assert info.value.fix == "upgrade scalecheck, or let asv upgrade the file (asv update)"


# --- the command line ------------------------------------------------------------------------------------------------

def test_cli_model_reads_an_asv_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "models.json"
    assert main(["model", str(NAPARI), "--json", str(out)]) == OK
    models = {m["kernel"]: m for m in json.loads(out.read_text())["models"]}
    assert models["benchmark_image_layer.Image2DSuite.mem_data"]["growth"] == "param1^2"
    assert models["benchmark_image_layer.Image3DSuite.mem_data"]["growth"] == "param1^3"


SIZES = (64, 128, 256, 512, 1024, 2048)


def planted(folder: Path, growth: str, seed: int) -> Path:
    """An asv file of bench.Sort.time_sort with recorded samples: 2 us * f(n) with 3% noise (seeded)."""
    rng = np.random.default_rng(seed)
    f = {"n log n": lambda n: n * np.log2(n), "n^2": lambda n: n * n / 11.0}[growth]
    samples = [[float(2e-6 * f(n) * (1 + 0.03 * rng.standard_normal())) for _ in range(7)] for n in SIZES]
    doc = results({"bench.Sort.time_sort": row([float(np.median(s)) for s in samples], [[str(n) for n in SIZES]],
                                               samples=samples)})
    return write_results(folder, doc, {"bench.Sort.time_sort": ["n"]})


def test_cli_check_of_asv_files_fails_on_a_worse_growth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    base = planted(tmp_path / "base", "n log n", 1)
    again = planted(tmp_path / "again", "n log n", 2)
    worse = planted(tmp_path / "worse", "n^2", 3)

    assert main(["check", str(again), "--baseline", str(base), "--bootstrap", "20"]) == OK
    capsys.readouterr()
    assert main(["check", str(worse), "--baseline", str(base), "--bootstrap", "20"]) == REGRESSION
    out = capsys.readouterr().out
    growth = next(line for line in out.splitlines() if line.startswith("error ") and " growth " in line)
    assert growth.split()[:4] == ["error", "growth", "bench.Sort.time_sort", "time"]


def test_cli_check_of_real_asv_files_of_two_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", str(BARTZ), "--baseline", str(BARTZ_BEFORE), "--bootstrap", "20"]) == OK


def test_cli_bad_asv_file_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path, results({"b.time_x": row([1.0], [["1", "2"]])}))
    assert main(["model", str(path)]) == USAGE_ERROR
    assert capsys.readouterr().err == (
        f"scalecheck: error: {path}:1: benchmark 'b.time_x': 1 result(s) for 2 combination(s) of the parameter "
        "values; fix: read the results file that asv run writes (.asv/results/MACHINE/COMMIT-ENV.json)\n")


# --- a real `asv run` ------------------------------------------------------------------------------------------------

SUITE = '''
    class Sort:
        params = ([100, 200, 400, 800], ["sorted", "reversed"])
        param_names = ["n", "order"]
        repeat = (3, 4, 1.0)
        number = 1
        warmup_time = 0
        rounds = 1

        def setup(self, n, order):
            self.data = list(range(n)) if order == "sorted" else list(range(n, 0, -1))

        def time_sort(self, n, order):
            sorted(self.data)

        def track_length(self, n, order):
            return n
    '''


def test_real_asv_run_gives_samples_and_parameter_names(tmp_path: Path) -> None:
    try:
        import asv  # noqa: F401
    except ImportError:
        missing_tool("asv is not installed (pip install asv)")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "__init__.py").write_text("")
    (tmp_path / "benchmarks" / "bench_sort.py").write_text(textwrap.dedent(SUITE))
    (tmp_path / "asv.conf.json").write_text(json.dumps({
        "version": 1, "project": "demo", "repo": ".", "branches": ["HEAD"], "environment_type": "existing",
        "benchmark_dir": "benchmarks", "results_dir": ".asv/results", "html_dir": ".asv/html"}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "ASV"))}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(tmp_path)}
    for command in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "suite"]):
        subprocess.run(command, cwd=tmp_path, env=env, check=True, capture_output=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, env=env, check=True, capture_output=True,
                            text=True).stdout.strip()
    asv = [sys.executable, "-m", "asv"]
    subprocess.run([*asv, "machine", "--yes", "--machine", "box"], cwd=tmp_path, env=env, check=True,
                   capture_output=True, timeout=60)
    done = subprocess.run([*asv, "run", "-E", f"existing:{sys.executable}", "--record-samples", "--machine", "box",
                           "--set-commit-hash", commit], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = (tmp_path / ".asv" / "results" / "box").glob(f"{commit[:8]}-*.json")

    run = read_measurements(path)
    assert run.parameters == ("n",)
    by_kernel = {(s.kernel, s.metric): s for s in run.series}
    assert sorted(by_kernel) == [("bench_sort.Sort.time_sort[reversed]", "time"),
                                 ("bench_sort.Sort.time_sort[sorted]", "time"),
                                 ("bench_sort.Sort.track_length[reversed]", "track"),
                                 ("bench_sort.Sort.track_length[sorted]", "track")]
    times = by_kernel["bench_sort.Sort.time_sort[sorted]", "time"]
    assert times.points.ravel().tolist() == [100, 200, 400, 800] and times.note == ""
    assert 3 <= times.values.shape[1] <= 8 and np.all(times.values[~np.isnan(times.values)] > 0)  # the samples
    assert by_kernel["bench_sort.Sort.track_length[sorted]", "track"].values.ravel().tolist() == [100, 200, 400, 800]
