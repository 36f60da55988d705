#!/usr/bin/env bash
# The python-project example end to end: build the example repository (four commits, the third makes
# wordcount.distinct quadratic), then check each commit against its parent, both measured in the same job
# (scalecheck check --same-job) with the pytest plugin and with `scalecheck measure`.
# Usage: run.sh [WORKDIR] (default: ./demo-run, which must not exist). Prints one verdict per commit; exits 0 when
# the check failed exactly on the quadratic commit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="${1:-demo-run}"
python="${PYTHON:-python3}"
sizes="${SIZES:-1000,2000,4000,8000,16000}"
fail() {  # one line: what is wrong, and the fix
  echo "run.sh: error: $1; fix: $2" >&2
  exit 2
}
if [ -e "$work" ]; then
  fail "$work exists" "remove it or give another folder"
fi
# Every tool the run needs, before anything is built: a missing one must not read as a verdict.
command -v git > /dev/null || fail "git is not installed; the example builds a git history" \
  "install git (e.g. apt-get install git)"
command -v scalecheck > /dev/null || fail "scalecheck is not on PATH" \
  "pip install . from the repository's root, or activate the environment it is installed in"
command -v "$python" > /dev/null || fail "no Python interpreter '$python'" "install Python 3, or set PYTHON"
"$python" -c "import pytest" 2> /dev/null || fail "$python cannot import pytest, which measures every commit" \
  "pip install pytest (into the environment of $(command -v "$python"))"
"$python" -c "import scalecheck.pytest_plugin" 2> /dev/null || fail \
  "$python cannot import scalecheck, whose pytest plugin saves the measurements" \
  "pip install . from the repository's root (into the environment of $(command -v "$python"))"
mkdir -p "$work/results"
work="$(cd "$work" && pwd)"
repo="$work/repo"
mapfile -t commits < <("$python" "$here/build_history.py" "$repo")
results="$work/results"
# What each side of a check runs, in its own tree: the pytest plugin asserts each function's growth and saves what
# it measured, then scalecheck measure adds the benchmark script's own kernel timings to the same file. scalecheck
# check --same-job runs it for the parent (in a temporary worktree) and the commit, alternating, and compares.
# pytest's exit status is kept beside its output: 1 (a complexity assertion failed) is a result, anything above
# (pytest could not run the tests) stops the run, so that no verdict stands on the second half alone.
# shellcheck disable=SC2016  # expanded by the bash that scalecheck starts for each run, not here
measure='"$PYTHON" -m pytest -q -p no:cacheprovider --scalecheck-budget 1 --scalecheck-save "$SCALECHECK_OUTPUT" \
  > "$RESULTS/$SCALECHECK_COMMIT.pytest.txt" 2>&1
status=$?
echo "$status" > "$RESULTS/$SCALECHECK_COMMIT.pytest.status"
if [ "$status" -gt 1 ]; then
  echo "pytest stopped with exit status $status (its output: $RESULTS/$SCALECHECK_COMMIT.pytest.txt)" >&2
  exit "$status"
fi
scalecheck measure --param "n=$SIZES" --repeat 3 --out "$SCALECHECK_OUTPUT" -- "$PYTHON" bench.py {n} > /dev/null'
export PYTHON="$python" SIZES="$sizes" RESULTS="$results"
status=()
for i in "${!commits[@]}"; do
  commit="${commits[$i]}"
  git -C "$repo" checkout -q "$commit"
  subject="$(git -C "$repo" log -1 --format=%s)"
  echo "== ${commit:0:7} $subject"
  if [ "$i" -eq 0 ]; then
    echo "   (the first commit is the baseline of the next)"
    continue
  fi
  parent="${commits[$((i - 1))]}"
  set +e
  (cd "$repo" && scalecheck check --same-job --baseline "$parent" --html "$results/report-${commit:0:7}.html" \
      -- bash -c "$measure" > "$results/$commit.check.txt" 2> "$results/$commit.samejob.txt")
  code=$?
  set -e
  status+=("$code")
  tested="$(cat "$results/$commit.pytest.status" 2> /dev/null || echo none)"
  if [ "$tested" != 0 ] && [ "$tested" != 1 ] || [ "$code" -gt 1 ]; then
    # pytest or the check could not run: say why, and give no verdict
    reason="$(grep '^pytest stopped' "$results/$commit.samejob.txt" | tail -n 1 || true)"
    if [ -z "$reason" ]; then
      reason="$(grep -v '^scalecheck: round ' "$results/$commit.samejob.txt" | tail -n 1 || true)"
    fi
    reason="${reason%%; fix: *}"
    fail "the check of ${commit:0:7} stopped with exit status $code: ${reason:-pytest exit status $tested}" \
      "read the output named here and $results/$commit.samejob.txt"
  elif [ "$tested" = 1 ]; then
    echo "   pytest: failed (see results/$commit.pytest.txt)"
  else
    echo "   pytest: passed"
  fi
  sed -n '1,/^$/p' "$results/$commit.check.txt" | sed 's/^/   /'
  echo "   check exit status $code; report: results/report-${commit:0:7}.html"
done
echo "verdicts (exit status of each check, commits 2-4): ${status[*]}"
[ "${status[*]}" = "0 1 0" ]
