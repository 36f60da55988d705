"""Mutations of a file's bytes, each `(data, rng) -> (data, description)`, and the hostile names they plant.

Every mutation draws only from the `random.Random` it is given, so a case is the same on every machine; the
description says what was done, precisely enough to redo it by hand (offsets, lengths, the planted text).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable

Mutation = Callable[[bytes, random.Random], tuple[bytes, str]]

# Names that try to break out of their place: a GitHub workflow command on a line of its own or in a runner's
# legacy form, terminal escapes, text reordering (bidirectional controls), hidden characters, line breaks of other
# kinds, %-escapes that GitHub decodes, HTML and Markdown that a report could execute or break.
HOSTILE_NAMES = (
    "\n::error file=x::PWNED",
    "::error file=x,line=1::PWNED",
    "  ::warning::PWNED",
    "::stop-commands::pwned",
    "::add-mask::secret",
    "##[error]PWNED",
    "x##[group]PWNED",
    "\r::error::PWNED",
    "%0A::error::PWNED%0D",
    "a,b:c::d",
    "\x1b[31mRED\x1b[0m\x1b]8;;http://x\x07link\x1b]8;;\x07",
    "\x1b[2J\x1b[H",
    "admin\u202e\u2066txt.exe\u2069",
    "\u200fright\u200eleft\u061c",
    "zero\u200bwidth\ufeff",
    "nul\x00byte",
    "c1\x85\x9b31m\x9c",
    "del\x7f",
    "tab\there",
    "line\u2028sep\u2029",
    "\ud800lone",
    "lone\udfff",
    "<script>alert(1)</script>",
    "| a | b |\n|---|---|",
    "${{ github.token }}",
    "`rm -rf /`",
    "\\x1b\\n",
)
LONG_NAMES = ("k" * 1_000, "\u00e9" * 50_000, "->".join(["f"] * 3_000), "n" * 100_000)
EXTREME_FLOATS = (b"1e308", b"-1e308", b"1e-320", b"5e-324", b"1.7976931348623157e308", b"-0.0", b"0", b"1e309")
NOT_FINITE = (b"NaN", b"Infinity", b"-Infinity", b"nan", b"inf", b"-inf", b"1e999", b"-nan")
INTERESTING_BYTES = (b"\x00", b"\xff", b'"', b"{", b"}", b"[", b"]", b",", b"\n", b"\r", b":", b"\\", b"-", b"e",
                     b".", b"\t", b"#", b"(", b")", b" ", b"\xc3", b"\xed\xa0\x80", b"\x1b")
NESTING = 3_000
MAX_GROWTH = 2_000_000  # bytes a renaming may add to a file (a 100,000-character name everywhere: 75 MB and more)

_NUMBER = re.compile(rb"(?<![\w.\-])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_JSON_STRING = re.compile(rb'"((?:[^"\\\n]|\\.)*)"(\s*:)?')  # from the left, so quotes pair up
_JSON_KEY = re.compile(rb'"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*')
_TEXT_NAME = re.compile(rb"^(?:REGION|METRIC|PARAMETER|CALLPATH)[ \t]+([^\r\n]+?)[ \t]*$", re.MULTILINE)
_CSV_FIRST_FIELD = re.compile(rb"^([^,\r\n]+),", re.MULTILINE)


def _show(data: bytes, limit: int = 60) -> str:
    """Planted bytes as a Python literal, shortened: long values keep their length and their ends."""
    if len(data) > limit:
        return f"{data[:limit // 2]!r}...({len(data):,} bytes)...{data[-limit // 4:]!r}"
    return repr(data)


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def bit_flip(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Flip 1-8 single bits."""
    if not data:
        return b"\x80", "empty file: wrote byte 0x80"
    buf = bytearray(data)
    done = []
    for _ in range(rng.randint(1, 8)):
        at, bit = rng.randrange(len(buf)), rng.randrange(8)
        buf[at] ^= 1 << bit
        done.append(f"{at}:{bit}")
    return bytes(buf), f"flipped bits (offset:bit) {', '.join(done)}"


