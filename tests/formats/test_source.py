"""The text helpers: locating a JSON value's line, splitting lines."""

from __future__ import annotations

import pytest

from scalecheck.formats.source import line_of, split_lines

DOC = """\
{
  "a": 1,
  "list": [
    {"x": "]}"},
    [1, 2],

    {"y": {"z": [10,
                 20]}}
  ],
  "last": {}
}"""


@pytest.mark.parametrize("keys, line", [
    ((), 1),
    (("a",), 2),
    (("list",), 3),
    (("list", 0), 4),
    (("list", 1), 5),
    (("list", 2), 7),
    (("list", 2, "y", "z", 1), 8),
    (("last",), 10),
])
def test_line_of_finds_the_line_where_a_value_starts(keys: tuple[str | int, ...], line: int) -> None:
    assert line_of(DOC, keys) == line


@pytest.mark.parametrize("keys", [("missing",), ("list", 3), ("a", 0), ("list", "x")])
def test_line_of_is_none_for_a_value_that_is_not_there(keys: tuple[str | int, ...]) -> None:
    assert line_of(DOC, keys) is None


def test_line_of_survives_broken_json() -> None:
    assert line_of('{"a": [1, 2', ("a", 5)) is None


def test_split_lines_keeps_unicode_line_separators_inside_lines() -> None:
    assert split_lines('{"k": "a\u2028b"}\r\n{}\n') == ['{"k": "a\u2028b"}', "{}", ""]
