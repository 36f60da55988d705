"""L6: the `scalecheck` command. The only place that prints errors and picks exit codes.

Heavy modules (numpy, scipy, the readers) are imported inside the command functions, so `scalecheck --help`
stays fast.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

from scalecheck import __version__
from scalecheck.errors import ConfigError, ScalecheckError

OK, REGRESSION, USAGE_ERROR, INTERNAL_ERROR = 0, 1, 2, 3
# Kept here, not imported from scalecheck.formats, so that --help does not load numpy (a test keeps them equal).
FORMAT_NAMES = ("scalecheck-json", "jsonl", "csv", "extrap-text", "extrap-json", "talpas")

_MODEL_EPILOG = """\
examples:
  scalecheck model examples/mpi_data_mean.txt --target p=65536
  scalecheck model results.json --kernel 'solver->*' --metric time --json models.json
  scalecheck model relearn.txt --target p=4096,n=100000
  scalecheck model examples/segmented.txt --target p=20      (a change point at p=6)

The model of each kernel is chosen from the performance model normal form (PMNF)
  f(x) = c0 + sum_k c_k * prod_l x_l^i_kl * log2(x_l)^j_kl
by leave-one-out cross-validation, with every term weighed against the noise the
repetitions show. Kernels with fewer than 3 distinct values of a parameter are
listed as insufficient data; all others are still modeled.

Single-parameter kernels with at least 6 distinct values are first searched for
segmented behaviour (a trend that changes at some scale: an MPI library switching
algorithms, data spilling out of a cache). A segmented kernel gets one model per
segment; its row shows the last segment, which is what predictions use, and the
segments and change points are listed below the table. A segment with fewer than
5 points is marked insufficient, with the range where more measurements are needed.

