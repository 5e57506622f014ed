"""The extraction scorer (tests/bench/measure_extract.py) and the recorded model answers it replays.

The scorer decides the README's quality figures, so its matching rule is tested here; the recorded
answers of the shipped prompt are replayed through the real SDK against the local fake API on the
sessions of ../shared (skipped when ../shared is absent).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropic, Reply, error, message
from fakes.eval_set import (
    RECORDED,
    Label,
    Proposal,
    load_recorded,
    load_sessions,
    match_score,
    request_key,
    score_session,
)

from dreamtui.core.config import Config
from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.prompt import PROMPT_VERSION
from dreamtui.core.gate.pipeline import gate
from dreamtui.core.ingest.digest import digest_session
from dreamtui.core.ledger import Ledger

MOCKS = Label(
    claim="Do not mock the database in integration tests; use the docker fixture.",
    grade="keep",
    quote="No mocks for the database in the test suite please",
    line=12,
    file="s.jsonl",
    speaker="person",
)
PNPM = Label(
    claim="Use pnpm, not npm, in this repository.",
    grade="marginal",
    quote="use pnpm here not npm",
    line=30,
    file="s.jsonl",
    speaker="person",
)


def proposal(claim: str, quote: str = "", line: int | None = None) -> Proposal:
    return Proposal(claim=claim, quote=quote, line=line, file="s.jsonl", kept=True)


def test_a_proposal_from_the_labelled_record_with_shared_words_matches() -> None:
    p = proposal(
        "Never mock the database in the test suite.", "No mocks for the database in the test suite please", 12
    )
    assert match_score(p, MOCKS) > 1


def test_the_same_lesson_in_other_words_matches_from_anywhere_but_another_lesson_does_not() -> None:
    assert (
        match_score(
            proposal("Integration tests must not mock the database: use the docker fixture.", line=99), MOCKS
        )
        > 0
    )
    assert match_score(proposal("Run the formatter before every commit.", line=12), MOCKS) == 0
    assert match_score(proposal("Use pnpm, not npm.", line=12), MOCKS) == 0


def test_each_label_is_found_once_and_a_second_proposal_of_it_is_a_duplicate() -> None:
    props = [
        proposal("Do not mock the database in integration tests.", MOCKS.quote, 12),
        proposal("Never mock the database in the integration tests; use docker.", "the docker fixture", 13),
        proposal("The build is slow today.", "the build is slow today again and again", 40),
    ]
    s = score_session("x", props, [MOCKS, PNPM], proposed=4, verified=3)
    assert (s.kept, s.precise, s.duplicates, s.keep_found, s.keep_labels) == (3, 1, 1, 1, 1)
    assert s.noise == [props[1].claim, props[2].claim]
    assert s.missed == []


def test_a_marginal_lesson_counts_for_precision_not_keep_recall() -> None:
    s = score_session(
        "x",
        [proposal("Use pnpm rather than npm in this repository.", "use pnpm here not npm", 30)],
        [MOCKS, PNPM],
        proposed=1,
        verified=1,
    )
    assert (s.precise, s.keep_found, s.marginal_found) == (1, 0, 1)
    assert s.missed == [MOCKS.claim]


def _replay(answers: dict[str, str]) -> tuple[FakeAnthropic, AnthropicExtractor]:
    fake = FakeAnthropic()

    def respond(body: dict) -> Reply:
        text = answers.get(request_key(body))
        if text is None:
            return error(
                400, "invalid_request_error", "no recorded answer for this request", retry_after_ms=None
            )
        return Reply(200, message(text))

    fake.responder = respond
    return fake, AnthropicExtractor(
        model="claude-sonnet-5-5", api_key="recorded", base_url=fake.url, max_retries=0
    )


def test_recorded_answers_of_the_shipped_prompt_replay_through_the_sdk_and_their_quotes_verify(
    corpus: Path, tmp_path: Path
) -> None:
    """Every ../shared session has a recorded answer to exactly what the shipped prompt sends (a changed
    prompt without new recordings fails here), and what the gate keeps of them is what the recording said."""
    sessions = [s for s in load_sessions("tuning") if s.root == "shared"]
    assert len(sessions) == 8
    answers = load_recorded(PROMPT_VERSION) if (RECORDED / PROMPT_VERSION).is_dir() else {}
    lister = AnthropicExtractor(model="claude-sonnet-5-5", client=object())
    missing = [
        f"{s.id}.{k}"
        for s in sessions
        for digest in [digest_session(s.files)]
        for k, body in enumerate(lister.request_bodies(digest, ExtractContext(project=digest.project)), 1)
        if request_key(body) not in answers
    ]
    if missing:
        pytest.fail(
            f"prompt {PROMPT_VERSION} (dreamtui/core/extract/prompt.py) sends {len(missing)} request(s) with no "
            f"recorded answer in tests/data/real_eval/recorded/{PROMPT_VERSION}/: {', '.join(missing)}. "
            "The prompt or the user message changed since the recordings were made, so the old ones no "
            "longer match. To record: `python3 tests/bench/eval_prepare.py requests "
            f"{PROMPT_VERSION} DIR`, have a helper session given exactly each DIR/<id>.<k>.txt answer it "
            f"into ANSWERS/<id>.<k>.json, then `python3 tests/bench/eval_prepare.py collect {PROMPT_VERSION} "
            "ANSWERS DIR`. Never edit a recording by hand.",
            pytrace=False,
        )
    fake, extractor = _replay(answers)
    proposed = verified = 0
    with fake:
        for s in sessions:
            digest = digest_session(s.files)
            before = len(fake.calls())
            result = extractor.extract(digest, ExtractContext(project=digest.project))
            recorded = [
                c
                for call in fake.calls()[before:]
                for c in json.loads(answers[request_key(call.body)])["candidates"]
            ]
            assert [c.claim for c in result.candidates] == [c["claim"] for c in recorded]
            config = Config(
                transcripts=tmp_path,
                memory=tmp_path / s.id / "m",
                state=tmp_path / s.id / "st",
                extractor="anthropic",
                dedup_judge="off",
            )
            ledger = Ledger.open(config.state)
            try:
                report = gate(
                    result.candidates,
                    config=config,
                    ledger=ledger,
                    project=digest.project,
                    files=s.files,
                    judge=None,
                )
            finally:
                ledger.close()
            proposed += len(result.candidates)
            verified += len(result.candidates) - report.dropped.get("unverified", 0)
            assert all(c.provenance in ("person", "assistant") for c in report.kept)
    assert proposed > 0 and verified / proposed >= 0.95


def test_the_dedup_judges_recorded_answers_replay_through_the_sdk_on_the_blind_dedup_set(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's prompt is what was recorded (a changed prompt leaves items unanswered and fails here),
    and with the model's answers the gate flags reworded duplicates and clears distinct lessons."""
    import importlib.util

    (tmp_path / "none.toml").touch()  # an empty config (a missing one named is an error)
    monkeypatch.setenv("DREAMTUI_CONFIG", str(tmp_path / "none.toml"))
    spec = importlib.util.spec_from_file_location(
        "measure_dedup_judge", Path(__file__).parent / "bench" / "measure_dedup_judge.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--set", "heldout3", "--recorded", "judge-v1"]) == 0
    out = capsys.readouterr().out
    assert "unanswered" not in out
    judged = next(line for line in out.splitlines() if "lexical + judge" in line)
    recall = float(judged.split("recall")[1].split("%")[0])
    false_pos = float(judged.split("fp(any)")[1].split("%")[0])
    assert recall >= 90.0 and false_pos <= 5.0, judged


def test_quotes_in_any_script_match_the_labelled_quote() -> None:
    said = "我不希望创建项目级别的MCP配置文件，我希望的是MCP文件是用户级别的"
    label = Label(
        claim="Keep MCP servers configured at user level, not per project.",
        grade="keep",
        quote=said,
        line=7,
        file="s.jsonl",
        speaker="person",
    )
    assert match_score(proposal("MCP configuration belongs at user level.", said[:20], 7), label) > 1
    russian = Label(
        claim="Never delete files without Liza's confirmation.",
        grade="keep",
        quote="Нельзя удалять файлы без подтверждения",
        line=3,
        file="s.jsonl",
        speaker="person",
    )
    assert (
        match_score(
            proposal("Ask before deleting files.", "Нельзя удалять файлы без подтверждения", 3), russian
        )
        > 1
    )
    assert (
        match_score(proposal("Write the report as a table.", "Пиши отчёт в таблице каждый день", 4), russian)
        == 0
    )
