"""The digest: the ordered turns of a session a model should read, each pointing to its raw bytes.

Keeps the person's words (prompts, slash commands, rejection reasons, text typed while the agent
was busy, interrupt markers) and the assistant's prose. Drops tool calls and results, thinking,
system reminders, IDE context and metadata records.

Decode only what is read: each line is parsed by msgspec into :class:`_Record`, which holds only the
fields the digest reads (tool input and output, thinking, image data, snapshots and progress payloads
are skipped by the parser without being built); a line over 8 KB is first ruled out or in by the
byte test :func:`needed`. A line msgspec refuses, a record of another shape, a kept record with bad
bytes, and a possible rejection take the exact path (``orjson`` into a dict and
:func:`records.pieces`), which ``digest_file(path, cheap=False)`` uses for every line. See
``docs/digest.md``.

Duplicates: assistant blocks are kept once per ``(message.id, block)``; a person's record rewritten
with a new uuid (same timestamp and text) is kept once; text typed while the agent was busy is kept
when queued and not again when the same text arrives as a ``user`` record. For incremental digests
these keys persist in the ledger ``seen_blocks`` table.
"""

from __future__ import annotations

import hashlib
import heapq
import io
from collections.abc import Callable, Iterable, Sequence
from itertools import compress
from pathlib import Path
from typing import Any

import msgspec
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
    read_small_transcript,
)
from dreamtui.core.ingest.transcripts import FileKind, describe, kind_of
from dreamtui.core.ledger import Ledger, offsets
from dreamtui.core.models import Digest, DigestStats, Role, Turn

_TYPE = b'"type":"'
_SPACED = b'"type": "'
_CONTENT = b'"content":'
_ROLE = b'"role":"'
_TEXT_BLOCK = b'"type":"text"'
_SMALL = 64 * 1024  # a line this short is cheap to search in full
_WINDOW = 512
# Top-level record types that never hold kept text. Claude Code writes ``type`` before the rest of
# these records, so the first ``"type":"`` of the line names the record.
_SKIP_TYPES = frozenset(
    {
        b"progress",
        b"file-history-snapshot",
        b"summary",
        b"system",
        b"permission-mode",
        b"last-prompt",
        b"custom-title",
        b"ai-title",
        b"tag",
        b"agent-name",
        b"pr-link",
    }
)
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
    return (
        buf.find(b'"is_error":true', start, stop) >= 0
        or buf.find(b"The user doesn't want to", start, stop) >= 0
    )


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
    if first in _SKIP_TYPES or (
        at - start >= _ATTACHMENT_LEN and buf.startswith(_ATTACHMENT, at - _ATTACHMENT_LEN, end)
    ):
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


Key = str | tuple[str, ...]


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
        :func:`records.block_key`. In memory the reply's blocks are compared, the text never hashed."""
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


# -- the fast path's decoded shape: only the fields the digest reads ------------------------------
# msgspec skips every other field (tool input and output, thinking, snapshots, progress data, image
# data) without building it, whatever the key order. A value of another shape than Claude Code writes
# (``message`` not an object, a block that is not one, a ``uuid`` that is not a string) fails
# validation, and the line takes the exact path, which treats it as the dict code always did.


class _Block(msgspec.Struct, gc=False):
    type: str | None = None
    text: str | None = None
    is_error: Any = None
    content: msgspec.Raw = msgspec.Raw()  # a tool result's output: decoded only for an error result


class _Message(msgspec.Struct, gc=False):
    id: str | None = None
    model: Any = None
    content: str | list[_Block] | None = None


class _Record(msgspec.Struct, gc=False):
    type: str | None = None
    message: _Message | None = None
    uuid: str | None = None
    timestamp: str | None = None
    isSidechain: Any = None
    isApiErrorMessage: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    isVisibleInTranscriptOnly: Any = None
    toolUseResult: msgspec.Raw = msgspec.Raw()  # only whether it is there: empty when absent


class _Queued(msgspec.Struct, gc=False):
    """A ``queue-operation`` record (decoded a second time, for these fields)."""

    operation: Any = None
    content: Any = None
    uuid: Any = None
    timestamp: Any = None
    cwd: Any = None


