"""The offline heuristic extractor: what it finds, what it leaves alone, and its measured quality."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bench.measure_extract import run_session
from fakes.eval_set import Totals, load_sessions  # its roots are read at import, before the env is isolated
from fakes.labels import HOLDOUT_DIR, load_fixtures, score, score_corpus, tuned_fixtures
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamtui.core.extract import make_extractor
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.heuristic import (
    EVERY_MOMENT,
    MIN_CONFIDENCE,
    MIN_QUOTE_WORDS,
    HeuristicExtractor,
)
from dreamtui.core.models import Digest, Turn
from dreamtui.core.text import word_count

# Floors set from the measured figures (docs/extractors.md), just below them so noise-free
# refactors pass and a real regression fails. Since round four every set here is tuned on; the blind
# figure is round4_holdout's, measured once by tests/bench/measure_heuristic.py and deliberately
# without a floor (a floor on it would invite tuning on it).
TUNED_PRECISION_FLOOR = 0.95  # measured 0.97 (72 of 74 candidates) on the 72 lessons of fixtures + round1/2
TUNED_RECALL_FLOOR = 0.97  # measured 1.00
HOLDOUT_PRECISION_FLOOR = (
    0.90  # measured 0.91 (10 of 11) on holdout/'s 10 lessons (tuned on since round four)
)
HOLDOUT_RECALL_FLOOR = 0.90  # measured 1.00
# ../shared/corpus: 12 lessons labelled by an earlier round while looking at the rules. Round five (fewer,
# better) no longer proposes four of them, on purpose: a question (":21", "...should match the filters?"), a
# hedge (":46", "I think the library is setting it"), the assistant's diagnosis in progress (":250", "The
# issue is with how `uv tool install` is building the package"; ":48"/":60", "I see the issue - ...") and its
# narration (":51", "Need to activate the virtual environment"). The blind labels of the real evaluation set
# (tests/data/real_eval, sessions s01-s08) keep none of those.
CORPUS_PRECISION_FLOOR = 0.80  # measured 0.83 (5 of 6); was 0.77 (10 of 13)
CORPUS_RECALL_FLOOR = 0.40  # measured 0.42; was 0.83 against the old labels


def digest_of(*turns: tuple[str, str] | tuple[str, str, str], project: str = "-home-kim-shop") -> Digest:
    """A digest from ``(role, text[, kind])`` tuples."""
    built = [
        Turn(role=t[0], text=t[1], file="s.jsonl", line=i + 1, kind=t[2] if len(t) > 2 else "prompt")
        for i, t in enumerate(turns)
    ]
    return Digest(session="s1", project=project, files=["s.jsonl"], turns=built)


def run(digest: Digest, memories: tuple[str, ...] = (), threshold: int = EVERY_MOMENT) -> list:
    """What the rules find in ``digest``: every moment by default (the rules' own tests), or only those whose
    confidence reaches ``threshold`` (what the shipped extractor proposes: ``threshold=MIN_CONFIDENCE``)."""
    return (
        HeuristicExtractor(threshold)
        .extract(digest, ExtractContext(project=digest.project, memories=memories))
        .candidates
    )


# Round six (rules that generalise): the shipped extractor proposes only moments whose confidence reaches
# MIN_CONFIDENCE. The floors above hold for the rules themselves (every moment, EVERY_MOMENT); what the shipped
# extractor proposes on the same sets is held to its precision (measured: fixtures 0.97, 34 of 35; holdout
# 1.00, 2 of 2). Its recall there falls (0.47 and 0.20) on purpose: those sets are mostly the assistant's root
# causes and plain facts, which on real sessions were mostly noise (blind precision 0.25 in round five).
SHIPPED_FIXTURE_PRECISION_FLOOR = 0.95
SHIPPED_HOLDOUT_PRECISION_FLOOR = 0.90


def test_tuned_fixture_precision_and_recall_stay_above_floors() -> None:
    s = score(HeuristicExtractor(EVERY_MOMENT), tuned_fixtures())
    assert s.labels >= 40
    assert s.precision >= TUNED_PRECISION_FLOOR, s.false_positives
    assert s.recall >= TUNED_RECALL_FLOOR, s.misses
    shipped = score(HeuristicExtractor(), tuned_fixtures())
    assert shipped.precision >= SHIPPED_FIXTURE_PRECISION_FLOOR, shipped.false_positives
    assert 0 < shipped.candidates < s.candidates


def test_holdout_precision_and_recall_stay_above_floors() -> None:
    s = score(HeuristicExtractor(EVERY_MOMENT), load_fixtures(HOLDOUT_DIR))
    assert s.labels >= 10
    assert s.precision >= HOLDOUT_PRECISION_FLOOR, s.false_positives
    assert s.recall >= HOLDOUT_RECALL_FLOOR, s.misses
    shipped = score(HeuristicExtractor(), load_fixtures(HOLDOUT_DIR))
    assert shipped.precision >= SHIPPED_HOLDOUT_PRECISION_FLOOR, shipped.false_positives


def test_corpus_precision_and_recall_stay_above_floors(corpus: Path) -> None:
    # the rules themselves; at its threshold the shipped extractor proposes one moment here, the ClMail
    # correction, which these older labels leave out and the real evaluation set's labels grade marginal
    s = score_corpus(HeuristicExtractor(EVERY_MOMENT), corpus)
    assert s.precision >= CORPUS_PRECISION_FLOOR, s.false_positives
    assert s.recall >= CORPUS_RECALL_FLOOR, s.misses


# The real evaluation set's tuning split (tests/data/real_eval; transcripts in ../shared and ../eval, skipped
# when absent), scored by tests/bench/measure_extract.py through the real gate. Round five: 0.86 (18/21) /
# 0.30 (11/37), and on the blind split 0.25 / 0.10: its rules had learnt the tuning sessions' phrasing. Round
# six proposes only above MIN_CONFIDENCE: 1.00 (12/12) / 0.24 (9/37); tests/bench/crossval_heuristic.py
# shows why the threshold, and what each rule does on how many sessions.
REAL_TUNING_PRECISION_FLOOR = 0.90
REAL_TUNING_RECALL_FLOOR = 0.22


def test_real_tuning_split_precision_and_recall_stay_above_floors(tmp_path: Path) -> None:
    sessions = load_sessions("tuning")
    if len(sessions) < 20:
        pytest.skip("the real evaluation set's transcripts are not on this machine")
    totals = Totals()
    for session in sessions:
        totals.add(run_session(session, HeuristicExtractor(), tmp_path))
    assert totals.precision >= REAL_TUNING_PRECISION_FLOOR, (totals.precise, totals.kept)
    assert totals.keep_recall >= REAL_TUNING_RECALL_FLOOR, (totals.keep_found, totals.keep_labels)
    assert totals.duplicates <= 1


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
    text = (
        "The build failed again. The root cause was that the cache key includes the commit SHA, "
        "so nothing is ever restored."
    )
    cands = run(digest_of(("assistant", text, "text")))
    assert [c.type for c in cands] == ["project"]
    assert cands[0].quote.startswith("The root cause was that")
    assert cands[0].scope == "-home-kim-shop"


def test_the_assistant_on_one_line_of_todays_diff_is_not_a_root_cause() -> None:
    cands = run(
        digest_of(
            ("person", "the build is broken again after your edit"),
            (
                "assistant",
                "I see the issue - line 170 has `main.py.oldscratch` which should be `main.py.old`.",
            ),
            (
                "assistant",
                "The root cause was that the lockfile pinned an old setuptools that cannot build wheels.",
            ),
        )
    )
    assert [c.quote for c in cands] == [
        "The root cause was that the lockfile pinned an old setuptools that cannot build wheels."
    ]


def test_a_general_preference_is_global_and_a_code_specific_one_is_the_project() -> None:
    cands = run(
        digest_of(
            ("person", "I prefer small commits with one logical change each."),
            ("person", "I prefer that you call `cart_store.apply()` for every price change."),
        )
    )
    assert [c.scope for c in cands] == ["global", "-home-kim-shop"]


def test_short_sentence_is_joined_with_its_neighbour_or_skipped() -> None:
    cands = run(
        digest_of(
            ("person", "Never do that. It broke the staging database last week."), ("person", "Stop it.")
        )
    )
    assert len(cands) == 1
    assert cands[0].quote == "Never do that. It broke the staging database last week."
    assert all(word_count(c.quote) >= MIN_QUOTE_WORDS for c in cands)


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
    text = (
        "Here is the log:\n```\nNever use this API in production, it is deprecated and unsafe\n```\n"
        "$ never-run-this --always-on forever and ever"
    )
    assert run(digest_of(("person", text))) == []


def test_slash_commands_and_interrupts_are_not_read() -> None:
    digest = digest_of(
        ("person", "/review never use mocks for the database layer here", "command"),
        ("person", "[Request interrupted by user]", "interrupt"),
    )
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
        (
            "person",
            "Can you add the field? The designs are in docs/checkout.png.",
        ),  # short, next to a question
        ("person", "Restore it."),
    )
    assert run(digest) == []


def test_the_assistant_s_cause_is_kept_but_not_its_narration_guesses_or_fix_reports() -> None:
    cause = (
        "The SPF record lost the `include:_spf.sendgrid.net` entry when the zone was migrated, "
        "so receiving servers reject our mail as unauthenticated."
    )
    digest = digest_of(
        ("assistant", cause + " I'll add it back.", "text"),
        ("assistant", "The function now returns early when the list is empty, so the crash is gone.", "text"),
        (
            "assistant",
            "The error message says the file was not found, so the path is probably wrong.",
            "text",
        ),
        (
            "assistant",
            "The lint run failed on `cart.ts`, which I fixed by removing the unused import.",
            "text",
        ),
        ("assistant", "Coverage is at 70% because the new tar code isn't tested yet.", "text"),
    )
    cands = run(digest)
    assert [c.quote for c in cands] == [cause]
    assert cands[0].type == "project"
    assert cands[0].claim.startswith("The SPF record lost")


def test_an_assistant_turn_gives_at_most_one_plain_cause() -> None:
    text = (
        "The index was dropped by migration 0042, which recreated the table without it. "
        "The test database runs Postgres 12, which doesn't support concurrent index creation here. "
        "Celery tasks are acknowledged before they run, so a worker crash loses the task."
    )
    cands = run(digest_of(("assistant", text, "text")))
    assert len(cands) == 1
    assert cands[0].quote.startswith("The index was dropped")


def test_a_status_before_a_colon_is_left_out_of_the_claim() -> None:
    text = "The staging deploy failed: the model registry rejected the artifact because its name has an uppercase letter."
    cands = run(digest_of(("assistant", text, "text")))
    assert [c.quote for c in cands] == [text]
    assert (
        cands[0].claim == "The model registry rejected the artifact because its name has an uppercase letter."
    )


def test_make_extractor_picks_heuristic_without_a_key(config) -> None:

    assert isinstance(make_extractor(config.changed(extractor="auto")), HeuristicExtractor)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["person", "assistant"]),
            st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400)
            | st.sampled_from(
                [
                    "No, don't do that with [bold]rich[/bold] markup ever again please.",
                    "\x1b]8;;http://x\x07never\x1b]8;;\x07 use eval on user input, ever",
                    "The root cause was " + "x" * 5000 + ".",
                    "always\n\n\nalways ☃ never ‮ reversed text here ok",
                ]
            ),
        ),
        max_size=6,
    )
)
def test_never_crashes_and_every_quote_is_verbatim(turns: list[tuple[str, str]]) -> None:
    digest = digest_of(*turns)
    for c in run(digest):
        assert any(c.quote in t.text for t in digest.turns)
        assert word_count(c.quote) >= MIN_QUOTE_WORDS
        assert c.type in ("feedback", "project")


# -- round five: fewer, better (defects found on the real, blind-labelled evaluation set) ---------------
# Each test quotes real text: the sessions of ../shared/corpus (s01-s08 of tests/data/real_eval) or the
# tuning split of the real evaluation set (r03, r04, r11, r16, r21, n31, n08).


def test_the_assistant_narrating_a_transient_state_is_not_a_lesson() -> None:
    digest = digest_of(
        # r04: a state of this session's files, announced with "I see the issue!"
        (
            "assistant",
            "I see the issue! The environment variables are missing, which is preventing the frontend "
            "from connecting to Convex.",
            "text",
        ),
        # s02: a diagnosis in progress
        (
            "assistant",
            "The issue is with how `uv tool install` is building the package. Let me check the build.",
            "text",
        ),
        # n31: a guess
        (
            "assistant",
            "The issue is likely that the `clients` table relationship isn't being resolved.",
            "text",
        ),
        ("assistant", "Ah, I see! The files are actually in the build directory, not in src.", "text"),
        (
            "assistant",
            "The issue is the test JSONL doesn't include uuid fields, so the parser skips every line.",
            "text",
        ),
        # s08: a finding about how a library behaves, which is kept
        (
            "assistant",
            "Interesting! tarfile strips the trailing slash from directory names when reading back.",
            "text",
        ),
    )
    assert [c.claim for c in run(digest)] == [
        "Tarfile strips the trailing slash from directory names when reading back."
    ]


def test_a_one_off_task_instruction_is_not_kept_as_a_standing_rule() -> None:
    digest = digest_of(
        ("person", "add an sqlite database to stock all the data"),  # r16
        (
            "person",
            "New feature: we support .zip, but I've seen an archive that contains embedded tar.gz. "
            "We should support those (.tar, .tar.gz) as well, in a similar way to the .zip embedded "
            "archives.",
        ),  # s08
        ("person", "tansfer family size into isalone, make a new col"),  # r21
        ("person", "we want a real test, not at rivial test"),  # r11: a standing rule
    )
    assert [c.quote for c in run(digest)] == ["we want a real test, not at rivial test"]


def test_a_question_is_never_filed_as_a_fact() -> None:
    digest = digest_of(
        # s01: a correction asked as a question
        (
            "person",
            "I don't think we need to loop through all items, the group names should match the filters?",
        ),
        ("person", "will the old magic link still work or do i need to send a new one"),  # n31: no "?"
        ("person", "i mean, what do you think we should do about the test"),  # r11
        ("person", "qwen3.5-0.8b是bf16的模型吗"),  # n08
    )
    assert run(digest) == []


def test_documentation_pasted_into_a_prompt_is_not_the_person_s_feedback() -> None:
    pasted = (
        "Tools are Python packages that provide command-line interfaces.\n\n"
        "However, there are a couple notable differences when using uv's tool interface:\n\n"
        "The --with option is not needed — the required package is inferred from the command name.\n"
        "The temporary environment is cached in a dedicated location.\n"
        "The --no-project flag is not needed — tools are always run isolated from the project.\n"
        "Tools should always be installed with uv tool install, never with pip.\n"
    )
    text = (
        "We need to find a cleaner way to reinstall without manually going hunting for cached files. "
        "Does this doc page help?\n\n" + pasted * 3
    )  # s02, line 260
    assert [c.quote for c in run(digest_of(("person", text)))] == [
        "We need to find a cleaner way to reinstall without manually going hunting for cached files."
    ]


def test_a_claim_keeps_its_negation_and_its_meaning() -> None:
    cands = run(
        digest_of(
            (
                "person",
                "No mocks for the database in the test suite please, they hid a broken migration last month.",
            ),
            ("person", "Nope, never run the migrations against prod from a laptop."),
            (
                "person",
                "do not reinit task-master, we don't want to lose the history of tasks we have worked on",
            ),
        )
    )  # r03
    claims = [c.claim for c in cands]
    assert claims[0].startswith("No mocks for the database in the test suite")
    assert claims[1] == "Never run the migrations against prod from a laptop."
    assert claims[2].startswith("Do not reinit task-master, we don't want to lose")


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["", "No, ", "Nope. ", "Please ", "Honestly, ", "ok ", "Also, "]),
    st.sampled_from(
        [
            "No mocks for the database in the test suite",
            "Never push to main without a review",
            "Don't put the pricing logic in the component",
            "We don't deploy on Fridays, ever",
            "Do not use the staging bucket for anything customer-facing",
            "Nothing under vendor/ is ever edited by hand",
            "Avoid any global state in the parser",
        ]
    ),
    st.sampled_from([".", " please.", ", it broke the build twice.", "?", "!"]),
)
def test_no_claim_drops_a_negation_or_answers_a_question(lead: str, body: str, end: str) -> None:
    negation = re.compile(
        r"\b(?:not|no|never|none|nothing|nobody|nowhere|neither|nor|without|cannot|dont|doesnt|"
        r"didnt|wont|cant|isnt|arent|shouldnt)\b|n't\b|n’t\b",
        re.IGNORECASE,
    )
    text = lead + body + end
    for c in run(digest_of(("person", text))):
        assert not c.quote.rstrip().endswith("?")
        assert len(negation.findall(c.claim)) >= len(negation.findall(body))


def test_one_record_gives_at_most_one_proposal() -> None:
    text = (
        "In terms of todo, I remind you the main directive that we rely on task-master, not in a file. "
        "Since we have only a wish list, we should first create two tasks in task master: 1. review the "
        "list of future development, 2. create a PRD for the implementation."
    )  # r03, line 20
    cands = run(digest_of(("person", text)))
    assert [c.quote for c in cands] == [
        "In terms of todo, I remind you the main directive that we rely on task-master, not in a file."
    ]


def test_why_says_only_what_the_transcript_shows_and_how_names_the_project() -> None:
    turns = [
        Turn(
            role="person",
            text="Please never commit directly to main, open a PR.",
            file="s.jsonl",
            line=7,
            kind="prompt",
        ),
        Turn(
            role="person",
            text="The staging DB resets at midnight UTC, every night.",
            file="s.jsonl",
            line=9,
            kind="prompt",
        ),
        Turn(
            role="assistant",
            text="It turned out that `pg_dump` 16 writes a format the version 14 `pg_restore` can't read.",
            file="s.jsonl",
            line=12,
            kind="text",
        ),
    ]
    digest = Digest(
        session="s1",
        project="-home-kim-src-dreamboard-web",
        files=["s.jsonl"],
        turns=turns,
        cwd="/home/kim/src/dreamboard-web",
    )
    cands = run(digest)
    assert len(cands) == 3
    for c in cands:
        assert "standing" not in c.why and "as a fact" not in c.why
        assert "dreamboard-web" in c.how_to_apply and "-home-kim" not in c.how_to_apply
    assert cands[0].why == 'The person told the assistant this at line 7 ("never").'
    assert cands[1].why == 'The person said this about the project at line 9 ("every").'
    assert "line 12" in cands[2].why and "assistant" in cands[2].why


def test_rules_in_other_languages_are_found_and_promises_are_not() -> None:
    rule = (
        "Без моего подтверждения ты не удаляешь файлы, не отправляешь сообщения, не выходишь за пределы "
        "рабочей папки ai-lessons."
    )  # n29, line 15
    digest = digest_of(
        ("person", "Меня зовут Лиза. Обращайся ко мне Лиза. Я являюсь менеджером проектов.\n" + rule),
        # n35: an assistant's answer pasted into the prompt ("…I will never touch it"), a promise, not a rule
        ("person", "하지만 시스템의 심장(Master Key)은 절대 건드리지 않고 Kim님의 손에 들려드릴 것입니다."),
        ("person", "Nunca faça push direto na main, sempre abra um PR antes."),
    )
    cands = run(digest)
    assert [c.quote for c in cands] == [rule, "Nunca faça push direto na main, sempre abra um PR antes."]
    assert cands[0].claim == rule and cands[0].type == "feedback"


# -- round six: a confidence per moment, and a threshold ------------------------------------------------


def shipped(*turns: tuple[str, str] | tuple[str, str, str]) -> list[str]:
    """The quotes the shipped extractor (its default threshold) proposes for these turns."""
    return [c.quote for c in run(digest_of(*turns), threshold=MIN_CONFIDENCE)]


def test_a_standing_rule_or_correction_in_any_language_reaches_the_queue() -> None:
    rules = [
        "From now on, never push to main without running the linter first.",
        "No, don't mock the database in these tests, we got burned by that before.",
        "I told you, we rely on the Makefile targets, not on raw docker commands.",
        "Make sure every migration has a matching down step.",
        "Без моего подтверждения ты не удаляешь файлы и не отправляешь сообщения.",
        "我不希望创建项目级别的配置文件，我希望配置在每个项目中都可以使用",
    ]
    for text in rules:
        assert shipped(("person", text)) == [text], text


def test_the_assistant_s_finding_and_a_person_s_plain_remark_wait_below_the_threshold() -> None:
    # the rules find both, but neither carries a signal a reviewer could trust on unseen sessions
    turns = (
        (
            "assistant",
            "The root cause was that the lockfile pinned an old setuptools that cannot build wheels.",
            "text",
        ),
        ("person", "The staging database resets every night at midnight UTC."),
    )
    assert len(run(digest_of(*turns))) == 2
    assert shipped(*turns) == []


def test_a_request_for_help_or_a_one_off_task_is_not_proposed_whatever_its_words() -> None:
    for text in (
        "Hey Claude, I'd like your help with refactoring the filter so that we hide the group instead "
        "of every item.",
        "Ты помогаешь мне составить файл правил, который я всегда кладу в папку проекта.",
        "Please add a retry to the upload step so that it always succeeds.",
    ):
        assert shipped(("person", text)) == [], text


def test_confidence_counts_scope_correction_reason_and_repetition_and_hedges_count_against() -> None:
    from dreamtui.core.extract.heuristic import confidence

    def conf(text: str, role: str = "person", repeated: bool = False) -> int:
        return confidence(
            text, "preference", Turn(role=role, text=text, file="s.jsonl", line=1), repeated=repeated
        )[0]

    plain = conf("Use the staging bucket for uploads.")
    assert conf("Always use the staging bucket for uploads.") > plain
    assert conf("No, don't use the staging bucket for uploads.") > plain
    assert conf("Use the staging bucket for uploads, otherwise the CDN caches them.") > plain
    # round seven: a sentence said again in another turn counts against (mostly a template pasted each turn)
    assert conf("Use the staging bucket for uploads.", repeated=True) < plain
    assert conf("Maybe always use the staging bucket for uploads.") < conf(
        "Always use the staging bucket for uploads."
    )
    # the same words from the assistant are never as sure as from the person
    assert conf("Always use the staging bucket for uploads.", role="assistant") < MIN_CONFIDENCE


def test_a_rule_the_person_repeats_in_another_turn_counts_as_repeated() -> None:
    from dreamtui.core.extract.heuristic import EVERY_MOMENT as every

    d = digest_of(
        (
            "person",
            "Keep the release notes in CHANGELOG.md under the version heading, "
            "otherwise the release script misses them.",
        ),
        ("assistant", "Done.", "text"),
        ("person", "Again: the release notes go in CHANGELOG.md under the version heading."),
    )
    moments = HeuristicExtractor(every).scored(d, ExtractContext(project=d.project))
    assert moments and any("repeated-2" in m.signals for m in moments)


# -- round seven: precision first (issue 21 item 6) --------------------------------------------------------


def test_a_notice_pasted_into_every_turn_is_not_proposed_but_the_same_rule_said_once_is() -> None:
    # real sessions carry templates the person's client pastes each turn (a plan-mode notice, a task list's
    # instructions); on tuning + blind every sentence said again in another turn was noise (0 of 6)
    notice = "Do not edit the generated plan file itself, write your changes in the chat."
    once = digest_of(("person", notice))
    assert shipped(("person", notice)) == [notice]
    assert [c.quote for c in run(once, threshold=MIN_CONFIDENCE)] == [notice]
    pasted = (
        ("person", notice),
        ("assistant", "Understood.", "text"),
        ("person", f"Fix the login form. {notice}"),
        ("assistant", "Done.", "text"),
        ("person", f"Now the signup form. {notice}"),
    )
    assert shipped(*pasted) == []


def test_a_sentence_opening_with_a_question_word_asks_even_without_a_question_mark() -> None:
    assert shipped(("person", "how to make sure all the values are loaded from the config")) == []
    assert shipped(("person", "Make sure all the values are loaded from the config at start-up.")) == [
        "Make sure all the values are loaded from the config at start-up."
    ]


# What people say to an agent in any session that is not a lesson (a reviewer rejects each at once): the
# moment ("yet", "until I have reviewed", "this file", "that approach"), a complaint with no content, a
# deferral, a bug report with "every time", a past "never", a reminder of a task.
EVERYDAY_NOT_LESSONS = [
    "No, I meant the other file, the one in src/components.",
    "Don't change anything yet, just explain the plan.",
    "Stop, you are editing the wrong file.",
    "Don't forget to update the changelog.",
    "Please don't make changes to the database schema in this PR.",
    "That's wrong, the endpoint is /api/v2/users.",
    "No, that's not what I asked for.",
    "Don't do that again.",
    "Whenever you're ready, go ahead and deploy it.",
    "Let's do that next time, it is late.",
    "Always the same error when I click save.",
    "Don't run it, I'll run it myself later.",
    "Do not push until I have reviewed the diff.",
    "No, use the other branch instead of this one.",
    "You should never have deleted that file without asking.",
    "Every time I run the build it fails with a segfault.",
    "Don't use that approach, it is too slow for this table.",
    "I never said to remove the header component from the page.",
    "Do it, dont just tell me what to do.",
    "不要改这个文件，先看看日志。",
    "Never use that, it's deprecated.",
    "I don't want to break anything in the checkout flow.",
    "别的文件先不用管，继续修这个问题。",
    "절대 경로를 사용해서 파일을 열어 주세요.",
]
# ...and standing rules in the shapes the labelling guide names, which must still reach the queue.
EVERYDAY_LESSONS = [
    "Please never force-push to the shared branches, other people build on them.",
    "We deploy from the release branch only, never from main.",
    "Don't add new dependencies without asking me first.",
    "I prefer small functions with docstrings over long scripts.",
    "We tried SQLite for the queue and it locked up under load, so stick with Postgres.",
    "Stop adding comments that restate the code.",
    "I don't want emojis in the UI text.",
    "Use uv, not pip, in this repo.",
    "Never log the request bodies, they contain personal data.",
    "I'd rather you ask than guess when a requirement is unclear.",
    "Prefer composition over inheritance in the service layer.",
]


@pytest.mark.parametrize("text", EVERYDAY_NOT_LESSONS)
def test_everyday_remarks_to_the_agent_do_not_reach_the_queue(text: str) -> None:
    assert shipped(("person", text)) == []


@pytest.mark.parametrize("text", EVERYDAY_LESSONS)
def test_standing_rules_in_the_guide_s_shapes_reach_the_queue(text: str) -> None:
    assert shipped(("person", text)) == [text]
