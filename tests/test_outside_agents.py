"""The guard covers the agents' own memory writes (issue 31 item 4): Codex CLI's memories
(``$CODEX_HOME/memories``) and Gemini CLI's ``save_memory`` section of ``~/.gemini/GEMINI.md`` are
outside changes — shown as diffs with the agent as writer, accepted (a commit of the snapshot),
rejected (the agent's file left alone), restored (put back as reviewed) and undone. Real files in the
test's own HOME, a real git repository."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from fakes.gemini_memory import save_memory

from dreamtui.core.config import Config, ConfigError
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import gitops, outside, undo
from dreamtui.core.memory import outside_agents as agents


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _seeded(config: Config) -> Path:
    root = config.memory
    repo = gitops.open_repo(root)
    (root / "MEMORY.md").write_text("- [a](a.md) — a\n")
    (root / "a.md").write_text("lesson a\n")
    gitops.commit_paths(repo, ["MEMORY.md", "a.md"], "seed", {})
    return root


def _codex() -> Path:
    folder = Path.home() / ".codex" / "memories"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _gemini_md() -> Path:
    folder = Path.home() / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "GEMINI.md"


def _pending(ledger: Ledger) -> dict[str, tuple[str, str]]:
    return {i.path: (i.kind, i.writer) for i in outside.items(ledger)}


def _only(ledger: Ledger, path: str) -> outside.Item:
    [item] = [i for i in outside.items(ledger) if i.path == path]
    return item


MEM = f"{agents.CODEX_SNAPSHOT}/MEMORY.md"


def test_a_codex_memory_added_changed_and_deleted_is_reviewed(config, ledger, git_home) -> None:
    root = _seeded(config)
    codex = _codex()
    (codex / "MEMORY.md").write_text(
        "---\ndescription: build notes\n---\n\n- run `make test` before pushing\n"
    )
    (codex / "raw_memories.md").write_text("# Raw Memories\n\nrebuilt by codex every time\n")
    (codex / "rollout_summaries").mkdir()
    (codex / "rollout_summaries" / "t1.md").write_text("thread_id: t1\n")
    outside.scan(config, ledger)
    assert _pending(ledger) == {MEM: ("added", "codex")}  # what Codex rebuilds itself is not guarded
    item = _only(ledger, MEM)
    assert item.writer_label == "Codex CLI memories" and ".codex/memories/MEMORY.md" in (item.note or "")
    text = outside.diff(config, item)
    assert "+- run `make test` before pushing" in text and "--- /dev/null" in text
    sha = outside.accept(config, ledger, item.id)
    assert _git(root, "show", f"{sha}:{MEM}") == (codex / "MEMORY.md").read_text()
    body = _git(root, "log", "-1", "--format=%B")
    assert "Dreamtui-Reviewed: outside" in body and "Dreamtui-Writer: codex" in body
    assert (root / MEM).read_text() == (codex / "MEMORY.md").read_text()  # the snapshot in the working tree
    assert _git(root, "status", "--porcelain") == ""
    assert outside.scan(config, ledger).new == [] and outside.items(ledger) == []

    # changed by the agent: reject leaves the agent's file alone, and the version is not shown again
    changed = (codex / "MEMORY.md").read_text() + "- never run the e2e suite on battery\n"
    (codex / "MEMORY.md").write_text(changed)
    outside.scan(config, ledger)
    item = _only(ledger, MEM)
    assert item.kind == "modified" and "+- never run the e2e suite on battery" in outside.diff(config, item)
    outside.reject(config, ledger, item.id, "too specific")
    assert (codex / "MEMORY.md").read_text() == changed
    assert outside.get(ledger, item.id).reason == "too specific"
    assert outside.scan(config, ledger).new == [] and outside.items(ledger) == []
    # undo of the reject: it waits again; a new write of the agent is a new item after a reject
    undo.undo_last(config, ledger)
    assert outside.get(ledger, item.id).status == "pending"
    outside.reject(config, ledger, item.id, "too specific")
    (codex / "MEMORY.md").write_text(changed + "- one more\n")
    outside.scan(config, ledger)
    assert _only(ledger, MEM).kind == "modified"

    # deleted by the agent (Codex's "clear memories"): a deletion; accepting it commits the deletion
    (codex / "MEMORY.md").unlink()
    outside.scan(config, ledger)
    item = _only(ledger, MEM)
    assert item.kind == "deleted"
    assert outside.accept_caution(config, ledger, item)  # a deletion asks first
    outside.accept(config, ledger, item.id)
    assert MEM not in _git(root, "ls-files") and not (root / MEM).exists()
    # ... and undo brings the reviewed snapshot back (the deletion waits again)
    undo.undo_last(config, ledger)
    assert MEM in _git(root, "ls-files") and (root / MEM).exists()
    assert outside.get(ledger, item.id).status == "pending"


def test_restore_puts_codex_memory_back_atomically_with_its_mode_and_undo_takes_it_back(
    config, ledger, git_home
) -> None:
    root = _seeded(config)
    codex = _codex()
    skill = codex / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    reviewed = b"---\nname: deploy\n---\n1. tag\n2. push \xff\xfe bytes kept\n"  # invalid UTF-8 survives
    skill.write_bytes(reviewed)
    os.chmod(skill, 0o600)
    outside.scan(config, ledger)
    rel = f"{agents.CODEX_SNAPSHOT}/skills/deploy/SKILL.md"
    sha = outside.accept(config, ledger, _only(ledger, rel).id)
    assert (
        subprocess.run(
            ["git", "-C", str(root), "show", f"{sha}:{rel}"], capture_output=True, check=True
        ).stdout
        == reviewed
    )
    rewritten = b"---\nname: deploy\n---\n1. force-push to main\n"
    skill.write_bytes(rewritten)
    (codex / "memory_summary.md").write_text("## User Profile\nlikes force pushes\n")
    outside.scan(config, ledger)
    item = _only(ledger, rel)
    outside.restore_agent(config, ledger, item.id, "the skill is wrong")
    assert skill.read_bytes() == reviewed
    assert stat.S_IMODE(skill.stat().st_mode) == 0o600  # the mode kept
    assert not [p for p in skill.parent.iterdir() if p.name != "SKILL.md"]  # no temp file left
    done = outside.get(ledger, item.id)
    assert (done.status, done.decided_as, done.reason) == ("rejected", "restored", "the skill is wrong")
    assert outside.scan(config, ledger).new == []
    # a file the agent added and the person restores: it goes
    added = _only(ledger, f"{agents.CODEX_SNAPSHOT}/memory_summary.md")
    outside.restore_agent(config, ledger, added.id, "not about me")
    assert not (codex / "memory_summary.md").exists()
    undo.undo_last(config, ledger)  # the added file comes back for review
    assert (codex / "memory_summary.md").read_text() == "## User Profile\nlikes force pushes\n"
    undo.undo_last(config, ledger)  # and the rewritten skill
    assert skill.read_bytes() == rewritten and outside.get(ledger, item.id).status == "pending"
    assert stat.S_IMODE(skill.stat().st_mode) == 0o600
    # a file the agent changed again since it was shown is never restored over
    skill.write_bytes(b"yet another version\n")
    with pytest.raises(outside.OutsideError, match="changed since it was shown"):
        outside.restore_agent(config, ledger, item.id, "no")
    assert skill.read_bytes() == b"yet another version\n"


PERSON_TOP = "# My rules\n\nAlways answer in English.\n"
PERSON_BOTTOM = "\n## Project notes\n\nThe staging host is called kiwi.\n"


def test_gemini_save_memory_lines_are_the_agents_and_the_persons_text_is_never_touched(
    config, ledger, git_home
) -> None:
    """Written to gemini-cli's memoryTool.ts format, commit 0750b01fe4e7b62d55d92918b1c4535a77acc334
    (``fakes.gemini_memory.save_memory`` is a line-for-line port of ``computeGlobalMemoryContent``)."""
    root = _seeded(config)
    md = _gemini_md()
    md.write_text(PERSON_TOP + PERSON_BOTTOM)
    outside.scan(config, ledger)
    assert outside.items(ledger) == []  # the person's text is not the agent's
    md.write_text(save_memory(md.read_text(), "The user prefers pnpm over npm."))
    assert "## Gemini Added Memories\n- The user prefers pnpm over npm.\n" in md.read_text()
    outside.scan(config, ledger)
    item = _only(ledger, agents.GEMINI_SNAPSHOT)
    assert (item.kind, item.writer, item.writer_label) == ("added", "gemini-cli", "Gemini CLI save_memory")
    text = outside.diff(config, item)
    assert "+- The user prefers pnpm over npm." in text and "kiwi" not in text and "English" not in text
    sha = outside.accept(config, ledger, item.id)
    assert _git(root, "show", f"{sha}:{agents.GEMINI_SNAPSHOT}") == (
        "## Gemini Added Memories\n- The user prefers pnpm over npm.\n"
    )
    # the person edits their own part: never the agent's change
    md.write_text(md.read_text().replace("Always answer in English.", "Always answer in French."))
    outside.scan(config, ledger)
    assert outside.items(ledger) == []
    # the agent appends a fact; the person edits their part again; restore takes only the fact away
    md.write_text(save_memory(md.read_text(), "Deploys happen on Fridays."))
    md.write_text("my own first line\n" + md.read_text().replace("kiwi", "kiwi-2"))
    person_after = md.read_text()
    outside.scan(config, ledger)
    item = _only(ledger, agents.GEMINI_SNAPSHOT)
    assert "+- Deploys happen on Fridays." in outside.diff(config, item)
    assert "kiwi" not in outside.diff(config, item)
    os.chmod(md, 0o640)
    outside.restore_agent(config, ledger, item.id, "not true")
    restored = md.read_text()
    assert restored == person_after.replace("- Deploys happen on Fridays.\n", "")
    assert "French" in restored and "kiwi-2" in restored and restored.startswith("my own first line\n")
    assert stat.S_IMODE(md.stat().st_mode) == 0o640
    assert outside.scan(config, ledger).new == []
    undo.undo_last(config, ledger)
    assert md.read_text() == person_after
    # a restore to "no section" takes out only the section the tool made
    md.write_text(PERSON_TOP)
    outside.scan(config, ledger)  # the section went: a deletion of the agent's memory
    assert _only(ledger, agents.GEMINI_SNAPSHOT).kind == "deleted"


def test_a_gemini_section_restored_into_a_file_without_one_is_appended_as_the_tool_appends(
    config, ledger, git_home
) -> None:
    _seeded(config)
    md = _gemini_md()
    md.write_text(save_memory("", "Use tabs."))
    outside.scan(config, ledger)
    outside.accept(config, ledger, _only(ledger, agents.GEMINI_SNAPSHOT).id)
    md.write_text("# mine only now\n")  # the person (or a tool) dropped the section
    outside.scan(config, ledger)
    item = _only(ledger, agents.GEMINI_SNAPSHOT)
    outside.restore_agent(config, ledger, item.id, "keep it")
    assert md.read_text() == "# mine only now\n\n## Gemini Added Memories\n- Use tabs.\n"
    assert md.read_text() == save_memory("# mine only now\n", "Use tabs.")


def test_a_secret_in_a_codex_memory_is_redacted_before_git_and_the_ledger(config, ledger, git_home) -> None:
    root = _seeded(config)
    codex = _codex()
    token = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    (codex / "MEMORY.md").write_text(f"- the CI token is {token}\n- run make\n")
    outside.scan(config, ledger)
    item = _only(ledger, MEM)
    assert item.secret_rules and "SECRET" in item.title()
    assert token not in outside.diff(config, item) and "[REDACTED:" in outside.diff(config, item)
    outside.accept(config, ledger, item.id)
    assert token not in _git(root, "log", "-p", "--all")
    assert "[REDACTED:" in (root / MEM).read_text() and token not in (root / MEM).read_text()
    dump = "\n".join(str(tuple(r)) for r in ledger.query("SELECT * FROM outside_items"))
    dump += "\n".join(str(tuple(r)) for r in ledger.query("SELECT * FROM decision_journal"))
    assert token not in dump
    assert (codex / "MEMORY.md").read_text().count(token) == 1  # the agent's own file is its own
    assert outside.scan(config, ledger).new == []  # the redacted snapshot is what the agent has


def test_symlinks_fifos_and_huge_files_are_one_line_notices_never_read(
    config, ledger, git_home, tmp_path, monkeypatch
) -> None:
    _seeded(config)
    codex = _codex()
    key = tmp_path / "id_ed25519"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0\n-----END OPENSSH PRIVATE KEY-----\n")
    (codex / "leak.md").symlink_to(key)
    os.mkfifo(codex / "pipe.md")
    monkeypatch.setenv("DREAMTUI_OUTSIDE_MAX_BYTES", "1000")
    (codex / "huge.md").write_bytes(b"x" * 5000)
    (codex / "ok.md").write_text("fine\n")
    md = _gemini_md()
    real = tmp_path / "dotfiles-GEMINI.md"
    real.write_text(save_memory("", "a fact"))
    md.symlink_to(real)
    report = outside.scan(config, ledger)
    assert _pending(ledger) == {f"{agents.CODEX_SNAPSHOT}/ok.md": ("added", "codex")}
    notes = [n for n in report.notices if "not guarded" in n]
    assert len(notes) == 4 and all("\n" not in n for n in notes), report.notices
    assert any("leak.md is a symlink →" in n for n in notes)
    assert any("pipe.md is a FIFO" in n for n in notes)
    assert any("huge.md is too large to review" in n for n in notes)
    assert any("GEMINI.md is a symlink →" in n for n in notes)
    assert "c2VjcmV0" not in "".join(report.notices)


def test_config_turns_each_agent_off_and_defaults_to_the_agents_present(tmp_path, git_home) -> None:
    base = Config(memory=tmp_path / "m", state=tmp_path / "s", transcripts=tmp_path / "t")
    assert [g.on for g in agents.guarded(base)] == [False, False]  # no ~/.codex, no ~/.gemini
    _codex()
    assert [g.on for g in agents.guarded(base)] == [True, False]
    _gemini_md()
    assert [g.on for g in agents.guarded(base)] == [True, True]
    off = base.changed(guard={"agents": ["gemini-cli"]})
    assert [g.on for g in agents.guarded(off)] == [False, True]
    assert [g.on for g in agents.guarded(base.changed(guard={"agents": []}))] == [False, False]
    with pytest.raises(ConfigError, match="unknown agent 'claude'"):
        base.changed(guard={"agents": ["claude"]})


def test_codex_home_and_gemini_cli_home_move_the_guarded_files(
    config, ledger, git_home, tmp_path, monkeypatch
) -> None:
    _seeded(config)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere-codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gem-home"))
    (tmp_path / "elsewhere-codex" / "memories").mkdir(parents=True)
    (tmp_path / "elsewhere-codex" / "memories" / "MEMORY.md").write_text("- moved\n")
    (tmp_path / "gem-home" / ".gemini").mkdir(parents=True)
    (tmp_path / "gem-home" / ".gemini" / "GEMINI.md").write_text(save_memory("", "moved too"))
    outside.scan(config, ledger)
    assert set(_pending(ledger)) == {MEM, agents.GEMINI_SNAPSHOT}


def test_the_cli_lists_decides_and_restores_the_agents_changes(config, ledger, git_home) -> None:
    import json

    from click.testing import CliRunner
    from fakes.cli_world import folder_args

    from dreamtui.cli.main import cli

    def run(*args: str):
        result = CliRunner().invoke(cli, [*folder_args(config), *args])
        assert result.exit_code == 0, result.output
        return result.output

    _seeded(config)
    codex = _codex()
    md = _gemini_md()
    (codex / "MEMORY.md").write_text("- first\n")
    md.write_text(save_memory(PERSON_TOP, "a fact"))
    listed = json.loads(run("outside", "--json"))["items"]
    assert {(i["writer"], i["writer_label"]) for i in listed} == {
        ("codex", "Codex CLI memories"),
        ("gemini-cli", "Gemini CLI save_memory"),
    }
    text = run("outside")
    assert "Codex CLI memories added agents/codex/memories/MEMORY.md" in text
    codex_id = next(i["id"] for i in listed if i["writer"] == "codex")
    gemini_id = next(i["id"] for i in listed if i["writer"] == "gemini-cli")
    shown = run("outside", "show", gemini_id)
    assert "+- a fact" in shown and "written by Gemini CLI save_memory in its own file" in shown
    assert "accepted" in run("outside", "accept", codex_id, gemini_id)
    (codex / "MEMORY.md").write_text("- first\n- second\n")
    md.write_text(save_memory(md.read_text(), "a wrong fact"))
    listed = json.loads(run("outside", "--json"))["items"]
    codex_id = next(i["id"] for i in listed if i["writer"] == "codex")
    gemini_id = next(i["id"] for i in listed if i["writer"] == "gemini-cli")
    assert "left as the agent wrote it" in run("outside", "reject", codex_id, "--reason", "meh")
    assert (codex / "MEMORY.md").read_text() == "- first\n- second\n"
    assert "as reviewed again" in run("outside", "restore", gemini_id, "--reason", "wrong")
    assert md.read_text() == save_memory(PERSON_TOP, "a fact")
    assert run("outside") == "no outside changes\n"
    config_text = run("config")
    assert "guard.codex: its memories folder" in config_text and "(guarded:" in config_text
    assert "guard.gemini-cli: the ## Gemini Added Memories section of" in config_text


def test_a_section_in_the_middle_of_gemini_md_is_restored_in_place(config, ledger, git_home) -> None:
    """Written to gemini-cli's memoryTool.ts format, commit 0750b01fe4e7b62d55d92918b1c4535a77acc334:
    the section between the person's headings, a fact inserted into it by the tool."""
    _seeded(config)
    md = _gemini_md()
    md.write_text(save_memory(PERSON_TOP, "first fact") + PERSON_BOTTOM)
    outside.scan(config, ledger)
    outside.accept(config, ledger, _only(ledger, agents.GEMINI_SNAPSHOT).id)
    reviewed = md.read_bytes()
    md.write_text(save_memory(md.read_text(), "second fact"))
    assert md.read_text().index("second fact") < md.read_text().index("## Project notes")
    outside.scan(config, ledger)
    item = _only(ledger, agents.GEMINI_SNAPSHOT)
    assert "kiwi" not in outside.diff(config, item)
    outside.restore_agent(config, ledger, item.id, "no")
    assert md.read_bytes() == reviewed


