"""Gitleaks' default rule set, run as data: ``gitleaks.toml`` beside this file, unchanged.

The rules are Go regular expressions. They run on RE2 (``google-re2``), the engine whose syntax Go's
``regexp`` implements, so every rule loads as written (no hand translation) and every scan is linear
in the text: no rule can backtrack catastrophically on a hostile line.

Gitleaks' own semantics are kept:
- a rule runs only when one of its ``keywords`` occurs in the lower-cased text (one RE2 set search
  over all keywords finds which);
- the secret is the rule's ``secretGroup``, else its first non-empty group, else the whole match;
- a rule's ``entropy`` is a minimum (the secret's Shannon entropy must be above it);
- the global and per-rule allowlists apply to the secret, the match or the line (``regexTarget``),
  with their ``stopwords`` and ``condition``. Parts that need a file path or a commit (``paths``,
  ``commits``) never hold: transcript text has neither.

Not used: rules that apply to a file path (``path = …``): text has no path, and without it they
would fire on any text. :func:`skipped` lists them and why. Gitleaks' decoding passes (base64, hex,
percent) are not run.

Offsets are byte offsets into the UTF-8 encoding of the text (see :func:`find`).
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import re2

RULES_FILE = Path(__file__).with_name("gitleaks.toml")
"""The rule set, as taken from the gitleaks repository (its header names the commit and licence)."""


def _options() -> Any:
    opts = re2.Options()
    opts.log_errors = False
    opts.max_mem = 64 << 20  # the largest rules (curl headers, generic keys) need more than the 8 MB default
    return opts


def entropy(value: str) -> float:
    """Shannon entropy in bits per character, as gitleaks computes it."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


@functools.cache
def _compiled(pattern: str) -> Any:
    """``pattern`` compiled by RE2 for bytes, on first use (most rules never run on a given text)."""
    return re2.compile(pattern.encode(), _options())


@dataclass(frozen=True, slots=True)
class Allowlist:
    """One allowlist: a finding it matches is not a secret."""

    target: str  # "secret", "match" or "line"
    condition: str  # "OR" or "AND"
    regex: str | None  # the allowlist's regexes joined into one pattern
    stopwords: tuple[str, ...]
    needs_path: bool  # it names paths or commits, which text never has

    def allows(self, secret: bytes, match: bytes, line: bytes) -> bool:
        """Whether this allowlist lets the finding go (gitleaks' ``checkFindingAllowed``)."""
        target = {"match": match, "line": line}.get(self.target, secret)
        regex_ok = (
            self.regex is not None and bool(target) and _compiled(self.regex).search(target) is not None
        )
        low = secret.decode("utf-8", "replace").lower()
        stop_ok = bool(low) and any(w in low for w in self.stopwords)
        if self.condition == "AND":
            checks = [False] if self.needs_path else []
            if self.regex is not None:
                checks.append(regex_ok)
            if self.stopwords:
                checks.append(stop_ok)
            return bool(checks) and all(checks)
        return regex_ok or stop_ok


@dataclass(frozen=True, slots=True)
class Rule:
    """One gitleaks rule (its regex compiled on first use)."""

    id: str
    pattern: str  # the Go regex, as written in the file
    entropy: float
    secret_group: int
    keywords: tuple[str, ...]
    allowlists: tuple[Allowlist, ...]
    wants_line: bool = False  # an allowlist of it reads the match's line

    @property
    def compiled(self) -> re2._Regexp:
        """The rule's RE2 pattern, as it runs (see :func:`search_pattern`)."""
        return _compiled(search_pattern(self.pattern)[0])


