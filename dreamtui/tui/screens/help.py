"""The help screen (``?`` or F1): every key of the screen it was opened on, then the global ones."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from dreamtui.services import transcripts


@dataclass(frozen=True, slots=True)
class KeyLine:
    """One line of the help: the keys (as the footer shows them, remapped ones as remapped) and what they do."""

    section: str
    keys: str
    description: str


def own_actions(node: object) -> set[str]:
    """The actions bound by dreamtui's own classes in ``node``'s class hierarchy (not Textual's focus,
    copy, scroll-left … bindings its widgets and the app inherit)."""
    actions: set[str] = set()
    for cls in type(node).__mro__:
        if cls.__module__.startswith("dreamtui."):
            for binding in cls.__dict__.get("BINDINGS", []):
                if isinstance(binding, Binding):
                    actions.add(binding.action)
    return actions


def key_lines(screen: Screen) -> list[KeyLine]:
    """The bindings of dreamtui's own active on ``screen`` (its widgets' and its own under ``This
    screen``, the app's under ``Everywhere``), keys of one action joined (``j / ↓``), in the order they
    are bound. One not available now (Promotion's approve before every gate passes) says so."""
    app = screen.app
    grouped: dict[tuple[str, str], list[str]] = {}
    rank: dict[tuple[str, str], int] = {}
    owned: dict[int, set[str]] = {}
    for key, active in screen.active_bindings.items():
        binding = active.binding
        description = binding.tooltip or binding.description
        if not description or binding.system:
            continue
        if binding.action not in owned.setdefault(id(active.node), own_actions(active.node)):
            continue
        if not active.enabled:
            description += " (not available now)"
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


@dataclass(frozen=True, slots=True)
class Guide:
    """What the help says before the keys: the first keys to press (as in effect), then what the
    screen's marks and columns mean."""

    first: list[tuple[str, str]]
    more: str = ""
    notes: list[tuple[str, str]] = field(default_factory=list)


def guide(screen_title: str, key: Callable[[str], str], columns: Collection[str] | None = None) -> Guide:
    """The help's guide for the screen ``screen_title`` (``queue``, ``sessions`` …); ``key`` gives the
    key in effect for a binding id (remapped keys as remapped); ``columns``: the queue's columns shown
    now (a narrow terminal leaves some out: the help describes only those, and names the others)."""
    if screen_title == "queue":
        found = queue_guide(key)
        if columns is None:
            return found
        hidden = [term for term, _ in found.notes if term not in columns]
        notes = [(term, meaning) for term, meaning in found.notes if term in columns]
        if hidden:
            notes.append(
                (
                    "",
                    f"not shown at this width: {', '.join(hidden)} (the proposal below names "
                    "it; a wider terminal shows the column)",
                )
            )
        return replace(found, notes=notes)
    return other_guide(screen_title, key)


def queue_guide(key: Callable[[str], str]) -> Guide:
    """The queue's guide, every column described."""
    return Guide(
        first=[
            (f"{key('down')} / ↓", "next proposal: its claim, why, how and quote show below the list"),
            (key("accept"), "accept: it becomes a memory file and an index line, one commit"),
            (key("reject"), "reject, with a reason (kept in the ledger, shown in Stats)"),
        ],
        more=f"Enter reads the whole proposal and its transcript ({key('down')}/{key('up')} scroll it, "
        f"Esc back to the list) · {key('undo')} undoes the last decision · {key('skip')} skips · "
        f"{key('edit')} edits, then accepts",
        notes=[
            (
                "project",
                "where the session ran; memory repo: a file changed outside dreamtui (Claude "
                f"Code's auto memory, auto dream, your edit): {key('accept')} keeps it, {key('reject')} "
                f"puts the file back, {key('mine')} commits it as yours; from codex / gemini: that agent's own "
                f"memory (Codex's memories, Gemini CLI's save_memory lines): {key('accept')} keeps it, "
                f"{key('reject')} rejects it or restores the agent's file as reviewed",
            ),
            (
                "agent",
                "the coding agent whose session it came from ("
                + ", ".join(label for _agent, label in transcripts.agents())
                + f"); {key('agent')} shows one agent's proposals at a time, / matches it too",
            ),
            (
                "type",
                "the kind of memory: feedback (how to work), project (a fact of the project), "
                "user (about you), reference (where to look)",
            ),
            (
                "from",
                "whose words the quote is: person, assistant, or TOOL! — only in tool output (a "
                "file or command output the agent read): untrusted, accepting asks first",
            ),
            (
                "flags",
                "SECRET a secret was found and redacted · DUP may repeat a memory or another "
                "proposal (both shown below) · ×N said in N sessions",
            ),
            ("claim", "the lesson as it would be written to memory"),
        ],
    )


def other_guide(screen_title: str, key: Callable[[str], str]) -> Guide:
    """The guide of a screen other than the queue."""
    if screen_title == "sessions":
        return Guide(
            first=[
                ("Enter", "on a project: its sessions; on a session: its proposals in the queue"),
                (key("dream"), "dream what is waiting (the line above the tables says what it will do)"),
            ],
            notes=[
                (
                    "agent",
                    f"the coding agent whose session it is; {key('sessions.agent')} shows one agent's "
                    "sessions at a time",
                ),
                ("waiting", "transcript not yet dreamed (KB)"),
                ("pending", "proposals of it waiting in the queue"),
                ("lines", "transcript lines read · dreamed: lines a dream cycle has gone through"),
                ("files", "transcript files of the session (a session can span several)"),
                ("updated", "when its transcript was last read"),
            ],
        )
    if screen_title == "promotion":
        return Guide(
            first=[
                ("✔ / ✘", "each gate: what it needs first, then what was measured"),
                (key("promotion.approve"), "approve auto-write, once every gate passes (asks first)"),
                (key("promotion.revoke"), "revoke auto-write: every proposal waits for you again"),
            ],
            more=f"{key('down')}/{key('up')}, PgDn/PgUp scroll the page",
        )
    if screen_title == "briefings":
        return Guide(
            first=[
                (key("briefings.accept"), "accept the proposed briefing (the first row): one commit"),
                (key("briefings.reject"), "reject it, with a reason"),
            ],
            more=f"{key('briefings.mark')} marks a version, {key('briefings.diff')} shows the diff to the "
            f"highlighted one, {key('briefings.view')} the rendered text again",
        )
    if screen_title == "memory":
        return Guide(
            first=[
                (
                    key("memory.revert"),
                    "revert the highlighted memory (asks first): its proposal goes back to the queue",
                )
            ]
        )
    return Guide(first=[])


def render_guide(guide: Guide) -> Group:
    """The guide: ``Start here`` with its keys, then ``Marks and columns``."""
    parts: list[Text | Table] = []
    if guide.first:
        parts.append(Text("Start here", style="bold underline"))
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for keys, what in guide.first:
            table.add_row(Text(keys), Text(what))
        parts.append(table)
    if guide.more:
        parts.append(Text(guide.more, style="dim"))
    if guide.notes:
        parts += [Text(), Text("Marks and columns", style="bold underline")]
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for term, meaning in guide.notes:
            table.add_row(Text(term), Text(meaning))
        parts.append(table)
    if parts:
        parts.append(Text())
    return Group(*parts)


class HelpScreen(ModalScreen[None]):
    """What to do first, every key of the screen below and the global ones, what the marks mean;
    Esc, ``?`` or F1 close it."""

    BINDINGS = [Binding("escape,question_mark,f1,q", "close", "Close help")]

    def __init__(self, title: str, lines: list[KeyLine], guide: Guide | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines
        self.guide = guide or Guide(first=[])

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help", id="help"):
            yield Static(Text("Help  (Esc or ? closes; ↓/PgDn scroll)", style="bold"), classes="dialog-title")
            yield Static(render_guide(self.guide), id="help-guide")
            yield Static(render_help(self.title_text, self.lines), id="help-keys")

    def on_mount(self) -> None:
        self.query_one("#help").focus()

    def action_close(self) -> None:
        self.dismiss(None)
