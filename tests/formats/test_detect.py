"""detect_format: by extension, then by the first meaningful line."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalecheck.errors import InputError
from scalecheck.formats import ARCHIVE_FORMATS, FORMATS, FORMAT_NAMES, detect_format

INPUTS = Path(__file__).parent.parent / "inputs"

REAL = {
    "mpi_data_mean.txt": "extrap-text",
    "relearn_data.txt": "extrap-text",
    "one_parameter_segmented_1.txt": "extrap-text",
    "two_parameter_segmented_1.txt": "extrap-text",
    "cube_single_parameter.json": "extrap-json",
    "new_json_input2.json": "extrap-json",
    "legacy_input_1.JSON": "extrap-json",
    "extended2.jsonl": "jsonl",
    "talpas_1.txt": "talpas",
    "mpi_data.csv": "csv",
}


@pytest.mark.parametrize("name, fmt", REAL.items(), ids=REAL.keys())
def test_detect_format_of_real_extrap_files(name: str, fmt: str) -> None:
    assert detect_format(INPUTS / "extrap" / name) == fmt


@pytest.mark.parametrize("name", ["cube_multi_parameter.json", "experiment_3_mp.json"])
def test_detect_format_of_real_extrap_json_files(real_extrap_data: Path, name: str) -> None:
    assert detect_format(real_extrap_data / name) == "extrap-json"


@pytest.mark.parametrize("folder, fmt", [
    ("scalecheck-json", "scalecheck-json"), ("jsonl", "jsonl"), ("csv", "csv"), ("extrap-text", "extrap-text"),
    ("extrap-json", "extrap-json"), ("talpas", "talpas"),
])
def test_detect_format_of_good_test_inputs(folder: str, fmt: str) -> None:
    for path in sorted((INPUTS / folder).glob("ok_*")):
        if path.suffix != ".txt" or folder != "csv":  # ok_csv_in.txt is CSV in disguise, read with an override
            assert detect_format(path) == fmt, path.name


@pytest.mark.parametrize("text, fmt", [
    ('{"scalecheck": 1, "parameters": ["p"], "measurements": []}', "scalecheck-json"),
    ('{\n "parameters": ["p"],\n "measurements": {}\n}', "extrap-json"),
    ('{\n  "_note": "\\"scalecheck\\" in a string",\n  "parameters": [], "measurements": {}\n}', "extrap-json"),
    ('{"scalecheck": 1, "parameters": ["p"]}\n{"kernel": "k", "point": {"p": 1}, "value": 2}\n', "jsonl"),
    ('{"params": {"x": 1}, "value": 2}\n{"params": {"x": 2}, "value": 3}\n', "jsonl"),
])
def test_detect_format_of_json_files_by_content(make_file, text: str, fmt: str) -> None:
    assert detect_format(make_file("m.json", text)) == fmt


@pytest.mark.parametrize("text, fmt", [
    ("# comment\n\nPARAMETER p\n", "extrap-text"),
    ("REGION main\n", "extrap-text"),
    ('{"parameters":{"x":20};"metric":"time";"callpath":"c";"value":1}\n', "talpas"),
    ('{"kernel": "k", "point": {"p": 1}, "value": 2}\n', "jsonl"),
    ('{"scalecheck": 1, "parameters": ["p"], "measurements": []}\n', "scalecheck-json"),
    ('{\n  "scalecheck": 1,\n  "parameters": ["p"],\n  "measurements": []\n}\n', "scalecheck-json"),
    ('{\n  "parameters": ["p"],\n  "measurements": {}\n}\n', "extrap-json"),
])
def test_detect_format_of_other_names_by_first_line(make_file, text: str, fmt: str) -> None:
    assert detect_format(make_file("results.out", text)) == fmt


@pytest.mark.parametrize("name", ["m.jsonl", "m.ndjson", "M.CSV"])
def test_detect_format_by_extension_alone(make_file, name: str) -> None:
    assert detect_format(make_file(name, "anything")) == {"m.jsonl": "jsonl", "m.ndjson": "jsonl",
                                                          "M.CSV": "csv"}[name]


def test_detect_format_unknown_content_names_the_formats() -> None:
    with pytest.raises(InputError, match=r"ok_csv_in\.txt: cannot tell the format of this file") as info:
        detect_format(INPUTS / "csv" / "ok_csv_in.txt")
    assert info.value.fix == ("name it with --format (one of: scalecheck-json, jsonl, csv, extrap-text, "
                              "extrap-json, talpas, pytest-benchmark, google-benchmark, hyperfine, asv, cube, "
                              "extrap-experiment)")


@pytest.mark.parametrize("text", ["# only a comment\n", "name size time\nsort 10 0.5\n"])
def test_detect_format_unknown_text_is_an_error(make_file, text: str) -> None:
    with pytest.raises(InputError, match=r"r\.txt: cannot tell the format of this file"):
        detect_format(make_file("r.txt", text))


def test_format_names_match_the_readers() -> None:
    assert tuple(FORMATS) + tuple(ARCHIVE_FORMATS) == FORMAT_NAMES
