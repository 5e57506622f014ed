"""How far can an extractor without a language model go? A learned sentence classifier, measured blind.

Run from the repository root (needs ``pip install scikit-learn``; not a dependency of dreamtui):

    python3 tests/bench/offline_ceiling.py --train tuning blind --test blind2
    python3 tests/bench/offline_ceiling.py --train tuning blind blind2 --test blind3

The question this answers: is the offline target (precision >= 0.80 with keep-recall >= 0.50 on a blind
real split) out of reach of hand rules only, or of any extractor that sees surface features? Every
sentence of the person's words and the assistant's prose (split as the heuristic splits them) is a
candidate; a sentence is positive when it lies in the record of a labelled lesson and shares at least
half its quote's content words. A logistic regression over word uni- and bigrams plus the heuristic's
own signals (its rule kind and confidence, who spoke, question or not, place in the session, length)
learns from the ``--train`` splits; on the ``--test`` split it proposes, per session, the sentences
above a threshold (one per record), and the project's scorer (``tests/fakes/eval_set.py``) scores them
as proposals. Every threshold is printed, so the best operating point is visible; choosing it on the
test split itself makes the figure an upper bound (optimistic), not a fair score.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from fakes.eval_set import Proposal, Totals, load_sessions, overlap, score_session  # noqa: E402

from dreamtui.core.extract import heuristic  # noqa: E402
from dreamtui.core.ingest.digest import digest_session  # noqa: E402
from dreamtui.core.models import Turn  # noqa: E402


@dataclass
class Sentence:
    """One candidate sentence and what the classifier learns from."""

    sid: str
    split: str
    turn: Turn
    text: str
    place: float
    positive: bool


def sentences(splits: list[str]) -> list[Sentence]:
    """Every candidate sentence of the labelled sessions of ``splits``, marked positive or not."""
    out: list[Sentence] = []
    for s in load_sessions("all"):
        if s.split not in splits:
            continue
        digest = digest_session(s.files)
        n = max(1, len(digest.turns))
        for i, turn in enumerate(digest.turns):
            if turn.kind in ("command", "interrupt"):
                continue
            for span in heuristic._sentences(turn.text):
                text = turn.text[span.start : span.end].strip()
                if len(text.split()) < 4:
                    continue
                positive = any(
                    lab.line == turn.line
                    and (not lab.file or Path(lab.file).name == Path(turn.file).name)
                    and overlap(text, lab.quote) >= 0.5
                    for lab in s.labels or []
                )
                out.append(Sentence(s.id, s.split, turn, text, i / n, positive))
    return out


def signals(s: Sentence) -> list[float]:
    """The heuristic's own signals and the shape of the sentence, as numbers."""
    kind = heuristic.rule_label(s.text, s.turn.role)
    conf = heuristic.confidence(s.text, kind, s.turn)[0] if kind else 0
    return [
        float(s.turn.role == "person"),
        float(s.turn.kind == "prompt"),
        s.place,
        min(len(s.text), 400) / 400,
        float(s.text.rstrip().endswith("?")),
        min(len(s.turn.text), 3000) / 3000,
        conf / 5,
        float(bool(kind)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", nargs="+", default=["tuning", "blind"])
    ap.add_argument("--test", nargs="+", default=["blind2"])
    args = ap.parse_args()
    try:
        from scipy.sparse import csr_matrix, hstack
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        sys.exit("needs scikit-learn: pip install scikit-learn")
    train, test = sentences(args.train), sentences(args.test)
    if not train or not test:
        sys.exit("no labelled sessions with their transcripts on this machine for those splits")

    def text(s: Sentence) -> str:
        return ("P " if s.turn.role == "person" else "A ") + s.text

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    x_train = hstack(
        [vec.fit_transform([text(s) for s in train]), csr_matrix([signals(s) for s in train])]
    ).tocsr()
    x_test = hstack([vec.transform([text(s) for s in test]), csr_matrix([signals(s) for s in test])]).tocsr()
    model = LogisticRegression(class_weight="balanced", max_iter=3000)
    model.fit(x_train, [s.positive for s in train])
    scores = model.predict_proba(x_test)[:, 1]
    sessions = {s.id: s for s in load_sessions("all") if s.split in args.test}
    print(
        f"trained on {args.train} ({len(train)} sentences, {sum(s.positive for s in train)} positive); "
        f"tested on {args.test} ({len(sessions)} sessions, {len(test)} sentences)"
    )
    print("threshold  proposals  precision  keep-recall")
    for threshold in (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98):
        totals = Totals()
        for sid, session in sessions.items():
            best: dict[tuple[str, int], tuple[float, Sentence]] = {}
            for s, p in zip(test, scores, strict=True):
                key = (s.turn.file, s.turn.line)
                if s.sid == sid and p >= threshold and p > best.get(key, (0.0, s))[0]:
                    best[key] = (p, s)
            props = [
                Proposal(claim=s.text, quote=s.text, line=s.turn.line, file=s.turn.file, kept=True)
                for _, s in best.values()
            ]
            totals.add(
                score_session(sid, props, session.labels or [], proposed=len(props), verified=len(props))
            )
        print(f"{threshold:9.2f}  {totals.kept:9d}  {totals.precision:9.2f}  {totals.keep_recall:11.2f}")


if __name__ == "__main__":
    main()
