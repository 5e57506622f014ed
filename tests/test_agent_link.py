"""``dreamtui link`` for every agent (issue 31 item 3): each installed agent offered its way to the
memory as a diff the person confirms, a project's own files only when named and confirmed, undo that
gives back the exact bytes, and generated blocks rewritten on accept and on undo of an accept — only
then, and never over the person's edits inside the markers.

Real files in a HOME of the test's own, a real git memory repository, the real CLI."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.candidates import make_pending
from fakes.cli_world import folder_args

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions, undo
from dreamtui.core.memory.agents import content, linking

BEGIN = "<!-- dreamtui:begin memory"


@pytest.fixture
def home(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME where Claude Code, Codex CLI, Gemini CLI, OpenCode, Copilot CLI and Cursor are installed."""
    for folder in (".claude", ".codex", ".gemini", ".config/opencode", ".copilot", ".cursor"):
        (git_home / folder).mkdir(parents=True)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return git_home


def link(config: Config, *args: str, input: str | None = None) -> object:
    result = CliRunner().invoke(cli, [*folder_args(config), "link", *args], input=input)
    return result


def block_of(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    start = text.index(BEGIN)
    return text[start : text.index("<!-- dreamtui:end -->", start)]


GLOBAL_FILES = {
    "codex": ".codex/AGENTS.md",
    "gemini-cli": ".gemini/GEMINI.md",
    "opencode": ".config/opencode/AGENTS.md",
    "copilot-cli": ".copilot/copilot-instructions.md",
}


def test_every_installed_agent_is_offered_and_asked_separately(home: Path, config: Config) -> None:
    mine = b"# my Codex rules\nnever force-push\n"
    (home / ".codex" / "AGENTS.md").write_bytes(mine)
    answers = "y\n" * 5  # Claude Code, Codex, Gemini, OpenCode, Copilot; Cursor is per project only
    result = link(config, input=answers)
    assert result.exit_code == 0, result.output
    assert "Cursor: per project only" in result.output
    for name in ("Claude Code", "Codex CLI", "Gemini CLI", "OpenCode", "GitHub Copilot CLI"):
        assert f"Link {name}?" in result.output
    assert "--- ~/.codex/AGENTS.md" in result.output and "+<!-- dreamtui:begin memory" in result.output
    codex = (home / ".codex" / "AGENTS.md").read_bytes()
    assert codex.startswith(mine + b"\n" + BEGIN.encode())  # the person's text first, untouched
    for rel in GLOBAL_FILES.values():
        assert BEGIN in (home / rel).read_text()
    claude = (home / ".claude" / "CLAUDE.md").read_text()
    assert f"@{(config.memory / 'MEMORY.md').resolve()}" in claude
    before = {rel: (home / rel).read_bytes() for rel in [*GLOBAL_FILES.values(), ".claude/CLAUDE.md"]}
    again = link(config, "--yes")  # idempotent: nothing left to add, nothing rewritten
    assert again.exit_code == 0, again.output
    assert "Link " not in again.output and again.output.count("already") == 5
    assert {rel: (home / rel).read_bytes() for rel in before} == before


def test_an_agent_not_installed_is_listed_and_never_written(git_home: Path, config: Config) -> None:
    (git_home / ".codex").mkdir()
    result = link(config, "--yes")
    assert result.exit_code == 0, result.output
    assert f"Gemini CLI: not installed (no {git_home / '.gemini'})" in result.output
    assert not (git_home / ".gemini").exists() and not (git_home / ".claude").exists()
    assert BEGIN in (git_home / ".codex" / "AGENTS.md").read_text()


def test_refused_means_nothing_written(home: Path, config: Config) -> None:
    result = link(config, "--agent", "codex", "--agent", "gemini-cli", input="n\nn\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("Nothing changed for") == 2
    assert not (home / ".codex" / "AGENTS.md").exists() and not (home / ".gemini" / "GEMINI.md").exists()


def test_undo_gives_back_the_exact_bytes_of_every_file(home: Path, config: Config, tmp_path: Path) -> None:
    odd = b"\xff\xfe caf\xe9 no newline at the end"  # not UTF-8, no final line break
    (home / ".codex" / "AGENTS.md").write_bytes(odd)
    dotfiles = tmp_path / "dotfiles" / "GEMINI.md"  # a symlinked file is edited where it points
    dotfiles.parent.mkdir()
    dotfiles.write_bytes(b"# gemini rules\n")
    dotfiles.chmod(0o600)
    (home / ".gemini" / "GEMINI.md").symlink_to(dotfiles)
    (home / ".claude" / "CLAUDE.md").write_bytes(b"# my rules\nBe terse.")
    (home / ".copilot" / "copilot-instructions.md").write_bytes(b"")  # empty, kept empty
    linked = link(config, "--yes")
    assert linked.exit_code == 0, linked.output
    assert (home / ".codex" / "AGENTS.md").read_bytes().startswith(odd + b"\n\n" + BEGIN.encode())
    assert (home / ".gemini" / "GEMINI.md").is_symlink() and BEGIN in dotfiles.read_text()
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o600
    assert (home / ".config" / "opencode" / "AGENTS.md").exists()  # made by link
    undone = link(config, "--undo", "--yes")
    assert undone.exit_code == 0, undone.output
    assert (home / ".codex" / "AGENTS.md").read_bytes() == odd
    assert dotfiles.read_bytes() == b"# gemini rules\n" and (home / ".gemini" / "GEMINI.md").is_symlink()
    assert (home / ".claude" / "CLAUDE.md").read_bytes() == b"# my rules\nBe terse."
    assert (home / ".copilot" / "copilot-instructions.md").read_bytes() == b""
    assert not (home / ".config" / "opencode" / "AGENTS.md").exists()  # dreamtui made it: it goes
    again = link(config, "--undo", "--yes")
    assert again.exit_code == 0 and "Unlink" not in again.output
    assert "nothing of dreamtui's there" in again.output


def test_undo_takes_back_the_lines_an_earlier_link_wrote_and_leaves_the_persons_own(
    home: Path, config: Config
) -> None:
    claude_md = home / ".claude" / "CLAUDE.md"
    lines = [f"@{(config.memory / name).resolve()}" for name in ("MEMORY.md", "briefing.md")]
    claude_md.write_text("# rules\n\n# Long-term memory curated by dreamtui\n" + "\n".join(lines) + "\n")
    result = link(config, "--agent", "claude-code", "--undo", "--yes")
    assert result.exit_code == 0, result.output
    assert claude_md.read_text() == "# rules\n"
    claude_md.write_text("# rules\n" + lines[0] + "\n")  # written by hand: not dreamtui's to remove
    result = link(config, "--agent", "claude-code", "--undo", "--yes")
    assert "not added by dreamtui link: left alone" in result.output
    assert claude_md.read_text() == "# rules\n" + lines[0] + "\n"


def test_a_projects_own_files_only_when_named_and_confirmed_never_committed(
    home: Path, config: Config, tmp_path: Path
) -> None:
    project = tmp_path / "src" / "shop"
    (project / "web").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    (project / "AGENTS.md").write_text("# shop\nuse pnpm\n")
    head = subprocess.run(
        ["git", "-C", str(project), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    plain = link(config, "--yes")  # no --project: nothing of the project's
    assert plain.exit_code == 0 and str(project) not in plain.output
    agents = ("--agent", "codex", "--agent", "copilot-cli", "--agent", "cursor")
    refused = link(config, *agents, "--project", str(project / "web"), input="n\nn\nn\n")
    assert refused.exit_code == 0, refused.output
    assert "never committed" in refused.output and "+++ " in refused.output  # shown as a diff
    assert (project / "AGENTS.md").read_text() == "# shop\nuse pnpm\n"
    assert not (project / ".github").exists() and not (project / ".cursor").exists()
    agreed = link(config, *agents, "--project", str(project / "web"), input="y\ny\ny\n")
    assert agreed.exit_code == 0, agreed.output
    assert (project / "AGENTS.md").read_text().startswith("# shop\nuse pnpm\n\n" + BEGIN)
    assert BEGIN in (project / ".github" / "copilot-instructions.md").read_text()
    rule = (project / ".cursor" / "rules" / "dreamtui.mdc").read_text()
    assert rule.startswith("---\n") and "alwaysApply: true" in rule and BEGIN in rule
    log = subprocess.run(
        ["git", "-C", str(project), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    assert log == head  # nothing committed into the project's repository
    assert linking.linked_projects(config) == [project.resolve()]
    undone = link(config, *agents, "--project", str(project), "--undo", "--yes")
    assert undone.exit_code == 0, undone.output
    assert (project / "AGENTS.md").read_text() == "# shop\nuse pnpm\n"
    assert not (project / ".github").exists() and not (project / ".cursor").exists()  # folders it made, too
    assert linking.linked_projects(config) == []


def test_a_folder_where_a_file_should_be_is_one_line_and_the_rest_goes_on(home: Path, config: Config) -> None:
    (home / ".codex" / "AGENTS.md").mkdir()
    result = link(config, "--yes")
    assert result.exit_code == 2
    assert (
        f"{home / '.codex' / 'AGENTS.md'}: cannot read" in result.output and "it is a folder" in result.output
    )
    assert "Traceback" not in result.output
    assert BEGIN in (home / ".gemini" / "GEMINI.md").read_text()  # the other agents were linked


def test_json_plans_without_writing_and_writes_with_yes(home: Path, config: Config) -> None:
    result = CliRunner().invoke(cli, [*folder_args(config), "link", "--agent", "codex", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan[0]["name"] == "codex" and plan[0]["installed"] and not plan[0]["written"]
    assert plan[0]["changes"][0]["state"] == "add" and plan[0]["changes"][0]["diff"]
    assert not (home / ".codex" / "AGENTS.md").exists()
    result = CliRunner().invoke(cli, [*folder_args(config), "link", "--agent", "codex", "--json", "--yes"])
    assert json.loads(result.stdout)[0]["written"] and (home / ".codex" / "AGENTS.md").exists()


def test_codex_reads_an_override_when_there_is_one(home: Path, config: Config) -> None:
    (home / ".codex" / "AGENTS.override.md").write_text("# for now\n")
    assert link(config, "--agent", "codex", "--yes").exit_code == 0
    assert BEGIN in (home / ".codex" / "AGENTS.override.md").read_text()
    assert not (home / ".codex" / "AGENTS.md").exists()


# -- the block follows accepts and undos, and only those ---------------------------------------------


def test_the_block_is_rewritten_on_accept_and_on_undo_of_an_accept_and_only_then(
    home: Path, config: Config, ledger: Ledger
) -> None:
    codex = home / ".codex" / "AGENTS.md"
    codex.write_text("# mine\n")
    assert link(config, "--agent", "codex", "--yes").exit_code == 0
    first = make_pending(ledger, 1, claim="Run the migrations against the throwaway container first")
    second = make_pending(ledger, 2, claim="Never push to the release branch without a green CI run")
    third = make_pending(ledger, 3, claim="Prefer tabs")
    decisions.accept(config, ledger, first.id)
    assert first.claim in block_of(codex) and second.claim not in block_of(codex)
    after_accept = codex.read_bytes()
    decisions.reject(ledger, third.id, "wrong", "not ours")  # a reject, a skip: no rewrite
    decisions.skip(ledger, second.id)
    assert codex.read_bytes() == after_accept
    decisions.accept(config, ledger, second.id)
    assert second.claim in block_of(codex)
    undo.undo_last(config, ledger)  # undo of that accept: the block never shows what memory lost
    assert second.claim not in block_of(codex) and first.claim in block_of(codex)
    assert codex.read_text().startswith("# mine\n\n" + BEGIN)
    assert third.claim not in codex.read_text()


def test_the_persons_edit_inside_the_markers_is_seen_and_not_overwritten(
    home: Path, config: Config, ledger: Ledger
) -> None:
    codex = home / ".codex" / "AGENTS.md"
    assert link(config, "--agent", "codex", "--yes").exit_code == 0
    text = codex.read_text()
    edited = text.replace("(No lessons accepted yet.)", "(No lessons accepted yet.) my own note")
    codex.write_text(edited)
    cand = make_pending(ledger, 1, claim="Keep the fixtures small")
    result = decisions.accept(config, ledger, cand.id)
    assert codex.read_text() == edited  # not rewritten silently
    assert any("you changed the lessons between dreamtui's markers" in n for n in result.notices)
    shown = link(config, "--agent", "codex", input="n\n")
    assert (
        "linking again replaces it" in shown.output
        and "-(No lessons accepted yet.) my own note" in shown.output
    )
    assert codex.read_text() == edited
    assert link(config, "--agent", "codex", "--yes").exit_code == 0
    assert cand.claim in block_of(codex) and "my own note" not in codex.read_text()


def test_a_refresh_that_fails_is_one_notice_and_never_fails_the_accept(
    home: Path, config: Config, ledger: Ledger
) -> None:
    gemini = home / ".gemini" / "GEMINI.md"
    assert link(config, "--agent", "gemini-cli", "--yes").exit_code == 0
    gemini.write_text(gemini.read_text().replace("<!-- dreamtui:end -->\n", ""))  # a broken block
    cand = make_pending(ledger, 1)
    result = decisions.accept(config, ledger, cand.id)
    assert result.commit_sha and ledger.get_candidate(cand.id).status == "accepted"  # type: ignore[union-attr]
    assert [n for n in result.notices if "not refreshed" in n and "no end marker" in n]


def test_the_block_is_bounded_and_says_where_the_rest_is(config: Config, ledger: Ledger, home: Path) -> None:
    for n in range(60):
        cand = make_pending(ledger, n, claim=f"Lesson {n}: " + "a long explanation of the rule " * 12)
        decisions.accept(config, ledger, cand.id)
    inner = content.block(config.memory)
    assert len(inner.encode()) <= content.MAX_BYTES + 200
    assert "more lessons did not fit here: see" in inner and "MEMORY.md" in inner
    assert all(len(line) <= content.MAX_LESSON + 2 for line in inner.splitlines() if line.startswith("- "))


def test_a_project_file_holds_the_global_lessons_and_that_projects_only(
    home: Path, config: Config, ledger: Ledger, tmp_path: Path
) -> None:
    shop = tmp_path / "shop"
    shop.mkdir()
    subprocess.run(["git", "init", "-q", str(shop)], check=True)
    from dreamtui.core.repository import encode_path

    mine = make_pending(
        ledger, 1, claim="Use pnpm in the shop", scope="project", project=encode_path(str(shop))
    )
    other = make_pending(ledger, 2, claim="Use cargo in the engine", scope="project", project="-x-engine")
    everywhere = make_pending(ledger, 3, claim="Write commit messages in English")
    for cand in (mine, other, everywhere):
        decisions.accept(config, ledger, cand.id)
    assert link(config, "--agent", "codex", "--project", str(shop), "--yes").exit_code == 0
    project_block = block_of(shop / "AGENTS.md")
    assert (
        mine.claim in project_block and everywhere.claim in project_block and other.claim not in project_block
    )
    global_block = block_of(home / ".codex" / "AGENTS.md")  # every lesson, each project's under its heading
    assert all(c.claim in global_block for c in (mine, other, everywhere))
    assert "## Project" in global_block


def test_dream_tells_of_link_once(home: Path, config: Config) -> None:
    dreamed = CliRunner().invoke(cli, [*folder_args(config), "dream"])
    assert dreamed.exit_code == 0, dreamed.output
    assert "do not load the lessons you accept yet: `dreamtui link`" in dreamed.stderr
    assert "Claude Code" in dreamed.stderr and "Codex CLI" in dreamed.stderr
    assert not (home / ".codex" / "AGENTS.md").exists()  # told, never written
    again = CliRunner().invoke(cli, [*folder_args(config), "dream"])
    assert "dreamtui link" not in again.stderr


def test_nothing_is_refreshed_without_a_link(home: Path, config: Config, ledger: Ledger) -> None:
    cand = make_pending(ledger, 1)
    decisions.accept(config, ledger, cand.id)
    assert not any((home / rel).exists() for rel in GLOBAL_FILES.values())
    assert os.listdir(home / ".codex") == []


# -- the end to end ---------------------------------------------------------------------------


def test_a_codex_lesson_accepted_reaches_claude_code_and_codex(
    home: Path, config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code and Codex sessions in one repository; one ``dream``, one queue; accepting the Codex
    lesson makes it reachable from Claude Code (CLAUDE.md import → MEMORY.md → topic file) and from Codex
    (the block in ~/.codex/AGENTS.md), after ``link``."""
    from fakes.codex_rollout import write_rollout
    from fakes.transcript import write_session

    from dreamtui.core.repository import encode_path

    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-10T23:00:00Z")
    written = 1773180000.0  # an hour before: past the quiet period
    repo = (tmp_path / "src" / "spotter").resolve()
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    claude_said = (
        "From now on always run the migrations against the throwaway container before touching them."
    )
    codex_said = "Never push to the release branch without a green CI run, it deploys straight to customers."
    session = write_session(
        config.transcripts,
        [("person", claude_said), ("assistant", "Understood.")],
        project=encode_path(str(repo)),
        session="5e55a0a0-1111-4222-8333-444455556666",
        cwd=str(repo),
    )
    os.utime(session, (written, written))
    write_rollout(
        home / ".codex" / "sessions",
        str(repo),
        [("person", codex_said), ("assistant", "Understood, I will keep to that.")],
        session="019e1625-0000-7000-8000-00000000c0de",
        mtime=written,
    )
    runner = CliRunner()
    linked = runner.invoke(
        cli, [*folder_args(config), "link", "--agent", "claude-code", "--agent", "codex", "--yes"]
    )
    assert linked.exit_code == 0, linked.output
    dreamed = runner.invoke(cli, [*folder_args(config), "--extractor", "heuristic", "dream", "--json"])
    assert dreamed.exit_code == 0, dreamed.output
    queue = json.loads(runner.invoke(cli, [*folder_args(config), "candidates", "--json"]).stdout)
    assert {c["agent"] for c in queue} == {"Claude Code", "Codex CLI"}  # one queue
    assert len({c["project"] for c in queue}) == 1
    lesson = next(c for c in queue if c["agent"] == "Codex CLI")
    accepted = runner.invoke(cli, [*folder_args(config), "accept", lesson["id"]])
    assert accepted.exit_code == 0, accepted.output

    # Claude Code: its CLAUDE.md imports MEMORY.md, whose line links the topic file holding the lesson
    imports = [
        line[1:] for line in (home / ".claude" / "CLAUDE.md").read_text().splitlines() if line.startswith("@")
    ]
    index = Path(os.path.expanduser(next(i for i in imports if i.endswith("MEMORY.md"))))
    line = next(line for line in index.read_text().splitlines() if lesson["claim"][:40] in line)
    topic = index.parent / line.split("](", 1)[1].split(")", 1)[0]
    assert lesson["claim"] in topic.read_text()
    # Codex: its global AGENTS.md holds the lesson between dreamtui's markers
    assert lesson["claim"] in block_of(home / ".codex" / "AGENTS.md")
    claude_lesson = next(c for c in queue if c["agent"] == "Claude Code")
    assert claude_lesson["claim"] not in (home / ".codex" / "AGENTS.md").read_text()  # still pending


def test_a_secret_committed_by_hand_never_reaches_an_agents_file(
    home: Path, config: Config, ledger: Ledger
) -> None:
    cand = make_pending(ledger, 1)
    decisions.accept(config, ledger, cand.id)  # the repository exists
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (config.memory / "deploy.md").write_text(f"---\nname: Deploy\n---\n\nDeploy with {token}\n")
    subprocess.run(["git", "-C", str(config.memory), "add", "deploy.md"], check=True)
    subprocess.run(["git", "-C", str(config.memory), "commit", "-q", "-m", "by hand"], check=True)
    assert link(config, "--agent", "codex", "--yes").exit_code == 0
    text = (home / ".codex" / "AGENTS.md").read_text()
    assert "Deploy with [REDACTED" in text and token not in text


def test_the_block_holds_what_is_committed_never_an_edit_not_yet_committed(
    config: Config, ledger: Ledger
) -> None:
    cand = make_pending(ledger, 1, claim="Keep the fixtures small")
    rel = decisions.accept(config, ledger, cand.id).path
    topic = config.memory / rel
    topic.write_text(topic.read_text().replace("Keep the fixtures small", "Keep the fixtures huge"))
    inner = content.block(config.memory)
    assert "Keep the fixtures small" in inner and "huge" not in inner


def test_the_app_tells_of_link_once_when_it_closes(
    home: Path, config: Config, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dreamtui.cli.app_cmd import run_app
    from dreamtui.tui.app import DreamApp

    monkeypatch.setattr(DreamApp, "run", lambda self: None)  # the app opened and was closed at once
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # at a terminal
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    run_app(config)
    assert "do not load the lessons you accept yet: `dreamtui link`" in capsys.readouterr().err
    run_app(config)
    assert "dreamtui link" not in capsys.readouterr().err
    assert not (home / ".codex" / "AGENTS.md").exists()


def test_a_fifo_where_the_file_should_be_is_refused_without_blocking(home: Path, config: Config) -> None:
    os.mkfifo(home / ".copilot" / "copilot-instructions.md")
    result = link(config, "--agent", "copilot-cli", "--yes")
    assert result.exit_code == 2 and "it is not a regular file" in result.output
