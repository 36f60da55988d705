"""Score-P CUBE profiles (.cubex), through the optional pycubexr: the folder-per-run layout that Extra-P reads (one
sub-folder per run, named for its parameter values: ``mm.x1000y1z1.r1/profile.cubex``), or single profiles in such
folders.

Values follow Extra-P's CUBE reader: each call path's exclusive value of each top-level metric, aggregated over the
profile's locations (processes and threads) by the scaling type: the mean for weak scaling (Extra-P's default), the
mean of the locations that took part (non-zero) for weak_threaded, the sum for strong scaling. Each profile in a run
folder is one repetition; the ``.rN`` of the folder's name is the round it came from. Unlike Extra-P, which merges a
call path measured at some points only into its caller, such a call path stays a kernel of its own, with the points
it was measured at: scalecheck models sparse kernels.
"""

from __future__ import annotations

import importlib
import io
import math
import re
import struct
import tarfile
import tempfile
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from scalecheck.data.measurement import Run, is_time_metric
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import (
    MAX_ARCHIVE_BYTES,
    MAX_FILE_BYTES,
    LimitedRunBuilder,
    check_parameter_count,
    mib,
    too_large,
)
from scalecheck.formats.source import read_bytes

LAYOUT = "PREFIX.x1000y1z1.r1"  # how a run folder is named, for messages
LAYOUT_FIX = ("name each run folder PREFIX, a dot, the parameters each followed by its value, and .r with the "
              "repetition, as Extra-P reads them: mm.x1000y1z1.r1/profile.cubex (x = 1000, y = 1, z = 1, repetition "
              "1); Score-P takes the folder's name from SCOREP_EXPERIMENT_DIRECTORY")
INSTALL_FIX = "pip install 'scalecheck[cube]'"
PROFILE_FIX = "profile fewer regions (a Score-P filter file), metrics or processes"
# the profile's values per location -> one value: how Extra-P aggregates over processes and threads per scaling type
SCALINGS: dict[str, Callable[[np.ndarray], float]] = {
    "weak": lambda values: float(np.mean(values)),
    # the locations that took part: threads that never ran a region hold zero there
    "weak_threaded": lambda values: float(np.mean(values[values != 0])) if np.any(values != 0) else 0.0,
    "strong": lambda values: float(np.sum(values)),
}
MAX_PROFILES = 10_000  # Extra-P's experiments hold tens to hundreds of runs; each profile takes milliseconds to read
_MAX_MEMBERS = 10_000  # a profile holds anchor.xml and an index and a data file per metric
_MAX_INFLATED = 4 * MAX_ARCHIVE_BYTES  # a profile's compressed values, expanded: a few processes of a CI run
_GZIP = b"\x1f\x8b"
_ZDATA = b"ZCUBEX.DATA"
_INDEX = b"CUBEX.INDEX"
_VALUE = re.compile(r"([0-9.,]+)")  # Extra-P's rule: a parameter's value is a run of digits, dots and commas
_NAME = re.compile(r"[^\W\d_][^\W\d]*")  # a parameter's name: letters, then letters or underscores
_REPETITION = re.compile(r"\.r([0-9]+)$")
_ROUND_DIGITS = 15  # a repetition number kept as the round: a whole number a float holds exactly


@dataclass(frozen=True)
class RunName:
    """The parameters of a run folder, parsed from its name as Extra-P does (``mm.x1000y1z1.r1``)."""

    prefix: str  # before the first dot, "" when the name has no dot
    parameters: tuple[str, ...]
    point: tuple[float, ...]
    repetition: int | None  # the N of a final .rN


def parse_run_name(name: str) -> RunName | None:
    """The parameters and repetition that the run folder `name` carries, or None when it does not follow the layout
    ``[PREFIX "."] NAME VALUE *(["." / ","] NAME VALUE) [".r" REPETITION]`` (Extra-P's file-formats.md).

    As in Extra-P, everything before the first dot is the prefix, a value is a run of digits with a decimal point or
    a decimal comma (``x20,5`` is 20.5), and a dot or comma after a value separates it from the next name.
    """
    prefix, dot, pairs = name.partition(".")
    if not dot:
        prefix, pairs = "", name
    repetition = _REPETITION.search(pairs)
    if repetition:
        pairs = pairs[: repetition.start()]
    tokens = _VALUE.split(pairs)  # name, value, name, value, ..., ""
    if len(tokens) < 3 or tokens[-1]:
        return None
    names, values = tokens[0:-1:2], tokens[1::2]
    if not all(_NAME.fullmatch(n) for n in names) or len(set(names)) < len(names):
        return None
    point = []
    for raw in values:
        try:
            value = float(raw.replace(",", ".").rstrip("."))
        except ValueError:  # 1.2.3, or a lone separator
            return None
        if not math.isfinite(value):  # 400 digits
            return None
        point.append(value)
    digits = repetition.group(1) if repetition else ""
    return RunName(prefix, tuple(names), tuple(point),
                   int(digits) if digits and len(digits) <= _ROUND_DIGITS else None)


