"""Busy-loop processes that load every core while a benchmark measures, started and stopped by process id."""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGKILL when the benchmark dies, even by SIGKILL, so no loop outlives it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # not Linux: the caller's finally and signal handlers still stop them
        pass


def start_busy_loops(count: int, procs: list[subprocess.Popen[bytes]]) -> None:
    """Append `count` busy loops to `procs` one by one, so a failure halfway leaves the started ones stoppable."""
    for _ in range(count):
        procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL,
                                      preexec_fn=_die_with_parent if sys.platform == "linux" else None))


def stop_busy_loops(procs: list[subprocess.Popen[bytes]]) -> None:
    """Terminate each loop by its process id, wait for it, kill it if it is still there."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@contextmanager
def busy_loops(count: int, settle: float = 1.0) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` busy loops for the block, stopped however it ends; `settle` seconds to take the cores first."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        start_busy_loops(count, procs)
        time.sleep(settle)
        yield procs
    finally:
        stop_busy_loops(procs)