def test_the_watcher_sees_an_agents_write_without_a_restart(config, ledger, git_home) -> None:
    """Real watchdog events: Codex's memories folder appearing and written to, and a save_memory line
    in GEMINI.md, become items while the watcher runs."""
    from fakes.waiting import wait_for

    _seeded(config)
    (Path.home() / ".codex").mkdir()  # Codex is there, its memories folder not yet
    md = _gemini_md()
    md.write_text(PERSON_TOP)
    watcher = outside.OutsideWatcher(config, settle=0.05)
    watcher.start()
    try:
        assert wait_for(lambda: outside.items(ledger) == [] and watcher.errors == [])
        md.write_text(save_memory(md.read_text(), "watched fact"))
        assert wait_for(lambda: set(_pending(ledger)) == {agents.GEMINI_SNAPSHOT})
        codex = _codex()  # the memories folder appears, then a file in a folder below it
        (codex / "skills" / "x").mkdir(parents=True)
        (codex / "skills" / "x" / "SKILL.md").write_text("---\nname: x\n---\n")
        assert wait_for(lambda: f"{agents.CODEX_SNAPSHOT}/skills/x/SKILL.md" in _pending(ledger))
    finally:
        watcher.stop()
    assert watcher.errors == []


def test_restoring_into_a_removed_codex_memories_folder_makes_it_again(config, ledger, git_home) -> None:
    import shutil

    _seeded(config)
    codex = _codex()
    (codex / "MEMORY.md").write_text("- kept\n")
    outside.scan(config, ledger)
    outside.accept(config, ledger, _only(ledger, MEM).id)
    shutil.rmtree(codex)
    outside.scan(config, ledger)
    item = _only(ledger, MEM)
    assert item.kind == "deleted"
    outside.restore_agent(config, ledger, item.id, "keep my memory")
    assert (codex / "MEMORY.md").read_text() == "- kept\n"


