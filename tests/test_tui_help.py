"""Help as people expect it: ``?``/F1 lists the current screen's keys and the global ones (remapped keys
as remapped), Esc or ``?`` closes it; the palette shows each action's key; numbered screen tabs."""

from __future__ import annotations

import re

from fakes.tui import lines, open_queue, show, wait_for

from dreamtui.tui.screens.help import HelpScreen
from dreamtui.tui.widgets.screen_tabs import ScreenTabs


def help_text(app) -> str:
    return "\n".join(lines(app.screen.query_one("#help-keys")))


async def test_question_mark_lists_the_queue_keys_and_the_global_ones_and_esc_closes(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        shown = help_text(app)
        assert "Queue screen" in shown and "Everywhere" in shown
        assert shown.index("Queue screen") < shown.index("Everywhere")
        for key, what in (
            ("a", "Accept"),
            ("r", "Reject"),
            ("u", "Undo"),
            ("o", "Sort"),
            ("d", "Dream"),
            ("q", "Quit"),
            ("1", "Queue screen"),
            ("7", "Promotion screen"),
        ):
            assert any(
                re.match(rf"(\S+ / )*{re.escape(key)}( / \S+)* +{what}", line) for line in shown.splitlines()
            ), (key, what)
        assert "Command palette" in shown
        await pilot.press("a")  # keys of the screen below do nothing while help is open
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))
        assert table.row_count == len(ids)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_help_on_another_screen_lists_that_screens_keys(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, _table):
        await show(pilot, "7")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        shown = help_text(app)
        assert "Promotion screen" in shown and "Revoke" in shown
        assert "Reject" not in shown  # the queue's keys are not the promotion screen's


async def test_remapped_keys_show_as_remapped_in_help_palette_and_tabs(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    cfg = cfg.changed(keys={"accept": "y", "screen.stats": "f5", "help": "h"})
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, _table):
        assert "f5 Stats" in lines(app.screen.query_one(ScreenTabs))[0]
        accept = next(c for c in app.get_system_commands(app.screen) if c.title == "Accept")
        assert accept.help.startswith("key y ·")
        stats = next(c for c in app.get_system_commands(app.screen) if c.title == "Screen: Stats")
        assert stats.help.startswith("key f5 ·")
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        rows = help_text(app).splitlines()
        assert any(r.split()[:2] == ["y", "Accept"] for r in rows)
        assert not any(r.split()[:2] == ["a", "Accept"] for r in rows)


async def test_the_palette_shows_each_actions_key(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, _pilot, _table):
        helps = {c.title: c.help for c in app.get_system_commands(app.screen)}
    assert helps["Reject"].startswith("key r ·")
    assert helps["Dream now"].startswith("key d ·")
    assert helps["Screen: Sessions"].startswith("key 2 ·")
    assert helps["Help: keys of this screen"].startswith("key ? ·")


async def test_numbered_tabs_name_every_screen_and_light_the_current_one(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=(80, 24)) as (app, pilot, _table):
        tabs = lines(app.screen.query_one(ScreenTabs))[0]
        assert tabs.split() == [
            "1",
            "Queue",
            "2",
            "Sessions",
            "3",
            "Cycles",
            "4",
            "Briefings",
            "5",
            "Stats",
            "6",
            "Memory",
            "7",
            "Promotion",
        ]  # all seven fit at 80 columns
        await show(pilot, "3")
        assert app.screen.query_one(ScreenTabs).current == "cycles"
