"""The queue of pending proposals: a DataTable keyed by candidate id."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from dreamtui.tui.services import QueueRow
from dreamtui.tui.widgets.literal import literal

CLAIM_CHARS = 160
COLUMNS = (("project", 12), ("type", 9), ("from", 9), ("flags", 8), ("claim", 80))


def short_project(project: str) -> str:
    """The end of a Claude Code project folder name, at most 12 characters."""
    name = project.strip("-") or project
    if len(name) > 12:
        name = "…" + name[-11:]
    return literal(name, 12, one_line=True)


def flags(row: QueueRow) -> Text:
    """Duplicate, corroborated and secret badges, compact."""
    out = Text()
    if row.duplicate:
        out.append("DUP ", "bold black on yellow")
    if row.corroborated:
        out.append(f"×{row.corroborated + 1} ", "bold green")
    if row.secret:
        out.append("SECRET", "bold white on dark_red")
    return out


def cells(row: QueueRow) -> tuple[Text | str, ...]:
    """The cells of one row; transcript-derived text is escaped and never parsed as markup."""
    prov = row.provenance or "?"
    prov_cell = Text("TOOL!", style="bold white on red") if prov == "tool" else Text(prov)
    return (Text(short_project(row.project)), Text(row.type), prov_cell, flags(row),
            Text(literal(row.claim, CLAIM_CHARS, one_line=True)))


class QueueTable(DataTable):
    """Pending proposals; the row key is the candidate id."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)

    def on_mount(self) -> None:
        for label, width in COLUMNS:
            self.add_column(label, width=width, key=label)

    def on_resize(self) -> None:
        self.fit_claim()

    def fit_claim(self) -> None:
        """Give the claim column whatever width the other columns leave (at least 20 cells)."""
        from textual.widgets.data_table import ColumnKey

        fixed = sum(width + 2 * self.cell_padding for label, width in COLUMNS if label != "claim")
        room = self.size.width - fixed - 2 * self.cell_padding - 2  # minus the vertical scrollbar
        column = self.columns.get(ColumnKey("claim"))
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
            self.add_row(*cells(row), key=row.id)

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
