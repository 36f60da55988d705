"""The machine fingerprint written to meta.machine: the user's name, or the facts of this machine as a JSON object."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import pytest

from scalecheck import machine
from scalecheck.machine import MAX_CHARS, cpu_from_cpuinfo, cpu_model, fingerprint

GITHUB = {"GITHUB_ACTIONS": "true", "RUNNER_NAME": "GitHub Actions 3", "RUNNER_ENVIRONMENT": "github-hosted",
          "ImageOS": "ubuntu24", "ImageVersion": "20241201.1"}

X86 = """\
processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7763 64-Core Processor
flags\t\t: fpu vme

processor\t: 1
model name\t: AMD EPYC 7763 64-Core Processor
"""


def test_user_name_from_scalecheck_machine_is_used_verbatim() -> None:
    assert fingerprint({"SCALECHECK_MACHINE": "  perf-box-1 \n", **GITHUB}, python=True) == "perf-box-1"


def test_blank_scalecheck_machine_is_ignored() -> None:
    facts = json.loads(fingerprint({"SCALECHECK_MACHINE": "  \t"}))
    assert set(facts) == {"cpu", "cores", "os", "host"}


def test_fingerprint_outside_ci_has_the_machine_facts_as_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "cpu_model", lambda: "AMD EPYC 7763")
    monkeypatch.setattr(platform, "node", lambda: "fv-az1")
    text = fingerprint({})
    facts = json.loads(text)
    assert facts == {"cpu": "AMD EPYC 7763", "cores": str(os.cpu_count()),
                     "os": f"{platform.system()}-{platform.machine()}", "host": "fv-az1"}
    assert text == json.dumps(facts, sort_keys=True)  # the reader's spelling of the object: it reads back the same


def test_python_flag_adds_the_interpreter() -> None:
    facts = json.loads(fingerprint({}, python=True))
    assert facts["python"] == f"{platform.python_implementation()} {platform.python_version()}"
    assert "python" not in json.loads(fingerprint({}))


def test_github_actions_adds_runner_and_image() -> None:
    facts = json.loads(fingerprint(GITHUB))
    assert facts["runner"] == "GitHub Actions 3"
    assert facts["runner_environment"] == "github-hosted"
    assert facts["image"] == "ubuntu24/20241201.1"


def test_github_keys_are_only_read_in_github_actions() -> None:
    facts = json.loads(fingerprint({**GITHUB, "GITHUB_ACTIONS": "false"}))
    assert not {"runner", "runner_environment", "image"} & set(facts)


def test_self_hosted_runner_without_image_omits_empty_keys() -> None:
    facts = json.loads(fingerprint({"GITHUB_ACTIONS": "true", "RUNNER_NAME": "perf-box-1",
                                    "RUNNER_ENVIRONMENT": "self-hosted", "ImageOS": "ubuntu24"}))
    assert facts["runner"] == "perf-box-1" and facts["runner_environment"] == "self-hosted"
    assert "image" not in facts  # ImageOS alone (no ImageVersion) does not make an image


def test_control_characters_are_stripped_and_values_capped() -> None:
    env = {"GITHUB_ACTIONS": "true", "RUNNER_NAME": "evil\x1b[31m\nrunner\u202e\t x", "RUNNER_ENVIRONMENT": "\x00\x07",
           "ImageOS": "u" * 300, "ImageVersion": "1"}
    facts = json.loads(fingerprint(env))
    assert facts["runner"] == "evil [31m runner x"
    assert "runner_environment" not in facts  # nothing left after cleaning
    assert facts["image"] == "u" * MAX_CHARS
    assert fingerprint({"SCALECHECK_MACHINE": "box\r\n1\x1b"}) == "box 1"


def test_cpu_from_cpuinfo_takes_the_first_model_name() -> None:
    assert cpu_from_cpuinfo(X86) == "AMD EPYC 7763 64-Core Processor"
    assert cpu_from_cpuinfo("model name\t: Intel(R)  Xeon(R)\tCPU\n") == "Intel(R) Xeon(R) CPU"  # collapsed


@pytest.mark.parametrize("text, expected", [
    ("processor\t: 0\nProcessor\t: AArch64 Processor rev 4 (aarch64)\nHardware\t: Qualcomm SDM845\n",
     "Qualcomm SDM845"),  # Hardware (the SoC) before Processor
    ("processor\t: 0\nProcessor\t: ARMv7 Processor rev 5 (v7l)\n", "ARMv7 Processor rev 5 (v7l)"),
    ("system type\t\t: MT7621\nprocessor\t\t: 0\ncpu model\t\t: MIPS 1004Kc V2.15\n", "MIPS 1004Kc V2.15"),
    ("processor\t: 0\nBogoMIPS\t: 38.40\nCPU implementer\t: 0x41\n", ""),  # arm64: no model line
    ("", ""),
], ids=["arm-hardware", "arm-processor", "mips", "arm64-none", "empty"])
def test_cpu_from_cpuinfo_falls_back_for_other_architectures(text: str, expected: str) -> None:
    assert cpu_from_cpuinfo(text) == expected


def test_cpu_model_reads_cpuinfo_on_linux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "system", lambda: "Linux")
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(X86)
    assert cpu_model(cpuinfo) == "AMD EPYC 7763 64-Core Processor"


@pytest.mark.parametrize("case", ["missing", "directory", "no-model"])
def test_cpu_model_falls_back_without_raising(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "system", lambda: "Linux")
    monkeypatch.setattr(platform, "processor", lambda: "")
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    cpuinfo = tmp_path / "cpuinfo"
    if case == "directory":
        cpuinfo.mkdir()  # reading it raises IsADirectoryError, as an unreadable file raises PermissionError
    elif case == "no-model":
        cpuinfo.write_text("processor\t: 0\n")
    assert cpu_model(cpuinfo) == "aarch64"


def test_cpu_model_elsewhere_uses_platform_processor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    monkeypatch.setattr(platform, "processor", lambda: "arm")
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(X86)  # not read on other systems
    assert cpu_model(cpuinfo) == "arm"


# -- api.record stamps the recording machine on a run that names none ----------------------------------------------

MEASUREMENTS = ('{{"scalecheck": 1, "parameters": ["p"], "meta": {meta}, '
                '"measurements": [{{"kernel": "k", "point": {{"p": 1}}, "values": [1.0]}}]}}')


def _recorded_meta(tmp_path: Path, meta: str) -> tuple[dict[str, object], str]:
    """Record a file with `meta` for HEAD of a fresh repository: (the stored file's meta, the returned run's)."""
    import subprocess

    from scalecheck.api import record
    from scalecheck.config import Config

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args], cwd=tmp_path,
                              check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("commit", "-q", "--allow-empty", "-m", "c1")
    measured = tmp_path / "m.json"
    measured.write_text(MEASUREMENTS.format(meta=meta))
    sha, _, run = record([measured], "HEAD", Config(root=tmp_path), cwd=tmp_path)
    stored = json.loads(git("show", f"scalecheck-data:{sha}.json"))
    return stored["meta"], run.meta["machine"]


def test_record_stamps_the_fingerprint_on_a_run_without_machine(tmp_path: Path) -> None:
    stored, returned = _recorded_meta(tmp_path, "{}")
    assert isinstance(stored["machine"], dict) and set(stored["machine"]) == {"cpu", "cores", "os", "host"}
    assert json.loads(returned) == stored["machine"]


def test_record_keeps_the_machine_a_run_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCALECHECK_MACHINE", "recorder")
    stored, returned = _recorded_meta(tmp_path, '{"machine": "perf-box-1"}')
    assert stored["machine"] == returned == "perf-box-1"
