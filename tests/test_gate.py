"""The gate: every path a proposal can take, stored in a real SQLite ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import LESSON_TURNS, write_records

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.gate.dedup import DUPLICATE, SUSPECT
from dreamtui.core.gate.pipeline import gate
from dreamtui.core.ledger import Ledger
from dreamtui.core.models import RawCandidate

TOKEN = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

PERSON_1 = "please remember: run the full test suite with pytest -q before every commit, no exceptions"
PERSON_2 = "we never force-push to main here; open a pull request and let CI run on it first"
PERSON_3 = f"for the deploy script export GITHUB_TOKEN={TOKEN} and then run make release from the repo root"
PERSON_4 = "the staging database is reset every night at 2am so never keep test data there overnight"
TOOL_OUT = "WARNING: the lockfile is out of date; run uv lock to refresh it before installing anything"


def line(rec: dict) -> bytes:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def user(uuid: str, text: str) -> dict:
    return {
        "type": "user",
        "uuid": uuid,
        "timestamp": "2026-03-01T10:00:00Z",
        "sessionId": "s1",
        "message": {"role": "user", "content": text},
    }


@pytest.fixture
def transcript(config: Config) -> Path:
    path = config.transcripts / "-proj" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    recs = [
        user("u1", PERSON_1),
        user("u2", PERSON_2),
        user("u3", PERSON_3),
        user("u4", PERSON_4),
        {
            "type": "user",
            "uuid": "t1",
            "timestamp": "2026-03-01T10:01:00Z",
            "toolUseResult": {"stdout": TOOL_OUT},
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "x", "content": TOOL_OUT}],
            },
        },
    ]
    path.write_bytes(b"".join(line(r) for r in recs))
    return path


def raw(
    claim: str, quote: str, *, session: str = "s1", type_: str = "feedback", why: str = "", how: str = ""
) -> RawCandidate:
    return RawCandidate(
        claim=claim,
        why=why,
        how_to_apply=how,
        type=type_,
        scope="global",
        quote=quote,
        session=session,
        extractor="heuristic",
    )


def run(config: Config, ledger: Ledger, transcript: Path, *raws: RawCandidate, cycle_id: int | None = None):
    return gate(
        list(raws), config=config, ledger=ledger, project="-proj", files=[transcript], cycle_id=cycle_id
    )


def write_memory(config: Config, rel: str, description: str, body: str) -> None:
    path = config.memory / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: x\ndescription: {description}\ntype: feedback\n---\n\n{body}\n", encoding="utf-8"
    )


def test_a_verified_new_lesson_is_kept_pending_with_evidence(config, ledger, transcript) -> None:
    report = run(
        config,
        ledger,
        transcript,
        raw(
            "Run the full pytest suite before every commit.",
            "run the full test suite with pytest -q before every commit",
        ),
        cycle_id=7,
    )
    assert [c.status for c in report.kept] == ["pending"]
    stored = ledger.get_candidate(report.kept[0].id)
    assert stored is not None and stored.status == "pending" and stored.cycle_id == 7
    assert stored.provenance == "person" and stored.matches[0].line == 1 and stored.matches[0].uuid == "u1"
    assert stored.transcript == str(transcript) and stored.project == "-proj"
    assert stored.duplicate_of is None and stored.secrets == []
    assert not report.dropped


@pytest.mark.parametrize(
    ("type_", "claim"),
    [("opinion", "Run tests before commit."), ("feedback", "   "), ("", "Run tests before commit.")],
)
def test_bad_fields_are_dropped_invalid(config, ledger, transcript, type_, claim) -> None:
    report = run(config, ledger, transcript, raw(claim, PERSON_1, type_=type_))
    assert report.kept == [] and report.dropped == {"invalid": 1}
    rows = ledger.list_candidates(status="dropped")
    assert [r.drop_reason for r in rows] == ["invalid"]


def test_invented_and_altered_quotes_are_dropped_and_counted(config, ledger, transcript) -> None:
    report = run(
        config,
        ledger,
        transcript,
        raw("Deploy on Fridays.", "we always deploy on fridays after lunch, it is the safest time"),
        raw("Force-push is fine.", "we always force-push to main here; open a pull request"),
        raw("Short.", "run the full test"),
    )
    assert report.kept == [] and report.dropped == {"unverified": 3} and report.invented == 3
    assert {c.drop_reason for c in ledger.list_candidates(status="dropped")} == {"unverified"}


def test_quote_from_tool_output_is_kept_with_tool_provenance(config, ledger, transcript) -> None:
    report = run(
        config,
        ledger,
        transcript,
        raw(
            "Run uv lock when the lockfile is stale.",
            "the lockfile is out of date; run uv lock to refresh it",
        ),
    )
    assert len(report.kept) == 1 and report.kept[0].provenance == "tool"


def test_secrets_are_flagged_and_never_stored_in_clear(config, ledger, transcript) -> None:
    report = run(
        config,
        ledger,
        transcript,
        raw(
            f"Export GITHUB_TOKEN={TOKEN} before running make release.",
            f"export GITHUB_TOKEN={TOKEN} and then run make release from the repo root",
            why=f"the release needs {TOKEN}",
            how=f"token is {TOKEN}",
        ),
    )
    assert len(report.kept) == 1 and report.flagged_secrets == 1
    cand = ledger.get_candidate(report.kept[0].id)
    assert cand is not None and cand.status == "pending"
    assert cand.secrets == ["github-token"]
    for text in (cand.claim, cand.why, cand.how_to_apply, cand.quote):
        assert TOKEN not in text and "[REDACTED:github-token]" in text
    assert cand.matches and cand.matches[0].uuid == "u3"  # verified against the clear transcript
    ledger.close()
    for f in config.state.iterdir():
        assert TOKEN.encode() not in f.read_bytes(), f.name


def test_duplicate_of_memory_one_level_down_is_dropped(config, ledger, transcript) -> None:
    write_memory(
        config,
        "projects/-proj/tests-before-commit.md",
        "Always run the whole pytest suite prior to committing changes.",
        "Run `pytest -q` on the full suite before every commit.",
    )
    report = run(
        config,
        ledger,
        transcript,
        raw("Run the full test suite with pytest -q before every commit.", PERSON_1),
    )
    assert report.kept == [] and report.dropped == {"duplicate": 1} and report.duplicates == 1
    (cand,) = ledger.list_candidates(status="dropped")
    assert cand.duplicate_kind == "memory" and cand.duplicate_of == "projects/-proj/tests-before-commit.md"
    assert cand.duplicate_score is not None and cand.duplicate_score >= DUPLICATE


def test_suspected_duplicate_is_kept_side_by_side(config, ledger, transcript) -> None:
    write_memory(
        config,
        "http-timeouts.md",
        "Set a timeout on every HTTP request; the default waits forever.",
        "requests without a timeout hang",
    )
    report = run(
        config,
        ledger,
        transcript,
        raw(
            "HTTP calls need an explicit timeout, because without one requests can hang indefinitely.",
            PERSON_4,
        ),
    )
    assert len(report.kept) == 1 and report.suspected_duplicates == 1
    cand = ledger.get_candidate(report.kept[0].id)
    assert (
        cand.status == "pending"
        and cand.duplicate_kind == "memory"
        and cand.duplicate_of == "http-timeouts.md"
    )
    assert SUSPECT <= cand.duplicate_score < DUPLICATE


def test_same_lesson_pending_from_another_session_corroborates(config, ledger, transcript) -> None:
    first = run(
        config, ledger, transcript, raw("Never force-push to main; open a pull request instead.", PERSON_2)
    )
    (pending,) = first.kept
    # another session (same words in its transcript) proposes the same lesson, reworded
    other = transcript.with_name("s2.jsonl")
    other.write_bytes(transcript.read_bytes())
    lesson = raw("Do not force-push to the main branch; open a pull request instead.", PERSON_2, session="s2")
    second = gate([lesson], config=config, ledger=ledger, project="-proj", files=[other])
    assert second.kept == [] and second.dropped == {"duplicate-pending": 1}
    assert second.corroborated == [pending.id]
    assert ledger.get_candidate(pending.id).corroborated == 1
    # the same session again does not corroborate twice
    again = raw("Don't force-push to main, open a pull request instead.", PERSON_2, session="s2")
    third = gate([again], config=config, ledger=ledger, project="-proj", files=[other])
    assert third.dropped == {"duplicate-pending": 1} and third.corroborated == []
    assert ledger.get_candidate(pending.id).corroborated == 1


def test_same_lesson_twice_in_one_batch_keeps_one(config, ledger, transcript) -> None:
    report = run(
        config,
        ledger,
        transcript,
        raw("Never force-push to main; open a pull request instead.", PERSON_2),
        raw("Do not force-push to the main branch, open a pull request instead.", PERSON_2),
    )
    assert len(report.kept) == 1 and report.dropped == {"duplicate-pending": 1} and report.corroborated == []


def test_rejected_lesson_is_not_proposed_again_without_new_evidence(config, ledger, transcript) -> None:
    (cand,) = run(
        config, ledger, transcript, raw("Never force-push to main; open a pull request instead.", PERSON_2)
    ).kept
    with ledger.write() as c:
        c.execute("UPDATE candidates SET status = 'rejected' WHERE id = ?", (cand.id,))
    same = run(
        config, ledger, transcript, raw("Do not force-push to the main branch; open a PR instead.", PERSON_2)
    )
    assert same.kept == [] and same.dropped == {"previously-rejected": 1}
    other = transcript.with_name("s2.jsonl")
    other.write_bytes(transcript.read_bytes())
    new = gate(
        [raw("Do not force-push to the main branch; open a PR instead.", PERSON_2, session="s2")],
        config=config,
        ledger=ledger,
        project="-proj",
        files=[other],
    )
    assert len(new.kept) == 1
    kept = ledger.get_candidate(new.kept[0].id)
    assert kept.duplicate_kind == "rejected" and kept.duplicate_of == cand.id and kept.status == "pending"


def test_gating_again_never_undoes_a_decision(config, ledger, transcript) -> None:
    lesson = raw("Run the full pytest suite before every commit.", PERSON_1)
    (cand,) = run(config, ledger, transcript, lesson).kept
    with ledger.write() as c:
        c.execute("UPDATE candidates SET status = 'accepted' WHERE id = ?", (cand.id,))
    report = run(config, ledger, transcript, lesson)
    assert report.kept == [] and report.dropped == {"already-decided": 1}
    assert ledger.get_candidate(cand.id).status == "accepted"


def test_odd_field_values_never_crash(config, ledger, transcript) -> None:
    weird = RawCandidate(
        claim=None,
        why=3,
        how_to_apply=None,
        type=None,
        scope=None,  # type: ignore[arg-type]
        quote=None,
        session=None,
        extractor=None,
    )  # type: ignore[arg-type]
    ansi = raw("\x1b[31mred\x1b[0m [bold]markup[/bold] \udcff lesson", PERSON_4)
    report = run(config, ledger, transcript, weird, ansi)
    assert report.dropped["invalid"] == 1
    assert sum(report.dropped.values()) + len(report.kept) == 2


def test_corroboration_can_be_left_to_the_caller(config, ledger, transcript) -> None:
    (pending,) = run(
        config, ledger, transcript, raw("Never force-push to main; open a pull request instead.", PERSON_2)
    ).kept
    other = transcript.with_name("s2.jsonl")
    other.write_bytes(transcript.read_bytes())
    report = gate(
        [raw("Do not force-push to the main branch; open a pull request instead.", PERSON_2, session="s2")],
        config=config,
        ledger=ledger,
        project="-proj",
        files=[other],
        corroborate=False,
    )
    assert report.dropped == {"duplicate-pending": 1} and report.corroborated == []
    assert ledger.get_candidate(pending.id).corroborated == 0
    (dropped,) = ledger.list_candidates(status="dropped")
    assert dropped.duplicate_of == pending.id and dropped.session == "s2"


@pytest.mark.usefixtures("git_home")
def test_a_prompt_with_a_lone_surrogate_escape_is_digested_verified_and_kept(
    config: Config, ledger: Ledger
) -> None:
    from dreamtui.core.dream.run import run_cycle
    from dreamtui.core.ingest.digest import digest_file

    text = (
        "No, never edit the generated files directly \udcff; always change the template instead because "
        "the generator overwrites them."
    )
    path = write_records(config.transcripts / "acme", [*LESSON_TURNS[:2], ("user", text)])
    digest = digest_file(path)
    assert digest.stats.malformed == 0
    assert [t.text for t in digest.turns if t.role == "person"][-1] == text.replace("\udcff", "\ufffd")
    result = CliRunner().invoke(cli, ["digest", "--json", str(path)])
    assert result.exit_code == 0, result.output
    assert "\ufffd" in json.loads(result.output)["turns"][-1]["text"]
    record = run_cycle(config, ledger, date="2026-03-10")
    assert record.stats.kept >= 1 and not record.stats.dropped.get("unverified")
    quotes = [r["quote"] for r in ledger.query("SELECT quote FROM candidates WHERE status = 'pending'")]
    assert any("\ufffd" in q for q in quotes)


def test_one_turn_yields_at_most_three_proposals_and_the_rest_are_counted(config, ledger, tmp_path) -> None:
    """A pasted rule set is a few lessons, not one per sentence: the fourth proposal quoting the same
    turn is dropped as ``same-turn`` (counted, stored, not queued); another turn is not affected."""
    rules = [
        "Every query must scope by the tenant id and check the user's membership first.",
        "Any create or update must record who did it and when it happened.",
        "Nothing dealer specific may be hardcoded in the code base at all.",
        "Stock imports must be idempotent so that the same input gives the same state.",
        "Background jobs use a plain cron route for now and no queues whatsoever.",
    ]
    path = config.transcripts / "-proj" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(line(user("u1", " ".join(rules))) + line(user("u2", PERSON_2)))
    raws = [raw(f"Rule {n}: {r}", r) for n, r in enumerate(rules)] + [
        raw("Never force-push to main.", PERSON_2)
    ]
    report = run(config, ledger, path, *raws)
    kept = [c.claim for c in report.kept]
    assert kept == [f"Rule {n}: {r}" for n, r in enumerate(rules[:3])] + ["Never force-push to main."]
    assert report.dropped["same-turn"] == 2
    dropped = ledger.list_candidates(status="dropped")
    assert sorted(c.drop_reason for c in dropped) == ["same-turn", "same-turn"]
