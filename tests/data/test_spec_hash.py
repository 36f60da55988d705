"""Model specs are dictionary keys all through a search: each hashes its fields once, to the value the dataclass
would give (so sets and dicts of them keep their order)."""

from __future__ import annotations

import pickle
from dataclasses import replace
from fractions import Fraction

from scalecheck.data.spec import Factor, ModelSpec, Term


class CountedFraction(Fraction):
    """A Fraction that counts how often it is hashed."""

    hashed = 0

    def __hash__(self) -> int:
        CountedFraction.hashed += 1
        return super().__hash__()


def test_a_spec_hashes_its_fields_once_to_the_dataclass_value() -> None:
    x = Factor(0, CountedFraction(3, 2), 1)
    y = Factor(1, CountedFraction(1, 3))
    spec = ModelSpec((Term((y, x)), Term((Factor(0, CountedFraction(2)),))))
    plain = [(0, Fraction(3, 2), 1), (1, Fraction(1, 3), 0), (0, Fraction(2), 0)]  # the dataclass's values
    expected = hash(((Term((Factor(*plain[0]), Factor(*plain[1]))), Term((Factor(*plain[2]),))),))
    CountedFraction.hashed = 0
    assert hash(spec) == expected
    assert CountedFraction.hashed == 3  # each fraction once
    for _ in range(5):
        assert hash(spec) == expected and hash(x) == hash(plain[0]) and hash(spec.terms[0]) == hash(((x, y),))
    assert CountedFraction.hashed == 3
    assert {spec: 1}[ModelSpec((Term((x, y)), Term((Factor(0, Fraction(2)),))))] == 1  # equal specs, one key


def test_a_changed_or_unpickled_spec_hashes_its_own_fields() -> None:
    factor = Factor(0, Fraction(1, 2))
    hash(factor)
    changed = replace(factor, exponent=Fraction(2))
    assert hash(changed) == hash((0, Fraction(2), 0)) != hash(factor)
    spec = ModelSpec((Term((factor,)),))
    hash(spec)
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and hash(again) == hash(spec)
    assert repr(factor) == "Factor(param=0, exponent=Fraction(1, 2), log_exponent=0)"


def test_lead_columns_are_computed_once_per_list_of_terms() -> None:
    from scalecheck.data.spec import _lead_columns

    def spec() -> ModelSpec:  # a new object each time, as the searches build them
        return ModelSpec((Term((Factor(0, Fraction(2)), Factor(1, Fraction(1, 2)))), Term((Factor(0, Fraction(3)),)),
                          Term((Factor(1, Fraction(1)),))))

    assert spec().lead_columns == (1, 2, 3)  # none of x^2 * y^(1/2), x^3 and y is at least another in x and in y
    before = _lead_columns.cache_info()
    assert [spec().lead_columns for _ in range(4)] == [(1, 2, 3)] * 4
    after = _lead_columns.cache_info()
    assert after.misses == before.misses and after.hits == before.hits + 4
    assert ModelSpec((Term((Factor(0, Fraction(1)),)), Term((Factor(0, Fraction(2)),)))).lead_columns == (2,)
