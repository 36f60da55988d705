"""Fuzz cases: a command line of `scalecheck model`, `check`, `cluster` or `overhead` over mutated seed files.

A case is a pure function of (seed, index): `make_case(seed, index)` draws everything from its own
`random.Random`, so any one case can be replayed alone (`python benchmarks/fuzz.py --seed S --replay I`). The
family of case `index` is ``FAMILIES[index % len(FAMILIES)]``, so every family gets its share of any run.

Seeds are the project's own files only (CI has nothing else): every input under tests/inputs/ (with the Extra-P
files of tests/inputs/extrap/, the text and JSON files of ../shared/extrap-data/), the check and cluster examples,
and the small overhead and process files of tests/fuzz/seeds/ (see its README).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from pathlib import Path

from scalecheck.names import FORMAT_NAMES

from .mutations import CONTENT_MUTATIONS, HOSTILE_NAMES, LONG_NAMES, STACKED, plant_name, rename

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "inputs"
SEEDS = Path(__file__).resolve().parent / "seeds"
EXAMPLES = ROOT / "examples"

FAMILIES = (*CONTENT_MUTATIONS, "swap-format", "forced-format", "hostile-file-name")
COMMANDS = {"model": 0.42, "check": 0.38, "cluster": 0.1, "overhead": 0.1}
SENTINEL = b"an earlier report that a failed run must leave as it is\n"
SUMMARY_LIMIT = 1024 * 1024  # GitHub's step summary limit, bytes
# Partners: a check of one of these candidates compares with its own baseline example (findings, annotations).
PAIRS = {"examples/check/candidate.json": "examples/check/baseline.json",
         "examples/cluster/candidate.json": "examples/cluster/baseline.json"}
PROCESS_SEEDS = ("examples/cluster/weather.json", "examples/cluster/candidate.json",
                 "tests/fuzz/seeds/processes.jsonl")
CALIBRATION_SEEDS = ("tests/fuzz/seeds/overhead_calibration.jsonl", "tests/fuzz/seeds/overhead_calibration.csv")
EVENT_SEEDS = ("tests/fuzz/seeds/overhead_events.csv", "tests/fuzz/seeds/overhead_events.jsonl")


@functools.lru_cache(maxsize=1)
def measurement_seeds() -> tuple[str, ...]:
    """The seed files of `model` and `check`, as paths from the repository's top folder, sorted."""
    found = [p for p in INPUTS.rglob("*") if p.is_file() and p.name != "README.md"]
    found += [EXAMPLES / "check" / "baseline.json", EXAMPLES / "check" / "candidate.json",
              EXAMPLES / "cluster" / "candidate.json"]
    return tuple(sorted(p.relative_to(ROOT).as_posix() for p in found))


def _weight(seed: str) -> float:
    """Valid files more often than files that are already wrong; the large 3-parameter files seldom (slow)."""
    size = (ROOT / seed).stat().st_size
    if size > 50_000:
        return 0.3
    return 0.8 if Path(seed).name.startswith("bad_") else 2.0


