"""Kills between a multi-file decision's commit and its ledger write (issue 34 §3): SIGKILL at random
moments of random consolidation decisions (accept, reject, undo) and outside decisions (accept, mine,
reject, batch restore, undo); after each kill a start runs (:func:`startup.reconcile`, what the app and
the CLI run first) and the ledger must agree with git at once: every decision git holds is recorded,
with the journal entry ``u`` takes back, and nothing the ledger calls accepted is missing from git; no
intent, no temp file, no half-written tree is left.

The number of kills of each loop is ``AGREEMENT_KILLS`` (default 12, a short run for the
suite). The issue's figure, at least 200 of each, is run by ``tests/bench/kill_agreement.py``::

    AGREEMENT_KILLS=200 python3 -m pytest -q -s tests/test_kill_agreement.py

Each decision runs in a forked child in a process group of its own, killed whole with SIGKILL; the
test waits until every git the child started has finished before it starts and looks.
"""

from __future__ import annotations

import functools
import json
import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fakes.gitrepo import git
from fakes.kills import run_child
from test_consolidate import FOLDER, PROJECT, memory_repo, project_repo, topic
from test_outside_crash import POOL, _change

from dreamtui.core.config import Config
from dreamtui.core.dream.consolidation import run_pass
from dreamtui.core.errors import DreamError
from dreamtui.core.ledger import Ledger, intents
from dreamtui.core.ledger import consolidations as rows
from dreamtui.core.ledger import outside as outside_items
from dreamtui.core.memory import consolidate, gitops, outside, startup, undo

KILLS = int(os.environ.get("AGREEMENT_KILLS", "12"))
"""Not a ``DREAMTUI_*`` name: the suite's conftest clears those before any test module is imported."""


@pytest.fixture(autouse=True)
def _now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-04-02T09:00:00Z")


def _loop(
    config: Config,
    rng: random.Random,
    prepare: Callable[[int], bool],
    decide: Callable[[int], None],
    check: Callable[[], None],
) -> str:
    """Rounds of ``prepare`` (False: nothing to decide), a child deciding (killed at a random moment
    within the decisions' span), a start and ``check``, until :data:`KILLS` kills."""
    span = 0.0
    killed = rounds = 0
    started = time.monotonic()
    while killed < KILLS:
        rounds += 1
        assert rounds <= 4 * KILLS + 10, f"only {killed} of {rounds} runs were killed"
        if not prepare(rounds):
            continue
        probe = span == 0.0
        job = functools.partial(decide, rng.randrange(1 << 30))
        was_killed, elapsed = run_child(config, job, None if probe else rng.uniform(0, span))
        span = max(span * 0.9, elapsed) if probe or not was_killed else span
        killed += was_killed
        check()
    return f"{killed} SIGKILLs in {rounds} runs ({time.monotonic() - started:.0f}s, span {span:.3f}s)"


def _decide_each_then_undo(
    config: Config, led: Ledger, rnd: random.Random, act: Callable[[outside.Item, float], None]
) -> None:
    """What a person might do in a child about to be killed: each pending outside item in a random
    order decided by ``act`` (given a random roll; a refused decision is not taken), then up to two
    undos."""
    pending = outside.items(led)
    rnd.shuffle(pending)
    for item in pending:
        roll = rnd.random()
        try:
            act(item, roll)
        except DreamError:
            pass
    for _ in range(rnd.randint(0, 2)):
        try:
            undo.undo_last(config, led)
        except DreamError:
            break


def _events(root: Path, trailer: str, undo_trailer: str) -> dict[str, tuple[str, str]]:
    """Per id: the newest of its decision commits in HEAD's history (``accept``/``undo``, sha)."""
    out: dict[str, tuple[str, str]] = {}
    for info in gitops.list_commits(gitops.open_repo(root, create=False)):  # newest first
        for key, what in ((trailer, "accept"), (undo_trailer, "undo")):
            for value in info.trailers.get(key, []):
                for ref in (r.strip() for r in value.split(",")):
                    out.setdefault(ref, (what, info.sha))
    return out


def _live_journal(ledger: Ledger, kind: str, actions: tuple[str, ...]) -> set[str]:
    refs: set[str] = set()
    for row in ledger.query(
        "SELECT refs, action FROM decision_journal WHERE undone = 0 AND kind = ?", (kind,)
    ):
        if row["action"] in actions:
            refs.update(json.loads(row["refs"]))
    return refs


