"""Consolidation proposals in the app's queue (issue 26): a row per proposal, the memory as it is and as
it would be (a diff) beside its evidence, a / r decide it — the real app, a real git memory repository."""

from __future__ import annotations

import subprocess

from fakes.notes import said
from fakes.tui import open_queue, wait_for

from dreamtui.core.dream.consolidate_find import find_offline
from dreamtui.core.ledger import consolidations as rows
from dreamtui.core.memory.layout import project_folder
from dreamtui.tui.app import DreamApp
from dreamtui.tui.widgets.candidate_view import CandidateView

PROJECT = "-home-kim-src-payments-api"
BODY = "Keep the database connection pool at 10 connections in production."


def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _detail_text(app: DreamApp) -> str:
    view = app.screen.query_one(CandidateView)
    content = view.query_one("#summary").content
    return "\n".join(getattr(t, "plain", str(t)) for t in getattr(content, "renderables", [content]))


def _plant(cfg, ledger, name: str) -> rows.Consolidation:
    """Two memories that say the same, committed (one by another writer, at the top); the merge found."""
    root = cfg.memory
    folder = root / "projects" / project_folder(PROJECT)
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {name}\ntype: project\n---\n\n{BODY}\n"
    (folder / "pool.md").write_text(text)
    (root / "pool-again.md").write_text(text.replace(name, f"{name} again"))
    with (root / "MEMORY.md").open("a") as fh:
        fh.write(
            f"- [{name}](projects/{project_folder(PROJECT)}/pool.md) — pool\n- [{name} again](pool-again.md) — pool\n"
        )
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "two writers, one rule")
    [item] = [i for i in find_offline(root, PROJECT) if rows.add(ledger, i)]
    return item


async def test_a_merge_is_a_queue_row_with_its_evidence_and_diff_and_a_accepts_it(
    tui_setup, git_home
) -> None:
    cfg, ledger, ids = tui_setup
    item = _plant(cfg, ledger, "Pool size")
    async with open_queue(cfg, ledger, len(ids) + 1, at=item.id) as (app, pilot, table):
        text = _detail_text(app)
        assert "MERGE" in text and "Evidence  check" in text and "say the same (" in text
        assert "As it is (−) and as it would be (+):" in text
        gone = next(t for t in item.targets if t != item.keep_path)
        assert f"--- a/{gone}" in text and "+++ /dev/null" in text  # the file it deletes
        assert any(line.startswith("-- [Pool size") for line in text.splitlines())  # and its index line
        assert (cfg.memory / gone).exists()
        await pilot.press("a")
        await wait_for(pilot, lambda: rows.get(ledger, item.id).status == "accepted")
        assert f"Dreamtui-Consolidation: {item.id}" in _git(cfg.memory, "log", "-1", "--format=%B")
        assert not (cfg.memory / gone).exists() and _git(cfg.memory, "status", "--porcelain") == ""
        assert table.row_count == len(ids)


async def test_r_rejects_a_consolidation_with_its_reason(tui_setup, git_home) -> None:
    cfg, ledger, ids = tui_setup
    item = _plant(cfg, ledger, "Pool size")
    async with open_queue(cfg, ledger, len(ids) + 1, at=item.id) as (app, pilot, table):
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("1")
        await pilot.press(*"they differ for staging")
        await pilot.press("enter")
        await wait_for(pilot, lambda: rows.get(ledger, item.id).status == "rejected")
        assert table.row_count == len(ids)
    assert rows.get(ledger, item.id).decision_reason == "they differ for staging"  # type: ignore[union-attr]
    assert all((cfg.memory / t).exists() for t in item.targets)


async def test_u_undoes_a_consolidation_accepted_in_the_app(tui_setup, git_home) -> None:
    """docs/consolidation.md said the app's `u` undoes lessons' decisions only; it undoes a
    consolidation's accept too (one commit putting the files back)."""
    cfg, ledger, ids = tui_setup
    item = _plant(cfg, ledger, "Pool size")
    gone = next(t for t in item.targets if t != item.keep_path)
    async with open_queue(cfg, ledger, len(ids) + 1, at=item.id) as (app, pilot, table):
        await pilot.press("a")
        await wait_for(pilot, lambda: rows.get(ledger, item.id).status == "accepted")
        assert not (cfg.memory / gone).exists()
        await pilot.press("u")
        await wait_for(pilot, lambda: rows.get(ledger, item.id).status != "accepted")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        # the note says what is true: the proposal is undone (not back in the queue), the finder may
        # propose the memory again (it said "it waits for review again")
        await wait_for(pilot, lambda: said(app, "the next dream may propose it again"))
        assert not said(app, "waits for review again")
    assert (cfg.memory / gone).exists() and _git(cfg.memory, "status", "--porcelain") == ""


async def test_the_header_counts_a_waiting_consolidation_as_the_queue_shows_it(tui_setup, git_home) -> None:
    """The header said "6 proposals waiting" beside "7 of 7 shown": consolidations were not counted."""
    from dreamtui.tui.widgets.status_header import StatusHeader

    cfg, ledger, ids = tui_setup
    _plant(cfg, ledger, "Pool size")
    async with open_queue(cfg, ledger, len(ids) + 1) as (app, pilot, table):
        header = app.screen.query_one(StatusHeader).render_text().plain
        info = str(app.screen.query_one("#queue-info").render())
    assert f"{len(ids) + 1} proposals waiting" in header and f"{len(ids) + 1} of {len(ids) + 1} shown" in info
