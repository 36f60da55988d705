"""The text of a measurement file: reading it with user-facing errors, and JSON decoding that knows line numbers.

A file larger than `MAX_FILE_BYTES` is refused before it is read whole; one that is a compressed file, an archive
(a Score-P profile, an Extra-P experiment) or an executable is named for what it is.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import MAX_FILE_BYTES, SPLIT_FIX, too_large

_FLOAT_DIGITS = 308  # an integer of at most 308 characters is below 1.8e308, the largest float
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's own whitespace set, narrower than str.isspace
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')  # a string (skipped whole) or a bracket
_DEEP = 100  # where a nesting that overflows the decoder is reported: scalecheck's formats nest a few levels


def _parse_int(digits: str) -> int | float:
    """A JSON integer; one too large for a float becomes the float it rounds to (infinity), which the readers reject
    as not finite, instead of an int that float() cannot convert or, past 4,300 digits, int() refuses to parse."""
    return int(digits) if len(digits) <= _FLOAT_DIGITS else float(digits)


# stateless; raw_decode lets us step over values to find where a record starts
_DECODER = json.JSONDecoder(parse_int=_parse_int)


def decode_json(text: str) -> object:
    """`text` as one JSON value, every number a float or an int that converts to one. Raises `ValueError` for a
    syntax error (`json.JSONDecodeError`) and `RecursionError` for a nesting deeper than the decoder's stack."""
    return _DECODER.decode(text)


def read_text(path: Path, max_bytes: int = MAX_FILE_BYTES, split_fix: str = SPLIT_FIX) -> str:
    """The whole file as text, or an `InputError` saying why it cannot be (missing, directory, larger than
    `max_bytes`, binary, not UTF-8, empty); `split_fix` says how to make a file that is too large smaller."""
    return decode_text(read_bytes(path, max_bytes), path, max_bytes, split_fix)


