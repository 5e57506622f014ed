"""Modal dialogs: reject with a reason, edit then accept, accept untrusted tool output, confirm."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Select, Static, TextArea

from dreamtui.core.models import MEMORY_TYPES, REJECT_CATEGORIES, Candidate
from dreamtui.services.memory_repo import topic_folder
from dreamtui.tui.access import dream_app
from dreamtui.tui.widgets.literal import literal, literal_text

QUOTE_CHARS = 600


@dataclass(frozen=True, slots=True)
class Rejection:
    """What the reject dialog returns."""

    category: str
    reason: str


class CategorySet(RadioSet):
    """The reason categories: arrows move, Enter (or space) chooses and moves on to the free text."""

    BINDINGS = [
        Binding("enter", "choose(True)", "Choose", show=False),
        Binding("space", "choose", "Choose", show=False),
    ]

    def action_choose(self, enter: bool = False) -> None:
        modal = self.screen
        if self._selected is not None:
            button = self._nodes[self._selected]
            if isinstance(button, RadioButton):
                button.value = True
                if isinstance(modal, RejectModal):
                    modal.chosen = button.name
        if enter and isinstance(modal, RejectModal) and (modal.digit_chosen or modal.entered):
            # r 2 Enter typed quickly: the Enter arrives before the focus has moved to the free text;
            # the category is chosen already (the highlight followed the number), so Enter rejects
            modal.action_submit()
            return
        if enter and isinstance(modal, RejectModal):
            modal.entered = True  # a second Enter that reaches the list before the focus moved rejects
        self.screen.query_one("#reason", Input).focus()


class RejectModal(ModalScreen[Rejection | None]):
    """Pick a reason category (its number, or arrows and Enter), add free text; Enter rejects, Esc cancels."""

    # the numbers and Enter are bindings (not an on_key handler): keys typed right after r are
    # checked against this dialog's bindings even when they were sent before it was shown
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Reject", priority=True),
        *(Binding(str(n), f"number({n - 1})", show=False) for n in range(1, len(REJECT_CATEGORIES) + 1)),
        Binding("enter", "enter", show=False),
    ]

    def __init__(self, claim: str) -> None:
        super().__init__()
        self.claim = claim
        self.digit_chosen = False  # a category was chosen by its number
        self.chosen: str | None = None  # the category chosen last (by number, Enter, space or a click)
        self.entered = False  # a category was chosen with Enter
        # keys typed right after r can arrive before the dialog is composed: kept, applied on mount
        self._early_digit: int | None = None
        self._early_enter = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Reject this proposal", classes="dialog-title")
            yield Label(literal(self.claim, 200, one_line=True), classes="dialog-claim", markup=False)
            with CategorySet(id="category"):
                for n, cat in enumerate(REJECT_CATEGORIES, start=1):
                    yield RadioButton(f"{n} {cat}", value=(n == 1), name=cat)
            yield Input(placeholder="why (optional, Enter to reject)", id="reason")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Reject", variant="error", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#category", RadioSet).focus()
        if self._early_digit is not None:
            self.choose_number(self._early_digit)
            if self._early_enter:
                self.action_submit()

    def choose_number(self, index: int) -> None:
        """Choose the category ``index`` (its number minus one) and move on to the free text."""
        buttons = list(self.query(RadioButton))
        buttons[index].value = True
        self.chosen = buttons[index].name  # the RadioSet learns of it only by a message, later
        self.digit_chosen = True
        self.query_one("#category", CategorySet)._selected = index  # the highlight follows
        self.query_one("#reason", Input).focus()

    def action_number(self, index: int) -> None:
        """A category by its number (not while typing the free text: the Input keeps its digits)."""
        if self.query(RadioButton):
            self.choose_number(index)
        else:  # typed before the dialog was composed
            self._early_digit = index

    def action_enter(self) -> None:
        """Enter where no widget takes it (before the dialog is composed): reject once it is."""
        if self.query(RadioButton):
            if self.digit_chosen:
                self.action_submit()
        elif self._early_digit is not None:
            self._early_enter = True

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        if event.pressed.name:
            self.chosen = event.pressed.name

    def category(self) -> str:
        if self.chosen:
            return self.chosen
        pressed = self.query_one("#category", RadioSet).pressed_button
        return pressed.name if pressed is not None and pressed.name else REJECT_CATEGORIES[0]

    def action_submit(self) -> None:
        self.dismiss(Rejection(self.category(), self.query_one("#reason", Input).value.strip()))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self.action_submit()
        else:
            self.action_cancel()


class EditModal(ModalScreen[dict[str, str] | None]):
    """Edit claim, why, how-to-apply, type and scope; Ctrl+S accepts the edited memory, Escape cancels.
    The scope says where the file is written: global at the top of the memory repo, this project under
    ``projects/<folder>/``."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Accept edited", priority=True),
    ]

    def __init__(self, cand: Candidate) -> None:
        super().__init__()
        self.cand = cand
        # a TextArea writes its text to the terminal as it is: escape codes in a claim would be obeyed
        # (colours, cursor moves, a window title). They are shown made visible (␛[31m); a field left
        # as it was keeps its original text.
        self.original = {"claim": cand.claim, "why": cand.why, "how": cand.how_to_apply}
        self.shown = {key: literal(value, 1_000_000) for key, value in self.original.items()}
        self.original_scope = "global" if cand.scope in ("global", "", "user") else "project"

    def value(self, key: str) -> str:
        """A field's text: the original when the person left it as it was shown."""
        text = self.query_one(f"#{key}", TextArea).text
        return self.original[key] if text == self.shown[key] else text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label("Edit, then accept  (Ctrl+S accept · Esc cancel)", classes="dialog-title")
            yield Label("Claim (one line)")
            yield TextArea(self.shown["claim"], id="claim", soft_wrap=True, classes="claim")
            yield Label("Why")
            yield TextArea(self.shown["why"], id="why", soft_wrap=True)
            yield Label("How to apply")
            yield TextArea(self.shown["how"], id="how", soft_wrap=True)
            cand = self.cand
            with Horizontal(classes="dialog-choices"):
                yield Select(
                    [(kind, kind) for kind in MEMORY_TYPES],
                    value=cand.type if cand.type in MEMORY_TYPES else "project",
                    allow_blank=False,
                    id="type",
                    prompt="type",
                )
                folder = topic_folder(cand.project, cand.project)
                yield Select(
                    [
                        ("global  → top of the memory repo", "global"),
                        (f"this project  → {literal(folder, 60, one_line=True)}/", "project"),
                    ],
                    value="global" if self.original_scope == "global" else "project",
                    allow_blank=False,
                    id="scope",
                    prompt="scope",
                )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Accept", variant="success", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#claim", TextArea).focus()

    def action_submit(self) -> None:
        claim = " ".join(self.value("claim").split())
        if not claim:
            dream_app(self).notify_over_dialog("The claim cannot be empty", severity="error")
            return
        edits = {"claim": claim, "why": self.value("why").strip(), "how_to_apply": self.value("how").strip()}
        kind, scope = self.query_one("#type", Select).value, self.query_one("#scope", Select).value
        if kind != self.cand.type:
            edits["type"] = str(kind)
        if scope != self.original_scope:  # only a change is sent: a proposal for another scope keeps its own
            edits["scope"] = str(scope)
        self.dismiss(edits)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self.action_submit()
        else:
            self.action_cancel()