def is_cube_directory(path: Path) -> bool:
    """Whether the folder `path` holds Score-P profiles: in its sub-folders (one per run), or itself (one run)."""
    return any(True for _ in _profiles_in(path, "*/")) or any(True for _ in _profiles_in(path, ""))


def read_cube_bytes(raw: bytes, source: Path, scaling: str = "weak") -> Run:
    """Read `raw`, the bytes of the CUBE profile `source`: one point, whose parameter values the name of the profile's
    folder gives (``mm.x1000y1z1.r1/profile.cubex``)."""
    source = Path(source)
    _check_scaling(scaling)
    _check_archive(raw, source)  # first whether it is a profile at all, then where its parameters are
    run = _run_name(source.parent.name, Location(source), single=True)
    builder = LimitedRunBuilder(run.parameters, source)
    _add_profile(builder, raw, source, run, scaling)
    return builder.build()


def read_cube_directory(path: Path, scaling: str = "weak") -> Run:
    """Read the folder `path` of Score-P profiles, one run per sub-folder named for its parameter values; several
    profiles of one point (several .rN folders, or several profiles in one folder) are its repetitions. A folder
    that holds profiles itself, and no run folders, is read as one run."""
    path = Path(path)
    _check_scaling(scaling)
    if not path.is_dir():
        raise InputError("this is not a folder of Score-P profiles", where=Location(path),
                         fix=f"name the folder that holds one sub-folder per run ({LAYOUT}/profile.cubex)")
    profiles = sorted(_profiles_in(path, "*/")) or sorted(_profiles_in(path, ""))
    if not profiles:
        raise InputError("no Score-P profiles (*.cubex) in this folder's sub-folders", where=Location(path),
                         fix=f"name the folder that holds one sub-folder per run, each with its profile "
                             f"({LAYOUT}/profile.cubex)")
    if len(profiles) > MAX_PROFILES:
        raise InputError(f"{len(profiles):,} profiles, more than the {MAX_PROFILES:,} scalecheck reads from one folder",
                         where=Location(path), fix="model a subset of the runs, or split them into several folders")
    runs = [(_run_name(profile.parent.name, Location(profile.parent), single=False), profile) for profile in profiles]
    _check_same_parameters(runs)
    builder = LimitedRunBuilder(runs[0][0].parameters, path)
    # by repetition within a point, so that the values of a point come in the order of their rounds
    for run, profile in sorted(runs, key=lambda item: (item[0].point, item[0].repetition or 0, item[1])):
        raw = _read_profile(profile)
        _check_archive(raw, profile)
        _add_profile(builder, raw, profile, run, scaling, on_disk=profile)
    return builder.build()


def _read_profile(profile: Path) -> bytes:
    """The bytes of the file `profile`, or an `InputError` when it takes more than `MAX_ARCHIVE_BYTES`."""
    try:
        size = profile.stat().st_size
    except OSError:
        size = MAX_ARCHIVE_BYTES  # read_bytes says why it cannot be read
    # as large as the file: a read of the most a profile may take would allocate that much for every profile
    raw = read_bytes(profile, min(size, MAX_ARCHIVE_BYTES))
    if len(raw) > MAX_ARCHIVE_BYTES:
        raise too_large(profile, MAX_ARCHIVE_BYTES, PROFILE_FIX)
    return raw


def _check_scaling(scaling: str) -> None:
    """A `ValueError` (a caller's mistake) for a scaling type that is not one of `SCALINGS`."""
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {', '.join(SCALINGS)}, got {scaling!r}")


def _profiles_in(path: Path, folders: str) -> Iterator[Path]:
    """The profiles in `path` ("") or in its sub-folders ("*/"); as in Extra-P, names starting with a dot are not."""
    return (profile for profile in path.glob(f"{folders}[!.]*.cubex") if profile.is_file())


