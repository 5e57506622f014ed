"""Dedup: is a proposed lesson already in memory, already pending, or already rejected?

Lexical and offline (no model download). Each text becomes a bag of *terms*: lower-cased words,
stopwords dropped, light suffix stemming, and a small table of coding-agent synonyms folded
together (``never``/``don't``/``avoid`` → ``not``; ``temporary``/``tmp``; ``repository``/``repo``…).
The similarity of two texts mixes three signals, each in 0..1:

- weighted term Dice (rare terms weigh more, by inverse document frequency over the index),
- term containment (the shorter text's weighted terms found in the longer one),
- character 3-gram Dice over the stemmed terms (catches ``pathlib``/``path``, ``sqlite``/``sqlite3``).

Terms left unmatched on both sides still match when they share their first :data:`PREFIX` letters
(or one is a 4-letter term that starts the other): a second, looser stemmer for the suffixes the
light one does not strip (``-ize``/``-ise``, ``-ility``, ``-ive``…). Such a pair counts as a common
term in the Dice and containment signals.

``score = 0.45·dice + 0.25·containment + 0.30·chars``, less :data:`MISMATCH_PENALTY` when both
lessons name concrete specifics (inline code, numbers, flags, paths) and each names one the other does
not. At or above :data:`DUPLICATE` the lesson is a duplicate; between :data:`SUSPECT` and
:data:`DUPLICATE` it is shown to the person beside the match. The rules and thresholds were chosen on
labelled sets (``tests/data/dedup_*.jsonl``) and measured on one written blind to them
(``tests/bench/measure_dedup.py --blind``; docs/gate.md has the figures).

What is indexed: every ``*.md`` file at every level of the memory repository (the ``MEMORY.md``
index line by line, every topic file's frontmatter ``name``/``description`` and body, including
``projects/<p>/…``; ``.git``, ``reviews/`` and ``briefing.md`` are skipped), and the ledger's pending
and rejected candidates.
"""

from __future__ import annotations

import math
import re
import stat
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dreamtui.core.memory.frontmatter import read_lenient
from dreamtui.core.memory.outside_tree import read_memory
from dreamtui.core.models import Candidate, DedupHit

DUPLICATE = 0.70
"""At or above: the same lesson (dropped as a duplicate of memory)."""
SUSPECT = 0.40
"""At or above (and below DUPLICATE): a suspected duplicate, shown to the person side by side."""
SAME_SESSION = 0.55
"""At or above, two proposals of ONE session (e.g. of two parts of a long one) state the same lesson:
only the best-quoted reaches the queue. Lower than DUPLICATE because the prompt asks for one lesson per
subject, so two proposals of one session that share this much are the same lesson in other words
(distinct lessons of one session scored at most 0.46 over the 123 pairs of the v4 recordings)."""

SKIP_DIRS = frozenset({".git", "reviews"})
SKIP_FILES = frozenset({"briefing.md"})
INDEX_FILE = "MEMORY.md"

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "being",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "each",
        "either",
        "etc",
        "even",
        "ever",
        "every",
        "few",
        "for",
        "from",
        "further",
        "get",
        "gets",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "however",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "least",
        "less",
        "let",
        "lets",
        "like",
        "make",
        "makes",
        "many",
        "may",
        "me",
        "might",
        "more",
        "most",
        "much",
        "must",
        "my",
        "need",
        "needs",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "others",
        "our",
        "out",
        "over",
        "own",
        "per",
        "please",
        "rather",
        "really",
        "same",
        "shall",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "thing",
        "things",
        "this",
        "those",
        "though",
        "through",
        "thus",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "use",
        "used",
        "uses",
        "using",
        "very",
        "via",
        "was",
        "we",
        "were",
        "what",
        "when",
        "whenever",
        "where",
        "whether",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "within",
        "would",
        "yes",
        "yet",
        "you",
        "your",
        "yours",
        "always",
        "instead",
        "prefer",
        "preferred",
        "otherwise",
        "sure",
        "way",
        "ways",
        "e",
        "g",
        "eg",
        "ie",
        "i.e",
        "also",
        "keep",
        "keeps",
        "kept",
    ]
)  # noqa: SIM905

