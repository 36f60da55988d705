"""L6: the `scalecheck` command: one module per subcommand, each a short call into the use cases (`scalecheck.api`;
`model` calls `scalecheck.modeling` alone, to start fast) and the renderers (`ci`, the GitHub Action's job, runs the
other commands in turn and pushes the data branch). The only place that prints errors and picks exit codes.

Heavy modules (numpy, scipy, the readers) are imported inside the command functions, so `scalecheck --help`
stays fast; the settings' flags come from the option table (`scalecheck.config`).
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from scalecheck import __version__
from scalecheck.cli import ci, check, cluster, comment, history, measure, model, overhead, record
from scalecheck.cli._common import INTERNAL_ERROR, INTERRUPTED, OK, OUTPUT_CLOSED, REGRESSION, USAGE_ERROR, Parser
from scalecheck.errors import ScalecheckError
from scalecheck.names import AGGREGATE_NAMES, FORMAT_NAMES

__all__ = ["AGGREGATE_NAMES", "FORMAT_NAMES", "INTERNAL_ERROR", "INTERRUPTED", "OK", "OUTPUT_CLOSED", "REGRESSION",
           "USAGE_ERROR", "Terminated", "build_parser", "main"]
COMMANDS = (model, check, record, history, comment, cluster, overhead, measure, ci)  # in the order --help lists
_STOPPING = ("SIGTERM", "SIGHUP")  # signals that end a command the way Ctrl-C does


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived. A KeyboardInterrupt, so that what cleans up after Ctrl-C (temp files of the
    outputs, a same-job worktree, a measured command) cleans up after a `kill` or a cancelled CI job too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="scalecheck", description="Catch scalability bugs: fit performance models to "
                    "measurements taken at several scales, and find the kernels that will not scale.")
    parser.add_argument("--version", action="version", version=f"scalecheck {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for module in COMMANDS:
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit status; a nested call (`scalecheck ci` runs the other commands) leaves
    interruptions and a closed standard output to the outermost one."""
    with _stops_as_exceptions() as outermost:
        try:
            status = _main(argv)
        except BrokenPipeError:  # the reader of standard output went away (`scalecheck model x | head -1`)
            if not outermost:
                raise
            _output_to_null()
            return OUTPUT_CLOSED
        except KeyboardInterrupt as stop:
            if not outermost:
                raise
            if isinstance(stop, Terminated):
                print(f"scalecheck: stopped by {signal.Signals(stop.signum).name}", file=sys.stderr)
                return 128 + stop.signum
            print("scalecheck: interrupted", file=sys.stderr)
            return INTERRUPTED
        except SystemExit:  # argparse: --help, --version, a usage error
            if outermost and not _output_flushed():
                raise SystemExit(OUTPUT_CLOSED) from None
            raise
        if outermost and not _output_flushed():
            return status if status not in (OK, REGRESSION) else OUTPUT_CLOSED
        return status


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    _load_numpy_single_threaded()
    try:
        return int(args.run(args))
    except BrokenPipeError:
        raise
    except ScalecheckError as err:
        print(f"scalecheck: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    except Exception:  # noqa: BLE001 - the one place that turns a crash into exit status 3
        import traceback

        traceback.print_exc()
        print("scalecheck: internal error - please report it with the traceback above", file=sys.stderr)
        return INTERNAL_ERROR


# Read by the BLAS libraries numpy loads, once, when they load.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _load_numpy_single_threaded() -> None:
    """Load the numeric libraries (numpy, and scipy's compiled special functions, each with its own BLAS) with one
    BLAS thread, unless numpy is loaded already; a thread count the user set is kept.

    scalecheck's algebra is many tiny matrices: BLAS threads only spin up and wait (0.15 s of CPU time in every
    `scalecheck model`), and on a shared CI runner they compete with the cores that measure. The variables are
    removed again at once, so the commands scalecheck runs (a measured benchmark, git) get the user's environment.

    What is loaded then stays for the whole process: it is frozen (`gc.freeze`), so that the garbage collector's
    passes, during the command and at exit, skip the tens of thousands of objects the libraries made (about 12 ms of
    CPU time in a 0.2 s `scalecheck model`). A process that had numpy loaded already (a caller of `main`) is left
    as it is.
    """
    if "numpy" in sys.modules:
        return
    added = [name for name in BLAS_THREADS if name not in os.environ]
    for name in added:
        os.environ[name] = "1"
    try:
        from scalecheck.modeling import load_libraries

        load_libraries()
    finally:
        for name in added:
            os.environ.pop(name, None)
    gc.freeze()


@contextmanager
def _stops_as_exceptions() -> Iterator[bool]:
    """Within the block, SIGTERM and SIGHUP raise `Terminated` in the main thread, so that `finally` blocks run;
    yields whether this is the outermost block (a nested one changes nothing). A signal ignored (nohup) stays
    ignored; the previous handlers come back when the block ends."""
    if signal.getsignal(signal.SIGTERM) is _raise_terminated:
        yield False
        return
    previous: dict[signal.Signals, object] = {}
    if threading.current_thread() is threading.main_thread():
        for name in _STOPPING:
            number = getattr(signal, name, None)
            if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
                previous[number] = signal.signal(number, _raise_terminated)
    try:
        yield True
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


def _output_flushed() -> bool:
    """Flush standard output; False when its reader has gone, and then it writes to the null device from now on."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        _output_to_null()
        return False
    return True


def _output_to_null() -> None:
    """Point standard output at the null device, so that what is still buffered cannot fail at exit ("Exception
    ignored ... BrokenPipeError"), as the Python documentation recommends."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)
    except (OSError, ValueError, AttributeError):
        pass  # not a file descriptor (a test capturing the output): nothing is flushed at exit
