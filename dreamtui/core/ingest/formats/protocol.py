"""What dreamtui needs to know about an agent's transcripts: the :class:`TranscriptFormat` protocol.

A transcript format is one module that answers every question below for one agent's transcripts
(:mod:`.claude_code`, :mod:`.codex`, …, registered in :data:`dreamtui.core.ingest.formats.FORMATS`);
the rest of dreamtui looks the format up from the file (:func:`dreamtui.core.ingest.formats.format_for`,
or a :class:`TranscriptFile`'s ``format``) and never names a field of the records or a folder layout.

Two layouts (:data:`Layout`):

- ``lines``: JSON lines, one record a line, appended to while the agent runs (Claude Code, Codex CLI).
  Reading only what was appended (:mod:`dreamtui.core.ingest.tail`, byte offsets), decoding a line
  (``tail.decode_line``) and searching a quote in the raw bytes (:mod:`dreamtui.core.gate.verify`) are
  the same for every such format.
- ``records``: a whole file that is rewritten as the session grows (a JSON document, a SQLite
  database, a markdown file). The format reads it as :class:`SourceRecord` s (:meth:`TranscriptFormat.records`);
  change detection compares the records' keys and raw hashes instead of byte offsets
  (:mod:`dreamtui.core.ingest.records`); a quote is verified against the record its ``locator`` names;
  the digest is built from :meth:`TranscriptFormat.pieces` (:mod:`.generic`).

**Addressing a session.** A session is a file (``TranscriptFile.path``) and, for a source that holds
many sessions (a SQLite database), the session's id inside it (``TranscriptFile.member``). Wherever a
session's file is named by one string (a turn's ``file``, a quote's match, the ledger's ``files.path``)
that string is its **address**: the path, or ``<path>#<member>`` (:func:`address_of`,
:func:`split_address`). A one-file-per-session format leaves ``member`` empty and its addresses are
plain paths.

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

Optional functions, looked up with ``getattr`` (a format without them is read the ordinary way):

- ``digest_records(address, kind, state, stats, interrupts)`` → ``(TranscriptFile, turns, cwd)`` or
  None: a ``records`` format's digest of one session read once, the records the digest drops never
  built (``digest.digest_file``'s fast path; ``digest_file(…, cheap=False)`` is the reference it must
  equal);
- ``shared_reads()`` → a context manager: inside it the format may share what it opens to read its
  sources across reads (a database connection for every session of one database), each read still
  as short and as safe as alone, everything closed when it ends. ``digest.shared_reads`` enters every
  format's around a pass that reads many sessions (the dream cycle's light phase);
- ``changed_source(path)`` → the transcript a changed file or folder that is not one belongs to, or
  None (``formats.source_of``: the watcher hears a session through files beside its own);
- ``belongs(path)`` → whether a file no format claims is one ``changed_source`` maps, by its name and
  folders alone (``formats.belongs``: the watcher's rescan keeps its size and mtime, so a lost event
  for it is caught).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from dreamtui.core.files import Skipped
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Turn

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

Layout = Literal["lines", "records"]
"""How a format's files are read: appended JSON lines, or whole files read as records (module docstring)."""
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
    """The transcript folder the session belongs to, as the format names it: Claude Code's project
    folder, or for a format not grouped by project folder ``projects.encode_path`` of the session's
    working directory; ``ingest.projects`` turns it into the project key (the repository)."""
    session: str
    kind: FileKind
    agent_id: str | None = None
    format: str = ""
    """The name of the format that reads the file (its key in ``formats.FORMATS``; every format's
    ``describe`` sets it, '' only in a struct made by hand: ``formats.of_file`` then asks the path)."""
    member: str = ""
    """The session inside a source holding many ('' when the file is the session)."""

    @property
    def address(self) -> str:
        """The one string naming this session's file (:func:`address_of`)."""
        return address_of(self.path, self.member)


MEMBER_MARK = "#"
"""Between a multi-session source's path and the session's id in an address."""


def address_of(path: Path | str, member: str = "") -> str:
    """``path`` as a string, or ``<path>#<member>`` for one session of a source holding many."""
    return f"{path}{MEMBER_MARK}{member}" if member else str(path)


