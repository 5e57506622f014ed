"""The real evaluation set: real Claude Code sessions, blind labels, recorded model answers, and the scorer.

The transcripts are public data that this repository does not redistribute: the sessions of
``../shared/corpus`` (root ``shared``) and the sessions gathered into ``../eval`` beside the
repository (root ``eval``; ``DREAMTUI_EVAL_DIR`` overrides it). ``tests/data/real_eval/manifest.json``
names every file with its repository, commit, path, licence and sha256, and fixes each session's split
(``tuning``: rules and prompts may be tuned on it; ``blind``, ``blind2`` and ``blind3``: only ever measured;
``blind2`` was gathered and labelled after the offline extractor's first round had been measured on
``blind``, ``blind3`` after prompt v4 was fixed (v4 was written from v2's misses on ``blind`` and
``blind2``); the sessions of ``../eval2`` and ``../eval3`` live beside the repository too). Labels
(``labels/<id>.json``) were written from the digest alone, by someone who had not read the extractor's
rules, following ``LABELLING.md``. Recorded answers (``recorded/<tag>/<id>.json``) are a Claude
model's answers to the exact requests dreamtui would send, stored verbatim.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "real_eval"
MANIFEST = DATA / "manifest.json"
LABELS = DATA / "labels"
RECORDED = DATA / "recorded"
REPO = Path(__file__).resolve().parents[2]
ROOTS = {
    "shared": Path(os.environ.get("DREAMTUI_TEST_SHARED") or REPO.parent / "shared") / "corpus",
    "eval": Path(os.environ.get("DREAMTUI_EVAL_DIR") or REPO.parent / "eval"),
    "eval2": Path(os.environ.get("DREAMTUI_EVAL2_DIR") or REPO.parent / "eval2"),
    "eval3": Path(os.environ.get("DREAMTUI_EVAL3_DIR") or REPO.parent / "eval3"),
    "eval4": Path(os.environ.get("DREAMTUI_EVAL4_DIR") or REPO.parent / "eval4"),
    "eval5": Path(os.environ.get("DREAMTUI_EVAL5_DIR") or REPO.parent / "eval5"),
    # the other agents' real sessions (Codex CLI, Gemini CLI, Aider, OpenCode, ...): split ``agents``
    "eval-agents": Path(os.environ.get("DREAMTUI_EVAL_AGENTS_DIR") or REPO.parent / "eval-agents"),
}


@dataclass(frozen=True)
class Label:
    """One lesson a labeller would keep (``keep``) or might keep (``marginal``)."""

    claim: str
    grade: str
    quote: str
    line: int
    file: str
    speaker: str
    type: str = ""
    scope: str = ""


@dataclass
class EvalSession:
    """One session of the set: where its files are, its split, and its labels (when labelled)."""

    id: str
    split: str
    root: str
    files: list[Path]
    project: str
    labels: list[Label] | None = None
    sources: list[dict[str, Any]] = field(default_factory=list)
    format: str = "claude-code"
    """The dreamtui format the session's files are read by (``formats.format_for`` agrees)."""

    @property
    def available(self) -> bool:
        """Every file of the session is on this machine (an address ``<file>#<member>``: its file)."""
        from dreamtui.core.ingest.formats import split_address

        return all(split_address(f)[0].is_file() for f in self.files)


def file_path(root: Path, item: dict[str, Any]) -> Path:
    """Where one manifest file lies: ``root / eval_path``, or the address ``<that>#<member>`` of one
    session inside a file holding many (an OpenCode database)."""
    path = root / item["eval_path"]
    return Path(f"{path}#{item['member']}") if item.get("member") else path


def load_labels(sid: str) -> list[Label] | None:
    """The labels of one session, or None when it has not been labelled."""
    path = LABELS / f"{sid}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for item in data.get("lessons", []):
        out.append(
            Label(
                claim=item["claim"],
                grade=item.get("grade", "keep"),
                quote=item.get("quote", ""),
                line=int(item.get("line") or 0),
                file=str(item.get("file") or ""),
                speaker=item.get("speaker", ""),
                type=item.get("type", ""),
                scope=item.get("scope", ""),
            )
        )
    return out


