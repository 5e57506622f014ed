"""The help screen (``?`` or F1): every key of the screen it was opened on, then the global ones."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


@dataclass(frozen=True, slots=True)
class KeyLine:
    """One line of the help: the keys (as the footer shows them, remapped ones as remapped) and what they do."""

    section: str
    keys: str
    description: str


def key_lines(screen: Screen) -> list[KeyLine]:
    """The bindings active on ``screen`` (its widgets' and its own under ``This screen``, the app's under
    ``Everywhere``), keys of one action joined (``j / ↓``), in the order they are bound."""
    app = screen.app
    grouped: dict[tuple[str, str], list[str]] = {}
    rank: dict[tuple[str, str], int] = {}
    for key, active in screen.active_bindings.items():
        binding = active.binding
        description = binding.description or binding.tooltip
        if not description or binding.system:
            continue
        section = "Everywhere" if active.node is app else "This screen"
        shown = app.get_key_display(binding.with_key(key))
        rank.setdefault(
            (section, description), 0 if active.node is screen else 1 if section == "This screen" else 2
        )
        keys = grouped.setdefault((section, description), [])
        if shown not in keys:
            keys.append(shown)
    grouped.setdefault(
        ("Everywhere", "Command palette: every action, with its key"),
        [app.get_key_display(Binding(app.COMMAND_PALETTE_BINDING, ""))],
    )
    ordered = sorted(grouped.items(), key=lambda item: rank.get(item[0], 3))  # stable: binding order kept
    return [KeyLine(section, " / ".join(keys), description) for (section, description), keys in ordered]


def render_help(title: str, lines: list[KeyLine]) -> Table:
    """The key lines as a two-column table under a heading per section."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    section = None
    for line in lines:
        if line.section != section:
            if section is not None:
                table.add_row("", "")
            section = line.section
            heading = f"{title} screen" if section == "This screen" and title else section
            table.add_row(Text(heading, style="bold underline"), "")
        table.add_row(Text(line.keys, style="bold cyan"), Text(line.description))
    return table


class HelpScreen(ModalScreen[None]):
    """Every key of the screen below and the global ones; Esc, ``?`` or F1 close it."""

    BINDINGS = [Binding("escape,question_mark,f1,q", "close", "Close help")]

    def __init__(self, title: str, lines: list[KeyLine]) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help", id="help"):
            yield Static(Text("Keys  (Esc or ? closes)", style="bold"), classes="dialog-title")
            yield Static(render_help(self.title_text, self.lines), id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)