def _run_name(name: str, where: Location, *, single: bool) -> RunName:
    """The parameters of the run folder `name`, or an `InputError` at `where` saying how to name it."""
    run = parse_run_name(name)
    if run is None:
        problem = (f"a single profile takes its parameter values from the name of its folder, and '{name}' does not "
                   f"name them (expected {LAYOUT})" if single else
                   f"the run folder's name '{name}' does not give its parameter values (expected {LAYOUT})")
        fix = LAYOUT_FIX + ("; then read the folder of runs, or its profiles all together" if single else "")
        raise InputError(problem, where=where, fix=fix)
    check_parameter_count(len(run.parameters), where)
    return run


def _check_same_parameters(runs: list[tuple[RunName, Path]]) -> None:
    """An `InputError` naming two run folders whose names give different parameters, or different prefixes."""
    first, first_path = runs[0]
    for run, profile in runs[1:]:
        if run.parameters != first.parameters:
            raise InputError(
                f"the run folder's name gives the parameters ({', '.join(run.parameters)}), but "
                f"'{first_path.parent.name}' gives ({', '.join(first.parameters)})", where=Location(profile.parent),
                fix="name every run folder with the same parameters, in the same order")
        if run.prefix and first.prefix and run.prefix != first.prefix:
            # "p64.n1000.r1": the part before the first dot is the prefix, so p would silently not be a parameter
            raise InputError(
                f"the run folder's prefix '{run.prefix}' differs from '{first.prefix}' of '{first_path.parent.name}'; "
                f"the part before the first dot names the program, and the parameters follow it",
                where=Location(profile.parent),
                fix=f"keep the runs of one program in one folder, named {LAYOUT} (the same prefix for all)")


def _add_profile(builder: LimitedRunBuilder, raw: bytes, source: Path, run: RunName, scaling: str,
                 on_disk: Path | None = None) -> None:
    """Add the values of the profile `raw` (checked by `_check_archive`), read from `source` (the file `on_disk`, if
    it is one), at the point of `run`."""
    rounds = None if run.repetition is None else [run.repetition]
    for (kernel, metric), (value, unit) in _profile_values(raw, source, SCALINGS[scaling], on_disk).items():
        where = Location(source, record=f"kernel '{kernel}', metric '{metric}'")
        builder.add(kernel, metric, run.point, [value], where, unit, rounds)


def _pycubexr(source: Path) -> ModuleType:
    """The pycubexr package, imported on first use; an `InputError` naming `source` when it is not installed."""
    try:  # through importlib, as pycubexr has no type information
        for module in ("pycubexr.utils.custom_tarinfo", "pycubexr.utils.exceptions"):
            importlib.import_module(module)
        return importlib.import_module("pycubexr")
    except ImportError:
        raise InputError("reading Score-P profiles needs the Python package pycubexr, which is not installed",
                         where=Location(source), fix=INSTALL_FIX) from None


def _profile_values(raw: bytes, source: Path, aggregate: Callable[[np.ndarray], float],
                    on_disk: Path | None) -> dict[tuple[str, str], tuple[float, str]]:
    """(call path, metric) -> (value aggregated over the locations, unit) of the profile `raw`."""
    if on_disk is not None:
        return _parsed_values(on_disk, source, aggregate)
    with tempfile.TemporaryDirectory(prefix="scalecheck-") as folder:
        copy = Path(folder) / "profile.cubex"  # pycubexr opens profiles by name only
        copy.write_bytes(raw)
        return _parsed_values(copy, source, aggregate)


def _parsed_values(path: Path, source: Path,
                   aggregate: Callable[[np.ndarray], float]) -> dict[tuple[str, str], tuple[float, str]]:
    """`_profile_values` of the profile file `path`, read from `source`, through pycubexr."""
    cubexr = _pycubexr(source)
    try:
        with warnings.catch_warnings():
            # pycubexr warns when it reads the headers that CubeWriter 4.8 wrote with a wrong checksum: harmless
            warnings.simplefilter("ignore")
            with cubexr.CubexParser(str(path)) as parsed:
                return _values_of(parsed, cubexr.utils.exceptions, aggregate)
    except RecursionError:
        raise InputError("the profile's call tree is nested too deeply to read", where=Location(source),
                         fix="check that this is a Score-P profile; a call tree nests tens of levels") from None
    except Exception as err:  # pycubexr checks its input with asserts and lets any parsing error through
        raise _unreadable(source, err) from None