def load_sessions(split: str = "all", *, labelled_only: bool = True) -> list[EvalSession]:
    """The sessions of ``split`` (``tuning``, ``blind``, ..., ``agents`` or ``all``) whose files are on
    this machine."""
    entries = json.loads(MANIFEST.read_text(encoding="utf-8"))
    out: list[EvalSession] = []
    for e in entries:
        if split != "all" and e["split"] != split:
            continue
        root = ROOTS[e["root"]]
        files = [file_path(root, f) for f in e["files"]]
        s = EvalSession(
            id=e["id"],
            split=e["split"],
            root=e["root"],
            files=files,
            project=e["project_folder"],
            labels=load_labels(e["id"]),
            sources=e["files"],
            format=e.get("format", "claude-code"),
        )
        if not s.available or (labelled_only and s.labels is None):
            continue
        out.append(s)
    return out


# -- recorded answers ------------------------------------------------------------------------------


def sha256(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_key(body: dict[str, Any]) -> str:
    """What identifies one extraction request: its system prompt and its user message."""
    system = "\n".join(b.get("text", "") for b in body.get("system", []) if isinstance(b, dict))
    user = "\n".join(
        m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        for m in body.get("messages", [])
    )
    return sha256(system + "\x00" + user)


def location_names(digest: Any) -> list[str]:
    """The strings of a request that can depend on where the session's files lie on this machine: an
    Aider history's session id, project and working directory are its folder's (the eval set's own
    folder here); other formats take them from the file's content."""
    return [n for n in (digest.cwd, digest.project, digest.session, digest.project_name) if n]


def portable_key(body: dict[str, Any], names: Iterable[str]) -> str:
    """:func:`request_key` with each of ``names`` replaced by a placeholder, so a recording made with
    the eval set in one folder replays with it unpacked in another (longest names first, names of one
    length in their own order: never the order of a set, which changes with each run's hash seed)."""
    system = "\n".join(b.get("text", "") for b in body.get("system", []) if isinstance(b, dict))
    user = "\n".join(
        m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        for m in body.get("messages", [])
    )
    for i, name in enumerate(sorted(set(names), key=lambda n: (-len(n), n))):
        user = user.replace(name, f"\x01{i}\x01")
    return sha256("portable\x00" + system + "\x00" + user)


def load_recorded(tag: str, root: Path = RECORDED) -> dict[str, str]:
    """Every recorded answer of one recording (``recorded/<tag>/``): request key -> the answer's text
    (and its portable key -> the same text, where the recording has one)."""
    answers: dict[str, str] = {}
    for path in sorted((root / tag).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for req in data["requests"]:
            answers[req["key"]] = req["answer"]
            if req.get("portable_key"):
                answers.setdefault(req["portable_key"], req["answer"])
    return answers


# -- scoring ---------------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_][\w./-]*")
_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
"""Han and kana runs: written without spaces, so they are compared by character pairs."""
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "we",
        "you",
        "i",
        "me",
        "my",
        "our",
        "your",
        "they",
        "them",
        "their",
        "he",
        "she",
        "his",
        "her",
        "not",
        "no",
        "do",
        "does",
        "did",
        "done",
        "so",
        "such",
        "than",
        "too",
        "very",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "just",
        "also",
        "only",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "what",
        "why",
        "how",
        "all",
        "any",
        "each",
        "every",
        "some",
        "more",
        "most",
        "other",
        "into",
        "over",
        "under",
        "about",
        "after",
        "before",
        "again",
        "once",
        "up",
        "down",
        "out",
        "off",
        "because",
        "while",
        "until",
        "let",
        "lets",
        "make",
        "sure",
        "use",
        "using",
        "used",
    ]
)


def words(text: str) -> set[str]:
    """Content words of a text (the scorer's own, not dreamtui's): lower-cased words of any script,
    English stop words left out, a crude plural/tense strip for ASCII words, and each run of Chinese or
    Japanese characters as its character pairs."""
    text = text.lower()
    out: set[str] = set()
    for run in _UNSPACED.findall(text):
        out.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    for w in _WORD.findall(_UNSPACED.sub(" ", text)):
        w = w.strip("./-")
        if not w or w in STOP:
            continue
        if w.isascii():
            for suffix in ("ing", "ed", "es", "s"):
                if len(w) > len(suffix) + 3 and w.endswith(suffix):
                    w = w[: -len(suffix)]
                    break
        out.add(w)
    return out


