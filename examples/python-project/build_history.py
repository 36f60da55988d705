"""Build the example's git repository: a small package whose third commit makes a function quadratic.

    python build_history.py DEST

DEST must not exist. It becomes a git repository with four commits on `main`:

1. "wordcount: distinct words, sorted"      `distinct` sorts a set: O(n log n)
2. "wordcount: count words per length"      a new function; `distinct` unchanged
3. "distinct: keep the first spelling"      `distinct` checks `word not in seen` on a list: O(n^2)
4. "distinct: remember seen words in a set" back to O(n log n)

Each commit holds the package (`wordcount/`), a benchmark script that reports its own kernel timings to
scalecheck (`bench.py`), a test that asserts the growth with the pytest plugin (`tests/test_scaling.py`) and
scalecheck's settings (`scalecheck.toml`).
Git runs without a shell, with the author set on the command line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SORTED_SET = '''

def distinct(words):
    """The distinct words, sorted."""
    return sorted(set(words))
'''

FIRST_SPELLING = '''

def distinct(words):
    """The distinct words, sorted; of words equal but for case, the first spelling is kept."""
    seen = []
    kept = []
    for word in words:
        if word.lower() not in seen:  # a list: every lookup scans it
            seen.append(word.lower())
            kept.append(word)
    return sorted(kept)
'''

FIRST_SPELLING_FAST = '''

def distinct(words):
    """The distinct words, sorted; of words equal but for case, the first spelling is kept."""
    seen = set()
    kept = []
    for word in words:
        if word.lower() not in seen:
            seen.add(word.lower())
            kept.append(word)
    return sorted(kept)
'''

BY_LENGTH = '''

def by_length(words):
    """How many words there are of each length."""
    counts = {}
    for word in words:
        counts[len(word)] = counts.get(len(word), 0) + 1
    return counts
'''

HEADER = '"""wordcount: small text statistics (the scalecheck python-project example)."""\n'

WORDS = '''"""Random distinct words for the benchmark and the tests."""

import random


def random_words(n, seed=1):
    rng = random.Random(seed)
    return [f"w{rng.getrandbits(40):x}" for _ in range(int(n))]
'''

BENCH = '''"""Time wordcount's functions at one size and report each as a scalecheck kernel.

    python bench.py N

scalecheck measure runs this at every size; each timing goes to the file named by $SCALECHECK_METRICS as one
JSON line, so the check sees every function as its own kernel (beside the wall time of the whole run).
"""

import json
import os
import sys
import time

import wordcount
from wordcount.words import random_words


def main():
    n = int(sys.argv[1])
    words = random_words(n)
    lines = []
    for name in ("distinct", "by_length"):
        function = getattr(wordcount, name, None)
        if function is None:
            continue
        start = time.perf_counter()
        function(words)
        lines.append({"kernel": f"wordcount.{name}", "unit": "s", "value": time.perf_counter() - start})
    with open(os.environ.get("SCALECHECK_METRICS", os.devnull), "a") as report:
        for line in lines:
            report.write(json.dumps(line) + "\\n")


if __name__ == "__main__":
    main()
'''

TEST = '''"""The growth wordcount promises, asserted with scalecheck's pytest plugin."""

from wordcount import distinct
from wordcount.words import random_words

SIZES = [500, 1_000, 2_000, 4_000, 8_000]  # the quadratic commit stays within its budget of 1 s


def test_distinct_scales(scaling):
    result = scaling.measure(distinct, n=SIZES, setup=random_words)
    result.assert_no_worse_than("n log n")
'''

BY_LENGTH_TEST = '''

def test_by_length_scales(scaling):
    from wordcount import by_length

    scaling.measure(by_length, n=SIZES, setup=random_words).assert_no_worse_than("n")
'''

PYTEST_INI = "[pytest]\ntestpaths = tests\npythonpath = .\n"

SCALECHECK_TOML = """\
# scalecheck's settings for this project, read by `scalecheck check` and by the pytest plugin
target = { n = 100000 }  # predictions at a hundred thousand words, 6x beyond the largest measured size

[gate]
# a shared laptop's background load moves timings by 10-30% between two runs; a change of growth is caught
# whatever this threshold; a constant slowdown must reach 2x at the target to fail the check
threshold = 1.0
"""

COMMITS = [
    ("wordcount: distinct words, sorted", SORTED_SET, False),
    ("wordcount: count words per length", SORTED_SET, True),
    ("distinct: keep the first spelling", FIRST_SPELLING, True),
    ("distinct: remember seen words in a set", FIRST_SPELLING_FAST, True),
]


def git(dest: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=Example Author", "-c", "user.email=author@example.com",
               "-c", "commit.gpgsign=false", "-C", str(dest), *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def build(dest: Path) -> list[str]:
    """Create the repository at `dest`; the commit ids, oldest first."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    (dest / "wordcount").mkdir()
    (dest / "tests").mkdir()
    (dest / "pytest.ini").write_text(PYTEST_INI)
    (dest / "scalecheck.toml").write_text(SCALECHECK_TOML)
    (dest / "bench.py").write_text(BENCH)
    (dest / "wordcount" / "words.py").write_text(WORDS)
    commits = []
    for message, distinct, with_length in COMMITS:
        (dest / "wordcount" / "__init__.py").write_text(HEADER + distinct + (BY_LENGTH if with_length else ""))
        (dest / "tests" / "test_scaling.py").write_text(TEST + (BY_LENGTH_TEST if with_length else ""))
        git(dest, "add", "-A")
        git(dest, "commit", "-q", "-m", message)
        commits.append(git(dest, "rev-parse", "HEAD"))
    return commits


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: python build_history.py DEST", file=sys.stderr)
        return 2
    dest = Path(sys.argv[1])
    if dest.exists():
        print(f"build_history.py: {dest} exists; give a new folder", file=sys.stderr)
        return 2
    for commit in build(dest):
        print(commit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
