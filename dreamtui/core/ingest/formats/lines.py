"""What every ``lines`` format shares: its records as :class:`~.protocol.SourceRecord` s.

A JSON-lines transcript's records are its lines: ``locator`` the line number, ``key`` the same
(a line never moves in an appended file), ``raw`` the line's bytes, ``obj`` the decoded object (a
line that is no JSON object is left out, as the digest skips it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dreamtui.core.ingest.formats.protocol import SourceRecord
from dreamtui.core.ingest.tail import LineScanner, decode_line, open_transcript
from dreamtui.core.models import DigestStats


def json_lines_records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    """Each complete line of the JSON-lines file ``path`` that decodes to an object, in order (raises
    :class:`~dreamtui.core.errors.TranscriptError` when the file cannot be opened)."""
    with open_transcript(path) as fh:
        for line_no, _offset, raw in LineScanner(fh):
            obj, _error = decode_line(raw)
            if obj is not None:
                yield SourceRecord(line_no, str(line_no), raw, obj)


def decode_counted(raw: bytes, stats: DigestStats) -> dict[str, Any] | None:
    """One raw line decoded in full (repaired or refused as ``decode_line`` does), what happened
    counted in ``stats``: a repaired line is kept and counted, a refused one counted and None."""
    obj, error = decode_line(raw[:-1] if raw.endswith(b"\n") else raw)
    if error == "replaced":
        stats.replaced += 1
    if obj is None:
        stats.skipped_lines += 1
        if error == "invalid_utf8":
            stats.invalid_utf8 += 1
        elif error in ("malformed", "not_object"):
            stats.malformed += 1
    return obj
