"""The highlighted proposal: claim, why, how to apply, badges, the raw evidence, a duplicate beside it."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from dreamtui.core.config import Config
from dreamtui.core.models import Candidate
from dreamtui.services.evidence import read_window
from dreamtui.services.memory_repo import topic_folder
from dreamtui.tui.access import dream_app
from dreamtui.tui.widgets.evidence import render_records
from dreamtui.tui.widgets.literal import literal, literal_text

PROVENANCE_STYLE = {"person": "bold green", "assistant": "bold cyan", "tool": "bold white on red"}


def transcript_path(config: Config, name: str) -> Path:
    """A transcript path from the ledger: absolute, or relative to the transcripts folder."""
    path = Path(name)
    return path if path.is_absolute() else config.transcripts / path


def badges(cand: Candidate) -> Text:
    """Provenance, duplicate, corroborated and secret badges."""
    out = Text()
    prov = cand.provenance or "unverified"
    label = "TOOL OUTPUT — UNTRUSTED" if prov == "tool" else prov
    out.append(f" {label} ", PROVENANCE_STYLE.get(prov, "reverse"))
    if cand.duplicate_of:
        score = f" {cand.duplicate_score:.0%}" if cand.duplicate_score is not None else ""
        out.append(f"  DUPLICATE{score} ", "bold black on yellow")
    if cand.corroborated:
        out.append(f"  CORROBORATED ×{cand.corroborated + 1} sessions ", "bold black on green")
    if cand.secrets:
        out.append(f"  SECRET: {', '.join(cand.secrets)} (redacted) ", "bold white on dark_red")
    return out


def judged_label(cand: Candidate) -> Text | None:
    """``model: same lesson — <reason>`` when the model dedup judge said the candidate repeats the
    lesson shown beside it; None otherwise."""
    if cand.duplicate_judged != "same" or not cand.duplicate_of:
        return None
    return literal_text(
        f"model: same lesson — {cand.duplicate_reason or ''}".rstrip(" —"),
        style="italic yellow",
        limit=300,
        one_line=True,
    )


LABEL_WIDTH = 8


NARROW = 60  # a detail pane narrower than this lists its fields one per line


def meta_table(cand: Candidate, width: int | None = None, name: str = "", agent: str = "") -> Table:
    """Type, session (and the ``agent`` whose it is), extractor, id, project and where the memory
    would be written: a label column
    and a value column, so no field runs into the next one however long it is. Narrower than
    :data:`NARROW` cells, one field per line (two pairs side by side would cut every value)."""
    extractor = f"{cand.extractor}/{cand.model}" if cand.model else cand.extractor
    pairs = [
        ("type", Text(literal(cand.type, 40, one_line=True), style="bold")),
        (
            "session",
            Text(literal(cand.session[:8], 8, one_line=True)).append(
                f" · {literal(agent, 40, one_line=True)}" if agent else "", style="bold"
            ),
        ),
        ("by", literal_text(extractor, limit=120, one_line=True)),
        ("id", Text(literal(cand.id, 40, one_line=True))),
    ]
    grid = Table.grid(padding=(0, 1), expand=True)
    if width is not None and width < NARROW:
        grid.add_column(width=LABEL_WIDTH, style="dim", no_wrap=True)
        grid.add_column(ratio=1)
        for label, value in pairs:
            grid.add_row(label, value)
    else:
        grid.add_column(width=LABEL_WIDTH, style="dim", no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_column(width=LABEL_WIDTH, style="dim", no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_row(*pairs[0], *pairs[1])
        grid.add_row(*pairs[2], *pairs[3])
    folder = topic_folder(cand.scope, cand.project)
    if not folder:
        scope, where = "global", "the top of the memory repo"
    else:
        scope, where = (
            "this project" if cand.scope == cand.project else literal(cand.scope, 120, one_line=True),
            f"{literal(folder, 200, one_line=True)}/",
        )
    wide = Table.grid(padding=(0, 1), expand=True)
    wide.add_column(width=LABEL_WIDTH, style="dim", no_wrap=True)
    wide.add_column(ratio=1)
    project = (
        literal_text(name, style="bold", limit=120, one_line=True)
        if name and name != cand.project.strip("-")
        else Text()
    )
    if project:
        project.append("  ")
    project.append_text(literal_text(cand.project, style="dim" if project else "", limit=300, one_line=True))
    wide.add_row("project", project)
    wide.add_row("scope", Text.assemble(scope, ("  → ", "dim"), where))
    outer = Table.grid(expand=True)
    outer.add_column(ratio=1)
    outer.add_row(grid)
    outer.add_row(wide)
    return outer


def quote_line(cand: Candidate) -> Text:
    """``Quote  “…”``: the person's (or the tool output's) words the proposal rests on."""
    return Text.assemble(("Quote  ", "bold dim")) + literal_text(f"“{cand.quote}”", style="italic")


def summary(cand: Candidate, width: int | None = None) -> Group:
    """Badges, claim, why, how to apply and the quote — what decides a proposal, at the top of the pane
    (the raw transcript follows; type, session, project and scope after it: :func:`meta_table`)."""
    parts = [
        badges(cand),
        Text(),
        literal_text(cand.claim, style="bold"),
        Text(),
        Text.assemble(("Why  ", "bold dim")) + literal_text(cand.why or "—"),
        Text.assemble(("How  ", "bold dim")) + literal_text(cand.how_to_apply or "—"),
        quote_line(cand),
    ]
    return Group(*parts)


class CandidateView(VerticalScroll):
    """Shows one candidate; empty text when the queue is empty."""

    DEFAULT_CSS = """
    CandidateView > .pane { height: auto; padding: 0 1; }
    CandidateView #evidence { border-top: solid $primary-darken-2; margin-top: 1; }
    CandidateView #meta { margin-top: 1; }
    """

    def __init__(self, config: Config, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.config = config
        self.candidate: Candidate | None = None
        self.agent = ""  # the agent whose session the candidate came from (``Codex CLI``)
        self._narrow: bool | None = None  # the layout the summary was drawn with

    def _render_summary(self) -> None:
        if self.candidate is None:
            return
        width = self.size.width or None  # not laid out yet: wide, until on_resize says otherwise
        self._narrow = width is not None and width < NARROW
        name = dream_app(self).project_namer(self.candidate.project, self.candidate.transcript)
        self.query_one("#summary", Static).update(summary(self.candidate, width))
        self.query_one("#meta", Static).update(meta_table(self.candidate, width, name, self.agent))

    def on_resize(self) -> None:
        """Across the narrow/wide line the fields and the evidence's gutter are laid out again."""
        if self.candidate is not None and (self.size.width < NARROW) != self._narrow:
            self._render_summary()
            self._show_evidence(*self.evidence(self.candidate))

    def compose(self) -> ComposeResult:
        yield Static("", id="summary", classes="pane")
        with Horizontal(id="dup"):
            yield Static("", id="dup-new")
            yield Static("", id="dup-old")
        yield Static("", id="evidence", classes="pane")
        yield Static("", id="meta", classes="pane")

    def show(
        self,
        cand: Candidate | None,
        duplicate: tuple[str, str] | None = None,
        *,
        empty: str = "Nothing waits. Press d to dream, or 2 for sessions.",
        agent: str = "",
    ) -> None:
        """Show ``cand`` (and the existing lesson it duplicates; ``agent``: whose session it came
        from); ``empty`` when there is none."""
        self.candidate = cand
        self.agent = agent
        dup = self.query_one("#dup")
        if cand is None:
            self.query_one("#summary", Static).update(Text(empty, style="dim"))
            self.query_one("#meta", Static).update("")
            self._show_evidence(Text(""))
            dup.display = False
            return
        self._render_summary()
        self._show_evidence(*self.evidence(cand))
        dup.display = duplicate is not None
        if duplicate is not None:
            title, text = duplicate
            self.query_one("#dup-new", Static).update(
                Group(
                    Text("This proposal", style="bold"),
                    literal_text(cand.claim),
                    literal_text(cand.why, style="dim"),
                )
            )
            old = [literal_text(f"Existing: {title}", style="bold yellow"), literal_text(text)]
            verdict = judged_label(cand)
            if verdict is not None:
                old.append(verdict)
            self.query_one("#dup-old", Static).update(Group(*old))
        # the pane opens at its top: badges, claim, why, how and the quote first (the raw transcript
        # below them is a scroll away: Ctrl+D, or Enter then j)
        self.scroll_home(animate=False, immediate=True)

    def show_outside(self, renderable: Group) -> None:
        """Show an outside change (its detail from :mod:`dreamtui.tui.widgets.outside_view`)."""
        self.candidate = None
        self.query_one("#summary", Static).update(renderable)
        self._match = None
        self.query_one("#evidence", Static).update("")
        self.query_one("#dup").display = False
        self.scroll_home(animate=False)

    fold = True  # progress and hook records and long tool output one line each (z unfolds)

    def toggle_fold(self) -> None:
        """Fold or unfold the evidence window's bookkeeping records and long tool output."""
        self.fold = not self.fold
        if self.candidate is not None:
            self._show_evidence(*self.evidence(self.candidate))
            self._centre_later()

    def quote_span(self) -> tuple[int, int] | None:
        """Where the quoted record is drawn in the pane's content: (first line, lines), if shown."""
        evidence = self.query_one("#evidence", Static)
        if self._match is None or not evidence.region.height:
            return None
        before, match = self._match
        # measured on a console of its own: the app's console is the one Textual draws with
        console = Console(file=io.StringIO(), width=max(1, evidence.content_region.width), color_system=None)
        top = (
            evidence.virtual_region.y
            + evidence.styles.gutter.top
            + len(console.render_lines(before, console.options, pad=False))
        )
        return top, len(console.render_lines(match, console.options, pad=False))

    centring = False  # a centre on the quote waits for the layout

    def _centre_later(self) -> None:
        self.centring = True
        self.call_after_refresh(self.centre_on_quote)

    def centre_on_quote(self) -> None:
        """Bring the quoted record into sight when it opens below the fold: scrolled just enough for it
        and a line after it (the badges and claim above stay in view as far as they can)."""
        span = self.quote_span()
        if span is None:
            if self._match is not None and self._centre_tries < 20:  # not laid out yet (the first proposal)
                self._centre_tries += 1
                self.set_timer(0.05, self.centre_on_quote)
                return
            self.centring = False
            return
        self._centre_tries = 0
        top, height = span
        bottom = top + height + 1
        if bottom > self.scroll_offset.y + self.size.height:
            # set_scroll, not scroll_to: a scroll_to here kept the live panel's RichLog from drawing its lines
            self.scroll_to(y=max(0, min(top, bottom - self.size.height)), animate=False, immediate=True)
        # measured at this width: when the next layout changes it (a scrollbar came with the evidence),
        # the lines wrap anew and the quote moved; measure again then
        self.call_after_refresh(
            self._centre_if_rewrapped, self.query_one("#evidence", Static).content_region.width
        )

    def _centre_if_rewrapped(self, width: int) -> None:
        if self.query_one("#evidence", Static).content_region.width != width and self._rewraps < 3:
            self._rewraps += 1
            self.centre_on_quote()
            return
        self._rewraps = 0
        self.centring = False

    _rewraps = 0

    _centre_tries = 0
    _match: tuple[Group, Group | Text] | None = (
        None  # what is drawn before the quoted record, and that record
    )

    def _show_evidence(
        self, before: Group | Text, match: Group | Text | None = None, after: Group | Text | None = None
    ) -> None:
        self._match = (before, match) if isinstance(before, Group) and match is not None else None
        parts = [before, *(p for p in (match, after) if p is not None)]
        self.query_one("#evidence", Static).update(Group(*parts))

    def evidence(self, cand: Candidate) -> tuple[Group | Text, ...]:
        """The raw transcript around the best match: the quote, where it is and the records before it;
        the quoted record; the records after it."""
        if not cand.matches:
            return (Group(Text("not verified: no place in the transcript", style="bold red")),)
        best = cand.matches[0]
        path = transcript_path(self.config, best.file or cand.transcript)
        try:
            shown = path.relative_to(self.config.transcripts)
        except ValueError:
            shown = path
        where = Text.assemble(
            ("Evidence  ", "bold dim"),
            literal_text(str(shown), one_line=True),
            (f" : line {best.line}", "bold"),
            (f"   ({len(cand.matches)} places)" if len(cand.matches) > 1 else "", "dim"),
        )
        try:
            window = read_window(path, best.line)
        except OSError as exc:
            return (Group(where, Text(f"cannot read the transcript: {exc.strerror}", style="red")),)
        part = {
            n: render_records(
                [r for r in window if (r.line > best.line) - (r.line < best.line) == n],
                best.line,
                cand.quote,
                fold=self.fold,
                compact=bool(self.size.width) and self.size.width < NARROW,
            )
            for n in (-1, 0, 1)
        }
        return Group(where, Text(), *part[-1]), Group(*part[0]), Group(*part[1])
