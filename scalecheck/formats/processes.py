"""Per-process caller->callee pairs: the `processes` section of scalecheck's JSON, its JSON Lines form, and
measurements whose kernel names carry a process id.

A process is an object with an `id` (a string, or a whole number), an optional `tag` (the run or group it belongs
to; ids must be distinct within a tag) and its pairs, given as `pairs` (`[["main", "solve"], ...]` or
`["main->solve", ...]`), as `paths` (call paths, each giving its consecutive pairs: `main->solve->MPI_Send` gives
(main, solve) and (solve, MPI_Send)), or both:

    {"scalecheck": 1,
     "processes": [
       {"id": "rank 0", "paths": ["main->solve->MPI_Send", "main->write_output"]},
       {"id": "rank 0 thread 1", "tag": "run 2", "pairs": [["solve", "compute"]]}
     ]}

The section may stand beside "parameters" and "measurements" (the check then compares the processes too) or
alone. JSON Lines: one process object per line, after an optional header line {"scalecheck": 1}.

Measurements: a kernel named `[rank 3] main->solve->MPI_Send` (the process id in square brackets, then the call
path) belongs to process `rank 3` and gives it the pairs of its path. Kernels without the prefix are not
processes' and are left out of the clustering.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from scalecheck.data.measurement import Run, RunBuilder
from scalecheck.data.processes import Clustering, Pair, Process, ProcessSet
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import MAX_PROCESSES, PROCESSES_FIX, check_process_count
from scalecheck.formats.scalecheck_json import check_keys, check_version
from scalecheck.formats.source import (check_not_empty, decode_json, line_of, lines_of_errors, load_json, read_text,
                                      shown, split_lines, type_name)

PROCESS_KEYS = ("id", "tag", "pairs", "paths")
_PREFIX = re.compile(r"\[([^\[\]]*)\]\s*(.*)", re.DOTALL)  # "[rank 3] main->solve"
_ARROW = re.compile(r"\s*->\s*")
_PAIRS_FIX = ('give it "pairs": [["caller", "callee"], ...] or "paths": ["main->solve->MPI_Send", ...] '
              "(a path needs at least two names)")


def read_processes(path: Path) -> ProcessSet:
    """`read_processes_text` of the file `path`, read once."""
    path = Path(path)
    return read_processes_text(read_text(path, split_fix=PROCESSES_FIX), path)


def read_processes_text(text: str, source: Path) -> ProcessSet:
    """The processes of `text`, the content of the file `source`: a scalecheck JSON file's `processes` section, a
    JSON Lines file of processes, or any measurement file whose kernels are named `[process] call path`."""
    check_not_empty(text, source)
    lines = [line.strip() for line in split_lines(text) if line.strip()]
    if source.suffix.lower() in (".jsonl", ".ndjson") or (len(lines) > 1 and _is_object(lines[0])):
        objects = list(_objects(source, text))
        header = objects[0] if isinstance(objects[0][1], dict) and "scalecheck" in objects[0][1] else None
        body = objects[1:] if header else objects
        if body and isinstance(body[0][1], dict) and any(key in body[0][1] for key in PROCESS_KEYS):
            if header is not None:
                assert isinstance(header[1], dict)  # checked above; mypy does not narrow through the tuple
                _check_header(header[1], Location(source, header[0]))
            return _process_lines(source, body)
    elif lines[0].startswith("{"):
        try:
            doc = decode_json(text)
        except (ValueError, RecursionError):
            doc = None  # the measurement reader names the line of the syntax error
        if isinstance(doc, dict) and "processes" in doc:
            return _section(source, text, doc)
        if isinstance(doc, dict) and "id" in doc and "measurements" not in doc:
            return _process_lines(source, [(1, doc)])  # JSON Lines of a single process
    return _from_measurements(text, source)


def read_processes_section(path: Path) -> ProcessSet | None:
    """`read_processes_section_text` of the file `path`, read once."""
    path = Path(path)
    return read_processes_section_text(read_text(path), path)


def read_processes_section_text(text: str, source: Path) -> ProcessSet | None:
    """The `processes` section of `text`, a scalecheck JSON measurement file named `source`, or None when it has
    none (or is not JSON)."""
    if '"processes"' not in text or not text.lstrip().startswith("{"):
        return None  # most measurement files: no second parse
    try:
        doc = decode_json(text)
    except (ValueError, RecursionError):
        return None  # not one JSON document (JSON Lines); the measurement reader has judged it already
    if not isinstance(doc, dict) or "processes" not in doc:
        return None
    return _section(source, text, doc)


def read_processes_sections(paths: Sequence[Path]) -> ProcessSet | None:
    """The `processes` sections of several measurement files as one set, or None when none has one; the same
    process in two files is an error."""
    found: dict[tuple[str, str], Path] = {}
    processes = []
    for path in paths:
        section = read_processes_section(path)
        for p in section.processes if section is not None else ():
            if p.key in found:
                raise InputError(f"process '{p.name}' is also in the processes section of {found[p.key]}",
                                 where=p.source, fix='give each run\'s processes a "tag", or keep them in one file')
            found[p.key] = path
            processes.append(p)
    return ProcessSet(tuple(processes)) if processes else None


def group_measurements(run: Run, clustering: Clustering) -> Run:
    """`run` with the measurements of kernels named `[process] call path` pooled per group of `clustering`: the
    values of `[rank 1] main->solve`, `[rank 2] main->solve` and `[rank 3] main->solve` become repetitions of
    `[rank 1-3] main->solve`, so that processes doing the same work get one model instead of an average over all.
    Other kernels, and processes the clustering does not know, are kept as they are."""
    label = {p.id: g.label for g in clustering.groups for p in g.processes if not p.tag}
    builder = RunBuilder(run.parameters, Path("<groups>"))
    builder.meta.update(run.meta)
    for s in run.series:
        kernel = s.kernel
        prefixed = _prefixed(kernel)
        if prefixed is not None and prefixed[0] in label:
            kernel = f"[{label[prefixed[0]]}] {prefixed[1]}"
        for point, row in zip(s.points, s.values):
            builder.add(kernel, s.metric, tuple(point), row[~np.isnan(row)].tolist(),
                        s.source or Location(Path("<groups>")), s.unit)
    return builder.build()


def processes_from_run(run: Run, path: Path) -> ProcessSet:
    """Processes from measurements whose kernels are named `[process] call path`; the others are left out."""
    pairs: dict[str, set[Pair]] = {}
    kernels: dict[str, str] = {}
    for series in run.series:
        split = split_process(series.kernel)
        if split is None:
            continue
        pid, frames = split
        kernels.setdefault(pid, series.kernel)
        pairs.setdefault(pid, set()).update(zip(frames[:-1], frames[1:]))
    if not pairs:
        raise InputError("no processes: the file has no \"processes\" section and no kernel named "
                         "'[process] call path'", where=Location(path),
                         fix='add a "processes" section ({"id": "rank 0", "paths": ["main->solve"]}, ...), or '
                             "name kernels with the process in brackets, e.g. '[rank 3] main->solve->MPI_Send'")
    out = []
    for pid, found in pairs.items():
        where = Location(path, record=f"kernel '{kernels[pid]}'")
        if not found:
            raise InputError(f"process '{pid}' has no pairs: its kernels are single names", where=where,
                             fix="name kernels by their call path, e.g. '[rank 3] main->solve'")
        out.append(Process(pid, "", frozenset(found), where))
    return ProcessSet(tuple(out), Location(path))


def split_process(kernel: str) -> tuple[str, tuple[str, ...]] | None:
    """`[rank 3] main->solve` -> ("rank 3", ("main", "solve")); None for a kernel without a process prefix."""
    prefixed = _prefixed(kernel)
    return None if prefixed is None else (prefixed[0], _frames(prefixed[1]))


def _prefixed(kernel: str) -> tuple[str, str] | None:
    """(process id, call path) of a kernel named `[process] call path`, or None."""
    match = _PREFIX.fullmatch(kernel)
    if match is None or not match.group(1).strip() or not match.group(2).strip():
        return None
    return match.group(1).strip(), match.group(2).strip()


def _frames(path: str) -> tuple[str, ...]:
    """A call path's names, split at `->` (or at `/` when it has no arrow), as kernel names are."""
    parts = _ARROW.split(path.strip()) if "->" in path else path.strip().split("/")
    return tuple(parts)


