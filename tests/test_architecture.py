"""Pure layers stay pure: no file, terminal or input calls in scalecheck/data and scalecheck/core."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "scalecheck"
PURE = sorted((PACKAGE / "data").glob("*.py")) + sorted((PACKAGE / "core").glob("*.py"))
FORBIDDEN_CALLS = {"open", "print", "input"}
FORBIDDEN_IMPORTS = {"jinja2", "git", "pytest", "tomli", "tomllib", "scalecheck.formats", "scalecheck.api",
                     "scalecheck.cli", "scalecheck.report"}


@pytest.mark.parametrize("path", PURE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pure_module_does_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno} calls {node.func.id}()"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                assert not any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN_IMPORTS), \
                    f"{path.name}:{node.lineno} imports {name}"


def test_package_init_does_not_import_numpy() -> None:
    import subprocess
    import sys

    probe = "import sys, scalecheck; print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                          cwd=PACKAGE.parent)
    assert done.stdout.strip() == "False"
