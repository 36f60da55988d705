"""scalecheck: catch scalability bugs in continuous integration.

Kept import-light on purpose: no numpy here, so `scalecheck --help` and a pytest run that loads the plugin stay fast.
The modeling API lives in `scalecheck.api` (``from scalecheck.api import fit_models``).
"""

from scalecheck.errors import ConfigError, InputError, ModelingError, ScalecheckError

__version__ = "0.1.0"
__all__ = ["ConfigError", "InputError", "ModelingError", "ScalecheckError", "__version__"]