def split_address(address: Path | str) -> tuple[Path, str]:
    """``(path, member)`` of an address: the part before the last ``#`` and the member after it when
    that part is a file and the whole is not; else the address itself as the path (a file whose own
    name holds a ``#`` stays itself)."""
    text = str(address)
    at = text.rfind(MEMBER_MARK)
    if at <= 0 or "/" in text[at:] or os.path.lexists(text) or not os.path.isfile(text[:at]):
        return Path(text), ""
    return Path(text[:at]), text[at + 1 :]


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

    def record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        """Digest one decoded record (a ``records`` format's :class:`SourceRecord` ``obj``, ``line_no``
        its locator) into ``out``."""


class TranscriptFormat(Protocol):
    """One agent's transcripts: where they are, whose words each string is, what a tool call wrote,
    how a record looks in the evidence window, and how its lines become turns. A module implements
    it (its functions are the methods); see the module docstring."""

    name: str
    """The format's name (``claude-code``): its key in ``formats.FORMATS`` and a ``[formats.<name>]``
    table of the config."""
    agent: str
    """The agent as a person names it (``Claude Code``, ``Codex CLI``): what the queue marks a proposal with."""
    label: str
    """The agent in one short word (``Claude``, ``Codex``): the agent column of the queue and Sessions."""
    layout: Layout
    """``lines`` (appended JSON lines) or ``records`` (a whole file read as :class:`SourceRecord` s)."""
    suffix: str
    """How a transcript file's name ends (``.jsonl``)."""
    tool_call_hint: bytes
    """Bytes every raw line holding a tool call holds (a line without them is never decoded to look)."""

    # -- where the transcripts are --------------------------------------------------------------

    def default_roots(self) -> list[Path]:
        """The folders the agent writes its transcripts into, when the config names none (an
        environment variable the agent honours, such as ``CODEX_HOME``, is read here)."""

    def claims(self, path: Path) -> bool:
        """Whether ``path`` is a transcript of this format, by its name and folders alone (cheap, never
        opens it): how a file's format is looked up (``formats.format_for``) and what the watcher
        forwards. Claude Code's, the most general (``*.jsonl``), is asked last."""

    def discover(self, root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
        """Every transcript under ``root``, main files before their sub-agents; never raises. Folders
        and files that cannot be read are left out and reported in ``skipped``."""

    def describe(self, path: Path, head: bytes | None = None) -> TranscriptFile:
        """A :class:`TranscriptFile` for one path (``head``: the file's first bytes, when read). A
        format whose files hold many sessions is given the session's address (``<file>#<member>``,
        :func:`split_address`) and says which session it is."""

    def session_files(self, root: Path, project: str, session: str) -> list[Path]:
        """The files of one session: the main file first (when it exists), then the others."""

    def with_session(self, path: Path) -> list[Path]:
        """The files of the session whose main file is ``path``: ``path`` first, then its sub-agents'."""

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

    def records(self, path: Path, member: str = "") -> Iterator[SourceRecord]:
        """The records of the file ``path`` (of session ``member`` in a source holding many), in order.

        A ``records`` format's way in (a ``lines`` format may give each decoded line, ``locator`` its
        line number: ``formats.lines.json_lines_records``). Raises :class:`~dreamtui.core.errors.TranscriptError`
        when the file cannot be read or cannot be parsed as a whole (a JSON document half written):
        nothing of it is read then, and the next look tries again."""

    def pieces(self, obj: Any) -> list[Piece]:
        """The text pieces of one decoded record, in order, each with its provenance; never raises."""

    def provenance(
        self, obj: dict[str, Any], path: JsonPath, value: str, holds: Callable[[str], bool]
    ) -> Provenance:
        """Whose words the string ``value`` at ``path`` inside the record ``obj`` is, for a quote found
        in it; ``holds(text)`` says whether a part of the string holds the quote (a string whose start
        is the harness's and whose end is a person's asks it of the end). For a quote found only with
        the string's erase characters applied or removed, ``holds`` reads the part the same two ways."""

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