def test_a_restore_that_cannot_write_leaves_the_agents_file_as_it_was(
    config, ledger, git_home, monkeypatch
) -> None:
    _seeded(config)
    codex = _codex()
    (codex / "MEMORY.md").write_text("- reviewed\n")
    outside.scan(config, ledger)
    outside.accept(config, ledger, _only(ledger, MEM).id)
    (codex / "MEMORY.md").write_text("- the agent's\n")
    outside.scan(config, ledger)
    item = _only(ledger, MEM)

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(agents.os, "fsync", full_disk)
    with pytest.raises(outside.OutsideError, match="No space left on device"):
        outside.restore_agent(config, ledger, item.id, "no")
    monkeypatch.undo()
    assert (codex / "MEMORY.md").read_text() == "- the agent's\n"
    assert sorted(p.name for p in codex.iterdir()) == ["MEMORY.md"]
    assert outside.get(ledger, item.id).status == "pending"
    assert not ledger.query("SELECT * FROM outside_intents")


def test_dreamtuis_own_link_block_in_gemini_md_is_never_the_agents_change(config, ledger, git_home) -> None:
    """``dreamtui link`` appends its block after the last section, the save_memory one included (real
    ``agents.sections.added``); save_memory then appends after it (the tool's own format, gemini-cli
    commit 0750b01fe4e7b62d55d92918b1c4535a77acc334). Neither the block nor its lead line is the
    agent's; a restore keeps the block byte for byte."""
    from dreamtui.core.memory.agents import sections

    _seeded(config)
    md = _gemini_md()
    md.write_text(save_memory(PERSON_TOP, "first fact"))
    outside.scan(config, ledger)
    outside.accept(config, ledger, _only(ledger, agents.GEMINI_SNAPSHOT).id)
    md.write_text(sections.added(md.read_text(), "memory", "## Lessons\n- a lesson you accepted\n"))
    assert outside.scan(config, ledger).new == [] and outside.items(ledger) == []
    # a fact saved with the block there: the real tool puts it before the block's first "## " heading,
    # inside dreamtui's markers; the block is not only dreamtui's any more, so all of it is shown
    md.write_text(save_memory(md.read_text(), "second fact"))
    assert md.read_text().index("- second fact") < md.read_text().index("## Lessons")
    outside.scan(config, ledger)
    item = _only(ledger, agents.GEMINI_SNAPSHOT)
    shown = outside.diff(config, item)
    assert "+- second fact" in shown and "Always answer" not in shown
    outside.restore_agent(config, ledger, item.id, "no")
    # the section as the tool sees it ends at the block's "## Lessons": that much is put back; the rest
    # of the block (edited by the tool, so dreamtui link no longer rewrites it) stays as it is
    text = md.read_text()
    assert "second fact" not in text and text.startswith(save_memory(PERSON_TOP, "first fact"))
    assert text.endswith("## Lessons\n- a lesson you accepted\n<!-- dreamtui:end -->\n")