def byte_insert(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Insert 1-4 short runs of syntax characters, invalid UTF-8 or random bytes."""
    done = []
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(data))
        chunk = rng.choice(INTERESTING_BYTES) * rng.choice((1, 1, 2, 16)) if rng.random() < 0.7 \
            else bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        data = data[:at] + chunk + data[at:]
        done.append(f"{_show(chunk)} at {at}")
    return data, f"inserted {', '.join(done)}"


def span_delete(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Delete a span of 1-64 bytes."""
    if not data:
        return data, "empty file: nothing to delete"
    at = rng.randrange(len(data))
    length = rng.randint(1, 64)
    return data[:at] + data[at + length:], f"deleted bytes {at}..{min(at + length, len(data))}"


def truncate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Cut the file: at a random offset, inside its last line, or to nothing."""
    choice = rng.random()
    at = 0 if choice < 0.1 else len(data) - rng.randint(1, 8) if choice < 0.3 else rng.randint(0, len(data))
    at = max(0, at)
    return data[:at], f"truncated to {at} of {len(data)} bytes"


def _replace_numbers(data: bytes, rng: random.Random, make: Callable[[bytes], bytes], what: str) -> tuple[bytes, str]:
    """Replace 1-3 number tokens (all of them, sometimes, unless that grows the file by MBs) by `make(token)`."""
    found = list(_NUMBER.finditer(data))
    if not found:
        return byte_insert(data, rng)
    every = rng.random() < 0.1 and len(found) * len(make(b"1")) <= MAX_GROWTH
    picked = found if every else sorted(rng.sample(found, min(len(found), rng.randint(1, 3))), key=lambda m: m.start())
    parts, done = [], 0
    for match in picked:
        parts += [data[done:match.start()], make(match.group())]
        done = match.end()
    where = "every number" if every and len(found) > 3 else "number(s) at " + ", ".join(str(m.start()) for m in picked)
    return b"".join(parts) + data[done:], f"{what} in place of {where}"


def huge_int(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Numbers of 400 or 5,000 digits (the latter beyond Python's int-to-str limit), some negative or with a
    fraction or an exponent."""
    digits = rng.choice((400, 5_000))
    sign = rng.choice((b"", b"", b"-"))
    tail = rng.choice((b"", b"", b".5", b"e5", b"e-400"))
    body = str(rng.randint(1, 9)).encode() + bytes(rng.choice(b"0123456789") for _ in range(digits - 1))
    text = sign + body + tail
    return _replace_numbers(data, rng, lambda _: text, f"a {digits}-digit number {_show(text, 30)}")


def extreme_float(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """The largest, smallest and subnormal doubles, and just beyond."""
    value = rng.choice(EXTREME_FLOATS)
    return _replace_numbers(data, rng, lambda _: value, value.decode())


def not_finite(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """NaN and infinity in the spellings of JSON extensions, C and Python."""
    value = rng.choice(NOT_FINITE)
    return _replace_numbers(data, rng, lambda _: value, value.decode())


def deep_nesting(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A number wrapped in 3,000 levels of arrays or objects, or 3,000 open brackets in a line."""
    opener, closer = rng.choice(((b"[", b"]"), (b'{"a":', b"}"), (b"(", b")")))
    if rng.random() < 0.7 and _NUMBER.search(data):
        return _replace_numbers(data, rng, lambda token: opener * NESTING + token + closer * NESTING,
                                f"{NESTING} levels of {opener.decode()}...{closer.decode()}")
    lines = _lines(data)
    at = rng.randrange(len(lines))
    closing = closer * NESTING if rng.random() < 0.5 else b""
    lines.insert(at, opener * NESTING + b"1" + closing + b"\n")
    return b"".join(lines), f"line {at + 1}: {NESTING} x {opener!r}" + (" closed" if closing else " left open")


def duplicate_lines(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A line repeated 1, 2 or 100 times, or the whole file twice."""
    if rng.random() < 0.2:
        return data + (b"" if data.endswith(b"\n") else b"\n") + data, "the whole file twice"
    lines = _lines(data)
    at = rng.randrange(len(lines))
    line = lines[at] if lines[at].endswith(b"\n") else lines[at] + b"\n"
    times = rng.choice((1, 2, 100))
    lines[at:at] = [line] * times
    return b"".join(lines), f"line {at + 1} repeated {times} more time(s)"


def duplicate_keys(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A JSON member given twice: the copy, with another value, before the original (which JSON parsers keep)."""
    found = list(_JSON_KEY.finditer(data))
    if not found:
        return duplicate_lines(data, rng)
    match = rng.choice(found)
    value = rng.choice((b"1", b'"x"', b"null", b"[]", b"{}", b"-1", b"true", b"[1, 2]", b'{"p": 1}'))
    member = b'"' + match.group(1) + b'": ' + value + b", "
    return data[:match.start()] + member + data[match.start():], \
        f"key {match.group(1).decode()!r} at {match.start()} given first as {value.decode()}"


def duplicate_columns(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A CSV column repeated in every row (header included); in other files, a line repeated."""
    lines = _lines(data)
    if not lines[0].count(b","):
        return duplicate_lines(data, rng)
    column = rng.randrange(lines[0].count(b",") + 1)
    out = []
    for line in lines:
        end = len(line) - len(line.rstrip(b"\r\n"))
        fields = (line[:-end] if end else line).split(b",")
        if column < len(fields):
            fields.insert(column, fields[column])
        out.append(b",".join(fields) + (line[-end:] if end else b""))
    return b"".join(out), f"column {column + 1} repeated in every row"


_NAME_KEY = re.compile(rb'"(?:kernel|callpath|region|name|id|location|operation|metric)"\s*:\s*$')


def _name_slots(data: bytes) -> list[tuple[int, int, bool]]:
    """(start, end, inside a JSON string) of the names in `data`: JSON string values (those of name keys such as
    "kernel" and "callpath" when there are any), Extra-P text names, else the first field of CSV rows."""
    strings = [m for m in _JSON_STRING.finditer(data) if m.group(2) is None]
    named = [m for m in strings if _NAME_KEY.search(data[max(0, m.start() - 40):m.start()])]
    slots = [(m.start(1), m.end(1), True) for m in (named or strings)]
    slots += [(m.start(1), m.end(1), False) for m in _TEXT_NAME.finditer(data)]
    if not slots:
        slots += [(m.start(1), m.end(1), False) for m in _CSV_FIRST_FIELD.finditer(data)][1:]
    return slots


def encode_name(name: str, in_json: bool, rng: random.Random) -> tuple[bytes, str]:
    """`name` as bytes for its place: JSON-escaped (ASCII or not) or raw in a JSON string, raw UTF-8 elsewhere;
    lone surrogates can only be written as JSON escapes, and raw they become invalid UTF-8."""
    if in_json and rng.random() < 0.85:
        ascii_only = rng.random() < 0.5
        text = json.dumps(name, ensure_ascii=ascii_only)[1:-1]
        return text.encode("utf-8", "surrogatepass"), "JSON-escaped" + (" (ASCII)" if ascii_only else "")
    return name.encode("utf-8", "surrogatepass"), "raw"


def rename(data: bytes, old: bytes, new: bytes) -> bytes:
    """Every name of `data` that reads `old` renamed to `new`."""
    parts, done = [], 0
    for start, end, _ in sorted(_name_slots(data)):
        if start >= done and data[start:end] == old:
            parts += [data[done:start], new]
            done = end
    return b"".join(parts) + data[done:]


def plant_name(data: bytes, rng: random.Random, names: tuple[str, ...],
               what: str) -> tuple[bytes, str, tuple[bytes, bytes] | None]:
    """Rename one name, sometimes everywhere it occurs, to one of `names`: (data, description, (old, new) bytes)."""
    slots = _name_slots(data)
    name = rng.choice(names)
    if not slots:
        at = rng.randint(0, len(data))
        raw = name.encode("utf-8", "surrogatepass")
        return data[:at] + raw + data[at:], f"{what} {name[:60]!r} inserted raw at {at} (no name found)", None
    start, end, in_json = rng.choice(slots)
    raw, how = encode_name(name, in_json, rng)
    old = data[start:end]
    everywhere = sum(1 for s, e, _ in slots if data[s:e] == old)
    if rng.random() < 0.5 and everywhere * len(raw) <= MAX_GROWTH:  # a long name everywhere: a file of MBs
        return rename(data, old, raw), f"{what} {name[:60]!r} ({len(name):,} chars, {how}) in place of every " \
                                      f"name {_show(old)}", (old, raw)
    return data[:start] + raw + data[end:], f"{what} {name[:60]!r} ({len(name):,} chars, {how}) in place of " \
                                            f"the name {_show(old)} at {start}", (old, raw)


def hostile_name(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A name that tries to inject a workflow command, a terminal escape, reordered or hidden text."""
    data, what, _ = plant_name(data, rng, HOSTILE_NAMES, "hostile name")
    return data, what


def long_name(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A name of 1,000 to 100,000 characters (one of them a 3,000-step call path)."""
    data, what, _ = plant_name(data, rng, LONG_NAMES, "long name")
    return data, what


def encoding(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Another encoding or other line ends: UTF-16, a byte-order mark, Latin-1 or invalid UTF-8, CRLF, CR."""
    choice = rng.randrange(6)
    if choice == 0:
        return data.decode("utf-8", "replace").encode("utf-16"), "re-encoded as UTF-16 with a byte-order mark"
    if choice == 1:
        return b"\xef\xbb\xbf" + data, "UTF-8 byte-order mark in front"
    if choice == 2:
        at = rng.randint(0, len(data))
        bad = rng.choice((b"\xe9", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"))
        return data[:at] + bad + data[at:], f"invalid UTF-8 {bad!r} at {at}"
    if choice == 3:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"), "CRLF line ends"
    if choice == 4:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r"), "CR line ends"
    return data.replace(b"\n", b"\n\x00", 1), "a NUL byte at the start of line 2"


# The content mutations by family name; "stacked" mutations are drawn from the byte-level ones.
CONTENT_MUTATIONS: dict[str, Mutation] = {
    "bit-flip": bit_flip,
    "byte-insert": byte_insert,
    "span-delete": span_delete,
    "truncate": truncate,
    "huge-int": huge_int,
    "extreme-float": extreme_float,
    "not-finite": not_finite,
    "deep-nesting": deep_nesting,
    "duplicate-lines": duplicate_lines,
    "duplicate-keys": duplicate_keys,
    "duplicate-columns": duplicate_columns,
    "hostile-name": hostile_name,
    "long-name": long_name,
    "encoding": encoding,
}
STACKED = ("huge-int", "extreme-float", "not-finite", "duplicate-lines", "hostile-name", "long-name")  # keep syntax