class _Cwd(msgspec.Struct, gc=False):
    cwd: Any = None


_decode_record = msgspec.json.Decoder(_Record).decode
_decode_cwd = msgspec.json.Decoder(_Cwd).decode
_decode_queued = msgspec.json.Decoder(_Queued).decode
_decode_value = msgspec.json.Decoder().decode
_NOT_DECODED = (msgspec.DecodeError, RecursionError)  # msgspec.ValidationError is a DecodeError
_WHOLE_FILE = 1024 * 1024
"""A transcript up to this size is read whole, in one system call (the line scanner's chunk size)."""
_BLOCK = 256
"""Lines decoded together before their records are made into turns (:meth:`_Digester.lines`)."""
_CHECKED_LINE = 8192
"""Lines longer than this take the byte test (:func:`needed`) before being decoded; shorter ones are
decoded at once (msgspec skipping a short line costs less than the test)."""


def _harness(rec: _Record) -> bool:
    """Whether a user record is flagged as the harness's (``records._META_FLAGS``)."""
    return rec.isMeta is True or rec.isCompactSummary is True or rec.isVisibleInTranscriptOnly is True


def _may_be_rejection(content: msgspec.Raw) -> bool:
    """Whether an error tool result's ``content`` (raw JSON) is a string in the shape of a rejected
    tool call (:func:`records.rejection_of` checks the rest); any other is tool output."""
    try:
        value = _decode_value(content)
    except _NOT_DECODED:
        return True  # let the exact path decide
    return isinstance(value, str) and value.startswith(records.REJECTION_PREFIX)


