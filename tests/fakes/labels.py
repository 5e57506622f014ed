"""Hand-labelled heuristic fixtures: load them as Digests and score an extractor against the labels."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from dreamtui.core.extract.base import ExtractContext, Extractor
from dreamtui.core.models import Digest, RawCandidate, Turn

FIXTURE_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "heuristic"


@dataclass
class Labelled:
    """A digest plus its labels: (turn index, start, end, type) of each hand-labelled lesson."""

    digest: Digest
    labels: list[tuple[int, int, int, str]]


@dataclass
class Score:
    """Precision/recall counts over a set of labelled digests."""

    candidates: int = 0
    labels: int = 0
    true_positives: int = 0
    matched_labels: int = 0
    misses: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.true_positives / self.candidates if self.candidates else 0.0

    @property
    def recall(self) -> float:
        return self.matched_labels / self.labels if self.labels else 0.0


def load_fixture(path: Path) -> Labelled:
    """One fixture file as a Digest whose turns point at invented line numbers (1-based, in order)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    turns: list[Turn] = []
    labels: list[tuple[int, int, int, str]] = []
    for i, t in enumerate(data["turns"]):
        turns.append(
            Turn(
                role=t["role"],
                text=t["text"],
                file=f"{data['session']}.jsonl",
                line=i + 1,
                uuid=f"u{i + 1}",
                kind=t.get("kind", "prompt" if t["role"] == "person" else "text"),
            )
        )
        for lesson in t.get("lessons", []):
            start = t["text"].index(lesson["quote"])
            labels.append((i, start, start + len(lesson["quote"]), lesson["type"]))
    digest = Digest(
        session=data["session"], project=data["project"], files=[f"{data['session']}.jsonl"], turns=turns
    )
    return Labelled(digest, labels)


TUNED_DIRS = ("", "round1_holdout", "round2_holdout")
"""Fixture folders the rules were tuned on (the two ``round*`` sets were held out in their round, then used)."""
HOLDOUT_DIR = "holdout"
"""Written after round three; tuned on in round four (``round4_holdout`` is the blind set now)."""


def load_fixtures(folder: str = "") -> list[Labelled]:
    """Every ``tests/fixtures/heuristic/<folder>/*.json``."""
    return [load_fixture(p) for p in sorted((FIXTURE_DIR / folder).glob("*.json"))]


def tuned_fixtures() -> list[Labelled]:
    """Every fixture the rules were tuned on."""
    return [item for folder in TUNED_DIRS for item in load_fixtures(folder)]


def locate(digest: Digest, cand: RawCandidate) -> tuple[int, int, int] | None:
    """(turn index, start, end) of a candidate's quote in the digest, or None."""
    for i, turn in enumerate(digest.turns):
        pos = turn.text.find(cand.quote)
        if pos >= 0:
            return i, pos, pos + len(cand.quote)
    return None


def score(extractor: Extractor, items: list[Labelled]) -> Score:
    """A candidate is a true positive when its quote overlaps a labelled lesson in the same turn."""
    total = Score()
    for item in items:
        result = extractor.extract(item.digest, ExtractContext(project=item.digest.project))
        matched: set[int] = set()
        total.labels += len(item.labels)
        total.candidates += len(result.candidates)
        for cand in result.candidates:
            where = locate(item.digest, cand)
            hit = None
            if where is not None:
                for j, (ti, s, e, _t) in enumerate(item.labels):
                    if ti == where[0] and s < where[2] and where[1] < e and j not in matched:
                        hit = j
                        break
            if hit is None:
                total.false_positives.append(f"{item.digest.session}: {cand.quote!r}")
            else:
                matched.add(hit)
                total.true_positives += 1
        total.matched_labels += len(matched)
        for j, (ti, s, e, _t) in enumerate(item.labels):
            if j not in matched:
                total.misses.append(f"{item.digest.session}: {item.digest.turns[ti].text[s:e]!r}")
    return total


CORPUS_LABELS = FIXTURE_DIR / "corpus" / "labels.json"


def score_corpus(extractor: Extractor, corpus: Path) -> Score:
    """Score against the hand labels of ``../shared/corpus`` (one digest per session, sub-agents merged).

    A label may list several ``lines`` when the same words are recorded twice (a queued prompt).
    """
    from dreamtui.core.ingest.digest import digest_session
    from dreamtui.core.ingest.transcripts import discover, session_files

    labels = json.loads(CORPUS_LABELS.read_text(encoding="utf-8"))["labels"]
    total = Score(labels=len(labels))
    matched: set[int] = set()
    sessions = sorted({(tf.project, tf.session) for tf in discover(corpus)})
    for project, session in sessions:
        digest = digest_session(session_files(corpus, project, session))
        result = extractor.extract(digest, ExtractContext(project=digest.project))
        total.candidates += len(result.candidates)
        for cand in result.candidates:
            turn = next((t for t in digest.turns if cand.quote in t.text), None)
            hit = None
            if turn is not None:
                rel = Path(turn.file).resolve().relative_to(corpus.resolve()).as_posix()
                for j, lab in enumerate(labels):
                    if (
                        j not in matched
                        and lab["file"] == rel
                        and turn.line in lab.get("lines", [lab["line"]])
                        and (lab["needle"] in cand.quote or cand.quote in lab["needle"])
                    ):
                        hit = j
                        break
            if hit is None:
                total.false_positives.append(f"{session}: {cand.quote!r}")
            else:
                matched.add(hit)
                total.true_positives += 1
    total.matched_labels = len(matched)
    total.misses = [
        f"{lab['file']}:{lab['line']}: {lab['needle']!r}" for j, lab in enumerate(labels) if j not in matched
    ]
    return total
