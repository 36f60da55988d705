"""The text of a measurement file: reading it with user-facing errors, and JSON decoding that knows line numbers."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from scalecheck.errors import InputError, Location

_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's own whitespace set, narrower than str.isspace
_DECODER = json.JSONDecoder()  # stateless; raw_decode lets us step over values to find where a record starts


def read_text(path: Path) -> str:
    """The whole file as text, or an `InputError` saying why it cannot be (missing, directory, not UTF-8, empty)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", where=Location(path),
                         fix="check the path, or run the benchmark that writes this file first") from None
    except IsADirectoryError:
        raise InputError("this is a directory, not a measurement file", where=Location(path),
                         fix="name the measurement files inside it (for example DIR/*.json)") from None
    except PermissionError:
        raise InputError("permission denied", where=Location(path),
                         fix="make the file readable for the user running scalecheck") from None
    except OSError as err:
        raise InputError(f"cannot read the file: {err.strerror or err}", where=Location(path),
                         fix="check that the file exists and is readable") from None
    return decode_text(raw, path)


def decode_text(raw: bytes, source: Path) -> str:
    """The bytes of the file `source` (a path, or a name such as ``1a2b3c4:bench/r.json``) as text, or an
    `InputError` when they are not UTF-8 or hold nothing."""
    try:
        # utf-8-sig drops the byte-order mark that spreadsheet programs put at the start of CSV files
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise InputError(
            f"the file is not UTF-8 text (byte 0x{raw[err.start]:02x} at offset {err.start})",
            where=Location(source, line=line),
            fix="save the file as UTF-8 (for example `iconv -t UTF-8`), or check that it is a measurement file",
        ) from None
    check_not_empty(text, source)
    return text


def check_not_empty(text: str, source: Path) -> None:
    """An `InputError` when `text`, the content of `source`, is empty or only whitespace."""
    if not text or text.isspace():
        raise InputError("the file is empty", where=Location(source),
                         fix="check that the benchmark wrote its results to this file")


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their endings; only \\n and \\r\\n end a line, as in JSON Lines."""
    # str.splitlines would also split at \\x1c or \\u2028, which may stand unescaped inside a JSON string
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def load_json(path: Path, text: str, line_offset: int = 0) -> object:
    """Decode `text` as one JSON value; a syntax error becomes an `InputError` with its 1-based line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            f"not valid JSON: {err.msg} (column {err.colno})",
            where=Location(path, line=err.lineno + line_offset),
            fix="correct the JSON syntax on this line (`python -m json.tool FILE` shows where it breaks)",
        ) from None
    except RecursionError:
        raise InputError("not valid JSON: nested too deeply", where=Location(path),
                         fix="check that this is a measurement file") from None


def type_name(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def line_of(text: str, keys: Sequence[str | int]) -> int | None:
    """The 1-based line where the JSON value at `keys` (object keys and list indices) starts, or None.

    Called only when reporting an error, so the usual path never pays for this scan.
    """
    pos = 0
    try:
        for key in keys:
            pos = _skip(text, pos)
            pos = _enter_list(text, pos, key) if isinstance(key, int) else _enter_object(text, pos, key)
            if pos < 0:
                return None
        pos = _skip(text, pos)
    except (ValueError, IndexError):
        return None
    return text.count("\n", 0, pos) + 1


def _skip(text: str, pos: int) -> int:
    """Position of the first non-whitespace character at or after `pos`."""
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _enter_list(text: str, pos: int, index: int) -> int:
    """Position of element `index` of the list starting at `pos`, or -1."""
    if text[pos] != "[":
        return -1
    pos += 1
    for current in range(index + 1):
        pos = _skip(text, pos)
        if text[pos] == "]":
            return -1
        if current == index:
            return pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] == ",":
            pos += 1
    return -1


def _enter_object(text: str, pos: int, key: str) -> int:
    """Position of the value of `key` in the object starting at `pos`, or -1."""
    if text[pos] != "{":
        return -1
    pos += 1
    while True:
        pos = _skip(text, pos)
        if text[pos] == "}":
            return -1
        name, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] != ":":
            return -1
        pos = _skip(text, pos + 1)
        if name == key:
            return pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] == ",":
            pos += 1


def with_line(err: InputError, text: str, keys: Sequence[str | int]) -> InputError:
    """`err` again, its location completed with the line of the JSON value at `keys` when it had none."""
    where = err.where
    if where is None or where.line is not None:
        return err
    return InputError(err.problem, where=Location(where.path, line_of(text, keys), where.record), fix=err.fix)


class lines_of_errors:  # noqa: N801 - used like a function, as contextlib's helpers are
    """Complete an `InputError` raised inside with the line of the JSON value at `keys`, found only then.

    A class, not @contextmanager, because it wraps every record of a file and must cost next to nothing.
    """

    def __init__(self, text: str, keys: Sequence[str | int]) -> None:
        self.text, self.keys = text, keys

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        if isinstance(err, InputError):
            raise with_line(err, self.text, self.keys) from None