def _values_of(parsed: Any, exceptions: ModuleType,
               aggregate: Callable[[np.ndarray], float]) -> dict[tuple[str, str], tuple[float, str]]:
    """`_profile_values` of the profile that pycubexr opened as `parsed`."""
    out: dict[tuple[str, str], tuple[float, str]] = {}
    callpaths = _callpaths(parsed.get_root_cnodes())
    for metric in parsed.get_metrics():  # the top-level metrics, as Extra-P reads
        try:
            values = parsed.get_metric_values(metric, cache=False)
        except (exceptions.MissingMetricError, exceptions.UnsupportedMetricFormatError):
            continue  # no data (Extra-P skips such metrics too), or a kind of value pycubexr cannot read
        by_path = _exclusive_by_path(values, callpaths)
        if by_path is None:
            continue  # values that are not numbers (TAU atomic, rates)
        unit = metric.units or ""
        scale = max((float(np.max(np.abs(v))) for v in by_path.values() if v.size), default=0.0)
        for kernel, per_location in by_path.items():
            value = aggregate(per_location)
            if -1e-9 * scale <= value < 0 and is_time_metric(metric.name, unit):
                value = 0.0  # an exclusive time of zero, left below it by rounding in the subtraction
            out[(kernel, metric.name)] = (value, unit)
    return out


def _callpaths(roots: list[Any]) -> list[tuple[Any, str]]:
    """(cnode, call path) for every node of the call tree, in depth-first order; frames joined by '->'."""
    out = []
    stack = [(root, root.region.name) for root in reversed(roots)]
    while stack:  # not recursive: a recursive program's call tree may be deep
        cnode, name = stack.pop()
        out.append((cnode, name))
        stack.extend((child, f"{name}->{child.region.name}") for child in reversed(cnode.get_children()))
    return out


def _exclusive_by_path(values: Any, callpaths: list[tuple[Any, str]]) -> dict[str, np.ndarray] | None:
    """Call path -> exclusive values per location of the metric `values`; None when they are not numbers.

    As in Extra-P, a call path has values when its node is in the metric's index. Nodes with the same call path (one
    function called from two lines of its caller) add up, by the metric's own rule (min and max for min_time).
    """
    combined: dict[str, Any] = {}
    for cnode, name in callpaths:
        if cnode.id not in values.cnode_indices:
            continue
        own = values.cnode_values(cnode, convert_to_exclusive=True)
        combined[name] = own if name not in combined else combined[name] + own
    try:
        return {name: np.asarray(own.astype(float), dtype=float) for name, own in combined.items()}
    except NotImplementedError:
        return None


def _unreadable(source: Path, err: Exception) -> InputError:
    """The error for a profile that pycubexr cannot read, saying what it met."""
    detail = str(err).splitlines()[0] if str(err) else ""
    detail = detail if len(detail) <= 100 else detail[:97] + "..."
    what = type(err).__name__ + (f": {detail}" if detail else "")
    return InputError(f"not a readable CUBE profile ({what})", where=Location(source),
                      fix="check that this is a complete Score-P profile (profile.cubex); write it again if it was cut")


