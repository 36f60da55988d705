"""Output files are replaced as a set: every output of a command is checked and written beside its target before
any target changes, and no temp file outlives the command (an error, Ctrl-C or SIGTERM)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from scalecheck.cli import USAGE_ERROR, main
from scalecheck.errors import ConfigError
from scalecheck.files import check_outputs, write_all, write_atomic

from .test_cli_check import BASE_SEED, CAND_SEED, FAST, KERNELS, WORSE, write_run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "mpi_data_mean.txt"
TEMP_NAME = re.compile(r"^(?P<target>.+)\.scalecheck-[0-9a-f]{8}\.tmp$")
PAST = 1_600_000_000_000_000_000  # ns: an mtime no write of this test can produce


def existing(path: Path, text: str) -> tuple[bytes, int]:
    """Make `path` hold `text` with an old modification time; return what must stay: (bytes, mtime in ns)."""
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(PAST, PAST))
    return fingerprint(path)


def fingerprint(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if TEMP_NAME.match(p.name))


class Stalling(str):
    """A text whose encoding, which happens after its temp file was created, calls `act` first."""

    def __new__(cls, text: str, act: Callable[[], None]) -> Stalling:
        made = super().__new__(cls, text)
        made.act = act  # type: ignore[attr-defined]
        return made

    def encode(self, *args: object, **kwargs: object) -> bytes:  # type: ignore[override]
        self.act()  # type: ignore[attr-defined]
        return str(self).encode(*args, **kwargs)  # type: ignore[arg-type]


# -- one bad output: no other output changes ---------------------------------------------------------------------


def test_check_with_one_bad_output_leaves_the_other_outputs_untouched(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = write_run(tmp_path / "base.json", KERNELS, BASE_SEED), write_run(tmp_path / "cand.json", WORSE,
                                                                                  CAND_SEED)
    json_out, markdown = tmp_path / "a.json", tmp_path / "a.md"
    before = existing(json_out, '{"old": true}\n'), existing(markdown, "old\n")

    code = main(["check", str(cand), "--baseline", str(base), *FAST, "--json", str(json_out), "--markdown",
                 str(markdown), "--html", str(tmp_path / "nodir" / "x.html")])

    out, err = capsys.readouterr()
    assert code == USAGE_ERROR and out == ""
    assert err == (f"scalecheck: error: cannot write {tmp_path / 'nodir' / 'x.html'}: folder {tmp_path / 'nodir'} "
                   "does not exist; fix: create the folder first, or choose another --html\n")
    assert (fingerprint(json_out), fingerprint(markdown)) == before
    assert temp_files(tmp_path) == []


def test_model_with_one_bad_output_leaves_the_other_untouched(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    json_out = tmp_path / "m.json"
    before = existing(json_out, "previous\n")
    (tmp_path / "taken").mkdir()

    code = main(["model", str(EXAMPLE), "--json", str(json_out), "--html", str(tmp_path / "taken")])

    assert code == USAGE_ERROR
    assert capsys.readouterr().err == (f"scalecheck: error: cannot write {tmp_path / 'taken'}: it is a folder; fix: "
                                       "name a file in it, or choose another --html\n")
    assert fingerprint(json_out) == before and temp_files(tmp_path) == []


def test_cluster_outputs_that_name_one_file_twice_are_refused(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "same.txt"
    code = main(["cluster", str(ROOT / "examples" / "cluster" / "weather.json"), "--json", str(out), "--dot",
                 str(tmp_path / "." / "same.txt")])
    assert code == USAGE_ERROR
    assert capsys.readouterr().err == (f"scalecheck: error: --json and --dot both name {tmp_path / 'same.txt'}; "
                                       "fix: give each output a file of its own\n")
    assert list(tmp_path.iterdir()) == []


def test_outputs_are_checked_before_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import scalecheck.api

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the history was read before its output was checked")

    monkeypatch.setattr(scalecheck.api, "history", never)
    assert main(["history", "--json", str(tmp_path / "no" / "h.json")]) == USAGE_ERROR
    assert "folder" in capsys.readouterr().err


def test_a_set_that_fails_late_replaces_nothing(tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "gone" / "second.json"
    before = existing(first, "first\n")
    with pytest.raises(ConfigError, match=r"cannot write .*second\.json: folder .*gone does not exist"):
        write_all([(first, "new first\n"), (second, "new second\n")])
    assert fingerprint(first) == before and temp_files(tmp_path) == []


def test_a_set_is_written_whole(tmp_path: Path) -> None:
    write_all([(tmp_path / "a.json", "a\n"), (tmp_path / "b.html", "<p>b</p>\n")])
    assert (tmp_path / "a.json").read_text() == "a\n" and (tmp_path / "b.html").read_text() == "<p>b</p>\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.html"]


# -- temp files: recognisable, and removed on every way out ------------------------------------------------------


def test_ctrl_c_while_writing_removes_the_temp_files_and_changes_nothing(tmp_path: Path) -> None:
    first, second = tmp_path / "report.json", tmp_path / "report.html"
    before = existing(first, "old json\n"), existing(second, "old html\n")
    seen: list[str] = []

    def interrupt() -> None:
        seen.extend(temp_files(tmp_path))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_all([(first, "new json\n"), (second, Stalling("new html\n", interrupt))])

    assert [TEMP_NAME.match(name)["target"] for name in seen] == ["report.html", "report.json"]  # type: ignore[index]
    assert (fingerprint(first), fingerprint(second)) == before
    assert temp_files(tmp_path) == []


def test_sigterm_while_writing_removes_the_temp_files_and_changes_nothing(tmp_path: Path) -> None:
    """A real `scalecheck model` stopped by SIGTERM after its JSON is written beside its target and while its HTML
    is: it exits 143 with one line, and both targets and the folder are as they were."""
    json_out, html = tmp_path / "m.json", tmp_path / "m.html"
    before = existing(json_out, "old json\n"), existing(html, "old html\n")
    child = textwrap.dedent("""\
        import sys, time
        import scalecheck.report.html_report as html_report
        from tests.test_outputs import Stalling

        def stall():
            print("staging", flush=True)
            time.sleep(60)

        render = html_report.render_model_html
        html_report.render_model_html = lambda *args, **kwargs: Stalling(render(*args, **kwargs), stall)
        from scalecheck.cli import main
        sys.exit(main(sys.argv[1:]))
        """)
    proc = subprocess.Popen([sys.executable, "-c", child, "model", str(EXAMPLE), "--max-plots", "0", "--json",
                             str(json_out), "--html", str(html)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "staging\n"
        assert len(temp_files(tmp_path)) == 2  # the JSON written, the HTML begun
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM
    assert (out, err) == ("", "scalecheck: stopped by SIGTERM\n")
    assert (fingerprint(json_out), fingerprint(html)) == before
    assert temp_files(tmp_path) == []


def test_a_long_file_name_leaves_room_for_its_temp_file(tmp_path: Path) -> None:
    target = tmp_path / ("é" * 125 + ".json")  # 255 bytes in UTF-8: the longest name most file systems allow
    write_atomic(target, "{}\n")
    assert target.read_text() == "{}\n" and list(tmp_path.iterdir()) == [target]


def test_output_names_the_file_system_refuses_are_one_line_errors(tmp_path: Path) -> None:
    folder = tmp_path / ("d" * 300)
    with pytest.raises(ConfigError) as info:
        check_outputs({"--json": folder / "x.json"})
    assert str(info.value) == f"cannot write {folder / 'x.json'}: File name too long; fix: choose another --json"


def test_written_files_get_the_usual_permissions(tmp_path: Path) -> None:
    mask = os.umask(0o027)
    try:
        write_atomic(tmp_path / "r.json", "{}\n")
    finally:
        os.umask(mask)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o640



def test_a_pipe_in_place_of_an_output_is_refused_not_replaced(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Replacing a device or a pipe by a file would break it for everyone (as root, /dev/null itself)."""
    fifo = tmp_path / "models.json"
    os.mkfifo(fifo)
    assert main(["model", str(EXAMPLE), "--json", str(fifo)]) == USAGE_ERROR
    assert capsys.readouterr().err == (f"scalecheck: error: cannot write {fifo}: it is not a regular file (a device, "
                                       "pipe or socket), which scalecheck would replace; fix: choose another --json\n")
    assert fifo.is_fifo()
