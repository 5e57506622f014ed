"""Faults of the file system never wedge or fail the tool (issue 12, items 3, 4, 7, 8 and 12).

Real FIFOs (``os.mkfifo``), real devices (``/dev/zero``), real folders whose mode bits refuse reading
or searching (held for root too, see ``fsfaults``), real 1.5 GB sparse files.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args
from fakes.waiting import wait_for
from fsfaults import unreadable

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.dream.run import run_cycle
from dreamtui.core.dream.waking import waking_message
from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import NotRegularFile, Skipped, open_regular
from dreamtui.core.gate.verify import verify_quote
from dreamtui.core.ingest.digest import digest_file
from dreamtui.core.ingest.tail import Tailer, decode_line, open_transcript
from dreamtui.core.ingest.transcripts import discover, session_files
from dreamtui.core.ingest.watch import Watcher
from dreamtui.core.ledger import Ledger

REPO = Path(__file__).resolve().parent.parent
CYCLE_FIXTURES = Path(__file__).parent / "fixtures" / "cycle"
RULES = CYCLE_FIXTURES / "rules_extractor.py"
SESSION = "55555555-5555-4555-8555-555555555555"
WRITTEN = 1773180000.0  # an hour before NOW
NOW = "2026-03-10T23:00:00Z"


def person(text: str, uuid: str = "u1", session: str = SESSION) -> bytes:
    """One line: a person's prompt."""
    rec = {
        "type": "user",
        "uuid": uuid,
        "timestamp": "2026-03-10T22:00:00.000Z",
        "sessionId": session,
        "isSidechain": False,
        "message": {"role": "user", "content": text},
    }
    return (json.dumps(rec, ensure_ascii=False) + "\n").encode()


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    """A transcripts root with two good projects."""
    root = tmp_path / "projects"
    for name in ("-home-kim-a", "-home-kim-b"):
        (root / name).mkdir(parents=True)
        (root / name / f"{SESSION}.jsonl").write_bytes(person(f"Please fix the importer of {name}."))
    return root


def run_cli(*args: str, timeout: float = 20.0) -> subprocess.CompletedProcess[str]:
    """``dreamtui ARGS`` in a real process (a hang is a failure, not a stuck test run)."""
    code = "from dreamtui.cli.main import main; main()"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout, env=env
    )


# -- FIFOs, devices, sockets -------------------------------------------------------------------------


def test_digest_of_a_fifo_is_a_one_line_error_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    out = run_cli("digest", str(fifo))
    assert time.monotonic() - started < 15  # not waiting for a writer that never comes
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"dreamtui: {fifo} is not a transcript file: it is a FIFO, not a regular file"
    ]
    assert "Traceback" not in out.stderr


def test_digest_of_dev_zero_is_a_one_line_error_at_once() -> None:
    out = run_cli("digest", "/dev/zero", "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == (
        "dreamtui: /dev/zero is not a transcript file: it is a character device, not a regular file"
    )


def test_opening_a_fifo_never_blocks_even_after_a_check_said_regular(tmp_path: Path) -> None:
    """The race: listed as a file, swapped for a FIFO before the open. The open itself refuses it."""
    path = tmp_path / "s.jsonl"
    os.mkfifo(path)
    done: list[BaseException] = []

    def try_open() -> None:
        try:
            open_regular(path)
        except BaseException as exc:  # noqa: BLE001
            done.append(exc)

    t = threading.Thread(target=try_open, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "opening a FIFO blocked"
    assert isinstance(done[0], NotRegularFile) and done[0].strerror == "it is a FIFO, not a regular file"
    with pytest.raises(TranscriptError, match="it is a FIFO"):
        open_transcript(path)


def test_a_socket_named_jsonl_is_skipped_with_a_notice(projects: Path) -> None:
    import socket

    sock_path = projects / "-home-kim-a" / "sock.jsonl"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(str(sock_path))
        skipped: list[Skipped] = []
        found = discover(projects, skipped)
    assert [tf.project for tf in found] == ["-home-kim-a", "-home-kim-b"]
    assert [s.notice for s in skipped] == [f"skipped {sock_path}: it is a socket, not a regular file"]


def test_discover_skips_a_fifo_named_jsonl_with_a_one_line_notice(projects: Path) -> None:
    fifo = projects / "-home-kim-a" / "agent-1234abcd.jsonl"
    os.mkfifo(fifo)
    sub = projects / "-home-kim-b" / SESSION / "subagents"
    sub.mkdir(parents=True)
    os.mkfifo(sub / "agent-x.jsonl")
    skipped: list[Skipped] = []
    found = discover(projects, skipped)
    assert [tf.path.name for tf in found] == [f"{SESSION}.jsonl", f"{SESSION}.jsonl"]
    assert sorted(s.notice for s in skipped) == sorted(
        [
            f"skipped {fifo}: it is a FIFO, not a regular file",
            f"skipped {sub / 'agent-x.jsonl'}: it is a FIFO, not a regular file",
        ]
    )
    assert session_files(projects, "-home-kim-a", SESSION) == [projects / "-home-kim-a" / f"{SESSION}.jsonl"]


def test_verify_skips_a_fifo_and_says_so(tmp_path: Path) -> None:
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    result = verify_quote("please always run the migrations first", [fifo])
    assert not result.verified and "s.jsonl: it is a FIFO, not a regular file" in (result.reason or "")


# -- unreadable folders ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bits, reason",
    [
        (0o000, "cannot list this folder (permission denied)"),
        (0o444, "cannot open the files in this folder (permission denied)"),  # readable, not searchable
    ],
)
def test_discover_skips_an_unreadable_project_folder_and_keeps_the_others(
    projects: Path, bits: int, reason: str
) -> None:
    bad = projects / "-home-kim-a"
    skipped: list[Skipped] = []
    with unreadable(bad, bits):
        found = discover(projects, skipped)
    assert [tf.project for tf in found] == ["-home-kim-b"]
    assert [s.notice for s in skipped] == [f"skipped {bad}: {reason}"]


