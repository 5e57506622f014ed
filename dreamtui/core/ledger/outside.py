"""The ``outside_items`` table: changes to the memory repository dreamtui did not make, one per file
while pending, and how the person decided each."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from dreamtui.core.ledger.rows import from_row
from dreamtui.core.models import Jsonable

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger

WRITER_LABELS = {
    "auto-memory": "Claude Code auto memory",
    "auto-dream": "auto dream",  # how a person reads `writer`
    "dreamtui": "dreamtui extractor",
    "person": "person",
    "unknown": "unknown writer",  # a batch no transcript record explains: never guessed
    "codex": "Codex CLI memories",  # its own memory pipeline, $CODEX_HOME/memories (issue 31)
    "gemini-cli": "Gemini CLI save_memory",  # its ## Gemini Added Memories section of GEMINI.md
}


@dataclass(slots=True)
class Item(Jsonable):
    """One outside change, as the queue shows it (a row of ``outside_items``)."""

    id: str
    path: str
    kind: str
    writer: str
    status: str
    old_path: str | None = None
    blob: str | None = None
    head_blob: str | None = None
    session: str | None = None
    transcript: str | None = None
    line: int | None = None
    tool: str | None = None
    batch: str | None = None
    reason: str | None = None
    commit_sha: str | None = None
    decided_as: str | None = None
    detected_at: str = ""
    entry: str | None = None
    note: str | None = None
    secrets: str | None = None
    """The rules of the secret scanner that found a secret in its bytes or names (``github-pat,…``);
    never the secret itself."""

    @property
    def secret_rules(self) -> list[str]:
        """The rule names of the secrets its bytes or names hold (``[]``: none)."""
        return [r for r in (self.secrets or "").split(",") if r]

    @property
    def writer_label(self) -> str:
        return WRITER_LABELS.get(self.writer, self.writer)

    def title(self) -> str:
        """``auto memory added projects/x/y.md`` (one line)."""
        what = f"{self.old_path} → {self.path}" if self.kind == "renamed" else self.path
        note = f" ({self.note})" if self.note else ""
        secret = f" SECRET({', '.join(self.secret_rules)})" if self.secrets else ""
        return f"{self.writer_label} {self.kind} {what}{note}{secret}"

    JSON_EXTRA = ("writer_label", "secret_rules")


_FIELDS = tuple(f.name for f in fields(Item))


def items(ledger: Ledger, status: str | None = "pending") -> list[Item]:
    """Items (``status=None``: all), oldest first."""
    if status is None:
        rows = ledger.query("SELECT * FROM outside_items ORDER BY detected_at, id")
    else:
        rows = ledger.query(
            "SELECT * FROM outside_items WHERE status = ? ORDER BY detected_at, id", (status,)
        )
    if not rows:
        return []
    columns = set(rows[0].keys())  # a Row's `in` looks at its values, not its column names
    names = [n for n in _FIELDS if n in columns]
    return [Item(**{n: r[n] for n in names}) for r in rows]


def with_prefix(ledger: Ledger, prefix: str) -> list[Item]:
    """The items whose id starts with ``prefix``."""
    return [
        from_row(Item, r)
        for r in ledger.query("SELECT * FROM outside_items WHERE id LIKE ? ORDER BY id", (prefix + "%",))
    ]


def add(ledger: Ledger, item_id: str, values: dict[str, Any]) -> None:
    """Insert a new item with the columns ``values``."""
    cols = ", ".join(["id", *values])
    marks = ", ".join(f":{k}" for k in ["id", *values])
    ledger.run(f"INSERT INTO outside_items ({cols}) VALUES ({marks})", {**values, "id": item_id})


def update(ledger: Ledger, item_id: str, values: dict[str, Any]) -> None:
    """Set the columns ``values`` of an item."""
    sets = ", ".join(f"{k} = :{k}" for k in values)
    ledger.run(f"UPDATE outside_items SET {sets} WHERE id = :id", {**values, "id": item_id})


def close(
    ledger: Ledger,
    item_id: str,
    status: str,
    sha: str | None,
    reason: str | None,
    decided_as: str | None,
    now: str,
) -> None:
    """Decide an item (``accepted``, ``rejected``, ``gone``)."""
    ledger.run(
        "UPDATE outside_items SET status = ?, commit_sha = ?, reason = ?, decided_as = ?, decided_at = ? "
        "WHERE id = ?",
        (status, sha, reason, decided_as, now, item_id),
    )


def accepted(ledger: Ledger, item_id: str, sha: str, decided_as: str, now: str, *, mine: bool) -> None:
    """An item was committed as ``sha``; ``mine`` makes the person its writer."""
    ledger.run(
        "UPDATE outside_items SET status = 'accepted', commit_sha = ?, decided_as = ?, decided_at = ?, "
        "writer = CASE WHEN ? THEN 'person' ELSE writer END WHERE id = ?",
        (sha, decided_as, now, 1 if mine else 0, item_id),
    )


def last_decided(ledger: Ledger, path: str) -> Item | None:
    """The item of ``path`` decided last (``None``: none was)."""
    row = ledger.one(
        "SELECT * FROM outside_items WHERE path = ? AND status != 'pending' "
        "ORDER BY decided_at DESC, rowid DESC LIMIT 1",
        (path,),
    )
    return from_row(Item, row) if row is not None else None


def pending_count(ledger: Ledger) -> int:
    """How many outside changes wait for review."""
    row = ledger.one("SELECT COUNT(*) FROM outside_items WHERE status = 'pending'")
    return int(row[0]) if row else 0


def pending_batches(ledger: Ledger) -> list[str]:
    """Every batch with a pending item."""
    return [
        r["batch"]
        for r in ledger.query(
            "SELECT DISTINCT batch FROM outside_items WHERE batch IS NOT NULL AND status = 'pending'"
        )
    ]


def decided_counts(ledger: Ledger) -> list[tuple[str, str, int]]:
    """(writer, accepted|rejected, how many) of the decided items."""
    return [
        (r["writer"], str(r["status"]), int(r["n"]))
        for r in ledger.query(
            "SELECT writer, status, COUNT(*) AS n FROM outside_items "
            "WHERE status IN ('accepted', 'rejected') GROUP BY writer, status"
        )
    ]


# -- the scan's hash cache, its signature, and decisions in flight (issue 23) --------------------

SIGNATURE_KEY = "outside_scan_signature"


def hashes(ledger: Ledger) -> dict[str, tuple[tuple[int, int, int, int], str]]:
    """The hash cache: path → ((size, mtime_ns, inode, ctime_ns), blob id)."""
    return {
        r["path"]: ((r["size"], r["mtime_ns"], r["ino"], r["ctime_ns"]), r["blob"])
        for r in ledger.query("SELECT path, size, mtime_ns, ino, ctime_ns, blob FROM outside_hashes")
    }


def save_hashes(ledger: Ledger, gone: list[str], rows: list[tuple[Any, ...]]) -> None:
    """Forget the paths ``gone`` and store ``rows`` (path, size, mtime_ns, inode, ctime_ns, blob)."""
    with ledger.write() as c:
        c.executemany("DELETE FROM outside_hashes WHERE path = ?", [(p,) for p in gone])
        c.executemany(
            "INSERT INTO outside_hashes (path, size, mtime_ns, ino, ctime_ns, blob) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, "
            "mtime_ns = excluded.mtime_ns, ino = excluded.ino, ctime_ns = excluded.ctime_ns, "
            "blob = excluded.blob",
            rows,
        )


def signature(ledger: Ledger) -> str | None:
    """The last scan's signature of the memory folder."""
    row = ledger.one("SELECT value FROM meta WHERE key = ?", (SIGNATURE_KEY,))
    return str(row[0]) if row is not None else None