# Coding-agent vocabulary folded to one term (applied after stemming).
_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    (
        "not",
        "never",
        "dont",
        "don",
        "avoid",
        "no",
        "nor",
        "without",
        "doesnt",
        "isnt",
        "cannot",
        "cant",
        "shouldnt",
        "mustnt",
        "wont",
        "refrain",
        "forbid",
        "forbidden",
        "forbidd",
        "prohibit",
        "prohibited",
        "disallow",
        "disallowed",
        "ban",
        "banned",
    ),
    ("before", "prior", "first", "beforehand", "ahead"),
    ("tmp", "temporary", "temp", "scratch", "tempdir", "tmpdir"),
    ("repo", "repository", "repositori"),
    ("dir", "directory", "directori", "folder"),
    ("config", "configuration", "configur", "setting", "settings"),
    ("error", "exception", "traceback", "stack"),
    ("run", "execute", "execut", "invoke", "invok", "launch"),
    ("db", "database", "databas"),
    ("env", "environment", "environ"),
    ("dep", "dependency", "dependenc", "dependenci", "deps", "package", "packag", "requirement"),
    ("doc", "docs", "document", "documentation", "documentat", "readme"),
    ("function", "func", "method", "fn"),
    ("arg", "argument", "parameter", "param", "option", "flag"),
    ("reply", "answer", "response", "respons", "explanation", "explan"),
    ("short", "concise", "brief", "small", "terse", "succinct", "quick", "fast"),
    ("long", "lengthy", "verbose", "large", "slow"),
    ("delete", "remove", "remov", "rm", "drop"),
    # creation verbs fold into "make", a stopword: "add X" and "write X" are the same lesson as "X"
    ("make", "create", "creat", "generate", "generat", "add", "write"),
    ("forever", "indefinitely", "indefinit", "hang", "block"),
    ("limit", "bound", "cap", "max", "maximum", "restrict"),
    ("user", "person", "human"),
    ("test", "pytest", "unittest", "spec"),
    ("pr", "pull", "merge"),
    ("check", "verify", "ensure", "confirm", "validat", "validate"),
    ("change", "modif", "modify", "edit", "updat", "update", "alter"),
    ("fix", "bugfix", "patch", "bug"),
    ("diagnostic", "debug", "diagnost"),
    ("annotation", "annot", "hint", "type"),
    ("print", "output", "emit", "show", "display"),
    ("message", "msg"),
    ("intro", "introduction", "introduct", "preamble", "preambl", "preface", "prefac"),
    ("command", "cli", "commandline"),
    ("code", "source"),
    ("mock", "stub", "fake"),
    ("credential", "secret", "password", "token", "key"),
    ("start", "begin", "open"),
    ("ask", "consult", "confirm"),
    ("spell", "spelling"),
    ("compatible", "compat", "compatibl", "support"),
    ("prod", "production", "live"),
    ("k8s", "kubernetes", "kube"),
    ("pg", "postgres", "postgresql", "psql"),
    ("ts", "typescript"),
    ("js", "javascript"),
    ("ci", "pipeline"),
    ("deploy", "ship", "rollout", "release", "releas"),
    ("revert", "rollback", "restore", "undo"),
    ("approve", "approv", "approval", "signoff", "permission", "permiss", "consent"),
    ("require", "requir", "mandatory", "mandator", "necessary", "necessar"),
    ("sha", "hash", "digest"),
    ("fail", "failur", "failure", "broken", "break", "crash"),
    ("cache", "memoiz", "memoize"),
)
SYNONYMS: dict[str, str] = {w: group[0] for group in _SYNONYM_GROUPS for w in group}

_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = (
    "ational",
    "ization",
    "fulness",
    "ousness",
    "iveness",
    "ations",
    "ation",
    "ments",
    "ment",
    "ings",
    "ness",
    "edly",
    "ing",
    "ies",
    "ied",
    "ers",
    "est",
    "ed",
    "ly",
    "er",
    "es",
    "s",
)
_INDEX_LINE = re.compile(r"^\s*[-*]\s+\[([^\]]*)\]\(([^)]*)\)\s*(?:[-—–:]+\s*)?(.*)$")

_COMPOUND_MAP = {"pull request": "pr", "command line": "commandline", "merge request": "pr"}
_COMPOUNDS = re.compile(r"\b(?:pull[ -]request|merge[ -]request|command[ -]line)\b")