def test_sessions_of_a_project_behind_an_unsearchable_folder_are_empty_not_an_error(projects: Path) -> None:
    with unreadable(projects / "-home-kim-a", 0o444):
        assert session_files(projects, "-home-kim-a", SESSION) == []


def _dream_config(tmp_path: Path) -> Config:
    root = tmp_path / "transcripts"
    shutil.copytree(CYCLE_FIXTURES / "busy", root)
    shutil.copytree(root / "-home-kim-acme", root / "-home-kim-locked")
    for p in root.rglob("*.jsonl"):
        os.utime(p, (WRITTEN, WRITTEN))
    return Config(
        transcripts=root,
        memory=tmp_path / "memory",
        state=tmp_path / "state",
        extractor="command",
        command=(sys.executable, str(RULES)),
    )


@pytest.fixture
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Kim")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "kim@example.com")


def test_a_dream_with_one_unreadable_project_dreams_the_rest_and_reports_it(
    tmp_path: Path, git_identity: None
) -> None:
    config = _dream_config(tmp_path)
    locked = config.transcripts / "-home-kim-locked"
    ledger = Ledger.open(config.state)
    try:
        with unreadable(locked, 0o444):
            record = run_cycle(config, ledger)
        assert record.status == "completed" and record.depth == "deep"
        dreamed = {r["project"] for r in ledger.query("SELECT project FROM files WHERE dreamed_offset > 0")}
        assert dreamed == {"-home-kim-acme"}
        message = waking_message(record)
        assert (
            f"Skipped 1 path(s) that cannot be read as transcripts (the rest were dreamed): skipped {locked}: "
            "cannot open the files in this folder (permission denied)."
        ) in message
        # every retry is not failed by it either, and once readable again it is dreamed
        again = run_cycle(config, ledger, date="2026-03-11")
        assert again.status == "completed"
        dreamed = {r["project"] for r in ledger.query("SELECT project FROM files WHERE dreamed_offset > 0")}
        assert dreamed == {"-home-kim-acme", "-home-kim-locked"}
        assert "Skipped" not in waking_message(again)
    finally:
        ledger.close()


def test_dream_cli_with_an_unlistable_project_exits_0_and_names_it(
    tmp_path: Path, git_identity: None
) -> None:
    config = _dream_config(tmp_path)
    locked = config.transcripts / "-home-kim-locked"
    args = [
        *folder_args(config),
        "dream",
        "--extractor",
        "command",
    ]
    toml = tmp_path / "c.toml"
    toml.write_text(f"command = {json.dumps([sys.executable, str(RULES)])}\n")
    with unreadable(locked, 0o000):
        res = CliRunner().invoke(cli, ["--config", str(toml), *args])
    assert res.exit_code == 0, res.output
    assert f"skipped {locked}: cannot list this folder (permission denied)" in res.output
    assert "Traceback" not in res.output


def test_a_project_dream_is_not_troubled_by_another_projects_unreadable_folder(
    tmp_path: Path, git_identity: None
) -> None:
    config = _dream_config(tmp_path)
    ledger = Ledger.open(config.state)
    try:
        with unreadable(config.transcripts / "-home-kim-locked", 0o000):
            record = run_cycle(config, ledger, project="-home-kim-acme")
        assert record.status == "completed" and not record.stats.skipped_count
    finally:
        ledger.close()


