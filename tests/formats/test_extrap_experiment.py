"""Extra-P experiment files (.extra-p): measurements, kept values, Extra-P's models as notes, and bad archives."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from scalecheck.cli import USAGE_ERROR, main
from scalecheck.errors import InputError
from scalecheck.formats import read_measurements, read_measurements_bytes
from scalecheck.formats.extrap_experiment import _function_text, read_extrap_experiment_bytes
from tests.conftest import missing_tool

INPUTS = Path(__file__).parent.parent / "inputs"
DIR = INPUTS / "extrap-experiment"
SAMPLE = DIR / "two_parameter3.txt.extra-p"  # Extra-P's sample: statistics only
TEXT = DIR / "two_parameter_3.txt"  # the text input it was made from: 25 points x 5 repetitions
KEPT = DIR / "two_parameter_3.keep-values.extra-p"  # the same, saved by Extra-P 4.2.5 with --keep-values
SAMPLE_MODEL = "Extra-P: 1.374 + 6.698 * log2(y) + 0.04384 * x^(3/2) * log2(x)^2 * log2(y)"


def table(run) -> dict[tuple[str, str], object]:
    return {(s.kernel, s.metric): s for s in run.series}


def experiment(doc: object, members: Mapping[str, bytes] | None = None) -> bytes:
    """A zip archive holding experiment.json (`doc`, or text as given) and `members`, as Extra-P writes one."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in (members or {}).items():
            archive.writestr(name, data)
        archive.writestr("experiment.json", doc if isinstance(doc, (str, bytes)) else json.dumps(doc))
    return out.getvalue()


def kept_values(arrays: Sequence[bytes]) -> dict[str, bytes]:
    """values/0.vals and values/0.indx holding the NumPy arrays (.npy bytes) `arrays`, as Extra-P writes them."""
    vals, offsets = b"Extra-P VALUES\0\0", []
    for array in arrays:
        offsets.append(len(vals))
        vals += array
    indx = b"Extra-P INDEX\0\0\0" + struct.pack("<Q", len(offsets)) + struct.pack(f"<{len(offsets)}Q", *offsets)
    return {"values/0.vals": vals, "values/0.indx": indx}


def npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=True)
    return out.getvalue()