def _valid_utf8(raw: bytes) -> bool:
    """Whether ``raw`` is UTF-8 (msgspec does not check the bytes of the fields it skips)."""
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class _Digester:
    """Turns the lines of one file into Turns, updating stats and dedup state.

    :meth:`pairs` is the fast path: a short line, or a long one the byte test keeps, is decoded
    into :class:`_Record` (only the fields read here); a line msgspec refuses or finds of another
    shape, a user record that may hold a rejection and a kept record with bad bytes take the exact
    path (:meth:`exact`: ``orjson`` into a dict, repaired by ``decode_line`` when needed), which
    ``digest_file(path, cheap=False)`` uses for every line.
    """

    def __init__(
        self,
        file: str,
        kind: FileKind,
        state: DigestState,
        stats: DigestStats,
        interrupts: bool,
        cheap: bool = True,
    ) -> None:
        self.cheap = cheap
        self.file = file
        self.kind = kind
        self.state = state
        self.stats = stats
        self.interrupts = interrupts
        self.cwd = ""

    # -- the fast path ---------------------------------------------------------------------------

    def pairs(self, pairs: Iterable[tuple[int, bytes]], out: list[Turn], ascii: bool = False) -> None:
        """Digest ``(line number, raw)`` pairs into ``out`` (bytes and lines are counted by the caller).
        ``ascii``: the caller found every line ASCII (so valid UTF-8): no line is checked again."""
        columns = tuple(zip(*pairs, strict=True))  # (numbers, raws), or () without lines
        if columns:
            self.lines(columns[0], columns[1], out, ascii)

    def lines(
        self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool = False
    ) -> None:
        """Digest the lines ``raws`` (numbered ``numbers``) into ``out``: the fast path, in blocks of
        :data:`_BLOCK` lines (the records of one block are alive at once; a block stays in the caches)."""
        if len(raws) <= _BLOCK:
            self._block(numbers, raws, out, ascii)
            return
        for start in range(0, len(raws), _BLOCK):
            self._block(numbers[start : start + _BLOCK], raws[start : start + _BLOCK], out, ascii)

    def _block(self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool) -> None:
        """First every line is decoded (:meth:`_decoded`: in C, one call for all of them, a long line only
        when the byte test keeps it); then the hot loop turns the records into Turns: an assistant
        record with one text block (how Claude Code writes prose) and a plain prompt inline, everything
        else through a method."""
        numbers, raws, recs = self._decoded(numbers, raws)
        stats = self.stats
        exact, user, turns = self.exact, self._user_rec, self._assistant_turns
        main = self.kind == "main"
        compact = self.kind == "compact"
        state, file = self.state, self.file
        blocks, persons = state.blocks, state.persons
        new_block, new_person = state.new_block, state.new_person
        inline = not state.hashed  # the dedup state in memory, checked here
        classify, PERSON = records.classify_user_text, records.PERSON
        chars = 0  # of the turns made inline (the methods count their own)
        fast = inline and bool(self.cwd)  # turns may be made inline (the first one sets cwd)
        prose = "subagent" if self.kind == "subagent" else "text"
        for line_no, raw, rec in zip(numbers, raws, recs):  # noqa: B905 (the three are as long)
            if rec is None:  # msgspec refused it: the exact path repairs, counts or skips it
                exact(raw, line_no, out)
                continue
            try:
                rtype = rec.type
                if rtype == "assistant":
                    message = rec.message
                    if message is None or compact:
                        continue
                    content = message.content
                    if type(content) is list and len(content) == 1:  # how Claude Code writes a reply
                        block = content[0]
                        text = block.text
                        if text is None or block.type != "text":
                            continue
                    elif type(content) is str:
                        text = content
                    elif isinstance(content, list) and content:
                        texts = [b.text for b in content if b.type == "text" and b.text is not None]
                        if texts and message.model != "<synthetic>" and rec.isApiErrorMessage is not True:
                            turns(rec, raw, texts, line_no, out)
                        continue
                    else:
                        continue
                    if message.model == "<synthetic>" or rec.isApiErrorMessage is True:
                        continue
                    if not fast or rec.isSidechain is True:
                        turns(rec, raw, [text], line_no, out)
                        fast = inline and bool(self.cwd)
                        continue
                    if not ascii and not raw.isascii() and not _valid_utf8(raw):
                        exact(raw, line_no, out)  # bad bytes: repaired and counted there
                        continue
                    # one text block, valid UTF-8, the state in memory: _assistant_turns inline
                    stripped = text.strip()
                    if stripped:
                        owner = message.id or rec.uuid
                        if owner:
                            if owner not in blocks:
                                blocks[owner] = text
                            elif not new_block(owner, text):
                                continue
                        out.append(Turn("assistant", stripped, file, line_no, rec.uuid, rec.timestamp, prose))
                        chars += len(stripped)
                elif not main:
                    continue
                elif rtype == "user":
                    message = rec.message
                    if message is None or rec.isSidechain is True:
                        continue
                    content = message.content
                    if type(content) is str:  # a prompt, a command, an interrupt or harness text
                        if rec.toolUseResult:
                            continue
                        role, kind, text = classify(content)
                        if (
                            role != PERSON
                            or rec.isMeta is True
                            or rec.isCompactSummary is True
                            or rec.isVisibleInTranscriptOnly is True
                        ):  # _harness, inline
                            continue
                        if not ascii and not raw.isascii() and not _valid_utf8(raw):
                            exact(raw, line_no, out)
                            continue
                        if not fast or kind == "interrupt" or state.queued_any:
                            self._person_one(kind, text, rec, raw, line_no, out)
                            fast = inline and bool(self.cwd)
                            continue
                        # a prompt or a command, the state in memory, nothing queued: _person_one inline
                        ts = rec.timestamp
                        if ts is not None:
                            if ts not in persons:
                                persons[ts] = text
                            elif not new_person(ts, text):
                                continue
                        out.append(Turn("person", text, file, line_no, rec.uuid, ts, kind))
                        chars += len(text)
                    elif (
                        type(content) is list
                        and len(content) == 1
                        and content[0].type == "tool_result"
                        and content[0].is_error is not True
                    ):
                        continue  # a tool's output, the most common user record
                    else:
                        user(rec, raw, line_no, out)
                elif rtype == "queue-operation":
                    self._queued_rec(raw, line_no, out)
            except Exception:  # an odd record must never stop the digest
                stats.skipped_lines += 1
                stats.malformed += 1
        stats.chars += chars

    def _decoded(
        self,
        numbers: Sequence[int],
        raws: Sequence[bytes],
    ) -> tuple[Sequence[int], Sequence[bytes], list[_Record | None]]:
        """The lines worth decoding and their records (None where msgspec refuses the line).

        A line over :data:`_CHECKED_LINE` bytes is left out unless :func:`needed` keeps it (a short one
        costs msgspec less than the byte test would). The lines are decoded by ``map`` in C; a line that
        raises leaves the records before it in the list (``list.extend`` keeps what it took), a None
        stands for it, and decoding goes on with the next line.
        """
        if self.cheap and raws and max(map(len, raws)) > _CHECKED_LINE:
            kept = [len(raw) <= _CHECKED_LINE or needed(raw, 0, len(raw)) for raw in raws]
            numbers, raws = list(compress(numbers, kept)), list(compress(raws, kept))
        recs: list[_Record | None] = []
        decoding = map(_decode_record, raws)
        while True:
            try:
                recs.extend(decoding)
                return numbers, raws, recs
            except _NOT_DECODED:
                recs.append(None)

    def _queued_rec(self, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """Text typed while the agent was busy (:func:`records.pieces` of a queue operation)."""
        try:
            rec = _decode_queued(raw)
        except _NOT_DECODED:
            self.exact(raw, line_no, out)
            return
        if rec.operation not in ("enqueue", "popAll") or rec.content is None:
            return  # other operations hold no person's text
        person = []
        for text, _path in records.queue_texts({"content": rec.content}):
            role, kind, cleaned = records.classify_user_text(text)
            if role == records.PERSON and kind != "interrupt":
                person.append(cleaned)
        if not person:
            return
        if not raw.isascii() and not _valid_utf8(raw):
            self.exact(raw, line_no, out)
            return
        self._queued_text("\n\n".join(person), rec.timestamp, rec.uuid, rec.cwd, line_no, out)

    def _assistant_turns(
        self, rec: _Record, raw: bytes, texts: list[str], line_no: int, out: list[Turn]
    ) -> None:
        """The turns of an assistant record's text blocks, each kept once per ``(message.id, text)``
        (a line with bad bytes goes to the exact path, which repairs and counts it)."""
        if not raw.isascii() and not _valid_utf8(raw):
            self.exact(raw, line_no, out)
            return
        message = rec.message
        kind = "subagent" if self.kind == "subagent" or rec.isSidechain is True else "text"
        uuid, ts = rec.uuid, rec.timestamp
        owner = message.id or uuid or None  # type: ignore[union-attr]
        state, file = self.state, self.file
        for raw_text in texts:
            text = raw_text.strip()
            if not text:
                continue
            if owner is not None and not state.new_block(owner, raw_text):
                continue
            if not self.cwd:
                self._note_cwd(rec, raw)
            out.append(Turn("assistant", text, file, line_no, uuid, ts, kind))
            self.stats.chars += len(text)

    def _user_rec(self, rec: _Record, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """A user record's person text (:func:`records.pieces` for the shapes that hold it), or the
        exact path for a record whose tool result may be a rejection."""
        if rec.isSidechain is True or rec.message is None:
            return
        content = rec.message.content
        if isinstance(content, str):
            texts: list[str] = [content]
        elif content is None:
            return
        else:
            texts = []
            for block in content:
                btype = block.type
                if btype == "text":
                    if block.text is not None:
                        texts.append(block.text)
                elif (
                    btype == "tool_result"
                    and block.is_error is True
                    and block.content
                    and _may_be_rejection(block.content)
                ):
                    self.exact(raw, line_no, out)  # a rejected tool call: the exact path finds the reason
                    return
            if not texts:
                return
        if rec.toolUseResult:
            return  # tool output, never a person's
        person = []
        for text in texts:
            role, kind, cleaned = records.classify_user_text(text)
            if role == records.PERSON:
                person.append((kind, cleaned))
        if person and not _harness(rec):
            if not raw.isascii() and not _valid_utf8(raw):
                self.exact(raw, line_no, out)
                return
            kind, text = _one_person(person)
            self._person_one(kind, text, rec, raw, line_no, out)

    # -- the exact path --------------------------------------------------------------------------

    def exact(self, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """Decode one line in full with ``orjson`` (repairing or refusing it as ``decode_line`` does)
        and append its turns to ``out``."""
        stats = self.stats
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if len(raw) > _SMALL:
            raw = drop_big_strings(raw)
        try:  # the common case inline; decode_line repairs or refuses the rest
            obj = orjson.loads(raw)
            error = None if type(obj) is dict else "?"
        except orjson.JSONDecodeError:
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
                return
        try:
            self.record(obj, line_no, out)
        except Exception:  # an odd record must never stop the digest
            stats.skipped_lines += 1
            stats.malformed += 1

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

    def _turn(self, role: Role, text: str, obj: dict[str, Any], line_no: int, kind: str) -> Turn:
        return self._make(role, text, obj.get("timestamp"), obj.get("uuid"), obj.get("cwd"), line_no, kind)

    def _make(self, role: Role, text: str, ts: Any, uuid: Any, cwd: Any, line_no: int, kind: str) -> Turn:
        if not self.cwd:
            self.cwd = cwd if isinstance(cwd, str) else ""
        self.stats.chars += len(text)
        return Turn(
            role,
            text,
            self.file,
            line_no,  # type: ignore[arg-type]
            uuid if isinstance(uuid, str) else None,
            ts if isinstance(ts, str) else None,
            kind,
        )

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
        # records.block_key for a text block: "<message.id or uuid>:text:<hash of the text>"
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
            if owner is not None and not state.new_block(owner, raw_text):
                continue
            out.append(self._turn("assistant", text, obj, line_no, kind))

    def _user(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        if obj.get("isSidechain") is True:
            return
        person = [(p.kind, p.text) for p in records.pieces(obj) if p.role == "person"]
        if person:
            self._person(person, obj, line_no, out)

    def _person(
        self, person: list[tuple[str, str]], obj: dict[str, Any], line_no: int, out: list[Turn]
    ) -> None:
        """The turn of a decoded person's record from its person pieces ``(kind, text)``."""
        kind, text = _one_person(person)
        self._person_one(kind, text, obj, None, line_no, out)

    def _person_one(
        self, kind: str, text: str, rec: Any, raw: bytes | None, line_no: int, out: list[Turn]
    ) -> None:
        """The turn of a person's record (``rec`` a :class:`_Record` with its ``raw`` line, or a dict):
        kept once per timestamp and text, and not again when it was queued while the agent was busy.
        An interrupt marker is kept only with ``interrupts``."""
        if raw is None:
            ts, uuid = rec.get("timestamp"), rec.get("uuid")
            ts = ts if isinstance(ts, str) else None
            uuid = uuid if isinstance(uuid, str) else None
        else:
            ts, uuid = rec.timestamp, rec.uuid
        if kind == "interrupt":
            if self.interrupts:
                if not self.cwd:
                    self._note_cwd(rec, raw)
                out.append(Turn("person", text, self.file, line_no, uuid, ts, "interrupt"))
                self.stats.chars += len(text)
            return
        state = self.state
        if ts is not None:
            persons = state.persons
            if state.hashed or ts in persons:
                if not state.new_person(ts, text):
                    return  # the same record rewritten with a new uuid
            else:
                persons[ts] = text
        if state.hashed or state.queued_any:
            queued = state.key("q", "", text)
            if state.has(queued):
                state.discard(queued)  # typed while busy: already kept where it was queued
                return
        if not self.cwd:
            self._note_cwd(rec, raw)
        out.append(Turn("person", text, self.file, line_no, uuid, ts, kind))
        self.stats.chars += len(text)

    def _note_cwd(self, rec: Any, raw: bytes | None) -> None:
        """The session's working directory: the first ``cwd`` of a kept record (read from the line
        when it comes to that, so the fast path decodes no ``cwd`` per line)."""
        if self.cwd:
            return
        if raw is None:
            cwd = rec.get("cwd")
        else:
            try:
                cwd = _decode_cwd(raw).cwd
            except _NOT_DECODED:
                cwd = None
        self.cwd = cwd if isinstance(cwd, str) else ""

    def _queued(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        person = [p for p in records.pieces(obj) if p.role == "person" and p.kind != "interrupt"]
        if person:
            self._queued_text(
                "\n\n".join(p.text for p in person),
                obj.get("timestamp"),
                obj.get("uuid"),
                obj.get("cwd"),
                line_no,
                out,
            )

    def _queued_text(self, text: str, ts: Any, uuid: Any, cwd: Any, line_no: int, out: list[Turn]) -> None:
        """The turn of text typed while the agent was busy, kept once (until it arrives as a prompt)."""
        key = self.state.key("q", "", text)
        if self.state.has(key):
            return
        self.state.add(key)
        self.state.queued_any = True
        out.append(self._make("person", text, ts, uuid, cwd, line_no, "queued"))


def _one_person(person: list[tuple[str, str]]) -> tuple[str, str]:
    """The ``(kind, text)`` of a person's record from its pieces: the pieces' text joined (interrupt
    markers left out unless there is nothing else), a rejection or a command before a prompt."""
    if len(person) == 1:
        kind, text = person[0]
        return (kind if kind in ("interrupt", "rejection", "command") else "prompt"), text
    kinds = [k for k, _ in person]
    if all(k == "interrupt" for k in kinds):
        return "interrupt", person[0][1]
    text = "\n\n".join([t for k, t in person if k != "interrupt"])
    return ("rejection" if "rejection" in kinds else "command" if "command" in kinds else "prompt"), text


def _keep(buf: bytes, start: int, end: int) -> bool:
    """The fast path's filter for a line ``buf[start:end]``: a short line is decoded (msgspec skips it
    faster than the byte test could), a long one only when :func:`needed` says it may hold kept text."""
    return end - start <= _CHECKED_LINE or needed(buf, start, end)


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
    digester = _Digester(file, kind, state or DigestState(), stats, interrupts)
    lines = list(lines)
    stats.bytes += sum(len(raw) + 1 for _, _, raw in lines)
    stats.lines += len(lines)
    out: list[Turn] = []
    digester.pairs([(line_no, raw) for line_no, _, raw in lines], out)
    return out


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

    ``cheap=False`` decodes every line in full with ``orjson`` (:meth:`_Digester.exact`) instead of
    taking the fast path: the reference the fast path is checked against.

    Raises :class:`~dreamtui.core.errors.TranscriptError` when the file cannot be read.
    """
    path = path if isinstance(path, Path) else Path(path)
    if cheap:
        data = read_small_transcript(path, min(_WHOLE_FILE, max_line))
        if data is not None:  # no line can be over max_line: the file is not
            return _digest_whole(path, data, kind, interrupts, state)
    stats = DigestStats()
    digester = _Digester(
        str(path), kind or kind_of(path), state or DigestState(), stats, interrupts, cheap=cheap
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
    tf = describe(path, scanner.head if cheap else None)
    _finish_stats(stats, scanner.oversized, scanner.partial, scanner.offset, scanner.line)
    return Digest(
        session=tf.session, project=tf.project, files=[str(path)], turns=turns, stats=stats, cwd=digester.cwd
    )


def _digest_whole(
    path: Path, data: bytes, kind: FileKind | None, interrupts: bool, state: DigestState | None
) -> Digest:
    """:func:`digest_file` of a file read whole (``data``): its lines cut by ``io.BytesIO`` in C, one
    ASCII check for all of them, the path parsed once."""
    tf = describe(path, data)
    name = str(path)
    stats = DigestStats()
    digester = _Digester(name, kind or tf.kind, state or DigestState(), stats, interrupts)
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
    tailer = tailer or Tailer(ledger)
    tf = describe(Path(path))
    read = tailer.read(path, project or tf.project, session or tf.session, max_bytes=max_bytes, keep=_keep)
    state = DigestState(lookup=_ledger_lookup(ledger, read.path))
    stats = DigestStats()
    digester = _Digester(str(path), kind or tf.kind, state, stats, interrupts)
    turns: list[Turn] = []
    digester.pairs([(line_no, raw) for line_no, _, raw in read.lines], turns)
    _finish_stats(stats, read.oversized, read.partial, read.bytes_read, read.end_line - read.start_line)
    if commit:
        persist(ledger, tailer, read, state, stats)
    digest = Digest(
        session=read.session,
        project=read.project,
        files=[str(path)],
        turns=turns,
        stats=stats,
        cwd=digester.cwd,
    )
    return digest, read, state
