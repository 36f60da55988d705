"""Run Extra-P (the reference tool) from benchmark scripts and parse its models.

Extra-P pins numpy<2, so it lives in its own virtual environment
(``<repo>/.venv-extrap``, see benchmarks/README.md). This module only uses the
standard library and runs under the project's Python: it calls the ``extrap``
command line tool as a subprocess and reads the models it prints.

To get output that is easy to parse, the CLI is asked for a custom print format
(``--print FORMAT_STRING``): one record per model, introduced by the ASCII
record separator (0x1E), with fields split by the unit separator (0x1F)::

    \\x1e<callpath>\\x1f<metric>\\x1f<param1>\\x1d<param2>...\\x1f<model>\\n

A model formula as Extra-P prints it looks like::

    5.257674871233412 + 2.6417027959656454 * p^(2/3)
    9.9 + 0.018 * p^(1) * log2(p)^(1)
    64.6 + -0.00092 * n^(1) * log2(n)^(2) + 0.00028 * log2(p)^(1) * n^(1) * log2(n)^(2)
    -2.19e-15 + x^(2) + 0.99 * y^(1)          (a coefficient of exactly 1 is left out)
    13.9                                      (constant model)

Segmented models (``--modeler segmented``) print two formulas on two lines;
they are kept as text, with ``terms`` set to None.

Try it by hand::

    python3 benchmarks/extrap_reference.py /work/shared/extrap-data/mpi_data_mean.txt
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Sequence, Union

REPO_ROOT = Path(__file__).resolve().parents[1]
ENV_VAR = "SCALECHECK_EXTRAP"

FORMAT_FLAGS = {"text": "--text", "json": "--json", "jsonl": "--json"}
"""Input format -> CLI flag. Extra-P has no --jsonl: --json reads JSON Lines too
(it falls back to JSON Lines when the file is not one JSON document, so a JSON
Lines file of a single line is not recognised)."""

_RS, _US, _GS = "\x1e", "\x1f", "\x1d"
PRINT_FORMAT = f"{_RS}{{callpath}}{_US}{{metric}}{_US}{{parameters:sep:'{_GS}'}}{_US}{{model}}"

Exponent = Union[Fraction, float]


class ExtrapError(RuntimeError):
    """The Extra-P CLI failed or printed something this module cannot read."""


@dataclass(frozen=True)
class ExtrapTerm:
    """One term of a model: coefficient * prod_p p^(i_p) * log2(p)^(j_p).

    ``factors`` maps a parameter name to (polynomial exponent, log exponent);
    parameters that do not occur in the term are absent.
    """

    coefficient: float
    factors: dict[str, tuple[Exponent, Exponent]]


@dataclass(frozen=True)
class ExtrapModel:
    callpath: str
    metric: str
    formula: str
    parameters: tuple[str, ...]
    constant: float | None
    terms: tuple[ExtrapTerm, ...] | None  # None if the formula could not be parsed

    @property
    def lead_order(self) -> dict[str, tuple[Exponent, Exponent]] | None:
        """Per parameter, the largest (poly, log) exponent pair over all terms.

        Pairs compare lexicographically (p^a*log^b grows faster than
        p^c*log^d iff (a, b) > (c, d) for non-negative exponents); a parameter
        absent from every term gets (0, 0). None if the formula was not parsed.
        """
        if self.terms is None:
            return None
        names = list(self.parameters)
        for term in self.terms:
            names.extend(name for name in term.factors if name not in names)
        lead: dict[str, tuple[Exponent, Exponent]] = {}
        for name in names:
            pairs = [t.factors[name] for t in self.terms if name in t.factors]
            lead[name] = max(pairs) if pairs else (Fraction(0), Fraction(0))
        return lead


@dataclass(frozen=True)
class ExtrapResult:
    seconds: float  # wall time of the whole CLI run (start-up + reading + modeling)
    models: dict[tuple[str, str], ExtrapModel]  # (callpath, metric) -> model
    raw_stdout: str
    parameters: tuple[str, ...] = field(default=())

    @property
    def formulas(self) -> dict[tuple[str, str], str]:
        return {key: model.formula for key, model in self.models.items()}


# --------------------------------------------------------------------------- finding

def _usable(candidate: str | os.PathLike[str] | None) -> Path | None:
    if not candidate:
        return None
    path = Path(candidate).expanduser()
    if path.is_file() and os.access(path, os.X_OK):
        return path.resolve()
    if os.sep not in str(candidate):  # a bare command name such as "extrap"
        found = shutil.which(str(candidate))
        return Path(found) if found else None
    return None


def find_extrap(explicit: str | None = None) -> Path | None:
    """Locate the ``extrap`` executable.

    Precedence: ``explicit``, else ``$SCALECHECK_EXTRAP``, else
    ``<repo>/.venv-extrap/bin/extrap``, else ``extrap`` on PATH. An explicit
    path or a set environment variable is not silently replaced by another
    candidate: if it does not name an executable, the result is None.
    """
    if explicit:
        return _usable(explicit)
    env = os.environ.get(ENV_VAR)
    if env:
        return _usable(env)
    for venv_exe in (REPO_ROOT / ".venv-extrap" / "bin" / "extrap",
                     REPO_ROOT / ".venv-extrap" / "Scripts" / "extrap.exe"):
        found = _usable(venv_exe)
        if found:
            return found
    return _usable("extrap")


def extrap_version(exe: Path) -> str:
    """The version line of the CLI, e.g. 'Extra-P 4.2.5'."""
    done = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True)
    return (done.stdout or done.stderr).strip()


# --------------------------------------------------------------------------- running

def build_command(exe: Path, path: Path, fmt: str, *, modeler: str | None = None,
                  options: Sequence[str] = (), measure: str | None = None) -> list[str]:
    """The argument list for one CLI run (the file comes before --options,
    which takes any number of KEY=VALUE arguments)."""
    try:
        flag = FORMAT_FLAGS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {sorted(FORMAT_FLAGS)}") from None
    cmd = [str(exe), "--disable-progress", flag, str(path), "--print", PRINT_FORMAT]
    if measure:
        cmd += ["--measure", measure]
    if modeler:
        cmd += ["--modeler", modeler]
    if options:
        cmd += ["--options", *options]
    return cmd


def run_extrap(exe: Path, path: Path, fmt: str, *, modeler: str | None = None,
               options: Sequence[str] = (), measure: str | None = None,
               timeout: float | None = 600.0) -> ExtrapResult:
    """Run the Extra-P CLI once on ``path`` and parse the models it prints.

    ``fmt`` is "text", "json" or "jsonl". ``modeler`` is a CLI modeler name
    (default, basic, refining, adaptive, segmented, multi-parameter) and
    ``options`` its KEY=VALUE options, e.g. ``["allow_log_terms=False"]``.
    """
    cmd = build_command(exe, path, fmt, modeler=modeler, options=options, measure=measure)
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise ExtrapError(f"extrap timed out after {timeout} s on {path}") from exc
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise ExtrapError(f"extrap exited with {done.returncode} on {path}:\n{tail}")
    models, parameters = parse_records(done.stdout)
    if not models:
        raise ExtrapError(f"extrap printed no models for {path}:\n{done.stdout[-2000:]}")
    return ExtrapResult(seconds=seconds, models=models, raw_stdout=done.stdout, parameters=parameters)


# --------------------------------------------------------------------------- parsing

def parse_records(stdout: str) -> tuple[dict[tuple[str, str], ExtrapModel], tuple[str, ...]]:
    """Parse the output of ``--print PRINT_FORMAT``."""
    models: dict[tuple[str, str], ExtrapModel] = {}
    parameters: tuple[str, ...] = ()
    for record in stdout.split(_RS)[1:]:
        record = record.rstrip("\n")  # each record ends with one newline
        fields = record.split(_US, 3)
        if len(fields) != 4:
            raise ExtrapError(f"unexpected record in Extra-P output: {record!r}")
        callpath, metric, params, formula = fields
        parameters = tuple(p for p in params.split(_GS) if p)
        models[(callpath, metric)] = parse_model(callpath, metric, formula, parameters)
    return models, parameters


def parse_model(callpath: str, metric: str, formula: str,
                parameters: Sequence[str] = ()) -> ExtrapModel:
    try:
        constant, terms = parse_formula(formula)
    except ValueError:
        constant, terms = None, None
    return ExtrapModel(callpath=callpath, metric=metric, formula=formula,
                       parameters=tuple(parameters), constant=constant, terms=terms)


_LOG_FACTOR = re.compile(r"log2\((?P<name>.+)\)\^\((?P<exp>[^()]+)\)")
_POLY_FACTOR = re.compile(r"(?P<name>.+?)\^\((?P<exp>[^()]+)\)")


def _exponent(text: str) -> Exponent:
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+(/\d+)?", text):
        return Fraction(text)
    return float(text)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_formula(formula: str) -> tuple[float, tuple[ExtrapTerm, ...]]:
    """Split an Extra-P formula into (constant, terms); raises ValueError.

    Extra-P joins terms with ' + ' (a negative coefficient shows as
    '+ -0.5 * ...'), factors with ' * ', leaves out a constant of 0 when there
    are terms and a coefficient of exactly 1.
    """
    formula = formula.strip()
    if not formula or "\n" in formula or " for " in formula:
        raise ValueError(f"not a plain Extra-P formula: {formula!r}")
    chunks = formula.split(" + ")
    constant = 0.0
    first = _number(chunks[0])
    if first is not None:
        constant = first
        chunks = chunks[1:]
    terms = []
    for chunk in chunks:
        factors_text = chunk.split(" * ")
        coefficient = 1.0
        lead = _number(factors_text[0])
        if lead is not None:
            coefficient = lead
            factors_text = factors_text[1:]
        if not factors_text:
            raise ValueError(f"term without a parameter in {formula!r}")
        factors: dict[str, list[Exponent]] = {}
        for factor in factors_text:
            factor = factor.strip()
            if m := _LOG_FACTOR.fullmatch(factor):
                slot = 1
            elif m := _POLY_FACTOR.fullmatch(factor):
                slot = 0
            else:
                raise ValueError(f"cannot read factor {factor!r} in {formula!r}")
            pair = factors.setdefault(m["name"], [Fraction(0), Fraction(0)])
            pair[slot] += _exponent(m["exp"])
        terms.append(ExtrapTerm(coefficient, {k: (v[0], v[1]) for k, v in factors.items()}))
    return constant, tuple(terms)


def format_lead_order(lead: dict[str, tuple[Exponent, Exponent]] | None) -> str:
    """E.g. {'p': (2/3, 1)} -> 'p^(2/3)*log2(p)^(1)'; 'const' if nothing grows."""
    if lead is None:
        return "?"
    parts = []
    for name, (poly, log) in lead.items():
        if poly:
            parts.append(f"{name}^({poly})")
        if log:
            parts.append(f"log2({name})^({log})")
    return "*".join(parts) or "const"


def guess_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix == ".json":
        return "json"
    return "text"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Model a file with Extra-P and print its models.")
    parser.add_argument("file", type=Path)
    parser.add_argument("--format", choices=sorted(FORMAT_FLAGS), help="default: from the file suffix")
    parser.add_argument("--extrap", help="path of the extrap executable")
    parser.add_argument("--modeler", help="Extra-P modeler (default, basic, refining, multi-parameter, ...)")
    parser.add_argument("--options", nargs="*", default=[], metavar="KEY=VALUE", help="modeler options")
    args = parser.parse_args(argv)

    exe = find_extrap(args.extrap)
    if exe is None:
        print("extrap not found: see benchmarks/README.md (Extra-P reference)", file=sys.stderr)
        return 2
    fmt = args.format or guess_format(args.file)
    try:
        result = run_extrap(exe, args.file, fmt, modeler=args.modeler, options=args.options)
    except ExtrapError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"# {exe} ({fmt}): {len(result.models)} models in {result.seconds:.2f} s")
    for (callpath, metric), model in result.models.items():
        print(f"{callpath}\t{metric}\t{model.formula}\tlead: {format_lead_order(model.lead_order)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