# -- watch -------------------------------------------------------------------------------------------


class Heard:
    """What a watcher reported, from its thread."""

    def __init__(self) -> None:
        self.goodnights: list[str] = []
        self.skips: list[str] = []
        self.errors: list[BaseException] = []


def _watch(root: Path, heard: Heard) -> Watcher:
    return Watcher(
        root,
        on_goodnight=heard.goodnights.append,
        on_skip=heard.skips.append,
        on_error=heard.errors.append,
        debounce=0.05,
        rescan_seconds=0.3,
    )


def test_watch_keeps_hearing_goodnight_after_a_fifo_appears(projects: Path) -> None:
    heard = Heard()
    fifo = projects / "-home-kim-a" / "99999999-9999-4999-8999-999999999999.jsonl"
    with _watch(projects, heard) as watcher:
        os.mkfifo(fifo)
        assert wait_for(lambda: heard.skips, 10)
        with (projects / "-home-kim-b" / f"{SESSION}.jsonl").open("ab") as fh:
            fh.write(person("thanks, good night!", uuid="u2"))
        assert wait_for(lambda: heard.goodnights, 10), "the watcher stopped hearing good night"
        seen = watcher.rescans
        assert wait_for(lambda: watcher.rescans >= seen + 2)  # two more rescans find the FIFO still there
    assert heard.goodnights == ["-home-kim-b"]
    assert heard.skips == [f"skipped {fifo}: it is a FIFO, not a regular file"]
    assert heard.errors == []


def test_watch_reports_an_unreadable_folder_once_and_watches_the_rest(projects: Path) -> None:
    heard = Heard()
    bad = projects / "-home-kim-a"
    with unreadable(bad, 0o000), _watch(projects, heard) as watcher:
        with (projects / "-home-kim-b" / f"{SESSION}.jsonl").open("ab") as fh:
            fh.write(person("good night", uuid="u2"))
        assert wait_for(lambda: heard.goodnights, 10)
        seen = watcher.rescans
        assert wait_for(lambda: watcher.rescans >= seen + 2)  # two more rescans find it unreadable again
    assert heard.skips == [f"skipped {bad}: cannot list this folder (permission denied)"]


def test_watch_cli_says_a_fifo_is_skipped_on_one_line_and_keeps_watching(
    projects: Path, tmp_path: Path
) -> None:
    code = "from dreamtui.cli.main import main; main()"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "--transcripts",
            str(projects),
            "--state",
            str(tmp_path / "state"),
            "--memory",
            str(tmp_path / "memory"),
            "watch",
            "--debounce",
            "0.05",
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
    try:
        assert "watching" in lines.get(timeout=30)
        fifo = projects / "-home-kim-a" / "agent-0000beef.jsonl"
        os.mkfifo(fifo)
        line = lines.get(timeout=30)  # a hang fails here instead of stopping the test run
        assert line.strip() == f"dreamtui: watch: skipped {fifo}: it is a FIFO, not a regular file"
    finally:
        proc.terminate()
        proc.wait(10)
    assert proc.returncode == 0


# -- bounded memory on a huge new region (item 12) -------------------------------------------------------


