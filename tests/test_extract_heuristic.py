"""The offline heuristic extractor: what it finds, what it leaves alone, and its measured quality."""

from __future__ import annotations

from pathlib import Path

from fakes.labels import HOLDOUT_DIR, load_fixtures, score, score_corpus, tuned_fixtures
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamtui.core.extract import make_extractor
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.heuristic import MIN_QUOTE_WORDS, HeuristicExtractor
from dreamtui.core.models import Digest, Turn

# Floors set from the measured figures (docs/extractors.md), just below them so noise-free
# refactors pass and a real regression fails. Since round four every set here is tuned on; the blind
# figure is round4_holdout's, measured once by tests/bench/measure_heuristic.py and deliberately
# without a floor (a floor on it would invite tuning on it).
TUNED_PRECISION_FLOOR = 0.95     # measured 0.97 (72 of 74 candidates) on the 72 lessons of fixtures + round1/2
TUNED_RECALL_FLOOR = 0.97        # measured 1.00
HOLDOUT_PRECISION_FLOOR = 0.90   # measured 0.91 (10 of 11) on holdout/'s 10 lessons (tuned on since round four)
HOLDOUT_RECALL_FLOOR = 0.90      # measured 1.00
CORPUS_PRECISION_FLOOR = 0.75    # measured 0.77 (10 of 13) on ../shared/corpus (12 hand-labelled lessons)
CORPUS_RECALL_FLOOR = 0.80       # measured 0.83


def digest_of(*turns: tuple[str, str] | tuple[str, str, str], project: str = "-home-kim-shop") -> Digest:
    """A digest from ``(role, text[, kind])`` tuples."""
    built = [Turn(role=t[0], text=t[1], file="s.jsonl", line=i + 1, kind=t[2] if len(t) > 2 else "prompt")
             for i, t in enumerate(turns)]
    return Digest(session="s1", project=project, files=["s.jsonl"], turns=built)


def run(digest: Digest, memories: tuple[str, ...] = ()) -> list:
    return HeuristicExtractor().extract(digest, ExtractContext(project=digest.project, memories=memories)).candidates


def test_tuned_fixture_precision_and_recall_stay_above_floors() -> None:
    s = score(HeuristicExtractor(), tuned_fixtures())
    assert s.labels >= 40
    assert s.precision >= TUNED_PRECISION_FLOOR, s.false_positives
    assert s.recall >= TUNED_RECALL_FLOOR, s.misses


def test_holdout_precision_and_recall_stay_above_floors() -> None:
    s = score(HeuristicExtractor(), load_fixtures(HOLDOUT_DIR))
    assert s.labels >= 10
    assert s.precision >= HOLDOUT_PRECISION_FLOOR, s.false_positives
    assert s.recall >= HOLDOUT_RECALL_FLOOR, s.misses


def test_corpus_precision_and_recall_stay_above_floors(corpus: Path) -> None:
    s = score_corpus(HeuristicExtractor(), corpus)
    assert s.precision >= CORPUS_PRECISION_FLOOR, s.false_positives
    assert s.recall >= CORPUS_RECALL_FLOOR, s.misses


def test_a_correction_becomes_feedback_with_the_sentence_as_quote() -> None:
    text = "Looks fine. No, don't put the discount logic in the component. Thanks!"
    cands = run(digest_of(("person", text)))
    assert len(cands) == 1
    c = cands[0]
    assert c.quote == "No, don't put the discount logic in the component."
    assert c.quote in text
    assert c.type == "feedback"
    assert c.claim == "Don't put the discount logic in the component."
    assert c.extractor == "heuristic" and c.model is None and c.session == "s1"


def test_a_root_cause_from_the_assistant_is_a_project_fact() -> None:
    text = ("The build failed again. The root cause was that the cache key includes the commit SHA, "
            "so nothing is ever restored.")
    cands = run(digest_of(("assistant", text, "text")))
    assert [c.type for c in cands] == ["project"]
    assert cands[0].quote.startswith("The root cause was that")
    assert cands[0].scope == "-home-kim-shop"


def test_the_assistant_on_one_line_of_todays_diff_is_not_a_root_cause() -> None:
    cands = run(digest_of(
        ("person", "the build is broken again after your edit"),
        ("assistant", "I see the issue - line 170 has `main.py.oldscratch` which should be `main.py.old`."),
        ("assistant", "The root cause was that the lockfile pinned an old setuptools that cannot build wheels."),
    ))
    assert [c.quote for c in cands] == [
        "The root cause was that the lockfile pinned an old setuptools that cannot build wheels."]


def test_a_general_preference_is_global_and_a_code_specific_one_is_the_project() -> None:
    cands = run(digest_of(("person", "I prefer small commits with one logical change each."),
                          ("person", "I prefer that you call `cart_store.apply()` for every price change.")))
    assert [c.scope for c in cands] == ["global", "-home-kim-shop"]


def test_short_sentence_is_joined_with_its_neighbour_or_skipped() -> None:
    cands = run(digest_of(("person", "Never do that. It broke the staging database last week."),
                          ("person", "Stop it.")))
    assert len(cands) == 1
    assert cands[0].quote == "Never do that. It broke the staging database last week."
    assert all(len(c.quote.split()) >= MIN_QUOTE_WORDS for c in cands)


def test_chatter_with_trigger_words_is_not_a_lesson() -> None:
    digest = digest_of(
        ("person", "don't worry about the linter warnings in legacy, those are known"),
        ("person", "never mind the changelog for now, I'll write it myself"),
        ("person", "Thanks, that's great. Can you also check the deploy?"),
        ("assistant", "Let me run the tests to make sure nothing broke.", "text"),
        ("assistant", "I'll fix both issues by updating the timeline component.", "text"),
    )
    assert run(digest) == []


