"""A checked pair of planted runs whose kernels carry hostile names, shared by the report tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from scalecheck.api import CheckResult, check
from scalecheck.config import Config

P = (2, 4, 8, 16, 32, 64, 128, 256)
HOSTILE = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "a::error::b%0A",
    "x\n::error title=t::injected,with:colons",
    "@octocat [link](http://evil.example) | `tick` ![img](http://evil.example/p.png)",
)
Function = Callable[[float], float]
BASE: dict[str, Function] = {"main->solve": lambda p: 0.5 + 0.1 * p, "main->io": lambda p: 1.0 + 0.4 * np.log2(p)}
BASE.update({name: (lambda p: 0.8 + 0.05 * p) for name in HOSTILE})
# main->solve and every hostile kernel grow as p^(3/2) instead of p
WORSE: dict[str, Function] = {**BASE, **{name: (lambda p: 0.8 + 0.05 * p**1.5 / 2**0.5)
                                         for name in ("main->solve", *HOSTILE)}}


def document(functions: Mapping[str, Function], seed: int, unit: str = "s") -> dict[str, object]:
    rng = np.random.default_rng(seed)
    rows = [{"kernel": kernel, "metric": "time", "unit": unit, "point": {"p": p},
             "values": [float(v) for v in f(float(p)) * (1 + 0.03 * rng.standard_normal(5))]}
            for kernel, f in functions.items() for p in P]
    return {"scalecheck": 1, "parameters": ["p"], "meta": {"machine": "ci-runner"}, "measurements": rows}


def write(path: Path, functions: Mapping[str, Function], seed: int, unit: str = "s") -> Path:
    path.write_text(json.dumps(document(functions, seed, unit)), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Pair:
    baseline: Path
    candidate: Path
    result: CheckResult


@pytest.fixture(scope="session")
def hostile_pair(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    """Baseline and candidate files (the candidate with planted p^(3/2) growth) and the check of one against the
    other, with 20 resamples."""
    folder = tmp_path_factory.mktemp("pair")
    baseline = write(folder / "baseline.json", BASE, 1)
    candidate = write(folder / "candidate.json", WORSE, 2)
    config = Config(root=folder).with_overrides(bootstrap=20)
    return Pair(baseline, candidate, check([candidate], str(baseline), config, cwd=folder))