@pytest.fixture(scope="module")
def sparse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1.5 GB transcript: a sparse hole of 1.5 GB (no newline), then a person saying good night."""
    folder = tmp_path_factory.mktemp("sparse") / "projects" / "-home-kim-big"
    folder.mkdir(parents=True)
    path = folder / f"{SESSION}.jsonl"
    with path.open("wb") as fh:
        fh.truncate(1536 * 1024 * 1024)
        fh.seek(0, os.SEEK_END)
        fh.write(b"\n" + person("that's it for today, good night"))
    return path


def _peak(fn):
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_watch_scans_a_1_5_gb_new_region_with_bounded_memory(sparse: Path) -> None:
    watcher = Watcher(sparse.parent.parent)
    said, peak = _peak(lambda: watcher._scan_for_goodnight(sparse))
    assert said  # the good night after the huge region is still heard
    assert peak < 16 * 1024 * 1024, f"{peak / 2**20:.1f} MiB held while reading 1.5 GB"


def test_tail_reads_a_1_5_gb_new_region_with_bounded_memory(sparse: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "state")
    try:
        read, peak = _peak(lambda: Tailer(ledger).read(sparse))
    finally:
        ledger.close()
    assert read.oversized == [1] and [n for n, _, _ in read.lines] == [2]
    assert peak < 32 * 1024 * 1024, f"{peak / 2**20:.1f} MiB held while reading 1.5 GB"


# -- invalid bytes and a BOM (item 7) ---------------------------------------------------------------


LINE = person("Always run the migrations before the tests, the schema drifts otherwise.")


def test_a_bom_on_line_one_keeps_the_person_record_and_counts_it(tmp_path: Path) -> None:
    path = tmp_path / "p" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"\xef\xbb\xbf" + LINE + person("second prompt here", uuid="u2"))
    d = digest_file(path)
    assert [t.text for t in d.turns] == [
        "Always run the migrations before the tests, the schema drifts otherwise.",
        "second prompt here",
    ]
    assert (d.stats.replaced, d.stats.skipped_lines, d.stats.malformed) == (1, 0, 0)
    assert d.stats.to_json()["replaced"] == 1


def test_an_invalid_byte_keeps_the_rest_of_the_person_record_and_counts_it(tmp_path: Path) -> None:
    path = tmp_path / "p" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    path.write_bytes(LINE.replace(b"migrations", b"migr\xffations"))
    d = digest_file(path)
    assert [t.text for t in d.turns] == [
        "Always run the migr\ufffdations before the tests, the schema drifts otherwise."
    ]
    assert (d.stats.replaced, d.stats.invalid_utf8, d.stats.skipped_lines) == (1, 0, 0)


def test_bad_bytes_in_a_line_that_is_not_json_still_count_as_invalid_utf8() -> None:
    assert decode_line(b'{"type":"user","message":\xff') == (None, "invalid_utf8")
    assert decode_line(b"\xef\xbb\xbf" + LINE.strip())[1] == "replaced"
    assert decode_line(LINE.strip())[1] is None


@pytest.mark.parametrize("damage", ["bom", "byte"])
def test_a_quote_from_a_repaired_record_verifies_as_the_persons(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "p" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    raw = b"\xef\xbb\xbf" + LINE if damage == "bom" else LINE.replace(b"before", b"bef\xc3ore")
    path.write_bytes(raw)
    shown = digest_file(path).turns[0].text  # the text a model is given, and quotes from
    quote = shown[: shown.index("drifts")].strip()
    result = verify_quote(quote, [path])
    assert result.verified, result.reason
    assert result.best.provenance == "person" and result.best.line == 1


def test_digest_cli_shows_how_many_records_were_repaired(tmp_path: Path) -> None:
    path = tmp_path / "p" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"\xef\xbb\xbf" + LINE)
    res = CliRunner().invoke(cli, ["digest", str(path)])
    assert res.exit_code == 0
    assert (
        "1 repaired (bad bytes shown as \ufffd, or a byte-order mark removed)" in res.output.splitlines()[0]
    )
    assert "Always run the migrations" in res.output


def test_a_dream_counts_repaired_records_in_the_waking_message(tmp_path: Path, git_identity: None) -> None:
    config = _dream_config(tmp_path)
    shutil.rmtree(config.transcripts / "-home-kim-locked")
    main = next((config.transcripts / "-home-kim-acme").glob("*.jsonl"))
    main.write_bytes(b"\xef\xbb\xbf" + main.read_bytes())
    os.utime(main, (WRITTEN, WRITTEN))
    ledger = Ledger.open(config.state)
    try:
        record = run_cycle(config, ledger)
    finally:
        ledger.close()
    assert record.stats.records_repaired == 1
    assert "Repaired 1 record(s)" in waking_message(record)


def test_a_small_transcript_is_read_whole_and_a_larger_or_growing_one_is_left_to_the_scanner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``read_regular`` (the digest's read of a file up to 1 MB): the whole file, or None when it holds
    more than the limit, also when it grew past the limit after its size was looked at."""
    from dreamtui.core import files

    path = tmp_path / "11111111-2222-4333-8444-555555555555.jsonl"
    path.write_bytes(b'{"type":"user"}\n' * 10)
    assert files.read_regular(path, 160) == path.read_bytes()
    assert files.read_regular(path, 159) is None
    real_fstat = os.fstat

    def smaller(fd: int) -> os.stat_result:  # the file grows between the fstat and the read
        st = real_fstat(fd)
        return os.stat_result(
            (
                st.st_mode,
                st.st_ino,
                st.st_dev,
                st.st_nlink,
                st.st_uid,
                st.st_gid,
                16,
                st.st_atime,
                st.st_mtime,
                st.st_ctime,
            )
        )

    monkeypatch.setattr(files.os, "fstat", smaller)
    assert files.read_regular(path, 1000) == path.read_bytes()  # read on to the end
    assert files.read_regular(path, 100) is None  # grew past the limit: read it in chunks
    monkeypatch.undo()
    empty = tmp_path / "22222222-2222-4333-8444-555555555555.jsonl"
    empty.write_bytes(b"")
    assert files.read_regular(empty, 10) == b""
    with pytest.raises(NotRegularFile):
        files.read_regular(tmp_path, 10)
