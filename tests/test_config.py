"""Configuration: flags > DREAMTUI_* environment > TOML file > defaults, and the DREAMTUI_NOW clock."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from dreamtui.cli.main import cli
from dreamtui.core import clock
from dreamtui.core.config import Config, choices, default_state, load_config
from dreamtui.core.errors import ConfigError


def write_toml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_point_at_claude_code_folders(tmp_path: Path):
    cfg = load_config(tmp_path / "missing.toml")
    assert cfg.transcripts == Path.home() / ".claude" / "projects"
    assert cfg.memory == Path.home() / ".claude" / "memory"
    assert cfg.state == default_state()
    assert cfg.ledger_path == cfg.state / "ledger.sqlite3"
    assert cfg.config_file == tmp_path / "missing.toml"


def test_toml_overrides_defaults_env_overrides_toml_flags_override_env(tmp_path: Path, monkeypatch):
    toml = write_toml(
        tmp_path / "c.toml",
        'transcripts = "/toml/t"\nmemory = "/toml/m"\nstate = "/toml/s"\nconcurrency = 7\n',
    )
    cfg = load_config(toml)
    assert (cfg.transcripts, cfg.memory, cfg.state, cfg.concurrency) == (
        Path("/toml/t"),
        Path("/toml/m"),
        Path("/toml/s"),
        7,
    )
    monkeypatch.setenv("DREAMTUI_MEMORY", "/env/m")
    monkeypatch.setenv("DREAMTUI_STATE", "/env/s")
    cfg = load_config(toml)
    assert (cfg.transcripts, cfg.memory, cfg.state) == (Path("/toml/t"), Path("/env/m"), Path("/env/s"))
    cfg = load_config(toml, state="/flag/s", memory=None)
    assert (cfg.transcripts, cfg.memory, cfg.state) == (Path("/toml/t"), Path("/env/m"), Path("/flag/s"))


def test_dreamtui_config_env_names_the_file(tmp_path: Path, monkeypatch):
    toml = write_toml(tmp_path / "elsewhere.toml", 'transcripts = "~/t"\n')
    monkeypatch.setenv("DREAMTUI_CONFIG", str(toml))
    cfg = load_config()
    assert cfg.transcripts == Path.home() / "t"
    assert cfg.config_file == toml


@pytest.mark.parametrize(
    "text, message",
    [
        ("transcripts = [unclosed", "is not valid TOML"),
        ('colour = "blue"\n', "unknown setting(s) colour"),
        ("concurrency = 0\n", "must be positive"),
        ('concurrency = "many"\n', "must be a whole number"),
        ('extractor = "magic"\n', "unknown extractor 'magic'"),
        ("command = 3\n", "must be a string or a list of strings"),
    ],
)
def test_bad_config_file_is_a_one_line_error(tmp_path: Path, text: str, message: str):
    toml = write_toml(tmp_path / "bad.toml", text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        load_config(toml)
    assert "\n" not in str(info.value)


def test_cli_shows_resolved_config_and_reports_bad_toml_without_traceback(tmp_path: Path, monkeypatch):
    toml = write_toml(tmp_path / "c.toml", 'memory = "/toml/m"\n')
    monkeypatch.setenv("DREAMTUI_TRANSCRIPTS", "/env/t")
    result = CliRunner().invoke(cli, ["--config", str(toml), "--state", "/flag/s", "config"])
    assert result.exit_code == 0, result.output
    assert "transcripts: /env/t" in result.output
    assert "memory: /toml/m" in result.output
    assert "state: /flag/s" in result.output
    # a flag after the sub-command name wins too
    result = CliRunner().invoke(cli, ["--config", str(toml), "config", "--memory", "/sub/m"])
    assert "memory: /sub/m" in result.output
    bad = write_toml(tmp_path / "bad.toml", "x = [")
    result = CliRunner().invoke(cli, ["--config", str(bad), "config"])
    assert result.exit_code == 2
    assert "is not valid TOML" in result.output and "Traceback" not in result.output


def test_dreamtui_now_overrides_the_clock(monkeypatch):
    monkeypatch.setenv("DREAMTUI_NOW", "2026-02-03T04:05:06Z")
    assert clock.now() == datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert clock.now_iso() == "2026-02-03T04:05:06Z"
    assert clock.today() == date(2026, 2, 3)
    monkeypatch.setenv("DREAMTUI_NOW", "2026-02-03T23:30:00-02:00")  # offsets become UTC
    assert clock.today() == date(2026, 2, 4)
    monkeypatch.setenv("DREAMTUI_NOW", "2026-02-03T10:00:00")  # naive is taken as UTC
    assert clock.now_iso() == "2026-02-03T10:00:00Z"


def test_bad_dreamtui_now_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("DREAMTUI_NOW", "yesterday-ish")
    with pytest.raises(clock.ClockError, match="DREAMTUI_NOW='yesterday-ish' is not an ISO 8601"):
        clock.now()


def test_without_dreamtui_now_the_clock_is_real():
    before = datetime.now(UTC)
    assert before <= clock.now() <= datetime.now(UTC)


def test_cli_config_shows_every_setting_and_whether_claude_judges_duplicates(tmp_path: Path, monkeypatch):
    toml = write_toml(
        tmp_path / "c.toml", 'quiet_minutes = 12\ncommand = "my-extractor --json"\n[keys]\naccept = "y"\n'
    )
    result = CliRunner().invoke(cli, ["--config", str(toml), "config"])
    assert result.exit_code == 0, result.output
    for line in (
        "quiet_minutes: 12",
        "command: my-extractor --json",
        "schedule: (none)",
        "keys.accept: y",
        "dedup_judge: auto (off)",
    ):
        assert line in result.output
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    result = CliRunner().invoke(cli, ["--config", str(toml), "config"])
    assert "extractor: anthropic" in result.output and "dedup_judge: auto (on" in result.output


@pytest.mark.usefixtures("git_home")
@pytest.mark.parametrize(
    "text, message",
    [
        ("min_person_chars = 1e400", "'min_person_chars' must be a whole number"),
        ("concurrency = true", "'concurrency' must be a whole number"),
        ("concurrency = 2.5", "'concurrency' must be a whole number"),
        ("quiet_minutes = nan", "'quiet_minutes' must be a finite number"),
        ("quiet_minutes = -inf", "'quiet_minutes' must be a finite number"),
        ("command_timeout = 0", "'command_timeout' must be a finite number above 0"),
        ("rescan_seconds = -1", "'rescan_seconds' must be a finite number above 0"),
        ("model = 5", "'model' must be a string"),
    ],
)
def test_unusable_config_values_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text + "\n")
    result = CliRunner().invoke(cli, ["--config", str(cfg), "config"])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.usefixtures("git_home")
def test_usable_config_values_still_load(tmp_path: Path) -> None:
    from dreamtui.core.config import load_config

    cfg = tmp_path / "config.toml"
    cfg.write_text('concurrency = 3.0\nquiet_minutes = 0\nmin_person_chars = "40"\n')
    loaded = load_config(cfg)
    assert (loaded.concurrency, loaded.quiet_minutes, loaded.min_person_chars) == (3, 0.0, 40)


@pytest.mark.usefixtures("git_home")
def test_config_shows_paths_with_escape_codes_escaped(tmp_path: Path) -> None:
    odd = tmp_path / "mem\x1b]0;T\x07ory"
    result = CliRunner().invoke(cli, ["--memory", str(odd), "--state", str(tmp_path / "s"), "config"])
    assert result.exit_code == 0
    assert "\x1b" not in result.output and "mem\\x1b]0;T\\x07ory" in result.output


def test_every_setting_can_come_from_a_dreamtui_environment_variable(tmp_path: Path, monkeypatch) -> None:
    toml = write_toml(tmp_path / "c.toml", 'concurrency = 2\ncommand = "from-file"\ndedup_judge = "auto"\n')
    monkeypatch.setenv("DREAMTUI_CONCURRENCY", "6")
    monkeypatch.setenv("DREAMTUI_COMMAND", "my-extractor --json 'two words'")
    monkeypatch.setenv("DREAMTUI_DEDUP_JUDGE", " OFF ")
    monkeypatch.setenv("DREAMTUI_BATCH", "yes")
    monkeypatch.setenv("DREAMTUI_QUIET_MINUTES", "")  # empty is not given: the default stays
    cfg = load_config(toml)
    assert (cfg.concurrency, cfg.command, cfg.dedup_judge, cfg.batch, cfg.quiet_minutes) == (
        6,
        ("my-extractor", "--json", "two words"),
        "off",
        True,
        5.0,
    )
    assert load_config(toml, concurrency=1).concurrency == 1  # a flag still wins


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("DREAMTUI_CONCURRENCY", "lots", "config 'concurrency' must be a whole number, not 'lots'"),
        ("DREAMTUI_API_TIMEOUT", "0", "config 'api_timeout' must be a finite number above 0, not '0'"),
        ("DREAMTUI_BATCH", "maybe", "config 'batch' must be true or false, not 'maybe'"),
        (
            "DREAMTUI_EXTRACTOR",
            "magic",
            "unknown extractor 'magic': choose one of auto, heuristic, anthropic, claude-code, openai, command",
        ),
        ("DREAMTUI_KEYS", "accept=y", 'config [keys] must be a table of action = "key"'),
    ],
)
def test_a_bad_environment_value_is_the_same_one_line_error(
    tmp_path: Path, monkeypatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "missing.toml")
    assert str(info.value) == message


def test_config_file_is_not_a_setting_of_the_file_itself(tmp_path: Path) -> None:
    toml = write_toml(tmp_path / "c.toml", 'config_file = "/elsewhere.toml"\n')
    with pytest.raises(ConfigError, match=r"unknown setting\(s\) config_file"):
        load_config(toml)


def test_a_config_built_in_code_reads_only_what_it_is_given(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DREAMTUI_CONCURRENCY", "9")
    monkeypatch.setenv("DREAMTUI_CONFIG", str(write_toml(tmp_path / "c.toml", "quiet_minutes = 1\n")))
    cfg = Config(memory=tmp_path / "m")
    assert (cfg.concurrency, cfg.quiet_minutes, cfg.memory, cfg.config_file) == (4, 5.0, tmp_path / "m", None)


def test_changed_is_a_checked_copy_and_the_key_is_never_printed(tmp_path: Path) -> None:
    cfg = Config(state=tmp_path, openai_api_key="sk-local-secret")
    again = cfg.changed(extractor="heuristic", command="x --json")
    assert (again.extractor, again.command, again.state, cfg.extractor) == (
        "heuristic",
        ("x", "--json"),
        tmp_path,
        "auto",
    )
    with pytest.raises(ConfigError, match=r"^config 'concurrency' must be positive, not 0$"):
        cfg.changed(concurrency=0)
    with pytest.raises(ConfigError, match=r"^config \[ui\] sort must be one of newest, project, session"):
        cfg.changed(ui={"sort": "oldest"})
    assert "sk-local-secret" not in repr(cfg) and "sk-local-secret" not in str(again)


def test_the_clis_choices_are_the_settings_own() -> None:
    assert choices("extractor") == ("auto", "heuristic", "anthropic", "claude-code", "openai", "command")
    assert choices("ui.sort") == ("newest", "project", "session")
    extractor = next(p for p in cli.params if p.name == "extractor")
    assert isinstance(extractor.type, click.Choice)
    assert tuple(extractor.type.choices) == choices("extractor")
    with pytest.raises(ValueError, match="not a choice"):
        choices("concurrency")
