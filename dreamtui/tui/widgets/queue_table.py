"""The queue of pending proposals: a DataTable keyed by candidate id, one styled cell per row.

Each row is a single pre-assembled :class:`Text` (project, type, provenance, badges, claim in fixed
columns): a DataTable renders every visible cell again after a row is removed, and one cell per row
instead of five keeps "accept, highlight the next" well under the 50 ms budget.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from dreamtui.tui.services import QueueRow
from dreamtui.tui.widgets.literal import literal

CLAIM_CHARS = 160
FIELDS = (("project", 13), ("type", 9), ("from", 10), ("flags", 8))


def short_project(project: str, width: int = 12) -> str:
    """The end of a Claude Code project folder name, at most ``width`` characters."""
    name = project.strip("-") or project
    if len(name) > width:
        name = "…" + name[-(width - 1):]
    return literal(name, width, one_line=True)


def flags(row: QueueRow) -> Text:
    """Duplicate, corroborated and secret badges, compact."""
    out = Text()
    if row.duplicate:
        out.append("DUP", "bold black on yellow")
        out.append(" ")
    if row.corroborated:
        out.append(f"×{row.corroborated + 1} ", "bold green")
    if row.secret:
        out.append("SECRET", "bold white on dark_red")
    return out


def header() -> Text:
    """The column label: the field names at their positions."""
    return Text("".join(name.ljust(width) for name, width in FIELDS) + "claim", style="bold")


def row_text(row: QueueRow) -> Text:
    """One row; transcript-derived text is escaped and never parsed as markup."""
    prov = row.provenance or "?"
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(short_project(row.project).ljust(FIELDS[0][1]))
    out.append(literal(row.type, 8).ljust(FIELDS[1][1]))
    if prov == "tool":
        out.append("TOOL!", "bold white on red")
        out.append(" " * (FIELDS[2][1] - 5))
    else:
        out.append(literal(prov, 9).ljust(FIELDS[2][1]))
    badge = flags(row)
    out.append_text(badge)
    out.append(" " * max(1, FIELDS[3][1] - badge.cell_len))
    out.append(literal(row.claim, CLAIM_CHARS, one_line=True))
    return out


class QueueTable(DataTable):
    """Pending proposals; the row key is the candidate id."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)

    def on_mount(self) -> None:
        self.add_column(header(), width=max(40, self.size.width - 4), key="row")

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Make the one column as wide as the table (minus the scrollbar)."""
        from textual.widgets.data_table import ColumnKey

        column = self.columns.get(ColumnKey("row"))
        room = self.size.width - 2 * self.cell_padding - 2
        if column is None or room < 20 or column.width == room:
            return
        column.width = room
        self._clear_caches()
        self._require_update_dimensions = True
        self.refresh()

    def fill(self, rows: list[QueueRow]) -> None:
        """Replace every row."""
        self.clear()
        self.add_rows_keyed(rows)

    def add_rows_keyed(self, rows: list[QueueRow]) -> None:
        for row in rows:
            self.add_row(row_text(row), key=row.id)

    @property
    def current_id(self) -> str | None:
        """The candidate id of the highlighted row."""
        if not self.row_count:
            return None
        try:
            key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        except Exception:  # noqa: BLE001 - the cursor can be past the end while rows change
            return None
        return key.value
