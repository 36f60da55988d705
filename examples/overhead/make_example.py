"""Write the example for `scalecheck overhead`: calibration.jsonl and events.csv (seeded, synthetic).

A small Sweep3D-like program (Kluge, Knuepfer and Nagel, section 10): each iteration of its sweep sends and
receives a 4 KiB block to and from its neighbours (msg_stuff.cpp:311 MPI_Send, msg_stuff.cpp:364 MPI_Recv),
reduces one double (sweep.f:411 MPI_Allreduce), and the last rank writes a 256 KiB checkpoint block once per run
(io.c:88 MPI_Send, larger than any calibrated size: its events are clamped and flagged). Runs at the paper's
process counts 4, 8, 12, 14, 21, 24 and 28, of which 14, 21 and 28 lie between calibrated counts.

The calibration times each operation 200 times at the paper's base points p = 2^n and 1.5 * 2^n (2 .. 32) and
message sizes 1, 1000, 10000 and 100000 bytes (8 and 80 for the reduction), with a timer of 0.1 us resolution:
point-to-point calls see Poisson-distributed interruptions of 0.5 us, the reduction exponential noise. In the
traced runs, receives wait for late senders, more so at larger p (the paper's finding), and sends wait a little.

Run from the repository root: `python examples/overhead/make_example.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

PROCESSES = [2, 3, 4, 6, 8, 12, 16, 24, 32]
SIZES = {"MPI_Send": [1, 1000, 10000, 100000], "MPI_Recv": [1, 1000, 10000, 100000], "MPI_Allreduce": [8, 80]}
RUNS = [4, 8, 12, 14, 21, 24, 28]
ITERATIONS = 50
TICK = 0.1  # timer resolution, us
SAMPLE = 200


def t_min(operation: str, p: float, size: float) -> float:
    """The time the hardware and library need, us: latency plus bandwidth (1 GB/s), log p for the reduction."""
    if operation == "MPI_Allreduce":
        return 3.0 * np.log2(p) + size * 1e-3
    return 1.5 + 0.05 * np.log2(p) + size * 1e-3


def noise(operation: str, p: float, size: float, count: int, rng: np.random.Generator) -> np.ndarray:
    """Positive errors, us: interruptions of 0.5 us (Poisson, mean 1.5) or exponential (mean 20% of t_min)."""
    if operation == "MPI_Allreduce":
        return rng.exponential(0.2 * t_min(operation, p, size), count)
    return 0.5 * rng.poisson(1.5, count)


def read(values: np.ndarray) -> np.ndarray:
    """What a timer with 0.1 us resolution reads."""
    return np.floor(values / TICK + 1e-9) * TICK


def calibration(rng: np.random.Generator) -> list[str]:
    lines = []
    for operation, sizes in SIZES.items():
        for p in PROCESSES:
            for size in sizes:
                times = read(t_min(operation, p, size) + noise(operation, p, size, SAMPLE, rng))
                lines.append(json.dumps({"operation": operation, "p": p, "bytes": size, "unit": "us",
                                         "resolution": TICK, "times": [round(float(t), 1) for t in times]}))
    return lines


def events(rng: np.random.Generator) -> list[str]:
    rows = ["location,operation,p,bytes,time"]

    def add(location: str, operation: str, p: int, size: int, wait: np.ndarray) -> None:
        times = read(t_min(operation, p, size) + noise(operation, p, size, wait.size, rng) + wait)
        rows.extend(f"{location},{operation},{p},{size},{t * 1e-6:.7g}" for t in times)

    for p in RUNS:
        late = rng.random(ITERATIONS) < 0.6  # the receive waits for a late sender
        add("msg_stuff.cpp:364", "MPI_Recv", p, 4096, np.where(late, rng.exponential(3.0 * p / 4, ITERATIONS), 0.0))
        busy = rng.random(ITERATIONS) < 0.3  # the send waits for buffer space
        add("msg_stuff.cpp:311", "MPI_Send", p, 4096, np.where(busy, rng.exponential(np.sqrt(p), ITERATIONS), 0.0))
        add("sweep.f:411", "MPI_Allreduce", p, 8, rng.exponential(0.5, ITERATIONS) * (rng.random(ITERATIONS) < 0.1))
        add("io.c:88", "MPI_Send", p, 262144, np.zeros(1))
    return rows


def main() -> None:
    here = Path(__file__).parent
    rng = np.random.default_rng(2005)
    (here / "calibration.jsonl").write_text("\n".join(calibration(rng)) + "\n")
    (here / "events.csv").write_text("\n".join(events(rng)) + "\n")


if __name__ == "__main__":
    main()