exit status: 0 success, 2 bad input or usage, 3 internal error.
"""


class _Parser(argparse.ArgumentParser):
    """argparse with scalecheck's error line (exit status 2, no usage dump for a bad value)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"scalecheck: error: {message}", file=sys.stderr)
        sys.exit(USAGE_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scalecheck", description="Catch scalability bugs: fit performance models to "
                     "measurements taken at several scales, and find the kernels that will not scale.")
    parser.add_argument("--version", action="version", version=f"scalecheck {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    model = commands.add_parser(
        "model", help="fit a performance model to every kernel and rank them",
        description="Fit a performance model to every (kernel, metric) in the measurement files and print them "
                    "ranked by predicted value at the target scale (or by growth without a target).",
        epilog=_MODEL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    model.add_argument("files", nargs="+", metavar="FILE", type=Path,
                       help="measurement files; several files are merged (same parameters)")
    model.add_argument("--format", choices=FORMAT_NAMES, metavar="NAME",
                       help=f"read every FILE in this format instead of detecting it: {', '.join(FORMAT_NAMES)}")
    model.add_argument("--target", metavar="P=V[,Q=W]",
                       help="scale to predict at and rank by, one value per parameter, e.g. p=65536")
    model.add_argument("--metric", action="append", default=[], metavar="M",
                       help="model only this metric (repeatable; default: all)")
    model.add_argument("--kernel", action="append", default=[], metavar="GLOB",
                       help="model only kernels matching this glob, e.g. 'main->solve*' (repeatable)")
    model.add_argument("--json", type=Path, metavar="OUT",
                       help="also write the models as JSON to OUT (written atomically)")
    fit = model.add_argument_group("model search")
    fit.add_argument("--aggregate", choices=("mean", "median", "min"), default="mean",
                     help="statistic of the repetitions at each point (default: mean, as Extra-P)")
    fit.add_argument("--max-terms", type=int, default=2, metavar="N",
                     help="most terms per parameter besides the constant; a second term needs at least 7 points "
                          "(default: 2)")
    fit.add_argument("--allow-decreasing", action="store_true",
                     help="accept models whose lead term decreases (default: such kernels are modeled as constant)")
    fit.add_argument("--exponents", metavar="LIST",
                     help="polynomial exponents i to search, e.g. '0,1/2,1,3/2,2' (default: Extra-P's 20)")
    fit.add_argument("--log-exponents", metavar="LIST",
                     help="logarithm exponents j to search, e.g. '0,1,2'; with --exponents every (i, j) pair is "
                          "searched (default: Extra-P's 42 pairs)")
    fit.add_argument("--refine", action="store_true",
                     help="search-space refinement (Reisert et al.): search exponents on a grid of 1/24 along "
                          "Extra-P's four slices (single-parameter kernels)")
    fit.add_argument("--alpha", type=float, default=0.01, metavar="A",
                     help="significance level of the constant test, of each extra term and of the test that "
                          "confirms a change point (default: 0.01)")
    fit.add_argument("--no-segmentation", action="store_true",
                     help="do not search for change points: one model per kernel over all its points")
    model.set_defaults(run=_model)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        return int(args.run(args))
    except ScalecheckError as err:
        print(f"scalecheck: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    except Exception:  # noqa: BLE001 - the one place that turns a crash into exit status 3
        traceback.print_exc()
        print("scalecheck: internal error - please report it with the traceback above", file=sys.stderr)
        return INTERNAL_ERROR


def _model(args: argparse.Namespace) -> int:
    from scalecheck.api import fit_models, parse_target
    from scalecheck.report.model_table import render_json, render_table
    from scalecheck.report.output import write_atomic

    options = _fit_options(args)
    target = parse_target(args.target) if args.target is not None else None
    from scalecheck.core.segment import SegmentOptions

    table = fit_models(args.files, fmt=args.format, options=options, target=target, metrics=args.metric,
                       kernels=args.kernel, segmentation=None if args.no_segmentation else SegmentOptions())
    if args.json is not None:
        write_atomic(args.json, render_json(table))
    sys.stdout.write(render_table(table))
    return OK


def _fit_options(args: argparse.Namespace):  # -> FitOptions (imported lazily)
    from scalecheck.core.search import FitOptions
    from scalecheck.data.spec import DEFAULT_BUILDING_BLOCKS

    if args.max_terms < 1:
        raise ConfigError(f"--max-terms must be at least 1, got {args.max_terms}", fix="use --max-terms 1 or more")
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {args.alpha}", fix="use a level such as 0.01")
    blocks = DEFAULT_BUILDING_BLOCKS
    if args.exponents is not None or args.log_exponents is not None:
        powers = _fractions("--exponents", args.exponents) if args.exponents else sorted({b[0] for b in blocks})
        logs = _fractions("--log-exponents", args.log_exponents) if args.log_exponents else [Fraction(0), 1, 2]
        blocks = tuple((i, int(j) if Fraction(j).denominator == 1 else Fraction(j)) for i in powers for j in logs
                       if i or j)
        if not blocks:
            raise ConfigError("the exponent lists leave no term to search",
                              fix="give at least one exponent other than 0")
    return FitOptions(building_blocks=blocks, max_terms=args.max_terms, allow_decreasing=args.allow_decreasing,
                      aggregate=args.aggregate, alpha=args.alpha, refine=args.refine)


def _fractions(option: str, text: str) -> list[Fraction]:
    out = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        try:
            value = Fraction(item)
        except (ValueError, ZeroDivisionError):
            raise ConfigError(f"{option}: '{item}' is not a number",
                              fix=f"write {option} as numbers or fractions, e.g. '0,1/2,1,2'") from None
        if value < 0:
            raise ConfigError(f"{option}: '{item}' is negative",
                              fix="use exponents >= 0 (use --allow-decreasing for falling trends)")
        out.append(value)
    if not out:
        raise ConfigError(f"{option} is empty", fix=f"write {option} as a list, e.g. '0,1/2,1,2'")
    return sorted(set(out))
