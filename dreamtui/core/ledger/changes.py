"""Has the ledger changed? A cheap question asked about once a second by an open app, so that it
follows what another process decides (a second app, ``dreamtui accept``, a CLI dream) without a key.

``data_version`` changes when any other connection commits (SQLite's ``PRAGMA data_version``, per
connection: ask it on one connection, the follower thread's own); :func:`mark` then says whether what a
person sees changed (queue, decisions, cycles, briefings, outside changes, consolidations), so a commit
that changed nothing shown is not a reason to read every screen again.
"""

from __future__ import annotations

from dreamtui.core.ledger.db import Ledger

MARK_SQL = """
SELECT
  (SELECT COUNT(*) FROM candidates),
  (SELECT COALESCE(SUM(status = 'pending'), 0) FROM candidates),
  (SELECT COUNT(*) FROM decisions),
  (SELECT COUNT(*) FROM decision_journal),
  (SELECT COALESCE(SUM(undone), 0) FROM decision_journal),
  (SELECT COUNT(*) FROM dream_cycles),
  (SELECT COALESCE(SUM(status = 'running'), 0) FROM dream_cycles),
  (SELECT COALESCE(MAX(completed_at), '') FROM dream_cycles),
  (SELECT COALESCE(SUM(status = 'failed'), 0) FROM dream_cycles),
  (SELECT COUNT(*) FROM briefings),
  (SELECT COALESCE(SUM(status = 'pending'), 0) FROM briefings),
  (SELECT COUNT(*) FROM outside_items),
  (SELECT COALESCE(SUM(status = 'pending'), 0) FROM outside_items),
  (SELECT COUNT(*) FROM consolidations),
  (SELECT COALESCE(SUM(status = 'pending'), 0) FROM consolidations)
"""


def data_version(ledger: Ledger) -> int:
    """SQLite's ``data_version`` on this thread's connection: it changes when another connection commits."""
    row = ledger.one("PRAGMA data_version")
    return int(row[0]) if row else 0


def mark(ledger: Ledger) -> tuple[object, ...]:
    """What a person sees of the ledger, in a few numbers: equal marks, nothing shown changed."""
    row = ledger.one(MARK_SQL)
    return tuple(row) if row else ()
