"""extract_many: bounded parallelism, results in input order, one failure never loses the others."""

from __future__ import annotations

import threading

from fakes.anthropic_server import FakeAnthropic, error, lesson, ok
from fakes.waiting import MIN_TIMEOUT

from dreamtui.core.errors import ExtractorError
from dreamtui.core.extract import extract_many
from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.models import Digest, ExtractionResult, RawCandidate, Turn


def digests(n: int) -> list[Digest]:
    return [
        Digest(
            session=f"s{i}",
            project="p",
            turns=[Turn("person", f"never do thing number {i} again please", "f", 1)],
        )
        for i in range(n)
    ]


def ctx(d: Digest) -> ExtractContext:
    return ExtractContext(project=d.project)


class SlowCounting:
    """A stand-in model: counts how many calls overlap, fails on request. With ``gate`` each call
    waits until ``gate`` calls have run at once (so the peak proves the concurrency, no timing)."""

    name = "slow"
    model = None

    def __init__(self, fail: set[str] = frozenset(), crash: set[str] = frozenset(), gate: int = 0) -> None:
        self.active = 0
        self.peak = 0
        self.lock = threading.Condition()
        self.fail, self.crash, self.gate = fail, crash, gate

    def extract(self, digest: Digest, context: ExtractContext) -> ExtractionResult:
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
            self.lock.notify_all()
            # serial calls would never meet here: the bound ends such a test (peak stays 1)
            self.lock.wait_for(lambda: self.peak >= self.gate, timeout=MIN_TIMEOUT)
        try:
            if digest.session in self.fail:
                raise ExtractorError(f"model said no to {digest.session}")
            if digest.session in self.crash:
                raise RuntimeError("boom")
            q = digest.turns[0].text
            return ExtractionResult(
                session=digest.session,
                candidates=[RawCandidate("c", "w", "h", "feedback", "p", q, digest.session, self.name)],
            )
        finally:
            with self.lock:
                self.active -= 1


def test_parallel_but_bounded_and_in_input_order() -> None:
    ex = SlowCounting(gate=3)  # each call waits until three run at once: really parallel
    results = extract_many(digests(12), ex, ctx, concurrency=3)
    assert [r.session for r in results] == [f"s{i}" for i in range(12)]
    assert ex.peak == 3  # and never more


def test_one_failure_is_that_sessions_error_only() -> None:
    seen: list[str] = []
    results = extract_many(
        digests(5),
        SlowCounting(fail={"s1"}, crash={"s3"}),
        ctx,
        concurrency=2,
        on_result=lambda r: seen.append(r.session),
    )
    assert [r.error is None for r in results] == [True, False, True, False, True]
    assert results[1].error == "model said no to s1"
    assert results[3].error.startswith("slow extractor failed: RuntimeError: boom")
    assert sorted(seen) == [f"s{i}" for i in range(5)]


def test_a_bad_key_stops_the_sessions_not_yet_started() -> None:
    with FakeAnthropic() as server:
        server.script.extend([error(401, "authentication_error", "invalid x-api-key"), ok([lesson("x")])])
        ex = AnthropicExtractor(model="claude-sonnet-5-5", api_key="bad", base_url=server.url, max_retries=2)
        results = extract_many(digests(4), ex, ctx, concurrency=1)
        assert len(server.calls()) == 1
    assert all(r.error and "401" in r.error for r in results)


def test_nothing_to_do() -> None:
    assert extract_many([], SlowCounting(), ctx) == []


def test_closest_existing_memories_go_into_the_context(config, ledger) -> None:
    from dreamtui.core.gate.context import context_maker
    from dreamtui.core.gate.dedup import DedupIndex

    mem = config.memory
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text(
        "- [Database tests](db_tests.md) — use the docker database fixture, never mock the database\n"
        "- [Release notes](release.md) — write release notes from the merchant's point of view\n",
        encoding="utf-8",
    )
    (mem / "db_tests.md").write_text(
        "---\nname: Database tests\ndescription: use the docker database fixture, "
        "never mock the database\ntype: feedback\n---\nBecause mocks hid a bug.\n",
        encoding="utf-8",
    )
    index = DedupIndex.build(mem, ledger)
    digest = Digest(
        session="s",
        project="p",
        turns=[Turn("person", "why did you mock the database again in the orders test?", "f", 1)],
    )
    context = context_maker(config, index)(digest)
    assert context.project == "p" and context.max_chars == config.max_digest_chars
    assert context.memories and "docker database fixture" in context.memories[0]
    assert not any("merchant" in m for m in context.memories[:1])


def test_another_projects_memories_stay_out_of_the_context(config, ledger) -> None:
    from dreamtui.core.gate.context import context_maker
    from dreamtui.core.gate.dedup import DedupIndex

    for folder, rule in (
        ("projects/shop", "never mock the database in the orders tests"),
        ("projects/acme", "use the docker database fixture in the orders tests"),
    ):
        (config.memory / folder).mkdir(parents=True)
        (config.memory / folder / "db.md").write_text(
            f"---\nname: Database tests\ndescription: {rule}\ntype: feedback\n---\n{rule}\n", encoding="utf-8"
        )
    index = DedupIndex.build(config.memory, ledger)
    digest = Digest(
        session="s",
        project="acme",
        turns=[Turn("person", "why did you mock the database again in the orders tests?", "f", 1)],
    )
    memories = context_maker(config, index)(digest).memories
    assert any("docker database fixture" in m for m in memories)
    assert not any("never mock" in m for m in memories)  # shop's lesson is not acme's to avoid