W_DICE, W_CONTAIN, W_CHARS = 0.45, 0.25, 0.30
MISMATCH_PENALTY = 0.3
"""Taken off the score when both lessons name concrete specifics and each names one the other does
not (``--context`` / ``--namespace``, ``85%`` / ``95%``, ``values-staging.yaml`` / ``values-prod.yaml``):
the same words about different specifics are different lessons."""

SPECIFICS_CHARS = 20_000
"""Only the first this many characters of a text are searched for specifics (a lesson is short)."""
ADDS_CAP = round(DUPLICATE - 0.01, 2)
"""The highest score of a lesson that names a specific its match does not: shown, never dropped."""

_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)*(?:[kKmM]\b)?%?")
_FLAG = re.compile(r"(?<![\w-])--?[a-zA-Z][\w-]*")
# every repetition is bounded and starts at the beginning of a run: linear time on a 10 MB line of "xxxx…"
_PATHLIKE = re.compile(
    r"(?<![\w.@~-])[\w.@~-]{0,100}/[\w./@~-]{1,200}"
    r"|\b[\w-]{1,100}\.(?:py|js|ts|tsx|jsx|toml|ya?ml|json|md|txt|cfg|ini|lock"
    r"|sh|rs|go|tf|env|sql|html|css)\b"
)
PREFIX = 5
"""Unmatched terms sharing this many leading letters count as the same term (see :func:`soft_pairs`)."""


def stem(word: str) -> str:
    """A light suffix-stripping stem (``running`` → ``runn``→``run``, ``tests`` → ``test``).

    Hand-written on purpose: the Snowball English stemmer (``snowballstemmer``) measured worse on the
    labelled dedup sets (all tuned-on pairs: false positives at SUSPECT 13.9% → 15.6%, recall at
    DUPLICATE 32.8% → 30.7%; ``tests/bench/measure_dedup.py``), as :data:`SYNONYMS` is keyed on these stems.
    """
    if len(word) <= 3 or word.isdigit():
        return word
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            base = word[: -len(suf)]
            if suf in ("ies", "ied"):
                base += "y"
            elif len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "aeiouls":
                base = base[:-1]  # running -> runn -> run
            return base
    if word.endswith("e") and len(word) >= 5:
        return word[:-1]  # profile -> profil (like profiler), optimize -> optimiz
    return word


def terms(text: str) -> list[str]:
    """The normalised content terms of ``text`` (stopwords out, stemmed, synonyms folded)."""
    flat = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    flat = flat.replace("'", "").replace("\u2019", "")
    flat = _COMPOUNDS.sub(lambda m: _COMPOUND_MAP[m.group(0).replace("-", " ")], flat)
    out: list[str] = []
    for word in _WORD.findall(flat):
        if word in STOPWORDS:
            continue
        canon = SYNONYMS.get(word)
        if canon is None:
            st = stem(word)
            canon = SYNONYMS.get(st, st)
        if canon in STOPWORDS:
            continue
        out.append(canon)
    return out


def _number(token: str) -> str:
    """``10,000`` and ``10k`` are the same number (``10000``)."""
    t = token.replace(",", "")
    mult = {"k": 1000, "m": 1000000}.get(t[-1:], 0)
    if mult and t[:-1].isdigit():
        return str(int(t[:-1]) * mult)
    return t


def specifics(text: str) -> frozenset[str]:
    """The concrete specifics a lesson names, lower-cased: the tokens of its inline code, its numbers,
    flags, paths and file names. Two lessons that name different ones are about different things."""
    text = text[:SPECIFICS_CHARS]
    found: set[str] = set()
    for span in _CODE_SPAN.findall(text):
        found.update(tok.strip(".,;:()[]{}'\"") for tok in span.lower().split())
    rest = _CODE_SPAN.sub(" ", text)
    for m in _NUMBER.findall(rest):
        found.add(_number(m.lower()))
    for rx in (_FLAG, _PATHLIKE):
        for m in rx.findall(rest):
            found.add(m.lower().strip("."))
    found.discard("")
    found.discard("/")
    return frozenset(found)


def _mentions(text: str) -> frozenset[str]:
    """Every whitespace-separated token of ``text`` and its plain words, lower-cased, so a specific
    named in code on one side and in prose on the other (`` `jq` `` / ``jq``) still agrees."""
    low = text.lower()
    return frozenset({t.strip(".,;:()[]{}'\"`") for t in low.split()} | set(_WORD.findall(low)))


