"""Real data: scalecheck's models beside Extra-P's on the same file, with each model's SMAPE on the data.

    python benchmarks/real_data.py [FILE] [--extrap PATH]      (default FILE: examples/mpi_data_mean.txt)

Both SMAPEs are computed here, from the per-point means of the file, so that the two tools are scored alike.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from extrap_reference import find_extrap, run_extrap  # noqa: E402

from scalecheck.api import fit_models  # noqa: E402
from scalecheck.core.fit import smape  # noqa: E402
from scalecheck.formats import detect_format, read_measurements  # noqa: E402


def extrap_values(model: object, parameters: tuple[str, ...], points: np.ndarray) -> np.ndarray | None:
    """Values of a parsed Extra-P model at `points` (None for models the parser keeps as text)."""
    terms = getattr(model, "terms", None)
    if terms is None:
        return None
    out = np.full(points.shape[0], float(model.constant))  # type: ignore[attr-defined]
    for term in terms:
        part = np.full(points.shape[0], float(term.coefficient))
        for name, (i, j) in term.factors.items():
            x = points[:, parameters.index(name)]
            part = part * x ** float(i) * np.log2(x) ** float(j)
        out += part
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", type=Path, default=HERE.parent / "examples" / "mpi_data_mean.txt")
    parser.add_argument("--extrap", help="path of Extra-P's `extrap` command (default: found automatically)")
    args = parser.parse_args(argv)
    run = read_measurements(args.file)
    table = fit_models(run)
    exe = find_extrap(args.extrap)
    fmt = {"extrap-text": "text", "extrap-json": "json", "jsonl": "jsonl"}.get(detect_format(args.file))
    theirs = run_extrap(exe, args.file, fmt).models if exe is not None and fmt else {}
    series = {(s.kernel, s.metric): s for s in run.series}
    for km in sorted(table.models, key=lambda km: (km.kernel, km.metric)):
        s = series[(km.kernel, km.metric)]
        y = s.aggregate()
        print(f"{km.kernel} [{km.metric}]")
        if km.model is not None:
            print(f"  scalecheck  {km.model.formula():<48} SMAPE {float(smape(y, km.model.predict(s.points))):6.2f}%")
        else:
            print(f"  scalecheck  ({km.status}) {km.note}")
        model = theirs.get((km.kernel, km.metric))
        if model is not None:
            values = extrap_values(model, run.parameters, s.points)
            score = f"SMAPE {float(smape(y, values)):6.2f}%" if values is not None else ""
            print(f"  Extra-P     {model.formula:<48} {score}")
    if exe is None:
        print("(Extra-P not found: install it as benchmarks/README.md says to print its models beside these)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