_IDENT_PREFIX = r"[\w.-]{0,50}?"
_IDENT_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def search_pattern(pattern: str) -> tuple[str, bool]:
    r"""The pattern that runs for ``pattern``, and whether its identifier prefix was taken off.

    About half the rules (gitleaks' "semi-generic" ones) start with ``[\w.-]{0,50}?``, an optional
    lazy run of identifier characters before the keyword. It changes where a match starts, never
    which secret it holds (any match it allows is still a match without it, starting later), but it
    makes RE2's DFA track 50 counters at every position, which is slow. So it is taken off, and the
    match start it would have given is put back for the allowlists that read the whole match
    (:func:`_match_start`)."""
    for lead in ("", "(?i)"):
        if pattern.startswith(lead + _IDENT_PREFIX):
            return lead + pattern[len(lead + _IDENT_PREFIX) :], True
    return pattern, False


def _match_start(data: bytes, start: int, floor: int) -> int:
    """Where the match would start with the identifier prefix: up to 50 identifier characters back,
    not before ``floor`` (the end of the previous match)."""
    lo = max(floor, start - 50)
    while start > lo and data[start - 1] in _IDENT_CHARS:
        start -= 1
    return start


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The loaded rules, the keyword prefilter, and what was left out."""

    rules: tuple[Rule, ...]
    global_allowlists: tuple[Allowlist, ...]
    keyword_set: Any  # RE2 set of every keyword (escaped literals)
    keyword_rules: tuple[tuple[int, ...], ...]  # for each keyword, the rules that name it
    always: tuple[int, ...]  # rules without keywords: run on every text
    skipped: dict[str, str]
    commit: str


def _allowlist(spec: dict[str, Any]) -> Allowlist:
    regexes = spec.get("regexes") or []
    regex = "|".join(f"(?:{r})" for r in regexes) if regexes else None
    return Allowlist(
        target=spec.get("regexTarget", "secret"),
        condition=spec.get("condition", "OR").upper(),
        regex=regex,
        stopwords=tuple(w.lower() for w in spec.get("stopwords") or ()),
        needs_path=bool(spec.get("paths") or spec.get("commits")),
    )


def _commit(text: str) -> str:
    for line in text.splitlines()[:8]:
        if line.startswith("#") and "commit:" in line:
            return line.split("commit:", 1)[1].split()[0]
    return "unknown"


@functools.cache
def load() -> RuleSet:
    """Parse and compile ``gitleaks.toml`` (once per process, on first use)."""
    raw = RULES_FILE.read_text(encoding="utf-8")
    data = tomllib.loads(raw)
    rules: list[Rule] = []
    skipped: dict[str, str] = {}
    for spec in data.get("rules", []):
        rule_id = spec["id"]
        if "path" in spec:
            skipped[rule_id] = "applies to a file path (" + spec["path"] + "); text has no path"
            continue
        if "regex" not in spec:
            skipped[rule_id] = "has no regex"
            continue
        allowlists = tuple(_allowlist(a) for a in spec.get("allowlists", []))
        rules.append(
            Rule(
                id=rule_id,
                pattern=spec["regex"],
                entropy=float(spec.get("entropy", 0.0)),
                secret_group=int(spec.get("secretGroup", 0)),
                keywords=tuple(k.lower() for k in spec.get("keywords", ())),
                allowlists=allowlists,
                wants_line=any(a.target == "line" for a in allowlists),
            )
        )
    glob = data.get("allowlist")
    global_allowlists = tuple(_allowlist(a) for a in ([glob] if glob else []) + data.get("allowlists", []))
    keywords = sorted({k for r in rules for k in r.keywords})
    kw_set = re2.Set.SearchSet(_options())
    for kw in keywords:
        kw_set.Add(re2.escape(kw.encode()))
    kw_set.Compile()
    index = {kw: i for i, kw in enumerate(keywords)}
    by_kw: list[list[int]] = [[] for _ in keywords]
    for n, rule in enumerate(rules):
        for kw in rule.keywords:
            by_kw[index[kw]].append(n)
    return RuleSet(
        rules=tuple(rules),
        global_allowlists=global_allowlists,
        keyword_set=kw_set,
        keyword_rules=tuple(tuple(sorted(set(r))) for r in by_kw),
        always=tuple(n for n, r in enumerate(rules) if not r.keywords),
        skipped=skipped,
        commit=_commit(raw),
    )


def compile_all() -> list[tuple[str, str]]:
    """Compile every rule and allowlist now; the ``(rule id, error)`` of each that RE2 rejects."""
    errors = []
    rs = load()
    for rule in rs.rules:
        for pattern in [rule.pattern] + [a.regex for a in rule.allowlists if a.regex]:
            try:
                _compiled(pattern)
            except re2.error as exc:
                errors.append((rule.id, str(exc)))
    return errors


def rule_ids() -> tuple[str, ...]:
    """Every rule that runs, by gitleaks' id."""
    return tuple(r.id for r in load().rules)


