"""Secrets that used to reach git and the ledger (issue 34, section 2), through the two real paths
that carry text another hand wrote into the memory repository: ``dreamtui outside accept`` of a memory
file another program wrote, and a consolidation update whose new text a model wrote. Each case is a
secret written so that the scanner used to miss it. After each path, no object of the memory
repository (``git cat-file --batch-all-objects``, ``git log -p``), no byte of the ledger's files and
(for the update) not the memory file holds any piece of it.

A real git repository, a real ledger, the real CLI, the real Anthropic SDK against the local fake
Messages API. Fake credentials are assembled at run time so this file never holds one in clear.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args
from fakes.gitrepo import git as sh

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger import consolidations as rows
from dreamtui.core.memory.layout import project_folder
from dreamtui.core.secrets import scan

GH = "ghp_" + "Hq8Lm2Zx7Vb4Nc1Qw9Er6Ty3Ui5Op0AsXk2m"
AKIA = "AKIA" + "Q3EGRT7ZKLPX2M4N"

AWS_SECRET = "Zq8TkLm3VbN2xW/u9Rt5" + "Ye1Wq7Op3As6Df0Gh4Jk"

# name -> (the sentence a memory says, the secret as written in it)
EVASIONS: dict[str, tuple[str, str]] = {
    # a placeholder word inside a real password is not a placeholder
    "secret inside a prose password": ("The password is {s}", "Tr0ub4dor" + "Secret!x9"),
    "example inside an assigned password": ("password: {s}", "Exam" + "ple9Prod!"),
    "test1234 inside a password": ("The staging db password: {s}", "test" + "1234XYZ!q"),
    # invisible or look-alike characters inside a token
    "a variation selector inside a GitHub token": (
        "CI pushes with {s} on every tag",
        GH[:12] + "\ufe0f" + GH[12:],
    ),
    "a Hangul filler inside a GitHub token": (
        "CI pushes with {s} on every tag",
        GH[:20] + "\u3164" + GH[20:],
    ),
    "a no-break space inside a GitHub token": ("CI pushes with {s} on every tag", GH[:9] + "\u00a0" + GH[9:]),
    "a combining mark inside a GitHub token": (
        "CI pushes with {s} on every tag",
        GH[:15] + "\u0301" + GH[15:],
    ),
    "a Cyrillic A in an AWS key": ("The deploy user's key is {s} (rotate monthly)", "\u0410" + AKIA[1:]),
    "a Greek O and a Cyrillic e in a GitHub token": (
        "CI pushes with {s} on every tag",
        GH[:8] + "\u039f" + GH[9:30] + "\u0435" + GH[31:],
    ),
    # a key split over two lines
    "an AWS key split over two lines": (
        "The deploy user's access key:\n{s}\nRotate it monthly.",
        AKIA[:10] + "\n" + AKIA[10:],
    ),
    "a GitHub token split over two indented lines": (
        "- CI pushes tags with {s}\n- rotate it monthly",
        GH[:22] + "\n  " + GH[22:],
    ),
    # a token right after "key", "token", "secret"… whose length is one off its format
    "a GitHub token one character short after token": ("The CI token is {s}", GH[:-1]),
    "an AWS key one character short after key": ("The deploy key {s} is in CI", AKIA[:-1]),
    "an AWS key one character long after key": ("The deploy key {s} is in CI", AKIA + "7"),
    "an AWS secret key one character short after secret": (
        "Use the secret {s} for the deploy user",
        AWS_SECRET[:-1],
    ),
}


def _pieces(secret: str) -> list[str]:
    """What must be found nowhere: the secret as written, and each ASCII run of it of 8 or more
    characters (a secret split by an invisible character leaves its halves in clear)."""
    runs = "".join(c if c.isascii() and not c.isspace() else " " for c in secret).split()
    return [secret] + [r for r in runs if len(r) >= 8]


def _git_holds(root: Path, pieces: list[str]) -> list[str]:
    objects = subprocess.run(
        ["git", "-C", str(root), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    log = subprocess.run(
        ["git", "-C", str(root), "log", "-p", "--all"], capture_output=True, check=True
    ).stdout
    return [p for p in pieces if p.encode() in objects or p.encode() in log]


def _ledger_holds(config: Config, pieces: list[str]) -> list[str]:
    data = b"".join(p.read_bytes() for p in Path(config.state).rglob("*") if p.is_file())
    return [p for p in pieces if p.encode() in data]


def _run(config: Config, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, [*folder_args(config), *args])


@pytest.fixture(autouse=True)
def _home(git_home: Path) -> None:
    """A git identity, so the memory repository can commit."""


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_the_scanner_finds_each_evasion(name: str) -> None:
    template, secret = EVASIONS[name]
    text = template.format(s=secret)
    findings = scan(text)
    assert findings, text
    covered = "".join(text[f.start : f.end] for f in findings)
    assert all(piece in covered for piece in _pieces(secret)), (text, findings)


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_outside_accept_of_a_file_another_program_wrote_refuses_the_evasion(
    config: Config, name: str
) -> None:
    template, secret = EVASIONS[name]
    root = Path(config.memory)
    root.mkdir(parents=True)
    sh(root.parent, "init", "-q", "-b", "main", str(root))
    (root / "MEMORY.md").write_text("- [deploy](deploy.md) — how we deploy\n")
    (root / "deploy.md").write_text("Deploy with the release script.\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "seed")
    text = "Deploy with the release script.\n" + template.format(s=secret) + "\n"
    subprocess.run(  # another program writes the memory file
        [
            sys.executable,
            "-c",
            "import sys; open(sys.argv[1], 'w').write(sys.argv[2])",
            str(root / "deploy.md"),
            text,
        ],
        check=True,
    )
    listed = _run(config, "outside", "--json")
    assert listed.exit_code == 0, listed.output
    [item] = json.loads(listed.output)["items"]
    assert item["secret_rules"], item
    refused = _run(config, "outside", "accept", item["id"])
    assert refused.exit_code != 0 and "deploy.md holds a secret" in refused.output
    pieces = _pieces(secret)
    assert _git_holds(root, pieces) == []
    assert _ledger_holds(config, pieces) == []
    assert not any(p in listed.output + refused.output for p in pieces)


PROJECT = "-home-kim-shop"
FOLDER = f"projects/{project_folder(PROJECT)}"
SAID = (
    "Change of plan: the staging deploy now goes through the GitHub Actions workflow, not the fabric script."
)
QUOTE = "the staging deploy now goes through the GitHub Actions workflow, not the fabric script"


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_a_consolidation_update_whose_new_text_holds_the_evasion_stores_it_nowhere(
    config: Config, name: str
) -> None:
    from fakes.anthropic_server import FakeAnthropic, Reply, message
    from fakes.transcript import write_session

    from dreamtui.core.dream.consolidation import run_pass
    from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
    from dreamtui.core.ingest.digest import digest_session

    template, secret = EVASIONS[name]
    rel = f"{FOLDER}/deploy.md"
    root = Path(config.memory)
    (root / FOLDER).mkdir(parents=True)
    sh(root.parent, "init", "-q", "-b", "main", str(root))
    (root / rel).write_text(
        "---\nname: Deploy\ndescription: Deploy\ntype: project\n---\n\nDeploy with fabric.\n"
    )
    (root / "MEMORY.md").write_text(f"# Memory\n- [deploy]({rel}) — hook\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "memories")
    path = write_session(
        config.transcripts, [("person", SAID), ("assistant", "Understood.")], project=PROJECT
    )
    new_text = "Deploy staging through the GitHub Actions workflow.\n" + template.format(s=secret)
    answer = {
        "proposals": [
            {"kind": "update", "memories": [1], "quote": QUOTE, "new_text": new_text, "reason": "r"}
        ]
    }
    with FakeAnthropic() as server, Ledger.open(config.state) as ledger:
        server.script.append(Reply(200, message(answer)))
        structured = AnthropicExtractor(
            model="claude-sonnet-5-5", api_key="sk-ant-test", base_url=server.url, max_retries=0
        ).structured()
        report = run_pass(root, ledger, PROJECT, [digest_session([path])], structured)
        assert report.proposed == {"update": 1}, report
        [item] = rows.listed(ledger)
    accepted = _run(config, "consolidate", "accept", item.id)
    assert accepted.exit_code == 0, accepted.output
    written = (root / rel).read_text(encoding="utf-8")
    assert "GitHub Actions workflow" in written and "[REDACTED:" in written
    pieces = _pieces(secret)
    assert [p for p in pieces if p in written] == []
    assert _git_holds(root, pieces) == []
    assert _ledger_holds(config, pieces) == []
