"""Dedup against memory files at every level, pending and rejected candidates; the labelled set."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dreamtui.core.gate.dedup import (
    DUPLICATE,
    SUSPECT,
    DedupIndex,
    Doc,
    memory_files,
    similarity,
    soft_pairs,
    specifics,
    terms,
)
from dreamtui.core.ledger import Ledger
from dreamtui.core.models import Candidate

BENCH = Path(__file__).resolve().parent / "bench" / "measure_dedup.py"


def load_measure():
    spec = importlib.util.spec_from_file_location("measure_dedup", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def topic(name: str, description: str, body: str, type_: str = "feedback") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n\n{body}\n"


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(
        root,
        "MEMORY.md",
        "# Memory\n\n"
        "- [Use uv](use-uv.md) — The project uses uv, not pip: install dependencies with uv sync\n"
        "- [Staging URL](staging.md) — staging API lives at https://staging.example.com/api/v2\n",
    )
    write(
        root,
        "use-uv.md",
        topic(
            "Use uv",
            "The project uses uv, not pip: install dependencies with uv sync",
            "Run `uv sync` after pulling.\n\n**Why:** pip ignores the lock file.",
        ),
    )
    write(
        root,
        "staging.md",
        topic("Staging URL", "staging API base URL", "https://staging.example.com/api/v2", "reference"),
    )
    # one level down, and NOT in the root index
    write(
        root,
        "projects/billing/sqlite-wal.md",
        topic(
            "SQLite WAL",
            "Open SQLite in WAL mode so readers never block the writer",
            "Set `PRAGMA journal_mode=WAL` when opening the ledger.\n\n**Why:** a reader held the lock "
            "for seconds while the watcher wrote.",
            "project",
        ),
    )
    # places that are not memory
    write(root, "briefing.md", "Always wrap shell variables in double quotes so values are not split.\n")
    write(root, "reviews/review-2026-01-01.md", "Never force-push to the main branch; open a PR instead.\n")
    write(root, ".git/description", "x")
    write(root, ".git/notes.md", "Rebuild the Docker image after requirements.txt changes.\n")
    return root


def test_memory_files_walks_every_level_but_skips_git_reviews_briefing(memory: Path) -> None:
    rels = sorted(p.relative_to(memory).as_posix() for p in memory_files(memory))
    assert rels == ["MEMORY.md", "projects/billing/sqlite-wal.md", "staging.md", "use-uv.md"]


def test_duplicate_one_level_down_is_caught_with_its_path(memory: Path) -> None:
    index = DedupIndex.build(memory)
    hit = index.closest(
        "Enable write-ahead logging (journal_mode=WAL) on the SQLite database so reads don't block writes."
    )
    assert hit is not None
    assert hit.kind == "memory" and hit.ref == "projects/billing/sqlite-wal.md"
    assert hit.score >= DUPLICATE


def test_index_line_and_topic_file_are_both_searched(memory: Path) -> None:
    index = DedupIndex.build(memory)
    hit = index.closest("Dependencies are managed by uv here; run uv sync rather than pip install.")
    assert hit is not None and hit.ref == "use-uv.md" and hit.score >= DUPLICATE
    # the index line alone still reports the topic file it links to
    (memory / "use-uv.md").unlink()
    hit = DedupIndex.build(memory).closest(
        "Dependencies are managed by uv here; run uv sync, not pip install."
    )
    assert hit is not None and hit.ref == "MEMORY.md:3" and hit.score >= DUPLICATE


def test_skipped_places_are_never_matched(memory: Path) -> None:
    index = DedupIndex.build(memory)
    for text in (
        "Always wrap shell variables in double quotes so values are not split.",
        "Never force-push to the main branch; open a PR instead.",
        "Rebuild the Docker image after requirements.txt changes.",
    ):
        hit = index.closest(text)
        assert hit is None or hit.score < SUSPECT, (text, hit)


def test_distinct_lesson_on_the_same_topic_is_not_a_duplicate(memory: Path) -> None:
    index = DedupIndex.build(memory)
    hit = index.closest(
        "Wrap every SQLite write in BEGIN IMMEDIATE so two writers fail fast instead of deadlocking."
    )
    assert hit is not None and hit.score < SUSPECT


def test_pending_and_rejected_candidates_are_indexed(memory: Path, ledger: Ledger) -> None:
    def cand(cid: str, status: str, claim: str) -> Candidate:
        return Candidate(
            id=cid,
            session="s1",
            project="p",
            transcript="t.jsonl",
            claim=claim,
            why="",
            how_to_apply="",
            type="feedback",
            scope="global",
            quote="q",
            extractor="heuristic",
            model=None,
            status=status,
            created_at="2026-01-01T00:00:00Z",
        )

    with ledger.write():
        ledger.put_candidate(
            cand("cpend", "pending", "Set a timeout on every HTTP request; the default waits forever.")
        )
        ledger.put_candidate(
            cand("crej", "rejected", "Quote shell variables to avoid word splitting on spaces.")
        )
        ledger.put_candidate(cand("cacc", "accepted", "Profile before optimizing the hot loop."))
    index = DedupIndex.build(memory, ledger)
    hit = index.closest("HTTP calls need an explicit timeout, because without one requests can hang forever.")
    assert hit is not None and (hit.kind, hit.ref) == ("pending", "cpend") and hit.score >= SUSPECT
    hit = index.closest("Always wrap shell variables in double quotes so values with spaces are not split.")
    assert hit is not None and (hit.kind, hit.ref) == ("rejected", "crej") and hit.score >= DUPLICATE
    assert index.session_of("crej") == "s1"
    assert all(d.ref != "cacc" for d in index.docs)  # accepted ones live in memory files
    assert index.closest("HTTP calls need an explicit timeout always", exclude=["cpend"]).ref != "cpend"


def test_empty_missing_and_garbage_memory(tmp_path: Path) -> None:
    assert DedupIndex.build(tmp_path / "nowhere").closest("anything at all here") is None
    root = tmp_path / "m"
    root.mkdir()
    (root / "bad.md").write_bytes(b"---\nname: \xff\xfe\x00\n---\n\x1b[31mred\x1b[0m \xc3\x28 body")
    write(root, "empty.md", "")
    index = DedupIndex.build(root)
    assert index.closest("") is None
    assert (
        index.closest("completely unrelated text about gardening tomatoes") is None
        or index.closest("completely unrelated text about gardening tomatoes").score < SUSPECT
    )


def test_terms_fold_inflections_and_synonyms() -> None:
    assert terms("Running the tests") == terms("run test")
    assert terms("Never delete the directory") == terms("don't remove the folder")
    assert similarity("Use the tmp_path fixture", "Use the tmp_path fixture") == pytest.approx(1.0, abs=0.01)
    assert similarity("", "anything") == 0.0


def test_unmatched_terms_pair_up_by_prefix() -> None:
    a, b = (
        Doc.of("memory", "a", "Retries must be idempotent"),
        Doc.of("memory", "b", "idempotency of retries"),
    )
    assert soft_pairs(a, b, a.terms & b.terms) == ({"idempotent"}, {"idempotency"})  # stems differ
    assert similarity("Retries must be idempotent", "idempotency of retries") > similarity(
        "Retries must be idempotent", "identity of retries"
    )
    # digits and short terms never pair by prefix; identical texts still score 1
    assert soft_pairs(
        Doc.of("memory", "a", "python 31100"), Doc.of("memory", "b", "python 31199"), frozenset({"python"})
    ) == (set(), set())
    assert similarity("Idempotent retries", "Idempotent retries") == pytest.approx(1.0, abs=0.01)


def test_labelled_set_meets_the_targets() -> None:
    measure = load_measure()
    pairs = measure.load(measure.DATA)
    assert len(pairs) >= 60
    assert sum(p["label"] == "duplicate" for p in pairs) == len(pairs) // 2
    result = measure.evaluate(pairs)
    assert result["recall@suspect"] >= 0.90
    assert result["fp@suspect"] <= 0.05
    assert result["fp@duplicate"] == 0.0  # nothing distinct is ever dropped


def test_held_out_set_is_close_to_the_targets() -> None:
    measure = load_measure()
    result = measure.evaluate(measure.load(measure.HELDOUT))
    assert result["recall@suspect"] >= 0.90
    assert result["fp@suspect"] <= 0.10
    assert result["fp@duplicate"] == 0.0


@pytest.mark.parametrize(
    ("name", "recall", "fp", "dropped"),
    [
        ("heldout2", 0.78, 0.16, 0.0),
        ("tuning2", 0.62, 0.19, 0.034),
        ("heldout3", 0.77, 0.275, 0.01),
    ],
)
def test_sets_written_blind_to_the_rules_keep_their_measured_floors(
    name: str, recall: float, fp: float, dropped: float
) -> None:
    """The sets written by people who had not seen the rules MISS the targets (see docs/gate.md).
    These floors are what was measured, with one or two pairs of slack, so a change that makes dedup
    worse fails; they are not the targets. ``heldout3`` is the blind set: never tuned on."""
    measure = load_measure()
    pairs = measure.load(measure.SETS[name])
    assert len(pairs) >= 100
    assert sum(p["label"] == "duplicate" for p in pairs) == len(pairs) // 2
    result = measure.evaluate(pairs)
    assert result["recall@suspect"] >= recall
    assert result["fp@suspect"] <= fp
    assert result["fp@duplicate"] <= dropped


def test_the_same_words_about_different_specifics_are_different_lessons() -> None:
    staging = "Deploy to staging with `helm upgrade --install web ./chart -f values-staging.yaml`."
    prod = "Deploy to staging with `helm upgrade --install web ./chart -f values-prod.yaml`."
    # one file name, number or flag apart: never dropped as the same lesson (at most shown side by side)
    assert similarity(staging, prod) < DUPLICATE
    assert similarity(staging, staging.replace("web", "api")) < DUPLICATE
    assert (
        similarity("Keep coverage above 80% on changed lines.", "Keep coverage above 90% on changed lines.")
        < DUPLICATE
    )
    assert (
        similarity(
            "Run the linter with `--fix` before pushing.", "Run the linter with `--check` before pushing."
        )
        < DUPLICATE
    )
    assert similarity(staging, staging.replace("Deploy to", "Deploy to the")) >= DUPLICATE


def test_a_specific_named_in_code_on_one_side_and_prose_on_the_other_still_agrees() -> None:
    assert (
        similarity(
            "Parse JSON in shell scripts with `jq`, never grep.",
            "In shell scripts, parse JSON with jq rather than grep.",
        )
        >= DUPLICATE
    )
    assert (
        similarity("Backfills run in batches of 10,000 rows.", "Run backfills in 10k-row batches.") >= SUSPECT
    )
    assert specifics("batches of 10,000 and 1M rows") == specifics("batches of 10k and 1,000,000 rows")


def test_forbidden_is_never() -> None:
    assert (
        similarity(
            "Never force-push to the release branch.", "Force-pushing to the release branch is forbidden."
        )
        >= DUPLICATE
    )


def test_a_lesson_that_names_more_is_shown_never_dropped() -> None:
    memory = "Run mypy in strict mode on `src/` before every push."
    more = "Run mypy in strict mode on `src/` and `scripts/` before every push."
    assert SUSPECT <= similarity(more, memory) < DUPLICATE  # side by side: the person decides
    assert similarity(memory, memory) >= DUPLICATE


def test_specifics_of_a_huge_pasted_line_are_found_in_one_pass() -> None:
    # a person's 200 KB paste once made the path pattern quadratic (minutes per cycle)
    for text in ("x" * 200_000, "a/" * 100_000, "-x" * 100_000, "foo." * 50_000):
        assert len(specifics(text)) <= 1
    assert specifics("x" * 30_000 + " `later`") == frozenset()  # only the head of a long text is searched
