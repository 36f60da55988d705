#!/usr/bin/env bash
# The python-project example end to end: build the example repository (four commits, the third makes
# wordcount.distinct quadratic), measure every commit with the pytest plugin and with `scalecheck measure`, and
# check each commit against its parent. Usage: run.sh [WORKDIR] (default: ./demo-run, which must not exist).
# Prints one verdict per commit; exits 0 when the check failed exactly on the quadratic commit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="${1:-demo-run}"
python="${PYTHON:-python3}"
sizes="${SIZES:-1000,2000,4000,8000,16000}"
if [ -e "$work" ]; then
  echo "run.sh: $work exists; remove it or give another folder" >&2
  exit 2
fi
mkdir -p "$work/results"
work="$(cd "$work" && pwd)"
repo="$work/repo"
mapfile -t commits < <("$python" "$here/build_history.py" "$repo")
results="$work/results"
status=()
for i in "${!commits[@]}"; do
  commit="${commits[$i]}"
  git -C "$repo" checkout -q "$commit"
  subject="$(git -C "$repo" log -1 --format=%s)"
  echo "== ${commit:0:7} $subject"
  # the plugin asserts each function's growth and saves what it measured ...
  if (cd "$repo" && "$python" -m pytest -q -p no:cacheprovider --scalecheck-budget 1 \
        --scalecheck-save "$results/$commit.json" > "$results/$commit.pytest.txt" 2>&1); then
    echo "   pytest: passed"
  else
    echo "   pytest: failed (see results/$commit.pytest.txt)"
  fi
  # ... and scalecheck measure adds the benchmark script's own kernel timings to the same file
  (cd "$repo" && scalecheck measure --param "n=$sizes" --repeat 3 --commit "$commit" \
      --out "$results/$commit.json" -- "$python" bench.py '{n}' > /dev/null)
  if [ "$i" -eq 0 ]; then
    echo "   (the first commit is the baseline of the next)"
    continue
  fi
  parent="${commits[$((i - 1))]}"
  set +e
  (cd "$repo" && scalecheck check "$results/$commit.json" --baseline "$results/$parent.json" \
      --html "$results/report-${commit:0:7}.html" > "$results/$commit.check.txt" 2>&1)
  code=$?
  set -e
  status+=("$code")
  sed -n '1,/^$/p' "$results/$commit.check.txt" | sed 's/^/   /'
  echo "   check exit status $code; report: results/report-${commit:0:7}.html"
done
echo "verdicts (exit status of each check, commits 2-4): ${status[*]}"
[ "${status[*]}" = "0 1 0" ]
