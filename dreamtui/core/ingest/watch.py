"""Watch the transcripts folder: coalesced change events, goodnight detection, a rescan safety net.

A watchdog observer (inotify where available; ``PollingObserver`` with ``poll=True`` for file systems
without it) watches the transcripts root recursively. Events are coalesced: a burst of appends is one
``on_change(paths)`` call once the folder has been still for ``debounce`` seconds (or after at most
``max_delay`` seconds of continuous writing). Events can be lost, so every ``rescan_seconds`` the folder
is walked and any file whose size or mtime changed is reported as if an event had come.

After each ``on_change``, the new complete lines of the changed main-session files are scanned for a
person saying good night; ``on_goodnight(project)`` is called once per project that did. Content that
was already in a file when the watcher started is not "new": an old goodnight does not start a cycle.

Callbacks run on the watcher's own thread. A Textual app forwards them with ``post_message``; the CLI
puts them on a queue. The watcher never writes anything.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import orjson
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from dreamtui.core.errors import TranscriptError
from dreamtui.core.ingest.goodnight import is_goodnight
from dreamtui.core.ingest.records import pieces
from dreamtui.core.ingest.transcripts import kind_of, project_of

DEFAULT_DEBOUNCE = 1.0
MAX_DELAY_FACTOR = 5.0
_GOODNIGHT_HINTS = (b"night", b"sleep well", b"sweet dreams")
_TAIL_PROBE = 64 * 1024

ChangeCallback = Callable[[list[Path]], None]
GoodnightCallback = Callable[[str], None]
ErrorCallback = Callable[[BaseException], None]


class _Handler(FileSystemEventHandler):
    """Forwards every ``.jsonl`` path an event names to the watcher."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        found = [Path(os.fsdecode(p)) for p in paths if p and os.fsdecode(p).endswith(".jsonl")]
        if found:
            self.watcher.notify(found)
        elif event.is_directory and event.event_type in ("created", "moved"):
            self.watcher.request_rescan()


