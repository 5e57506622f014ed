"""The SQLite ledger, where all of dreamtui's SQL lives: one module per group of tables, each with named
reads and writes that take the :class:`Ledger` and return typed rows (dataclasses).

- :mod:`.db`: the connection (:class:`Ledger`: WAL, ``BEGIN IMMEDIATE`` writes through
  :meth:`Ledger.write`, one connection per thread) and the redaction of every statement parameter;
- :mod:`.schema`: the schema and its migrations;
- :mod:`.offsets` (``files``, ``seen_blocks``), :mod:`.extractions`, :mod:`.candidates`
  (``candidates``, ``candidate_edits``), :mod:`.decisions`, :mod:`.intents` (``memory_intents``),
  :mod:`.cycles` (``dream_cycles``), :mod:`.briefings`, :mod:`.generated` (``generated_writes``),
  :mod:`.batches`, :mod:`.promotions`, :mod:`.outside` (``outside_items``), :mod:`.project_folders`
  (which project a transcript folder belongs to).

A write function joins the caller's transaction: ``with ledger.write(): ...`` makes several of them
one. No secret is ever stored: every text parameter of every statement passes through the one
redaction (:func:`dreamtui.core.secrets.redact`) on its way in (:class:`RedactingConnection`).
"""

from __future__ import annotations

from dreamtui.core.ledger.candidates import candidate_to_row, row_to_candidate
from dreamtui.core.ledger.db import (
    OPEN_WAIT_SECONDS,
    Ledger,
    RedactingConnection,
    RedactingCursor,
    stored_text,
)
from dreamtui.core.ledger.extractions import record_extraction, record_failed_extraction
from dreamtui.core.ledger.folders import open_ledger
from dreamtui.core.ledger.schema import ADDED_COLUMNS, SCHEMA, SCHEMA_VERSION

__all__ = [
    "open_ledger",
    "ADDED_COLUMNS",
    "OPEN_WAIT_SECONDS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "Ledger",
    "RedactingConnection",
    "RedactingCursor",
    "candidate_to_row",
    "record_extraction",
    "record_failed_extraction",
    "row_to_candidate",
    "stored_text",
]
