"""The README tells a newcomer the truth: its test command installs the pinned versions, every flag it
names exists, and it names no folder of the machine it was written on."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamtui.cli.main import cli

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of a Markdown text, in order."""
    return re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)


def everyday_lines() -> list[str]:
    """The command lines of the README's "Everyday use" block (without their comments' text)."""
    section = README.split("## Everyday use", 1)[1]
    return [line for line in code_blocks(section)[0].splitlines() if line.startswith("dreamtui")]


def test_the_test_command_installs_the_pinned_versions_and_runs_in_parallel() -> None:
    first = code_blocks(README)[0]
    [command] = [line.split("#")[0].strip() for line in first.splitlines() if "-m pytest" in line]
    assert command.startswith("pip install -e '.[test]' -c constraints.txt && python3 -m pytest ")
    assert " -n " in command  # pytest-xdist: the suite uses every core


def test_constraints_pin_every_declared_dependency_exactly() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    pins = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line}"
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    assert "dreamtui" not in pins
    for requirement in declared:
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)).lower()
        assert name in pins, f"{name} is declared in pyproject.toml but not pinned in constraints.txt"


def test_the_readme_names_no_folder_of_the_machine_it_was_written_on() -> None:
    assert not re.findall(r"(?<![\w.~])/(?:work|root|home/\w+|tmp)/", README)


@pytest.mark.parametrize("line", everyday_lines(), ids=lambda line: line.split("#")[0].strip())
def test_every_flag_the_everyday_commands_name_exists(line: str) -> None:
    words = line.split("#")[0].split()
    command = [w for w in words[1:2] if re.fullmatch(r"[a-z]+", w)]
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0, result.output
    for flag in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", line))):
        assert re.search(rf"(?<![\w-]){flag}\b", result.output), f"dreamtui {' '.join(command)} has no {flag}"
