"""The `scaling` setting (`--scaling`) chooses how a Score-P profile's values over its processes and threads make one
value, as Extra-P's --scaling does: the mean (weak, the default), the mean of the threads that ran the call path
(weak_threaded), the sum (strong)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scalecheck import cli
from scalecheck.formats import read_many

THREADED = Path(__file__).resolve().parent / "inputs" / "cube" / "simple_threaded"  # 4 threads per run


@pytest.fixture(autouse=True)
def _needs_pycubexr() -> None:
    pytest.importorskip("pycubexr")


def values(scaling: str) -> dict[tuple[str, str], np.ndarray]:
    return {(s.kernel, s.metric): s.values for s in read_many([THREADED], scaling=scaling).series}


def test_strong_scaling_sums_what_weak_scaling_averages_over_the_locations() -> None:
    weak, strong = values("weak"), values("strong")
    assert weak.keys() == strong.keys()
    key = next(k for k in weak if k[1] == "time" and np.all(weak[k] > 0))
    assert np.allclose(strong[key], 4 * weak[key])  # four threads: the sum is four times the mean


@pytest.mark.parametrize("scaling", ["weak", "weak_threaded", "strong"])
def test_the_flag_reaches_the_reader(scaling: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "models.json"
    assert cli.main(["model", str(THREADED), "--scaling", scaling, "--json", str(out)]) == 0
    capsys.readouterr()
    assert json.loads(out.read_text(encoding="utf-8"))["models"]


def test_an_unknown_scaling_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["model", str(THREADED), "--scaling", "strng"])
    assert info.value.code == 2
    assert capsys.readouterr().err == ("scalecheck: error: argument --scaling: invalid choice: 'strng' (choose from "
                                       "'weak', 'weak_threaded', 'strong'); fix: did you mean 'strong'?\n")
