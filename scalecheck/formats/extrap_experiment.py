"""Extra-P experiment files (.extra-p): the ZIP archive that Extra-P 4 saves (``extrap --save-experiment FILE``, or
File > Save experiment).

Its experiment.json holds the parameters, each measurement by call path and metric at its coordinate with the
statistics of its repetitions (mean, median, minimum, maximum, std), and the model sets. When Extra-P kept the
measured values (``--keep-values``), values/N.vals holds them as NumPy arrays, found through the offsets that
values/N.indx lists: a list of repetitions, or repetitions by locations for profiles read from CUBE files.
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np

from scalecheck.data.measurement import Run, number
from scalecheck.data.spec import Factor, Term
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import MAX_ARCHIVE_BYTES, MAX_FILE_BYTES, LimitedRunBuilder, mib
from scalecheck.formats.scalecheck_json import parameters_from
from scalecheck.formats.source import decode_json, shown, type_name

DATA_FILE = "experiment.json"
# experiment.json: several statistics and a model per measurement, so more bytes than a file of values
MAX_EXPERIMENT_BYTES = 4 * MAX_FILE_BYTES
_MAX_MEMBERS = 10_000  # experiment.json, and two files per GB of kept values
_INDEX_MAGIC = b"Extra-P INDEX\0\0\0"
_VALUES_MAGIC = b"Extra-P VALUES\0\0"
# what zipfile raises for a cut or corrupt archive (ValueError: offsets before its start), an unsupported compression
# (NotImplementedError, a RuntimeError) or an encrypted member (RuntimeError)
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, EOFError, OSError, ValueError, zlib.error)
SAVE_FIX = ("save the experiment with Extra-P 4 (extrap --save-experiment FILE, or File > Save experiment); for "
            "another zip archive, extract the measurement files (unzip FILE) and name them")
WHOLE_FIX = "check that this is an Extra-P experiment (.extra-p) and that it was copied whole; save it again if not"
TOO_LARGE_FIX = ("save fewer call paths or metrics in one experiment (several experiments are merged when named "
                 "together), or save it without --keep-values")


def read_extrap_experiment_bytes(raw: bytes, source: Path) -> Run:
    """Read `raw`, the bytes of the Extra-P experiment `source`.

    Each measurement gives its kept values as repetitions (the mean over the locations of a repetition read from
    CUBE files, as Extra-P's mean), or without them its mean, the statistic Extra-P models by default. The first
    model set's model of a (call path, metric) becomes the note of its series.
    """
    source = Path(source)
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except _ZIP_ERRORS as err:
        raise _unreadable(source, err) from None
    with archive:
        return _read(archive, source)


def _read(archive: zipfile.ZipFile, source: Path) -> Run:
    """The run in the opened experiment `archive`."""
    members = _members(archive, source)
    if DATA_FILE not in members:
        raise InputError(f"not an Extra-P experiment: the zip archive holds no {DATA_FILE}", where=Location(source),
                         fix=SAVE_FIX)
    doc = _document(archive, members[DATA_FILE], source)
    for key in ("parameters", "measurements"):
        if key not in doc:
            raise InputError(f'not an Extra-P experiment: {DATA_FILE} has no "{key}"', where=Location(source),
                             fix=SAVE_FIX)
    parameters = parameters_from(doc["parameters"], Location(source, record=f"{DATA_FILE}: parameters"))
    builder = LimitedRunBuilder(parameters, source)
    values = _Values(archive, members, source)
    threaded = doc.get("scaling") == "weak_threaded"
    by_callpath = doc["measurements"]
    if not isinstance(by_callpath, dict):
        raise InputError(f'"measurements" must be an object of call paths, got {type_name(by_callpath)}',
                         where=Location(source, record=f"{DATA_FILE}: measurements"), fix=WHOLE_FIX)
    for callpath, by_metric in by_callpath.items():
        record = f"{DATA_FILE}: measurements[{json.dumps(callpath, ensure_ascii=False)}]"
        if not isinstance(by_metric, dict):
            raise InputError(f"expected an object of metrics, got {type_name(by_metric)}",
                             where=Location(source, record=record), fix=WHOLE_FIX)
        for metric, entries in by_metric.items():
            metric_record = f"{record}[{json.dumps(metric, ensure_ascii=False)}]"
            if not isinstance(entries, list):
                raise InputError(f"the measurements must be a list, got {type_name(entries)}",
                                 where=Location(source, record=metric_record), fix=WHOLE_FIX)
            for index, entry in enumerate(entries):
                at = Location(source, record=f"{metric_record}[{index}]")
                point, repetitions = _measurement(entry, parameters, values, threaded, at)
                builder.add(callpath, metric, point, repetitions, at)
    builder.notes.update(_model_notes(doc.get("modelers"), parameters))
    return builder.build()


def _members(archive: zipfile.ZipFile, source: Path) -> dict[str, zipfile.ZipInfo]:
    """The members of `archive` by name, refused when there are more than an experiment holds."""
    infos = archive.infolist()
    if len(infos) > _MAX_MEMBERS:
        raise InputError(f"not an Extra-P experiment: the zip archive holds {len(infos):,} files, more than the "
                         f"{_MAX_MEMBERS:,} of an experiment", where=Location(source), fix=SAVE_FIX)
    return {info.filename: info for info in infos}


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, source: Path) -> bytes:
    """The bytes of the member `info`, refused before they are expanded when the zip's directory gives it more
    than `limit` bytes (zipfile reads no more than the directory gives)."""
    if info.file_size > limit:
        raise InputError(f"{info.filename} expands to {info.file_size:,} bytes, more than the {mib(limit)} "
                         f"scalecheck reads from it", where=Location(source), fix=TOO_LARGE_FIX)
    try:
        return archive.read(info)
    except _ZIP_ERRORS as err:
        raise _unreadable(source, err) from None


def _unreadable(source: Path, err: Exception) -> InputError:
    """The error for an archive that zipfile cannot read, saying what it met."""
    return InputError(f"not a readable zip archive ({_what(err)})", where=Location(source), fix=WHOLE_FIX)


def _document(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: Path) -> dict[str, object]:
    """experiment.json, decoded: an object."""
    raw = _read_member(archive, info, MAX_EXPERIMENT_BYTES, source)
    where = Location(source)
    try:
        doc = decode_json(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise InputError(f"{DATA_FILE} is not UTF-8 text (byte 0x{raw[err.start]:02x} at offset {err.start})",
                         where=where, fix=WHOLE_FIX) from None
    except json.JSONDecodeError as err:
        raise InputError(f"{DATA_FILE} is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})",
                         where=where, fix=WHOLE_FIX) from None
    except RecursionError:
        raise InputError(f"{DATA_FILE} is nested too deeply", where=where, fix=WHOLE_FIX) from None
    if not isinstance(doc, dict):
        raise InputError(f"not an Extra-P experiment: {DATA_FILE} holds {type_name(doc)}, not an object",
                         where=where, fix=SAVE_FIX)
    return doc


def _measurement(entry: object, parameters: tuple[str, ...], values: _Values, threaded: bool,
                 where: Location) -> tuple[list[float], list[object]]:
    """The point and the repetitions of one measurement {"coordinate": [...], "mean": ..., "values": ...}."""
    if not isinstance(entry, dict):
        raise InputError(f"a measurement must be an object, got {type_name(entry)}", where=where, fix=WHOLE_FIX)
    if "coordinate" not in entry:
        raise InputError("the measurement has no 'coordinate'", where=where, fix=WHOLE_FIX)
    coordinate = entry["coordinate"]
    coords = coordinate if isinstance(coordinate, list) else [coordinate]
    if len(coords) != len(parameters):
        raise InputError(f"the coordinate {shown(coordinate)} has {len(coords)} value(s) but the experiment has "
                         f"{len(parameters)} parameter(s) ({', '.join(parameters)})", where=where, fix=WHOLE_FIX)
    point = [number(value, f"parameter '{name}'", where, WHOLE_FIX) for value, name in zip(coords, parameters)]
    kept = entry.get("values")
    if kept is not None:
        return point, values.repetitions(kept, threaded, where)
    for statistic in ("mean", "median"):  # Extra-P models the mean unless told otherwise
        if statistic in entry:
            return point, [entry[statistic]]
    raise InputError("the measurement has neither values nor a mean", where=where, fix=WHOLE_FIX)


class _Values:
    """The values Extra-P kept: chunk N is values/N.vals, NumPy arrays one after the other, and values/N.indx,
    the offset of each array. A chunk is read whole on first use."""

    def __init__(self, archive: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], source: Path) -> None:
        self.archive, self.members, self.source = archive, members, source
        self.chunks: dict[int, tuple[bytes, tuple[int, ...]]] = {}
        total = sum(info.file_size for name, info in members.items() if name.startswith("values/"))
        if total > MAX_ARCHIVE_BYTES:  # the sizes the zip's directory gives, which zipfile reads no more than
            raise InputError(f"the kept values expand to {total:,} bytes, more than the {mib(MAX_ARCHIVE_BYTES)} "
                             f"scalecheck reads from one experiment", where=Location(source), fix=TOO_LARGE_FIX)

    def repetitions(self, reference: object, threaded: bool, where: Location) -> list[object]:
        """The repetitions of the array that `reference`, [chunk, index], names: one per row, each row's
        locations aggregated as Extra-P does (their mean; the mean of the non-zero ones for weak_threaded)."""
        if (not isinstance(reference, list) or len(reference) != 2
                or not all(type(part) is int and part >= 0 for part in reference)):
            raise InputError(f"'values' must be null or [chunk, index], got {shown(reference)}", where=where,
                             fix=WHOLE_FIX)
        array = self._array(reference[0], reference[1], where)
        if array.ndim <= 1:
            return list(array.reshape(-1).tolist())
        rows = array.reshape(array.shape[0], -1)
        if threaded:
            return [float(np.mean(row[row != 0])) if np.any(row != 0) else 0.0 for row in rows]
        return list(np.mean(rows, axis=1).tolist())

    def _array(self, chunk: int, index: int, where: Location) -> np.ndarray:
        """Array `index` of chunk `chunk`, as floats."""
        data, offsets = self._chunk(chunk, where)
        if index >= len(offsets):
            raise InputError(f"'values' names array {index} of values/{chunk}.indx, which lists {len(offsets)}",
                             where=where, fix=WHOLE_FIX)
        stream = io.BytesIO(data)
        stream.seek(offsets[index])
        try:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        except (ValueError, SyntaxError, TypeError) as err:
            raise InputError(f"values/{chunk}.vals holds no NumPy array at offset {offsets[index]} ({_what(err)})",
                             where=where, fix=WHOLE_FIX) from None
        count = math.prod(shape)
        if dtype.hasobject or dtype.kind not in "biuf" or count * dtype.itemsize > len(data) - stream.tell():
            raise InputError(f"values/{chunk}.vals: the array at offset {offsets[index]} is not {count:,} numbers "
                             f"({dtype.str}) in the file", where=where, fix=WHOLE_FIX)
        array = np.frombuffer(data, dtype=dtype, count=count, offset=stream.tell())
        array = array.reshape(shape[::-1]).T if fortran else array.reshape(shape)
        return array.astype(float)

    def _chunk(self, chunk: int, where: Location) -> tuple[bytes, tuple[int, ...]]:
        """values/`chunk`.vals and the offsets of its arrays, read once."""
        if chunk in self.chunks:
            return self.chunks[chunk]
        names = (f"values/{chunk}.vals", f"values/{chunk}.indx")
        missing = [name for name in names if name not in self.members]
        if missing:
            raise InputError(f"'values' refers to {missing[0]}, which the experiment does not hold", where=where,
                             fix=WHOLE_FIX)
        data, index = (_read_member(self.archive, self.members[name], MAX_ARCHIVE_BYTES, self.source)
                       for name in names)
        if not data.startswith(_VALUES_MAGIC) or not index.startswith(_INDEX_MAGIC) or len(index) < 24:
            raise InputError(f"values/{chunk}.vals or .indx does not start as Extra-P writes them", where=where,
                             fix=WHOLE_FIX)
        (count,) = struct.unpack_from("<Q", index, len(_INDEX_MAGIC))
        if count > (len(index) - 24) // 8:
            raise InputError(f"values/{chunk}.indx lists {count:,} arrays but holds {(len(index) - 24) // 8:,}",
                             where=where, fix=WHOLE_FIX)
        offsets = struct.unpack_from(f"<{count}Q", index, 24)
        self.chunks[chunk] = (data, offsets)
        return data, offsets


def _model_notes(modelers: object, parameters: tuple[str, ...]) -> dict[tuple[str, str], str]:
    """(call path, metric) -> "Extra-P: <model>" from the first model set; models of kinds not shown are left
    out (segmented ones, say)."""
    if not isinstance(modelers, list) or not modelers or not isinstance(modelers[0], dict):
        return {}
    models = modelers[0].get("models")
    notes: dict[tuple[str, str], str] = {}
    if not isinstance(models, dict):
        return notes
    for callpath, by_metric in models.items():
        for metric, model in (by_metric.items() if isinstance(by_metric, dict) else ()):
            hypothesis = model.get("hypothesis") if isinstance(model, dict) else None
            function = hypothesis.get("function") if isinstance(hypothesis, dict) else None
            text = _function_text(function, parameters)
            if text:
                notes[(callpath, metric)] = f"Extra-P: {text}"
    return notes


def _function_text(function: object, parameters: tuple[str, ...]) -> str | None:
    """An Extra-P function as scalecheck writes models (``2.1 + 0.003 * p^(3/2) * log2(p)``), or None."""
    if not isinstance(function, dict):
        return None
    kind = function.get("$type")
    try:
        constant = _coefficient(function.get("constant_coefficient", 0))
        text = f"{constant:.4g}"
        if kind == "ConstantFunction":
            return text
        if kind not in ("SingleParameterFunction", "MultiParameterFunction") or (
                kind == "SingleParameterFunction" and len(parameters) != 1):
            return None
        terms = function.get("compound_terms", [])
        if not isinstance(terms, list):
            return None
        for term in terms:
            coefficient = _coefficient(term["coefficient"])
            pairs = ({"0": term} if kind == "SingleParameterFunction" else term["parameter_term_pairs"]).items()
            factors = []
            for param, compound in pairs:
                coefficient *= _coefficient(compound.get("coefficient", 1.0)) if "parameter_term_pairs" in term else 1
                factors.append(_factor(int(param), compound["simple_terms"], len(parameters)))
            sign = "-" if coefficient < 0 else "+"
            text += f" {sign} {abs(coefficient):.4g} * {Term(tuple(factors)).format(parameters)}"
        return text
    except (KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError, OverflowError):
        return None  # a model written differently: the measurements are still read


def _factor(param: int, simple_terms: list[dict[str, object]], count: int) -> Factor:
    """Extra-P's simple terms of one parameter (a polynomial and a logarithm) as one factor."""
    if not 0 <= param < count:
        raise ValueError(f"parameter {param} of {count}")
    exponents = {"polynomial": Fraction(0), "logarithm": Fraction(0)}
    for simple in simple_terms:
        kind = simple["term_type"]
        if not isinstance(kind, str) or kind not in exponents or exponents[kind]:  # unknown, or twice
            raise ValueError(f"term {kind!r}")
        exponents[kind] = _exponent(simple["exponent"])
    log = exponents["logarithm"]
    return Factor(param, exponents["polynomial"], int(log) if log.denominator == 1 else log)


def _exponent(raw: object) -> Fraction:
    """An exponent as Extra-P writes it: "3/2", or a number."""
    if isinstance(raw, str):
        return Fraction(raw)
    if isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw):
        return Fraction(raw).limit_denominator(1000)
    raise ValueError(f"exponent {raw!r}")


def _coefficient(raw: object) -> float:
    """A finite coefficient."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise ValueError(f"coefficient {raw!r}")
    return float(raw)


def _what(err: BaseException) -> str:
    """The type and first line of `err`, short, for a message."""
    detail = str(err).splitlines()[0] if str(err) else ""
    detail = detail if len(detail) <= 100 else detail[:97] + "..."
    return type(err).__name__ + (f": {detail}" if detail else "")