def test_code_blocks_and_tool_like_lines_are_ignored() -> None:
    text = ("Here is the log:\n```\nNever use this API in production, it is deprecated and unsafe\n```\n"
            "$ never-run-this --always-on forever and ever")
    assert run(digest_of(("person", text))) == []


def test_slash_commands_and_interrupts_are_not_read() -> None:
    digest = digest_of(("person", "/review never use mocks for the database layer here", "command"),
                       ("person", "[Request interrupted by user]", "interrupt"))
    assert run(digest) == []


def test_existing_memory_is_not_proposed_again() -> None:
    digest = digest_of(("person", "Please never commit directly to main, open a PR."))
    assert run(digest)
    assert run(digest, memories=("Please never commit directly to main, open a PR.",)) == []


def test_escape_codes_stay_in_the_quote_but_not_in_the_claim() -> None:
    text = "\x1b[31mNever\x1b[0m push to the release branch without a green CI run."
    cands = run(digest_of(("person", text)))
    assert len(cands) == 1
    assert cands[0].quote in text
    assert "\x1b" not in cands[0].claim


def test_plain_facts_and_decisions_without_trigger_words_become_candidates() -> None:
    digest = digest_of(
        ("person", "ok. the staging DB resets at midnight UTC."),
        ("person", "migrations run with `make migrate`. Thanks for checking."),
        ("person", "we tried Redis for this and it didn't work, stick with advisory locks"),
        ("person", "Right, the university template only works with biblatex."),
    )
    cands = run(digest)
    assert [c.quote for c in cands] == [
        "the staging DB resets at midnight UTC.",
        "migrations run with `make migrate`. Thanks for checking.",  # a short fact joins its neighbour
        "we tried Redis for this and it didn't work, stick with advisory locks",
        "Right, the university template only works with biblatex.",
    ]
    assert [c.type for c in cands] == ["project", "project", "feedback", "project"]
    assert all(c.scope == "-home-kim-shop" for c in cands)
    assert cands[0].claim == "The staging DB resets at midnight UTC."
    assert cands[3].claim == "The university template only works with biblatex."  # no "Right," in a memory
    assert "ask the person" in cands[0].how_to_apply and "Follow this" in cands[2].how_to_apply


def test_task_talk_and_reports_of_the_moment_are_not_plain_facts() -> None:
    digest = digest_of(
        ("person", "The build breaks now, can you look?"),
        ("person", "The snapshot tests are broken now btw"),
        ("person", "Keep going with 3.3 and 3.4 tomorrow, I need to sleep."),
        ("person", "Our users love the new search, great work."),
        ("person", "Keep the old screenshots, the designer might need them."),
        ("person", "Deploys are paused until the incident is closed."),
        ("person", "Can you add the field? The designs are in docs/checkout.png."),  # short, next to a question
        ("person", "Restore it."),
    )
    assert run(digest) == []


def test_the_assistant_s_cause_is_kept_but_not_its_narration_guesses_or_fix_reports() -> None:
    cause = ("The SPF record lost the `include:_spf.sendgrid.net` entry when the zone was migrated, "
             "so receiving servers reject our mail as unauthenticated.")
    digest = digest_of(
        ("assistant", cause + " I'll add it back.", "text"),
        ("assistant", "The function now returns early when the list is empty, so the crash is gone.", "text"),
        ("assistant", "The error message says the file was not found, so the path is probably wrong.", "text"),
        ("assistant", "The lint run failed on `cart.ts`, which I fixed by removing the unused import.", "text"),
        ("assistant", "Coverage is at 70% because the new tar code isn't tested yet.", "text"),
    )
    cands = run(digest)
    assert [c.quote for c in cands] == [cause]
    assert cands[0].type == "project"
    assert cands[0].claim.startswith("The SPF record lost")


def test_an_assistant_turn_gives_at_most_one_plain_cause() -> None:
    text = ("The index was dropped by migration 0042, which recreated the table without it. "
            "The test database runs Postgres 12, which doesn't support concurrent index creation here. "
            "Celery tasks are acknowledged before they run, so a worker crash loses the task.")
    cands = run(digest_of(("assistant", text, "text")))
    assert len(cands) == 1
    assert cands[0].quote.startswith("The index was dropped")


def test_a_status_before_a_colon_is_left_out_of_the_claim() -> None:
    text = "The staging deploy failed: the model registry rejected the artifact because its name has an uppercase letter."
    cands = run(digest_of(("assistant", text, "text")))
    assert [c.quote for c in cands] == [text]
    assert cands[0].claim == "The model registry rejected the artifact because its name has an uppercase letter."


def test_make_extractor_picks_heuristic_without_a_key(config) -> None:
    from dataclasses import replace

    assert isinstance(make_extractor(replace(config, extractor="auto")), HeuristicExtractor)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["person", "assistant"]),
                          st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400)
                          | st.sampled_from(["No, don't do that with [bold]rich[/bold] markup ever again please.",
                                             "\x1b]8;;http://x\x07never\x1b]8;;\x07 use eval on user input, ever",
                                             "The root cause was " + "x" * 5000 + ".",
                                             "always\n\n\nalways ☃ never ‮ reversed text here ok"])),
                max_size=6))
def test_never_crashes_and_every_quote_is_verbatim(turns: list[tuple[str, str]]) -> None:
    digest = digest_of(*turns)
    for c in run(digest):
        assert any(c.quote in t.text for t in digest.turns)
        assert len(c.quote.split()) >= MIN_QUOTE_WORDS
        assert c.type in ("feedback", "project")
