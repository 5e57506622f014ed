"""The numbered screen tabs under the header: which key opens which screen, the current one lit."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from dreamtui.tui.access import dream_app
from dreamtui.tui.screen_keys import SCREENS_KEYS


def tabs_text(screens: Sequence[tuple[str, str, str]], current: str, key_for: Callable[[str], str]) -> Text:
    """``1 Queue  2 Sessions …``: each screen's key in effect (remapped keys as remapped) and its name;
    the current screen reversed; a click on a tab opens its screen."""
    out = Text(no_wrap=True, overflow="ellipsis")
    for n, (_default, mode, label) in enumerate(screens):
        lit = mode == current
        click = Style.from_meta({"@click": f"app.switch_mode('{mode}')"})
        out.append(" " if n else "")
        key = key_for(f"screen.{mode}")
        if lit:
            out.append(f"{key} {label}", Style(bold=True, color="black", bgcolor="cyan") + click)
        else:
            out.append(key, Style(bold=True, color="cyan") + click)
            out.append(f" {label}", click)
        out.append(" ")
    return out


class ScreenTabs(Static):
    """One line: the screens and their keys."""

    DEFAULT_CSS = """
    ScreenTabs { height: 1; background: $panel-darken-1; link-style: none; link-style-hover: bold; }
    """

    def __init__(self, current: str, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.current = current

    def on_mount(self) -> None:
        self.update(tabs_text(SCREENS_KEYS, self.current, dream_app(self).key_for))
