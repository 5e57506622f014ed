"""Change detection for whole-file sources (a ``records`` format): what is new since the last read.

A JSON document rewritten as the session grows, a SQLite database, a markdown file: byte offsets mean
nothing there. Each record the format reads (:class:`~.formats.protocol.SourceRecord`) is known by its
**record key** (:func:`record_key`: the format's ``key`` and a hash of its ``raw`` bytes), kept in the
ledger's ``seen_blocks`` under the session's address once the record is dreamed. A read gives only
the records whose key is not there: nothing is dreamed twice, and a record changed by a rewrite (same
``key``, new bytes) is new again, so nothing is missed. A source the format cannot parse as a whole (a
JSON document half written) raises :class:`~dreamtui.core.errors.TranscriptError` in the format's
``records``: nothing of it is read, and the next cycle tries again.

The ledger's ``files`` row of such a source counts, in place of offsets, the bytes and the records
dreamed so far (``offset`` the sum of the new records' ``raw`` lengths, ``lines`` their number), so
the cycle's bookkeeping (dreamed, quiet, ranges) reads the same for every format.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from dreamtui.core.errors import TranscriptError
from dreamtui.core.ingest.formats.protocol import SourceRecord, TranscriptFormat, split_address
from dreamtui.core.ingest.tail import FileIdentity, TailRead, file_key
from dreamtui.core.ledger import Ledger, offsets

RECORD_PREFIX = "r:"
"""Record keys in ``seen_blocks`` start so (the digest's own dedup keys start ``a:``, ``p:``, ``q:``)."""


def record_key(rec: SourceRecord) -> str:
    """``r:<key>:<hash of raw>``: equal for the same record with the same bytes, across rewrites."""
    digest = hashlib.blake2b(rec.raw, digest_size=10).hexdigest()
    return f"{RECORD_PREFIX}{rec.key}:{digest}"


def address_key(address: Path | str) -> str:
    """The ledger key of a session's address: the absolute path, ``#<member>`` kept."""
    path, member = split_address(address)
    key = file_key(path)
    return f"{key}#{member}" if member else key


def read_new(
    ledger: Ledger, address: Path | str, fmt: TranscriptFormat, project: str = "", session: str = ""
) -> tuple[TailRead, list[SourceRecord], list[str]]:
    """The records of ``address`` not seen yet: ``(read, records, their keys)``. The read is a
    :class:`TailRead` whose offsets count bytes and records (module docstring); its ``lines`` are
    ``(locator, 0, raw)``. Raises :class:`TranscriptError` when the source cannot be read or parsed."""
    path, member = split_address(address)
    key = address_key(address)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror or exc}") from exc
    found = list(fmt.records(path, member))
    fresh: list[SourceRecord] = []
    keys: list[str] = []
    taken: set[str] = set()
    for rec in found:
        rkey = record_key(rec)
        if rkey in taken or offsets.block_seen(ledger, key, rkey):
            continue
        taken.add(rkey)
        fresh.append(rec)
        keys.append(rkey)
    row = offsets.file_state(ledger, key)
    start, start_line = (row.offset, row.lines) if row is not None else (0, 0)
    identity = FileIdentity(st.st_dev, st.st_ino, st.st_size, "records", st.st_mtime)
    read = TailRead(
        path=key,
        project=project,
        session=session,
        identity=identity,
        start_offset=start,
        start_line=start_line,
        end_offset=start + sum(len(r.raw) for r in fresh),
        end_line=start_line + len(fresh),
        lines=[(r.locator, 0, r.raw) for r in fresh],
        seen=row.seen if row is not None else None,
        records=True,
    )
    return read, fresh, keys