def adds_specifics(a: Doc, b: Doc) -> bool:
    """Whether lesson ``a`` names a specific that ``b`` does not mention at all (``src/ and tests/``
    against ``src/``): then ``a`` may say more than ``b``, and it is never dropped as its duplicate."""
    extra = a.specs - b.specs
    if not extra:
        return False
    in_b = _mentions(b.text)
    return any(x not in in_b for x in extra)


def mismatched(a: Doc, b: Doc) -> bool:
    """Whether both lessons name specifics and each names one the other does not mention at all."""
    if not a.specs or not b.specs:
        return False
    only_a = a.specs - b.specs
    only_b = b.specs - a.specs
    if not only_a or not only_b:
        return False
    in_b, in_a = _mentions(b.text), _mentions(a.text)
    return any(x not in in_b for x in only_a) and any(y not in in_a for y in only_b)


def _char_grams(words: Iterable[str], n: int = 3) -> Counter[str]:
    grams: Counter[str] = Counter()
    for w in set(words):
        padded = f" {w} "
        for i in range(max(1, len(padded) - n + 1)):
            grams[padded[i : i + n]] += 1
    return grams


def _dice(a: Counter[str], b: Counter[str]) -> float:
    total = sum(a.values()) + sum(b.values())
    return 2.0 * sum((a & b).values()) / total if total else 0.0


@dataclass(slots=True)
class Doc:
    """One indexed text: what it is, where it lives, and its precomputed features."""

    kind: Literal["memory", "pending", "rejected"]
    ref: str
    text: str
    session: str | None = None
    project: str | None = None
    terms: frozenset[str] = field(default_factory=frozenset)
    grams: Counter[str] = field(default_factory=Counter)
    prefixes: dict[str, str] = field(default_factory=dict)
    specs: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(
        cls,
        kind: Literal["memory", "pending", "rejected"],
        ref: str,
        text: str,
        session: str | None = None,
        project: str | None = None,
    ) -> Doc:
        t = terms(text)
        return cls(
            kind, ref, text, session, project, frozenset(t), _char_grams(t), _prefixes(t), specifics(text)
        )


def _prefixes(words: Iterable[str]) -> dict[str, str]:
    """Leading letters of the longer terms, for :func:`soft_pairs`: ``PREFIX`` letters, and the
    first 4 (keyed ``#xxxx``) so a 4-letter term can match a longer one that starts with it."""
    out: dict[str, str] = {}
    for w in sorted(set(words)):
        if len(w) >= PREFIX and not w.isdigit():
            out.setdefault(w[:PREFIX], w)
            out.setdefault("#" + w[:4], w)
    return out


def soft_pairs(a: Doc, b: Doc, common: frozenset[str]) -> tuple[set[str], set[str]]:
    """Terms of ``a`` and of ``b`` that are not shared exactly but pair up one-to-one by prefix
    (``idempotent``/``idempotency``, ``serializ``/``serialization``)."""
    sa: set[str] = set()
    sb: set[str] = set()
    # in sorted order: two terms of ``a`` may claim one term of ``b``, and which one wins must not
    # depend on the set's order (it changes with PYTHONHASHSEED, and so did the score: 44 % or 45 %)
    for x in sorted(a.terms - common):
        if x.isdigit():
            continue
        key = x[:PREFIX] if len(x) >= PREFIX else "#" + x if len(x) == 4 else None
        y = b.prefixes.get(key) if key else None
        if y is not None and y not in common and y not in sb:
            sa.add(x)
            sb.add(y)
    for y in sorted(b.terms - common - sb):
        if len(y) == 4 and not y.isdigit():
            paired = a.prefixes.get("#" + y)
            if paired is not None and paired not in common and paired not in sa:
                sa.add(paired)
                sb.add(y)
    return sa, sb


LIGHT_TERMS = frozenset(
    {
        "not",
        "before",
        "after",
        "start",
        "make",
        "new",
        "project",
        "file",
        "code",
        "change",
        "run",
        "check",
        "time",
        "work",
        "want",
        "good",
        "all",
        "one",
        "two",
        "need",
        "main",
        "line",
    }
)
"""Terms too common in lessons to tell two apart: they weigh :data:`LIGHT_WEIGHT` of a normal term."""
LIGHT_WEIGHT = 0.3


