"""Find transcript files and tell main sessions, sub-agents and compaction helpers apart.

Where an agent keeps its transcripts is its format's to say (:mod:`.formats`): these are the questions
the rest of dreamtui asks, each answered by the current format (Claude Code's layouts are described
in :mod:`.formats.claude_code`).
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.files import Skipped
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.protocol import FileKind, TranscriptFile


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every transcript under ``root`` (the transcripts folder), main files before their sub-agents.

    A missing or unreadable root gives ``[]``. Never raises and never opens anything but regular
    files: a folder that cannot be listed or searched, and a transcript path that is a FIFO, a
    device or a socket, are left out and reported in ``skipped`` (one :class:`Skipped` each), so one
    bad project never hides the others. Sessions of dreamtui's own extraction calls are left out.
    """
    return formats.current().discover(Path(root), skipped)


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """The files of one session: the main file first (when it exists), then its sub-agent and
    compaction files."""
    return formats.current().session_files(Path(root), project, session)


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A :class:`TranscriptFile` for one path (``head``: the file's first bytes, when already read)."""
    return formats.current().describe(path if isinstance(path, Path) else Path(path), head)


def kind_of(path: Path) -> FileKind:
    """``main``, ``subagent`` or ``compact`` by the file name."""
    return formats.current().kind_of(path if isinstance(path, Path) else Path(path))


def project_of(path: Path) -> str:
    """The project folder name a transcript belongs to (in every layout)."""
    return formats.current().project_of(Path(path))


def session_of(path: Path) -> str:
    """The session a transcript belongs to."""
    return formats.current().session_of(Path(path))
