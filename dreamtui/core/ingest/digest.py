"""The digest: the ordered turns of a session a model should read, each pointing to its raw bytes.

Keeps the person's words (prompts, slash commands, rejection reasons, text typed while the agent
was busy, interrupt markers) and the assistant's prose. Drops tool calls and results, thinking,
system reminders, IDE context and metadata records.

This module reads the files (a small one whole, a large one in chunks, an increment through the
tailer), counts what was read, merges a session's files by time and keeps the dedup state; which
lines hold which turns is the transcript format's to say — the format of each file, looked up from the
file (:func:`.formats.format_for`): its :class:`~.formats.protocol.LineDigester` decodes only what it
reads (for Claude Code: ``formats/claude_code.py``, ``docs/digest.md``). A whole-file source (a
``records`` format) is read as records (:meth:`~.formats.protocol.TranscriptFormat.records`), each
digested by the format's digester's ``record``; an increment of it is the records not seen yet
(:mod:`.records`).

Every turn's text is given as it was on the screen when it was sent (:func:`_as_typed`): a terminal
agent may store the person's keystrokes with BACKSPACE or DEL still in them, each after the character
it erased; the digest applies them (:func:`dreamtui.core.text.as_typed`), here and nowhere else, so
the fast paths and the reference give the same turns. Only a text holding one of them changes (the
assistant's prose too: a model's text rarely holds one, and when it does, a terminal showed it erased).

Duplicates: assistant blocks are kept once per ``(message id, block)``; a person's record rewritten
with a new id (same timestamp and text) is kept once; text typed while the agent was busy is kept
when queued and not again when the same text arrives as a person's record. For incremental digests
these keys persist in the ledger ``seen_blocks`` table.
"""

from __future__ import annotations

import hashlib
import heapq
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.protocol import FileKind, LineDigester, TranscriptFormat, split_address
from dreamtui.core.ingest.records import read_new
from dreamtui.core.ingest.tail import (
    DEFAULT_MAX_LINE,
    Line,
    LineScanner,
    Tailer,
    TailRead,
    open_transcript,
    read_small_transcript,
)
from dreamtui.core.ledger import Ledger, offsets
from dreamtui.core.models import Digest, DigestStats, Turn
from dreamtui.core.text import as_typed


def _text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


Key = str | tuple[str, ...]


def _as_typed(turns: list[Turn]) -> list[Turn]:
    """``turns`` (changed in place) with each text holding an erase character as it was on the screen
    (:func:`~dreamtui.core.text.as_typed`); the dedup keys stay those of the raw text."""
    for i, turn in enumerate(turns):
        text = turn.text
        if "\x08" in text or "\x7f" in text:
            turns[i] = Turn(
                turn.role, as_typed(text), turn.file, turn.line, turn.uuid, turn.timestamp, turn.kind
            )
    return turns


def stored_key(key: Key) -> str:
    """The form a dedup key is stored in (``seen_blocks``): ``a:<owner>:text:<hash>`` for an assistant
    block, ``p:<timestamp>:<hash>`` for a person's record, ``q:<hash>`` for queued text."""
    if isinstance(key, str):
        return key
    if key[0] == "a":
        return f"a:{key[1]}:text:{_text_hash(key[2])}"
    if key[0] == "p":
        return f"p:{key[1]}:{_text_hash(key[2])}"
    return "q:" + _text_hash(key[1])