class Weights:
    """Inverse document frequency of terms over a collection (unknown terms weigh the most);
    :data:`LIGHT_TERMS` weigh less."""

    def __init__(self, docs: Iterable[frozenset[str]] = ()) -> None:
        self.df: Counter[str] = Counter()
        self.n = 0
        for d in docs:
            self.add(d)

    def add(self, doc_terms: frozenset[str]) -> None:
        self.df.update(doc_terms)
        self.n += 1

    def __call__(self, term: str) -> float:
        idf = math.log(1.0 + (self.n + 1.0) / (self.df.get(term, 0) + 0.5))
        return idf * LIGHT_WEIGHT if term in LIGHT_TERMS else idf


def similarity_of(a: Doc, b: Doc, weights: Weights | None = None) -> float:
    """How alike two lessons are, 0..1 (1 = the same terms)."""
    if not a.terms or not b.terms:
        return 0.0
    w = weights or Weights()
    common = a.terms & b.terms
    wa = sum(w(t) for t in a.terms)
    wb = sum(w(t) for t in b.terms)
    sa, sb = soft_pairs(a, b, common)
    wc = sum(w(t) for t in common) + 0.5 * (sum(w(t) for t in sa) + sum(w(t) for t in sb))
    dice = 2.0 * wc / (wa + wb)
    contain = wc / min(wa, wb)
    # containment alone overrates tiny texts ("Testing" inside anything): damp it by size
    contain = max(dice, contain * min(1.0, min(len(a.terms), len(b.terms)) / 4.0))
    chars = _dice(a.grams, b.grams)
    score = W_DICE * dice + W_CONTAIN * contain + W_CHARS * chars
    if mismatched(a, b):
        score = max(0.0, score - MISMATCH_PENALTY)
    elif score >= DUPLICATE and adds_specifics(a, b):
        score = ADDS_CAP  # the same words and something concrete more: the person decides, side by side
    return round(score, 4)


def similarity(a: str, b: str, weights: Weights | None = None) -> float:
    """:func:`similarity_of` for two plain texts."""
    return similarity_of(Doc.of("memory", "a", a), Doc.of("memory", "b", b), weights)


# -- the memory repository -------------------------------------------------------------------------


def memory_files(memory_dir: Path) -> list[Path]:
    """Every markdown file of the memory repository, at every level, but ``.git``, ``reviews/``
    and ``briefing.md``; regular files only (a symlink is left out)."""
    root = Path(memory_dir)
    if not root.is_dir():
        return []
    out: list[Path] = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if any(part in SKIP_DIRS for part in rel.parts[:-1]) or rel.name in SKIP_FILES:
            continue
        try:
            if stat.S_ISREG(path.lstat().st_mode):  # never a symlink: its target is not the repository's
                out.append(path)
        except OSError:
            continue
    return out


def _linked(folder: Path, target: str) -> str | None:
    """The repository-relative path an index link points to, when it is a file inside the repo."""
    target = target.strip().replace("%20", " ").replace("%28", "(").replace("%29", ")")
    if not target or "://" in target or target.startswith(("/", "#")):
        return None
    root = folder
    try:
        path = (folder / target.split("#", 1)[0]).resolve()
        rel = path.relative_to(root.resolve())
    except (OSError, ValueError):
        return None
    return rel.as_posix() if path.is_file() else None


def memory_docs(memory_dir: Path) -> list[Doc]:
    """The indexed texts of the memory repository.

    ``MEMORY.md`` index files give one doc per index line (ref: the linked topic file when it exists,
    else ``MEMORY.md:<line>``); a topic
    file gives its ``name — description`` and its ``description + body`` (ref: its relative path).
    """
    root = Path(memory_dir)
    docs: list[Doc] = []
    for path in memory_files(root):
        rel = path.relative_to(root).as_posix()
        text = read_memory(path)  # bounded as the outside scan is; never through a symlink
        if text is None:
            continue
        if path.name == INDEX_FILE:
            for no, line in enumerate(text.splitlines(), 1):
                m = _INDEX_LINE.match(line)
                content = f"{m.group(1)} — {m.group(3)}" if m else line.strip(" -*#\t")
                if len(terms(content)) >= 2:
                    ref = _linked(path.parent, m.group(2)) if m else None
                    docs.append(Doc.of("memory", ref or f"{rel}:{no}", content))
            continue
        meta, body = read_lenient(text)
        head = " — ".join(v for v in (meta.get("name", ""), meta.get("description", "")) if v)
        body = body.strip()
        if head:
            docs.append(Doc.of("memory", rel, head))
        full = f"{meta.get('description', '')}\n{body}".strip()
        if full and full != head:
            docs.append(Doc.of("memory", rel, full))
    return docs


