"""Comparing the machines two runs were measured on, from their meta.machine values."""

from __future__ import annotations

import json

import pytest

from scalecheck.data.machine import UNKNOWN, MachineMatch, describe, match

AMD = {"cpu": "AMD EPYC 7763 64-Core Processor", "cores": "4", "os": "Linux-x86_64", "host": "fv-az1"}


def fp(**facts: object) -> str:
    """A meta.machine value as the reader hands it over: the JSON text of the object."""
    return json.dumps(facts)


def test_same_fingerprint_is_the_same_machine() -> None:
    found = match(fp(**AMD), fp(**AMD))
    assert found == MachineMatch(True, "AMD EPYC 7763 64-Core Processor, 4 cores, Linux-x86_64, host fv-az1",
                                 "AMD EPYC 7763 64-Core Processor, 4 cores, Linux-x86_64, host fv-az1", "")


def test_key_order_and_number_spelling_do_not_matter() -> None:
    reordered = json.dumps({"host": "fv-az1", "os": "Linux-x86_64", "cores": 4, "cpu": AMD["cpu"]})
    assert match(fp(**AMD), reordered).same


def test_differing_cpu_names_both_values() -> None:
    found = match(fp(**AMD), fp(**{**AMD, "cpu": "Intel Xeon 8370C", "host": "fv-az2"}))
    assert not found.same
    assert found.reason == ("the machines differ: cpu 'AMD EPYC 7763 64-Core Processor' vs 'Intel Xeon 8370C', "
                            "host 'fv-az1' vs 'fv-az2'")
    assert found.candidate == "Intel Xeon 8370C, 4 cores, Linux-x86_64, host fv-az2"


def test_differing_host_only_is_another_machine() -> None:
    found = match(fp(**AMD), fp(**{**AMD, "host": "fv-az2"}))
    assert not found.same
    assert found.reason == "the machines differ: host 'fv-az1' vs 'fv-az2'"


def test_at_most_three_differing_keys_are_listed() -> None:
    other = {"cpu": "Intel Xeon 8370C", "cores": "2", "os": "Windows-AMD64", "host": "fv-az2"}
    reason = match(fp(**AMD), fp(**other)).reason
    assert reason.startswith("the machines differ: cpu 'AMD EPYC 7763 64-Core Processor' vs 'Intel Xeon 8370C', "
                             "cores '4' vs '2', os 'Linux-x86_64' vs 'Windows-AMD64'")
    assert reason.endswith(" and 1 more key")
    assert "host" not in reason


def test_key_on_one_side_only_is_ignored() -> None:
    # measure writes no python; the pytest plugin does; only GitHub Actions adds runner and image
    candidate = fp(**AMD, python="CPython 3.12.4", runner="GitHub Actions 3", image="ubuntu24/20241201.1")
    found = match(fp(**AMD), candidate)
    assert found.same and found.reason == ""


def test_unknown_key_in_both_is_compared() -> None:
    found = match(fp(**AMD, gpu="A100"), fp(**AMD, gpu="H100"))
    assert not found.same
    assert found.reason == "the machines differ: gpu 'A100' vs 'H100'"


def test_fingerprints_without_a_common_key_cannot_be_compared() -> None:
    found = match(fp(cpu="AMD EPYC 7763"), fp(host="fv-az1"))
    assert not found.same
    assert "no key in common" in found.reason


@pytest.mark.parametrize("baseline, candidate, reason", [
    (None, fp(**AMD), "the baseline's machine is not recorded"),
    (fp(**AMD), "  ", "the candidate's machine is not recorded"),
    ("", None, "neither side's machine is recorded"),
    ("{}", fp(**AMD), "the baseline's machine is not recorded"),
])
def test_unknown_side_is_not_the_same_machine(baseline: str | None, candidate: str | None, reason: str) -> None:
    found = match(baseline, candidate)
    assert not found.same
    assert found.reason == reason
    unknown_sides = [side for side, value in (("baseline", baseline), ("candidate", candidate))
                     if not value or not value.strip() or value == "{}"]
    for side in unknown_sides:
        assert getattr(found, side) == UNKNOWN


def test_user_names_equal_only_the_same_name() -> None:
    assert match("perf-box-1", " perf-box-1 ") == MachineMatch(True, "perf-box-1", "perf-box-1", "")
    found = match("perf-box-1", "perf-box-2")
    assert not found.same
    assert found.reason == "the machines differ: 'perf-box-1' vs 'perf-box-2'"


def test_user_name_against_fingerprint_is_not_the_same() -> None:
    found = match("perf-box-1", fp(**{**AMD, "host": "perf-box-1"}))
    assert not found.same
    assert found.reason.startswith("the baseline's machine is named 'perf-box-1'")
    assert match(fp(**AMD), "perf-box-1").reason.startswith("the candidate's machine is named 'perf-box-1'")


@pytest.mark.parametrize("text", ["{not json", '{"cpu": "x"', "[1, 2]", '"quoted"'])
def test_text_that_is_not_a_json_object_is_a_plain_name(text: str) -> None:
    assert describe(text) == text
    assert match(text, text).same
    assert not match(text, fp(cpu="x")).same


def test_describe_names_every_fact_in_order() -> None:
    value = fp(python="CPython 3.12.4", image="ubuntu24/20241201.1", runner="GitHub Actions 3",
               runner_environment="github-hosted", host="fv-az1", os="Linux-x86_64", cores="4", cpu="AMD EPYC 7763")
    assert describe(value) == ("AMD EPYC 7763, 4 cores, Linux-x86_64, host fv-az1, runner GitHub Actions 3, "
                               "image ubuntu24/20241201.1, CPython 3.12.4")


def test_describe_mentions_a_self_hosted_runner_and_extra_keys() -> None:
    value = fp(cpu="Apple M2", cores=1, runner="perf-box-1", runner_environment="self-hosted", gpu="none")
    assert describe(value) == "Apple M2, 1 core, runner perf-box-1 (self-hosted), gpu none"


@pytest.mark.parametrize("value", [None, "", "   ", "{}"])
def test_describe_unknown(value: str | None) -> None:
    assert describe(value) == UNKNOWN


def test_describe_keeps_a_user_name_on_one_line() -> None:
    assert describe("perf-box-1") == "perf-box-1"
    assert describe(fp(cpu="evil\ncpu\x1b")) == "evil cpu"