def _check_archive(raw: bytes, source: Path) -> None:
    """An `InputError` unless `raw` is an uncompressed tar archive with anchor.xml, whose anchor.xml takes at most
    `MAX_FILE_BYTES` and whose compressed values expand to at most `_MAX_INFLATED` bytes, checked before pycubexr
    expands them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycubexr's warning that it reads headers with a wrong checksum
        try:
            try:
                archive = tarfile.open(fileobj=io.BytesIO(raw), mode="r:")  # "r:": uncompressed, as CUBE writes
            except tarfile.ReadError:  # as pycubexr: CubeWriter 4.8 wrote headers with a wrong checksum
                tarinfo = _pycubexr(source).utils.custom_tarinfo.TarInfoWithoutCheck
                archive = tarfile.open(fileobj=io.BytesIO(raw), mode="r:", tarinfo=tarinfo)
        except (tarfile.TarError, ValueError):  # pycubexr's header reader raises ValueError for any other bytes
            raise InputError("not a CUBE profile: a profile is a tar archive of anchor.xml and the metrics' data",
                             where=Location(source), fix="check that this is a Score-P profile (profile.cubex); "
                                                         "decompress it first if it was compressed") from None
        try:
            with archive:
                _check_members(archive, source)
        except (tarfile.TarError, EOFError, zlib.error, struct.error, OSError, ValueError) as err:
            raise _unreadable(source, err) from None


def _check_members(archive: tarfile.TarFile, source: Path) -> None:
    """`_check_archive` of the opened `archive`."""
    members = _members(archive, source)
    if "anchor.xml" not in members:
        raise InputError("not a CUBE profile: the tar archive holds no anchor.xml", where=Location(source),
                         fix="check that this is a Score-P profile (profile.cubex), not another tar archive")
    anchor = _read_member(archive, members["anchor.xml"])
    if anchor.startswith(_GZIP):
        anchor = _inflate_gzip(anchor, MAX_FILE_BYTES + 1)
    if len(anchor) > MAX_FILE_BYTES:
        raise InputError(f"the profile's anchor.xml (its call tree and definitions) is larger than "
                         f"{mib(MAX_FILE_BYTES)}, the most scalecheck reads", where=Location(source), fix=PROFILE_FIX)
    if not anchor.startswith(b"<?xml"):  # as pycubexr tells an XML document from a compressed one
        raise InputError("not a CUBE profile: its anchor.xml is not an XML document", where=Location(source),
                         fix="check that this is a Score-P profile (profile.cubex), not another tar archive")
    inflated = 0
    for name, member in members.items():
        index = members.get(name[: -len(".data")] + ".index")
        if name.endswith(".data") and index is not None:
            inflated += _inflated_size(_read_member(archive, member), _read_member(archive, index),
                                       _MAX_INFLATED - inflated)
            if inflated > _MAX_INFLATED:
                raise InputError(f"the profile's values expand to more than {mib(_MAX_INFLATED)}, the most "
                                 f"scalecheck reads from one profile", where=Location(source), fix=PROFILE_FIX)


def _members(archive: tarfile.TarFile, source: Path) -> dict[str, tarfile.TarInfo]:
    """The files of `archive` by name, or an `InputError` when it holds more than a profile does."""
    members: dict[str, tarfile.TarInfo] = {}
    for member in archive:
        if len(members) >= _MAX_MEMBERS:
            raise InputError(f"not a CUBE profile: the tar archive holds more than {_MAX_MEMBERS:,} files",
                             where=Location(source), fix="check that this is a Score-P profile (profile.cubex)")
        if member.isfile():
            members[member.name] = member
    return members


def _read_member(archive: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    """The bytes of `member`: at most what the archive holds, which the caller has bounded."""
    handle = archive.extractfile(member)
    if handle is None:
        raise ValueError(f"{member.name} is not a file")
    with handle:
        return handle.read()


def _inflate_gzip(data: bytes, limit: int) -> bytes:
    """`data` decompressed, cut after `limit` bytes."""
    inflater = zlib.decompressobj(wbits=31)
    return inflater.decompress(data, limit)


def _inflated_size(data: bytes, index: bytes, budget: int) -> int:
    """How many bytes the values in `data` (a metric's .data file) take in memory: its length, or for compressed
    values (ZCUBEX) their expanded size, counted up to `budget` + 1 without expanding more."""
    if not data.startswith(_ZDATA):
        return len(data)
    # the index file starts with the number 1 as a 4-byte integer, which tells the byte order of both files
    order = "<" if index[len(_INDEX): len(_INDEX) + 4] == struct.pack("<i", 1) else ">"
    start = len(_ZDATA)
    (count,) = struct.unpack_from(order + "q", data, start)
    if not 0 <= count <= (len(data) - start) // 24:
        raise ValueError(f"a compressed value block count of {count}")
    blocks = struct.unpack_from(f"{order}{3 * count}q", data, start + 8)
    position, total = start + 8 + 24 * count, 0
    for size in blocks[2::3]:  # (expanded position, compressed position, compressed size) per block, in file order
        if not 0 <= size <= len(data) - position:  # pycubexr would try to read that much
            raise ValueError(f"a compressed value block of {size} bytes where {len(data) - position} remain")
        if size == 0:
            continue
        inflater = zlib.decompressobj()
        total += len(inflater.decompress(data[position: position + size], budget - total + 1))
        if total > budget:
            break
        position += size
    return total
