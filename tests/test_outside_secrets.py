"""Outside files pass the one secret scanner (issue 23 item 2): a memory file another program wrote with
a GitHub token and a Stripe live key is flagged SECRET, shown redacted, refused on accept (core, CLI,
``mine``), and once the person removes the secrets it is accepted — and nothing of them is in git or
the ledger. A real git repository, a real ledger, the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args

from dreamtui.cli.main import cli
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import gitops, outside

# built at run time, so no scanner finds a literal secret in this file
GITHUB = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
SESSION = "5d2c7a10-3b4e-4f6a-9c8d-1e2f3a4b5c6d"


def _run(config, *args: str):
    return CliRunner().invoke(
        cli,
        [
            *folder_args(config),
        ]
        + list(args),
    )


def _seed(root: Path) -> None:
    repo = gitops.open_repo(root)
    (root / "MEMORY.md").write_text("- [deploy](deploy.md) — how we deploy\n")
    (root / "deploy.md").write_text("Deploy with the release script.\n")
    gitops.commit_paths(repo, ["MEMORY.md", "deploy.md"], "seed", {})


def _leaky_text() -> str:
    return (
        "Deploy with the release script.\n"
        f"The CI token is {GITHUB} (scope: repo).\n"
        f"Payments go live with stripe key {STRIPE}\n"
    )


def _written_by_another_program(config, rel: str, text: str) -> None:
    """A separate process writes the memory file, and a transcript records the agent's Write call."""
    path = Path(config.memory) / rel
    subprocess.run(
        [sys.executable, "-c", "import sys; open(sys.argv[1], 'w').write(sys.argv[2])", str(path), text],
        check=True,
    )
    project = Path(config.transcripts) / "-home-kim-src-payments-api"
    project.mkdir(parents=True, exist_ok=True)
    record = {
        "type": "assistant",
        "sessionId": SESSION,
        "cwd": "/home/kim/src/payments-api",
        "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "name": "Write", "input": {"file_path": str(path), "content": text}}
            ],
        },
    }
    (project / f"{SESSION}.jsonl").write_text(json.dumps(record) + "\n")