def read_bytes(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """At most `max_bytes` + 1 bytes of the file `path` (one more tells that it is too large), or an `InputError`
    saying why it cannot be read (missing, a directory, permissions)."""
    try:
        with path.open("rb") as handle:
            # at most one byte past the limit: a FIFO or a device has no size to check first; a file's size bounds
            # the buffer, which read() would otherwise reserve whole
            info = os.fstat(handle.fileno())
            size = info.st_size if stat.S_ISREG(info.st_mode) else max_bytes
            data = handle.read(min(size, max_bytes) + 1)
            if len(data) > size:  # it grew since: read on up to the limit
                data += handle.read(max_bytes + 1 - len(data))
            return data
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


def decode_text(raw: bytes, source: Path, max_bytes: int = MAX_FILE_BYTES, split_fix: str = SPLIT_FIX) -> str:
    """The bytes of the file `source` (a path, or a name such as ``1a2b3c4:bench/r.json``) as text, or an
    `InputError` when they are more than `max_bytes`, binary, not UTF-8, or hold nothing."""
    if len(raw) > max_bytes:
        raise too_large(source, max_bytes, split_fix)
    _check_text_bytes(raw, source)
    try:
        # utf-8-sig drops the byte-order mark that spreadsheet programs put at the start of CSV files
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        if _looks_binary(raw):
            raise InputError(
                f"this is binary data, not a text file (byte 0x{raw[err.start]:02x} at offset {err.start})",
                where=Location(source), fix=_BINARY_FIX) from None
        raise InputError(
            f"the file is not UTF-8 text (byte 0x{raw[err.start]:02x} at offset {err.start})",
            where=Location(source, line=line),
            fix="save the file as UTF-8 (for example `iconv -t UTF-8`), or check that it is a measurement file",
        ) from None
    check_not_empty(text, source)
    return text


def check_size(text: str, source: Path, max_bytes: int = MAX_FILE_BYTES, split_fix: str = SPLIT_FIX) -> None:
    """An `InputError` when `text`, the content of `source`, takes more than `max_bytes` as UTF-8."""
    # a character takes one to four bytes: only a text near the limit pays for encoding it
    if len(text) > max_bytes // 4 and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise too_large(source, max_bytes, split_fix)


# (how the file starts, what it is, how to get measurements out of it); checked before decoding, so that an archive
# gets a message naming it instead of a suggestion to convert its encoding
_SIGNATURES = (
    (b"\x1f\x8b", "a gzip-compressed file", "decompress it first (gunzip FILE) and name the file inside"),
    (b"BZh[1-9]1AY&SY", "a bzip2-compressed file", "decompress it first (bunzip2 FILE) and name the file inside"),
    (b"\xfd7zXZ\x00", "an xz-compressed file", "decompress it first (unxz FILE) and name the file inside"),
    (b"\\(\xb5/\xfd", "a zstd-compressed file", "decompress it first (zstd -d FILE) and name the file inside"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "extract it first (7z x FILE) and name the measurement files"),
    (b"PK\x03\x04", "a zip archive (an Extra-P .extra-p experiment is one)",
     "for an Extra-P experiment, read it with --format extrap-experiment (or without --format); for another zip "
     "archive, extract the measurement files (unzip FILE) and name them"),
    (b"PK\x05\x06", "an empty zip archive", "name the measurement files themselves"),
    (b"(?s:.{257})ustar", "a tar archive (a Score-P .cubex profile is one)",
     "for a Score-P profile, read it with --format cube (or without --format; it needs pip install "
     "'scalecheck[cube]'); for another tar archive, extract it (tar xf FILE) and name the measurement files"),
    (b"(?s:.{0,16})EXTRAP_EXPERIMENT", "an Extra-P 3 experiment",
     "save it as an Extra-P 4 experiment and read that: extrap --extra-p-3 FILE --save-experiment NEW.extra-p"),
    (b"\x7fELF", "an executable program (ELF)", "name the file the benchmark writes, not the program"),
)
_SIGNATURE = re.compile(b"|".join(b"(%s)" % signature for signature, _, _ in _SIGNATURES))
_BINARY_FIX = ("check that this is a measurement file: scalecheck reads text (JSON, JSON Lines, CSV, Extra-P text), "
               "Score-P .cubex profiles and Extra-P .extra-p experiments")
_CONTROL = bytes(range(0x09)) + bytes(range(0x0e, 0x20)) + b"\x7f"  # C0 controls that text files do not hold


def _check_text_bytes(raw: bytes, source: Path) -> None:
    """An `InputError` naming what `raw` is when it is an archive, a compressed file, an executable, UTF-16/32 text or
    other binary data (a NUL byte), rather than UTF-8 text."""
    match = _SIGNATURE.match(raw)
    if match is not None:
        _, what, fix = _SIGNATURES[(match.lastindex or 1) - 1]  # each signature is one group
        raise InputError(f"this is {what}, not a text file", where=Location(source), fix=fix)
    if b"\x00" not in raw:
        return
    encoding = _utf16_or_32(raw)
    if encoding:
        raise InputError(f"the file is {encoding} text, not UTF-8", where=Location(source),
                         fix=f"save the file as UTF-8 (for example `iconv -f {encoding} -t UTF-8 FILE`)")
    offset = raw.index(b"\x00")
    raise InputError(f"this is binary data, not a text file (a NUL byte at offset {offset})",
                     where=Location(source, line=raw.count(b"\n", 0, offset) + 1), fix=_BINARY_FIX)


def _utf16_or_32(raw: bytes) -> str:
    """UTF-16 or UTF-32 when `raw` starts with their byte-order mark, or looks like ASCII text in UTF-16; else ''."""
    if raw.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    head = raw[:256]
    if len(head) >= 4 and len(head) % 2 == 0:
        low, high = head[0::2], head[1::2]  # little-endian ASCII puts a NUL after every character
        for chars, zeros in ((low, high), (high, low)):
            if zeros.count(0) == len(zeros) and chars.isascii() and chars.count(0) == 0:
                return "UTF-16"
    return ""


def _looks_binary(raw: bytes) -> bool:
    """Whether `raw`, which is not UTF-8, is binary data rather than text in another encoding: control characters
    make up more than 1% of its start, which Latin-1 or Windows-1252 text never has."""
    head = raw[:8192]
    return len(head.translate(None, _CONTROL)) < len(head) * 0.99


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
        return decode_json(text)
    except json.JSONDecodeError as err:
        raise InputError(
            f"not valid JSON: {err.msg} (column {err.colno})",
            where=Location(path, line=err.lineno + line_offset),
            fix="correct the JSON syntax on this line (`python -m json.tool FILE` shows where it breaks)",
        ) from None
    except RecursionError:
        raise InputError("not valid JSON: nested too deeply", where=Location(path, line=_deep_line(text) + line_offset),
                         fix="check that this is a measurement file: its objects and lists nest a few levels "
                             "deep") from None


def _deep_line(text: str) -> int:
    """The 1-based line of `text` where its lists and objects first nest more than `_DEEP` levels (or line 1).

    Only an error pays for this scan.
    """
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > _DEEP:
                return text.count("\n", 0, match.start()) + 1
        elif token in ("]", "}"):
            depth -= 1
    return 1


def shown(value: object, limit: int = 60) -> str:
    """`value` in JSON spelling, cut to `limit` characters, for a message; safe for any decoded value."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):  # a nesting too deep to write out again
        text = type_name(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
    except (ValueError, IndexError, RecursionError):
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
