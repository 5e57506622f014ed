"""A unified diff drawn in the app (issue 24): one colour per side, every line literal.

The lines come from :func:`dreamtui.core.memory.textdiff.unified` (git's hunks, split on ``\\n`` only), so
each screen row is one diff line: removed lines (and the ``---`` name) red, added lines (and ``+++``)
green, hunk headers cyan, the no-final-newline note dim. Rich markup, escape codes and control
characters inside memory text are drawn as characters (:func:`literal`), never obeyed.
"""

from __future__ import annotations

from rich.text import Text

from dreamtui.tui.widgets.literal import literal

REMOVED = "red"
ADDED = "green"
LINE_LIMIT = 2000


def line_style(line: str) -> str:
    """The style of one diff line, by its first character."""
    if line.startswith("---"):
        return f"bold {REMOVED}"
    if line.startswith("+++"):
        return f"bold {ADDED}"
    return {"-": REMOVED, "+": ADDED, "@": "cyan", "\\": "dim italic"}.get(line[:1], "")


def diff_text(lines: list[str], max_lines: int | None = None, empty: str = "(no difference)") -> Text:
    """The diff as a :class:`Text`, one row per line (at most ``max_lines``, then a line saying how
    many more)."""
    out = Text()
    shown = lines if max_lines is None else lines[:max_lines]
    for line in shown or [empty]:
        out.append(literal(line, LINE_LIMIT, one_line=True) + "\n", line_style(line) if shown else "dim")
    if max_lines is not None and len(lines) > max_lines:
        out.append(f"… {len(lines) - max_lines} more diff lines\n", "dim")
    return out
