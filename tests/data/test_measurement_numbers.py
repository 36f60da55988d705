"""`number`: what a reader's value becomes, and what its error quotes, whatever a file holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalecheck.data.measurement import number
from scalecheck.errors import InputError, Location

WHERE = Location(Path("m.csv"), 3)


@pytest.mark.parametrize("raw, shown", [
    (10**400, "a value must be a finite number, got an integer of about 401 digits"),
    (-(10**5000), "a value must be a finite number, got an integer of about 5001 digits"),  # str() refuses it
    ("1e999", "a value must be a finite number, got '1e999'"),
    ("x" * 100_000, "a value must be a number, got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."),
], ids=["401 digits", "5001 digits", "1e999", "long text"])
def test_a_value_beyond_the_floats_is_an_error_quoting_it_briefly(raw: object, shown: str) -> None:
    with pytest.raises(InputError) as info:
        number(raw, "a value", WHERE, "correct it")
    assert str(info.value) == f"m.csv:3: {shown}; fix: correct it"


def test_an_integer_within_the_floats_is_read() -> None:
    assert number(10**300, "a value", WHERE, "correct it") == 1e300