@dataclass(frozen=True)
class InputFile:
    """One input of a case: its role on the command line, where its bytes came from and what was done to them."""

    role: str  # FILE, CANDIDATE, BASELINE, CALIBRATION, EVENTS
    name: str  # file name in the case's folder
    seed: str  # seed file, from the repository's top folder
    data: bytes
    mutations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    """A command line over input files, and the environment it runs in."""

    seed: int
    index: int
    family: str
    command: str
    inputs: tuple[InputFile, ...]
    args: tuple[str, ...]  # "{ROLE}" stands for an input's path, "{out:NAME}" for an output file's
    outputs: tuple[str, ...] = ()  # output file names (--json, --html, --markdown, --dot)
    previous: bool = False  # the outputs exist before the run (they must stay as they are unless rewritten whole)
    github: bool = False  # GITHUB_ACTIONS=true with GITHUB_STEP_SUMMARY and GITHUB_OUTPUT
    summary_used: int = 0  # bytes already in the job summary
    stdout_room: int | None = None  # characters standard output takes before its reader goes away (`| head -c N`)
    replay: str = ""  # how to run the case again (default: the benchmark's --replay of a generated case)

    def paths(self, folder: Path) -> dict[str, Path]:
        return {item.role: folder / item.name for item in self.inputs}

    def argv(self, folder: Path) -> list[str]:
        """The command line with the inputs' and outputs' paths in `folder`."""
        paths = self.paths(folder)
        out = []
        for arg in self.args:
            if arg.startswith("{out:"):
                out.append(str(folder / arg[5:-1]))
            elif arg.startswith("{") and arg[1:-1] in paths:
                out.append(str(paths[arg[1:-1]]))
            else:
                out.append(arg)
        return out

    def write(self, folder: Path) -> None:
        """Write the inputs, the earlier outputs (when `previous`) and the GitHub environment files to `folder`."""
        folder.mkdir(parents=True, exist_ok=True)
        for item in self.inputs:
            (folder / item.name).write_bytes(item.data)
        if self.previous:
            for name in self.outputs:
                (folder / name).write_bytes(SENTINEL)
        if self.github:
            (folder / "github_output").write_bytes(b"")
            (folder / "step_summary").write_bytes(b"x" * (self.summary_used - 1) + b"\n" if self.summary_used
                                                  else b"")

    def describe(self) -> str:
        """What the case is: the replay command, the command line, each input's seed and mutations."""
        replay = self.replay or f"python benchmarks/fuzz.py --seed {self.seed} --replay {self.index} --keep /tmp/case"
        lines = [f"seed {self.seed} case {self.index} ({self.family}); replay: {replay}",
                 "  scalecheck " + " ".join(repr(a) if not a.isprintable() or " " in a else a for a in self.args)]
        if self.github:
            lines.append(f"  with GITHUB_ACTIONS=true, GITHUB_STEP_SUMMARY (holding {self.summary_used:,} bytes) "
                         "and GITHUB_OUTPUT")
        if self.previous:
            lines.append(f"  outputs existing before the run: {', '.join(self.outputs)}")
        if self.stdout_room is not None:
            lines.append(f"  standard output closed by its reader after {self.stdout_room} character(s)")
        for item in self.inputs:
            lines.append(f"  {item.role} = {item.name!r} ({len(item.data):,} bytes) from {item.seed}"
                         + ("" if item.mutations else ", unchanged"))
            lines += [f"    {mutation}" for mutation in item.mutations]
        return "\n".join(lines)


def _pick(rng: random.Random, seeds: tuple[str, ...]) -> str:
    return rng.choices(seeds, weights=[_weight(s) for s in seeds])[0]


def _mutated(rng: random.Random, family: str, seed: str, role: str) -> InputFile:
    """Seed `seed` with the family's mutation, sometimes followed by a byte-level one, named for its role."""
    data = (ROOT / seed).read_bytes()
    suffix = Path(seed).suffix
    name = f"{role.lower()}{suffix}"
    done: list[str] = []
    if family == "swap-format":
        other = _pick(rng, measurement_seeds() + PROCESS_SEEDS + CALIBRATION_SEEDS + EVENT_SEEDS)
        other_data = (ROOT / other).read_bytes()
        if rng.random() < 0.7:
            data = other_data
            done.append(f"content of {other} under this seed's name")
        else:
            data = data + (b"" if data.endswith(b"\n") else b"\n") + other_data
            done.append(f"content of {other} appended")
    elif family == "hostile-file-name":
        # a file name holds no '/' nor NUL, and no lone surrogate (it could not be encoded for the file system)
        stem = rng.choice([n for n in HOSTILE_NAMES if not any("\ud800" <= c <= "\udfff" for c in n)])
        stem = stem.replace("/", "\u2215").replace("\x00", "\\0")
        name = f"{role.lower()}{stem}{suffix}"
        done.append(f"file name {name!r}")
    elif family in CONTENT_MUTATIONS:
        data, what = CONTENT_MUTATIONS[family](data, rng)
        done.append(what)
    if rng.random() < (0.5 if family == "forced-format" else 0.15):
        extra = rng.choice(STACKED)
        data, what = CONTENT_MUTATIONS[extra](data, rng)
        done.append(f"then {what}")
    return InputFile(role, name, seed, data, tuple(done))


def _plain(seed: str, role: str) -> InputFile:
    return InputFile(role, f"{role.lower()}{Path(seed).suffix}", seed, (ROOT / seed).read_bytes())


def _renamed_on_both_sides(rng: random.Random, family: str, candidate_seed: str,
                           baseline_seed: str) -> tuple[InputFile, InputFile]:
    """A kernel (or metric, parameter) renamed to a hostile or long name in the candidate and the baseline alike,
    so that the name reaches the comparison, its findings and their annotations."""
    names = HOSTILE_NAMES if family == "hostile-name" else LONG_NAMES
    data, what, renamed = plant_name((ROOT / candidate_seed).read_bytes(), rng, names, family.replace("-", " "))
    baseline = (ROOT / baseline_seed).read_bytes()
    if renamed is not None:
        baseline = rename(baseline, *renamed)
    return (InputFile("CANDIDATE", f"candidate{Path(candidate_seed).suffix}", candidate_seed, data, (what,)),
            InputFile("BASELINE", f"baseline{Path(baseline_seed).suffix}", baseline_seed, baseline,
                      ("the same name renamed wherever it occurs",)))


