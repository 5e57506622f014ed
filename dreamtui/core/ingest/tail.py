"""Read only what was appended to a transcript since the last read, with bounded memory.

A file is known by (device, inode, size, hash of its first bytes) plus a hash of the bytes just
before the stored offset. Truncation, replacement or inode reuse re-reads the file from 0, once.
A partial last line (no newline yet) is not consumed: it waits for its newline. Lines longer than
``max_line`` are skipped by scanning for the next newline, never held in memory.

The read and the commit are separate: :meth:`Tailer.read` returns a :class:`TailRead` and
:meth:`Tailer.commit` stores its offset inside ``ledger.write()``, so a caller can commit the offset
in the same transaction as what it made of the lines.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from dreamtui.core import clock
from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import NotRegularFile, open_regular, read_regular
from dreamtui.core.ledger import Ledger, offsets
from dreamtui.core.ledger.offsets import FileState
from dreamtui.core.text import without_surrogates

DEFAULT_MAX_LINE = 8 * 1024 * 1024
HEAD_BYTES = 4096
TAIL_BYTES = 1024
CHUNK = 1024 * 1024

Line = tuple[int, int, bytes]  # (1-based line number, byte offset of the line, raw bytes without \n)


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """How a file is known: device, inode, size when read, and a hash of its first bytes."""

    dev: int
    ino: int
    size: int
    head_hash: str  # "<n>:<hex>" = blake2b of the first n bytes
    mtime: float = 0.0


@dataclass(slots=True)
class TailRead:
    """The complete lines appended since the stored offset, and where reading stopped."""

    path: str
    project: str
    session: str
    identity: FileIdentity
    start_offset: int
    start_line: int
    end_offset: int = 0
    end_line: int = 0
    lines: list[Line] = field(default_factory=list)
    reset: bool = False
    reset_reason: str | None = None
    oversized: list[int] = field(default_factory=list)  # line numbers of skipped huge lines
    partial: bool = False  # a partial last line waits for its newline
    more: bool = False  # stopped at max_bytes: read again after committing
    tail_hash: str | None = None
    seen: tuple[Any, ...] | None = None  # the ledger row as read (optimistic concurrency check)
    records: bool = False  # a whole-file source's new records (``ingest.records``), not appended lines

    @property
    def bytes_read(self) -> int:
        """Bytes consumed by this read (complete lines only)."""
        return self.end_offset - self.start_offset


def _hash(data: bytes) -> str:
    return f"{len(data)}:{hashlib.blake2b(data, digest_size=16).hexdigest()}"


class LineScanner:
    """Iterate the complete lines of an open binary file from ``offset``, in chunks.

    After iteration: ``offset``/``line`` are just past the last complete line, ``oversized`` lists
    the line numbers of lines over ``max_line`` bytes (skipped without being held), ``partial``
    says a last line without newline was left, ``more`` that ``limit`` bytes were reached.
    ``keep`` (optional) filters the lines yielded (the others are still counted and consumed).
    """

    def __init__(
        self,
        fh: IO[bytes],
        offset: int = 0,
        line: int = 0,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        limit: int | None = None,
        end: int | None = None,
        keep: Callable[[bytes, int, int], bool] | None = None,
    ) -> None:
        self.keep = keep
        self.fh = fh
        self.offset = offset
        self.line = line
        self.max_line = max_line
        self.limit = limit
        self.end = end
        self.oversized: list[int] = []
        self.partial = False
        self.more = False
        self.head = b""
        self._at_end = False

    def _read(self, filepos: int) -> bytes:
        want = CHUNK if self.end is None else min(CHUNK, self.end - filepos)
        return self.fh.read(want) if want > 0 else b""

    def __iter__(self) -> Iterator[Line]:
        max_line, limit, keep = self.max_line, self.limit, self.keep
        start_offset = base = self.offset  # base: the file offset of buf[0]
        line_no = self.line
        self.fh.seek(base)
        filepos = base  # the file offset just past the bytes read so far
        buf = b""
        pos = 0  # buf[:pos] is consumed
        handed_out = False  # a line was yielded and the consumer has not come back yet
        try:
            while True:
                chunk = self._read(filepos)
                if not chunk:
                    self.partial = bool(buf)
                    return
                filepos += len(chunk)
                buf = buf + chunk if buf else chunk
                find = buf.find
                while True:
                    nl = find(b"\n", pos)
                    if nl < 0:
                        break
                    line_no += 1
                    if nl - pos > max_line:
                        self.oversized.append(line_no)
                    elif keep is None or keep(buf, pos, nl):
                        handed_out = True
                        yield (line_no, base + pos, buf[pos:nl])
                        handed_out = False
                    pos = nl + 1
                    if limit is not None and base + pos - start_offset >= limit:
                        self.more = True
                        return
                base += pos
                buf = buf[pos:] if pos else buf
                pos = 0
                if len(buf) > max_line:  # a huge line: read on to its newline without holding it
                    rest = self._skip_rest(filepos)
                    if rest is None:
                        self.partial = True
                        return
                    line_no += 1
                    self.oversized.append(line_no)
                    base = filepos = self.fh.tell() - len(rest)
                    self.fh.seek(base)  # re-read what followed the newline
                    buf = b""
                    if limit is not None and base - start_offset >= limit:
                        self.more = True
                        return
        finally:
            self.offset = base + pos
            self.line = line_no - 1 if handed_out else line_no

    def batches(self) -> Iterator[Iterable[tuple[int, bytes]]]:
        """The complete lines as :meth:`__iter__` finds them, one batch of ``(line number, raw)`` per
        chunk read, each ``raw`` still ending in its newline (:meth:`columns`, paired)."""
        for numbers, raws in self.columns():
            yield zip(numbers, raws, strict=True)

    def columns(self) -> Iterator[tuple[Sequence[int], list[bytes]]]:
        """The complete lines as :meth:`__iter__` finds them, one batch per chunk read: ``(line numbers,
        raws)``, each ``raw`` still ending in its newline, cut from the chunk by ``io.BytesIO`` in C with
        no search or slice per line in Python (the digest's fast path). ``head`` keeps the first chunk
        when reading from the start. Only without ``limit`` and ``keep``.

        A chunk is never copied: it is cut at its last newline (``BytesIO.truncate``) and the next
        read starts there. Consume each batch whole before asking for the next; if the consumer
        stops inside a batch, ``offset`` and ``line`` stay before that batch.
        """
        if self.limit is not None or self.keep is not None:
            raise ValueError("batches() reads without a limit and without a keep filter")
        fh, max_line = self.fh, self.max_line
        base = self.offset  # the file offset of the next line
        line_no = self.line
        fh.seek(base)
        try:
            while True:
                chunk = self._read_sized(base)
                if not chunk:
                    return
                if base == 0:
                    self.head = chunk
                end = chunk.rfind(b"\n") + 1  # chunk[:end] holds the complete lines
                if not end:  # one line longer than a chunk, or a partial line at the end
                    chunk, end = self._long_line(chunk, base)
                    if end < 0:  # over max_line: skipped up to its newline
                        line_no += 1
                        self.oversized.append(line_no)
                        base = fh.tell() - len(chunk)
                        fh.seek(base)
                        continue
                    if not end:
                        self.partial = True
                        return
                if len(chunk) > max_line:  # only then can a line of this batch be too long
                    parts = chunk[:end].split(b"\n")[:-1]
                    yield self._without_oversized(line_no + 1, parts)
                    line_no += len(parts)
                else:
                    lines = io.BytesIO(chunk)
                    if end < len(chunk):
                        lines.truncate(end)
                    raws = lines.readlines()
                    yield range(line_no + 1, line_no + 1 + len(raws)), raws
                    line_no += len(raws)
                base += end
                if end < len(chunk):
                    if self._at_end:  # the file ends with it: a partial line, waiting for its newline
                        self.partial = True
                        return
                    fh.seek(base)  # the partial last line is read again with the next chunk
        finally:
            self.offset = base
            self.line = line_no

    def _long_line(self, chunk: bytes, base: int) -> tuple[bytes, int]:
        """A chunk without a newline: read on. ``(lines, end)`` once a newline is found; ``(after, -1)``
        when the line passed ``max_line`` (skipped without being held; ``after``: the bytes read past
        its newline); ``(b"", 0)`` when the file ends first."""
        parts = [chunk]
        size = len(chunk)
        while True:
            if size > self.max_line:
                after = self._skip_rest(base + size)
                return (after, -1) if after is not None else (b"", 0)
            more = self._read_sized(base + size)
            if not more:
                return b"", 0
            parts.append(more)
            size += len(more)
            nl = more.rfind(b"\n")
            if nl >= 0:
                data = b"".join(parts)
                return data, size - len(more) + nl + 1

    def _read_sized(self, filepos: int) -> bytes:
        """The next chunk, asking for no more than the file holds (plus one byte, to see it grew):
        a 1 MB request for a 5 KB file costs more than reading the file. After a read that came
        back short (the end of the file), the next gives ``b""`` without a system call."""
        if self._at_end:
            return b""
        want = CHUNK if self.end is None else min(CHUNK, self.end - filepos)
        left = os.fstat(self.fh.fileno()).st_size - filepos
        if left < want:
            want = max(left, 0) + 1
        if want <= 0:
            return b""
        chunk = self.fh.read(want)
        self._at_end = len(chunk) < want
        return chunk

    def _without_oversized(self, first: int, parts: list[bytes]) -> tuple[list[int], list[bytes]]:
        """``(line numbers, raws + newline)`` of ``parts``; lines over ``max_line`` are counted in
        ``oversized`` and left out."""
        numbers, raws = [], []
        for line_no, raw in enumerate(parts, first):
            if len(raw) > self.max_line:
                self.oversized.append(line_no)
            else:
                numbers.append(line_no)
                raws.append(raw + b"\n")
        return numbers, raws

    def _skip_rest(self, filepos: int) -> bytes | None:
        """Read on to the end of a huge line; return the bytes after its newline (None at EOF).

        Reads into one reused buffer: skipping a gigabyte costs no allocation per chunk."""
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        while True:
            want = CHUNK if self.end is None else min(CHUNK, self.end - filepos)
            # every transcript is opened as a buffered binary file, which has readinto
            n = self.fh.readinto(view[:want]) if want > 0 else 0  # type: ignore[attr-defined]
            if not n:
                return None
            filepos += n
            nl = buf.find(b"\n", 0, n)
            if nl >= 0:
                return bytes(buf[nl + 1 : n])


BOM = b"\xef\xbb\xbf"


def decode_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """Decode one line: ``(record, None)``, ``(record, "replaced")`` or ``(None, reason)``.

    ``replaced``: the record was kept after a repair: a byte-order mark at its start removed (an
    editor's BOM on line 1), and/or bytes that are not UTF-8 decoded as U+FFFD; one bad byte never
    costs a person's whole record. ``reason`` for a line that cannot be used: ``empty``,
    ``invalid_utf8`` (bad bytes, and not JSON even after replacing them), ``malformed`` or
    ``not_object``. Never raises.
    """
    if not raw.strip():
        return None, "empty"
    try:
        obj = orjson.loads(raw)
        repaired = False
    except orjson.JSONDecodeError:
        obj, repaired, error = _decode_slow(raw)
        if error is not None:
            return None, error
    if not isinstance(obj, dict):
        return None, "not_object"
    return obj, "replaced" if repaired else None


def _decode_slow(raw: bytes) -> tuple[Any, bool, str | None]:
    """The path for lines ``orjson`` refuses: ``(value, repaired, error)``."""
    repaired = bad_bytes = False
    if raw.lstrip(b" \t").startswith(BOM):
        raw = raw.lstrip(b" \t")[len(BOM) :]
        repaired = True
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")  # each bad byte becomes U+FFFD, as the verifier reads it
        repaired = bad_bytes = True
    # JavaScript's JSON.stringify writes a lone surrogate (half an emoji cut by a slice) as
    # "\udcff", which orjson refuses: decode such a line anyway, the half becoming U+FFFD
    try:
        return _without_surrogates(json.loads(text)), repaired, None
    except (ValueError, RecursionError):
        return None, repaired, "invalid_utf8" if bad_bytes else "malformed"


def _without_surrogates(value: Any) -> Any:
    """``value`` (decoded JSON) with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def open_transcript(path: Path | str) -> IO[bytes]:
    """Open a transcript for reading, or raise :class:`TranscriptError` with a one-line reason.

    Only a regular file is opened, and never blockingly (:func:`files.open_regular`): a FIFO, a
    device such as ``/dev/zero`` or a socket is refused at once.
    """
    try:
        return open_regular(path)
    except OSError as exc:
        raise _open_error(Path(path), exc) from exc


def read_small_transcript(path: Path | str, limit: int = CHUNK) -> bytes | None:
    """The whole transcript when it holds at most ``limit`` bytes, else None (read it with a
    :class:`LineScanner`); raises :class:`TranscriptError` as :func:`open_transcript` does."""
    try:
        return read_regular(path, limit)
    except OSError as exc:
        raise _open_error(Path(path), exc) from exc


def _open_error(p: Path, exc: OSError) -> TranscriptError:
    """The one-line reason a transcript could not be opened."""
    if isinstance(exc, FileNotFoundError):
        return TranscriptError(f"no such transcript: {p} does not exist")
    if isinstance(exc, NotRegularFile):
        if exc.strerror and "a folder" in exc.strerror:
            return TranscriptError(f"{p} is a directory, not a transcript file")
        return TranscriptError(f"{p} is not a transcript file: {exc.strerror}")
    if isinstance(exc, IsADirectoryError):
        return TranscriptError(f"{p} is a directory, not a transcript file")
    return TranscriptError(f"cannot read transcript {p}: {exc.strerror or exc}")


def file_key(path: Path | str) -> str:
    """The key of a file in the ledger ``files`` table: its absolute path."""
    return os.path.abspath(os.fspath(path))


def _read_at(fh: IO[bytes], offset: int, n: int) -> bytes:
    fh.seek(offset)
    return fh.read(n)


class Tailer:
    """Incremental reader of transcript files whose offsets live in the ledger ``files`` table."""

    def __init__(
        self, ledger: Ledger, *, max_line: int = DEFAULT_MAX_LINE, max_bytes: int | None = None
    ) -> None:
        self.ledger = ledger
        self.max_line = max_line
        self.max_bytes = max_bytes

    def state(self, path: Path | str) -> FileState | None:
        """The stored ``files`` row of ``path``, or None when it was never committed."""
        return offsets.file_state(self.ledger, file_key(path))

    def read(
        self,
        path: Path | str,
        project: str = "",
        session: str = "",
        *,
        max_bytes: int | None = None,
        keep: Callable[[bytes, int, int], bool] | None = None,
    ) -> TailRead:
        """Read the complete lines after the stored offset (at most ``max_bytes`` bytes of them).

        ``keep(buf, start, end)`` (optional) says which lines to return; the others are consumed
        without being copied (e.g. the transcript format's ``keep``). Re-reads from 0 when the
        file was truncated, replaced, or its inode reused. Raises :class:`TranscriptError` when the
        file cannot be opened.
        """
        key = file_key(path)
        limit = max_bytes if max_bytes is not None else self.max_bytes
        row = self.state(key)
        with open_transcript(path) as fh:
            st = os.fstat(fh.fileno())
            size = st.st_size
            head = _read_at(fh, 0, min(HEAD_BYTES, size))
            offset, line, reason = 0, 0, None
            if row is not None:
                offset, line, reason = self._resume_point(fh, row, st.st_dev, st.st_ino, size)
            identity = FileIdentity(st.st_dev, st.st_ino, size, _hash(head), st.st_mtime)
            scanner = LineScanner(fh, offset, line, max_line=self.max_line, limit=limit, end=size, keep=keep)
            lines = list(scanner)
            tail_hash = None
            if scanner.offset > 0:
                n = min(TAIL_BYTES, scanner.offset)
                tail_hash = _hash(_read_at(fh, scanner.offset - n, n))
        seen = None if row is None else row.seen
        return TailRead(
            path=key,
            project=project or (row.project if row else ""),
            session=session or (row.session if row else ""),
            identity=identity,
            start_offset=offset,
            start_line=line,
            end_offset=scanner.offset,
            end_line=scanner.line,
            lines=lines,
            reset=reason is not None,
            reset_reason=reason,
            oversized=scanner.oversized,
            partial=scanner.partial,
            more=scanner.more,
            tail_hash=tail_hash,
            seen=seen,
        )

    @staticmethod
    def _resume_point(
        fh: IO[bytes], row: FileState, dev: int, ino: int, size: int
    ) -> tuple[int, int, str | None]:
        """Where to continue: ``(offset, line, None)``, or ``(0, 0, reason)`` for a re-read."""
        offset = int(row.offset or 0)
        if row.dev != dev or row.ino != ino:
            return 0, 0, "replaced"
        if size < offset:
            return 0, 0, "truncated"
        stored_head = row.head_hash or ""
        n_text, _, _ = stored_head.partition(":")
        if n_text.isdigit():
            n = int(n_text)
            if size < n or _hash(_read_at(fh, 0, n)) != stored_head:
                return 0, 0, "rewritten"
        stored_tail = row.tail_hash or ""
        t_text, _, _ = stored_tail.partition(":")
        if t_text.isdigit() and offset > 0:
            t = int(t_text)
            if t > offset or _hash(_read_at(fh, offset - t, t)) != stored_tail:
                return 0, 0, "rewritten"
        return offset, int(row.lines or 0), None

    def commit(self, read: TailRead, *, skipped: int = 0) -> bool:
        """Store where ``read`` stopped (inside ``ledger.write()``; joins an outer transaction).

        ``skipped``: lines the caller could not use (malformed, invalid UTF-8), added to the
        oversized lines the read skipped. Returns False, storing nothing, when another reader
        committed this file since ``read`` was made (its lines must not be used twice).
        """
        ident = read.identity
        with self.ledger.write():
            if offsets.seen(self.ledger, read.path) != read.seen:
                return False
            offsets.store_read(
                self.ledger,
                path=read.path,
                project=read.project,
                session=read.session,
                dev=ident.dev,
                ino=ident.ino,
                size=ident.size,
                head_hash=ident.head_hash,
                tail_hash=read.tail_hash,
                offset=read.end_offset,
                lines=read.end_line,
                skipped=len(read.oversized) + skipped,
                reset=read.reset,
                mtime=ident.mtime,
                now=clock.now_iso(),
            )
        return True
