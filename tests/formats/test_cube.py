"""Score-P CUBE profiles: the folder-per-run layout Extra-P reads, single profiles, and what is not a profile."""

from __future__ import annotations

import csv
import io
import shutil
import struct
import sys
import tarfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from scalecheck.cli import USAGE_ERROR, main
from scalecheck.errors import InputError
from scalecheck.formats import read_many, read_measurements
from scalecheck.formats.cube import RunName, is_cube_directory, parse_run_name, read_cube_bytes, read_cube_directory
from scalecheck.formats.extrap_json import read_extrap_json
from tests.conftest import missing_tool

try:
    import pycubexr
except ImportError:  # an optional dependency of scalecheck, and one of its test extra
    missing_tool("pycubexr is not installed: pip install 'scalecheck[cube]'", module=True)

INPUTS = Path(__file__).parent.parent / "inputs"
CUBE = INPUTS / "cube"
SINGLE = CUBE / "single_parameter"  # Extra-P's tests/data/cubeset/single_parameter: 9 runs mm.x<N>y1z1.r1
THREADED = CUBE / "simple_threaded"  # 5 runs example.f<N>, 4 threads each
MPI = CUBE / "pycubexr" / "time.p4.n2000.x1.r0"  # Score-P 9, 4 MPI processes, with the CUBE tools' excl.csv
X = [1, 10, 25, 50, 100, 250, 500, 1000, 2000]


def problem_of(path: Path, fmt: str | None = None) -> str:
    """The one-line error of reading `path`, with its folder left out; every error has a fix."""
    with pytest.raises(InputError) as info:
        read_measurements(path, fmt)
    assert info.value.fix
    return str(info.value).replace(f"{path.parent}/", "")


def copy_profile(source: Path, folder: Path, name: str = "profile.cubex") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copyfile(source, folder / name))


