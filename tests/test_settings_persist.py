"""Settings changed in the app (theme, the queue's order) persist in the config file: only those keys
are written, the rest of the person's file stays byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.tui import open_queue, queue_of, wait_for

from dreamtui.core.config import load_config
from dreamtui.core.errors import ConfigError
from dreamtui.core.settings import save_ui, updated_text

PERSONS_FILE = b"""# my dreamtui settings\r
extractor = "heuristic"   # offline\r
\r
[keys]\r
accept = "y"\r
\r
# the end\r
"""


def test_only_the_changed_keys_are_written_and_the_rest_kept_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(PERSONS_FILE)
    save_ui(path, {"theme": "gruvbox"})
    data = path.read_bytes()
    assert data.startswith(PERSONS_FILE)
    assert data[len(PERSONS_FILE) :] == b'\r\n[ui]\r\ntheme = "gruvbox"\r\n'
    save_ui(path, {"sort": "project"})
    save_ui(path, {"theme": "nord"})
    data = path.read_bytes()
    assert data.startswith(PERSONS_FILE)
    assert data[len(PERSONS_FILE) :] == b'\r\n[ui]\r\ntheme = "nord"\r\nsort = "project"\r\n'
    assert load_config(path).ui == {"theme": "nord", "sort": "project"}


def test_a_ui_table_in_the_middle_is_edited_in_place() -> None:
    data = b'[ui]\ntheme = "nord"  # dark\n\n[keys]\naccept = "y"\n'
    assert updated_text(
        data, {"theme": "gruvbox", "sort": "session"}
    ) == b'[ui]\ntheme = "gruvbox"  # dark\nsort = "session"\n\n[keys]\naccept = "y"\n'.replace(
        b'"gruvbox"  # dark', b'"gruvbox"'
    )  # the value's own comment goes with the value


def test_a_broken_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"extractor = \n")
    with pytest.raises(ConfigError, match="cannot save settings"):
        save_ui(path, {"theme": "nord"})
    assert path.read_bytes() == b"extractor = \n"


async def test_theme_and_order_chosen_in_the_app_are_there_after_a_restart(tui_setup, tmp_path: Path) -> None:
    cfg, ledger, ids = tui_setup
    path = tmp_path / "config.toml"
    path.write_bytes(PERSONS_FILE)
    cfg = cfg.changed(config_file=path)
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, _table):
        app.theme = "gruvbox"  # what the palette's theme picker does
        await pilot.press("o")  # grouped by project
        await wait_for(pilot, lambda: b"sort" in path.read_bytes())
    assert path.read_bytes().startswith(PERSONS_FILE)
    saved = load_config(path)
    assert saved.ui == {"theme": "gruvbox", "sort": "project"}
    again = cfg.changed(ui=saved.ui)
    async with open_queue(again, ledger, len(ids)) as (app, pilot, _table):
        assert app.theme == "gruvbox"
        assert queue_of(app).sort_mode == "project"


async def test_the_theme_chosen_in_the_demo_is_kept_and_nothing_else_is_written(tmp_path: Path) -> None:
    """``dreamtui --demo`` never saved the theme (its config names no file): the theme is the person's
    taste, so it goes to their config file (run_app passes it as ``theme_file``); the demo's order
    (``o``) stays the demo's."""
    from dreamtui.core.ledger import Ledger
    from dreamtui.demo import prepare_demo
    from dreamtui.tui.app import DreamApp

    path = tmp_path / "config.toml"
    path.write_bytes(PERSONS_FILE)
    person = load_config(path)
    demo = prepare_demo(tmp_path / "demo", person)
    assert demo.config_file is None
    ledger = Ledger.open(demo.state)
    try:
        app = DreamApp(demo, ledger, watch=False, theme_file=person.config_file)
        async with app.run_test() as pilot:
            await wait_for(pilot, lambda: queue_of(app).is_loaded)
            app.theme = "gruvbox"
            await pilot.press("o")
            await wait_for(pilot, lambda: b"gruvbox" in path.read_bytes())
            await pilot.pause()
        assert load_config(path).ui == {"theme": "gruvbox"}
        assert path.read_bytes().startswith(PERSONS_FILE)
        again = prepare_demo(tmp_path / "demo2", load_config(path))
        app = DreamApp(again, ledger, watch=False, theme_file=path)
        async with app.run_test() as pilot:
            assert app.theme == "gruvbox"
    finally:
        ledger.close()
