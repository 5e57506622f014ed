"""End to end: ``dreamtui candidates / accept / reject / skip / undo / stats / review``."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args, write_records

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import gitops
from dreamtui.core.models import Candidate, Match


@pytest.fixture(autouse=True)
def _git_home(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-05-06T07:08:09Z")


def make(ledger: Ledger, n: int, **kw: object) -> Candidate:
    fields: dict[str, object] = dict(
        id=f"k{n:03d}",
        session="sess-9",
        project="p",
        transcript="/t/sess-9.jsonl",
        claim=f"Pin the \x1b[31mnode\x1b[0m version {n}",
        why="builds broke",
        how_to_apply="use .nvmrc",
        type="project",
        scope="global",
        quote="pin node please",
        extractor="heuristic",
        model=None,
        provenance="person",
        matches=[Match("/t/sess-9.jsonl", 3, None, None, "person")],
        created_at=f"2026-05-06T0{n}:00:00Z",
    )
    fields.update(kw)
    cand = Candidate(**fields)  # type: ignore[arg-type]
    ledger.put_candidate(cand)
    return cand


def run(config: Config, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--memory", str(config.memory), "--state", str(config.state), *args])
    return result.exit_code, result.stdout, result.stderr


def test_candidates_json_has_the_promised_fields(config: Config, ledger: Ledger) -> None:
    make(ledger, 1)
    make(ledger, 2, provenance="tool", duplicate_of="other.md")
    make(ledger, 3, status="dropped")
    code, out, _ = run(config, "candidates", "--json")
    assert code == 0
    items = json.loads(out)
    assert [c["id"] for c in items] == ["k002", "k001"]
    for key in ("id", "claim", "quote", "session", "status", "provenance", "duplicate_of"):
        assert key in items[0]
    assert (items[0]["provenance"], items[0]["duplicate_of"], items[1]["session"]) == (
        "tool",
        "other.md",
        "sess-9",
    )
    code, out, _ = run(config, "candidates", "--status", "dropped", "--json")
    assert [c["id"] for c in json.loads(out)] == ["k003"]
    code, out, _ = run(config, "candidates")
    assert "k001  pending" in out and "[tool output]" in out and "\x1b" not in out


def test_accept_reject_skip_undo_stats_round(config: Config, ledger: Ledger) -> None:
    for n in (1, 2, 3):
        make(ledger, n)
    code, out, err = run(config, "accept", "k001", "--claim", "Pin node with .nvmrc")
    assert code == 0, err
    assert "accepted k001 → pin-node-with-nvmrc.md (commit " in out
    code, out, _ = run(config, "reject", "k002", "--reason", "too narrow", "--category", "too-specific")
    assert (code, out.strip()) == (0, "rejected k002 (too specific)")
    code, out, _ = run(config, "skip", "k003")
    assert (code, out.strip()) == (0, "skipped k003 (still pending)")
    code, out, _ = run(config, "stats", "--json")
    stats = json.loads(out)
    assert (stats["accepted"], stats["rejected"], stats["accept_rate"]) == (1, 1, 0.5)
    assert stats["rejection_reasons"] == {"too specific": 1}
    code, out, _ = run(config, "stats")
    assert "accept rate 50%" in out
    assert run(config, "undo")[1].strip() == "undid skip of k003; it is pending again"
    assert run(config, "undo")[1].strip() == "undid reject of k002; it is pending again"
    code, out, _ = run(config, "undo")
    assert out.startswith("undid accept of k001 (revert commit ")
    assert not (config.memory / "pin-node-with-nvmrc.md").exists()
    code, out, _ = run(config, "candidates", "--status", "pending", "--json")
    assert len(json.loads(out)) == 3


def test_errors_are_one_line_without_traceback(config: Config, ledger: Ledger) -> None:
    make(ledger, 1, provenance="tool")
    code, _, err = run(config, "accept", "nope")
    assert code == 2 and err.strip() == "dreamtui: no candidate with id 'nope' (see `dreamtui candidates`)"
    code, _, err = run(config, "accept", "k001")
    assert code == 2 and "provenance tool output" in err and "--yes-tool-output" in err
    assert "Traceback" not in err
    code, out, _ = run(config, "accept", "k001", "--yes-tool-output")
    assert code == 0 and "accepted k001" in out
    code, _, err = run(config, "reject", "k001", "--reason", "x", "--category", "meh")
    assert code == 2 and "unknown reject category 'meh'" in err
    code, _, err = run(config, "reject", "k001")
    assert code == 2 and "--reason" in err
    assert run(config, "undo")[0] == 0
    code, _, err = run(config, "undo")
    assert code == 2 and "nothing to undo" in err


def test_every_command_warns_when_the_index_is_nearly_full(config: Config, ledger: Ledger) -> None:
    repo = gitops.open_repo(config.memory)
    (config.memory / "MEMORY.md").write_text("- [x](x.md) — a hook\n" * 175)
    repo.git.add("MEMORY.md")
    repo.git.commit("-q", "-m", "big index")
    make(ledger, 1)
    make(ledger, 2)
    for args in (["candidates"], ["stats"], ["skip", "k002"], ["accept", "k001"]):
        code, _, err = run(config, *args)
        assert code == 0, err
        assert err.count("warning: MEMORY.md is at 88%") == 1, (args, err)
    # the same from a sub-command's own --memory option
    result = CliRunner().invoke(
        cli, ["candidates", "--memory", str(config.memory), "--state", str(config.state)]
    )
    assert result.stderr.count("warning: MEMORY.md is at") == 1


def test_review_command_writes_the_days_file(config: Config, ledger: Ledger) -> None:
    make(ledger, 1)
    code, out, err = run(config, "review", "--date", "2026-05-06")
    assert code == 0, err
    path = Path(out.strip())
    assert path == config.memory / "reviews" / "review-2026-05-06.md"
    assert "Pin the node version 1" in path.read_text()
    code, out, _ = run(config, "review")  # default: today by DREAMTUI_NOW
    assert out.strip().endswith("review-2026-05-06.md")
    assert len(gitops.list_commits(git.Repo(config.memory))) == 1
    code, _, err = run(config, "review", "--date", "someday")
    assert code == 2 and "not a date" in err


@pytest.mark.usefixtures("git_home")
def test_json_output_escapes_c1_controls_and_bidi_overrides_and_stays_the_same_data(config: Config) -> None:
    nasty = "\x9b31m\u202ex\x7f"  # a DEL is an erase character: the digest applies it (docs/digest.md)
    turns = [
        (
            "user",
            f"Please never edit the generated files directly {nasty}; always change the template "
            "instead because the generator overwrites them.",
        )
    ]
    path = write_records(config.transcripts / "acme", turns)
    result = CliRunner().invoke(cli, ["digest", "--json", str(path)])
    assert result.exit_code == 0, result.output
    assert not any(ch in result.output for ch in "\x9b\u202e\x7f")
    assert "directly \x9b31m\u202e;" in json.loads(result.output)["turns"][0]["text"]


@pytest.mark.usefixtures("git_home")
@pytest.mark.parametrize(
    "args",
    [
        ["accept", "c\udcff"],
        ["reject", "\udcff", "--reason", "x"],
        ["skip", "\udcff"],
        ["promote", "--keep", "\udcff"],
        ["promote", "--reject", "\udcff", "--reason", "x"],
        ["skip", "\x1b]0;x\x07"],
    ],
)
def test_candidate_ids_that_are_not_text_are_usage_errors(config: Config, args: list[str]) -> None:
    result = CliRunner().invoke(
        cli,
        [
            *folder_args(config),
            *args,
        ],
    )
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "is not a candidate id" in result.output and "\x1b" not in result.output


def test_candidates_lists_what_waits_by_default(config: Config, ledger: Ledger) -> None:
    """The README says `dreamtui candidates` lists what waits; it listed decided ones too."""
    for n in (1, 2, 3):
        make(ledger, n)
    assert run(config, "accept", "k001")[0] == 0
    assert run(config, "reject", "k002", "--reason", "too narrow")[0] == 0
    code, out, _ = run(config, "candidates", "--json")
    assert code == 0 and [c["id"] for c in json.loads(out)] == ["k003"]
    code, out, _ = run(config, "candidates", "--status", "all", "--json")
    assert sorted(c["id"] for c in json.loads(out)) == ["k001", "k002", "k003"]
    assert run(config, "skip", "k003")[0] == 0 and run(config, "reject", "k003", "--reason", "no")[0] == 0
    code, out, _ = run(config, "candidates")
    assert out.strip() == "nothing waits for review (--status all lists every candidate)"