class DigestState:
    """The dedup keys seen so far (in memory, optionally backed by a lookup in the ledger).

    With a ledger behind it (``lookup`` or ``seen``) every key is hashed into its stored form
    (:func:`stored_key`), and ``added`` and ``removed`` are the keys to persist after an incremental
    digest. Without one, the texts stay in memory and are compared, never hashed: a reply's blocks by
    ``message.id`` (``blocks``), a person's records by timestamp (``persons``), queued texts as
    ``("q", text)`` in ``seen``; :meth:`pending` gives the stored form of all of them.
    """

    def __init__(self, seen: Iterable[str] = (), lookup: Callable[[str], bool] | None = None) -> None:
        self.seen: set[Key] = set(seen)
        self.lookup = lookup
        self.added: set[Key] = set()
        self.removed: set[Key] = set()
        self.hashed = bool(self.seen) or lookup is not None
        self.blocks: dict[str, Any] = {}
        """In memory: each reply's (``message.id``) text block, or a list of its text blocks."""
        self.persons: dict[str, Any] = {}
        """In memory: each person's record text by timestamp (or a list of them)."""
        self.queued_any = False
        """Whether a queued text was kept (until then no prompt needs looking up among them)."""

    def new_block(self, owner: str, text: str) -> bool:
        """True the first time the text block ``text`` of the reply ``owner`` is seen (and remembers it):
        the format's ``block_key``. In memory the reply's blocks are compared, the text never hashed."""
        return self._new("a", self.blocks, owner, text)

    def new_person(self, ts: str, text: str) -> bool:
        """True the first time a person's record with this timestamp and text is seen (a record
        rewritten with a new uuid is not new)."""
        return self._new("p", self.persons, ts, text)

    def _new(self, prefix: str, table: dict[str, Any], scope: str, text: str) -> bool:
        if self.hashed:
            key = stored_key((prefix, scope, text))
            if self.has(key):
                return False
            self.add(key)
            return True
        prev = table.get(scope)
        if prev is None:
            table[scope] = text
        elif type(prev) is list:
            if text in prev:
                return False
            prev.append(text)
        elif prev == text:
            return False
        else:
            table[scope] = [prev, text]
        return True

    def pending(self) -> set[str]:
        """The stored form of the keys added since the last persist (in memory: with the tables)."""
        keys = {stored_key(k) for k in self.added}
        for prefix, table in (("a", self.blocks), ("p", self.persons)):
            for scope, texts in table.items():
                for text in texts if type(texts) is list else [texts]:
                    keys.add(stored_key((prefix, scope, text)))
        return keys

    def key(self, prefix: str, scope: str, text: str) -> Key:
        """The key of ``text`` (``prefix`` ``a``, ``p`` or ``q``; ``scope`` the owner or timestamp)."""
        if self.hashed:
            return stored_key((prefix, scope, text) if prefix != "q" else (prefix, text))
        return (prefix, scope, text) if prefix != "q" else (prefix, text)

    def has(self, key: Key) -> bool:
        """Whether ``key`` was seen (in this digest or, through ``lookup``, an earlier one)."""
        if key in self.seen:
            return True
        if key in self.removed or self.lookup is None:
            return False
        if self.lookup(stored_key(key)):
            self.seen.add(key)
            return True
        return False

    def add(self, key: Key) -> None:
        """Remember ``key``."""
        self.seen.add(key)
        self.added.add(key)
        self.removed.discard(key)

    def discard(self, key: Key) -> None:
        """Forget ``key`` (a queued text that has now arrived)."""
        self.seen.discard(key)
        if key in self.added:
            self.added.discard(key)
        else:
            self.removed.add(key)


_WHOLE_FILE = 1024 * 1024
"""A transcript up to this size is read whole, in one system call (the line scanner's chunk size)."""


def _pairs(digester: LineDigester, pairs: Iterable[tuple[int, bytes]], out: list[Turn]) -> None:
    """Digest ``(line number, raw)`` pairs into ``out`` (bytes and lines are counted by the caller)."""
    columns = tuple(zip(*pairs, strict=True))  # (numbers, raws), or () without lines
    if columns:
        digester.lines(columns[0], columns[1], out)


def digest_lines(
    lines: Iterable[Line],
    *,
    file: str,
    kind: FileKind = "main",
    state: DigestState | None = None,
    stats: DigestStats | None = None,
    interrupts: bool = True,
) -> list[Turn]:
    """Digest raw lines ``(line_no, offset, raw)`` of one file (e.g. a :class:`TailRead`'s lines).

    ``state`` carries dedup keys between calls; ``stats`` is updated in place.
    """
    stats = stats if stats is not None else DigestStats()
    digester = formats.format_for(file).digester(file, kind, state or DigestState(), stats, interrupts)
    lines = list(lines)
    stats.bytes += sum(len(raw) + 1 for _, _, raw in lines)
    stats.lines += len(lines)
    out: list[Turn] = []
    _pairs(digester, [(line_no, raw) for line_no, _, raw in lines], out)
    return _as_typed(out)


@contextmanager
def shared_reads() -> Iterator[None]:
    """Inside this block the digests (and every other read of a session: its description, its
    records) may share what a format opens to read them, closed when the block ends: each format's
    optional ``shared_reads`` hook (OpenCode's: one connection to ``opencode.db`` for every session
    read, each read still its own short read transaction). Wrap a pass that reads many sessions in
    it (the dream cycle's light phase, an estimate's samples, a batch's sessions), never anything
    that waits (a model's call, a person). Blocks nest (the inner one is the outer one)."""
    with ExitStack() as stack:
        for fmt in formats.FORMATS.values():
            hook = getattr(fmt, "shared_reads", None)
            if hook is not None:
                stack.enter_context(hook())
        yield