def claimed(shape: tuple[int, ...]) -> bytes:
    """An .npy header giving `shape` (float64), followed by two numbers only."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return out.getvalue() + np.ones(2).tobytes()


def doc_with(entry: Mapping[str, object], parameters: Sequence[str] = ("p",)) -> dict[str, object]:
    return {"Extra-P": "4.2.5", "parameters": list(parameters), "measurements": {"main": {"time": [entry]}}}


def problem_of(raw: bytes, name: str = "exp.extra-p") -> str:
    """The one-line error of reading the experiment `raw`; every error has a fix."""
    with pytest.raises(InputError) as info:
        read_measurements_bytes(raw, Path(name))
    assert info.value.fix
    return str(info.value)


# --- what Extra-P saved, against what it was made from ------------------------------------------------------------

def test_sample_without_values_reads_the_mean_of_each_point() -> None:
    experiment_run, text_run = read_measurements(SAMPLE), read_measurements(TEXT)

    assert experiment_run.parameters == text_run.parameters == ("x", "y")
    ours, theirs = table(experiment_run), table(text_run)
    assert sorted(ours) == sorted(theirs) == [("merge", "flops"), ("merge", "time"), ("sort", "flops"),
                                               ("sort", "time")]
    for key, text in theirs.items():
        np.testing.assert_array_equal(ours[key].points, text.points)  # 25 points, x 20..60, y 1..5
        assert ours[key].values.shape == (25, 1)  # Extra-P kept 5 repetitions as statistics only
        np.testing.assert_allclose(ours[key].values[:, 0], text.values.mean(axis=1), rtol=1e-12)
        assert ours[key].note == SAMPLE_MODEL


def test_kept_values_are_the_repetitions_of_the_text_input() -> None:
    ours, theirs = table(read_measurements(KEPT)), table(read_measurements(TEXT))
    assert sorted(ours) == sorted(theirs)
    for key, text in theirs.items():
        np.testing.assert_array_equal(ours[key].points, text.points)
        np.testing.assert_array_equal(ours[key].values, text.values)  # (25, 5), bit for bit
        assert ours[key].note.startswith("Extra-P: ")


def test_single_values_are_read_as_the_text_input() -> None:
    ours = table(read_measurements(DIR / "mpi_data_mean.extra-p"))
    theirs = table(read_measurements(INPUTS / "extrap" / "mpi_data_mean.txt"))
    assert sorted(ours) == sorted(theirs) and len(ours) == 14
    for key, text in theirs.items():
        np.testing.assert_array_equal(ours[key].values, text.values)
    assert ours["IntelMPI->MPI_Allgather", "time"].note == "Extra-P: 138.1 + 0.0007457 * p^(8/3)"
    assert ours["IntelMPI->MPI_Barrier", "time"].note == "Extra-P: 9.91 + 0.01848 * p * log2(p)"


def test_values_by_thread_are_averaged_per_repetition_over_the_threads_that_ran() -> None:
    try:
        from scalecheck.formats.cube import read_cube_directory

        cube = table(read_cube_directory(INPUTS / "cube" / "simple_threaded", "weak_threaded"))
    except InputError:
        missing_tool("pycubexr is not installed: pip install 'scalecheck[cube]'")
    ours = table(read_measurements(DIR / "simple_threaded.weak_threaded.extra-p"))  # repetitions x threads
    assert sorted(ours) == sorted(cube)
    for key, series in cube.items():
        np.testing.assert_allclose(ours[key].values, series.values, rtol=1e-12)
    assert ours["main->foo", "time"].values[:, 0].tolist() == pytest.approx([4.95, 9.9, 14.85, 19.8, 24.75])


def test_older_experiments_without_repetitions_read_the_same() -> None:
    old = table(read_measurements(DIR / "exp_only_mean_median.extra-p"))  # saved by Extra-P 4.0.3
    new = table(read_measurements(SAMPLE))
    assert sorted(old) == sorted(new)
    for key, series in new.items():
        np.testing.assert_array_equal(old[key].values, series.values)


def test_an_experiment_from_git_history_is_read_from_its_bytes() -> None:
    run = read_measurements_bytes(SAMPLE.read_bytes(), "1a2b3c4:bench/exp.extra-p")
    assert str(run.series[0].source) == "1a2b3c4:bench/exp.extra-p: kernel 'merge', metric 'time'"


def test_mean_then_median_when_no_values_were_kept() -> None:
    entry = {"coordinate": [2], "median": 1.5, "mean": 1.75, "minimum": 1, "maximum": 3, "std": 0.5}
    median_only = {"coordinate": [4], "median": 2.5}
    doc = {"parameters": ["p"], "measurements": {"main": {"time": [entry, median_only]}}}
    run = read_extrap_experiment_bytes(experiment(doc), Path("exp.extra-p"))
    assert run.series[0].values.tolist() == [[1.75], [2.5]]
    assert run.series[0].note == ""  # no model set


def test_kept_arrays_of_any_layout_numpy_writes(series_of) -> None:
    arrays = [np.array([1.0, 2.0, 3.0]), np.asfortranarray([[1.0, 3.0], [2.0, 6.0]]), np.array(7, dtype="<i8"),
              np.array([4, 5], dtype=">u4")]
    entries = [{"coordinate": [p], "mean": 0, "values": [0, k]} for k, p in enumerate((1, 2, 3, 4))]
    doc = {"parameters": ["p"], "measurements": {"main": {"time": entries}}}
    run = read_extrap_experiment_bytes(experiment(doc, kept_values([npy(a) for a in arrays])), Path("e.extra-p"))
    np.testing.assert_array_equal(run.series[0].values, [[1, 2, 3], [2, 4, np.nan], [7, np.nan, np.nan],
                                                          [4, 5, np.nan]])  # rows of (2, 2): means over locations


# --- Extra-P's model of each series, as scalecheck writes models ----------------------------------------------------

@pytest.mark.parametrize("function, parameters, text", [
    ({"$type": "ConstantFunction", "constant_coefficient": 13.9}, ("p",), "13.9"),
    ({"$type": "SingleParameterFunction", "constant_coefficient": -434.5, "compound_terms": [
        {"coefficient": 17.15, "simple_terms": [{"term_type": "polynomial", "exponent": "2/3"},
                                                {"term_type": "logarithm", "exponent": 1.0}]}]},
     ("p",), "-434.5 + 17.15 * p^(2/3) * log2(p)"),
    ({"$type": "SingleParameterFunction", "constant_coefficient": 2.0, "compound_terms": [
        {"coefficient": -0.5, "simple_terms": [{"term_type": "polynomial", "exponent": -1.0}]}]},
     ("p",), "2 - 0.5 * p^-1"),  # strong scaling: a falling term
    ({"$type": "MultiParameterFunction", "constant_coefficient": 64.6, "compound_terms": [
        {"coefficient": 0.5, "parameter_term_pairs": {
            "1": {"coefficient": 2.0, "simple_terms": [{"term_type": "polynomial", "exponent": 1.0}]},
            "0": {"coefficient": 1.0, "simple_terms": [{"term_type": "logarithm", "exponent": 2.0}]}}}]},
     ("p", "n"), "64.6 + 1 * log2(p)^2 * n"),
    ({"$type": "SegmentedFunction", "segments": []}, ("p",), None),  # one model per segment: not shown
    ({"$type": "SingleParameterFunction", "constant_coefficient": 1.0, "compound_terms": []}, ("p", "n"), None),
    ({"$type": "SingleParameterFunction", "constant_coefficient": "1"}, ("p",), None),
    ({"$type": "MultiParameterFunction", "constant_coefficient": 1.0, "compound_terms": [
        {"coefficient": 1.0, "parameter_term_pairs": {"5": {"simple_terms": []}}}]}, ("p",), None),
    ({"$type": "SingleParameterFunction", "constant_coefficient": 1.0, "compound_terms": [
        {"coefficient": 1.0, "simple_terms": [{"term_type": "exponential", "exponent": 1.0}]}]}, ("p",), None),
    (["not", "a", "function"], ("p",), None),
])
def test_extrap_functions_are_written_as_scalecheck_writes_models(function: object, parameters: tuple[str, ...],
                                                                  text: str | None) -> None:
    assert _function_text(function, parameters) == text


def test_a_malformed_model_set_leaves_the_measurements_read() -> None:
    doc = {**doc_with({"coordinate": [2], "mean": 1.0}), "modelers": [{"models": {"main": {"time": "?"}}}, 7]}
    assert read_extrap_experiment_bytes(experiment(doc), Path("e.extra-p")).series[0].note == ""


# --- what is not an Extra-P experiment: one line naming what is missing, and the fix ------------------------------

SAVE = ("fix: save the experiment with Extra-P 4 (extrap --save-experiment FILE, or File > Save experiment); for "
        "another zip archive, extract the measurement files (unzip FILE) and name them")
WHOLE = ("fix: check that this is an Extra-P experiment (.extra-p) and that it was copied whole; save it again if "
         "not")


def other_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("results.csv", "kernel,p,value\n")
    return out.getvalue()


def lying_directory() -> bytes:
    """An experiment whose zip directory gives experiment.json 100 bytes, though it expands to a megabyte."""
    raw = bytearray(experiment("{" + " " * 2**20 + "}"))
    central = raw.index(b"PK\x01\x02")
    raw[central + 24: central + 28] = struct.pack("<I", 100)  # the uncompressed size in the central directory
    return bytes(raw)


@pytest.mark.parametrize("raw, problem", [
    (other_zip(), f"exp.extra-p: not an Extra-P experiment: the zip archive holds no experiment.json; {SAVE}"),
    (SAMPLE.read_bytes()[:-200], f"exp.extra-p: not a readable zip archive (BadZipFile: File is not a zip file); "
                                 f"{WHOLE}"),
    (lying_directory(), f"exp.extra-p: not a readable zip archive (BadZipFile: Bad CRC-32 for file 'experiment.json'); "
                        f"{WHOLE}"),
    (experiment("{"), f"exp.extra-p: experiment.json is not valid JSON: Expecting property name "
                      f"enclosed in double quotes (line 1, column 2); {WHOLE}"),
    (experiment(b'{"parameters": ["\xff"]}'), f"exp.extra-p: experiment.json is not UTF-8 text (byte 0xff at offset "
                                            f"17); {WHOLE}"),
    (experiment("[" * 100_000 + "]" * 100_000), f"exp.extra-p: experiment.json is nested too deeply; {WHOLE}"),
    (experiment("[1, 2]"), f"exp.extra-p: not an Extra-P experiment: experiment.json holds a list, not an object; "
                           f"{SAVE}"),
    (experiment({"parameters": ["p"]}), f'exp.extra-p: not an Extra-P experiment: experiment.json has no '
                                        f'"measurements"; {SAVE}'),
    (experiment({"parameters": "p", "measurements": {}}),
     'exp.extra-p: experiment.json: parameters: "parameters" must be a non-empty list of names, got a string; fix: '
     'declare the parameters as a list of names, e.g. "parameters": ["p", "n"]'),
    (experiment({"parameters": ["p"], "measurements": {}}),
     "exp.extra-p: the file holds no measurements; fix: check that the benchmark wrote its results to this file"),
    (experiment(doc_with({"coordinate": [2, 3], "mean": 1.0})),
     f'exp.extra-p: experiment.json: measurements["main"]["time"][0]: the coordinate [2, 3] has 2 value(s) but the '
     f"experiment has 1 parameter(s) (p); {WHOLE}"),
    (experiment(doc_with({"coordinate": ["two"], "mean": 1.0})),
     f'exp.extra-p: experiment.json: measurements["main"]["time"][0]: parameter \'p\' must be a number, got \'two\'; '
     f"{WHOLE}"),
    (experiment(doc_with({"coordinate": [2], "std": 1.0})),
     f'exp.extra-p: experiment.json: measurements["main"]["time"][0]: the measurement has neither values nor a mean; '
     f"{WHOLE}"),
    (experiment(doc_with({"coordinate": [2], "mean": -1.0})),
     "exp.extra-p: experiment.json: measurements[\"main\"][\"time\"][0]: metric 'time' is a time but has a negative "
     "value -1; fix: times cannot be negative: correct the value or the timer that produced it"),
    (experiment(doc_with({"coordinate": [2], "values": [0, 0]})),
     f"exp.extra-p: experiment.json: measurements[\"main\"][\"time\"][0]: 'values' refers to values/0.vals, which "
     f"the experiment does not hold; {WHOLE}"),
    (experiment(doc_with({"coordinate": [2], "values": [0, -1]})),
     f"exp.extra-p: experiment.json: measurements[\"main\"][\"time\"][0]: 'values' must be null or [chunk, index], "
     f"got [0, -1]; {WHOLE}"),
    (experiment(doc_with({"coordinate": [2], "values": [0, 1]}), kept_values([npy(np.ones(3))])),
     f"exp.extra-p: experiment.json: measurements[\"main\"][\"time\"][0]: 'values' names array 1 of "
     f"values/0.indx, which lists 1; {WHOLE}"),
    (experiment(doc_with({"coordinate": [2], "values": [0, 0]}), kept_values([npy(np.array([{"a": 1}]))])),
     f"exp.extra-p: experiment.json: measurements[\"main\"][\"time\"][0]: values/0.vals: the array at offset 16 is "
     f"not 1 numbers (|O) in the file; {WHOLE}"),  # a pickled object is never loaded
    (experiment(doc_with({"coordinate": [2], "values": [0, 0]}), kept_values([claimed((2_000_000_000,))])),
     f"exp.extra-p: experiment.json: measurements[\"main\"][\"time\"][0]: values/0.vals: the array at offset 16 is "
     f"not 2,000,000,000 numbers (<f8) in the file; {WHOLE}"),  # refused before anything is allocated
    (experiment(doc_with({"coordinate": [2], "values": [0, 0]}), kept_values([b"not an array"])),
     f"exp.extra-p: experiment.json: measurements[\"main\"][\"time\"][0]: values/0.vals holds no NumPy array at "
     f"offset 16 (ValueError: the magic string is not correct; expected b'\\x93NUMPY', got b'not an'); {WHOLE}"),
])
def test_what_is_not_an_experiment_is_one_line(raw: bytes, problem: str) -> None:
    assert problem_of(raw) == problem


def test_sizes_are_checked_in_the_zip_directory_before_anything_expands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("scalecheck.formats.extrap_experiment.MAX_EXPERIMENT_BYTES", 2**14)
    assert problem_of(SAMPLE.read_bytes()) == (
        "exp.extra-p: experiment.json expands to 24,693 bytes, more than the 0.015625 MiB scalecheck reads from it; "
        "fix: save fewer call paths or metrics in one experiment (several experiments are merged when named "
        "together), or save it without --keep-values")
    monkeypatch.setattr("scalecheck.formats.extrap_experiment.MAX_EXPERIMENT_BYTES", 2**15)
    monkeypatch.setattr("scalecheck.formats.extrap_experiment.MAX_ARCHIVE_BYTES", 2**14)
    assert problem_of(KEPT.read_bytes()) == (
        "exp.extra-p: the kept values expand to 17,640 bytes, more than the 0.015625 MiB scalecheck reads from one "
        "experiment; fix: save fewer call paths or metrics in one experiment (several experiments are merged when "
        "named together), or save it without --keep-values")


# --- the command line ---------------------------------------------------------------------------------------------

def test_model_shows_extrap_model_beside_scalecheck(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no settings file of the project
    assert main(["model", str(SAMPLE), "--metric", "time"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].split()[:2] == ["merge", "time"] and out[3].split()[:2] == ["sort", "time"]
    assert f"  merge [time]: {SAMPLE_MODEL}" in out


def test_check_compares_an_experiment_with_its_text_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", str(KEPT), "--baseline", str(TEXT), "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: no new scalability problem")
    assert "4 kernel(s): 4 compared" in out


def test_a_foreign_zip_is_one_line_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "results.zip"
    path.write_bytes(other_zip())
    assert main(["model", str(path)]) == USAGE_ERROR
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"scalecheck: error: {path}: not an Extra-P experiment: the zip archive holds no experiment.json; " \
                  f"{SAVE}\n"
