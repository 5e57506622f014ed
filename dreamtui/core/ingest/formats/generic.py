"""The digest of a format that has no hand-tuned fast path: turns made from the format's own
:meth:`~.protocol.TranscriptFormat.pieces`.

A ``records`` format (a JSON document, a SQLite row, a markdown block) gets its digest here for free,
and so does a ``lines`` format at first: each decoded record's pieces are read, the person's words
(not an interrupt marker unless asked for) and the assistant's prose (``text`` pieces, never
``thinking``) kept, tool output and metadata dropped, as the format's provenance says. Duplicates are
kept once through the digest's :class:`~dreamtui.core.ingest.digest.DigestState`: a person's words by
(time, text), an assistant's by (record id, text).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from dreamtui.core.ingest.formats.protocol import FileKind, Piece, RecordRef
from dreamtui.core.ingest.tail import decode_line
from dreamtui.core.models import DigestStats, Turn

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState


class PiecesDigester:
    """A :class:`~.protocol.LineDigester` built from a format's ``pieces`` and ``ref``."""

    def __init__(
        self,
        pieces: Callable[[Any], list[Piece]],
        ref: Callable[[dict[str, Any]], RecordRef],
        file: str,
        kind: FileKind,
        state: DigestState,
        stats: DigestStats,
        interrupts: bool,
    ) -> None:
        self.pieces, self.ref = pieces, ref
        self.file, self.kind, self.state, self.stats = file, kind, state, stats
        self.interrupts = interrupts
        self.cwd = ""

    def lines(
        self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool = False
    ) -> None:
        """Each line the exact way (there is no fast path here)."""
        for line_no, raw in zip(numbers, raws, strict=True):
            self.exact(raw, line_no, out)

    def exact(self, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """Decode one JSON line (repaired or refused as ``decode_line`` does) and digest its record."""
        stats = self.stats
        raw = raw[:-1] if raw.endswith(b"\n") else raw
        try:
            obj: Any = orjson.loads(raw)
            error = None if type(obj) is dict else "?"
        except orjson.JSONDecodeError:
            error = "?"
        if error is not None:
            obj, error = decode_line(raw)
            if error == "replaced":
                stats.replaced += 1
            elif obj is None:
                stats.skipped_lines += 1
                if error == "invalid_utf8":
                    stats.invalid_utf8 += 1
                elif error in ("malformed", "not_object"):
                    stats.malformed += 1
                return
        self.record(obj, line_no, out)

    def record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        """The turns of one decoded record; an odd record is counted and skipped, never raised."""
        try:
            self._record(obj, line_no, out)
        except Exception:
            self.stats.skipped_lines += 1
            self.stats.malformed += 1

    def _record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        where = self.ref(obj)
        if not self.cwd and where.cwd:
            self.cwd = where.cwd
        if self.kind == "compact":
            return
        person: list[Piece] = []
        for piece in self.pieces(obj):
            if piece.role == "assistant" and piece.kind == "text":
                self._assistant(piece.text, where, line_no, out)
            elif (
                piece.role == "person"
                and self.kind == "main"
                and not where.sidechain
                and (piece.kind != "interrupt" or self.interrupts)
            ):
                person.append(piece)
        if person:
            text = "\n\n".join(p.text for p in person if p.kind != "interrupt") or person[0].text
            kind = person[0].kind if len(person) == 1 else "prompt"
            if where.timestamp and not self.state.new_person(where.timestamp, text):
                return
            out.append(Turn("person", text, self.file, line_no, where.uuid, where.timestamp, kind))
            self.stats.chars += len(text)

    def _assistant(self, raw_text: str, where: RecordRef, line_no: int, out: list[Turn]) -> None:
        text = raw_text.strip()
        if not text:
            return
        if where.uuid and not self.state.new_block(where.uuid, raw_text):
            return
        kind = "subagent" if self.kind == "subagent" or where.sidechain else "text"
        out.append(Turn("assistant", text, self.file, line_no, where.uuid, where.timestamp, kind))
        self.stats.chars += len(text)