# -- consolidation -------------------------------------------------------------------------------------


def test_kills_during_consolidation_decisions_leave_no_ledger_git_disagreement_after_a_start(
    config: Config, ledger: Ledger, git_home: Path, tmp_path: Path
) -> None:
    root = memory_repo(config, {f"{FOLDER}/keep.md": topic("Keep", "Build with make build.")})
    repo = project_repo(tmp_path)
    rng = random.Random(20260341)
    body = "Keep the database connection pool at 10 connections in production."

    def prepare(n: int) -> bool:
        if len(rows.listed(ledger, "pending")) < 3:  # new memories the finders can prove something of
            new = {
                f"{FOLDER}/r{n}-settings.md": topic(f"Settings {n}", "The settings live in src/settings.py."),
                f"{FOLDER}/r{n}-helper.md": topic(f"Helper {n}", "The helper lives in lib/old.py."),
                f"{FOLDER}/r{n}-pool.md": topic(f"Pool {n}", f"{body} Round {n}."),
                f"r{n}-pool.md": topic(f"Pool size {n}", f"{body} Round {n}."),
            }
            index = (root / "MEMORY.md").read_text()
            for rel, text in new.items():
                (root / rel).write_text(text)
                index += f"- [{rel.rsplit('/', 1)[-1][:-3]}]({rel}) — hook\n"
            (root / "MEMORY.md").write_text(index)
            gitops.commit_paths(gitops.open_repo(root), [*new, "MEMORY.md"], "the person's memories", {})
        run_pass(root, ledger, PROJECT, [], repo_path=repo)
        return bool(rows.listed(ledger, "pending")) or bool(rows.listed(ledger, "accepted"))

    def decide(seed: int) -> None:
        rnd = random.Random(seed)
        led = Ledger.open(config.state)
        for item in rows.listed(led, "pending"):
            roll = rnd.random()
            try:
                if roll < 0.6:
                    consolidate.accept(config, led, item.id)
                elif roll < 0.75:
                    consolidate.reject(led, item.id, "not now")
            except DreamError:
                pass
        for _ in range(rnd.randint(0, 2)):
            try:
                undo.undo_last(config, led)
            except DreamError:
                break

    def check() -> None:
        report = startup.reconcile(config, ledger)  # the start
        assert intents.count(ledger) == 0, report.notices
        assert git(root, "status", "--porcelain") == "", report.notices  # nothing half-written, no temp
        events = _events(root, consolidate.TRAILER, consolidate.TRAILER_UNDO)
        items = rows.listed(ledger, None)
        for item in items:
            event = events.get(item.id)
            in_git = event is not None and event[0] == "accept"
            assert (item.status == "accepted") == in_git, (item.id, item.status, event)
            if in_git:
                assert item.commit_sha == event[1], item.id  # type: ignore[index]
            if event is not None and event[0] == "undo":
                assert item.status in ("undone", "pending"), (item.id, item.status)
        accepted = {i.id for i in items if i.status == "accepted"}
        assert _live_journal(ledger, "consolidation", ("accept",)) == accepted  # `u` knows each one

    print(_loop(config, rng, prepare, decide, check), "consolidation: 0 disagreements")


# -- outside -----------------------------------------------------------------------------------------------


