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

# Floors set from the measured figures (docs/extractors.md), a little below them so noise-free
# refactors pass and a real regression fails.
TUNED_PRECISION_FLOOR = 0.90     # measured 0.97 on the 72 labelled lessons the rules were tuned on
TUNED_RECALL_FLOOR = 0.72        # measured 0.79
HOLDOUT_PRECISION_FLOOR = 0.50   # measured 0.75 on 10 lessons written after the last tuning round
HOLDOUT_RECALL_FLOOR = 0.20      # measured 0.30
CORPUS_PRECISION_FLOOR = 0.60    # measured 0.70 on ../shared/corpus (12 hand-labelled lessons)
CORPUS_RECALL_FLOOR = 0.50       # measured 0.58


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
