"""``dreamtui dream``, ``watch`` and ``briefing`` as a person runs them: real subprocesses."""

from __future__ import annotations

import fcntl
import json
import os
import queue
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import pytest
from click.testing import CliRunner
from fakes.cli_world import LESSON_TURNS, folder_args, write_records
from fakes.waiting import wait_for

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.dream.banners import YIELD_FLOOR_MESSAGE
from dreamtui.core.dream.run import CycleFailed, run_cycle
from dreamtui.core.errors import ConfigError
from dreamtui.core.ledger import Ledger

FIXTURES = Path(__file__).parent / "fixtures" / "cycle"
ACME = "-home-kim-acme"
WRITTEN = 1773180000.0  # 2026-03-10T22:00:00Z
MAIN = "from dreamtui.cli.main import main; main()"


RULES = FIXTURES / "rules_extractor.py"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """Transcripts, memory and state in a temporary folder; the fixtures' deterministic extractor."""
    (tmp_path / "transcripts").mkdir()
    (tmp_path / "config.toml").write_text(
        f'extractor = "command"\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(RULES))}]\n'
    )
    return tmp_path


def env_for(home: Path, now: str = "2026-03-10T23:00:00Z") -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DREAMTUI_") and k not in {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}
    }
    env.update(
        {
            "DREAMTUI_TRANSCRIPTS": str(home / "transcripts"),
            "DREAMTUI_MEMORY": str(home / "memory"),
            "DREAMTUI_STATE": str(home / "state"),
            "DREAMTUI_CONFIG": str(home / "config.toml"),
            "DREAMTUI_NOW": now,
            "GIT_AUTHOR_NAME": "Kim",
            "GIT_AUTHOR_EMAIL": "kim@example.com",
            "GIT_COMMITTER_NAME": "Kim",
            "GIT_COMMITTER_EMAIL": "kim@example.com",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    return env


class StderrLines:
    """A process's standard error, read line by line in a thread so that every wait on it is bounded
    (a bare ``readline`` waits forever for a process that never prints)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        stream = proc.stderr

        def pump() -> None:
            for line in stream:
                self.lines.put(line)
            self.lines.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def wait_for(self, text: str, timeout: float) -> str:
        """The first line (not yet read) containing ``text``; an AssertionError past ``timeout`` s."""
        end = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {text!r} within {timeout:g}s; stderr so far: {self.seen}") from None
            if line is None:
                raise AssertionError(f"stderr ended without {text!r}: {self.seen}")
            self.seen.append(line)
            if text in line:
                return line

    def rest(self) -> str:
        """Everything the process wrote to stderr (call after it exited)."""
        while (line := self.lines.get(timeout=10)) is not None:
            self.seen.append(line)
        return "".join(self.seen)


def dreamtui(home: Path, *args: str, now: str = "2026-03-10T23:00:00Z") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        env=env_for(home, now),
        capture_output=True,
        text=True,
        timeout=120,
    )


def install(home: Path, name: str) -> None:
    shutil.copytree(FIXTURES / name, home / "transcripts", dirs_exist_ok=True)
    for p in (home / "transcripts").rglob("*.jsonl"):
        os.utime(p, (WRITTEN, WRITTEN))


def cycles(home: Path) -> list[dict[str, object]]:
    db = home / "state" / "ledger.sqlite3"
    if not db.exists():
        return []
    conn = sqlite3.connect(db, timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM dream_cycles ORDER BY id")]
    finally:
        conn.close()


def test_dream_prints_progress_on_stderr_and_the_waking_message(home: Path) -> None:
    install(home, "busy")
    out = dreamtui(home, "dream")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(
        "Dream cycle #1 for every project on 2026-03-10 (manual): completed, deep sleep."
    )
    assert "5 surfaced, 3 verified, 3 dropped (duplicate-pending 1, unverified 2)" in out.stdout
    titles = ("Light sleep", "Deep sleep", "Branching", "REM", "Wake")
    progress = [line for line in out.stderr.splitlines() if line.startswith(titles)]  # piped: plain lines
    phases = list(dict.fromkeys(next(t for t in titles if line.startswith(t)) for line in progress))
    assert phases == list(titles)
    assert any(re.fullmatch(r"Branching +100% +2/2 +branch 2/2 done", line) for line in progress), progress
    assert any(re.search(r"Light sleep .* 1/\d+ +reading .*\(session 1/\d+\)", line) for line in progress)
    assert "\x1b" not in out.stderr  # no live display when stderr is not a terminal
    again = dreamtui(home, "dream")  # after the day's full cycle, with nothing written since
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("Nothing new in any project since cycle #1 (the full cycle of 2026-03-10)")
    assert not again.stderr.strip()  # no cycle ran: no progress


def test_dream_json_is_the_record_and_nothing_on_stderr(home: Path) -> None:
    install(home, "busy")
    out = dreamtui(home, "dream", "--json", "--project", ACME)
    assert out.returncode == 0 and out.stderr == ""
    record = json.loads(out.stdout)
    assert (record["chat_id"], record["status"], record["depth"]) == (ACME, "completed", "deep")
    assert [p["name"] for p in record["phases"]] == ["light", "deep", "branch", "rem", "wake"]
    assert record["stats"]["kept"] == 2


def test_two_dreams_at_once_make_exactly_one_cycle(home: Path) -> None:
    install(home, "busy")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MAIN, "dream", "--json"],
            env=env_for(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [(p.wait(120), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    for p in procs:
        p.stdout.close()  # type: ignore[union-attr]
        p.stderr.close()  # type: ignore[union-attr]
    codes = sorted(code for code, _, _ in results)
    assert codes in ([0, 3], [0, 0]), [r[2] for r in results]
    if codes == [0, 3]:  # the usual case: the second finds the lock held
        loser = next(r for r in results if r[0] == 3)
        assert "another dream cycle is running" in loser[2] and loser[1] == ""
    else:  # the second started after the first had finished: nothing new to dream
        assert any(json.loads(out).get("nothing_new") for _, out, _ in results)
    rows = cycles(home)
    assert len(rows) == 1 and rows[0]["status"] == "completed"


def test_bad_input_is_one_clear_line(home: Path) -> None:
    out = dreamtui(home, "dream", "--project", "nope")
    assert out.returncode == 2 and out.stderr.strip().startswith("dreamtui: no project 'nope'")
    assert "Traceback" not in out.stderr
    out = dreamtui(home, "dream", "--date", "March 10")
    assert out.returncode == 2 and "YYYY-MM-DD" in out.stderr and "Traceback" not in out.stderr
    out = dreamtui(home, "briefing")
    assert out.returncode == 2 and "no briefing" in out.stderr
    out = dreamtui(home, "watch", "--schedule", "25:00")
    assert out.returncode == 2 and "HH:MM" in out.stderr
    out = dreamtui(home, "dream", "--extractor", "anthropic")  # no ANTHROPIC_API_KEY
    assert out.returncode == 2 and "ANTHROPIC_API_KEY" in out.stderr and "Traceback" not in out.stderr
    assert cycles(home) == []  # none of these recorded a cycle


def test_briefing_waits_for_review_then_accept_is_one_commit(home: Path) -> None:
    install(home, "busy")
    assert dreamtui(home, "dream").returncode == 0
    out = dreamtui(home, "briefing")  # nothing in memory yet: the new version waits
    assert out.returncode == 2 and "version #1 waits for review" in out.stderr
    assert not (home / "memory" / "briefing.md").exists()
    pending = dreamtui(home, "briefing", "--pending")
    assert pending.returncode == 0 and pending.stdout.startswith("Briefing #1 (pending)")
    assert "+## The work" in pending.stdout and "— source: `-home-kim-acme/" in pending.stdout
    as_json = json.loads(dreamtui(home, "briefing", "--pending", "--json").stdout)
    assert as_json["status"] == "pending" and all(s["source"] for s in as_json["sources"])
    accepted = dreamtui(home, "briefing", "--accept")
    assert accepted.returncode == 0 and accepted.stdout.startswith("Accepted briefing #1")
    out = dreamtui(home, "briefing")
    assert out.returncode == 0 and out.stdout == as_json["text"] and out.stderr == ""
    history = dreamtui(home, "briefing", "--history").stdout.splitlines()
    assert len(history) == 1 and "Briefing #1 accepted" in history[0]
    assert dreamtui(home, "briefing", "--at", history[0].split()[0]).stdout == out.stdout
    versions = json.loads(dreamtui(home, "briefing", "--history", "--json").stdout)
    assert versions[0]["sha"].startswith(history[0].split()[0])
    again = dreamtui(home, "briefing", "--accept")  # nothing waits any more: a clear line, no commit
    assert again.returncode == 2 and "no briefing waits for review" in again.stderr
    assert len(dreamtui(home, "briefing", "--history").stdout.splitlines()) == 1


def test_briefing_reject_keeps_it_out_with_its_reason(home: Path) -> None:
    install(home, "busy")
    assert dreamtui(home, "dream").returncode == 0
    out = dreamtui(home, "briefing", "--reject", "--reason", "too noisy")
    assert out.returncode == 0 and out.stdout.strip() == "Rejected briefing #1: too noisy."
    assert not (home / "memory" / "briefing.md").exists()
    with sqlite3.connect(home / "state" / "ledger.sqlite3") as db:
        assert db.execute("SELECT status, reason FROM briefings").fetchall() == [("rejected", "too noisy")]
    bad = dreamtui(home, "briefing", "--accept", "--id", "1")
    assert (
        bad.returncode == 2
        and "briefing #1 does not wait for review: it is rejected (too noisy)" in bad.stderr
    )
    assert dreamtui(home, "briefing", "--reason", "x").returncode == 2  # --reason alone is bad input


CHATTER = [
    "Can you show me what the readme says about installing the project on a fresh laptop, in a few lines?",
    "Thanks. Could you also list the files in the docs folder and tell me which ones look out of date?",
    "Please summarise what the tests in the exporter folder cover, one short line for each test file.",
    "Show me the current version number in the package metadata and the date of the latest tag please.",
]


def chatter_line(n: int) -> str:
    rec = {
        "type": "user",
        "sessionId": "77777777-7777-4777-8777-777777777777",
        "uuid": f"chat-{n}",
        "isSidechain": False,
        "timestamp": f"2026-03-0{n + 1}T10:00:00.000Z",
        "message": {"role": "user", "content": CHATTER[n]},
    }
    return json.dumps(rec) + "\n"


def test_the_yield_floor_after_three_zero_yield_cycles_and_not_before(home: Path) -> None:
    path = home / "transcripts" / ACME / "77777777-7777-4777-8777-777777777777.jsonl"
    path.parent.mkdir(parents=True)
    for n in range(4):
        with path.open("a") as fh:
            fh.write(chatter_line(n))
        os.utime(path, (WRITTEN, WRITTEN))
        out = dreamtui(home, "dream", "--json", "--date", f"2026-03-0{n + 1}")
        assert out.returncode == 0, out.stderr
        record = json.loads(out.stdout)
        assert (record["depth"], record["stats"]["kept"], record["date"]) == ("deep", 0, f"2026-03-0{n + 1}")
        banner = YIELD_FLOOR_MESSAGE in out.stderr.splitlines()
        assert banner == (n >= 2), (n, out.stderr)
        assert YIELD_FLOOR_MESSAGE not in out.stdout
    other = dreamtui(home, "briefing")  # every command shows it
    assert YIELD_FLOOR_MESSAGE in other.stderr.splitlines()


def test_watch_dreams_when_the_person_says_good_night(home: Path) -> None:
    session = "44444444-4444-4444-8444-444444444444"
    folder = home / "transcripts" / ACME
    folder.mkdir(parents=True)
    path = folder / f"{session}.jsonl"
    shutil.copy(FIXTURES / "goodnight" / ACME / f"{session}-part1.jsonl", path)
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, "watch", "--debounce", "0.2"],
        env=env_for(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = StderrLines(proc)
        first = lines.wait_for("dreamtui: ", timeout=120)
        assert "watching" in first, first
        assert cycles(home) == []  # nothing happens until someone says good night (the end checks: one cycle)
        with path.open("ab") as fh:
            fh.write((FIXTURES / "goodnight" / ACME / f"{session}-part2.jsonl").read_bytes())
        wait_for(lambda: any(c["status"] == "completed" for c in cycles(home)), 30)
        proc.send_signal(signal.SIGTERM)
        lines.wait_for("stopped watching", timeout=30)
        proc.wait(timeout=120)
        assert proc.stdout is not None
        stdout = proc.stdout.read()  # a few lines: they fit in the pipe while the process exits
        stderr = lines.rest()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    rows = cycles(home)
    assert len(rows) == 1, stderr
    assert (rows[0]["chat_id"], rows[0]["trigger"], rows[0]["status"]) == (ACME, "goodnight", "completed")
    assert rows[0]["depth"] == "deep"
    assert proc.returncode == 0
    assert "good night said in -home-kim-acme" in stderr and "stopped watching" in stderr
    assert stdout.startswith(f"Dream cycle #1 for {ACME} on 2026-03-10 (goodnight): completed")


def test_schedule_times() -> None:

    from dreamtui.core.dream.daemon import next_run, parse_schedule

    assert parse_schedule("03:30") == (3, 30) and parse_schedule(" 23:05 ") == (23, 5)
    for bad in ("3", "24:00", "12:60", "noon", "1:2:3"):
        with pytest.raises(ConfigError, match="HH:MM"):
            parse_schedule(bad)
    now = datetime(2026, 3, 10, 22, 0, tzinfo=UTC)
    assert next_run(now, 23, 0) == datetime(2026, 3, 10, 23, 0, tzinfo=UTC)
    assert next_run(now, 22, 0) == datetime(2026, 3, 11, 22, 0, tzinfo=UTC)  # strictly after now
    assert next_run(now, 3, 30) == datetime(2026, 3, 11, 3, 30, tzinfo=UTC)


def test_a_missing_transcripts_folder_is_an_error_not_a_quiet_day(home: Path) -> None:
    shutil.rmtree(home / "transcripts")
    out = dreamtui(home, "dream")
    assert out.returncode == 2 and "transcripts folder" in out.stderr and "does not exist" in out.stderr
    assert cycles(home) == []


def test_the_extractor_flag_overrides_the_config(home: Path) -> None:
    install(home, "busy")
    out = dreamtui(home, "dream", "--json", "--extractor", "heuristic")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["stats"]["extractor"] == "heuristic"


def test_watch_stops_cleanly_on_ctrl_c(home: Path) -> None:
    """Ctrl-C stops watching at once; the process then exits cleanly.

    On a loaded machine most of this test's time is the interpreter's, not the watch's: importing the
    CLI's few hundred modules took 8-14 s here under load (and tearing them down after the last line
    2-3 s), while the watch stops within a second of the signal. So the stop has a tight bound and
    starting and exiting have the generous one every subprocess of this file has (120 s), and no wait
    is unbounded (a bare ``readline`` waited forever for a process that never printed).
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, "watch", "--schedule", "03:00"],
        env=env_for(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stderr = StderrLines(proc)
        first = stderr.wait_for("dreamtui: ", timeout=120)
        assert "dreaming daily at 03:00 UTC" in first, first
        proc.send_signal(signal.SIGINT)
        stderr.wait_for("stopped watching", timeout=30)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and "Traceback" not in stderr.rest()


def test_dream_on_a_terminal_shows_a_live_display_of_phases_with_counts(home: Path) -> None:
    import pty

    install(home, "busy")
    leader, follower = pty.openpty()
    try:
        env = {**env_for(home), "COLUMNS": "120", "TERM": "xterm-256color"}
        out = subprocess.run(
            [sys.executable, "-c", MAIN, "dream"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=120,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert out.returncode == 0
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "\x1b[" in screen  # a live display, redrawn in place
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)
    for title in ("Light sleep", "Deep sleep", "Branching", "REM", "Wake"):
        assert title in plain
    assert re.search(r"Branching\s.*2/2", plain)  # its count of branches
    assert out.stdout.startswith("Dream cycle #1")  # the waking message on stdout, untouched


@pytest.mark.usefixtures("git_home")
@pytest.mark.parametrize("project", ["..", ".", "", "acme/", "ABS"])
def test_dream_project_that_is_a_path_is_refused_and_records_nothing(
    config: Config, ledger: Ledger, project: str
) -> None:

    write_records(config.transcripts / "acme", LESSON_TURNS)
    if project == "ABS":
        project = str(config.transcripts / "acme")
    with pytest.raises(ConfigError, match="no project"):
        run_cycle(config, ledger, project=project, date="2026-03-10")
    assert ledger.query("SELECT COUNT(*) AS n FROM dream_cycles")[0]["n"] == 0


@pytest.mark.usefixtures("git_home")
def test_dream_with_a_command_extractor_that_cannot_start_records_nothing(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:
    write_records(config.transcripts / "acme", LESSON_TURNS)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'extractor = "command"\ncommand = "{tmp_path / "no-such-tool"} --json"\n')
    result = CliRunner().invoke(
        cli,
        [
            "--config",
            str(cfg),
            *folder_args(config),
            "dream",
        ],
    )
    assert result.exit_code == 2, result.output
    assert "extractor command not found" in result.output
    assert ledger.query("SELECT COUNT(*) AS n FROM dream_cycles")[0]["n"] == 0


@pytest.mark.usefixtures("git_home")
def test_dream_over_a_transcripts_path_that_is_a_file_says_so(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:

    from dreamtui.core.dream.run import run_cycle
    from dreamtui.core.errors import TranscriptError

    a_file = tmp_path / "projects.txt"
    a_file.write_text("not a folder\n")
    with pytest.raises(TranscriptError, match="is not a folder"):
        run_cycle(config.changed(transcripts=a_file), ledger, date="2026-03-10")
    with pytest.raises(TranscriptError, match="does not exist"):
        run_cycle(config.changed(transcripts=tmp_path / "missing"), ledger, date="2026-03-10")


@pytest.mark.usefixtures("git_home")
def test_project_names_with_escape_codes_are_shown_escaped(config: Config) -> None:
    project = "-home-\x1b]0;PWNED\x07\x1b[31mred"
    path = write_records(config.transcripts / project, LESSON_TURNS)
    base = [
        *folder_args(config),
    ]
    runner = CliRunner()
    outputs = []
    for args in (
        ["dream"],
        ["dream"],
        ["dream", "--project", project],
        ["verify", str(path), "never edit the generated files directly; always change the template"],
    ):
        result = runner.invoke(cli, [*base, *args])
        outputs.append(result.output)
    text = "".join(outputs)
    assert "Nothing new in" in text and "reading" in text and "verified" in text
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b]0;PWNED\\x07" in text


@pytest.mark.usefixtures("git_home")
def test_cycle_retried_twice_keeps_what_the_first_attempt_extracted(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:

    from dreamtui.core.dream.run import run_cycle

    write_records(config.transcripts / "-home-kim-acme", LESSON_TURNS)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the memory repository should be\n")
    broken = config.changed(memory=blocked)
    for _ in range(2):  # both attempts fail in REM; only the first had anything to extract
        with pytest.raises(CycleFailed, match="REM"):
            run_cycle(broken, ledger, date="2026-03-10")
    record = run_cycle(config, ledger, date="2026-03-10")
    assert record.status == "completed" and record.depth == "deep"
    assert record.stats.attempt == 3
    assert record.stats.kept >= 1 and record.stats.surfaced >= record.stats.kept
    assert record.stats.review_path and Path(record.stats.review_path).is_file()
    kept = ledger.query("SELECT COUNT(*) AS n FROM candidates WHERE status = 'pending'")[0]["n"]
    assert record.stats.kept == kept


HOLD = FIXTURES / "hold_extractor.py"
_GATES: dict[Path, IO[bytes]] = {}


def release(hold: Path) -> None:
    """Let the held extractions go on (close the gate's exclusive lock; again: nothing)."""
    gate = _GATES.pop(hold, None)
    if gate is not None:
        gate.close()


def held_dream(home: Path) -> tuple[subprocess.Popen[str], StderrLines, Path]:
    """``dreamtui dream`` in a session of its own (as a terminal runs it), its extractions held in
    Branching until the test calls :func:`release`; returns once they have started."""
    install(home, "busy")
    (home / "config.toml").write_text(
        f'extractor = "command"\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(HOLD))}]\n'
    )
    hold = home / "hold"
    hold.mkdir()
    gate = (hold / "gate").open("wb")
    fcntl.flock(gate, fcntl.LOCK_EX)  # the extractions wait on it until release(hold)
    _GATES[hold] = gate
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, "dream"],
        env={**env_for(home), "HOLD_DIR": str(hold)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert wait_for(lambda: len(list(hold.glob("started-*"))) == 2, timeout=120), (
        "the extractions never started"
    )
    return proc, StderrLines(proc), hold


def test_ctrl_c_during_a_dream_says_the_cycle_stopped_and_what_runs_next_time(home: Path) -> None:
    """Ctrl-C printed only ``Aborted!``, after waiting out the running extractions with no word; now it
    says at once that the cycle stops at its next safe point, then which cycle stopped where and what
    the next ``dreamtui dream`` runs; that dream finishes the day's cycle."""
    proc, stderr, hold = held_dream(home)
    try:
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground group
        said = stderr.wait_for("Ctrl-C", timeout=30)
        assert (
            "stopping the dream cycle at its next safe point" in said and "Ctrl-C again stops at once" in said
        )
        release(hold)
        assert proc.wait(timeout=120) == 130
    finally:
        release(hold)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    rest = stderr.rest()
    assert proc.stdout is not None and proc.stdout.read() == "" and "Aborted!" not in rest
    assert (
        "dreamtui: dream cycle #1 stopped (Ctrl-C) in REM and recorded as failed; the next `dreamtui dream` "
        "runs the full dream cycle of 2026-03-10 again, finishing it (what it already extracted is kept)"
    ) in rest, rest
    [row] = cycles(home)
    assert (row["status"], row["error_message"]) == ("failed", "REM: stopped by Ctrl-C")
    again = dreamtui(home, "dream")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("Dream cycle #1 for every project on 2026-03-10 (manual): completed")


def test_ctrl_c_twice_stops_a_dream_at_once(home: Path) -> None:
    """The second Ctrl-C does not wait for the running extractions: the process ends at once, says so,
    and the next dream marks the cycle failed (interrupted) and runs it again."""
    proc, stderr, hold = held_dream(home)
    try:
        os.killpg(proc.pid, signal.SIGINT)
        stderr.wait_for("Ctrl-C again stops at once", timeout=30)
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=60) == 130  # the extractions still hold: it did not wait for them
    finally:
        release(hold)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (
        "stopped at once; the next `dreamtui dream` marks the cycle failed and runs it again" in stderr.rest()
    )
    assert [r["status"] for r in cycles(home)] == ["running"]
    again = dreamtui(home, "dream")
    assert again.returncode == 0, again.stderr
    assert "Interrupted: cycle #1 had been killed while running; marked failed." in again.stdout


def test_watch_says_only_what_it_does_when_the_day_is_already_dreamed(home: Path) -> None:
    """A good night after the day's full cycle printed "good night said in P: dreaming" and then
    refused (already dreamed today); now it says the one thing it does: not dreaming, and why."""
    session = "44444444-4444-4444-8444-444444444444"
    folder = home / "transcripts" / ACME
    folder.mkdir(parents=True)
    path = folder / f"{session}.jsonl"
    shutil.copy(FIXTURES / "goodnight" / ACME / f"{session}-part1.jsonl", path)
    os.utime(path, (WRITTEN, WRITTEN))
    assert dreamtui(home, "dream").returncode == 0  # the day's full cycle of every project
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, "watch", "--debounce", "0.2"],
        env=env_for(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = StderrLines(proc)
        lines.wait_for("watching", timeout=120)
        with path.open("ab") as fh:
            fh.write((FIXTURES / "goodnight" / ACME / f"{session}-part2.jsonl").read_bytes())
        said = lines.wait_for("good night said in", timeout=60)
        proc.send_signal(signal.SIGTERM)
        lines.wait_for("stopped watching", timeout=30)
        proc.wait(timeout=120)
        stderr = lines.rest()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert said.strip() == (
        f"dreamtui: good night said in {ACME}: not dreaming, already dreamed {ACME} on 2026-03-10 "
        "(cycle #1, every project); one cycle per project per date"
    ), stderr
    assert ": dreaming" not in stderr
    assert [r["status"] for r in cycles(home)] == ["completed"]