def _git_holds(root: Path, *needles: str) -> list[str]:
    """The needles found in any object of the repository (``git cat-file --batch-all-objects``) or in
    ``git log -p``."""
    objects = subprocess.run(
        ["git", "-C", str(root), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    log = subprocess.run(
        ["git", "-C", str(root), "log", "-p", "--all"], capture_output=True, check=True
    ).stdout
    return [n for n in needles if n.encode() in objects or n.encode() in log]


def _ledger_holds(config, *needles: str) -> list[str]:
    """The needles in any byte of the ledger's files (database, WAL)."""
    data = b"".join(p.read_bytes() for p in Path(config.state).rglob("*") if p.is_file())
    return [n for n in needles if n.encode() in data]


def test_a_secret_in_an_outside_file_is_flagged_redacted_refused_then_accepted_clean(
    config, git_home
) -> None:
    root = Path(config.memory)
    _seed(root)
    _written_by_another_program(config, "deploy.md", _leaky_text())
    with Ledger.open(config.state) as ledger:
        outside.scan(config, ledger)
        [item] = outside.items(ledger)
        assert item.writer == "auto-memory"  # the transcript named its writer
        assert "github-token" in item.secret_rules and any("stripe" in r for r in item.secret_rules)
        assert "SECRET(" in item.title()
        shown = outside.diff(config, item) + (outside.transcript_excerpt(item) or "")
        assert GITHUB not in shown and STRIPE not in shown
        assert "+The CI token is [REDACTED:github-token]" in shown
        with pytest.raises(
            outside.OutsideError, match=r"deploy.md holds a secret \(github-token.*: remove it"
        ):
            outside.accept(config, ledger, item.id)
        with pytest.raises(outside.OutsideError, match="holds a secret"):
            outside.accept(config, ledger, item.id, mine=True)
        with pytest.raises(outside.OutsideError, match="holds a secret"):
            outside.accept_mine(config, ledger, [item.id])
        assert outside.get(ledger, item.id).status == "pending"
        assert _git_holds(root, GITHUB, STRIPE) == []
        # the person removes the secrets: new bytes, a new scan result, and accept commits them
        (root / "deploy.md").write_text(
            _leaky_text().replace(GITHUB, "(in the vault)").replace(STRIPE, "(in the vault)")
        )
        outside.scan(config, ledger)
        [clean] = outside.items(ledger)
        assert clean.id == item.id and clean.secrets is None and "SECRET" not in clean.title()
        sha = outside.accept(config, ledger, clean.id)
    blob = subprocess.run(
        ["git", "-C", str(root), "rev-parse", f"{sha}:deploy.md"], capture_output=True, text=True, check=True
    ).stdout.strip()
    committed = subprocess.run(
        ["git", "-C", str(root), "cat-file", "blob", blob], capture_output=True, text=True, check=True
    ).stdout
    assert "The CI token is (in the vault)" in committed
    assert _git_holds(root, GITHUB, STRIPE) == []
    assert _ledger_holds(config, GITHUB, STRIPE) == []


def test_the_cli_shows_secret_redacted_and_refuses_accept_until_it_is_removed(config, git_home) -> None:
    root = Path(config.memory)
    _seed(root)
    _written_by_another_program(config, "deploy.md", _leaky_text())
    listed = _run(config, "outside")
    assert listed.exit_code == 0 and "SECRET(github-token" in listed.output
    as_json = _run(config, "outside", "--json")
    [item] = json.loads(as_json.output)["items"]
    assert "github-token" in item["secret_rules"]
    shown = _run(config, "outside", "show", item["id"])
    assert shown.exit_code == 0 and "[REDACTED:github-token]" in shown.output
    for out in (listed, as_json, shown):
        assert GITHUB not in out.output and STRIPE not in out.output
    refused = _run(config, "outside", "accept", item["id"])
    assert refused.exit_code != 0 and "Traceback" not in refused.output
    assert "deploy.md holds a secret (github-token" in refused.output
    assert "remove it from the file, then dreamtui outside again — or reject it" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    mine = _run(config, "outside", "mine", item["id"])
    assert mine.exit_code != 0 and "holds a secret" in mine.output
    (root / "deploy.md").write_text("Deploy with the release script; the keys are in the vault.\n")
    done = _run(config, "outside", "accept", item["id"])
    assert done.exit_code == 0 and "accepted" in done.output
    assert "keys are in the vault" in (
        subprocess.run(
            ["git", "-C", str(root), "show", "HEAD:deploy.md"], capture_output=True, text=True
        ).stdout
    )
    assert _git_holds(root, GITHUB, STRIPE) == []
    assert _ledger_holds(config, GITHUB, STRIPE) == []


def test_reject_puts_back_head_and_keeps_the_secret_nowhere(config, git_home) -> None:
    root = Path(config.memory)
    _seed(root)
    _written_by_another_program(config, "deploy.md", _leaky_text())
    (root / "keys.md").write_text(f"stripe: {STRIPE}\n")  # a new file too (reject removes it)
    listed = json.loads(_run(config, "outside", "--json").output)["items"]
    for item in listed:
        out = _run(config, "outside", "reject", item["id"], "--reason", f"leaked {GITHUB}")
        assert out.exit_code == 0, out.output
    assert (root / "deploy.md").read_text() == "Deploy with the release script.\n"
    assert not (root / "keys.md").exists()
    shown = _run(config, "outside", "show", listed[0]["id"])
    assert GITHUB not in shown.output and "not kept in git" in shown.output
    assert _git_holds(root, GITHUB, STRIPE) == []
    assert _ledger_holds(config, GITHUB, STRIPE) == []


def test_a_secret_in_a_file_name_is_shown_redacted_and_not_accepted(config, git_home) -> None:
    root = Path(config.memory)
    _seed(root)
    (root / f"{GITHUB}.md").write_text("a note named after a token\n")
    first = _run(config, "outside", "--json")
    [item] = json.loads(first.output)["items"]
    assert GITHUB not in first.output and "[REDACTED:github-token]" in item["path"]
    assert "github-token" in item["secret_rules"]
    again = json.loads(_run(config, "outside", "--json").output)["items"]
    assert [i["id"] for i in again] == [item["id"]]  # the same item at each scan, not a new one
    refused = _run(config, "outside", "accept", item["id"])
    assert refused.exit_code != 0 and "holds a secret (github-token): rename the file" in refused.output
    assert GITHUB not in refused.output
    (root / f"{GITHUB}.md").rename(root / "token-note.md")
    [renamed] = json.loads(_run(config, "outside", "--json").output)["items"]
    assert renamed["path"] == "token-note.md" and renamed["secret_rules"] == []
    assert _run(config, "outside", "accept", renamed["id"]).exit_code == 0
    assert _git_holds(root, GITHUB) == []
    assert _ledger_holds(config, GITHUB) == []