def digest_file(
    path: Path | str,
    *,
    kind: FileKind | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    interrupts: bool = True,
    state: DigestState | None = None,
    cheap: bool = True,
) -> Digest:
    """Digest a whole transcript file, streaming (memory stays bounded however large it is).

    ``cheap=False`` decodes every line in full (the format's :meth:`~.formats.protocol.LineDigester.exact`)
    instead of taking the fast path: the reference the fast path is checked against.

    Raises :class:`~dreamtui.core.errors.TranscriptError` when the file cannot be read.
    """
    path = path if isinstance(path, Path) else Path(path)
    fmt = formats.format_for(path)
    if fmt.layout == "records":
        return _digest_records(fmt, path, kind, interrupts, state, cheap)
    if cheap:
        data = read_small_transcript(path, min(_WHOLE_FILE, max_line))
        if data is not None:  # no line can be over max_line: the file is not
            return _digest_whole(fmt, path, data, kind, interrupts, state)
    stats = DigestStats()
    digester = fmt.digester(
        str(path), kind or fmt.kind_of(path), state or DigestState(), stats, interrupts, cheap=cheap
    )
    turns: list[Turn] = []
    with open_transcript(path) as fh:
        scanner = LineScanner(fh, max_line=max_line)
        if cheap:
            for numbers, raws in scanner.columns():
                digester.lines(numbers, raws, turns)
        else:
            exact = digester.exact
            for line_no, _offset, raw in scanner:
                exact(raw, line_no, turns)
    tf = fmt.describe(path, scanner.head if cheap else None)
    _finish_stats(stats, scanner.oversized, scanner.partial, scanner.offset, scanner.line)
    _as_typed(turns)
    return Digest(
        session=tf.session, project=tf.project, files=[str(path)], turns=turns, stats=stats, cwd=digester.cwd
    )


def _digest_records(
    fmt: TranscriptFormat,
    address: Path,
    kind: FileKind | None,
    interrupts: bool,
    state: DigestState | None,
    cheap: bool = True,
) -> Digest:
    """:func:`digest_file` of a whole-file source (``address``: its path, ``#member`` for one session
    of a source holding many): every record the format reads, each digested by its ``record``.

    A format may read its source faster for the digest alone (its optional ``digest_records``: one
    read, the records the digest drops never built); ``cheap=False`` always takes the records, the
    reference that fast path is checked against (the same turns, stats and description)."""
    fast = getattr(fmt, "digest_records", None) if cheap else None
    if fast is not None:
        stats = DigestStats()
        done = fast(address, kind, state or DigestState(), stats, interrupts)
        if done is not None:
            described, kept, cwd = done
            return Digest(
                session=described.session,
                project=described.project,
                files=[str(address)],
                turns=_as_typed(kept),
                stats=stats,
                cwd=cwd,
            )
    path, member = split_address(address)
    tf = fmt.describe(address)
    name = str(address)
    stats = DigestStats()
    digester = fmt.digester(name, kind or tf.kind, state or DigestState(), stats, interrupts)
    turns: list[Turn] = []
    for rec in fmt.records(path, member):
        stats.lines += 1
        stats.bytes += len(rec.raw)
        digester.record(rec.obj, rec.locator, turns)
    _as_typed(turns)
    return Digest(
        session=tf.session, project=tf.project, files=[name], turns=turns, stats=stats, cwd=digester.cwd
    )


def _digest_whole(
    fmt: TranscriptFormat,
    path: Path,
    data: bytes,
    kind: FileKind | None,
    interrupts: bool,
    state: DigestState | None,
) -> Digest:
    """:func:`digest_file` of a file read whole (``data``): its lines cut by ``io.BytesIO`` in C, one
    ASCII check for all of them, the path parsed once."""
    tf = fmt.describe(path, data)
    name = str(path)
    stats = DigestStats()
    digester = fmt.digester(name, kind or tf.kind, state or DigestState(), stats, interrupts)
    turns: list[Turn] = []
    lines = io.BytesIO(data).readlines()
    partial = bool(lines) and not lines[-1].endswith(b"\n")  # not consumed until its newline comes
    if partial:
        lines.pop()
    if lines:
        digester.lines(range(1, len(lines) + 1), lines, turns, data.isascii())
    stats.bytes = data.rfind(b"\n") + 1 if partial else len(data)
    stats.lines = len(lines)
    stats.partial_tail = partial
    _as_typed(turns)
    return Digest(
        session=tf.session, project=tf.project, files=[name], turns=turns, stats=stats, cwd=digester.cwd
    )


def _finish_stats(
    stats: DigestStats, oversized: Sequence[int], partial: bool, nbytes: int, nlines: int
) -> None:
    """Account for what the line scanner consumed, including the huge lines it skipped."""
    stats.oversized += len(oversized)
    stats.skipped_lines += len(oversized)
    stats.bytes = nbytes
    stats.lines = nlines
    stats.partial_tail = stats.partial_tail or partial


