"""How much of Extra-P's own test data scalecheck reads: every file and every folder of Score-P profiles under
Extra-P's `tests/data`, read by scalecheck (and, with Extra-P installed, by Extra-P's CLI beside it).

Extra-P's test data holds every input format Extra-P reads (text, JSON, JSON Lines, TaLPas, `.extra-p`
experiments, folders of Score-P `.cubex` profiles) and a few inputs its tests expect to be refused (folders named
`negative_example*`). Get it from a clone of https://github.com/extra-p/extrap (version 4.2.5: `tests/data`).

    python benchmarks/extrap_test_data.py PATH/TO/extrap/tests/data [--extrap PATH] [--list]

Prints, per top-level folder, how many inputs each tool read and refused, the time scalecheck took, and with
`--list` every refused input with scalecheck's one-line error.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from extrap_reference import find_extrap  # noqa: E402

from scalecheck.errors import ScalecheckError  # noqa: E402
from scalecheck.formats import read_measurements  # noqa: E402
from scalecheck.formats.cube import is_cube_directory  # noqa: E402

# Extra-P's CLI flag per input, by how the input looks (a folder of profiles, an experiment, text or JSON)
_EXTRAP_FLAGS = {".extra-p": "--experiment", ".jsonl": "--json", ".json": "--json", ".txt": "--text"}
_SKIPPED = {".py", ".md"}  # scripts that generate data, not data


def inputs(root: Path) -> list[Path]:
    """Every input under `root`: the folders of Score-P profiles (not the files inside them) and every other file."""
    found: list[Path] = []
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        if here != root and is_cube_directory(here):
            found.append(here)
            subfolders.clear()  # its runs are read with it
            continue
        subfolders.sort()
        found += [here / name for name in sorted(files) if Path(name).suffix.lower() not in _SKIPPED]
    return found


def extrap_reads(exe: Path, path: Path) -> bool:
    """Whether Extra-P's CLI reads `path` and models it (exit status 0)."""
    if path.is_dir():
        flag = "--cube"
    elif "talpas" in path.parts:
        flag = "--talpas"
    else:
        flag = _EXTRAP_FLAGS.get(path.suffix.lower(), "--extra-p-3" if path.suffix == "" else "--text")
    try:
        done = subprocess.run([str(exe), "--disable-progress", flag, str(path)], capture_output=True, timeout=300,
                              check=False)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="Extra-P's tests/data folder")
    parser.add_argument("--extrap", help="Extra-P's CLI (default: found as benchmarks/README.md says)")
    parser.add_argument("--no-extrap", action="store_true", help="read with scalecheck only")
    parser.add_argument("--list", action="store_true", help="print every input scalecheck refuses, with its error")
    args = parser.parse_args(argv)
    exe = None if args.no_extrap else find_extrap(args.extrap)
    found = inputs(args.data)
    ours: dict[str, Counter[str]] = defaultdict(Counter)
    theirs: dict[str, Counter[str]] = defaultdict(Counter)
    refused: list[tuple[Path, str]] = []
    elapsed = 0.0
    for path in found:
        group = path.relative_to(args.data).parts[0]
        start = time.process_time()
        try:
            read_measurements(path)
            ours[group]["read"] += 1
        except ScalecheckError as err:
            ours[group]["refused"] += 1
            refused.append((path, str(err)))
        elapsed += time.process_time() - start
        if exe is not None:
            theirs[group]["read" if extrap_reads(exe, path) else "refused"] += 1
    head = f"{'folder':<14} {'inputs':>6}  {'scalecheck reads':>16}" + (f"  {'Extra-P reads':>13}" if exe else "")
    print(head)
    print("-" * len(head))
    for group in sorted(ours):
        total = sum(ours[group].values())
        line = f"{group:<14} {total:>6}  {ours[group]['read']:>16}"
        print(line + (f"  {theirs[group]['read']:>13}" if exe else ""))
    total = sum(sum(c.values()) for c in ours.values())
    read = sum(c["read"] for c in ours.values())
    line = f"{'all':<14} {total:>6}  {read:>16}"
    print(line + (f"  {sum(c['read'] for c in theirs.values()):>13}" if exe else ""))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nscalecheck read {read} of {total} inputs ({100 * read / max(total, 1):.1f}%) in {elapsed:.2f} s of CPU "
          f"time; peak memory {peak:.0f} MiB")
    if args.list or not exe:
        for path, error in refused:
            print(f"  refused {path.relative_to(args.data)}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