# --- the section and the lines ----------------------------------------------------------------------------------------

def _section(path: Path, text: str, doc: Mapping[str, object]) -> ProcessSet:
    if "scalecheck" not in doc:
        raise InputError("missing key 'scalecheck' (the format version)", where=Location(path),
                         fix='start the file with {"scalecheck": 1, "processes": [...]}')
    with lines_of_errors(text, ("scalecheck",)):
        check_version(doc["scalecheck"], Location(path))
    section = doc["processes"]
    where = Location(path, line_of(text, ("processes",)), "processes")
    if not isinstance(section, list) or not section:
        shown = "an empty list" if section == [] else type_name(section)
        raise InputError(f'"processes" must be a non-empty list of processes, got {shown}', where=where,
                         fix='write "processes": [{"id": "rank 0", "paths": ["main->solve"]}, ...]')
    check_process_count(len(section), where)
    first: dict[tuple[str, str], int] = {}
    out = []
    for index, obj in enumerate(section):
        record = f"processes[{index}]"
        with lines_of_errors(text, ("processes", index)):
            process = _process(obj, Location(path, record=record))
        if process.key in first:
            earlier = first[process.key]
            raise _duplicate(process, Location(path, line_of(text, ("processes", index)), record),
                             f"processes[{earlier}], line {line_of(text, ('processes', earlier))}")
        first[process.key] = index
        out.append(process)
    return ProcessSet(tuple(out), Location(path))


def _check_header(header: Mapping[str, object], where: Location) -> None:
    check_keys(header, ("scalecheck", "meta"), where, "the header line")
    check_version(header["scalecheck"], where)


