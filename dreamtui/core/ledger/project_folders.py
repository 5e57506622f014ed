"""The ``project_folders`` table: the project each transcript folder's sessions belong to, and the
re-keying of rows filed under a worktree's (or a subfolder's) own folder before projects were
repositories (issue 21 item 5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger

REKEYED_TABLES = ("candidates", "extractions", "files")
"""The tables whose ``project`` column holds a project key (a candidate's ``scope`` may hold it too)."""


@dataclass(frozen=True, slots=True)
class ProjectFolder:
    """One row of ``project_folders``: ``folder``'s sessions are project ``project`` (found ``how``)."""

    folder: str
    project: str
    root: str
    how: str


def known(ledger: Ledger) -> dict[str, ProjectFolder]:
    """Every remembered folder → its project."""
    return {
        r["folder"]: ProjectFolder(r["folder"], r["project"], r["root"], r["how"])
        for r in ledger.query("SELECT folder, project, root, how FROM project_folders")
    }


def remember(ledger: Ledger, row: ProjectFolder, now: str) -> None:
    """Remember ``row`` unless the folder is already known (a folder's project is decided once)."""
    ledger.run(
        "INSERT INTO project_folders (folder, project, root, how, decided_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(folder) DO NOTHING",
        (row.folder, row.project, row.root, row.how, now),
    )


def stored_projects(ledger: Ledger) -> set[str]:
    """Every project value the ledger's rows are filed under."""
    found: set[str] = set()
    for table in REKEYED_TABLES:
        found |= {r["project"] for r in ledger.query(f"SELECT DISTINCT project FROM {table}")}
    return found


def rekey(ledger: Ledger, old: str, new: str) -> int:
    """File every row of project ``old`` under ``new`` (one transaction): the ``project`` column of
    :data:`REKEYED_TABLES` and a candidate's ``scope`` that named ``old``. How many candidates moved."""
    with ledger.write() as c:
        moved = c.execute("UPDATE candidates SET project = ? WHERE project = ?", (new, old)).rowcount
        c.execute("UPDATE candidates SET scope = ? WHERE scope = ?", (new, old))
        c.execute("UPDATE extractions SET project = ? WHERE project = ?", (new, old))
        c.execute("UPDATE files SET project = ? WHERE project = ?", (new, old))
    return int(moved)
