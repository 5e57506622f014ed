"""What dreamtui needs to know about an agent's transcripts: the :class:`TranscriptFormat` protocol.

A transcript format is one module that answers every question below for one agent's transcripts
(:mod:`.claude_code` is the one there is); the rest of dreamtui asks through
:func:`dreamtui.core.ingest.formats.current` and never names a field of the records. Transcripts are
JSON lines, one record a line, appended to while the agent runs: reading only what was appended
(:mod:`dreamtui.core.ingest.tail`), decoding a line (``tail.decode_line``) and searching a quote in
the raw bytes (:mod:`dreamtui.core.gate.verify`) are the same for every format.

The questions:

- **where**: the default folder; the transcript files under a folder (:class:`TranscriptFile`: the
  project and session each belongs to, and whether it is the main session, a sub-agent or the
  compaction helper); the files of one session; the working directory a session ran in;
- **whose words**: a decoded record's text pieces with their provenance (:class:`Piece`), and the
  provenance of any string inside a record (what a verified quote is);
- **where a record is**: its id, time, working directory and whether a sub-agent wrote it
  (:class:`RecordRef`); whether it is a copy of another record;
- **tool calls** and the files they wrote (:class:`ToolCall`);
- **the raw view**: a record as the evidence window shows it (:class:`~dreamtui.core.models.RawRecord`);
- **the digest**: a :class:`LineDigester` that turns raw lines into turns (the format's own fast
  path; ``digest.py`` reads the files, counts and merges), and the byte test the tailer may skip a
  line by.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from dreamtui.core.files import Skipped
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Turn

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

FileKind = Literal["main", "subagent", "compact"]
"""A main session, a sub-agent's transcript, or the compaction helper's (no person's words)."""
PathKey = str | int
JsonPath = tuple[PathKey, ...]
"""Where a string lies inside a decoded record: the keys and list indexes leading to it."""

EXTRACTOR_WORKDIR = "dreamtui-extractor-cwd"
"""The working directory (under dreamtui's state folder) of the ``claude-code`` extractor's own
agent calls. They run with session persistence off, so they should leave no transcript; a format's
:meth:`TranscriptFormat.discover` leaves out any session run there: dreamtui never dreams its own
extraction calls."""


class TranscriptFile(msgspec.Struct, frozen=True):
    """One transcript file: which project and session it belongs to, and what it is.

    A frozen msgspec struct (equal, hashable and immutable as a frozen dataclass is): every digest
    makes one, in 0.1 µs where a frozen dataclass took 0.4."""

    path: Path
    project: str
    session: str
    kind: FileKind
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class Piece:
    """One string of a record: whose words (``role``), cleaned ``text``, ``kind`` and JSON ``path``.

    Kinds: person ``prompt``/``command``/``rejection``/``queued``/``interrupt``; assistant
    ``text``/``thinking``; tool ``tool_result``/``bash_output``; meta ``caveat``/``stdout``/
    ``notification``/``summary``/``compact_summary``/``parent``/``synthetic``/``system``/``meta``/
    ``context``.
    """

    role: Provenance
    text: str
    kind: str
    path: JsonPath


@dataclass(frozen=True, slots=True)
class RecordRef:
    """Where a record is, as a match or a tool call names it: its id, its time (ISO 8601), the
    working directory it was written in, and whether a sub-agent wrote it (a sidechain). A field
    the record lacks, or holds as anything but a string, is None."""

    uuid: str | None
    timestamp: str | None
    cwd: str | None
    sidechain: bool


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call in a record: the tool's ``name``, the file it wrote (``wrote``: an edit tool's
    target path, as given) and the shell command it ran (``command``), when it did."""

    name: str
    wrote: str | None = None
    command: str | None = None


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """One record of a transcript that is not append-only JSON lines (a JSON document rewritten as
    the session grows, a SQLite row, a markdown block), as a whole-file format reads it.

    ``locator`` is the record's place in its source, 1-based and stable while the source only grows
    (a message's index in a JSON document, a row's order in its session, a block's order in a
    markdown file): what a verified quote names as its line. ``key`` identifies the record across
    rewrites of the source (a message id, a row id; the locator when the source has none): what change
    detection compares, so a rewritten file yields only its new or changed records. ``raw`` is the
    record's bytes as stored (the message's JSON text, the row's data column, the block's text), the
    bytes a quote's byte prefilter searches; ``obj`` is the decoded record the format's
    :meth:`TranscriptFormat.pieces`, ``provenance``, ``ref``, ``tool_calls`` and ``render`` read."""

    locator: int
    key: str
    raw: bytes
    obj: dict[str, Any]


class LineDigester(Protocol):
    """Turns the raw lines of one transcript file into :class:`~dreamtui.core.models.Turn` s (made by
    :meth:`TranscriptFormat.digester`): the person's words and the assistant's prose, each kept once
    (the dedup state it was given), the stats it was given counted as it goes."""

    cwd: str
    """The session's working directory: the first one a kept record names ('' until then)."""

    def lines(
        self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool = False
    ) -> None:
        """Digest the lines ``raws`` (numbered ``numbers``, 1-based) into ``out``. ``ascii``: the caller
        found every line ASCII. A line that is not a record is counted in the stats and skipped."""

    def exact(self, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """Digest one line by decoding it in full (the reference :meth:`lines` is held to)."""


class TranscriptFormat(Protocol):
    """One agent's transcripts: where they are, whose words each string is, what a tool call wrote,
    how a record looks in the evidence window, and how its lines become turns. A module implements
    it (its functions are the methods); see the module docstring."""

    name: str
    """The format's name (``claude-code``): its key in ``formats.FORMATS``."""
    suffix: str
    """How a transcript file's name ends (``.jsonl``)."""
    tool_call_hint: bytes
    """Bytes every raw line holding a tool call holds (a line without them is never decoded to look)."""

    # -- where the transcripts are --------------------------------------------------------------

    def default_root(self) -> Path:
        """The folder the agent writes its transcripts into, when no other is given."""

    def discover(self, root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
        """Every transcript under ``root``, main files before their sub-agents; never raises. Folders
        and files that cannot be read are left out and reported in ``skipped``."""

    def describe(self, path: Path, head: bytes | None = None) -> TranscriptFile:
        """A :class:`TranscriptFile` for one path (``head``: the file's first bytes, when read)."""

    def session_files(self, root: Path, project: str, session: str) -> list[Path]:
        """The files of one session: the main file first (when it exists), then the others."""

    def kind_of(self, path: Path) -> FileKind:
        """What the file at ``path`` is, by its name."""

    def project_of(self, path: Path) -> str:
        """The project folder name a transcript belongs to."""

    def session_of(self, path: Path) -> str:
        """The session a transcript belongs to."""

    def is_main_file(self, root: Path, path: Path) -> bool:
        """Whether ``path`` is a main session file where the dream cycle looks for one under ``root``
        (what the watcher scans for a good night)."""

    def cwd_of(self, path: Path) -> str:
        """The working directory named in the first records of the transcript ``path`` ('' if none)."""

    def is_auto_dream(self, path: Path) -> bool:
        """Whether the transcript is the agent's own background memory consolidation ("auto dream"):
        what its tool calls write into the memory is filed as auto dream's, not auto memory's."""

    # -- records --------------------------------------------------------------------------------

    def pieces(self, obj: Any) -> list[Piece]:
        """The text pieces of one decoded record, in order, each with its provenance; never raises."""

    def provenance(
        self, obj: dict[str, Any], path: JsonPath, value: str, holds: Callable[[str], bool]
    ) -> Provenance:
        """Whose words the string ``value`` at ``path`` inside the record ``obj`` is, for a quote found
        in it; ``holds(text)`` says whether a part of the string holds the quote (a string whose start
        is the harness's and whose end is a person's asks it of the end)."""

    def ref(self, obj: dict[str, Any]) -> RecordRef:
        """Where the decoded record ``obj`` is (:class:`RecordRef`)."""

    def is_copy(self, obj: dict[str, Any]) -> bool:
        """Whether the record repeats another record's words (a quote found there is a copy)."""

    def tool_calls(self, obj: dict[str, Any]) -> list[ToolCall]:
        """The tool calls of a decoded record, in order."""

    def render(self, line: int, obj: dict[str, Any]) -> RawRecord:
        """The decoded record on line ``line`` as the evidence window shows it: its type, time and
        texts (whose words each is; a tool call as ``call``), unredacted."""

    # -- the digest -----------------------------------------------------------------------------

    def digester(
        self,
        file: str,
        kind: FileKind,
        state: DigestState,
        stats: DigestStats,
        interrupts: bool,
        cheap: bool = True,
    ) -> LineDigester:
        """A :class:`LineDigester` for the lines of ``file`` (a file of ``kind``): kept turns deduplicated
        by ``state``, what was read counted in ``stats``; interrupt markers kept only with
        ``interrupts``; ``cheap=False``: every line the exact way."""

    def keep(self, buf: bytes, start: int, end: int) -> bool:
        """Whether the line ``buf[start:end]`` may hold words the digest keeps (a cheap, conservative
        byte test: False only when it certainly holds none)."""