def tar_of(members: Mapping[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def members_of(raw: bytes) -> dict[str, bytes]:
    """The files of the tar archive `raw` by name."""
    with tarfile.open(fileobj=io.BytesIO(raw)) as archive:
        return {m.name: archive.extractfile(m).read() for m in archive}  # type: ignore[union-attr]


def synthetic_profile(children: Sequence[str], metrics: Mapping[str, tuple[str, Sequence[Sequence[float]]]], *,
                      cnodes_xml: str | None = None) -> bytes:
    """A CUBE profile as the CUBE library writes one: `main` calling `children` (one call-tree node each, in order)
    and each metric `name: (INCLUSIVE or EXCLUSIVE, values)` in seconds, values[node][location] for every node
    (main first), uncompressed. `cnodes_xml` replaces the call tree (with metrics that hold no data)."""
    names = ["main", *dict.fromkeys(children)]
    regions = "".join(f'<region id="{i}" mod="" begin="0" end="0"><name>{n}</name><mangled_name>{n}</mangled_name>'
                      f"<paradigm>user</paradigm><role>function</role><url></url><descr></descr></region>"
                      for i, n in enumerate(names))
    calls = "".join(f'<cnode id="{k}" calleeId="{names.index(child)}"></cnode>'
                    for k, child in enumerate(children, start=1))
    tree = cnodes_xml if cnodes_xml is not None else f'<cnode id="0" calleeId="0">{calls}</cnode>'
    locations = len(next(iter(metrics.values()))[1][0]) if metrics else 1
    system = "".join(f'<location Id="{k}"><name>thread {k}</name><rank>{k}</rank><type>thread</type></location>'
                     for k in range(locations))
    definitions = "".join(f'<metric id="{i}" type="{kind}"><disp_name>{name}</disp_name><uniq_name>{name}</uniq_name>'
                          f"<dtype>DOUBLE</dtype><uom>sec</uom><url></url><descr></descr></metric>"
                          for i, (name, (kind, _)) in enumerate(metrics.items()))
    anchor = (f'<?xml version="1.0" encoding="UTF-8"?><cube version="4.4"><metrics>{definitions}</metrics>'
              f"<program>{regions}{tree}</program><system>"
              f'<systemtreenode Id="0" class="machine"><name>m</name><locationgroup Id="0"><name>rank 0</name>'
              f"<rank>0</rank><type>process</type>{system}</locationgroup></systemtreenode></system></cube>")
    members = {"anchor.xml": anchor.encode()}
    for i, (_, (_, values)) in enumerate(metrics.items()):
        rows = np.asarray(values, dtype="<f8")
        members[f"{i}.index"] = b"CUBEX.INDEX" + struct.pack("<ihbi", 1, 0, 1, len(rows)) + struct.pack(
            f"<{len(rows)}i", *range(len(rows)))
        members[f"{i}.data"] = b"CUBEX.DATA" + rows.tobytes()
    return tar_of(members)


# --- the folder-per-run layout, against Extra-P ------------------------------------------------------------------

def test_folder_of_runs_reads_as_extrap_exports_it(series_of) -> None:
    run = read_cube_directory(SINGLE)
    export = read_extrap_json(INPUTS / "extrap" / "cube_single_parameter.json")  # Extra-P's JSON of the same runs

    assert run.parameters == ("x", "y", "z")  # y and z keep one value: the models leave them out, not the reader
    ours, theirs = series_of(run), series_of(export)
    assert sorted(ours) == sorted(theirs)
    assert len(ours) == 28  # 4 call paths x 7 metrics: bytes_put and bytes_get hold no data
    for key, expected in theirs.items():
        np.testing.assert_array_equal(ours[key].points, np.column_stack([X, np.ones(9), np.ones(9)]))
        np.testing.assert_allclose(ours[key].values, expected.values, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(ours[key].rounds, np.ones((9, 1)))  # the .r1 of every folder
    assert (ours["main->mat_mul", "time"].unit, ours["main", "visits"].unit) == ("sec", "occ")
    assert ours["main->init_mat", "PAPI_FP_OPS"].unit == "#"


def test_model_of_the_folder_is_the_model_of_extrap_export(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no settings file of the project
    assert main(["model", str(SINGLE)]) == 0
    folder = capsys.readouterr().out.splitlines()
    assert main(["model", str(INPUTS / "extrap" / "cube_single_parameter.json")]) == 0
    export = capsys.readouterr().out.splitlines()

    dropped = "  parameters y = 1, z = 1 have a single value in every measurement, so the models leave them out"
    assert dropped in folder
    assert [line for line in folder if line != dropped] == export
    assert any(line.split()[:3] == ["main->mat_mul", "PAPI_FP_OPS", "-0.04044"] for line in export)


# Extra-P 4.2.5's own CUBE reader on simple_threaded/ (extrap --cube --scaling ...): exclusive time per point f=1..5
EXTRAP_THREADED = {
    "weak": {"main->foo": [2.475, 4.95, 7.425, 9.9, 12.375], "main->omp parallel": [3.3, 6.6, 9.9, 13.2, 16.5]},
    "weak_threaded": {"main->foo": [4.95, 9.9, 14.85, 19.8, 24.75], "main->omp parallel": [3.3, 6.6, 9.9, 13.2, 16.5]},
    "strong": {"main->foo": [9.9, 19.8, 29.7, 39.6, 49.5], "main->omp parallel": [13.2, 26.4, 39.6, 52.8, 66.0]},
}


@pytest.mark.parametrize("scaling", EXTRAP_THREADED)
def test_locations_are_aggregated_as_extrap_does_for_each_scaling(scaling: str, series_of) -> None:
    series = series_of(read_cube_directory(THREADED, scaling))

    assert sorted(kernel for kernel, metric in series if metric == "time") == [
        "main", "main->bar", "main->foo", "main->omp parallel"]  # main->zero has visits only
    for kernel, expected in EXTRAP_THREADED[scaling].items():
        s = series[kernel, "time"]
        np.testing.assert_array_equal(s.points, [[1], [2], [3], [4], [5]])
        np.testing.assert_allclose(s.values[:, 0], expected, rtol=1e-6)  # the profiles hold 32-bit floats
        assert s.rounds is None  # example.f1: no .rN in the name


def test_weak_scaling_is_the_default() -> None:
    assert [s.values.tolist() for s in read_measurements(THREADED).series] == [
        s.values.tolist() for s in read_cube_directory(THREADED, "weak").series]


@pytest.mark.parametrize("scaling, combine", [("weak", np.mean), ("strong", np.sum)])
def test_exclusive_values_are_those_the_cube_tools_print(scaling: str, combine, series_of) -> None:
    with pycubexr.CubexParser(str(MPI / "profile.cubex")) as parsed:  # node ids -> call paths
        paths = {}
        for cnode in parsed.all_cnodes():
            frames, node = [], cnode
            while node is not None:
                frames.append(node.region.name)
                node = node.parent
            paths[cnode.id] = "->".join(reversed(frames))
    rows = list(csv.DictReader((MPI / "excl.csv").open(encoding="utf-8"), skipinitialspace=True))
    series = series_of(read_cube_directory(MPI.parent, scaling))

    compared = 0
    for node in sorted({int(row["Cnode ID"]) for row in rows}):
        for metric in ("time", "visits", "bytes_sent", "max_time"):
            per_process = [float(row[metric]) for row in rows if int(row["Cnode ID"]) == node]
            assert len(per_process) == 4
            key = (paths[node], metric)
            if key not in series:  # as in Extra-P: a node without data for a metric (zero) has no value
                assert per_process == [0.0] * 4
                continue
            np.testing.assert_allclose(series[key].values[0, 0], combine(per_process), rtol=1e-5,
                                       atol=1e-9)  # excl.csv prints six or seven digits
            compared += 1
    assert compared == 46 * 3 + 10  # bytes_sent: the 10 nodes of MPI calls that send


def test_single_profile_takes_its_point_from_its_folder(series_of) -> None:
    run = read_measurements(MPI / "profile.cubex")

    assert run.parameters == ("p", "n", "x")
    assert len(run.series) == 204
    init = series_of(run)["bg_time->main->MPI_Init", "time"]
    np.testing.assert_array_equal(init.points, [[4, 2000, 1]])
    np.testing.assert_array_equal(init.rounds, [[0]])  # .r0: rounds count from 0
    assert init.unit == "sec"


def test_profiles_named_one_by_one_read_as_their_folder() -> None:
    profiles = sorted(SINGLE.glob("*/profile.cubex"))
    together, folder = read_many(profiles), read_cube_directory(SINGLE)

    assert [(s.kernel, s.metric) for s in sorted(together.series, key=lambda s: (s.kernel, s.metric))] == [
        (s.kernel, s.metric) for s in sorted(folder.series, key=lambda s: (s.kernel, s.metric))]
    for a, b in zip(sorted(together.series, key=lambda s: (s.kernel, s.metric)),
                    sorted(folder.series, key=lambda s: (s.kernel, s.metric))):
        np.testing.assert_array_equal(a.values, b.values)


def test_profile_read_from_its_bytes_as_from_git_history() -> None:
    raw = (SINGLE / "mm.x10y1z1.r1" / "profile.cubex").read_bytes()
    run = read_cube_bytes(raw, Path("1a2b3c4:bench/mm.x10y1z1.r1/profile.cubex"))
    assert run.series[0].points.tolist() == [[10.0, 1.0, 1.0]]
    assert str(run.series[0].source) == "1a2b3c4:bench/mm.x10y1z1.r1/profile.cubex: kernel 'main', metric 'visits'"


def test_repetitions_come_from_rN_folders_and_from_several_profiles_in_one(tmp_path: Path, series_of) -> None:
    copy_profile(SINGLE / "mm.x10y1z1.r1" / "profile.cubex", tmp_path / "mm.x10.r1")
    copy_profile(SINGLE / "mm.x25y1z1.r1" / "profile.cubex", tmp_path / "mm.x10.r2")  # a second, slower run
    copy_profile(SINGLE / "mm.x50y1z1.r1" / "profile.cubex", tmp_path / "mm.x20.r1")
    copy_profile(SINGLE / "mm.x1y1z1.r1" / "profile.cubex", tmp_path / "mm.x30", "profile1.cubex")
    copy_profile(SINGLE / "mm.x100y1z1.r1" / "profile.cubex", tmp_path / "mm.x30", "profile2.cubex")
    copy_profile(SINGLE / "mm.x100y1z1.r1" / "profile.cubex", tmp_path / "mm.x30", ".hidden.cubex")  # as Extra-P
    (tmp_path / "notes").mkdir()  # a folder without profiles is left alone
    by_x = dict(zip(X, series_of(read_cube_directory(SINGLE))["main->mat_mul", "time"].values[:, 0]))

    mat_mul = series_of(read_measurements(tmp_path))["main->mat_mul", "time"]
    np.testing.assert_array_equal(mat_mul.points, [[10], [20], [30]])
    np.testing.assert_array_equal(mat_mul.values, [[by_x[10], by_x[25]], [by_x[50], np.nan], [by_x[1], by_x[100]]])
    np.testing.assert_array_equal(mat_mul.rounds, [[1, 2], [1, np.nan], [np.nan, np.nan]])


def test_a_folder_holding_profiles_itself_is_one_run(tmp_path: Path) -> None:
    run_folder = tmp_path / "mm.p8n100.r3"
    copy_profile(SINGLE / "mm.x10y1z1.r1" / "profile.cubex", run_folder)
    assert is_cube_directory(run_folder)
    run = read_measurements(run_folder)
    assert run.parameters == ("p", "n")
    assert run.series[0].points.tolist() == [[8.0, 100.0]] and run.series[0].rounds.tolist() == [[3.0]]


@pytest.mark.parametrize("name, expected", [
    # the examples of Extra-P's docs/file-formats.md
    ("mm.a1.1b1.1c1.1", RunName("mm", ("a", "b", "c"), (1.1, 1.1, 1.1), None)),
    ("mm.x1y1z1", RunName("mm", ("x", "y", "z"), (1, 1, 1), None)),
    ("mm.x1y1z1.r1", RunName("mm", ("x", "y", "z"), (1, 1, 1), 1)),
    ("mm.a1,1.b1,1.c1,1.r1", RunName("mm", ("a", "b", "c"), (1.1, 1.1, 1.1), 1)),
    ("mm.x1.1,y1,1,z1.1.r1", RunName("mm", ("x", "y", "z"), (1.1, 1.1, 1.1), 1)),
    ("mm.x1.1.y1.1.z1.1.r1", RunName("mm", ("x", "y", "z"), (1.1, 1.1, 1.1), 1)),
    ("mm.x1.y1.z1.r1", RunName("mm", ("x", "y", "z"), (1, 1, 1), 1)),
    ("x1y1z1", RunName("", ("x", "y", "z"), (1, 1, 1), None)),
    # Extra-P's test folders and pycubexr's
    ("mm.x20,5.y20,5.z1,5.r1", RunName("mm", ("x", "y", "z"), (20.5, 20.5, 1.5), 1)),
    ("mm.x21.5,y21,5,z1.15.r1", RunName("mm", ("x", "y", "z"), (21.5, 21.5, 1.15), 1)),
    ("example.f3", RunName("example", ("f",), (3,), None)),
    ("time.p4.n2000.x1.r0", RunName("time", ("p", "n", "x"), (4, 2000, 1), 0)),
    ("fastest.p16.size131072.r1", RunName("fastest", ("p", "size"), (16, 131072), 1)),  # names of several letters
    ("mm.p64.n1000.r12", RunName("mm", ("p", "n"), (64, 1000), 12)),
    ("lulesh2.p64.r1", RunName("lulesh2", ("p",), (64,), 1)),  # the prefix is everything before the first dot
    ("p64.n1000.r1", RunName("p64", ("n",), (1000,), 1)),  # so here p64 is the prefix, as in Extra-P
    ("mm.rows10.r1", RunName("mm", ("rows",), (10,), 1)),  # a name starting with r is not a repetition
    ("mm.num_procs8.r1", RunName("mm", ("num_procs",), (8,), 1)),
])
def test_run_folder_names_follow_extrap(name: str, expected: RunName) -> None:
    assert parse_run_name(name) == expected


@pytest.mark.parametrize("name", [
    "scorep-20240101_1200_123456",  # Score-P's default experiment folder names no parameters
    "mm", "mm.x", "mm.x1.2.3", "mm.x1x2", "mm.1x2", "mm.x1-y2", "results", "mm.x" + "9" * 400,
])
def test_names_without_parameter_values_are_not_run_folders(name: str) -> None:
    assert parse_run_name(name) is None


# --- what is not a folder of runs or a profile: one line naming it, and the fix ----------------------------------

def test_folder_without_profiles(tmp_path: Path) -> None:
    (tmp_path / "runs" / "mm.x1.r1").mkdir(parents=True)
    (tmp_path / "runs" / "mm.x1.r1" / "profile.txt").write_text("x\n", encoding="utf-8")
    assert not is_cube_directory(tmp_path / "runs")
    assert problem_of(tmp_path / "runs", "cube") == (
        "runs: no Score-P profiles (*.cubex) in this folder's sub-folders; fix: name the folder that holds one "
        "sub-folder per run, each with its profile (PREFIX.x1000y1z1.r1/profile.cubex)")


def test_run_folder_named_without_parameters(tmp_path: Path) -> None:
    copy_profile(SINGLE / "mm.x1y1z1.r1" / "profile.cubex", tmp_path / "runs" / "mm.x1.r1")
    copy_profile(SINGLE / "mm.x1y1z1.r1" / "profile.cubex", tmp_path / "runs" / "scorep-20240101_1200_123456")
    assert problem_of(tmp_path / "runs") == (
        "runs/scorep-20240101_1200_123456: the run folder's name 'scorep-20240101_1200_123456' does not give its "
        "parameter values (expected PREFIX.x1000y1z1.r1); fix: name each run folder PREFIX, a dot, the parameters "
        "each followed by its value, and .r with the repetition, as Extra-P reads them: mm.x1000y1z1.r1/profile.cubex "
        "(x = 1000, y = 1, z = 1, repetition 1); Score-P takes the folder's name from SCOREP_EXPERIMENT_DIRECTORY")


def test_single_profile_outside_a_run_folder(tmp_path: Path) -> None:
    profile = copy_profile(SINGLE / "mm.x1y1z1.r1" / "profile.cubex", tmp_path / "bench")
    assert problem_of(profile).startswith(
        "profile.cubex: a single profile takes its parameter values from the name of its folder, and 'bench' does "
        "not name them (expected PREFIX.x1000y1z1.r1); fix: name each run folder PREFIX, a dot, the parameters")
    assert problem_of(profile).endswith("; then read the folder of runs, or its profiles all together")


@pytest.mark.parametrize("first, second, message", [
    ("mm.x1y1.r1", "mm.x2.r1", "runs/mm.x2.r1: the run folder's name gives the parameters (x), but 'mm.x1y1.r1' "
                               "gives (x, y); fix: name every run folder with the same parameters, in the same order"),
    ("mm.x1y1.r1", "mm.y2x1.r1", "runs/mm.y2x1.r1: the run folder's name gives the parameters (y, x), but "
                                 "'mm.x1y1.r1' gives (x, y); fix: name every run folder with the same parameters, in "
                                 "the same order"),
    ("p128.n1000.r1", "p64.n1000.r1", "runs/p64.n1000.r1: the run folder's prefix 'p64' differs from 'p128' of "
                                      "'p128.n1000.r1'; the part before the first dot names the program, and the "
                                      "parameters follow it; fix: keep the runs of one program in one folder, named "
                                      "PREFIX.x1000y1z1.r1 (the same prefix for all)"),
])
def test_runs_must_name_the_same_parameters(tmp_path: Path, first: str, second: str, message: str) -> None:
    for name in (first, second):
        copy_profile(SINGLE / "mm.x1y1z1.r1" / "profile.cubex", tmp_path / "runs" / name)
    assert problem_of(tmp_path / "runs") == message


def profile_of(tmp_path: Path, raw: bytes) -> Path:
    path = tmp_path / "mm.x1.r1" / "profile.cubex"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return path


GOOD = (SINGLE / "mm.x1y1z1.r1" / "profile.cubex").read_bytes()


@pytest.mark.parametrize("raw, problem", [
    (tar_of({"results.csv": b"kernel,p,value\n"}),
     "not a CUBE profile: the tar archive holds no anchor.xml; fix: check that this is a Score-P profile "
     "(profile.cubex), not another tar archive"),
    (tar_of({"anchor.xml": b"kernel,p,value\nk,8,1.5\n"}),
     "not a CUBE profile: its anchor.xml is not an XML document; fix: check that this is a Score-P profile "
     "(profile.cubex), not another tar archive"),
    (tar_of({"anchor.xml": b"<?xml version='1.0'?><cube><metrics></cube>"}),
     "not a readable CUBE profile (ParseError: mismatched tag: line 1, column 38); fix: check that this is a "
     "complete Score-P profile (profile.cubex); write it again if it was cut"),
    (GOOD[:5000], "not a readable CUBE profile (ReadError: unexpected end of data); fix: check that this is a "
                  "complete Score-P profile (profile.cubex); write it again if it was cut"),
    (b"not a profile at all\n" * 30,
     "not a CUBE profile: a profile is a tar archive of anchor.xml and the metrics' data; fix: check that this is a "
     "Score-P profile (profile.cubex); decompress it first if it was compressed"),
    (zlib.compress(GOOD), "not a CUBE profile: a profile is a tar archive of anchor.xml and the metrics' data; fix: "
                          "check that this is a Score-P profile (profile.cubex); decompress it first if it was "
                          "compressed"),
])
def test_what_is_not_a_profile_is_named(tmp_path: Path, raw: bytes, problem: str) -> None:
    path = profile_of(tmp_path, raw)
    assert problem_of(path, "cube") == f"profile.cubex: {problem}"


def test_a_cut_profile_is_one_line_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = profile_of(tmp_path, GOOD[:12000])  # anchor.xml whole, the metrics' data cut
    assert main(["model", str(path)]) == USAGE_ERROR
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"scalecheck: error: {path}: not a readable CUBE profile (ReadError: unexpected end of data); fix: "
                   "check that this is a complete Score-P profile (profile.cubex); write it again if it was cut\n")


def test_without_pycubexr_the_error_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pycubexr", None)  # as if it were not installed
    assert problem_of(SINGLE / "mm.x1y1z1.r1" / "profile.cubex") == (
        "profile.cubex: reading Score-P profiles needs the Python package pycubexr, which is not installed; fix: pip "
        "install 'scalecheck[cube]'")
    assert problem_of(SINGLE).endswith(": reading Score-P profiles needs the Python package pycubexr, which is not "
                                       "installed; fix: pip install 'scalecheck[cube]'")


def test_compressed_values_are_measured_before_they_are_expanded(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # the profile's 7 metrics hold 4 doubles each, 224 bytes, compressed to 1.2 kB with their headers
    monkeypatch.setattr("scalecheck.formats.cube._MAX_INFLATED", 200)
    assert problem_of(SINGLE / "mm.x1y1z1.r1" / "profile.cubex") == (
        "profile.cubex: the profile's values expand to more than 0.000190735 MiB, the most scalecheck reads from one "
        "profile; fix: profile fewer regions (a Score-P filter file), metrics or processes")
    monkeypatch.setattr("scalecheck.formats.cube._MAX_INFLATED", 224)
    assert len(read_measurements(SINGLE / "mm.x1y1z1.r1" / "profile.cubex").series) == 28


def test_a_zlib_bomb_in_the_values_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("scalecheck.formats.cube._MAX_INFLATED", 2**20)
    block = zlib.compress(bytes(2**24))  # 16 MiB of zeros in 16 kB
    data = b"ZCUBEX.DATA" + struct.pack("<q", 1) + struct.pack("<3q", 0, 0, len(block)) + block
    index = b"CUBEX.INDEX" + struct.pack("<ihbi", 1, 0, 1, 1) + struct.pack("<i", 0)
    members = members_of(GOOD)
    path = profile_of(tmp_path, tar_of({**members, "0.data": data, "0.index": index}))
    assert problem_of(path).startswith("profile.cubex: the profile's values expand to more than 1 MiB")


def test_a_compressed_block_larger_than_its_file_is_refused_before_pycubexr_reads_it(tmp_path: Path) -> None:
    block = zlib.compress(bytes(32))
    data = b"ZCUBEX.DATA" + struct.pack("<q", 1) + struct.pack("<3q", 0, 0, 2**40) + block  # a corrupt size
    members = members_of(GOOD)
    path = profile_of(tmp_path, tar_of({**members, "0.data": data}))
    assert problem_of(path) == (
        "profile.cubex: not a readable CUBE profile (ValueError: a compressed value block of 1099511627776 bytes "
        f"where {len(block)} remain); fix: check that this is a complete Score-P profile (profile.cubex); write it "
        "again if it was cut")


def test_an_anchor_larger_than_a_measurement_file_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("scalecheck.formats.cube.MAX_FILE_BYTES", 2**10)
    assert problem_of(SINGLE / "mm.x1y1z1.r1" / "profile.cubex") == (
        "profile.cubex: the profile's anchor.xml (its call tree and definitions) is larger than 0.000976562 MiB, the "
        "most scalecheck reads; fix: profile fewer regions (a Score-P filter file), metrics or processes")


def test_a_call_tree_too_deep_for_pycubexr_is_one_line(tmp_path: Path) -> None:
    depth = 5000
    tree = "".join(f'<cnode id="{k}" calleeId="0">' for k in range(depth)) + "</cnode>" * depth  # main->main->...
    path = profile_of(tmp_path, synthetic_profile([], {}, cnodes_xml=tree))
    assert problem_of(path) == ("profile.cubex: the profile's call tree is nested too deeply to read; fix: check that "
                                "this is a Score-P profile; a call tree nests tens of levels")


# --- values: exclusive, by call path, over locations --------------------------------------------------------------

def test_two_call_sites_of_one_call_path_add_up(tmp_path: Path, series_of) -> None:
    # main calls solve from two lines: two nodes, one call path
    path = profile_of(tmp_path, synthetic_profile(["solve", "solve", "io"], {
        "time": ("INCLUSIVE", [[10.0, 12.0], [3.0, 4.0], [2.0, 2.0], [1.0, 1.0]]),
        "visits": ("EXCLUSIVE", [[1, 1], [5, 5], [7, 7], [1, 1]]),
    }))
    series = series_of(read_measurements(path))
    assert series["main", "time"].values.tolist() == [[(4.0 + 5.0) / 2]]  # exclusive: 10 - 3 - 2 - 1, 12 - 4 - 2 - 1
    assert series["main->solve", "time"].values.tolist() == [[(5.0 + 6.0) / 2]]  # 3 + 2, 4 + 2
    assert series["main->solve", "visits"].values.tolist() == [[12.0]]
    assert series["main->io", "visits"].values.tolist() == [[1.0]]


def test_an_exclusive_time_below_zero_by_rounding_is_zero(tmp_path: Path, series_of) -> None:
    assert 0.3 - 0.1 - 0.2 < 0  # the subtraction of the children leaves -5.6e-17
    path = profile_of(tmp_path, synthetic_profile(["a", "b"], {"time": ("INCLUSIVE", [[0.3], [0.1], [0.2]])}))
    assert series_of(read_measurements(path))["main", "time"].values.tolist() == [[0.0]]


def test_children_taking_more_time_than_their_caller_is_an_error(tmp_path: Path) -> None:
    path = profile_of(tmp_path, synthetic_profile(["a"], {"time": ("INCLUSIVE", [[0.1], [0.5]])}))
    assert problem_of(path) == (
        "profile.cubex: kernel 'main', metric 'time': metric 'time' is a time but has a negative value -0.4; fix: "
        "times cannot be negative: correct the value or the timer that produced it")


def test_metrics_without_data_are_left_out(tmp_path: Path, series_of) -> None:
    raw = synthetic_profile(["a"], {"time": ("INCLUSIVE", [[2.0], [1.0]]), "bytes_put": ("EXCLUSIVE", [[0], [0]])})
    members = {name: data for name, data in members_of(raw).items() if not name.startswith("1.")}  # no bytes_put
    series = series_of(read_measurements(profile_of(tmp_path, tar_of(members))))
    assert sorted(series) == [("main", "time"), ("main->a", "time")]


# --- the command line ---------------------------------------------------------------------------------------------

def test_model_and_check_read_a_folder_of_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no settings file of the project
    assert main(["model", str(SINGLE), "--metric", "time"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["kernel", "metric", "model"]
    assert {line.split()[0] for line in table[2:6]} == {"main", "main->init_mat", "main->mat_mul", "main->zero_mat"}

    profiles = [str(p) for p in sorted(SINGLE.glob("*/profile.cubex"))]
    assert main(["check", *profiles, "--baseline", str(SINGLE), "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS")
    assert "28 kernel(s): 28 compared" in out