def set_signature(ledger: Ledger, value: str) -> None:
    """Remember the signature of the folder a scan just brought the items up to date with."""
    ledger.run(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (SIGNATURE_KEY, value),
    )


@dataclass(slots=True)
class Intent:
    """An outside accept or reject in flight (a row of ``outside_intents``)."""

    id: int
    item_id: str
    action: str
    payload: dict[str, Any]


def record_intent(ledger: Ledger, item_id: str, action: str, payload: dict[str, Any], now: str) -> int:
    """Record a decision about to change git or the folder; its id."""
    return ledger.insert(
        "INSERT INTO outside_intents (item_id, action, payload, created_at) VALUES (?, ?, ?, ?)",
        (item_id, action, json.dumps(payload), now),
    )


def update_intent(ledger: Ledger, intent_id: int, payload: dict[str, Any]) -> None:
    """Replace an intent's payload (an accept's commit sha, once made)."""
    ledger.run("UPDATE outside_intents SET payload = ? WHERE id = ?", (json.dumps(payload), intent_id))


def drop_intent(ledger: Ledger, intent_id: int) -> None:
    """Forget an intent: its decision was recorded or undone."""
    ledger.run("DELETE FROM outside_intents WHERE id = ?", (intent_id,))


def in_flight(ledger: Ledger) -> list[Intent]:
    """Every outside decision in flight, oldest first."""
    return [
        Intent(int(r["id"]), r["item_id"], r["action"], json.loads(r["payload"] or "{}"))
        for r in ledger.query("SELECT * FROM outside_intents ORDER BY id")
    ]
