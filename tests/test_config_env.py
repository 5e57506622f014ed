"""``DREAMTUI_*`` variables read where they are used (the outside window, git's timeouts) and
``DREAMTUI_CONFIG`` are checked like the settings: a bad value is one line, exit 2, never silently
the default."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamtui.cli.main import cli
from dreamtui.core.config import SECONDS_ENV, load_config
from dreamtui.core.errors import ConfigError
from dreamtui.core.memory import gitops, outside


def one_line(env: dict[str, str]) -> str:
    result = CliRunner().invoke(cli, ["config"], env=env)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.mark.parametrize("name", SECONDS_ENV)
@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf", "10s"])
def test_a_bad_number_of_seconds_in_the_environment_is_a_one_line_error(name: str, value: str) -> None:
    assert (
        one_line({name: value}) == f"dreamtui: {name} must be a number of seconds, 0 or more, not {value!r}"
    )


def test_a_dreamtui_now_that_is_no_timestamp_is_a_one_line_error_before_any_command() -> None:
    assert (
        one_line({"DREAMTUI_NOW": "yesterday"})
        == "dreamtui: DREAMTUI_NOW='yesterday' is not an ISO 8601 timestamp"
    )
    result = CliRunner().invoke(cli, ["config"], env={"DREAMTUI_NOW": "2026-11-28T18:30:00Z"})
    assert result.exit_code == 0, result.output


def test_the_hook_timeout_and_the_outside_window_refuse_a_bad_value_where_they_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DREAMTUI_GIT_HOOK_TIMEOUT", "-5")
    with pytest.raises(ConfigError, match="DREAMTUI_GIT_HOOK_TIMEOUT must be a number of seconds"):
        gitops.hook_timeout()
    monkeypatch.setenv("DREAMTUI_OUTSIDE_WINDOW", "a while")
    with pytest.raises(ConfigError, match="DREAMTUI_OUTSIDE_WINDOW must be a number of seconds"):
        outside.window()
    monkeypatch.setenv("DREAMTUI_GIT_HOOK_TIMEOUT", "2.5")
    monkeypatch.setenv("DREAMTUI_OUTSIDE_WINDOW", "0")
    assert (gitops.hook_timeout(), outside.window()) == (2.5, 0.0)
    monkeypatch.setenv("DREAMTUI_GIT_HOOK_TIMEOUT", "")  # empty: unset
    assert gitops.hook_timeout() == gitops.DEFAULT_HOOK_TIMEOUT


def test_a_missing_file_named_by_dreamtui_config_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "confg.toml"  # mistyped
    assert one_line({"DREAMTUI_CONFIG": str(missing)}) == (
        f"dreamtui: config file {missing} does not exist (see DREAMTUI_CONFIG)"
    )
    monkeypatch.setenv("DREAMTUI_CONFIG", str(missing))
    with pytest.raises(ConfigError, match="does not exist"):
        load_config()


def test_the_default_config_file_may_still_be_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DREAMTUI_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # the default place, nothing there
    cfg = load_config()
    assert cfg.config_file is not None and not cfg.config_file.exists()


@pytest.mark.parametrize("value", ["abc", "-1", "0", "2MB", "1.5"])
def test_a_bad_outside_size_limit_is_a_one_line_error_not_the_default_or_every_file_too_large(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = f"DREAMTUI_OUTSIDE_MAX_BYTES must be a whole number of bytes, 1 or more, not {value!r}"
    assert one_line({"DREAMTUI_OUTSIDE_MAX_BYTES": value}) == f"dreamtui: {message}"
    from dreamtui.core.memory import outside_tree

    monkeypatch.setenv("DREAMTUI_OUTSIDE_MAX_BYTES", value)
    with pytest.raises(ConfigError) as refused:
        outside_tree.max_bytes()
    assert str(refused.value) == message
    monkeypatch.setenv("DREAMTUI_OUTSIDE_MAX_BYTES", " 4096 ")
    assert outside_tree.max_bytes() == 4096
