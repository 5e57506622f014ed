"""Text charts for the Stats screen: a sparkline and horizontal bars (no markup, plain Text)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.text import Text

from dreamtui.tui.widgets.literal import literal

BLOCKS = " ▁▂▃▄▅▆▇█"


def sparkline(values: Iterable[float | None], lo: float | None = None, hi: float | None = None) -> Text:
    """One character per value, scaled between ``lo`` and ``hi`` (the data's range by default)."""
    vals = list(values)
    nums = [v for v in vals if v is not None]
    if not nums:
        return Text("(no data)", style="dim")
    low = min(nums) if lo is None else lo
    high = max(nums) if hi is None else hi
    span = (high - low) or 1.0
    out = Text()
    for v in vals:
        if v is None:
            out.append("·", "dim")
        else:
            out.append(BLOCKS[max(1, min(8, round(1 + 7 * (v - low) / span)))], "cyan")
    return out


def bars(
    items: Mapping[str, float] | Iterable[tuple[str, float]],
    width: int = 30,
    fmt: str = "{:,.0f}",
    style: str = "magenta",
) -> Text:
    """Horizontal bars, one line per label, scaled to the largest value."""
    pairs = list(items.items()) if isinstance(items, Mapping) else list(items)
    if not pairs:
        return Text("(none)", style="dim")
    top = max((v for _, v in pairs), default=0) or 1
    label_w = min(24, max(len(str(k)) for k, _ in pairs))
    out = Text()
    for n, (label, value) in enumerate(pairs):
        if n:
            out.append("\n")
        out.append(literal(str(label), label_w, one_line=True).ljust(label_w) + " ")
        out.append("█" * max(0, round(width * value / top)), style)
        out.append(" " + fmt.format(value))
    return out