def digest_session(
    files: Sequence[Path | str], *, include_subagents: bool = True, interrupts: bool = True
) -> Digest:
    """Digest a session's files (main file first, then sub-agent files) into one Digest.

    Sub-agent files contribute only assistant prose (kind ``subagent``), merged into the main
    file's turns by timestamp; their ``user`` lines are the parent agent, not a person.
    """
    if not files:
        raise ValueError("digest_session needs at least one file")

    def describe(path: Path) -> Any:
        return formats.format_for(path).describe(path)

    first = describe(Path(files[0]))
    stats = DigestStats()
    streams: list[list[tuple[str, int, int, Turn]]] = []
    names: list[str] = []
    cwd = ""
    for index, f in enumerate(files):
        tf = describe(Path(f))
        if tf.kind != "main" and not include_subagents:
            continue
        d = digest_file(f, kind=tf.kind, interrupts=interrupts)
        cwd = cwd or d.cwd
        names.append(str(f))
        for name in (
            "bytes",
            "chars",
            "lines",
            "skipped_lines",
            "malformed",
            "invalid_utf8",
            "oversized",
            "replaced",
        ):
            setattr(stats, name, getattr(stats, name) + getattr(d.stats, name))
        stats.partial_tail = stats.partial_tail or d.stats.partial_tail
        keyed, last = [], ""
        for pos, turn in enumerate(d.turns):
            last = turn.timestamp or last
            keyed.append((last, index, pos, turn))
        streams.append(keyed)
    merged = [item[3] for item in heapq.merge(*streams)]
    return Digest(
        session=first.session, project=first.project, files=names, turns=merged, stats=stats, cwd=cwd
    )


def _ledger_lookup(ledger: Ledger, path: str) -> Callable[[str], bool]:
    def lookup(key: str) -> bool:
        return offsets.block_seen(ledger, path, key)

    return lookup


def persist(ledger: Ledger, tailer: Tailer, read: TailRead, state: DigestState, stats: DigestStats) -> bool:
    """Commit an incremental digest: the file offset and the new dedup keys, in one transaction
    (joins the caller's ``ledger.write()`` when there is one). False when the read was stale."""
    with ledger.write():
        if not tailer.commit(read, skipped=stats.malformed + stats.invalid_utf8):
            return False
        added = state.pending()
        if added:
            offsets.add_blocks(ledger, read.path, added)
        if state.removed:
            offsets.remove_blocks(ledger, read.path, {stored_key(k) for k in state.removed})
    state.added.clear()
    state.removed.clear()
    return True


def digest_increment(
    ledger: Ledger,
    path: Path | str,
    project: str = "",
    session: str = "",
    *,
    tailer: Tailer | None = None,
    kind: FileKind | None = None,
    commit: bool = True,
    max_bytes: int | None = None,
    interrupts: bool = True,
) -> tuple[Digest, TailRead, DigestState]:
    """Digest only what was appended to ``path`` since the last committed read.

    With ``commit=False`` nothing is stored: call :func:`persist` (e.g. inside the transaction
    that stores what was made of the turns). Returns the digest of the new lines, the read and
    the dedup state.
    """
    fmt = formats.format_for(path)
    tailer = tailer or Tailer(ledger)
    tf = fmt.describe(Path(path))
    turns: list[Turn] = []
    stats = DigestStats()
    if fmt.layout == "records":
        read, fresh, keys = read_new(ledger, path, fmt, project or tf.project, session or tf.session)
        state = DigestState(lookup=_ledger_lookup(ledger, read.path))
        digester = fmt.digester(str(path), kind or tf.kind, state, stats, interrupts)
        for rec in fresh:
            digester.record(rec.obj, rec.locator, turns)
        for key in keys:
            state.add(key)  # the records read: persisted with the digest's own keys
        stats.bytes, stats.lines = read.bytes_read, len(fresh)
    else:
        read = tailer.read(
            path, project or tf.project, session or tf.session, max_bytes=max_bytes, keep=fmt.keep
        )
        state = DigestState(lookup=_ledger_lookup(ledger, read.path))
        digester = fmt.digester(str(path), kind or tf.kind, state, stats, interrupts)
        _pairs(digester, [(line_no, raw) for line_no, _, raw in read.lines], turns)
        _finish_stats(stats, read.oversized, read.partial, read.bytes_read, read.end_line - read.start_line)
    if commit:
        persist(ledger, tailer, read, state, stats)
    digest = Digest(
        session=read.session,
        project=read.project,
        files=[str(path)],
        turns=_as_typed(turns),
        stats=stats,
        cwd=digester.cwd,
    )
    return digest, read, state
