"""Outside changes (issue 17): what Claude Code or a person writes into the memory repository becomes
review items; accept commits exactly that change, reject restores HEAD; nothing of anyone's is lost.
Real git repositories, real transcripts on disk, real watchdog events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.gitrepo import git
from fakes.waiting import wait_for

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions, gitops, outside
from dreamtui.core.models import Candidate


@pytest.fixture
def world(config: Config, ledger: Ledger, git_home: Path) -> tuple[Config, Ledger, Path]:
    """A memory repository with an index and three topic files, committed."""
    root = config.memory
    repo = gitops.open_repo(root)
    (root / "MEMORY.md").write_text(
        "- [Tests](tests.md) — run them\n- [Style](style.md) — black\n- [Old](old.md) — old\n"
    )
    for name in ("tests", "style", "old"):
        (root / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {name}\ntype: feedback\n---\n\n"
            f"The {name} lesson, a few words long so renames are told apart.\n"
        )
    gitops.commit_paths(repo, ["MEMORY.md", "tests.md", "style.md", "old.md"], "seed", {})
    return config, ledger, root


def write_transcript(
    config: Config,
    rel_target: str,
    when: str,
    tool: str = "Write",
    sub: str | None = None,
    meta: dict | None = None,
) -> Path:
    """A main-session transcript (or a sub-agent file) holding one tool call that writes ``rel_target``."""
    project = Path(config.transcripts) / "-home-kim-app"
    session = "5f0c0000-0000-4000-8000-000000000001"
    path = project / f"{session}.jsonl"
    if sub:
        path = project / session / "subagents" / sub / "agent-a1b2c3.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    target = str(Path(config.memory) / rel_target)
    args = {"file_path": target, "content": "x"} if tool != "Bash" else {"command": f"rm {target}"}
    lines = [
        {
            "type": "user",
            "sessionId": session,
            "timestamp": when,
            "cwd": "/home/kim/app",
            "message": {"role": "user", "content": "remember that"},
        },
        {
            "type": "assistant",
            "sessionId": session,
            "timestamp": when,
            "cwd": "/home/kim/app",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": args}],
            },
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    if meta is not None:
        path.with_name("agent-a1b2c3.meta.json").write_text(json.dumps(meta))
    return path


def now_iso() -> str:
    return clock.now_iso()


def head_files(root: Path) -> set[str]:
    return set(git(root, "ls-tree", "-r", "--name-only", "HEAD").split())


# -- detection ---------------------------------------------------------------------------------


def test_new_edited_deleted_and_renamed_files_become_one_item_each(world) -> None:
    config, ledger, root = world
    (root / "new.md").write_text("---\nname: new\n---\nA new lesson.\n")
    (root / "tests.md").write_text((root / "tests.md").read_text() + "\nAlso run lint.\n")
    (root / "style.md").unlink()
    (root / "old.md").rename(root / "older.md")
    report = outside.scan(config, ledger)
    got = {(i.kind, i.path, i.old_path) for i in outside.items(ledger)}
    assert got == {
        ("added", "new.md", None),
        ("modified", "tests.md", None),
        ("deleted", "style.md", None),
        ("renamed", "older.md", "old.md"),
    }
    assert len(report.new) == 4
    # a second scan with nothing new makes nothing new
    assert outside.scan(config, ledger).new == []
    item = next(i for i in outside.items(ledger) if i.path == "tests.md")
    assert "+Also run lint." in outside.diff(config, item)


def test_index_lines_added_and_dropped_are_listed(world) -> None:
    config, ledger, root = world
    text = (root / "MEMORY.md").read_text().replace("- [Old](old.md) — old\n", "")
    (root / "MEMORY.md").write_text(text + "- [New](new.md) — fresh\n")
    outside.scan(config, ledger)
    item = outside.items(ledger)[0]
    assert item.path == "MEMORY.md"
    assert outside.index_lines(config, item) == (["- [New](new.md) — fresh"], ["- [Old](old.md) — old"])


def test_dreamtuis_own_accept_never_becomes_an_item(world) -> None:
    config, ledger, root = world
    cand = Candidate(
        id="c1a2b3c4d5e6",
        session="s1",
        project="-home-kim-app",
        transcript="/t.jsonl",
        claim="Run the migrations before the tests",
        why="schema drifts",
        how_to_apply="make migrate",
        type="feedback",
        scope="global",
        quote="always run migrations",
        extractor="heuristic",
        model=None,
        created_at=now_iso(),
        updated_at=now_iso(),
    )
    ledger.put_candidate(cand)
    decisions.accept(config, ledger, cand.id)
    assert outside.scan(config, ledger).new == []
    assert outside.items(ledger) == []


def test_dreamtuis_write_in_flight_is_not_an_item(world) -> None:
    config, ledger, root = world
    data = b"dreamtui is writing this\n"
    (root / "inflight.md").write_bytes(data)
    import hashlib

    with ledger.write() as c:
        c.execute(
            "INSERT INTO memory_intents (candidate_id, action, paths, created_at) VALUES (?, ?, ?, ?)",
            ("cX", "accept", json.dumps({"inflight.md": hashlib.sha256(data).hexdigest()}), now_iso()),
        )
    (root / ".dreamtui-tmp-abc").write_text("temp")
    assert outside.scan(config, ledger).new == []
    (root / "inflight.md").write_bytes(data + b"and a person's line\n")  # no longer only dreamtui's bytes
    assert [i.path for i in outside.items(ledger)] == [] and outside.scan(config, ledger).new


# -- who wrote it ------------------------------------------------------------------------------


def test_auto_memory_write_is_found_in_the_transcript(world) -> None:
    config, ledger, root = world
    (root / "projects" / "app").mkdir(parents=True)
    (root / "projects" / "app" / "deploy.md").write_text("Deploy on Fridays never.\n")
    transcript = write_transcript(config, "projects/app/deploy.md", now_iso())
    outside.scan(config, ledger)
    item = outside.items(ledger)[0]
    assert (item.writer, item.tool, item.transcript, item.line) == (
        "auto-memory",
        "Write",
        str(transcript),
        2,
    )
    assert item.session == "5f0c0000-0000-4000-8000-000000000001"
    assert '"tool_use"' in outside.transcript_excerpt(item)


def test_a_change_with_no_transcript_record_in_the_window_is_the_persons(world, monkeypatch) -> None:
    config, ledger, root = world
    monkeypatch.setenv(outside.WINDOW_ENV, "60")
    write_transcript(config, "tests.md", "2020-01-01T00:00:00Z")  # long before: not this change
    (root / "tests.md").write_text("my own words\n")
    outside.scan(config, ledger)
    assert outside.items(ledger)[0].writer == "person"


def test_a_workflow_subagent_or_a_dreaming_agent_is_auto_dream(world) -> None:
    config, ledger, root = world
    (root / "tests.md").write_text("merged\n")
    write_transcript(config, "tests.md", now_iso(), tool="Edit", sub="workflows/wf1")
    outside.scan(config, ledger)
    assert outside.items(ledger)[0].writer == "auto-dream"


def test_subagent_meta_names_the_dream(world) -> None:
    config, ledger, root = world
    (root / "style.md").unlink()
    write_transcript(
        config,
        "style.md",
        now_iso(),
        tool="Bash",
        sub=".",
        meta={"agentType": "memory-consolidation", "description": "Auto dream: consolidate memory"},
    )
    outside.scan(config, ledger)
    item = outside.items(ledger)[0]
    assert (item.kind, item.writer, item.tool) == ("deleted", "auto-dream", "Bash")


# -- accept ------------------------------------------------------------------------------------


def test_accept_commits_exactly_that_change_with_a_reviewed_trailer(world) -> None:
    config, ledger, root = world
    (root / "new.md").write_text("agent's lesson\n")
    (root / "tests.md").write_text("agent rewrote this\n")
    (root / "staged.md").write_text("person's staged work\n")
    git(root, "add", "staged.md")
    outside.scan(config, ledger)
    new = next(i for i in outside.items(ledger) if i.path == "new.md")
    sha = outside.accept(config, ledger, new.id)
    assert git(root, "show", "--name-status", "--format=", sha).split() == ["A", "new.md"]
    body = git(root, "log", "-1", "--format=%B")
    assert "Dreamtui-Reviewed: outside" in body and f"Dreamtui-Outside: {new.id}" in body
    # the rest is as the person left it: staged file still staged, the other change still unstaged
    status = git(root, "status", "--porcelain")
    assert "A  staged.md" in status and " M tests.md" in status and "new.md" not in status
    assert outside.get(ledger, new.id).status == "accepted"
    assert sorted(i.path for i in outside.items(ledger)) == [
        "staged.md",
        "tests.md",
    ]  # staged.md: an outside add too


def test_accept_of_a_deletion_and_a_rename(world) -> None:
    config, ledger, root = world
    (root / "style.md").unlink()
    (root / "old.md").rename(root / "older.md")
    outside.scan(config, ledger)
    for item in outside.items(ledger):
        # MEMORY.md still links both old names: the accept asks first (issue 34's index invariant)
        with pytest.raises(outside.OutsideError, match="dead link"):
            outside.accept(config, ledger, item.id)
        outside.accept(config, ledger, item.id, dead_links_ok=True)
    assert head_files(root) == {"MEMORY.md", "tests.md", "older.md"}
    assert git(root, "status", "--porcelain") == ""


def test_an_edit_made_while_an_accept_is_running_is_kept(world, monkeypatch) -> None:
    config, ledger, root = world
    (root / "tests.md").write_text("agent version\n")
    outside.scan(config, ledger)
    item = outside.items(ledger)[0]

    def person_types(name: str) -> None:
        if name == "commit":
            (root / "tests.md").write_text("the person's version, typed during the accept\n")

    monkeypatch.setattr(outside, "_step", person_types)
    sha = outside.accept(config, ledger, item.id)
    assert git(root, "show", f"{sha}:tests.md") == "agent version\n"  # exactly what was reviewed
    assert (root / "tests.md").read_text() == "the person's version, typed during the accept\n"
    outside.scan(config, ledger)
    [again] = outside.items(ledger)
    assert again.path == "tests.md" and again.id != item.id
    assert "the person's version" in outside.diff(config, again)


def test_accept_refuses_a_file_that_changed_since_it_was_shown(world) -> None:
    config, ledger, root = world
    (root / "tests.md").write_text("agent version\n")
    outside.scan(config, ledger)
    item = outside.items(ledger)[0]
    (root / "tests.md").write_text("person changed it again\n")
    before = git(root, "rev-parse", "HEAD")
    with pytest.raises(outside.OutsideError, match="changed since it was shown"):
        outside.accept(config, ledger, item.id)
    assert git(root, "rev-parse", "HEAD") == before
    assert (root / "tests.md").read_text() == "person changed it again\n"


# -- reject ------------------------------------------------------------------------------------


def test_reject_restores_head_and_keeps_the_reason_and_the_bytes(world) -> None:
    config, ledger, root = world
    original = (root / "tests.md").read_text()
    (root / "tests.md").write_text("agent's wrong rewrite\n")
    (root / "style.md").unlink()
    (root / "junk.md").write_text("agent junk\n")
    outside.scan(config, ledger)
    for item in outside.items(ledger):
        outside.reject(config, ledger, item.id, "not what I want")
    assert (root / "tests.md").read_text() == original
    assert (root / "style.md").exists()  # a deleted file comes back
    assert not (root / "junk.md").exists()
    assert git(root, "status", "--porcelain") == ""
    rejected = outside.items(ledger, "rejected")
    assert {r.reason for r in rejected} == {"not what I want"}
    junk = next(r for r in rejected if r.path == "junk.md")
    assert git(root, "cat-file", "blob", junk.blob) == "agent junk\n"  # the rejected bytes can come back


def test_reject_never_overwrites_a_newer_edit(world, monkeypatch) -> None:
    config, ledger, root = world
    (root / "tests.md").write_text("agent's version\n")
    outside.scan(config, ledger)
    item = outside.items(ledger)[0]
    (root / "tests.md").write_text("person fixed it by hand\n")
    with pytest.raises(outside.OutsideError):
        outside.reject(config, ledger, item.id, "wrong")
    assert (root / "tests.md").read_text() == "person fixed it by hand\n"
    assert outside.get(ledger, item.id).status == "pending"


# -- the person's own edits --------------------------------------------------------------------


def test_the_persons_edits_are_committed_without_ceremony(world) -> None:
    config, ledger, root = world
    (root / "tests.md").write_text("my note\n")
    (root / "mine.md").write_text("another of mine\n")
    (root / "projects").mkdir()
    (root / "projects" / "agent.md").write_text("agent wrote\n")
    write_transcript(config, "projects/agent.md", now_iso())
    outside.scan(config, ledger)
    sha = outside.accept_mine(config, ledger)
    assert sorted(git(root, "show", "--name-only", "--format=", sha).split()) == ["mine.md", "tests.md"]
    assert "Dreamtui-Outside: mine" in git(root, "log", "-1", "--format=%B")
    [left] = outside.items(ledger)
    assert left.path == "projects/agent.md" and left.writer == "auto-memory"
    # marking an agent's change "mine" makes it the person's
    outside.accept(config, ledger, left.id, mine=True)
    assert outside.get(ledger, left.id).writer == "person"


def test_a_file_put_back_by_hand_closes_its_item(world) -> None:
    config, ledger, root = world
    original = (root / "tests.md").read_text()
    (root / "tests.md").write_text("agent\n")
    outside.scan(config, ledger)
    (root / "tests.md").write_text(original)
    report = outside.scan(config, ledger)
    assert report.gone and outside.items(ledger) == []


# -- batches -----------------------------------------------------------------------------------


def test_a_mass_deletion_is_one_loud_batch_restorable_in_one_step(world) -> None:
    config, ledger, root = world
    repo = gitops.open_repo(root)
    for n in range(23):
        (root / f"m{n}.md").write_text(f"memory number {n}\n")
    gitops.commit_paths(repo, [f"m{n}.md" for n in range(23)], "more", {})
    for n in range(23):
        (root / f"m{n}.md").unlink()
    for name in ("tests", "style", "old"):
        (root / f"{name}.md").write_text(f"consolidated {name}\n")
    (root / "MEMORY.md").write_text("- [All](tests.md) — merged\n")
    report = outside.scan(config, ledger)
    [batch] = outside.batches(ledger)
    assert report.batches == [batch.id]
    # no transcript says who: the writer is not guessed (issue 34); the index goes with the batch
    assert batch.summary() == "removed 23 files, rewrote 3, edited MEMORY.md together (writer not known)"
    assert {i.writer for i in outside.items(ledger) if i.batch} == {"unknown"}
    restored = outside.restore_batch(config, ledger, batch.id, "went too far")
    assert len(restored) == 27  # one decision: 23 deletions, 3 rewrites and MEMORY.md
    assert all((root / f"m{n}.md").exists() for n in range(23))
    assert (root / "style.md").read_text().startswith("---")
    assert (root / "MEMORY.md").read_text().startswith("- [Tests](tests.md)")
    assert outside.items(ledger) == []


# -- statistics --------------------------------------------------------------------------------


def test_decisions_count_per_writer_in_the_stats(world) -> None:
    from dreamtui.core.dream.stats import compute_stats

    config, ledger, root = world
    (root / "a.md").write_text("agent a\n")
    (root / "b.md").write_text("agent b\n")
    (root / "c.md").write_text("mine\n")
    write_transcript(config, "a.md", now_iso())
    outside.scan(config, ledger)
    by_path = {i.path: i for i in outside.items(ledger)}
    outside.accept(config, ledger, by_path["a.md"].id)
    outside.reject(config, ledger, by_path["b.md"].id, "noise")
    outside.accept_mine(config, ledger, [by_path["c.md"].id])
    stats = compute_stats(ledger)["by_writer"]
    assert stats["Claude Code auto memory"] == {
        "accepted": 1,
        "rejected": 0,
        "decisions": 1,
        "accept_rate": 1.0,
    }
    assert stats["person"]["accepted"] == 1 and stats["person"]["rejected"] == 1  # b.md had no record


# -- watching ----------------------------------------------------------------------------------


def test_the_watcher_turns_file_events_into_items_and_ignores_dreamtuis_accept(world) -> None:
    config, ledger, root = world
    seen: list[outside.ScanReport] = []
    watcher = outside.OutsideWatcher(config, on_scan=seen.append, settle=0.1)
    watcher.start()  # watching once it returns
    try:
        (root / "live.md").write_text("written while dreamtui watches\n")
        assert wait_for(lambda: any(i.path == "live.md" for i in outside.items(ledger)))
        item = next(i for i in outside.items(ledger) if i.path == "live.md")
        outside.accept(config, ledger, item.id)
        count = len(seen)
        # a change made after the accept: once it is an item, the watcher has scanned past the accept
        (root / "later.md").write_text("written after the accept\n")
        assert wait_for(lambda: any(i.path == "later.md" for i in outside.items(ledger)))
        [later] = outside.items(ledger)  # the accept's own writes came back as nothing
        assert later.path == "later.md"
        assert all(new == later.id for r in seen[count:] for new in r.new)
    finally:
        watcher.stop()
    assert watcher.errors == []


def test_an_edit_made_while_a_reject_is_running_is_kept(world, monkeypatch) -> None:
    config, ledger, root = world
    for step in ("aside", "link"):
        (root / "tests.md").write_text("agent's version\n")
        outside.scan(config, ledger)
        [item] = outside.items(ledger)
        mine = f"person typed this during the reject ({step})\n"

        def person_types(name: str, step: str = step, mine: str = mine) -> None:
            if name == step:
                (root / "tests.md").write_text(mine)

        monkeypatch.setattr(outside, "_step", person_types)
        with pytest.raises(outside.OutsideError):
            outside.reject(config, ledger, item.id, "wrong")
        monkeypatch.setattr(outside, "_step", lambda name: None)
        texts = {p.read_text() for p in root.glob("tests.md*")}
        assert mine in texts  # the person's bytes are on disk
        assert outside.get(ledger, item.id).status == "pending"
        for extra in root.glob("tests.md.kept-*"):
            extra.unlink()
        outside.scan(config, ledger)
        [again] = outside.items(ledger)
        outside.accept_mine(config, ledger, [again.id])


def test_a_rejected_deletion_never_replaces_a_file_written_meanwhile(world, monkeypatch) -> None:
    config, ledger, root = world
    (root / "style.md").unlink()
    outside.scan(config, ledger)
    [item] = outside.items(ledger)
    monkeypatch.setattr(
        outside, "_step", lambda name: name == "link" and (root / "style.md").write_text("new\n")
    )
    with pytest.raises(outside.OutsideError, match="written again"):
        outside.reject(config, ledger, item.id, "keep it")
    assert (root / "style.md").read_text() == "new\n"


def test_a_change_made_while_dreamtui_was_closed_is_attributed_at_the_next_start(world) -> None:
    import os
    from datetime import UTC, datetime, timedelta

    config, ledger, root = world
    then = datetime.now(UTC) - timedelta(hours=3)
    (root / "tests.md").write_text("auto memory wrote this three hours ago\n")
    os.utime(root / "tests.md", (then.timestamp(), then.timestamp()))
    (root / "style.md").unlink()
    os.utime(root, (then.timestamp(), then.timestamp()))  # the deletion's time is its folder's
    stamp = (then - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    transcript = write_transcript(config, "tests.md", stamp, tool="Edit")
    text = transcript.read_text()
    transcript.write_text(
        text
        + text.replace("tests.md", "style.md")
        .replace('"Edit"', '"Bash"')
        .replace('"file_path"', '"command"')
        .replace(str(root / "style.md"), "rm " + str(root / "style.md"))
    )
    os.utime(transcript, (then.timestamp(), then.timestamp()))
    outside.scan(config, ledger)
    got = {i.path: (i.writer, i.tool) for i in outside.items(ledger)}
    assert got == {"tests.md": ("auto-memory", "Edit"), "style.md": ("auto-memory", "Bash")}


def test_accept_keeps_a_version_the_person_staged_of_the_same_file(world) -> None:
    config, ledger, root = world
    (root / "tests.md").write_text("the person's staged version\n")
    git(root, "add", "tests.md")
    (root / "tests.md").write_text("then auto memory wrote this\n")
    outside.scan(config, ledger)
    [item] = outside.items(ledger)
    sha = outside.accept(config, ledger, item.id)
    assert git(root, "show", f"{sha}:tests.md") == "then auto memory wrote this\n"
    assert git(root, "show", ":tests.md") == "the person's staged version\n"  # still staged
    assert (root / "tests.md").read_text() == "then auto memory wrote this\n"


def test_a_batch_restore_refuses_whole_when_a_file_changed_again_and_names_it(world) -> None:
    config, ledger, root = world
    for name in ("tests", "style", "old"):
        (root / f"{name}.md").unlink()
    outside.scan(config, ledger)
    [batch] = outside.batches(ledger)
    assert batch.summary() == "removed 3 files together (writer not known)"
    (root / "old.md").write_text("the person wrote a new old.md meanwhile\n")
    with pytest.raises(outside.OutsideError, match="old.md.*nothing of the batch was restored"):
        outside.restore_batch(config, ledger, batch.id, "undo the dream")
    assert (root / "old.md").read_text() == "the person wrote a new old.md meanwhile\n"
    assert not (root / "tests.md").exists() and not (root / "style.md").exists()  # one decision: all or none
    outside.scan(config, ledger)  # old.md is an item of its own now; the rest of the batch restores
    assert len(outside.restore_batch(config, ledger, batch.id, "undo the dream")) == 2
    assert (root / "tests.md").exists() and (root / "style.md").exists()
