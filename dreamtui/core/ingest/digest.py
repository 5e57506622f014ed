"""The digest: the ordered turns of a session a model should read, each pointing to its raw bytes.

Keeps the person's words (prompts, slash commands, rejection reasons, text typed while the agent
was busy, interrupt markers) and the assistant's prose. Drops tool calls and results, thinking,
system reminders, IDE context and metadata records.

Cheap first: :func:`needed` looks at the first few hundred bytes of each line, in the read buffer and
without copying it, and only lines that can hold kept text are decoded (a user line that is not a
tool result, an assistant line with a text block, a queue operation). Progress, snapshots, tool
results and tool-use-only lines are never decoded, and base64 image data is blanked before decoding,
so the digest runs faster than ``orjson.loads`` over every line.

Duplicates: assistant blocks are kept once per ``(message.id, block)``; a person's record rewritten
with a new uuid (same timestamp and text) is kept once; text typed while the agent was busy is kept
when queued and not again when the same text arrives as a ``user`` record. For incremental digests
these keys persist in the ledger ``seen_blocks`` table.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from dreamtui.core.ingest import records
from dreamtui.core.ingest.tail import (
    DEFAULT_MAX_LINE,
    Line,
    LineScanner,
    Tailer,
    TailRead,
    decode_line,
    open_transcript,
)
from dreamtui.core.ingest.transcripts import FileKind, describe
from dreamtui.core.ledger import Ledger, offsets
from dreamtui.core.models import Digest, DigestStats, Turn

_TYPE = b'"type":"'
_SPACED = b'"type": "'
_CONTENT = b'"content":'
_ROLE = b'"role":"'
_TEXT_BLOCK = b'"type":"text"'
_SMALL = 64 * 1024  # a line this short is cheap to search in full
_WINDOW = 512
# Top-level record types that never hold kept text. Claude Code writes ``type`` before the rest of
# these records, so the first ``"type":"`` of the line names the record.
_SKIP_TYPES = frozenset({
    b"progress", b"file-history-snapshot", b"summary", b"system", b"permission-mode", b"last-prompt",
    b"custom-title", b"ai-title", b"tag", b"agent-name", b"pr-link",
})
_DATA = b'"data":"'
_ASSISTANT_HEAD = b'message","role":"assistant","content":'
_USER_HEAD = b'user","message":{"role":"user","content":'
_ATTACHMENT = b'"attachment":{'
_ASSISTANT_HEAD_LEN = len(_ASSISTANT_HEAD)
_USER_HEAD_LEN = len(_USER_HEAD)
_ATTACHMENT_LEN = len(_ATTACHMENT)
_BIG_STRING = 4096


def _tool_result_needed(buf: bytes, start: int, stop: int) -> bool:
    """A user line whose content starts at ``start`` with a tool result: needed only for a
    rejection, a short error result whose flag or words sit near the start."""
    if buf.find(b'"tool_result"', start, stop) < 0 and buf.find(b'"tool_use_id"', start, stop) < 0:
        return True
    return buf.find(b'"is_error":true', start, stop) >= 0 or buf.find(b"The user doesn't want to", start, stop) >= 0


def _user_needed(buf: bytes, at: int, end: int) -> bool:
    """A user line: skip it when its content starts with a tool result that is no rejection."""
    c = buf.find(_CONTENT, at, end)
    if c < 0:
        return True
    return _tool_result_needed(buf, c, min(c + _WINDOW, end))


def _assistant_needed(buf: bytes, at: int, end: int) -> bool:
    """An assistant line: needed when its content is a string or has a text block."""
    c = buf.find(_CONTENT, at, end)
    if c < 0:
        return True
    c += len(_CONTENT)
    if not buf.startswith(b"[", c, end):
        return True
    return buf.find(_TEXT_BLOCK, c, end) >= 0


def _slow_needed(buf: bytes, start: int, end: int) -> bool:
    """The conservative test for lines of an unexpected shape (``buf[start:end]``, not copied)."""
    find = buf.find
    if find(b'"type":"user"', start, end) >= 0 or find(b'"type":"queue-operation"', start, end) >= 0:
        return True
    if find(b'"type":"assistant"', start, end) >= 0:
        return find(_TEXT_BLOCK, start, end) >= 0 or find(b'"content":"', start, end) >= 0
    return find(_SPACED, start, end) >= 0  # not Claude Code's compact writer: decode to be safe


def needed(buf: bytes, start: int, end: int) -> bool:
    """Whether the line ``buf[start:end]`` may hold text the digest keeps: a cheap, conservative
    byte test that mostly looks at the first few hundred bytes, without copying the line.

    Claude Code writes an assistant line as ``…"message":{…"type":"message","role":"assistant",
    "content":[…`` and a user line as ``…"type":"user","message":{"role":"user","content":…``; other
    records put their own ``type`` first. Lines of any other shape take a slower, safe path.
    """
    find = buf.find
    at = find(_TYPE, start, end)
    if at < 0:
        return True  # empty, broken or spaced JSON: decode it and see
    p = at + 8
    close = find(b'"', p, p + 64 if p + 64 < end else end)
    first = buf[p:close] if close > 0 else b""
    if first == b"message":
        if buf.startswith(_ASSISTANT_HEAD, p, end):
            q = p + _ASSISTANT_HEAD_LEN
            return not buf.startswith(b"[", q, end) or find(_TEXT_BLOCK, q, end) >= 0
    elif first == b"user" and buf.startswith(_USER_HEAD, p, end):
        q = p + _USER_HEAD_LEN
        if not buf.startswith(b"[", q, end):
            return True
        w = q + _WINDOW if q + _WINDOW < end else end
        if find(b'"tool_result"', q, w) < 0 and find(b'"tool_use_id"', q, w) < 0:
            return True
        return find(b'"is_error":true', q, w) >= 0 or find(b"The user doesn't want to", q, w) >= 0
    if first in _SKIP_TYPES or (at - start >= _ATTACHMENT_LEN
                                and buf.startswith(_ATTACHMENT, at - _ATTACHMENT_LEN, end)):
        return False
    if first == b"queue-operation":
        # text typed while the agent was busy is the record's "content"; most queue operations
        # (dequeue, remove, a bare enqueue) have none, and hold nothing to keep (a \u escape could
        # spell the key: decode those)
        return find(b'"content"', start, end) >= 0 or find(b"\\u", start, end) >= 0
    if first == b"user":
        return _user_needed(buf, at, end)
    if first in (b"message", b"assistant"):
        r = find(_ROLE, at, at + _WINDOW if at + _WINDOW < end else end)
        if r >= 0 and buf.startswith(b"user", r + len(_ROLE), end):
            return _user_needed(buf, at, end)
        return _assistant_needed(buf, at, end)
    return _slow_needed(buf, start, end)


def needs_decode(raw: bytes) -> bool:
    """:func:`needed` for one whole line."""
    return needed(raw, 0, len(raw))


def drop_big_strings(raw: bytes) -> bytes:
    """``raw`` with long ``"data":"…"`` values (base64 images) emptied, so decoding skips them.

    Only values without a backslash are emptied: their closing quote is certainly the next ``"``.
    """
    out: list[bytes] = []
    pos = search = 0
    while True:
        k = raw.find(_DATA, search)
        if k < 0:
            break
        start = k + len(_DATA)
        end = raw.find(b'"', start)
        if end < 0:
            break
        if end - start >= _BIG_STRING and raw.find(b"\\", start, end) < 0:
            out.append(raw[pos:start])
            pos = end
        search = end + 1
    if not out:
        return raw
    out.append(raw[pos:])
    return b"".join(out)


def _text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


class DigestState:
    """The dedup keys seen so far (in memory, optionally backed by a lookup in the ledger).

    ``added`` and ``removed`` are the keys to persist after an incremental digest.
    """

    def __init__(self, seen: Iterable[str] = (), lookup: Callable[[str], bool] | None = None) -> None:
        self.seen: set[str] = set(seen)
        self.lookup = lookup
        self.added: set[str] = set()
        self.removed: set[str] = set()

    def has(self, key: str) -> bool:
        """Whether ``key`` was seen (in this digest or, through ``lookup``, an earlier one)."""
        if key in self.seen:
            return True
        if key in self.removed or self.lookup is None:
            return False
        if self.lookup(key):
            self.seen.add(key)
            return True
        return False

    def add(self, key: str) -> None:
        """Remember ``key``."""
        self.seen.add(key)
        self.added.add(key)
        self.removed.discard(key)

    def discard(self, key: str) -> None:
        """Forget ``key`` (a queued text that has now arrived)."""
        self.seen.discard(key)
        if key in self.added:
            self.added.discard(key)
        else:
            self.removed.add(key)


class _Digester:
    """Turns decoded records of one file into Turns, updating stats and dedup state."""

    def __init__(self, file: str, kind: FileKind, state: DigestState, stats: DigestStats,
                 interrupts: bool, cheap: bool = True) -> None:
        self.cheap = cheap
        self.file = file
        self.kind = kind
        self.state = state
        self.stats = stats
        self.interrupts = interrupts
        self.cwd = ""

    def lines(self, lines: Iterable[Line]) -> list[Turn]:
        """Digest raw lines; bad lines are counted in ``stats`` and skipped."""
        stats = self.stats
        cheap = self.cheap
        out: list[Turn] = []
        assistant, user, queued = self._assistant, self._user, self._queued
        main = self.kind == "main"
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        nbytes = nlines = 0
        for line_no, _offset, raw in lines:
            nbytes += len(raw) + 1
            nlines += 1
            if cheap and not needs_decode(raw):
                if not raw.strip():
                    stats.skipped_lines += 1
                continue
            if len(raw) > _SMALL:
                raw = drop_big_strings(raw)
            try:  # the common case inline; decode_line repairs or refuses the rest
                obj = loads(raw)
                error = None if type(obj) is dict else "?"
            except decode_error:
                error = "?"
            if error is not None:
                obj, error = decode_line(raw)
                if error == "replaced":
                    stats.replaced += 1  # kept, and counted so a repaired record is never silent
                elif obj is None:
                    stats.skipped_lines += 1
                    if error == "invalid_utf8":
                        stats.invalid_utf8 += 1
                    elif error in ("malformed", "not_object"):
                        stats.malformed += 1
                    continue
            try:
                rtype = obj.get("type")
                if rtype == "assistant":
                    assistant(obj, line_no, out)
                elif not main:
                    continue  # sub-agent "user" lines are the parent agent; compaction files have no person
                elif rtype == "user":
                    user(obj, line_no, out)
                elif rtype == "queue-operation":
                    queued(obj, line_no, out)
            except Exception:  # an odd record must never stop the digest
                stats.skipped_lines += 1
                stats.malformed += 1
        stats.bytes += nbytes
        stats.lines += nlines
        return out

    def record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        """Append the turns of one decoded record to ``out``."""
        rtype = obj.get("type")
        if rtype == "assistant":
            self._assistant(obj, line_no, out)
        elif self.kind != "main":
            return  # sub-agent "user" lines are the parent agent; compaction files have no person
        elif rtype == "user":
            self._user(obj, line_no, out)
        elif rtype == "queue-operation":
            self._queued(obj, line_no, out)

    def _turn(self, role: str, text: str, obj: dict[str, Any], line_no: int, kind: str) -> Turn:
        if not self.cwd:
            cwd = obj.get("cwd")
            self.cwd = cwd if isinstance(cwd, str) else ""
        ts = obj.get("timestamp")
        uuid = obj.get("uuid")
        self.stats.chars += len(text)
        return Turn(role, text, self.file, line_no,  # type: ignore[arg-type]
                    uuid if isinstance(uuid, str) else None, ts if isinstance(ts, str) else None, kind)

    def _assistant(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        message = obj.get("message")
        if type(message) is not dict or self.kind == "compact":
            return
        if message.get("model") == "<synthetic>" or obj.get("isApiErrorMessage") is True:
            return
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        else:
            return
        kind = "subagent" if self.kind == "subagent" or obj.get("isSidechain") is True else "text"
        state = self.state
        # records.block_key for a text block, inlined: "<message.id or uuid>:text:<hash of the text>"
        owner = message.get("id") or obj.get("uuid")
        if not isinstance(owner, str) or not owner:
            owner = None
        for block in blocks:
            if type(block) is not dict or block.get("type") != "text":
                continue
            raw_text = block.get("text")
            if not isinstance(raw_text, str):
                continue
            text = raw_text.strip()
            if not text:
                continue
            if owner is not None:
                key = f"a:{owner}:text:{_text_hash(raw_text)}"
                if state.has(key):
                    continue
                state.add(key)
            out.append(self._turn("assistant", text, obj, line_no, kind))

    def _user(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        if obj.get("isSidechain") is True:
            return
        person = [p for p in records.pieces(obj) if p.role == "person"]
        if not person:
            return
        kinds = [p.kind for p in person]
        if all(k == "interrupt" for k in kinds):
            if self.interrupts:
                out.append(self._turn("person", person[0].text, obj, line_no, "interrupt"))
            return
        person = [p for p in person if p.kind != "interrupt"]
        text = "\n\n".join(p.text for p in person)
        kind = next((k for k in ("rejection", "command") if k in kinds), "prompt")
        digest = _text_hash(text)
        ts = obj.get("timestamp")
        if isinstance(ts, str):
            key = f"p:{ts}:{digest}"
            if self.state.has(key):
                return  # the same record rewritten with a new uuid
            self.state.add(key)
        queued = "q:" + digest
        if self.state.has(queued):
            self.state.discard(queued)  # typed while busy: already kept where it was queued
            return
        out.append(self._turn("person", text, obj, line_no, kind))

    def _queued(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        person = [p for p in records.pieces(obj) if p.role == "person" and p.kind != "interrupt"]
        if not person:
            return
        text = "\n\n".join(p.text for p in person)
        key = "q:" + _text_hash(text)
        if self.state.has(key):
            return
        self.state.add(key)
        out.append(self._turn("person", text, obj, line_no, "queued"))


def digest_lines(lines: Iterable[Line], *, file: str, kind: FileKind = "main",
                 state: DigestState | None = None, stats: DigestStats | None = None,
                 interrupts: bool = True) -> list[Turn]:
    """Digest raw lines ``(line_no, offset, raw)`` of one file (e.g. a :class:`TailRead`'s lines).

    ``state`` carries dedup keys between calls; ``stats`` is updated in place.
    """
    digester = _Digester(file, kind, state or DigestState(), stats if stats is not None else DigestStats(),
                         interrupts)
    return digester.lines(lines)


def digest_file(path: Path | str, *, kind: FileKind | None = None, max_line: int = DEFAULT_MAX_LINE,
                interrupts: bool = True, state: DigestState | None = None, cheap: bool = True) -> Digest:
    """Digest a whole transcript file, streaming (memory stays bounded however large it is).

    ``cheap=False`` decodes every line instead of trusting the byte test (for checking it).

    Raises :class:`~dreamtui.core.errors.TranscriptError` when the file cannot be read.
    """
    path = Path(path)
    tf = describe(path)
    stats = DigestStats()
    with open_transcript(path) as fh:
        scanner = LineScanner(fh, max_line=max_line, keep=needed if cheap else None)
        # the scanner applies the cheap test itself, so the digester decodes every line it gets
        digester = _Digester(str(path), kind or tf.kind, state or DigestState(), stats, interrupts, cheap=False)
        turns = digester.lines(scanner)
    _finish_stats(stats, scanner.oversized, scanner.partial, scanner.offset, scanner.line)
    return Digest(session=tf.session, project=tf.project, files=[str(path)], turns=turns, stats=stats,
                  cwd=digester.cwd)


def _finish_stats(stats: DigestStats, oversized: Sequence[int], partial: bool, nbytes: int,
                  nlines: int) -> None:
    """Account for what the line scanner consumed, including the huge lines it skipped."""
    stats.oversized += len(oversized)
    stats.skipped_lines += len(oversized)
    stats.bytes = nbytes
    stats.lines = nlines
    stats.partial_tail = stats.partial_tail or partial


def digest_session(files: Sequence[Path | str], *, include_subagents: bool = True,
                   interrupts: bool = True) -> Digest:
    """Digest a session's files (main file first, then sub-agent files) into one Digest.

    Sub-agent files contribute only assistant prose (kind ``subagent``), merged into the main
    file's turns by timestamp; their ``user`` lines are the parent agent, not a person.
    """
    if not files:
        raise ValueError("digest_session needs at least one file")
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
        for name in ("bytes", "chars", "lines", "skipped_lines", "malformed", "invalid_utf8", "oversized",
                     "replaced"):
            setattr(stats, name, getattr(stats, name) + getattr(d.stats, name))
        stats.partial_tail = stats.partial_tail or d.stats.partial_tail
        keyed, last = [], ""
        for pos, turn in enumerate(d.turns):
            last = turn.timestamp or last
            keyed.append((last, index, pos, turn))
        streams.append(keyed)
    merged = [item[3] for item in heapq.merge(*streams)]
    return Digest(session=first.session, project=first.project, files=names, turns=merged, stats=stats, cwd=cwd)


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
        if state.added:
            offsets.add_blocks(ledger, read.path, state.added)
        if state.removed:
            offsets.remove_blocks(ledger, read.path, state.removed)
    state.added.clear()
    state.removed.clear()
    return True


def digest_increment(ledger: Ledger, path: Path | str, project: str = "", session: str = "", *,
                     tailer: Tailer | None = None, kind: FileKind | None = None, commit: bool = True,
                     max_bytes: int | None = None, interrupts: bool = True,
                     ) -> tuple[Digest, TailRead, DigestState]:
    """Digest only what was appended to ``path`` since the last committed read.

    With ``commit=False`` nothing is stored: call :func:`persist` (e.g. inside the transaction
    that stores what was made of the turns). Returns the digest of the new lines, the read and
    the dedup state.
    """
    tailer = tailer or Tailer(ledger)
    tf = describe(Path(path))
    read = tailer.read(path, project or tf.project, session or tf.session, max_bytes=max_bytes, keep=needed)
    state = DigestState(lookup=_ledger_lookup(ledger, read.path))
    stats = DigestStats()
    digester = _Digester(str(path), kind or tf.kind, state, stats, interrupts, cheap=False)
    turns = digester.lines(read.lines)
    _finish_stats(stats, read.oversized, read.partial, read.bytes_read, read.end_line - read.start_line)
    if commit:
        persist(ledger, tailer, read, state, stats)
    digest = Digest(session=read.session, project=read.project, files=[str(path)], turns=turns, stats=stats,
                    cwd=digester.cwd)
    return digest, read, state
