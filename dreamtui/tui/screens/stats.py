"""Stats: accept rate over time, per extractor/model, per type, rejection reasons, yield per cycle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dreamtui.tui.screens.base import BaseScreen
from dreamtui.tui.widgets.charts import bars, sparkline
from dreamtui.tui.widgets.literal import literal


def pct(rate: float | None) -> str:
    """A rate as a percentage, or a dash when there were no decisions."""
    return "—" if rate is None else f"{rate:.0%}"


def plural(n: int, word: str) -> str:
    """``1 day``, ``2 days``, ``0 days``."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def title(text: str) -> Text:
    return Text(text, style="bold underline")


def rate_rows(buckets: dict[str, dict[str, Any]], label_width: int = 24) -> Text:
    """One line per bucket: a 20-cell bar of the accept rate, the rate, and the counts."""
    if not buckets:
        return Text("(no decisions yet)", style="dim")
    out = Text()
    for n, (name, b) in enumerate(buckets.items()):
        rate = b.get("accept_rate")
        filled = round(20 * rate) if rate is not None else 0
        if n:
            out.append("\n")
        out.append(literal(name, label_width, one_line=True).ljust(label_width) + " ")
        out.append("█" * filled, "green")
        out.append("░" * (20 - filled), "red" if rate is not None else "grey30")
        out.append(f" {pct(rate):>4}  {b.get('accepted', 0)} accepted / {b.get('rejected', 0)} rejected")
    return out


def _writer_rows(by_writer: dict[str, dict[str, Any]]) -> list[Text]:
    """Per writer of memory (dreamtui extractor, Claude Code auto memory, auto dream, person), once a
    decision on a change made outside dreamtui was taken (issue 17)."""
    if not set(by_writer) - {"dreamtui extractor"}:
        return []
    return [title("Per writer (who wrote what you kept)"), rate_rows(by_writer), Text()]


def _kind_rows(by_kind: dict[str, dict[str, Any]]) -> list[Text]:
    """Per kind of proposal (add / update / retire / merge, issue 26), once a consolidation was proposed."""
    rest = [b for k, b in by_kind.items() if k != "add"]
    if not any(b.get("pending", 0) + b.get("decisions", 0) + b.get("undone", 0) for b in rest):
        return []
    rows = {f"{k} ({b.get('pending', 0)} waiting)": b for k, b in by_kind.items()}
    return [title("Per kind (add a lesson, update / retire / merge a memory)"), rate_rows(rows), Text()]


def _agent_rows(by_agent: dict[str, dict[str, Any]]) -> list[Text]:
    """Per agent whose session a proposal came from, and within each agent per extractor / model
    (the promotion gates count every agent together)."""
    rows: dict[str, dict[str, Any]] = {}
    for agent, b in by_agent.items():
        rows[agent] = b
        pairs = b.get("by_extractor") or {}
        if len(by_agent) > 1 or len(pairs) > 1:
            for pair, c in pairs.items():
                rows[f"  {agent} · {pair}"] = c
    return [title("Per agent (whose session it came from), and its extractors"), rate_rows(rows, 32), Text()]


def render_stats(data: dict[str, Any], kept_per_cycle: list[int]) -> Group:
    """The whole Stats page."""
    weeks = data.get("by_week") or {}
    parts: list[Text] = [
        Text.assemble(
            ("Accept rate ", "bold"),
            (pct(data.get("accept_rate")), "bold cyan"),
            f"   {plural(data.get('decisions', 0), 'decision')} ({data.get('accepted', 0)} accepted, "
            f"{data.get('rejected', 0)} rejected) over {plural(data.get('decision_days', 0), 'day')} · "
            f"{data.get('skipped', 0)} skipped · {data.get('undone', 0)} undone · "
            f"{data.get('auto_accepted', 0)} auto-written",
        ),
        Text(),
        title("Accept rate over time (per week)"),
        Text.assemble(
            sparkline([b.get("accept_rate") for b in weeks.values()], 0.0, 1.0),
            ("  " + (f"{next(iter(weeks))} → {list(weeks)[-1]}" if weeks else ""), "dim"),
        ),
        rate_rows(weeks, 10),
        Text(),
        *_writer_rows(data.get("by_writer") or {}),
        *_kind_rows(data.get("by_kind") or {}),
        title("Per extractor / model"),
        rate_rows(data.get("by_extractor") or {}),
        Text(),
        *_agent_rows(data.get("by_agent") or {}),
        title("Per type"),
        rate_rows(data.get("by_type") or {}),
        Text(),
        title("Rejection reasons"),
        bars({k: float(v) for k, v in (data.get("rejection_reasons") or {}).items()}, style="red"),
        Text(),
        title("Candidates"),
        bars({k: float(v) for k, v in (data.get("candidates") or {}).items()}, style="cyan"),
        Text(),
        title("Yield per cycle (new proposals, oldest → newest)"),
        Text.assemble(
            sparkline(kept_per_cycle, 0.0) if kept_per_cycle else Text("(no cycles yet)", style="dim"),
            (
                f"  {plural(len(kept_per_cycle), 'cycle')}, last {kept_per_cycle[-1]}"
                if kept_per_cycle
                else "",
                "dim",
            ),
        ),
    ]
    return Group(*parts)


@dataclass(frozen=True, slots=True)
class StatsData:
    """What the Stats screen's loader reads: the statistics, and new proposals per cycle (oldest first)."""

    stats: dict[str, Any]
    kept_per_cycle: list[int]


class StatsScreen(BaseScreen[StatsData]):
    """What :func:`core.stats.compute_stats` says, drawn as text charts."""

    TITLE_TEXT = "stats"
    LOADING_TARGET = "#stats"

    def body(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("", id="stats", classes="pane")

    def load(self) -> StatsData:
        return StatsData(
            self.workspace.stats(), [c.new_candidates for c in reversed(self.workspace.cycles(60))]
        )

    def show(self, data: StatsData) -> None:
        self.query_one("#stats", Static).update(render_stats(data.stats, data.kept_per_cycle))
