"""What every ``lines`` format shares: its records as :class:`~.protocol.SourceRecord` s.

A JSON-lines transcript's records are its lines: ``locator`` the line number, ``key`` the same
(a line never moves in an appended file), ``raw`` the line's bytes, ``obj`` the decoded object (a
line that is no JSON object is left out, as the digest skips it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from dreamtui.core.ingest.formats.protocol import SourceRecord
from dreamtui.core.ingest.tail import LineScanner, decode_line, open_transcript


def json_lines_records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    """Each complete line of the JSON-lines file ``path`` that decodes to an object, in order (raises
    :class:`~dreamtui.core.errors.TranscriptError` when the file cannot be opened)."""
    with open_transcript(path) as fh:
        for line_no, _offset, raw in LineScanner(fh):
            obj, _error = decode_line(raw)
            if obj is not None:
                yield SourceRecord(line_no, str(line_no), raw, obj)
