"""scalecheck.core.special gives scipy.special's functions: the same objects and values, loaded without the package's
__init__ (each route is checked in a fresh interpreter, where scipy.special is not loaded yet)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import special as scipy_special

from scalecheck.core import special

ROOT = Path(__file__).resolve().parents[2]
# per function: the range of each argument (log-uniform when both ends are positive and far apart)
DOMAINS: dict[str, tuple[tuple[float, float], ...]] = {
    "chdtr": ((0.1, 500.0), (0.0, 1000.0)),
    "chdtrc": ((0.1, 500.0), (0.0, 1000.0)),
    "chdtri": ((0.1, 500.0), (0.0, 1.0)),
    "fdtr": ((0.1, 500.0), (0.1, 500.0), (0.0, 100.0)),
    "fdtrc": ((0.1, 500.0), (0.1, 500.0), (0.0, 100.0)),
    "fdtri": ((0.1, 500.0), (0.1, 500.0), (0.0, 1.0)),
    "gammainc": ((1e-3, 1e3), (0.0, 2000.0)),
    "gammaincc": ((1e-3, 1e3), (0.0, 2000.0)),
    "gammaln": ((-50.0, 200.0),),
    "ndtr": ((-40.0, 40.0),),
    "ndtri": ((0.0, 1.0),),
    "pdtr": ((0.0, 200.0), (1e-3, 200.0)),
    "pdtrik": ((0.0, 1.0), (1e-3, 200.0)),
    "stdtr": ((0.1, 500.0), (-50.0, 50.0)),
    "stdtrit": ((0.1, 500.0), (0.0, 1.0)),
}
EDGES = np.array([0.0, 1.0, -1.0, 0.5, 1e-9, 1e300, np.inf, -np.inf, np.nan])  # out of domain included


def arguments(name: str, rng: np.random.Generator, n: int = 2000) -> list[np.ndarray]:
    """`n` random arguments in each argument's domain, then every combination of the edge values."""
    drawn = []
    for low, high in DOMAINS[name]:
        if low > 0 and high / low > 100:
            drawn.append(np.exp(rng.uniform(np.log(low), np.log(high), n)))
        else:
            drawn.append(rng.uniform(low, high, n))
    grids = np.meshgrid(*[EDGES] * len(drawn), indexing="ij")
    return [np.concatenate([values, grid.ravel()]) for values, grid in zip(drawn, grids)]


def run_python(code: str) -> str:
    """Standard output of `code` run by a fresh interpreter in the repository (no scipy.special loaded yet)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_special_names_every_function_of_scipy_special_it_offers() -> None:
    assert set(special.NAMES) == set(DOMAINS)
    for name in special.NAMES:
        assert getattr(special, name) is getattr(scipy_special, name)


def test_special_loads_the_compiled_functions_without_scipy_special(tmp_path: Path) -> None:
    code = f"""
import sys
import numpy as np
import warnings
warnings.simplefilter("error")
from scalecheck.core import special
assert special._functions.__name__ == "scipy.special._ufuncs", special._functions
assert "scipy.special" not in sys.modules and "scipy._lib._array_api" not in sys.modules
from tests.core.test_special import DOMAINS, arguments  # loads scipy.special: the functions are bound already
rng = np.random.default_rng(20240601)
values = {{name: getattr(special, name)(*arguments(name, rng)) for name in DOMAINS}}
np.savez({str(tmp_path / "values.npz")!r}, **values)
print(type(special.ndtr(0.3)).__name__, type(special.fdtri(1, 10, 0.95)).__name__)
"""
    assert run_python(code).split() == ["float64", "float64"]
    rng = np.random.default_rng(20240601)
    found = np.load(tmp_path / "values.npz")
    for name in DOMAINS:  # the same order of draws as in the child
        expected = getattr(scipy_special, name)(*arguments(name, rng))
        assert found[name].dtype == expected.dtype == np.float64
        np.testing.assert_array_equal(found[name], expected, err_msg=name)  # bit for bit, NaN where scipy has NaN


def test_scipy_special_imported_afterwards_is_whole_and_shares_the_functions() -> None:
    code = """
import sys
from scalecheck.core import special
import scipy.special, scipy.stats
from scipy.special import logsumexp
same = all(getattr(special, name) is getattr(scipy.special, name) for name in special.NAMES)
print(same, sys.modules["scipy.special"] is scipy.special, scipy.special.gamma(0.5) ** 2,
      float(logsumexp([0.0, 0.0])), float(scipy.stats.norm.ppf(0.5)))
"""
    same, registered, pi, log2, median = run_python(code).split()
    assert (same, registered) == ("True", "True")
    assert float(pi) == pytest.approx(np.pi) and float(log2) == pytest.approx(np.log(2)) and float(median) == 0.0


@pytest.mark.parametrize("arguments_of_load", ['"scipy.special._no_such_module"',
                                               'names=special.NAMES + ("no_such_function",)'],
                         ids=["compiled module missing", "function missing"])
def test_load_falls_back_to_scipy_special(arguments_of_load: str) -> None:
    code = f"""
import sys
from scalecheck.core import special  # the direct route: scipy.special itself is not loaded yet
from scalecheck.core.special import load
assert "scipy.special" not in sys.modules
found = load({arguments_of_load})
print(found.__name__, found is sys.modules["scipy.special"], float(found.gamma(0.5) ** 2))
"""
    name, registered, pi = run_python(code).split()
    assert (name, registered) == ("scipy.special", "True")
    assert float(pi) == pytest.approx(np.pi)


def test_load_takes_scipy_special_when_it_is_loaded_already() -> None:
    code = """
import sys
import scipy.special
from scalecheck.core import special
print(special.load() is scipy.special)
"""
    assert run_python(code).split() == ["True"]


def test_another_thread_importing_scipy_special_meanwhile_gets_the_whole_package() -> None:
    """While the compiled module loads (slowed down here), a second thread's `from scipy.special import gamma` waits
    and then finds the real package, not the stand-in."""
    code = """
import importlib.abc, json, sys, threading, time
import numpy, scipy

loading = threading.Event()

class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "scipy.special._ufuncs" and threading.current_thread() is threading.main_thread():
            loading.set()
            time.sleep(0.3)  # the second thread imports scipy.special now
        return None

sys.meta_path.insert(0, Slow())
found = {}

def other():
    loading.wait()
    try:
        from scipy.special import gamma
        found["gamma"] = float(gamma(0.5) ** 2)
    except Exception as err:
        found["error"] = repr(err)

thread = threading.Thread(target=other)
thread.start()
from scalecheck.core import special
thread.join(60)
found["route"] = special._functions.__name__
print(json.dumps(found))
"""
    found = json.loads(run_python(code))
    assert found.get("error") is None
    assert found["gamma"] == pytest.approx(np.pi)
    assert found["route"] == "scipy.special._ufuncs"
