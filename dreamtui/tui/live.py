"""The live tail: what was appended to transcripts since they were last read, as lines for the queue's
live panel (read in the app's tail worker, never on the UI thread); and the ledger follower, which
notices what another process decided."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from rich.text import Text

from dreamtui.services import Workspace
from dreamtui.services.evidence import raw_record
from dreamtui.services.presence import AppPresence
from dreamtui.services.transcripts import read_appended
from dreamtui.tui.widgets.evidence import ROLE_STYLE, local_time
from dreamtui.tui.widgets.literal import literal
from dreamtui.tui.widgets.queue_table import short_project

READ_MAX_BYTES = 4 * 1024 * 1024
"""At most this much of one file is read per change (a huge append is shown over several)."""


class LiveTail:
    """Offsets of the transcripts read so far; :meth:`read_new_lines` returns what came after them.

    One reader at a time (a lock), so each line is shown once when changes arrive close together.
    """

    def __init__(self, root: Path, project_name: Callable[[str], str]) -> None:
        self.root = root
        self.project_name = project_name
        self._offsets: dict[Path, int] = {}
        self._lock = threading.Lock()

    def start_at(self, path: Path, offset: int) -> None:
        """Show only what is appended to ``path`` after ``offset`` (what the watcher found at start)."""
        with self._lock:
            self._offsets[path] = offset

    def read(self, paths: list[Path]) -> list[Text]:
        """The new lines of every path in ``paths``, in order."""
        with self._lock:
            return [line for path in paths for line in self._read(path)]

    def read_new_lines(self, path: Path) -> list[Text]:
        """The complete lines appended to ``path`` since it was last read here, one Text each."""
        with self._lock:
            return self._read(path)

    def _read(self, path: Path) -> list[Text]:
        read = read_appended(path, self._offsets.get(path, 0), READ_MAX_BYTES)  # a FIFO is refused at once
        if read is None:
            return []
        start, data = read.start, read.data
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self._offsets[path] = start + end + 1
        project = path.parent.name if path.parent != self.root else ""
        out: list[Text] = []
        for raw in data[: end + 1].splitlines():
            rec = raw_record(0, raw, path)
            for role, text in rec.texts:
                out.append(
                    Text.assemble(
                        (local_time(rec.timestamp) + " " if rec.timestamp else "", "dim"),
                        (short_project(self.project_name(project), 16) + " " if project else "", "dim"),
                        (f"{role:<9} ", ROLE_STYLE.get(role, "")),
                        literal(text, 200, one_line=True),
                    )
                )
        return out


class LedgerFollower:
    """A thread that notices, about once every ``interval`` seconds, what another process changed in the
    ledger (a second app's decisions, ``dreamtui accept``, a CLI dream) and which other apps are open
    on it; it calls ``changed()`` and ``apps(pids)`` (from its thread) when either changes. It asks
    SQLite's ``data_version`` first (free) and reads the ledger's mark only when that moved."""

    def __init__(
        self,
        workspace: Workspace,
        presence: AppPresence,
        changed: Callable[[], None],
        apps: Callable[[list[int]], None],
        interval: float = 1.0,
    ) -> None:
        self.workspace, self.presence = workspace, presence
        self.changed, self.apps = changed, apps
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ledger follower", daemon=True)

    def start(self) -> None:
        self.presence.start()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.presence.stop()

    def _run(self) -> None:
        version: int | None = None
        mark: tuple[object, ...] | None = None
        others: list[int] = []
        while True:
            try:
                now = self.workspace.ledger_version()
                if now != version:
                    version, seen = now, self.workspace.ledger_mark()
                    if mark is not None and seen != mark:
                        self.changed()
                    mark = seen
                found = self.presence.others()
                if found != others:
                    others = found
                    self.apps(found)
            except Exception:  # noqa: BLE001 - following is a help: a failed look waits for the next
                pass
            if self._stop.wait(self.interval):
                return