def test_a_fact_saved_after_dreamtui_link_lands_outside_its_block(config, ledger, git_home) -> None:
    """The block ``dreamtui link`` really writes (``content.block``: third-level headings), after the
    save_memory section; the tool (gemini-cli commit 0750b01fe4e7b62d55d92918b1c4535a77acc334) saves a
    fact: it goes after dreamtui's end marker, never inside the markers, so the block stays dreamtui's
    (rewritten on the next accept) and the change shown is the fact alone."""
    from dreamtui.core.memory.agents import content, sections

    _seeded(config)
    md = _gemini_md()
    md.write_text(save_memory(PERSON_TOP, "first fact"))
    outside.scan(config, ledger)
    outside.accept(config, ledger, _only(ledger, agents.GEMINI_SNAPSHOT).id)
    inner = content.block(config.memory)
    assert "\n## " not in inner  # what the tool would stop at
    md.write_text(sections.added(md.read_text(), "memory", inner))
    block = sections.find(md.read_text())
    assert block is not None and not block.edited
    md.write_text(save_memory(md.read_text(), "second fact"))
    text = md.read_text()
    assert text.index("- second fact") > text.index("<!-- dreamtui:end -->")
    block = sections.find(text)
    assert block is not None and not block.edited
    outside.scan(config, ledger)
    shown = outside.diff(config, _only(ledger, agents.GEMINI_SNAPSHOT))
    assert "+- second fact" in shown and "Lessons from your dreamtui memory" not in shown