def _process_lines(path: Path, objects: Sequence[tuple[int, object]]) -> ProcessSet:
    if len(objects) > MAX_PROCESSES:
        check_process_count(len(objects), Location(path, objects[MAX_PROCESSES][0]))
    first: dict[tuple[str, str], int] = {}
    out = []
    for line, obj in objects:
        where = Location(path, line)
        if isinstance(obj, dict) and "scalecheck" in obj:
            raise InputError("a header line must be the first line of the file", where=where,
                             fix='move {"scalecheck": 1} to the first line, or delete it')
        process = _process(obj, where)
        if process.key in first:
            raise _duplicate(process, where, f"line {first[process.key]}")
        first[process.key] = line
        out.append(process)
    return ProcessSet(tuple(out), Location(path))


def _duplicate(process: Process, where: Location, earlier: str) -> InputError:
    within = f" in tag '{process.tag}'" if process.tag else ""
    return InputError(f"duplicate process id '{process.id}'{within} (first at {earlier})", where=where,
                      fix='give every process its own id, or a "tag" naming its run to tell runs apart')


def _process(obj: object, where: Location) -> Process:
    """One process object, checked: id, optional tag, and at least one pair from `pairs` or `paths`."""
    if not isinstance(obj, dict):
        raise InputError(f"a process must be an object, got {type_name(obj)}", where=where,
                         fix='write it as {"id": "rank 0", "paths": ["main->solve->MPI_Send"]}')
    check_keys(obj, PROCESS_KEYS, where, "a process")
    if "id" not in obj:
        raise InputError("missing key 'id'", where=where, fix='name the process, e.g. "id": "rank 0"')
    raw_id = obj["id"]
    if type(raw_id) is int:
        pid = str(raw_id)
    elif isinstance(raw_id, str) and raw_id.strip():
        pid = raw_id.strip()
    else:
        raise InputError(f"'id' must be a non-empty string or a whole number, got {_show(raw_id)}", where=where,
                         fix='name the process, e.g. "id": "rank 0" or "id": 0')
    tag = obj.get("tag", "")
    if not isinstance(tag, str):
        raise InputError(f"process '{pid}': 'tag' must be a string, got {_show(tag)}", where=where,
                         fix='name the run or group as a string, e.g. "tag": "run 2"')
    pairs: set[Pair] = set()
    pairs.update(_pairs(obj.get("pairs", []), pid, where))
    pairs.update(_path_pairs(obj.get("paths", []), pid, where))
    if not pairs:
        raise InputError(f"process '{pid}' has no pairs", where=where, fix=_PAIRS_FIX)
    return Process(pid, tag.strip(), frozenset(pairs), where)


def _pairs(raw: object, pid: str, where: Location) -> list[Pair]:
    if not isinstance(raw, list):
        raise InputError(f"process '{pid}': 'pairs' must be a list, got {type_name(raw)}", where=where,
                         fix='write "pairs": [["caller", "callee"], ...]')
    out = []
    for item in raw:
        if type(item) is list and len(item) == 2 and type(item[0]) is str and type(item[1]) is str:
            names = item  # the usual form, checked cheaply: a file may hold a million pairs
        else:
            names = _ARROW.split(item.strip()) if isinstance(item, str) else item if isinstance(item, list) else []
            if len(names) != 2 or not all(isinstance(n, str) for n in names):
                names = []
        caller, callee = (names[0].strip(), names[1].strip()) if names else ("", "")
        if not caller or not callee:
            number = raw.index(item) + 1
            raise InputError(f"process '{pid}': pair {number} must be two names, got {_show(item)}", where=where,
                             fix='write each pair as ["caller", "callee"] or "caller->callee"')
        out.append((caller, callee))
    return out


def _path_pairs(raw: object, pid: str, where: Location) -> Iterator[Pair]:
    if not isinstance(raw, list):
        raise InputError(f"process '{pid}': 'paths' must be a list, got {type_name(raw)}", where=where,
                         fix='write "paths": ["main->solve->MPI_Send", ...]')
    for number, item in enumerate(raw, start=1):
        frames = _frames(item) if isinstance(item, str) else tuple(item) if isinstance(item, list) else ()
        if not frames or not all(isinstance(f, str) and f.strip() for f in frames):
            raise InputError(f"process '{pid}': path {number} must be a call path of names, got {_show(item)}",
                             where=where, fix='write each path as "main->solve->MPI_Send"')
        names = [f.strip() for f in frames]
        yield from zip(names[:-1], names[1:])


def _from_measurements(text: str, source: Path) -> ProcessSet:
    from scalecheck.formats import read_measurements_text  # the package imports this module's neighbours

    return processes_from_run(read_measurements_text(text, source), source)


def _objects(path: Path, text: str) -> Iterator[tuple[int, object]]:
    for number, line in enumerate(split_lines(text), start=1):
        if line.strip():
            yield number, load_json(path, line, line_offset=number - 1)


def _is_object(line: str) -> bool:
    try:
        return isinstance(decode_json(line), dict)
    except (ValueError, RecursionError):
        return False


def _show(raw: object) -> str:
    if not isinstance(raw, (set, tuple)):
        return shown(raw)
    text = str(raw)
    return text if len(text) <= 60 else text[:57] + "..."
