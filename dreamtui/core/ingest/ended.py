"""Sessions that have ended: the records the Claude Code plugin's ``SessionEnd`` hook leaves.

The hook (``hooks/dreamtui_hook.py`` in the repository, a plain script that never imports dreamtui)
writes one small JSON file per ended session, ``<state>/ended/<session id>.json``, holding what Claude
Code told it (``session_id``, ``transcript_path``, ``cwd``, ``reason``) and ``ended_at`` (Unix
seconds). Nothing else is done at the end of a session: no digest, no model, no ledger, no lock.

Here they are read: light sleep does not defer an ended session as "still being written" (it has been
quiet since it ended, however recently), ``dreamtui watch`` dreams the project of each new record at
once, and ``dreamtui status`` counts the ones not dreamed yet. A cycle that dreamed (or found nothing
new in) a session removes its record (:func:`forget`). A record no configuration claims is removed
after :data:`KEEP_SECONDS`.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from dreamtui.core.config import Config, default_state
from dreamtui.core.files import read_regular

FOLDER = "ended"
"""The records' folder inside a state folder."""
RECORD_LIMIT = 64 * 1024
"""A record is a few hundred bytes; a larger file there is no record."""
KEEP_SECONDS = 30 * 86400.0
"""A record that no cycle has claimed in this long is removed (its transcript is another folder's)."""
STILL_WRITING_SLACK = 60.0
"""A transcript written more than this after its session's end was resumed: it may still grow."""


@dataclass(frozen=True, slots=True)
class Ended:
    """One ended session, as the hook recorded it."""

    session: str
    transcript: str
    cwd: str
    reason: str
    ended_at: float
    path: Path
    """The record file."""

    def still_ended(self, mtime: float) -> bool:
        """The transcript (last written at ``mtime``) has not been written since the session ended."""
        return mtime <= self.ended_at + STILL_WRITING_SLACK


def folders(config: Config) -> list[Path]:
    """Where records are read: the configuration's state folder, and the default one the hook writes
    to when the configuration names another (``--state``, other folders)."""
    found = [Path(config.state) / FOLDER]
    default = default_state() / FOLDER
    if default not in found:
        found.append(default)
    return found


def read_all(config: Config, now: float | None = None) -> list[Ended]:
    """Every readable record, oldest first. Never raises: a damaged record is skipped. A file written more
    than :data:`KEEP_SECONDS` ago (a record nobody claimed, or a damaged one) is removed."""
    now = time.time() if now is None else now
    found: dict[str, Ended] = {}
    for folder in folders(config):
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
        except OSError:
            continue
        for name in names:
            path = folder / name
            if _stale(path, now):
                continue
            record = _read(path)
            if record is None:
                continue
            known = found.get(record.session)
            if known is None or known.ended_at < record.ended_at:
                found[record.session] = record
    return sorted(found.values(), key=lambda r: r.ended_at)


def by_session(config: Config) -> dict[str, Ended]:
    """The records keyed by session id."""
    return {r.session: r for r in read_all(config)}


def forget(records: list[Ended]) -> None:
    """Remove these records (their sessions are dreamed); a record rewritten since (the session was
    resumed and ended again) is kept."""
    for record in records:
        again = _read(record.path)
        if again is not None and again.ended_at > record.ended_at:
            continue
        try:
            record.path.unlink()
        except OSError:
            pass


def _read(path: Path) -> Ended | None:
    try:
        data = read_regular(path, RECORD_LIMIT)
    except OSError:
        return None
    if data is None:
        return None
    try:
        obj = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    text: dict[str, str] = {}
    for key in ("session_id", "transcript_path", "cwd", "reason"):
        value = obj.get(key)
        text[key] = value if isinstance(value, str) else ""
    ended_at = obj.get("ended_at")
    session = text["session_id"] or Path(text["transcript_path"]).stem
    if not isinstance(ended_at, int | float) or isinstance(ended_at, bool) or not session:
        return None
    return Ended(session, text["transcript_path"], text["cwd"], text["reason"], float(ended_at), path)


def _stale(path: Path, now: float) -> bool:
    """Remove a record (or a damaged file) written more than :data:`KEEP_SECONDS` ago; whether it was."""
    try:
        if now - path.stat().st_mtime <= KEEP_SECONDS:
            return False
        path.unlink()
    except OSError:
        pass
    return True
