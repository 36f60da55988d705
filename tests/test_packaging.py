"""The wheel carries every package and the report templates, and a report renders from the installed layout."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_the_package_list_names_every_package() -> None:
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "scalecheck").rglob("__init__.py")}
    assert set(SETUPTOOLS["packages"]) == found | {"scalecheck.templates"}
    assert SETUPTOOLS["package-dir"] == {"scalecheck.templates": "templates"}


def test_the_package_data_covers_every_template() -> None:
    patterns = SETUPTOOLS["package-data"]["scalecheck.templates"]
    files = [p for p in (ROOT / "templates").iterdir() if p.is_file()]
    assert files and all(any(p.match(pattern) for pattern in patterns) for p in files)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip builds from the checkout (in an isolated build environment, as `pip install .` does)."""
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out),
                            str(ROOT)], capture_output=True, text=True, cwd=out)
    assert built.returncode == 0, built.stderr
    (found,) = out.glob("scalecheck-*.whl")
    return found


def test_a_report_renders_from_the_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(site)
    for template in (ROOT / "templates").iterdir():
        assert f"scalecheck/templates/{template.name}" in names
    example = ROOT / "examples" / "check"
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "scalecheck", "check", str(example / "candidate.json"),
                           "--baseline", str(example / "baseline.json"), "--bootstrap", "20", "--max-plots", "1",
                           "--html", "report.html", "--no-github"], cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 1, done.stderr
    where = subprocess.run([sys.executable, "-c", "import scalecheck.report.templating as t; print(t.templates_dir())"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where) == site / "scalecheck" / "templates"
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "main-&gt;solve-&gt;exchange" in page and page.count("<svg") == 1