class Watcher:
    """Watch ``root`` for transcript changes; see the module docstring.

    ``start()`` begins watching (raises :class:`TranscriptError` when ``root`` is not a folder);
    ``stop()`` ends it and joins the threads. Usable as a context manager.
    """

    def __init__(self, root: Path, *, on_change: ChangeCallback | None = None,
                 on_goodnight: GoodnightCallback | None = None, on_error: ErrorCallback | None = None,
                 poll: bool = False, debounce: float = DEFAULT_DEBOUNCE, rescan_seconds: float = 60.0,
                 poll_interval: float = 1.0) -> None:
        self.root = Path(root)
        self.on_change = on_change
        self.on_goodnight = on_goodnight
        self.on_error = on_error
        self.poll = poll
        self.debounce = max(0.0, debounce)
        self.max_delay = max(self.debounce * MAX_DELAY_FACTOR, self.debounce)
        self.rescan_seconds = max(0.1, rescan_seconds)
        self.poll_interval = poll_interval
        self._cond = threading.Condition()
        self._pending: set[Path] = set()
        self._first_event = 0.0
        self._last_event = 0.0
        self._rescan_requested = False
        self._stopping = False
        self._snapshot: dict[Path, tuple[int, int]] = {}
        self._scanned: dict[Path, int] = {}
        self._observer: Observer | PollingObserver | None = None
        self._thread: threading.Thread | None = None
        self.batches = 0

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """The watcher has been started and not stopped."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> Watcher:
        """Prime the offsets with what is already there, start the observer and the worker thread."""
        if self.running:
            return self
        if not self.root.is_dir():
            raise TranscriptError(f"cannot watch {self.root}: not a folder")
        self._stopping = False
        self._snapshot = self._walk()
        self._scanned = {p: _last_line_end(p, size) for p, (size, _) in self._snapshot.items()}
        observer = PollingObserver(timeout=self.poll_interval) if self.poll else Observer()
        observer.schedule(_Handler(self), str(self.root), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._thread = threading.Thread(target=self._run, name="dreamtui-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching; pending changes are dropped. Safe to call twice."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout)
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- input -------------------------------------------------------------------------------

    def notify(self, paths: Iterable[Path]) -> None:
        """Record changed paths (called by the observer; callable by anyone)."""
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first_event = now
            self._pending.update(Path(p) for p in paths)
            self._last_event = now
            self._cond.notify_all()

    def request_rescan(self) -> None:
        """Walk the folder at the next opportunity (a new folder appeared, or a caller asks)."""
        with self._cond:
            self._rescan_requested = True
            self._cond.notify_all()

    # -- the worker thread -------------------------------------------------------------------

    def _run(self) -> None:
        next_rescan = time.monotonic() + self.rescan_seconds
        while True:
            with self._cond:
                if self._stopping:
                    return
                now = time.monotonic()
                waits = [next_rescan - now]
                if self._pending:
                    waits.append(min(self._last_event + self.debounce, self._first_event + self.max_delay) - now)
                if not self._rescan_requested and min(waits) > 0:
                    self._cond.wait(min(waits))
                if self._stopping:
                    return
                now = time.monotonic()
                rescan = self._rescan_requested or now >= next_rescan
                self._rescan_requested = False
                batch: list[Path] = []
                if self._pending and (now - self._last_event >= self.debounce
                                      or now - self._first_event >= self.max_delay):
                    batch = sorted(self._pending)
                    self._pending.clear()
            try:
                if rescan:
                    next_rescan = time.monotonic() + self.rescan_seconds
                    batch = sorted(set(batch) | set(self._changed_since_snapshot()))
                if batch:
                    self._deliver(batch)
            except Exception as exc:  # a callback failed: report it, keep watching
                if self.on_error is not None:
                    self.on_error(exc)

    def _deliver(self, paths: list[Path]) -> None:
        for p in paths:
            self._snapshot[p] = _stat(p) or (0, 0)
        self.batches += 1
        if self.on_change is not None:
            self.on_change(paths)
        projects: list[str] = []
        for p in paths:
            if kind_of(p) != "main" or not self._is_session_file(p):
                continue
            if self._scan_for_goodnight(p):
                project = project_of(p)
                if project not in projects:
                    projects.append(project)
        if self.on_goodnight is not None:
            for project in projects:
                self.on_goodnight(project)

    # -- helpers -----------------------------------------------------------------------------

    def _is_session_file(self, path: Path) -> bool:
        """A main session file where the dream cycle looks for one: ``<root>/<project>/<session>.jsonl``
        (or directly in the root); files nested deeper belong to no project the cycle knows."""
        parent = path.parent
        return parent == self.root or parent.parent == self.root

    def _walk(self) -> dict[Path, tuple[int, int]]:
        found: dict[Path, tuple[int, int]] = {}
        for dirpath, _dirs, files in os.walk(self.root):
            for name in files:
                if name.endswith(".jsonl"):
                    p = Path(dirpath) / name
                    st = _stat(p)
                    if st is not None:
                        found[p] = st
        return found

    def _changed_since_snapshot(self) -> list[Path]:
        current = self._walk()
        changed = [p for p, st in current.items() if self._snapshot.get(p) != st]
        self._snapshot = current
        return changed

    def _scan_for_goodnight(self, path: Path) -> bool:
        """Read the new complete lines of ``path`` and say whether a person said good night."""
        start = self._scanned.get(path, 0)
        try:
            with path.open("rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size < start:  # truncated or replaced: read it again from the start
                    start = 0
                fh.seek(start)
                data = fh.read(size - start)
        except OSError:
            return False
        end = data.rfind(b"\n")
        if end < 0:
            return False
        self._scanned[path] = start + end + 1
        found = False
        for raw in data[: end + 1].splitlines():
            lowered = raw.lower()
            if not any(hint in lowered for hint in _GOODNIGHT_HINTS):
                continue
            if _line_says_goodnight(raw):
                found = True
        return found


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def _last_line_end(path: Path, size: int) -> int:
    """The offset just after the last newline at or before ``size`` (a partial last line waits)."""
    if size <= 0:
        return 0
    try:
        with path.open("rb") as fh:
            pos = size
            while pos > 0:
                start = max(0, pos - _TAIL_PROBE)
                fh.seek(start)
                chunk = fh.read(pos - start)
                idx = chunk.rfind(b"\n")
                if idx >= 0:
                    return start + idx + 1
                pos = start
    except OSError:
        return size
    return 0


def _line_says_goodnight(raw: bytes) -> bool:
    """One raw JSONL line is a person's prompt that says good night (never tool output)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            obj = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            return False
    if not isinstance(obj, dict) or obj.get("isSidechain"):
        return False
    try:
        return any(p.role == "person" and is_goodnight(p.text) for p in pieces(obj))
    except Exception:  # an odd record never stops the watcher
        return False