class YesNoModal(ModalScreen[bool]):
    """A question answered yes (the ``#ok`` button, ``y``) or no (``#cancel``, ``n``, Esc)."""

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "ok")


class ConfirmModal(YesNoModal):
    """A yes/no question: y or Enter confirms, n or Escape cancels."""

    BINDINGS = [Binding("y", "yes", "Yes"), Binding("n,escape", "no", "No")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="dialog-title", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes", variant="warning", id="ok")
                yield Button("No", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#ok", Button).focus()


class ToolOutputModal(YesNoModal):
    """Accept a proposal whose quote is only in tool output? ``y`` confirms; ``n``, Esc or Enter cancel.

    Tool output (a file the agent read, a command's output, a web page) is text anyone who can write
    to those can control, so accepting it takes an explicit yes: the focus starts on Cancel, and
    neither ``a`` nor Enter confirms.
    """

    BINDINGS = [Binding("y", "yes", "Accept untrusted"), Binding("n,escape", "no", "Cancel")]

    def __init__(
        self,
        cand: Candidate | None = None,
        then_edit: bool = False,
        *,
        said: tuple[str, str, str] | None = None,
    ) -> None:
        """For a lesson ``cand``; for another proposal (a consolidation) ``said``: what it does, its quote
        and where the quote is."""
        super().__init__()
        self.then_edit = then_edit
        if cand is not None:
            where = ""
            if cand.matches:
                best = cand.matches[0]
                where = f"{best.file.rsplit('/', 1)[-1]} : line {best.line}"
            said = (cand.claim, cand.quote, where)
        self.claim, self.quote, self.where = said or ("", "", "")

    def compose(self) -> ComposeResult:
        where = self.where
        with Vertical(classes="dialog wide untrusted"):
            yield Static(Text(" TOOL OUTPUT — UNTRUSTED ", style="bold white on red"), classes="dialog-badge")
            yield Static(
                Text.assemble(
                    "This proposal's quote was found only in ",
                    ("tool output", "bold"),
                    " (a file the agent read, a command's output, a web page), not in anything a person or the "
                    "assistant said. Whoever can write that text can put words in your agent's memory. "
                    "Accept it only if you checked it yourself.",
                ),
                classes="dialog-text",
            )
            yield Static(
                Text.assemble(("Claim  ", "bold dim"), literal_text(self.claim, limit=300, one_line=True)),
                classes="dialog-text",
            )
            yield Static(
                Text.assemble(
                    ("Quote  ", "bold dim"),
                    literal_text(f"“{self.quote}”", style="italic", limit=QUOTE_CHARS),
                ),
                classes="dialog-text",
                id="tool-quote",
            )
            if where:
                yield Static(
                    Text.assemble(
                        ("From   ", "bold dim"),
                        literal_text(where, one_line=True),
                        ("  (tool output)", "bold red"),
                    ),
                    classes="dialog-text",
                )
            action = "Edit, then accept" if self.then_edit else "Accept"
            yield Label(
                f"{action} this untrusted proposal?  y yes · n / Esc no", classes="dialog-title", markup=False
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{action} untrusted (y)", variant="error", id="ok")
                yield Button("Cancel (n)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()


class ReasonModal(ModalScreen[str | None]):
    """Reject with a free-text reason: Enter (or the button) rejects, Esc cancels. With ``required``
    an empty reason rejects nothing: the dialog stays open and says a reason is needed."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, *, required: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.required = required

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            hint = "why (needed, Enter to reject)" if self.required else "why (optional, Enter to reject)"
            yield Input(placeholder=hint, id="reason")
            yield Label("", id="reason-needed", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Reject", variant="error", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def _submit(self) -> None:
        reason = self.query_one("#reason", Input).value.strip()
        if self.required and not reason:
            self.query_one("#reason-needed", Label).update("A reason is needed to reject (Esc cancels).")
            self.query_one("#reason", Input).focus()
            return
        self.dismiss(reason)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self._submit()
        else:
            self.dismiss(None)


class OutsideRejectModal(ReasonModal):
    """Reject an outside change: says which file goes back to what (not lesson categories), then an
    optional reason; Enter rejects, Esc cancels."""

    def __init__(self, title: str, effect: list[str]) -> None:
        super().__init__("Reject this outside change?")
        self.item_title = title
        self.effect = effect

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="outside-reject"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            yield Static(
                literal_text(self.item_title, style="bold", limit=300, one_line=True), classes="dialog-text"
            )
            for line in self.effect:
                yield Static(literal_text(line, limit=600), classes="dialog-text outside-effect")
            yield Input(placeholder="why (optional, Enter to reject)", id="reason")
            yield Label("", id="reason-needed", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Reject: put it back", variant="error", id="ok")
                yield Button("Cancel", id="cancel")


@dataclass(frozen=True, slots=True)
class AgentDecision:
    """What the person chose for an agent's own memory change: a reason, and whether to restore."""

    reason: str
    restore: bool


class AgentRejectModal(ModalScreen[AgentDecision | None]):
    """Reject an agent's own memory change (Codex's memories, Gemini CLI's section): says what each
    choice does, then an optional reason. Enter or *Reject* leaves the agent's file as it is;
    *Restore* (or ``ctrl+r``) puts it back as reviewed; Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+r", "restore", "Restore")]

    def __init__(self, title: str, effect: list[str]) -> None:
        super().__init__()
        self.item_title = title
        self.effect = effect

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="agent-reject"):
            yield Label("Reject or restore this agent's memory change?", classes="dialog-title", markup=False)
            yield Static(
                literal_text(self.item_title, style="bold", limit=300, one_line=True), classes="dialog-text"
            )
            for line in self.effect:
                yield Static(literal_text(line, limit=600), classes="dialog-text outside-effect")
            yield Input(placeholder="why (optional, Enter to reject)", id="reason")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Reject: leave the file", variant="error", id="ok")
                yield Button("Restore (ctrl+r)", variant="warning", id="restore")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    def _done(self, restore: bool) -> None:
        self.dismiss(AgentDecision(self.query_one("#reason", Input).value.strip(), restore))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_restore(self) -> None:
        self._done(True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._done(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "cancel":
            self.dismiss(None)
        else:
            self._done(event.button.id == "restore")


class CautionModal(YesNoModal):
    """A decision that deletes, writes several files or leaves something out asks once: what it does,
    then ``y`` (or the Yes button) goes ahead; ``n``, Esc or Enter on the focused No cancel."""

    BINDINGS = [Binding("y", "yes", "Yes"), Binding("n,escape", "no", "No")]

    def __init__(self, question: str, title: str, why: list[str]) -> None:
        super().__init__()
        self.question, self.item_title, self.why = question, title, why

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="caution"):
            yield Label(self.question, classes="dialog-title", markup=False)
            yield Static(
                literal_text(self.item_title, style="bold", limit=300, one_line=True), classes="dialog-text"
            )
            for line in self.why:
                yield Static(literal_text(line, limit=600), classes="dialog-text caution-why")
            yield Label("y yes · n / Esc no", classes="dialog-title", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes (y)", variant="warning", id="ok")
                yield Button("No (n)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()  # a stray Enter or a second `a` decides nothing


class SpendModal(YesNoModal):
    """Before a dream with a model that spends (the first one, or a big one): what it would read and
    send, and whether to go ahead. ``y`` dreams; ``n`` or Esc sends nothing. The focus starts on No."""

    BINDINGS = [Binding("y", "yes", "Dream"), Binding("n,escape", "no", "Not now")]

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="spend"):
            yield Label("Dream with a model?", classes="dialog-title", markup=False)
            for line in self.lines:
                yield Static(literal_text(line), classes="dialog-text")
            yield Label(
                "Older sessions: `dreamtui dream --since YYYY-MM-DD` or `--all`. y dream · n / Esc not now",
                classes="dialog-text",
                markup=False,
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Dream (y)", variant="warning", id="ok")
                yield Button("Not now (n)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()