def test_kills_during_outside_decisions_leave_no_ledger_git_disagreement_after_a_start(
    config: Config, ledger: Ledger, git_home: Path
) -> None:
    root = config.memory
    repo = gitops.open_repo(root)
    for n in range(POOL):
        (root / f"f{n:02d}.md").write_text(f"committed lesson {n}\n")
    gitops.commit_paths(repo, [f"f{n:02d}.md" for n in range(POOL)], "seed", {})
    rng = random.Random(20260342)
    last: dict[str, bytes | None] = {}

    def prepare(n: int) -> bool:
        _change(root, rng, n, last)
        outside.scan(config, ledger)
        return bool(outside.items(ledger))

    def decide(seed: int) -> None:
        rnd = random.Random(seed)
        led = Ledger.open(config.state)
        for batch in outside.batches(led):
            if rnd.random() < 0.5:
                try:
                    outside.restore_batch(config, led, batch.id, "too much")
                except DreamError:
                    pass

        def act(item: outside.Item, roll: float) -> None:
            if roll < 0.35:
                outside.accept(config, led, item.id, dead_links_ok=True)
            elif roll < 0.5:
                outside.accept_mine(config, led, [item.id])
            else:
                outside.reject(config, led, item.id, "not wanted")

        _decide_each_then_undo(config, led, rnd, act)

    def check() -> None:
        report = startup.reconcile(config, ledger)  # the start
        assert not outside_items.in_flight(ledger), report.notices
        assert [p.name for p in root.rglob(".dreamtui-tmp-*")] == []
        assert not list((root / ".git").glob("dreamtui-outside-index-*"))
        history = set(git(root, "rev-list", "HEAD").split())
        events = _events(root, outside.TRAILER_OUTSIDE, outside.TRAILER_UNDO_OUTSIDE)
        items = {i.id: i for i in outside.items(ledger, None)}
        for item in items.values():
            if item.status == "accepted":
                assert item.commit_sha in history, (item.id, item.commit_sha)
        for ref, (what, sha) in events.items():
            if ref == "mine" or ref not in items:
                continue
            if what == "accept":
                assert items[ref].status == "accepted" and items[ref].commit_sha == sha, (ref, items[ref])
            else:
                assert items[ref].status != "accepted" or items[ref].commit_sha not in (None, sha), ref
        accepted = {i.id for i in items.values() if i.status == "accepted"}
        assert _live_journal(ledger, "outside", ("accept", "mine")) == accepted  # `u` knows each one

    print(_loop(config, rng, prepare, decide, check), "outside: 0 disagreements")


# -- the agents' own memories (issue 31 item 4) ------------------------------------------------------------


def test_kills_during_decisions_on_the_agents_own_memories_leave_no_disagreement_after_a_start(
    config: Config, ledger: Ledger, git_home: Path
) -> None:
    from fakes.gemini_memory import save_memory

    from dreamtui.core.memory import outside_agents

    root = config.memory
    repo = gitops.open_repo(root)
    (root / "a.md").write_text("lesson\n")
    gitops.commit_paths(repo, ["a.md"], "seed", {})
    codex = Path.home() / ".codex" / "memories"
    codex.mkdir(parents=True)
    md = Path.home() / ".gemini" / "GEMINI.md"
    md.parent.mkdir()
    md.write_text("# the person's own\n")
    rng = random.Random(20260431)

    def prepare(n: int) -> bool:
        for name in rng.sample([f"m{i}.md" for i in range(5)], 2):
            if rng.random() < 0.2 and (codex / name).exists():
                (codex / name).unlink()
            else:
                (codex / name).write_text(f"- {name} in round {n}\n")
        md.write_text(save_memory(md.read_text(), f"fact {n}"))
        outside.scan(config, ledger)
        return bool(outside.items(ledger))

    def decide(seed: int) -> None:
        rnd = random.Random(seed)
        led = Ledger.open(config.state)

        def act(item: outside.Item, roll: float) -> None:
            if roll < 0.4:
                outside.accept(config, led, item.id)
            elif roll < 0.6:
                outside.reject(config, led, item.id, "no")
            else:
                outside.restore_agent(config, led, item.id, "put back")

        _decide_each_then_undo(config, led, rnd, act)

    def check() -> None:
        report = startup.reconcile(config, ledger)  # the start
        assert not outside_items.in_flight(ledger), report.notices
        assert git(root, "status", "--porcelain") == "", report.notices  # the snapshots are HEAD's
        for folder in (root, codex, md.parent):
            assert [p.name for p in folder.rglob(".dreamtui-tmp-*")] == [], folder
        assert md.read_text().startswith("# the person's own\n")
        history = set(git(root, "rev-list", "HEAD").split())
        events = _events(root, outside.TRAILER_OUTSIDE, outside.TRAILER_UNDO_OUTSIDE)
        items = {i.id: i for i in outside.items(ledger, None)}
        assert all(outside_agents.is_snapshot(i.path) for i in items.values())
        for item in items.values():
            if item.status == "accepted":
                assert item.commit_sha in history, (item.id, item.commit_sha)
        for ref, (what, sha) in events.items():
            if ref not in items:
                continue
            if what == "accept":
                assert items[ref].status == "accepted" and items[ref].commit_sha == sha, (ref, items[ref])
            else:
                assert items[ref].status != "accepted" or items[ref].commit_sha not in (None, sha), ref
        accepted = {i.id for i in items.values() if i.status == "accepted"}
        assert _live_journal(ledger, "outside", ("accept", "mine")) == accepted  # `u` knows each one

    print(_loop(config, rng, prepare, decide, check), "agents' memories: 0 disagreements")
