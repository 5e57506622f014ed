"""``[keys]`` remaps the app cannot honour are one-line config errors: a key another action or the app's
built-in bindings use (however it is written: ``?`` is help's ``question_mark``), or no key at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamtui.cli.main import cli
from dreamtui.core.config import BUILTIN_KEYS, KEY_ACTIONS, check_keys, key_name, load_config
from dreamtui.core.errors import ConfigError


def config_line(tmp_path: Path, table: str) -> str:
    """``dreamtui --config FILE config`` with ``[keys]`` ``table``: its one line (exit 2)."""
    toml = tmp_path / "c.toml"
    toml.write_text(f"[keys]\n{table}\n")
    result = CliRunner().invoke(cli, ["--config", str(toml), "config"])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.mark.parametrize(
    ("table", "first", "second"),
    [
        ('accept = "?"', "help", "accept"),  # the attack: ? made the help key commit
        ('accept = "question_mark"', "help", "accept"),
        ('reject = "q"', "quit", "reject"),
        ('"briefings.accept" = "1"', "screen.queue", "briefings.accept"),
        ('help = "e"', "help", "edit"),
        ('filter = "/"', None, None),  # its own default, written as the character: fine
    ],
)
def test_a_remap_onto_another_actions_key_names_both_actions(
    tmp_path: Path, table: str, first: str | None, second: str | None
) -> None:
    if first is None:
        toml = tmp_path / "c.toml"
        toml.write_text(f"[keys]\n{table}\n")
        assert load_config(toml, required=True).keys == {"filter": "slash"}
        return
    line = config_line(tmp_path, table)
    assert line.startswith("dreamtui: config [keys]: key ")
    assert f"is given to two actions, {first} and {second}" in line


@pytest.mark.parametrize(
    ("key", "what"),
    [
        ("tab", "focus-next"),
        ("shift+tab", "focus-previous"),
        ("ctrl+q", "quit"),
        ("ctrl+c", "copy/quit"),
        ("ctrl+p", "command-palette"),
    ],
)
def test_a_remap_onto_a_built_in_key_is_refused(tmp_path: Path, key: str, what: str) -> None:
    line = config_line(tmp_path, f'accept = "{key}"')
    assert line == (
        f"dreamtui: config [keys]: key {key!r} of accept is the app's built-in {what} key; choose another key"
    )


def test_j_and_k_are_built_in_on_the_other_screens_but_remappable_on_the_queue() -> None:
    with pytest.raises(ConfigError, match="key 'j' of briefings.mark is the app's built-in down key"):
        check_keys({"briefings.mark": "j"})
    assert check_keys({"down": "n", "up": "p"}) == {"down": "n", "up": "p"}


@pytest.mark.parametrize("bad", ["cntrl+y", "enterr", "ctrl+", "foo", "hyper+shift+nope", "y,cntl+y"])
def test_an_unknown_key_name_is_a_one_line_error(tmp_path: Path, bad: str) -> None:
    line = config_line(tmp_path, f'accept = "{bad}"')
    assert line.startswith(f"dreamtui: config [keys]: accept = {bad!r}: ")
    assert "is not a key name" in line


def test_key_names_are_the_ones_textual_binds() -> None:
    """The core knows no Textual: its key names must be what Textual makes of the same text."""
    from textual.binding import Binding

    for typed in ["?", "/", "y", "A", "ctrl+y", "f5", "escape", "question_mark", "slash", "-", "+", "@", "."]:
        (binding,) = Binding.make_bindings([Binding(typed, "x")])
        textual_key = binding.key if len(typed) != 1 else _textual_character(typed)
        assert key_name(typed) == textual_key, typed


def _textual_character(char: str) -> str:
    from textual.keys import _character_to_key

    return _character_to_key(char)


def test_the_built_in_keys_are_the_ones_the_app_really_binds() -> None:
    """BUILTIN_KEYS (checked in the core) is every key bound without a remappable id: Textual's App and
    Screen bindings, the command palette, and the base screen's j/k."""
    from textual.app import App
    from textual.screen import Screen

    from dreamtui.tui.app import DreamApp
    from dreamtui.tui.screens.base import BaseScreen

    app_keys = {
        k.strip()
        for b in [*App.BINDINGS, *Screen.BINDINGS]
        for k in (b.key if hasattr(b, "key") else b[0]).split(",")
    }
    app_keys.add(DreamApp.COMMAND_PALETTE_BINDING)
    screen_keys = {b.key for b in BaseScreen.BINDINGS if not b.id}
    assert {k for k, (where, _) in BUILTIN_KEYS.items() if where == "app"} == app_keys
    assert {k for k, (where, _) in BUILTIN_KEYS.items() if where == "screens"} == screen_keys
    defaults = {k for _where, keys in KEY_ACTIONS.values() for k in keys.split(",")}
    assert not (set(BUILTIN_KEYS) - {"j", "k"}) & defaults  # no default takes a built-in key