def _outputs(rng: random.Random, options: list[tuple[str, str, float]]) -> tuple[list[str], list[str]]:
    """(arguments, output names) for each (flag, name, probability) drawn."""
    args, names = [], []
    for flag, name, chance in options:
        if rng.random() < chance:
            args += [flag, f"{{out:{name}}}"]
            names.append(name)
    return args, names


def make_case(seed: int, index: int) -> Case:
    """Case `index` of the run seeded with `seed`."""
    rng = random.Random(f"scalecheck-fuzz:{seed}:{index}")
    family = FAMILIES[index % len(FAMILIES)]
    command = rng.choices(list(COMMANDS), weights=list(COMMANDS.values()))[0]
    fmt = FORMAT_NAMES[index // len(FAMILIES) % len(FORMAT_NAMES)] if family == "forced-format" \
        else rng.choice(FORMAT_NAMES) if rng.random() < 0.05 else None  # the family takes each format in turn
    github = False
    summary_used = 0
    inputs: tuple[InputFile, ...]
    if command == "model":
        inputs = (_mutated(rng, family, _pick(rng, measurement_seeds()), "FILE"),)
        args = ["model", "{FILE}"]
        out_args, outputs = _outputs(rng, [("--json", "models.json", 0.4), ("--html", "models.html", 0.1)])
        if "models.html" in outputs:
            out_args += ["--max-plots", "1" if rng.random() < 0.2 else "0"]
        github = rng.random() < 0.1
    elif command == "check":
        candidate_seed = _pick(rng, measurement_seeds())
        baseline_seed = PAIRS.get(candidate_seed, candidate_seed)
        side = rng.random()
        if family in ("hostile-name", "long-name") and side < 0.5:
            inputs = _renamed_on_both_sides(rng, family, candidate_seed, baseline_seed)
        else:
            candidate = _mutated(rng, family, candidate_seed, "CANDIDATE") if side < 0.7 \
                else _plain(candidate_seed, "CANDIDATE")
            baseline = _mutated(rng, family, baseline_seed, "BASELINE") if side >= 0.5 \
                else _plain(baseline_seed, "BASELINE")
            inputs = (candidate, baseline)
        args = ["check", "{CANDIDATE}", "--baseline", "{BASELINE}"]
        if rng.random() < 0.2:
            args += ["--fail-on", "growth,prediction,expectation,measured,segmentation,overhead,structure"]
        out_args, outputs = _outputs(rng, [("--json", "check.json", 0.4), ("--markdown", "comment.md", 0.2),
                                           ("--html", "check.html", 0.1)])
        if "check.html" in outputs:
            out_args += ["--max-plots", "1" if rng.random() < 0.2 else "0"]
        github = rng.random() < 0.4
        if github and rng.random() < 0.1:
            summary_used = SUMMARY_LIMIT - rng.choice((100, 5_000, 50_000))
    elif command == "cluster":
        seeds = PROCESS_SEEDS if rng.random() < 0.8 else measurement_seeds()
        inputs = (_mutated(rng, family, _pick(rng, seeds), "FILE"),)
        args = ["cluster", "{FILE}"]
        args += rng.choice(([], [], ["--no-closure"], ["--similarity", "0.9"]))
        out_args, outputs = _outputs(rng, [("--json", "groups.json", 0.4), ("--dot", "lattice.dot", 0.3)])
        fmt = None  # cluster reads its files by their content
    else:
        calibration_seed, events_seed = rng.choice(CALIBRATION_SEEDS), rng.choice(EVENT_SEEDS)
        if rng.random() < 0.5:
            inputs = (_mutated(rng, family, calibration_seed, "CALIBRATION"), _plain(events_seed, "EVENTS"))
        else:
            inputs = (_plain(calibration_seed, "CALIBRATION"), _mutated(rng, family, events_seed, "EVENTS"))
        args = ["overhead", "--calibration", "{CALIBRATION}", "{EVENTS}"]
        args += rng.choice(([], [], ["--interpolation", "log"], ["--refine"], ["--quantile", "0.99"]))
        out_args, outputs = _outputs(rng, [("--json", "overhead.json", 0.5)])
        fmt = None  # overhead has no --format
    if fmt is not None:
        args += ["--format", fmt]
    previous = bool(outputs) and rng.random() < 0.4
    stdout_room = rng.choice((0, 1, 200)) if rng.random() < 0.04 else None
    return Case(seed=seed, index=index, family=family, command=command, inputs=inputs, args=tuple(args + out_args),
                outputs=tuple(outputs), previous=previous, github=github, summary_used=summary_used,
                stdout_room=stdout_room)
