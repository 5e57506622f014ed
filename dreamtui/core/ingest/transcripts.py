"""Find transcript files and tell main sessions, sub-agents and compaction helpers apart.

Where an agent keeps its transcripts is its format's to say (:mod:`.formats`): these are the questions
the rest of dreamtui asks, each answered by the format of the file in question
(:func:`.formats.format_for`), or for a folder by the format that reads it (Claude Code's, unless
another is named). Every agent's folders at once: :func:`dreamtui.core.ingest.sources.discover_all`.
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.files import Skipped
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.protocol import FileKind, TranscriptFile, TranscriptFormat


def discover(
    root: Path, skipped: list[Skipped] | None = None, fmt: TranscriptFormat | None = None
) -> list[TranscriptFile]:
    """Every transcript of format ``fmt`` (Claude Code's when None) under ``root``, main files before
    their sub-agents.

    A missing or unreadable root gives ``[]``. Never raises and never opens anything but regular
    files: a folder that cannot be listed or searched, and a transcript path that is a FIFO, a
    device or a socket, are left out and reported in ``skipped`` (one :class:`Skipped` each), so one
    bad project never hides the others. Sessions of dreamtui's own extraction calls are left out.
    """
    return (fmt or formats.named(formats.FALLBACK)).discover(Path(root), skipped)


def session_files(root: Path, project: str, session: str, fmt: TranscriptFormat | None = None) -> list[Path]:
    """The files of one session of format ``fmt`` (Claude Code's when None) under ``root``: the main
    file first (when it exists), then its sub-agent and compaction files."""
    return (fmt or formats.named(formats.FALLBACK)).session_files(Path(root), project, session)


def session_files_of(path: Path) -> list[Path]:
    """The files of the session whose main file is ``path`` (``path`` first), by its format."""
    path = Path(path)
    found = formats.format_for(path).with_session(path)
    return [path, *[p for p in found if p != path]]


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A :class:`TranscriptFile` for one path (``head``: the file's first bytes, when already read)."""
    path = path if isinstance(path, Path) else Path(path)
    return formats.format_for(path).describe(path, head)


def kind_of(path: Path) -> FileKind:
    """``main``, ``subagent`` or ``compact`` by the file name."""
    path = path if isinstance(path, Path) else Path(path)
    return formats.format_for(path).kind_of(path)


def project_of(path: Path) -> str:
    """The transcript folder a transcript belongs to (in every layout)."""
    return formats.format_for(path).project_of(Path(path))


def session_of(path: Path) -> str:
    """The session a transcript belongs to."""
    return formats.format_for(path).session_of(Path(path))


def agent_of(path: Path | str) -> str:
    """The agent that wrote the transcript at ``path`` (an address), as a person names it."""
    return formats.format_for(path).agent


def label_of(path: Path | str) -> str:
    """The agent that wrote the transcript at ``path`` in one short word (``Claude``, ``Codex``)."""
    return formats.format_for(path).label


def agents() -> list[tuple[str, str]]:
    """Every agent dreamtui reads, as ``(agent, label)`` in the registry's order (``Claude Code``,
    ``Claude``)."""
    return list(dict.fromkeys((fmt.agent, fmt.label) for fmt in formats.FORMATS.values()))
