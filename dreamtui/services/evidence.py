"""The raw transcript around a verified quote, as the evidence window shows it: records before and after.

Reads only the lines it shows (a bounded window of the raw transcript), decodes each with the one line
decoder (:func:`~dreamtui.core.ingest.tail.decode_line`, as the digest and the verifier read it) and
has the transcript format say what each record is and whose words its texts are
(:meth:`~dreamtui.core.ingest.formats.protocol.TranscriptFormat.render`), the format of that file
(``formats.format_for``). Secrets in the raw text are
redacted (:func:`dreamtui.core.secrets.redact`) before anything is shown. The front ends draw what
this returns (:class:`~dreamtui.core.models.RawRecord`); they never read a transcript themselves.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from dreamtui.core.files import open_regular
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.protocol import TranscriptFormat, split_address
from dreamtui.core.ingest.tail import decode_line
from dreamtui.core.models import RawRecord
from dreamtui.core.secrets import redact

MAX_LINE_BYTES = 256 * 1024
"""A longer line is shown as a placeholder that says its size."""


def read_window(path: Path, line: int, before: int = 4, after: int = 4) -> list[RawRecord]:
    """The records on lines ``line-before .. line+after`` (1-based) of ``path``; for a whole-file
    source (a ``records`` format; ``path`` may be ``<file>#<session>``) the records whose locators
    are there."""
    fmt = formats.format_for(path)
    start = max(1, line - before)
    if fmt.layout == "records":
        return _records_window(path, fmt, start, line + after)
    out: list[RawRecord] = []
    with open_regular(path) as fh:  # never a FIFO or a device: the app must not freeze
        for no, raw in enumerate(itertools.islice(fh, start - 1, line + after), start=start):
            out.append(_render_line(no, raw, fmt))
    return out


def _records_window(address: Path, fmt: TranscriptFormat, first: int, last: int) -> list[RawRecord]:
    """The records of a whole-file source with locators ``first..last``, rendered and redacted."""
    file, member = split_address(address)
    out: list[RawRecord] = []
    for rec in fmt.records(file, member):
        if first <= rec.locator <= last:
            if len(rec.raw) > MAX_LINE_BYTES:
                out.append(_oversized(rec.locator, len(rec.raw)))
                continue
            shown = fmt.render(rec.locator, rec.obj)
            shown.texts = [(role, redact(text)) for role, text in shown.texts]
            out.append(shown)
        elif rec.locator > last:
            break
    return out


def _oversized(no: int, size: int) -> RawRecord:
    return RawRecord(no, "?", "", [("meta", f"({size:,} bytes: too long to show)")], oversized=True)


def raw_record(no: int, raw: bytes, source: Path | str | None = None) -> RawRecord:
    """Line ``no`` of the transcript ``source`` (its format reads it; Claude Code's when None) as the
    evidence window shows it (:func:`_render_line`)."""
    return _render_line(no, raw, formats.format_for(source) if source is not None else None)


def _render_line(no: int, raw: bytes, fmt: TranscriptFormat | None) -> RawRecord:
    """Line ``no`` as the evidence window shows it, its texts redacted; a huge, broken or non-object
    line becomes a short placeholder record."""
    if len(raw) > MAX_LINE_BYTES:
        return _oversized(no, len(raw))
    obj, error = decode_line(raw)
    if obj is None:
        if error == "not_object":
            return RawRecord(no, "?", "", [("meta", "(not a record)")], broken=True)
        text = raw.decode("utf-8", errors="replace")
        return RawRecord(no, "?", "", [("meta", redact(f"(not JSON) {text}"))], broken=True)
    rec = (fmt or formats.named(formats.FALLBACK)).render(no, obj)
    rec.texts = [(role, redact(text)) for role, text in rec.texts]
    return rec