def skipped() -> dict[str, str]:
    """The rules of the file that do not run, and why."""
    return dict(load().skipped)


def _secret_span(rule: Rule, m: Any) -> tuple[int, int]:
    if rule.secret_group:
        return m.span(rule.secret_group)  # type: ignore[no-any-return]
    for g in range(1, len(m.groups()) + 1):
        start, stop = m.span(g)
        if stop > start >= 0:
            return start, stop
    return m.span()  # type: ignore[no-any-return]


_LINE_REACH = 4096
"""How far a ``line`` allowlist looks either side of a match (bounded, so a long line stays linear)."""


def _line(data: bytes, start: int, stop: int) -> bytes:
    lo, hi = max(0, start - _LINE_REACH), min(len(data), stop + _LINE_REACH)
    first = data.rfind(b"\n", lo, start) + 1 or lo
    last = data.find(b"\n", stop, hi)
    return data[first : last if last >= 0 else hi]


def _allowed(rule: Rule, globals_: tuple[Allowlist, ...], secret: bytes, match: bytes, line: bytes) -> bool:
    if rule.entropy and entropy(secret.decode("utf-8", "replace")) <= rule.entropy:
        return True
    return any(a.allows(secret, match, line) for a in globals_ + rule.allowlists)


def _findings(rule: Rule, data: bytes, globals_: tuple[Allowlist, ...]) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    seen: dict[tuple[bytes, bytes], bool] = {}  # the same secret in the same match: decided once
    stripped = search_pattern(rule.pattern)[1]
    previous_end = 0
    for m in rule.compiled.finditer(data):
        start, stop = _secret_span(rule, m)
        m_start, m_end = m.span()
        if stripped:
            m_start = _match_start(data, m_start, previous_end)
        previous_end = m_end
        if start < 0 or stop <= start:
            continue
        secret = data[start:stop]
        match = data[m_start:m_end].strip(b"\n")
        if rule.wants_line:
            allowed = _allowed(rule, globals_, secret, match, _line(data, m_start, m_end))
        else:
            key = (secret, match)
            allowed = seen.get(key)  # type: ignore[assignment]
            if allowed is None:
                allowed = seen[key] = _allowed(rule, globals_, secret, match, b"")
        if not allowed:
            found.append((start, stop, rule.id))
    return found


def find(data: bytes, only: str | None = None) -> list[tuple[int, int, str]]:
    """Every gitleaks finding in ``data`` (UTF-8 bytes) as ``(start, stop, rule id)`` byte spans of the
    secret, in rule order. ``only`` runs that one rule (by id)."""
    rs = load()
    if only is not None:  # as gitleaks validates a rule: that rule alone, its keywords still a prefilter
        low = data.lower()
        return [
            f
            for r in rs.rules
            if r.id == only and (not r.keywords or any(k.encode() in low for k in r.keywords))
            for f in _findings(r, data, rs.global_allowlists)
        ]
    hits = rs.keyword_set.Match(data.lower()) or []
    if not hits and not rs.always:
        return []
    todo = sorted({n for k in hits for n in rs.keyword_rules[k]} | set(rs.always))
    found: list[tuple[int, int, str]] = []
    for n in todo:
        found.extend(_findings(rs.rules[n], data, rs.global_allowlists))
    return found
