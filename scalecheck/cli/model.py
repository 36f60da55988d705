"""L6: `scalecheck model`: fit every kernel of the measurement files and print them ranked."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scalecheck.cli._common import OK, command
from scalecheck.cli._settings import add_settings, settings
from scalecheck.errors import ConfigError

EPILOG = """\
examples:
  scalecheck model examples/mpi_data_mean.txt --target p=65536
  scalecheck model results.json --kernel 'solver->*' --metric time --json models.json
  scalecheck model relearn.txt --target p=4096,n=100000
  scalecheck model examples/segmented.txt --target p=20      (a change point at p=6)

Each kernel's model is chosen from the performance model normal form by cross-validation,
every term weighed against the noise the repetitions show; single-parameter kernels with 6
or more points are first searched for a change of trend. Settings come from
[tool.scalecheck] (pyproject.toml or scalecheck.toml); a flag overrides its setting.

exit status: 0 success, 2 bad input or usage, 3 internal error."""


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    model = command(commands, "model", help="fit a performance model to every kernel and rank them",
                    description="Fit a performance model to every (kernel, metric) in the measurement files and print "
                                "them ranked by predicted value at the target scale (or by growth without a target).",
                    epilog=EPILOG)
    model.add_argument("files", nargs="+", metavar="FILE", type=Path,
                       help="measurement files; several files are merged (same parameters)")
    model.add_argument("--json", type=Path, metavar="OUT",
                       help="also write the models as JSON to OUT (written atomically)")
    model.add_argument("--html", type=Path, metavar="OUT",
                       help="also write a self-contained HTML report: the ranked table (sortable, filterable) and "
                            "plots of the first kernels with their confidence bands (written atomically)")
    model.add_argument("--max-plots", type=int, default=20, metavar="N",
                       help="plot at most the first N kernels of the ranking in the HTML report (default 20)")
    add_settings(model, "model")
    model.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from scalecheck.files import check_outputs, write_all
    from scalecheck.modeling import model  # the model use case alone: no git, no comparison (start-up)
    from scalecheck.report.model_table import render_json, render_table

    if args.max_plots < 0:
        raise ConfigError(f"--max-plots must be 0 or more, got {args.max_plots}", fix="use --max-plots 20, say")
    check_outputs({"--json": args.json, "--html": args.html})  # before the work
    result = model(args.files, settings(args, "model"), plots=args.max_plots if args.html is not None else 0)
    outputs: list[tuple[Path, str]] = []  # all rendered before any is written: replaced as a set
    if args.json is not None:
        outputs.append((args.json, render_json(result.table)))
    if args.html is not None:
        from scalecheck.report.html_report import render_model_html

        outputs.append((args.html, render_model_html(result.table, result.plots, sources=result.sources,
                                                     settings=result.settings)))
    write_all(outputs)
    sys.stdout.write(render_table(result.table))
    return OK
