"""Transcript formats: the registry, and the format of a file looked up from the file itself.

A format is one module that implements :class:`~.protocol.TranscriptFormat` (its functions are the
protocol's methods). Adding one is one module beside these and one line in :data:`FORMATS`
(``docs/formats.md``, ``CONTRIBUTING.md`` "Trace 1"). Every format is a peer: several are read in one
dream, each from its own folders (:mod:`dreamtui.core.ingest.sources`), and every file is read by the
format that claims it (:func:`format_for`), never by a format "in use".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from dreamtui.core.ingest.formats import (
    aider,
    claude_code,
    codex,
    copilot,
    copilot_history,
    cursor,
    gemini,
    opencode,
)
from dreamtui.core.ingest.formats.protocol import MEMBER_MARK, TranscriptFile, TranscriptFormat, split_address

FORMATS: dict[str, TranscriptFormat] = {
    claude_code.name: claude_code,
    codex.name: codex,
    aider.name: aider,
    opencode.name: opencode,
    cursor.name: cursor,
    gemini.name: gemini,
    copilot.name: copilot,
    copilot_history.name: copilot_history,
}
"""Every format dreamtui reads, by name (a format's ``[formats.<name>]`` table in the config)."""
FALLBACK = claude_code.name
"""The format of a file no other format claims (Claude Code's ``*.jsonl``, the most general name)."""


def _asked() -> list[TranscriptFormat]:
    """The order formats are asked whether they claim a file: the specific ones first, the fallback last."""
    return [f for n, f in FORMATS.items() if n != FALLBACK] + [FORMATS[FALLBACK]]


def named(name: str) -> TranscriptFormat:
    """The format called ``name``; raises KeyError for a name no format has."""
    return FORMATS[name]


def claimed(path: Path | str) -> TranscriptFormat | None:
    """The format whose transcript ``path`` is (by name and folders: nothing is opened), None when
    no format claims it (a ``.meta.json`` beside a sub-agent, a stray file)."""
    text = os.fspath(path)
    if MEMBER_MARK in text:  # an address of one session of a source holding many: its source's path
        text = str(split_address(text)[0])
    return _claimed(text)


@lru_cache(maxsize=4096)
def _claimed(path: str) -> TranscriptFormat | None:
    p = Path(path)
    for fmt in _asked():
        if fmt.claims(p):
            return fmt
    return None


def source_of(path: Path | str) -> Path | None:
    """The transcript a changed file or folder that no format claims belongs to (a format's optional
    ``changed_source`` hook: OpenCode's older layout, whose new messages are files beside the session's
    own), else None. Asked by the watcher for each such path an event names; a hook looks at names
    first and is cheap for any other path."""
    for fmt in _asked():
        hook = getattr(fmt, "changed_source", None)
        if hook is not None:
            found = hook(Path(path))
            if found is not None:
                return Path(found)
    return None


def belongs(path: Path | str) -> bool:
    """Whether a file no format claims is one of a session's files all the same (a format's optional
    ``belongs`` hook: OpenCode's older layout's message and part files), by its name and folders alone
    (cheap, never opens it). The watcher's rescan keeps such a file's size and mtime as it does a
    transcript's, and a change of it is its session's (:func:`source_of`): a session whose own file
    stays as it is while it grows is seen by the rescan when an event for it was lost."""
    p = path if isinstance(path, Path) else Path(path)  # a Path made again is parsed again
    for fmt in FORMATS.values():
        hook: Callable[[Path], bool] | None = getattr(fmt, "belongs", None)
        if hook is not None and hook(p):
            return True
    return False


def format_for(path: Path | str) -> TranscriptFormat:
    """The format that reads ``path`` (an address: a path, or ``<path>#<member>``): the one that claims
    it, else Claude Code's."""
    return claimed(path) or FORMATS[FALLBACK]


def of_file(tf: TranscriptFile) -> TranscriptFormat:
    """The format a discovered file was found by (its ``format``), else the one that claims it."""
    return FORMATS.get(tf.format) or format_for(tf.path)