def overlap(a: str, b: str) -> float:
    """Overlap coefficient of content words: |A∩B| / min(|A|, |B|)."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of content words."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


@dataclass
class Proposal:
    """What an extractor proposed and what the gate made of it (as a queue would show it)."""

    claim: str
    quote: str
    line: int | None
    file: str | None
    kept: bool


def _file_name(path: str) -> str:
    """A file's name as a label names it: an address ``<file>#<session id>`` (a session inside an
    OpenCode database) by its file's name."""
    name = Path(path).name
    return name.split("#", 1)[0] if "#" in name else name


def match_score(p: Proposal, label: Label) -> float:
    """How surely a proposal states the labelled lesson (0 = not at all); the scorer's one rule.

    Same record and overlapping words (quote or claim) match; a claim that says much of the same in
    other words matches from anywhere in the session.
    """
    same_record = (
        p.line is not None
        and p.line == label.line
        and (not label.file or not p.file or _file_name(p.file) == _file_name(label.file))
    )
    quote_overlap = overlap(p.quote, label.quote)
    claim_sim = max(jaccard(p.claim, label.claim), 0.8 * overlap(p.claim, label.claim))
    if same_record and (quote_overlap >= 0.5 or claim_sim >= 0.2):
        return 1.0 + claim_sim
    if quote_overlap >= 0.8 and claim_sim >= 0.15:
        return 0.9 + claim_sim
    if claim_sim >= 0.4:
        return claim_sim
    return 0.0


@dataclass
class SessionScore:
    """The score of one session."""

    id: str
    proposed: int = 0  # candidates the extractor returned (malformed included)
    verified: int = 0  # quotes that survived verification
    kept: int = 0  # what reached the queue
    precise: int = 0  # kept proposals that state a keep or marginal lesson (one each)
    duplicates: int = 0  # kept proposals that repeat a lesson another proposal already states
    keep_labels: int = 0
    keep_found: int = 0
    marginal_found: int = 0
    hits: list[tuple[str, str]] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)


def score_session(
    sid: str, proposals: Iterable[Proposal], labels: list[Label], *, proposed: int, verified: int
) -> SessionScore:
    """Match kept proposals to labels one-to-one (best pairs first) and count."""
    kept = [p for p in proposals if p.kept]
    s = SessionScore(
        id=sid,
        proposed=proposed,
        verified=verified,
        kept=len(kept),
        keep_labels=sum(1 for lab in labels if lab.grade == "keep"),
    )
    pairs = sorted(
        ((match_score(p, lab), i, j) for i, p in enumerate(kept) for j, lab in enumerate(labels)),
        reverse=True,
    )
    used_p: set[int] = set()
    used_l: set[int] = set()
    for sc, i, j in pairs:
        if sc <= 0 or i in used_p or j in used_l:
            continue
        used_p.add(i)
        used_l.add(j)
        s.precise += 1
        if labels[j].grade == "keep":
            s.keep_found += 1
        else:
            s.marginal_found += 1
        s.hits.append((kept[i].claim, labels[j].claim))
    for i, p in enumerate(kept):
        if i in used_p:
            continue
        if any(match_score(p, lab) > 0 for lab in labels) or any(
            k != i and p.line is not None and kept[k].line == p.line for k in used_p
        ):
            s.duplicates += 1
        s.noise.append(p.claim)
    s.missed = [lab.claim for j, lab in enumerate(labels) if j not in used_l and lab.grade == "keep"]
    return s


@dataclass
class Totals:
    """Sums over sessions, and the figures the README reports."""

    sessions: int = 0
    proposed: int = 0
    verified: int = 0
    kept: int = 0
    precise: int = 0
    duplicates: int = 0
    keep_labels: int = 0
    keep_found: int = 0

    def add(self, s: SessionScore) -> None:
        self.sessions += 1
        for name in ("proposed", "verified", "kept", "precise", "duplicates", "keep_labels", "keep_found"):
            setattr(self, name, getattr(self, name) + getattr(s, name))

    @property
    def precision(self) -> float:
        return self.precise / self.kept if self.kept else 0.0

    @property
    def keep_recall(self) -> float:
        return self.keep_found / self.keep_labels if self.keep_labels else 0.0

    @property
    def survival(self) -> float:
        return self.verified / self.proposed if self.proposed else 1.0
