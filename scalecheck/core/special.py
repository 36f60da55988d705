"""The special functions behind the statistical tests (distribution functions and their inverses), with the names,
signatures and values of `scipy.special`, for about a tenth of the start-up cost of `import scipy.special`.

They are numpy ufuncs of scipy's compiled module `scipy.special._ufuncs`. Imported the usual way, that module first
runs `scipy/special/__init__.py`, which also sets up scipy's array-API support: a copy of numpy's namespace whose
`from numpy import *` loads numpy.f2py, numpy.testing, numpy.ma and more, 0.07 to 0.1 s on top of numpy's own
import, paid by every `scalecheck model`. `load` reads the compiled module on its own (about 0.01 s, the `scipy`
package included) and takes the functions from it: they are the very objects that `scipy.special` exposes (checked
with scipy 1.11 to 1.17 on Python 3.10 to 3.13). It falls back to `import scipy.special` when scipy.special is loaded
already, and when the direct route fails or lacks a function (a scipy laid out differently), so the values never
depend on the route.

    >>> from scalecheck.core import special
    >>> float(special.fdtri(1, 10, 0.95))   # scipy.special.fdtri: the 95% point of F(1, 10)
    4.9646...
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

PACKAGE = "scipy.special"
COMPILED = "scipy.special._ufuncs"  # the compiled module that holds the functions (a submodule of PACKAGE)
NAMES = ("chdtr", "chdtrc", "chdtri", "fdtr", "fdtrc", "fdtri", "gammainc", "gammaincc", "gammaln", "ndtr", "ndtri",
         "pdtr", "pdtrik", "stdtr", "stdtrit")


def load(compiled: str = COMPILED, names: Sequence[str] = NAMES) -> ModuleType:
    """The module that provides the functions `names`: the compiled submodule `compiled` of scipy.special, loaded
    without running scipy.special's `__init__`; or `scipy.special` itself when it is loaded already, or when the
    direct route fails or misses one of `names`.

    Cost: about 0.01 s (0.07 s or more for `import scipy.special`), once per process.
    """
    if PACKAGE not in sys.modules:
        try:
            found = _compiled_alone(compiled)
        except Exception:  # noqa: BLE001 - whatever breaks the direct route, the documented import still works
            found = None
        if found is not None and all(callable(getattr(found, name, None)) for name in names):
            return found
    return importlib.import_module(PACKAGE)


def _compiled_alone(compiled: str) -> ModuleType | None:
    """`compiled`, imported while a stand-in of scipy.special holds the package's place in `sys.modules`; None when
    scipy.special is being imported or this Python's import system lacks the per-module lock.

    The compiled modules stay in `sys.modules` (such a module can be initialised once only), so a later
    `import scipy.special` runs its `__init__` with them: the same function objects. (That package then has the
    compiled modules its `__init__` names as attributes, `_ufuncs` among them, but not the private ones only
    `_ufuncs` imports, such as `_ufuncs_cxx`; `import scipy.special._ufuncs_cxx` still finds them.) The stand-in is
    the package's folder without its `__init__`: the compiled module's relative imports find their siblings through
    it."""
    bootstrap = getattr(importlib, "_bootstrap", None)
    module_lock = getattr(bootstrap, "_ModuleLockManager", None)  # what importlib itself holds while it imports
    spec = importlib.util.find_spec(PACKAGE)  # imports the top package, scipy (light), not scipy.special
    if module_lock is None or spec is None or spec.submodule_search_locations is None:
        return None
    with module_lock(PACKAGE):
        if PACKAGE in sys.modules:  # another thread imported it first
            return None
        with _stand_in(spec):
            return importlib.import_module(compiled)


@contextmanager
def _stand_in(spec: ModuleSpec) -> Iterator[ModuleType]:
    """A module for `spec` (a package) in `sys.modules` while the block runs, its `__init__` not run. The caller holds
    the package's import lock: marked as initialising, the stand-in makes other threads' imports of the package wait
    for that lock and then import the package itself. Removed when the block ends; from then on a name missing from
    it comes from the real package (a thread that got hold of it while it stood in)."""
    stand_in = importlib.util.module_from_spec(spec)
    spec._initializing = True  # type: ignore[attr-defined]  # importlib's flag for a module being imported
    sys.modules[spec.name] = stand_in
    try:
        yield stand_in
    finally:
        if sys.modules.get(spec.name) is stand_in:
            del sys.modules[spec.name]
        spec._initializing = False  # type: ignore[attr-defined]
        stand_in.__getattr__ = _from_package(spec.name)  # type: ignore[method-assign]


def _from_package(name: str) -> Callable[[str], Any]:
    """A module `__getattr__` (PEP 562) that looks names up in the package `name`, imported on first use."""
    def look_up(attribute: str) -> Any:
        return getattr(importlib.import_module(name), attribute)
    return look_up


_functions = load()

chdtr: Callable[..., Any] = _functions.chdtr  # chi-square distribution function chdtr(v, x)
chdtrc: Callable[..., Any] = _functions.chdtrc  # its complement chdtrc(v, x)
chdtri: Callable[..., Any] = _functions.chdtri  # inverse of chdtrc in x: chdtri(v, p)
fdtr: Callable[..., Any] = _functions.fdtr  # F distribution function fdtr(dfn, dfd, x)
fdtrc: Callable[..., Any] = _functions.fdtrc  # its complement fdtrc(dfn, dfd, x)
fdtri: Callable[..., Any] = _functions.fdtri  # inverse of fdtr in x: fdtri(dfn, dfd, p)
gammainc: Callable[..., Any] = _functions.gammainc  # regularized lower incomplete gamma gammainc(a, x)
gammaincc: Callable[..., Any] = _functions.gammaincc  # its complement gammaincc(a, x)
gammaln: Callable[..., Any] = _functions.gammaln  # log |Gamma(x)|
ndtr: Callable[..., Any] = _functions.ndtr  # standard normal distribution function ndtr(x)
ndtri: Callable[..., Any] = _functions.ndtri  # its inverse ndtri(p)
pdtr: Callable[..., Any] = _functions.pdtr  # Poisson distribution function pdtr(k, m)
pdtrik: Callable[..., Any] = _functions.pdtrik  # inverse of pdtr in k: pdtrik(p, m)
stdtr: Callable[..., Any] = _functions.stdtr  # Student t distribution function stdtr(df, t)
stdtrit: Callable[..., Any] = _functions.stdtrit  # inverse of stdtr in t: stdtrit(df, p)