def candidate_text(c: Candidate) -> str:
    """The text of a candidate used for dedup: its claim."""
    return c.claim


class DedupIndex:
    """Memory files plus pending and rejected candidates, searchable for the closest lesson."""

    def __init__(self, docs: Iterable[Doc] = ()) -> None:
        self._reset(docs)

    def _reset(self, docs: Iterable[Doc]) -> None:
        self.docs: list[Doc] = []
        self.weights = Weights()
        self._postings: dict[str, list[int]] = {}
        self._sessions: dict[str, tuple[str | None, str | None]] = {}
        for d in docs:
            self.add(d)

    @classmethod
    def build(
        cls, memory_dir: Path | None, ledger: object | None = None, project: str | None = None
    ) -> DedupIndex:
        """Index every memory file under ``memory_dir`` and the ledger's pending and rejected
        candidates (of ``project`` when given, else all)."""
        docs = memory_docs(memory_dir) if memory_dir is not None else []
        index = cls(docs)
        if ledger is not None:
            for status in ("pending", "rejected"):
                for cand in ledger.list_candidates(status=status, project=project):  # type: ignore[attr-defined]
                    index.add_candidate(cand)
        return index

    def add(self, doc: Doc) -> None:
        """Add one doc (its terms count towards the weights)."""
        pos = len(self.docs)
        self.docs.append(doc)
        self.weights.add(doc.terms)
        for term in doc.terms:
            self._postings.setdefault(term, []).append(pos)
        self._sessions.setdefault(doc.ref, (doc.project, doc.session))

    def add_candidate(self, cand: Candidate) -> None:
        """Index a pending or rejected candidate by its claim (ref: the candidate id)."""
        kind: Literal["pending", "rejected"] = "rejected" if cand.status == "rejected" else "pending"
        self.add(Doc.of(kind, cand.id, candidate_text(cand), cand.session, cand.project))

    def remove(self, ref: str) -> None:
        """Forget the docs with ``ref`` (e.g. a pending candidate that was dropped)."""
        self._reset([d for d in self.docs if d.ref != ref])

    def ranked(
        self, text: str, *, kinds: Iterable[str] | None = None, exclude: Iterable[str] = ()
    ) -> list[tuple[float, Doc]]:
        """The indexed docs that share a term with ``text``, with their scores, best first."""
        probe = Doc.of("memory", "?", text)
        wanted = set(kinds) if kinds is not None else None
        skip = set(exclude)
        positions = sorted({i for t in probe.terms for i in self._postings.get(t, ())})
        scored = [
            (similarity_of(probe, d, self.weights), d)
            for d in (self.docs[i] for i in positions)
            if d.ref not in skip and (wanted is None or d.kind in wanted)
        ]
        scored.sort(key=lambda item: -item[0])
        return scored

    def closest(
        self, text: str, *, kinds: Iterable[str] | None = None, exclude: Iterable[str] = ()
    ) -> DedupHit | None:
        """The closest indexed lesson (optionally only of ``kinds``), or None when the index is
        empty or nothing shares a term."""
        for score, doc in self.ranked(text, kinds=kinds, exclude=exclude):
            if score <= 0:
                return None
            return DedupHit(doc.kind, doc.ref, score, doc.text)
        return None

    def session_of(self, ref: str) -> str | None:
        """The session of an indexed candidate (None for memory files)."""
        return self._sessions.get(ref, (None, None))[1]

    def source_of(self, ref: str) -> tuple[str | None, str | None]:
        """The (project, session) of an indexed candidate: a session is named by both, since two
        projects' session files may share a name. ``(None, None)`` for memory files."""
        return self._sessions.get(ref, (None, None))
