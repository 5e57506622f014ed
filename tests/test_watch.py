"""Watching the transcripts folder: real watchdog events, coalescing, goodnight, rescan, polling."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.waiting import wait_for

from dreamtui.cli.main import cli
from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import LINK_REASON
from dreamtui.core.ingest.watch import Watcher

PROJECT = "-home-kim-acme"
SESSION = "55555555-5555-4555-8555-555555555555"


def record(kind: str, text: str) -> bytes:
    """One transcript line: a person's prompt, the assistant's prose, or tool output."""
    base = {
        "sessionId": SESSION,
        "uuid": f"u-{time.monotonic_ns()}",
        "timestamp": "2026-03-10T22:00:00Z",
        "isSidechain": False,
    }
    if kind == "person":
        base.update(type="user", message={"role": "user", "content": text})
    elif kind == "assistant":
        base.update(
            type="assistant",
            message={
                "id": f"m{time.monotonic_ns()}",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": text}],
            },
        )
    else:
        base.update(
            type="user",
            toolUseResult={"stdout": text},
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": text}],
            },
        )
    return (json.dumps(base, ensure_ascii=False) + "\n").encode()


class Events:
    """Collects watcher callbacks from its thread."""

    def __init__(self) -> None:
        self.changes: list[list[Path]] = []
        self.goodnights: list[str] = []
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()

    def change(self, paths: list[Path]) -> None:
        with self.lock:
            self.changes.append(paths)

    def goodnight(self, project: str) -> None:
        with self.lock:
            self.goodnights.append(project)

    def error(self, exc: BaseException) -> None:
        self.errors.append(exc)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    folder = tmp_path / "projects" / PROJECT
    folder.mkdir(parents=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_bytes(
        record("person", "Please fix the importer so it skips empty rows.") + record("person", "good night")
    )  # an old goodnight, there before watching
    return path


def watcher_for(root: Path, events: Events, **kw: object) -> Watcher:
    return Watcher(
        root,
        on_change=events.change,
        on_goodnight=events.goodnight,
        on_error=events.error,
        debounce=kw.pop("debounce", 0.2),
        **kw,
    )  # type: ignore[arg-type]


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def settled(root: Path, events: Events) -> None:
    """Wait until everything written before is handled, good nights included: the watcher handles one
    batch at a time (its changes, then its good nights), so once a change written now is delivered,
    every earlier batch is done."""
    marker = root / PROJECT / f"barrier-{time.monotonic_ns()}.jsonl"
    append(marker, record("assistant", "a line written after the rest"))
    assert wait_for(lambda: any(marker in paths for paths in events.changes), 10)


def test_an_append_is_reported_and_a_burst_is_coalesced(transcript: Path) -> None:
    events = Events()
    root = transcript.parent.parent
    debounce = 0.4
    stalls = 0  # gaps longer than the debounce (a loaded machine): each may start a delivery of its own
    with watcher_for(root, events, debounce=debounce):
        last = time.monotonic()
        for i in range(20):
            append(transcript, record("assistant", f"step {i} done"))
            now = time.monotonic()
            stalls += now - last > debounce * 0.9
            last = now
        assert wait_for(lambda: events.changes, 10)
        settled(root, events)  # a marker written after the burst is delivered: no late delivery is left
    burst = [paths for paths in events.changes if transcript in paths]
    assert all(paths == [transcript] for paths in burst)
    assert 1 <= len(burst) <= 2 + stalls  # twenty appends, one or two deliveries
    assert events.goodnights == []  # the goodnight already in the file is not new
    assert events.errors == []


def test_a_goodnight_in_new_content_names_the_project(transcript: Path) -> None:
    events = Events()
    with watcher_for(transcript.parent.parent, events):
        append(transcript, record("assistant", "Good night! Sleep well."))
        append(transcript, record("tool", "echo goodnight"))
        assert wait_for(lambda: events.changes, 10)
        settled(transcript.parent.parent, events)
        assert events.goodnights == []  # the assistant and tool output do not count
        append(transcript, record("person", "That's all for today, g\u2019night!"))
        assert wait_for(lambda: events.goodnights, 10)
    assert events.goodnights == [PROJECT]


def test_a_partial_line_waits_for_its_newline(transcript: Path) -> None:
    events = Events()
    line = record("person", "sweet dreams")
    with watcher_for(transcript.parent.parent, events):
        append(transcript, line[:-1])
        assert wait_for(lambda: events.changes, 10)
        settled(transcript.parent.parent, events)
        assert events.goodnights == []
        append(transcript, b"\n")
        assert wait_for(lambda: events.goodnights, 10)


def test_a_new_session_file_is_seen(transcript: Path) -> None:
    events = Events()
    with watcher_for(transcript.parent.parent, events):
        other = transcript.parent / "66666666-6666-4666-8666-666666666666.jsonl"
        other.write_bytes(record("person", "Nighty night"))
        assert wait_for(lambda: events.goodnights, 10)
    assert any(other in paths for paths in events.changes)


def test_polling_fallback(transcript: Path) -> None:
    events = Events()
    with watcher_for(transcript.parent.parent, events, poll=True, poll_interval=0.2):
        append(transcript, record("person", "goodnight"))
        assert wait_for(lambda: events.goodnights, 10)
    assert events.goodnights == [PROJECT]


def test_the_rescan_catches_what_events_missed(transcript: Path) -> None:
    events = Events()
    # a polling observer that never polls within the test: only the rescan can see the change
    with watcher_for(transcript.parent.parent, events, poll=True, poll_interval=3600, rescan_seconds=0.3):
        append(transcript, record("person", "sleep well"))
        assert wait_for(lambda: events.goodnights, 10)
    assert events.changes and events.changes[0] == [transcript]


def test_a_failing_callback_does_not_stop_watching(transcript: Path) -> None:
    events = Events()
    calls: list[int] = []

    def boom(paths: list[Path]) -> None:
        calls.append(1)
        raise RuntimeError("display went away")

    with Watcher(
        transcript.parent.parent,
        on_change=boom,
        on_goodnight=events.goodnight,
        on_error=events.error,
        debounce=0.1,
    ):
        append(transcript, record("assistant", "first"))
        assert wait_for(lambda: calls, 10)  # delivered: what comes next is a batch of its own
        append(transcript, record("assistant", "second"))
        assert wait_for(lambda: len(calls) >= 2, 10)
    assert len(events.errors) >= 2


def test_watching_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="not a folder"):
        Watcher(tmp_path / "nope").start()


def test_stop_is_prompt_and_idempotent(transcript: Path) -> None:
    w = Watcher(transcript.parent.parent, debounce=0.1).start()
    assert w.running
    t = time.monotonic()
    w.stop()
    w.stop()
    assert not w.running
    assert time.monotonic() - t < 3


def test_a_goodnight_in_a_file_nested_deeper_than_a_project_is_not_a_project(transcript: Path) -> None:
    """``<root>/<project>/notes/x.jsonl`` is no session the cycle dreams: its good night starts nothing."""
    events = Events()
    nested = transcript.parent / "notes" / f"{SESSION}.jsonl"
    nested.parent.mkdir()
    nested.write_bytes(b"")
    with watcher_for(transcript.parent.parent, events):
        append(nested, record("person", "good night"))
        assert wait_for(lambda: any(nested in c for c in events.changes), 10)
        append(transcript, record("person", "good night, see you tomorrow"))
        assert wait_for(lambda: events.goodnights, 10)
        settled(transcript.parent.parent, events)
    assert events.goodnights == [PROJECT]


@pytest.mark.usefixtures("git_home")
def test_watch_on_a_missing_folder_says_only_why(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "--transcripts",
            str(tmp_path / "nope"),
            "--memory",
            str(tmp_path / "m"),
            "--state",
            str(tmp_path / "s"),
            "watch",
            "--poll",
        ],
    )
    assert result.exit_code == 2
    assert "cannot watch" in result.output and "stopped watching" not in result.output


@pytest.mark.parametrize("poll", [False, True], ids=["events", "polling"])
def test_a_symlink_below_the_watched_folder_is_named_once_and_no_change_is_heard_through_it(
    transcript: Path, poll: bool
) -> None:
    """Agents write their sessions as files in their own folders: a session file or a folder below the
    watched folder that is a symlink (here to a session outside it, one there before watching and one
    made while watching, and a loop back up to the root) is named once by the one line every format
    gives, and a good night written through it is never heard nor reported as a change."""
    root = transcript.parent.parent
    outside = root.parent / "outside" / "proj"
    outside.mkdir(parents=True)
    elsewhere = outside / "77777777-7777-4777-8777-777777777777.jsonl"
    elsewhere.write_bytes(record("assistant", "a session kept outside"))
    links = [transcript.parent / "linked.jsonl", root / "-linked-project", root / "loop"]
    links[0].symlink_to(elsewhere)
    links[1].symlink_to(outside, target_is_directory=True)
    links[2].symlink_to(root, target_is_directory=True)
    late = transcript.parent / "late.jsonl"
    events = Events()
    notices: list[str] = []
    with watcher_for(
        root, events, on_skip=notices.append, poll=poll, poll_interval=0.2, rescan_seconds=0.3
    ) as watcher:
        late.symlink_to(elsewhere)
        append(elsewhere, record("person", "good night"))
        rescans = watcher.rescans
        assert wait_for(lambda: watcher.rescans >= rescans + 2, 10)  # walked since the link was made
        settled(root, events)
    heard = [p for paths in events.changes for p in paths]
    assert not [p for p in heard if p in (*links, late) or p.is_relative_to(links[1])], heard
    assert events.goodnights == []
    for link in (*links, late):
        assert [n for n in notices if str(link) in n] == [f"skipped {link}: {LINK_REASON}"], notices
    assert events.errors == []


@pytest.mark.parametrize("poll", [False, True], ids=["events", "polling"])
def test_a_watched_folder_that_is_a_symlink_is_heard_by_the_path_as_given(
    transcript: Path, poll: bool
) -> None:
    """A watched folder itself may be a link (into a dotfiles folder): what is written in the folder it
    points at is heard, named below the link as the digest names it."""
    real = transcript.parent.parent
    root = real.parent / "linked-projects"
    root.symlink_to(real, target_is_directory=True)
    shown = root / PROJECT / transcript.name
    events = Events()
    top = real / "88888888-8888-4888-8888-888888888888.jsonl"  # directly in the folder linked to
    with watcher_for(root, events, poll=poll, poll_interval=0.2, rescan_seconds=3600):  # heard, not found
        append(transcript, record("person", "good night, see you tomorrow"))
        assert wait_for(lambda: events.goodnights, 10)
        append(top, record("assistant", "a session directly in the watched folder"))
        assert wait_for(lambda: any(root / top.name in paths for paths in events.changes), 10)
    assert events.goodnights == [PROJECT]
    assert any(shown in paths for paths in events.changes), events.changes
