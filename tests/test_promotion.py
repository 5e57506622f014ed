"""Promotion gates, approval, auto-write, after-the-fact review and demotion, over simulated time."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fakes.promotion import (
    APPROVE_AT,
    CLAUDE,
    HEUR,
    HISTORY_ACCEPTS,
    HISTORY_REJECTS,
    START,
    build_history,
    claim_of,
    copy_history,
    insert_decision,
    iso,
    make_candidate,
    seed_cycles,
    seed_history,
)

from dreamtui.core.config import Config
from dreamtui.core.dream import promotion
from dreamtui.core.dream.promotion import Pair
from dreamtui.core.ledger import Ledger
from dreamtui.core.models import Candidate


@pytest.fixture
def at(monkeypatch: pytest.MonkeyPatch):
    """Set the simulated clock: ``at(datetime)``."""

    def set_now(when: datetime) -> None:
        monkeypatch.setenv("DREAMTUI_NOW", iso(when))

    set_now(START + timedelta(days=40))
    return set_now


# -- evidence ------------------------------------------------------------------------------------


def test_evidence_passes_with_enough_days_decisions_and_rate(ledger: Ledger) -> None:
    seed_history(ledger, decisions=50, accepts=40, days=31)
    gate = promotion.evidence_gate(ledger, HEUR)
    assert gate.passed, gate.summary
    assert gate.evidence["decisions"] == 50
    assert gate.evidence["accepted"] == 40
    assert gate.evidence["accept_rate"] == 0.8
    assert gate.evidence["days"] == 31


def test_evidence_shut_below_the_rate(ledger: Ledger) -> None:
    seed_history(ledger, decisions=60, accepts=47, days=35)  # 78.3%
    gate = promotion.evidence_gate(ledger, HEUR)
    assert not gate.passed
    assert gate.evidence["failures"] == ["accept rate 78.3%, need 80%"]


def test_a_rate_just_below_80_percent_is_not_rounded_up(ledger: Ledger) -> None:
    seed_history(ledger, decisions=499, accepts=399, days=35)  # 79.96%
    gate = promotion.evidence_gate(ledger, HEUR)
    assert not gate.passed and gate.evidence["failures"] == ["accept rate 79.9%, need 80%"]


def test_evidence_shut_with_too_few_days(ledger: Ledger) -> None:
    seed_history(ledger, decisions=80, accepts=80, days=29.5)
    gate = promotion.evidence_gate(ledger, HEUR)
    assert not gate.passed
    assert "29.5 days of decisions, need 30" in gate.summary


def test_evidence_shut_with_too_few_decisions(ledger: Ledger) -> None:
    seed_history(ledger, decisions=49, accepts=49, days=40)
    gate = promotion.evidence_gate(ledger, HEUR)
    assert not gate.passed
    assert gate.evidence["failures"] == ["49 human decisions, need 50"]


def test_auto_undone_and_skipped_decisions_do_not_count(ledger: Ledger) -> None:
    seed_history(ledger, decisions=49, accepts=49, days=31)
    extra = [make_candidate(100 + i) for i in range(4)]
    for cand in extra:
        ledger.put_candidate(cand)
    insert_decision(ledger, extra[0], "accept", START + timedelta(days=32), by="auto")
    insert_decision(ledger, extra[1], "accept", START + timedelta(days=32), undone=1)
    insert_decision(ledger, extra[2], "skip", START + timedelta(days=32))
    insert_decision(ledger, extra[3], "undo", START + timedelta(days=32))
    gate = promotion.evidence_gate(ledger, HEUR)
    assert gate.evidence["decisions"] == 49
    assert gate.evidence["latest"].startswith("2026-10-02")  # the 32-day ones did not count
    assert not gate.passed
    # one more real human decision opens it
    last = make_candidate(200)
    ledger.put_candidate(last)
    insert_decision(ledger, last, "accept", START + timedelta(days=33))
    assert promotion.evidence_gate(ledger, HEUR).passed


def test_evidence_is_per_extractor_and_model(ledger: Ledger) -> None:
    seed_history(ledger, decisions=50, accepts=50, days=31, pair=HEUR)
    seed_history(ledger, decisions=60, accepts=30, days=31, pair=CLAUDE, offset=1000)
    assert promotion.choose_pair(ledger) == CLAUDE  # the most decided pair by default
    assert not promotion.evidence_gate(ledger, CLAUDE).passed
    assert promotion.evidence_gate(ledger, HEUR).passed
    assert promotion.choose_pair(ledger, extractor="heuristic") == HEUR
    assert promotion.evidence_gate(ledger, Pair("anthropic", "other-model")).evidence["decisions"] == 0


def test_pair_falls_back_to_the_candidate_when_the_decision_lacks_it(ledger: Ledger) -> None:
    cand = make_candidate(1, CLAUDE)
    ledger.put_candidate(cand)
    insert_decision(ledger, cand, "accept", START, with_pair=False)
    assert promotion.evidence_gate(ledger, CLAUDE).evidence["decisions"] == 1


def test_no_decisions_at_all(ledger: Ledger) -> None:
    assert promotion.choose_pair(ledger) is None
    gate = promotion.evidence_gate(ledger, None)
    assert not gate.passed and "no human decisions" in gate.summary


# -- stable ledger parts that read only the ledger -----------------------------------------------


def test_overlapping_extractions_are_found(ledger: Ledger) -> None:
    rows = [
        ("/a.jsonl", 0, 100, None),
        ("/a.jsonl", 100, 250, None),
        ("/b.jsonl", 0, 80, None),
        ("/b.jsonl", 0, 40, "rate limited"),
        ("/c.jsonl", 0, 300, None),
        ("/c.jsonl", 120, 200, None),
    ]
    with ledger.write() as c:
        for path, start, end, error in rows:
            c.execute(
                "INSERT INTO extractions (session, project, path, start_offset, end_offset, content_hash,"
                " extractor, error, created_at) VALUES ('s', 'p', ?, ?, ?, 'h', 'heuristic', ?, ?)",
                (path, start, end, error, iso(START)),
            )
    found = promotion.overlapping_extractions(ledger)
    assert [(f["path"], f["first_range"], f["second_range"]) for f in found] == [
        ("/c.jsonl", [0, 300], [120, 200])
    ]


def test_last_cycles_skip_the_running_one(ledger: Ledger) -> None:
    seed_cycles(ledger, ["failed"] + ["completed"] * 7 + ["running"])
    cycles = promotion.last_cycles(ledger)
    assert len(cycles) == 7 and {c["status"] for c in cycles} == {"completed"}


# -- the whole story, on a real memory repo built with the real decisions API --------------------


@pytest.fixture
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_history(tmp_path_factory)


@pytest.fixture
def world(history: Path, tmp_path: Path, at) -> tuple[Config, Ledger]:
    """A private copy of the history, opened at APPROVE_AT."""
    cfg = copy_history(history, tmp_path / "world")
    at(APPROVE_AT)
    led = Ledger.open(cfg.state)
    yield cfg, led
    led.close()


def commits(cfg: Config, n: int | None = None):
    from dreamtui.core.memory import gitops

    return gitops.list_commits(gitops.open_repo(cfg.memory), limit=n)


def test_the_gate_reads_decisions_made_through_the_real_api(world) -> None:
    from dreamtui.core.memory import decisions

    cfg, led = world
    gate = promotion.evidence_gate(led, HEUR)
    assert (gate.evidence["accepted"], gate.evidence["rejected"]) == (HISTORY_ACCEPTS, HISTORY_REJECTS)
    assert gate.evidence["days"] == 31 and gate.passed
    # an undone decision stops counting
    decisions.undo_last(cfg, led)
    assert promotion.evidence_gate(led, HEUR).evidence["decisions"] == HISTORY_ACCEPTS + HISTORY_REJECTS - 1


def test_all_gates_pass_and_approval_is_recorded_in_ledger_and_repo(world) -> None:
    from dreamtui.core.memory import gitops

    cfg, led = world
    gates = promotion.compute_gates(cfg, led, promotion.choose_pair(led))
    assert [(g.name, g.passed) for g in gates] == [
        ("one_schema", True),
        ("stable_ledger", True),
        ("evidence", True),
    ]
    assert gates[0].evidence["files"] == HISTORY_ACCEPTS
    # a person's staged work is never swept into the approval commit
    repo = gitops.open_repo(cfg.memory)
    (Path(cfg.memory) / "mine.txt").write_text("staged by me\n")
    repo.git.add("mine.txt")
    promo = promotion.approve(cfg, led)
    assert (promo.extractor, promo.model, promo.status) == ("heuristic", None, "approved")
    assert promo.approved_at == iso(APPROVE_AT)
    assert [g["name"] for g in promo.evidence["gates"]] == ["one_schema", "stable_ledger", "evidence"]
    last = commits(cfg, 1)[0]
    assert last.sha == promo.commit_sha and last.trailers == {"Dreamtui-Promotion": ["approved"]}
    assert gitops.changed_paths(repo, last.sha) == ["promotion.md"]
    assert gitops.status(repo, ["mine.txt"]) == {"mine.txt": "A "}
    text = (Path(cfg.memory) / "promotion.md").read_text()
    assert "## heuristic: active" in text and "gate evidence: pass" in text
    assert promotion.promotion_status(cfg, led).active
    with pytest.raises(promotion.PromotionError, match="already approved"):
        promotion.approve(cfg, led)
    # promotion.md is not a topic file: the schema gate still holds
    assert promotion.schema_gate(cfg).passed


def test_revoke_refuses_to_overwrite_a_persons_edit_of_promotion_md(world) -> None:
    from dreamtui.core.errors import MemoryRepoError
    from dreamtui.core.memory import gitops

    cfg, led = world
    promotion.approve(cfg, led)
    path = Path(cfg.memory) / "promotion.md"
    with path.open("a") as fh:
        fh.write("my note: keep auto-write until the release\n")
    edited = path.read_text()
    with pytest.raises(MemoryRepoError, match="promotion.md .*uncommitted changes"):
        promotion.revoke(cfg, led)
    assert path.read_text() == edited  # the person's note is still there, unstaged
    assert gitops.status(gitops.open_repo(cfg.memory), ["promotion.md"]) == {"promotion.md": " M"}
    assert promotion.promotion_status(cfg, led).active  # and nothing was revoked behind the refusal
    gitops.open_repo(cfg.memory).git.checkout("--", "promotion.md")
    assert promotion.revoke(cfg, led).status == "revoked"


def test_a_failed_cycle_keeps_the_stable_ledger_gate_shut(world) -> None:
    cfg, led = world
    seed_cycles(led, ["failed"], start=START + timedelta(days=35))
    gate = promotion.stable_ledger_gate(cfg, led)
    assert not gate.passed and "1 of the last 7 cycles failed" in gate.summary
    with pytest.raises(promotion.PromotionError, match="failing gates: stable ledger"):
        promotion.approve(cfg, led)
    assert promotion.latest_promotion(led) is None
    assert not (Path(cfg.memory) / "promotion.md").exists()


def test_too_few_cycles_keep_the_stable_ledger_gate_shut(world) -> None:
    cfg, led = world
    with led.write() as c:
        c.execute("DELETE FROM dream_cycles WHERE id = (SELECT MIN(id) FROM dream_cycles)")
    gate = promotion.stable_ledger_gate(cfg, led)
    assert not gate.passed and "only 6 finished cycle(s), need 7 completed" in gate.summary


def test_content_extracted_twice_keeps_the_stable_ledger_gate_shut(world) -> None:
    cfg, led = world

    def extraction(path: str, start: int, end: int) -> None:
        with led.write() as c:
            c.execute(
                "INSERT INTO extractions (session, project, path, start_offset, end_offset, content_hash,"
                " extractor, created_at) VALUES ('s', 'p', ?, ?, ?, 'h', 'heuristic', ?)",
                (path, start, end, iso(APPROVE_AT)),
            )

    extraction("/t/replaced.jsonl", 0, 500)
    extraction("/t/replaced.jsonl", 0, 300)  # the file was replaced: re-read once, by design
    with led.write() as c:
        c.execute(
            "INSERT INTO files (path, project, session, resets) VALUES ('/t/replaced.jsonl', 'p', 's', 1)"
        )
    gate = promotion.stable_ledger_gate(cfg, led)
    assert gate.passed, gate.summary
    assert len(gate.evidence["rereads_after_reset"]) == 1
    extraction("/t/a.jsonl", 0, 400)
    extraction("/t/a.jsonl", 350, 900)
    gate = promotion.stable_ledger_gate(cfg, led)
    assert not gate.passed
    assert "1 overlapping extraction(s): session content extracted twice" in gate.summary
    assert gate.evidence["overlapping_extractions"][0]["second_range"] == [350, 900]


def test_ledger_and_git_out_of_agreement_keeps_the_gate_shut(world) -> None:
    cfg, led = world
    # the ledger says accepted, but git never saw a commit for it
    ghost = make_candidate(900, claim=claim_of(900))
    led.put_candidate(ghost)
    insert_decision(led, ghost, "accept", APPROVE_AT)
    gate = promotion.stable_ledger_gate(cfg, led)
    assert not gate.passed and "reconcile finds ledger and git out of agreement" in gate.summary
    assert gate.evidence["reconcile"]["reopened"] == [ghost.id]


def test_a_malformed_frontmatter_keeps_the_schema_gate_shut(world) -> None:
    from dreamtui.core.memory import gitops

    cfg, led = world
    repo = gitops.open_repo(cfg.memory)
    victim = sorted(p for p in Path(cfg.memory).glob("*.md") if p.name not in ("MEMORY.md",))[0]
    victim.write_text(victim.read_text().replace("type: feedback", "type: Feedback\ntags: x"))
    gitops.commit_paths(repo, [victim.name], "hand edit", {})
    gate = promotion.schema_gate(cfg)
    assert not gate.passed
    assert gate.evidence["offenders"] == [
        {
            "path": victim.name,
            "problems": [
                "unknown field tags",
                "type 'Feedback' is not one of user, feedback, project, reference",
            ],
        }
    ]
    with pytest.raises(promotion.PromotionError, match="failing gates: one schema"):
        promotion.approve(cfg, led)


# -- auto-write ----------------------------------------------------------------------------------


def waiting_candidates(led: Ledger) -> dict[str, Candidate]:
    """One candidate of each kind that must wait, plus two that may be auto-written."""
    kinds = {
        "person": make_candidate(500, claim=claim_of(500), created=APPROVE_AT),
        "assistant": make_candidate(501, provenance="assistant", claim=claim_of(501), created=APPROVE_AT),
        "tool": make_candidate(502, provenance="tool", claim=claim_of(502), created=APPROVE_AT),
        "meta": make_candidate(503, provenance="meta", claim=claim_of(503), created=APPROVE_AT),
        "duplicate": make_candidate(504, duplicate_of="c0000000001", claim=claim_of(504), created=APPROVE_AT),
        "secret": make_candidate(505, secrets=["github-token"], claim=claim_of(505), created=APPROVE_AT),
        "other_model": make_candidate(506, CLAUDE, claim=claim_of(506), created=APPROVE_AT),
        "unverified": make_candidate(507, claim=claim_of(507), created=APPROVE_AT),
    }
    kinds["unverified"].matches = []
    for cand in kinds.values():
        led.put_candidate(cand)
    return kinds


def test_auto_write_without_approval_writes_nothing(world) -> None:
    cfg, led = world
    kinds = waiting_candidates(led)
    before = commits(cfg, 1)[0].sha
    results = promotion.auto_write(cfg, led)
    assert {r.candidate_id for r in results} == {c.id for c in kinds.values()}
    assert not any(r.written for r in results)
    assert results[0].reason == "auto-write has not been approved"
    assert commits(cfg, 1)[0].sha == before


def test_auto_write_commits_eligible_candidates_only(world) -> None:
    from dreamtui.core.memory import gitops

    cfg, led = world
    promotion.approve(cfg, led)
    kinds = waiting_candidates(led)
    results = {r.candidate_id: r for r in promotion.auto_write(cfg, led)}
    written = {name for name, c in kinds.items() if results[c.id].written}
    assert written == {"person", "assistant"}
    reasons = {name: results[c.id].reason for name, c in kinds.items() if name not in written}
    assert "provenance: tool" in reasons["tool"] and "provenance: meta" in reasons["meta"]
    assert reasons["unverified"] == "quote is not verified in the transcript"
    assert reasons["duplicate"] == "may duplicate c0000000001"
    assert reasons["secret"] == "flagged for a secret"
    assert "not the promoted heuristic" in reasons["other_model"]
    for name, cand in kinds.items():
        assert led.get_candidate(cand.id).status == ("accepted" if name in written else "pending")
    # each its own commit, with both trailers, touching its topic file and the index only
    repo = gitops.open_repo(cfg.memory)
    auto_commits = [c for c in commits(cfg, 5) if "Dreamtui-Auto" in c.trailers]
    assert len(auto_commits) == 2
    for info in auto_commits:
        assert info.trailers["Dreamtui-Auto"] == ["yes"]
        cid = info.trailers["Dreamtui-Candidate"][0]
        assert results[cid].commit_sha == info.sha
        assert sorted(gitops.changed_paths(repo, info.sha)) == sorted(["MEMORY.md", results[cid].memory_path])
    rows = led.query(
        "SELECT decided_by FROM decisions WHERE candidate_id IN (?, ?)",
        (kinds["person"].id, kinds["assistant"].id),
    )
    assert [r["decided_by"] for r in rows] == ["auto", "auto"]
    # auto-written memories never count as evidence
    assert promotion.evidence_gate(led, HEUR).evidence["decisions"] == HISTORY_ACCEPTS + HISTORY_REJECTS
    listed = promotion.auto_written(led)
    assert {a.candidate_id for a in listed} == {kinds["person"].id, kinds["assistant"].id}
    assert all(a.review is None for a in listed)
    assert "2 auto-written memories await review" in (promotion.promotion_banner(cfg, led) or "")


def test_a_secret_in_the_text_waits_even_without_a_flag(world) -> None:
    cfg, led = world
    promotion.approve(cfg, led)
    cand = make_candidate(
        600, claim="Deploy with token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", created=APPROVE_AT
    )
    led.put_candidate(cand)
    [result] = promotion.auto_write(cfg, led, [cand])
    assert not result.written and result.reason == "flagged for a secret"


def test_rejecting_after_the_fact_reverts_and_counts_against_the_rate(world) -> None:
    cfg, led = world
    promotion.approve(cfg, led)
    kinds = waiting_candidates(led)
    results = {r.candidate_id: r for r in promotion.auto_write(cfg, led)}
    cid = kinds["person"].id
    path = Path(cfg.memory) / (results[cid].memory_path or "")
    assert path.exists()
    index_line = next(
        line
        for line in (Path(cfg.memory) / "MEMORY.md").read_text().splitlines()
        if results[cid].memory_path in line
    )
    status = promotion.review_auto(cfg, led, cid, keep=False, reason="only that bug", category="too-specific")
    assert status.active  # one rejection among fewer than 5 reviews does not demote
    assert not path.exists()
    assert index_line not in (Path(cfg.memory) / "MEMORY.md").read_text()
    last = commits(cfg, 1)[0]
    assert last.reverts == results[cid].commit_sha and last.trailers["Dreamtui-Undo"] == [cid]
    assert led.get_candidate(cid).status == "rejected"
    row = led.query(
        "SELECT decided_by, category, reason FROM decisions WHERE candidate_id = ? AND action = 'reject'",
        (cid,),
    )[0]
    assert tuple(row) == ("person", "too specific", "only that bug")
    gate = promotion.evidence_gate(led, HEUR)
    assert gate.evidence["rejected"] == HISTORY_REJECTS + 1
    # keeping the other one is a human accept
    promotion.review_auto(cfg, led, kinds["assistant"].id, keep=True)
    assert promotion.evidence_gate(led, HEUR).evidence["accepted"] == HISTORY_ACCEPTS + 1
    assert {a.candidate_id: a.review for a in promotion.auto_written(led)} == {
        cid: "rejected",
        kinds["assistant"].id: "kept",
    }
    with pytest.raises(promotion.PromotionError, match="already reviewed"):
        promotion.review_auto(cfg, led, cid, keep=True)
    with pytest.raises(promotion.PromotionError, match="was not auto-written"):
        promotion.review_auto(cfg, led, kinds["tool"].id, keep=True)
    # ledger and git still agree after the revert
    assert promotion.stable_ledger_gate(cfg, led).passed


def auto_write_n(cfg: Config, led: Ledger, n: int, first: int) -> list[str]:
    cands = [make_candidate(first + i, claim=claim_of(first + i), created=APPROVE_AT) for i in range(n)]
    for cand in cands:
        led.put_candidate(cand)
    results = promotion.auto_write(cfg, led, cands)
    assert all(r.written for r in results), [r.reason for r in results]
    return [c.id for c in cands]


def test_after_the_fact_rejections_demote_and_every_surface_says_why(world, at) -> None:
    cfg, led = world
    promotion.approve(cfg, led)
    at(APPROVE_AT + timedelta(days=1))
    ids = auto_write_n(cfg, led, 6, 700)
    at(APPROVE_AT + timedelta(days=2))
    for cid, keep in zip(ids[:4], [False, True, True, False], strict=True):
        assert promotion.review_auto(cfg, led, cid, keep=keep).active  # 4 reviews: too few to judge
    status = promotion.review_auto(cfg, led, ids[4], keep=True)  # 3 of 5 kept: 60%
    assert not status.active
    assert "keep 3 of 5 auto-written memories (60%), below 80%" in (status.reason or "")
    row = led.query("SELECT status, end_reason, ended_at FROM promotions")[0]
    assert row["status"] == "demoted" and "3 of 5" in row["end_reason"]
    assert row["ended_at"] == iso(APPROVE_AT + timedelta(days=2))
    assert commits(cfg, 1)[0].trailers == {"Dreamtui-Promotion": ["demoted"]}
    assert "## heuristic: demoted" in (Path(cfg.memory) / "promotion.md").read_text()
    banner = promotion.promotion_banner(cfg, led)
    assert banner and banner.startswith(
        "Auto-write for heuristic stopped: after-the-fact reviews keep 3 of 5"
    )
    assert promotion.promotion_banner(cfg, led, check=False) == banner  # the cheap, ledger-only read
    # auto-write has stopped by itself
    late = make_candidate(800, claim=claim_of(800), created=APPROVE_AT)
    led.put_candidate(late)
    [result] = promotion.auto_write(cfg, led, [late])
    assert not result.written and "auto-write stopped" in (result.reason or "")
    assert led.get_candidate(late.id).status == "pending"
    # the person acknowledges; the banner goes, auto-write stays off
    promotion.revoke(cfg, led)
    assert promotion.promotion_banner(cfg, led) is None
    assert not promotion.promotion_status(cfg, led).active


def test_a_gate_that_stops_holding_demotes(world, at) -> None:
    cfg, led = world
    promotion.approve(cfg, led)
    at(APPROVE_AT + timedelta(days=3))
    seed_cycles(led, ["failed"], start=APPROVE_AT + timedelta(days=2))
    status = promotion.promotion_status(cfg, led)
    assert not status.active
    assert "gate stable ledger stopped holding" in (status.reason or "")
    assert promotion.latest_promotion(led).status == "demoted"
    assert "stable ledger stopped holding" in (promotion.promotion_banner(cfg, led) or "")


def test_revoke_ends_auto_write(world) -> None:
    cfg, led = world
    promotion.approve(cfg, led)
    ended = promotion.revoke(cfg, led, "going on holiday")
    assert ended.status == "revoked" and ended.end_reason == "going on holiday"
    assert commits(cfg, 1)[0].trailers == {"Dreamtui-Promotion": ["revoked"]}
    assert promotion.promotion_banner(cfg, led) is None
    assert "revoked" in (promotion.promotion_status(cfg, led).reason or "")
    kinds = waiting_candidates(led)
    assert not any(r.written for r in promotion.auto_write(cfg, led, [kinds["person"]]))
    with pytest.raises(promotion.PromotionError, match="nothing to revoke"):
        promotion.revoke(cfg, led)
    # it can be approved again while the gates hold
    assert promotion.approve(cfg, led).status == "approved"
