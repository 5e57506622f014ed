"""The briefing (issue 14): built only from accepted memories and session facts, every line with its
source, a proposal in the ledger until a person accepts it (or auto-write is promoted)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import git
import pytest
from fakes.cli_world import porcelain

from dreamtui.core.config import Config
from dreamtui.core.dream.run import run_cycle
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import briefing, decisions
from dreamtui.core.memory.briefing import BriefingError, SessionSource, write_briefing
from dreamtui.core.models import Candidate, Digest, Turn, candidate_id

ACME = "-home-kim-acme"
SESSION = "55555555-5555-4555-8555-555555555555"
OTHER = "66666666-6666-4666-8666-666666666666"
OLD = 1_700_000_000  # long finished: never deferred as still being written

PERSON_DECIDED = "We decided to use the zorblax serializer for every export from now on, okay?"
PERSON_LAST = "Please also migrate the frobnitz tables to the new schema before Friday."
TURNS = [
    ("user", "Let's work on the invoice exporter for the finance team today please."),
    ("assistant", "Sure, I will start with the exporter module."),
    ("user", PERSON_DECIDED),
    ("assistant", "Noted, switching the exporter to it."),
    ("user", "Always run the exporter tests with the frozen clock so dates stay stable."),
    ("assistant", "Understood, the tests now freeze the clock."),
    ("user", PERSON_LAST),
]
# words of the proposals a person has not accepted: none may reach the briefing
PLANTED = {
    "pending": (
        "Use the zorblax serializer for exports",
        "quuxification keeps exports stable",
        PERSON_DECIDED,
    ),
    "rejected": ("Migrate the frobnitz tables first", "blargle schemas drift", PERSON_LAST),
    "dropped": (
        "Snarfwidget every release",
        "wibblequant says so",
        "Sure, I will start with the exporter module.",
    ),
}
FORBIDDEN = ("zorblax", "quuxification", "frobnitz", "blargle", "snarfwidget", "wibblequant")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-10T23:00:00Z")
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(var, "Kim")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(var, "kim@example.com")


def record(i: int, role: str, content: object, session: str = SESSION) -> dict[str, object]:
    rec: dict[str, object] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/kim/acme",
        "sessionId": session,
        "version": "2.0.55",
        "type": role,
        "uuid": f"00000000-0000-4000-8000-{i:012d}",
        "timestamp": f"2026-03-10T15:{i:02d}:00.000Z",
    }
    if role == "user":
        rec["message"] = {"role": "user", "content": content}
    else:
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        rec["message"] = {
            "id": f"msg_{i}",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": blocks,
        }
    return rec


def write_session(
    config: Config, turns: list[tuple[str, object]], session: str = SESSION, project: str = ACME
) -> Path:
    folder = config.transcripts / project
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    path.write_text(
        "".join(json.dumps(record(i, role, text, session)) + "\n" for i, (role, text) in enumerate(turns))
    )
    os.utime(path, (OLD, OLD))
    return path


def plant(ledger: Ledger, path: Path, status: str, claim: str, why: str, quote: str) -> Candidate:
    cand = Candidate(
        id=candidate_id(SESSION, quote, claim),
        session=SESSION,
        project=ACME,
        transcript=str(path),
        claim=claim,
        why=why,
        how_to_apply=f"{why}, always",
        type="feedback",
        scope="project",
        quote=quote,
        extractor="heuristic",
        model=None,
        status=status,
        created_at="2026-03-10T10:00:00Z",
        updated_at="2026-03-10T10:00:00Z",
    )
    ledger.put_candidate(cand)
    return cand


def bullets(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def assert_every_line_has_a_source_that_exists(config: Config, text: str) -> None:
    lines = bullets(text)
    assert lines
    for line in lines:
        m = re.fullmatch(r"- .+ — source: `([^`]+)`", line)
        assert m, line
        source = m.group(1)
        if ":" in source:  # a transcript and a line
            rel, n = source.rsplit(":", 1)
            raw = (config.transcripts / rel).read_text().splitlines()
            assert 1 <= int(n) <= len(raw), source
        else:  # a memory file
            assert (config.memory / source).is_file(), source


# -- what the briefing is made of -------------------------------------------------------------------


def test_no_word_of_a_pending_rejected_or_dropped_proposal_reaches_the_briefing(
    config: Config, ledger: Ledger
) -> None:
    path = write_session(config, TURNS)
    for status, (claim, why, quote) in PLANTED.items():
        plant(ledger, path, status, claim, why, quote)
    accepted = plant(
        ledger,
        path,
        "pending",
        "Run the exporter tests with a frozen clock",
        "dates in the exports stay stable",
        "Always run the exporter tests with the frozen clock",
    )
    decisions.accept(config, ledger, accepted.id)
    record_ = run_cycle(config, ledger, project=ACME)
    assert record_.status == "completed" and record_.stats.briefing_status == "pending"
    proposal = briefing.waiting_proposal(ledger)
    assert proposal is not None
    lowered = proposal.text.lower()
    assert [w for w in FORBIDDEN if w in lowered] == []
    # what may be said is said, each with its source
    assert "Run the exporter tests with a frozen clock — source: `projects/home-kim-acme/" in proposal.text
    assert (
        "- acme (/home/kim/acme): “Let's work on the invoice exporter for the finance team today please.” "
        f"— source: `{ACME}/{SESSION}.jsonl:1`" in proposal.text
    )
    assert_every_line_has_a_source_that_exists(config, proposal.text)
    assert {s["source"] for s in proposal.sources} == {
        line.rsplit("`", 2)[1] for line in bullets(proposal.text)
    }
    # accepted: the same words reach briefing.md, still none of the planted ones
    briefing.accept_briefing(config, ledger)
    written = (config.memory / "briefing.md").read_text()
    assert written == proposal.text and [w for w in FORBIDDEN if w in written.lower()] == []


def test_an_unanswered_last_request_is_an_open_thread_an_answered_one_is_not(
    config: Config, ledger: Ledger
) -> None:
    write_session(config, TURNS)  # ends with the person's request
    write_session(
        config,
        [
            *TURNS[:2],
            ("user", "Please rename the exporter module to invoices today."),
            ("assistant", "Renamed it; the tests pass."),
        ],
        session=OTHER,
    )
    run_cycle(config, ledger, project=ACME)
    text = briefing.waiting_proposal(ledger).text  # type: ignore[union-attr]
    threads = briefing.parse_sections(text)["To watch"]
    assert threads == [f"acme: unanswered: “{PERSON_LAST}” — source: `{ACME}/{SESSION}.jsonl:7`"]
    assert "rename the exporter" not in text


@pytest.mark.parametrize(
    "last",
    ["thanks, that's all for today", "Good night, talk tomorrow then", "ok great, looks fine to me now"],
)
def test_closing_words_are_no_open_thread(config: Config, ledger: Ledger, last: str) -> None:
    write_session(config, [*TURNS[:6], ("user", last)])
    run_cycle(config, ledger, project=ACME)
    text = briefing.waiting_proposal(ledger).text  # type: ignore[union-attr]
    assert briefing.parse_sections(text)["To watch"] == [] and last not in text


def edits(*files: str) -> list[dict[str, object]]:
    return [{"type": "text", "text": "Editing."}] + [
        {
            "type": "tool_use",
            "id": f"toolu_{i}",
            "name": "Edit",
            "input": {"file_path": f"/home/kim/acme/{name}", "old_string": "a", "new_string": "b"},
        }
        for i, name in enumerate(files)
    ]


def test_the_files_changed_are_part_of_the_projects_line(config: Config, ledger: Ledger) -> None:
    write_session(config, [*TURNS[:3], ("assistant", edits("src/exporter.py")), ("assistant", "Done.")])
    run_cycle(config, ledger, project=ACME)
    work = briefing.parse_sections(briefing.waiting_proposal(ledger).text)["The work"]  # type: ignore[union-attr]
    assert work == [
        "acme (/home/kim/acme): “Let's work on the invoice exporter for the finance team today please.” "
        f"· changed src/exporter.py — source: `{ACME}/{SESSION}.jsonl:1`"
    ]


def test_the_briefing_is_the_big_picture_not_an_activity_log(config: Config, ledger: Ledger) -> None:
    """Issue 24 point 7: one line per project (what it is, what was asked, what changed), not a line per
    session and per edited path; then what was decided and what to watch."""
    names = [f"src/module_{n}.py" for n in range(6)]
    write_session(config, [*TURNS[:3], ("assistant", edits(*names[:3])), ("assistant", "Done.")])
    later = [
        (
            "user",
            "Now make the exporter write CSV files for the auditors as well please, with one file per month.",
        ),
        ("assistant", edits(*names[3:])),
        ("assistant", "Done."),
    ]
    write_session(config, later, session=OTHER)
    run_cycle(config, ledger, project=ACME)
    text = briefing.waiting_proposal(ledger).text  # type: ignore[union-attr]
    sections = briefing.parse_sections(text)
    assert list(sections) == ["The work", "Decided", "To watch"]
    [line] = sections["The work"]
    assert line.startswith("acme (/home/kim/acme), 2 sessions: “")
    assert "“Let's work on the invoice exporter for the finance team today please.”" in line
    assert (
        "“Now make the exporter write CSV files for the auditors as well please, with one file per month.”"
        in line
    )
    assert "changed " in line and " and 2 more" in line
    assert "edited" not in text  # no line per path
    assert_every_line_has_a_source_that_exists(config, text)


def test_a_secret_in_a_request_is_redacted(config: Config, ledger: Ledger) -> None:
    key = "AKIA" + "QWERTYUIOPASDFGH"
    write_session(
        config, [*TURNS[:2], ("user", f"Please deploy it with the access key {key} to staging now.")]
    )
    run_cycle(config, ledger, project=ACME)
    text = briefing.waiting_proposal(ledger).text  # type: ignore[union-attr]
    assert key not in text and "[REDACTED:" in text


def test_session_lines_of_projects_not_read_this_time_are_kept_with_their_source(
    config: Config, ledger: Ledger
) -> None:
    write_session(config, TURNS)
    run_cycle(config, ledger, project=ACME)
    briefing.accept_briefing(config, ledger)
    write_session(config, TURNS, session=OTHER, project="-home-kim-shop")
    run_cycle(config, ledger, project="-home-kim-shop")
    text = briefing.waiting_proposal(ledger).text  # type: ignore[union-attr]
    assert f"`{ACME}/{SESSION}.jsonl:1`" in text and f"`-home-kim-shop/{OTHER}.jsonl:1`" in text


def test_old_unsourced_lines_are_never_carried_forward(config: Config, ledger: Ledger) -> None:
    briefing.write_briefing(
        config, ledger, "# Briefing\n\n## Blocked\n- Blocked: Waiting for results...\n", "old", {}
    )
    write_session(config, TURNS)
    run_cycle(config, ledger, project=ACME)
    text = briefing.waiting_proposal(ledger).text  # type: ignore[union-attr]
    assert "Waiting for results" not in text and "## Blocked" not in text


# -- review: accept, reject, supersede ----------------------------------------------------------------


def test_accept_is_one_commit_of_the_briefing_alone(config: Config, ledger: Ledger) -> None:
    write_session(config, TURNS)
    run_cycle(config, ledger, project=ACME)
    repo = git.Repo(config.memory)
    before = len(list(repo.iter_commits()))
    (config.memory / "staged.txt").write_text("mine\n")
    repo.git.add("staged.txt")  # a person's staged work is never swept in
    prop = briefing.accept_briefing(config, ledger)
    assert prop.status == "accepted" and prop.decided_by == "person" and prop.commit_sha
    assert len(list(repo.iter_commits())) == before + 1
    assert list(repo.head.commit.stats.files) == ["briefing.md"]
    assert "Dreamtui-Briefing: 1" in repo.head.commit.message
    assert "staged.txt" in repo.git.diff("--cached", "--name-only")
    with pytest.raises(BriefingError, match="no briefing waits for review"):
        briefing.accept_briefing(config, ledger)


def test_reject_keeps_the_version_and_its_reason_and_writes_nothing(config: Config, ledger: Ledger) -> None:
    write_session(config, TURNS)
    run_cycle(config, ledger, project=ACME)
    prop, reverted = briefing.reject_briefing(config, ledger, reason="  says too little  ")
    assert (prop.status, prop.reason, reverted) == ("rejected", "says too little", None)
    assert not (config.memory / "briefing.md").exists()
    assert briefing.waiting_proposal(ledger) is None
    with pytest.raises(
        BriefingError, match=r"briefing #1 does not wait for review: it is rejected \(says too little\)"
    ):
        briefing.accept_briefing(config, ledger, 1)


def test_a_newer_version_supersedes_the_waiting_one_and_an_unchanged_one_is_not_proposed(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session(config, TURNS)
    first = run_cycle(config, ledger, project=ACME)
    write_session(
        config,
        [
            (
                "user",
                "Let's fix the shop checkout page that double charges every customer "
                "twice when they press the button quickly.",
            )
        ],
        session=OTHER,
    )
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T23:00:00Z")
    second = run_cycle(config, ledger, project=ACME)
    p1 = briefing.get_proposal(ledger, first.stats.briefing_proposal)
    p2 = briefing.get_proposal(ledger, second.stats.briefing_proposal)
    assert (p1.status, p1.reason, p2.status) == ("superseded", f"superseded by #{p2.id}", "pending")  # type: ignore[union-attr]
    briefing.accept_briefing(config, ledger)
    sessions = [SessionSource(Digest(SESSION, ACME), ())]
    again = briefing.propose_briefing(config, ledger, sessions[:0], day="2026-03-12", project=ACME)
    assert again.status == "unchanged" and again.proposal is None
    assert len(briefing.list_proposals(ledger)) == 2


def test_a_persons_uncommitted_edit_is_never_overwritten_by_an_accept(config: Config, ledger: Ledger) -> None:
    briefing.write_briefing(config, ledger, "# Briefing\n", "first", {})
    write_session(config, TURNS)
    run_cycle(config, ledger, project=ACME)
    (config.memory / "briefing.md").write_text("# Briefing\n\n- my own note\n")
    with pytest.raises(Exception, match="briefing.md .*uncommitted changes"):
        briefing.accept_briefing(config, ledger)
    assert briefing.waiting_proposal(ledger).status == "pending"  # type: ignore[union-attr]
    assert "my own note" in (config.memory / "briefing.md").read_text()


# -- after promotion: written by itself, reviewable after the fact ------------------------------------


def test_auto_written_after_promotion_and_rejected_after_the_fact(config: Config, ledger: Ledger) -> None:
    briefing.write_briefing(config, ledger, "# Briefing\n\n- the version before\n", "before", {})
    write_session(config, TURNS)
    digest = Digest(
        SESSION,
        ACME,
        turns=[Turn("person", TURNS[0][1], str(config.transcripts / ACME / f"{SESSION}.jsonl"), 1)],
    )
    result = briefing.propose_briefing(
        config, ledger, [SessionSource(digest, ())], day="2026-03-10", project=ACME, auto=True
    )
    assert result.status == "auto-written" and result.commit
    repo = git.Repo(config.memory)
    assert "Dreamtui-Auto: yes" in repo.head.commit.message
    assert (config.memory / "briefing.md").read_text() == result.text
    waiting = briefing.waiting_proposal(ledger)
    assert waiting is not None and waiting.awaits_review and waiting.decided_by == "auto"
    assert "-- the version before" in "\n".join(briefing.diff_lines(config, waiting))
    prop, reverted = briefing.reject_briefing(config, ledger, reason="wrong project")
    assert prop.status == "rejected" and reverted
    assert (config.memory / "briefing.md").read_text() == "# Briefing\n\n- the version before\n"
    assert repo.head.commit.hexsha == reverted and list(repo.head.commit.stats.files) == ["briefing.md"]


def test_auto_written_and_kept_after_the_fact_makes_no_commit(config: Config, ledger: Ledger) -> None:
    write_session(config, TURNS)
    digest = Digest(
        SESSION,
        ACME,
        turns=[Turn("person", TURNS[0][1], str(config.transcripts / ACME / f"{SESSION}.jsonl"), 1)],
    )
    result = briefing.propose_briefing(
        config, ledger, [SessionSource(digest, ())], day="2026-03-10", auto=True
    )
    head = git.Repo(config.memory).head.commit.hexsha
    kept = briefing.accept_briefing(config, ledger)
    assert kept.id == result.proposal and kept.reviewed_at and kept.status == "accepted"
    assert git.Repo(config.memory).head.commit.hexsha == head
    assert briefing.waiting_proposal(ledger) is None


def test_a_cycle_under_an_active_promotion_writes_the_briefing_itself(config: Config, ledger: Ledger) -> None:
    # an extractor that proposes nothing: no auto-write runs (whose gate check would demote this
    # hand-made promotion), so REM sees the promotion active
    with ledger.write() as c:
        c.execute(
            "INSERT INTO promotions (extractor, model, status, approved_at) "
            "VALUES ('heuristic', NULL, 'approved', '2026-03-01T00:00:00Z')"
        )
    write_session(config, TURNS)
    nothing = (
        sys.executable,
        "-c",
        "import json, sys; json.load(sys.stdin); print(json.dumps({'candidates': []}))",
    )
    record_ = run_cycle(config.changed(extractor="command", command=nothing), ledger, project=ACME)
    assert record_.stats.briefing_status == "auto-written" and record_.stats.briefing_commit
    assert (config.memory / "briefing.md").is_file()
    log = subprocess.run(
        ["git", "-C", str(config.memory), "log", "--format=%B", "-1", "--", "briefing.md"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Dreamtui-Auto: yes" in log


# -- history ---------------------------------------------------------------------------------------


def test_history_lists_committed_versions(config: Config, ledger: Ledger) -> None:
    assert briefing.briefing_history(config) == []
    assert briefing.read_briefing(config) is None
    first = briefing.write_briefing(config, ledger, "# Briefing\n\n- one\n", "one", {})
    second = briefing.write_briefing(config, ledger, "# Briefing\n\n- two\n", "two", {})
    assert (
        briefing.write_briefing(config, ledger, "# Briefing\n\n- two\n", "same", {}) is None
    )  # unchanged: no commit
    assert [v.sha for v in briefing.briefing_history(config)] == [second, first]
    assert briefing.briefing_at(config, first) == "# Briefing\n\n- one\n"  # type: ignore[arg-type]


def test_clean_keeps_one_printable_line() -> None:
    assert briefing.clean("a\x1b[31mred\x1b[0m `x`\nb") == "ared 'x' b"
    assert len(briefing.clean("word " * 100)) <= briefing.ITEM_CHARS


@pytest.mark.usefixtures("git_home")
def test_briefing_refuses_to_overwrite_a_persons_edit(config: Config, ledger: Ledger) -> None:
    write_briefing(config, ledger, "# Briefing\n\n- one\n", "Briefing one", {"Dreamtui-Briefing": "1"})
    path = config.memory / "briefing.md"
    with path.open("a") as fh:
        fh.write("- my own note\n")
    before = porcelain(config.memory)
    with pytest.raises(MemoryRepoError, match="briefing.md .*uncommitted changes"):
        write_briefing(config, ledger, "# Briefing\n\n- two\n", "Briefing two", {"Dreamtui-Briefing": "2"})
    assert porcelain(config.memory) == before
