"""Secret scanning: find credentials in text, redact them, never hand the secret back.

Two rule sets read every text, after Unicode normalisation (NFKC, format characters such as the
zero-width space removed: :mod:`dreamtui.core.secret_rules.normalize`; every span is mapped back to
the original text, so redaction cuts exactly the secret):

- gitleaks' maintained rule set (:mod:`dreamtui.core.secret_rules.gitleaks`: its ``gitleaks.toml``
  as data, 217 rules run on RE2, tested with gitleaks' own true and false examples);
- this module's own rules: cloud keys (AWS access keys, Google), GitHub, GitLab, Slack, Stripe, npm,
  Anthropic, OpenAI, private key blocks, JWTs, ``Bearer`` tokens, passwords inside URLs
  (``postgres://user:pw@host``), a password written in prose ("the password is …", "the pass is …"),
  generic ``password=`` / ``pw=`` / ``token:`` / ``api_key`` assignments whose value looks random
  (Shannon entropy), and, by the words written before them, an AWS secret access key, an Azure
  storage account key, and any random-looking token of 16+ characters right after "key", "token",
  "secret" or "password" in prose (a key one character off its format is still a secret).

This is the one redaction of dreamtui: every path to disk or to a model goes through :func:`redact`
(the memory writer, commit messages, the ledger's text columns, the waking message, the CLI's
output, what is sent to Claude).
Text may be plain, frontmatter-like, or JSON-escaped transcript text (``\\"token\\": \\"…\\"``,
``\\n`` escapes inside a key block): every rule accepts a JSON escape right before the secret, and
no span ends on an escape's backslash.

Allow-list comments (``# gitleaks:allow``, ``pragma: allowlist secret``) are deliberately ignored:
transcript text is attacker-controllable, so a comment inside it cannot switch scanning off.

Every quantifier of the own rules is bounded and every token rule has a left boundary that excludes
its own body characters, so a match can only start at the beginning of a run; gitleaks' rules run on
RE2. Scanning is linear in the text (a 10 MB line takes a few seconds at most).
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from dreamtui.core.models import SecretFinding
from dreamtui.core.secret_rules import gitleaks, joins
from dreamtui.core.secret_rules.normalize import normalize

# A secret may follow a word boundary, or a JSON escape such as ``\n``/``\t``/``\"``.
_END_ALNUM = r"(?![A-Za-z0-9])"

# A placeholder is a whole value made only of these words (and digits such as ``1234`` or ``0000``,
# and punctuation): ``<your-password>``, ``changeme``, ``your_token_here``, ``xxxx``, ``example``.
# A value that merely holds one of them (``Tr0ub4dorSecret!x9``, ``Example9Prod!``) is not one.
_PLACEHOLDER_TEXT = """
    your yours my our the a an this that here goes go put insert enter add fill in replace with
    change changeme me set to new real actual value string str example examples sample dummy
    fake mock test testing tests placeholder redacted hidden masked omitted todo fixme tbd none
    null nil undefined empty foo bar baz qux foobar secret secrets password passwords passwd
    pass passphrase pwd pw token tokens key keys api apikey access auth client private id app db
    user username admin prod production dev staging local default generated
"""
PLACEHOLDER_WORDS = frozenset(_PLACEHOLDER_TEXT.split())
_WORD_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|[^\W\d_]+")
ENTROPY_THRESHOLD = 3.0
"""Minimum Shannon entropy (bits per character) of a generic assignment's value."""
GENERIC_MIN_LEN = 8


def shannon_entropy(value: str) -> float:
    """Bits per character of ``value`` (0.0 for an empty string)."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _char_classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def _placeholder_piece(piece: str) -> bool:
    """One word or digit run of a value: a placeholder word, ``x``/``xxxx``, or digits that count up
    from 0 or 1 (``1234``, ``12345678``) or repeat one digit (``0000``)."""
    if piece.isdigit():
        repeated = len(piece) >= 3 and len(set(piece)) == 1
        return repeated or "0123456789".startswith(piece) or "123456789".startswith(piece)
    return piece in PLACEHOLDER_WORDS or set(piece) == {"x"}


def _is_placeholder(value: str) -> bool:
    """The whole value is a placeholder (``<your-password>``, ``changeme``, ``your_token_here``,
    ``xxxx``, ``test1234``), or a variable reference (``$X``, ``${X}``, ``<x>``, ``os.…``).

    Every word and digit run of the value must be a placeholder piece: a value that only contains a
    placeholder word (``Tr0ub4dorSecret!x9``, ``Example9Prod!``, ``test1234XYZ!q``) is not one."""
    if value.startswith(("$", "%", "{", "<", "env.", "os.", "process.", "self.", "config.", "settings.")):
        return True
    return all(_placeholder_piece(m.group().lower()) for m in _WORD_PIECES.finditer(value))


def looks_random(value: str) -> bool:
    """A generic assignment's value that looks like a real credential, not a placeholder.

    At least 8 characters, at least two character classes (lower/upper/digit/symbol), entropy at
    least :data:`ENTROPY_THRESHOLD`, not a placeholder (made only of placeholder words), not a variable
    reference.
    """
    if len(value) < GENERIC_MIN_LEN or _is_placeholder(value):
        return False
    if len(set(value)) <= 3:  # xxxxxxxx, ********, abababab
        return False
    if re.fullmatch(r"[A-Za-z_][A-Za-z_.]*", value):  # an identifier or dotted name, no digits
        return False
    return _char_classes(value) >= 2 and shannon_entropy(value) >= ENTROPY_THRESHOLD


def _all_three_cases(value: str) -> bool:
    """Upper and lower case letters and digits: a random token, not a path, a word or a hex hash."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


def _has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _bearer_token(value: str) -> bool:
    """A ``Bearer`` header's token, not prose ("Bearer token-based-authentication")."""
    mixed_case = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return looks_random(value) and (_has_digit_and_letter(value) or mixed_case)


def _prose_password(value: str) -> bool:
    """The value after "the password is": a real password, not a word ("stored", "case-sensitive").

    At least 8 characters, not a placeholder or variable, and letters with digits, or upper and lower
    case with a symbol.
    """
    if len(value) < GENERIC_MIN_LEN or _is_placeholder(value) or value.startswith(("/", "~", "http")):
        return False
    if _has_digit_and_letter(value):
        return True
    return _char_classes(value) >= 3 and any(c.isupper() for c in value) and any(c.islower() for c in value)


@dataclass(frozen=True, slots=True)
class Rule:
    """One secret format: a compiled pattern, the group holding the secret, an optional check."""

    name: str
    pattern: re.Pattern[str]
    group: int = 0
    check: Callable[[str], bool] | None = None
    needles: tuple[str, ...] = ()  # cheap prefilter: the rule cannot match without one of these
    lower: bool = False  # the pattern is lower-case and runs on the lower-cased text
    fallback: re.Pattern[str] | None = None  # ``lower`` rules: the same pattern with IGNORECASE
    context: tuple[str, ...] = ()  # one of these words must be written up to 80 characters before it


def _lower_rule(
    name: str, pattern: str, *, group: int, check: Callable[[str], bool], needles: tuple[str, ...]
) -> Rule:
    """A rule whose lower-case ``pattern`` runs on the lower-cased text (same offsets), which is much
    faster than IGNORECASE; the IGNORECASE form is kept for text whose length ``lower()`` changes."""
    fallback = re.compile(pattern.replace("[a-z0-9", "[A-Za-z0-9"), re.IGNORECASE)
    return Rule(
        name, re.compile(pattern), group=group, check=check, needles=needles, lower=True, fallback=fallback
    )


_GENERIC_KEYS = (
    r"password|passwd|passphrase|pwd|pw|secret|token|api[_\-]?key|apikey|access[_\-]?key|"
    r"auth[_\-]?key|credentials?|private[_\-]?key|client[_\-]?secret"
)
# "the password is X", "the password for the staging db was X", "passphrase: X" (lower-cased text)
_PROSE_PASSWORD = (
    r"(?<![a-z0-9])(?:password|passphrase|passcode|passwd|pass|pwd|pw)"
    r"(?:[ \t]{1,4}(?:for|to|of|on)(?:[ \t]{1,4}[^\s]{1,40}){1,4}?)?"  # for the staging db
    r"[ \t]{1,4}(?:is|was|is now|is still|is set to|was set to|has been set to|was changed to|changed to|became)"
    r"[ \t]{0,4}:?[ \t]{0,4}"
    r"(?:\\{0,3}[\"'`])?"  # an opening quote
    r"([^\s\"'`\\]{7,127}[^\s\"'`\\.,;:)])"  # the value, end punctuation left out
)


# a token right after "key", "token", "secret", "password"… in prose: "the CI token is X", "key X"
_PROSE_TOKEN = (
    r"(?<![a-z0-9])(?:key|token|secret|password|passwd|passphrase|pwd|apikey|credential)s?(?![a-z0-9])"
    r"(?:[ \t]{0,4}(?::=|=>|[=:])[ \t]{0,4}"  # key: X / token = X
    r"|[ \t]{1,4}(?:(?:is|was|now|here|of|for|to|as|set|are|reads|=|:)[ \t]{1,4}){0,2})"  # token is now X
    r"(?:\\{0,3}[\"'`])?"  # an opening quote
    r"([a-z0-9_\-+/=]{16,256})(?![a-z0-9_\-+/=])"
)
PROSE_TOKEN_MIN = 16
"""The shortest token in prose: ``AKIA`` + 15, an AWS key one character short, is 19."""
PROSE_TOKEN_ENTROPY = 3.5
"""Minimum Shannon entropy of a token in prose (:func:`_prose_token`)."""
_HEX = re.compile(r"[0-9a-f\-]+|[0-9A-F\-]+")


def _letter_digit_switches(value: str) -> int:
    """How often a letter is followed by a digit or a digit by a letter."""
    return sum(
        a.isdigit() != b.isdigit()
        for a, b in zip(value, value[1:], strict=False)
        if a.isalnum() and b.isalnum()
    )


def _prose_token(value: str) -> bool:
    """A token of 16+ characters right after "key", "token", "secret"… that looks random: letters and
    digits, not hex (a hash, a uuid, a key fingerprint), not a placeholder or an option, entropy at
    least :data:`PROSE_TOKEN_ENTROPY`, and upper and lower case with digits or letters and digits
    mixed (3+ switches). A key one character off its format (``ghp_`` + 35) is still a secret."""
    if len(value) < PROSE_TOKEN_MIN or not _has_digit_and_letter(value) or _HEX.fullmatch(value):
        return False
    if value.startswith(("/", "-", "~")) or _is_placeholder(value):
        return False
    if shannon_entropy(value) < PROSE_TOKEN_ENTROPY:
        return False
    return _all_three_cases(value) or _letter_digit_switches(value) >= 3


def _lit(literal: str) -> str:
    """``literal`` that starts a token, followed by a check that it is the start of its run: the
    character before it is not a token character, unless it ends a JSON escape (``\\n`` …).

    The literal comes first so the regex engine can search for it fast; the fixed-width lookbehind
    after it keeps matches at run starts only (so scanning stays linear)."""
    return literal + r"(?:(?<![A-Za-z0-9_\-]" + literal + r")|(?<=\\[ntr]" + literal + r"))"


RULES: tuple[Rule, ...] = (
    Rule(
        "aws-access-key",
        re.compile(r"(" + _lit("A[KS]IA") + r"[A-Z0-9]{16})" + _END_ALNUM),
        group=1,
        needles=("AKIA", "ASIA"),
    ),
    Rule(
        "google-api-key",
        re.compile(r"(" + _lit("AIza") + r"[0-9A-Za-z_\-]{35})" + _END_ALNUM),
        group=1,
        needles=("AIza",),
    ),
    Rule(
        "stripe-key",
        re.compile(
            r"((?:"
            + _lit("sk_")
            + "|"
            + _lit("rk_")
            + r")(?:live|test|prod)_[A-Za-z0-9]{10,247})"
            + _END_ALNUM
        ),
        group=1,
        check=_has_digit_and_letter,
        needles=("sk_", "rk_"),
    ),
    Rule(
        "npm-token",
        re.compile(r"(" + _lit("npm_") + r"[A-Za-z0-9]{36})" + _END_ALNUM),
        group=1,
        check=_has_digit_and_letter,
        needles=("npm_",),
    ),
    Rule(
        "gitlab-token",
        re.compile(r"(" + _lit("glpat-") + r"[A-Za-z0-9_\-]{20,255})" + _END_ALNUM),
        group=1,
        check=_has_digit_and_letter,
        needles=("glpat-",),
    ),
    Rule(
        "github-token",
        re.compile(
            r"("
            + _lit("gh")
            + r"[pousr]_[A-Za-z0-9]{36,255}|"
            + _lit("github_pat_")
            + r"[A-Za-z0-9_]{22,255})"
            + _END_ALNUM
        ),
        group=1,
        needles=("gh", "github_pat_"),
    ),
    Rule(
        "slack-webhook",
        re.compile(r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,200}"),
        needles=("hooks.slack.com",),
    ),
    Rule(
        "slack-token",
        re.compile(r"(" + _lit("xox") + r"[abprse]-[A-Za-z0-9\-]{10,250})" + _END_ALNUM),
        group=1,
        check=_has_digit_and_letter,
        needles=("xox",),
    ),
    Rule(
        "anthropic-key",
        re.compile(r"(" + _lit("sk-") + r"ant-[A-Za-z0-9_\-]{20,250})" + _END_ALNUM),
        group=1,
        needles=("sk-ant-",),
    ),
    Rule(
        "openai-key",
        re.compile(
            r"(" + _lit("sk-") + r"(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,250})" + _END_ALNUM
        ),
        group=1,
        check=lambda v: _has_digit_and_letter(v) and shannon_entropy(v) >= 3.5,
        needles=("sk-",),
    ),
    Rule(
        "jwt",
        re.compile(
            r"(" + _lit("eyJ") + r"[A-Za-z0-9_\-]{8,4096}\.eyJ[A-Za-z0-9_\-]{8,8192}\.[A-Za-z0-9_\-]{8,4096})"
        ),
        group=1,
        needles=("eyJ",),
    ),
    # The 40-character AWS secret access key has no prefix: flagged when "aws", "secret" or "amazon" is
    # written up to 80 characters before it and it looks random (upper, lower and digits).
    Rule(
        "aws-secret-key",
        re.compile(r"(?<![A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        group=1,
        check=lambda v: _all_three_cases(v) and shannon_entropy(v) >= 4.0,
        needles=("aws", "secret", "amazon"),
        context=("aws", "secret", "amazon"),
    ),
    # An Azure storage account key: 64 random bytes in base64 (86 characters and "=="), after
    # ``AccountKey=`` or with "azure", "storage" or "accountkey" written up to 80 characters before it.
    Rule(
        "azure-storage-key",
        re.compile(r"(?<![A-Za-z0-9/+\-])([A-Za-z0-9/+]{86}==)(?![A-Za-z0-9/+=])"),
        group=1,
        check=lambda v: _all_three_cases(v) and shannon_entropy(v) >= 4.5,
        needles=("azure", "storage", "accountkey"),
        context=("azure", "storage", "accountkey"),
    ),
    Rule(
        "url-credentials",
        re.compile(r"://(?<=[A-Za-z0-9]://)[^\s/:@\"'\\]{0,64}:([^\s/@\"'\\]{6,128})@"),
        group=1,
        check=lambda v: not _is_placeholder(v),
        needles=("://",),
    ),
    # Run on the lower-cased text (same length, same offsets): much faster than IGNORECASE.
    _lower_rule(
        "bearer-token",
        r"bearer(?:(?<![a-z0-9_\-]bearer)|(?<=\\[ntr]bearer))[ \t]{1,8}([a-z0-9\-._~+/]{16,4096}={0,3})",
        group=1,
        check=_bearer_token,
        needles=("bearer",),
    ),
    _lower_rule("password-in-prose", _PROSE_PASSWORD, group=1, check=_prose_password, needles=("pass", "pw")),
    _lower_rule(
        "generic-secret",
        r"(?:" + _GENERIC_KEYS + r")[a-z0-9_\-]{0,20}"  # key name (db_password, token_v2)
        r"(?:\\{0,3}[\"'])?[ \t]{0,4}(?::=|=>|[=:])[ \t]{0,4}"  # "key": / key = / key =>
        r"(?:\\{0,3}[\"'`])?"  # opening quote, maybe escaped
        r"([a-z0-9+/_\-.~!@#$%^*|]{8,256}={0,3})",  # the value
        group=1,
        check=looks_random,
        needles=(
            "pass",
            "pwd",
            "pw",
            "secret",
            "token",
            "api_key",
            "api-key",
            "apikey",
            "access_key",
            "access-key",
            "auth_key",
            "auth-key",
            "credential",
            "private_key",
            "private-key",
        ),
    ),
)
RULES += (
    _lower_rule(
        "token-in-prose",
        _PROSE_TOKEN,
        group=1,
        check=_prose_token,
        needles=("key", "token", "secret", "pass", "pwd", "credential"),
    ),
)
RULE_NAMES: tuple[str, ...] = ("private-key",) + tuple(r.name for r in RULES)
"""This module's own rules; gitleaks' rule ids are :func:`dreamtui.core.secret_rules.gitleaks.rule_ids`."""
# One search of the lower-cased text for any rule's literal: most text (keys, paths, prose) has none,
# and then no rule needs to run. A superset of every rule's prefilter (each needle lower-cased).
_ANY_NEEDLE = re.compile(
    "|".join(
        sorted(
            {re.escape(n.lower()) for r in RULES for n in r.needles} | {"private key"}, key=len, reverse=True
        )
    )
)
assert all(r.needles for r in RULES), "every rule needs a prefilter needle for _ANY_NEEDLE to be safe"

_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# The base64 body when no END marker follows: base64, whitespace, ``\n`` escapes, PEM headers.
_PEM_BODY = re.compile(r"(?:[A-Za-z0-9+/=\s:,]|\\[nr]){0,20000}+")
_PEM_MAX = 20000


def _private_keys(text: str) -> list[tuple[int, int, str]]:
    """Private key blocks: BEGIN … END (at most 20 kB apart), or BEGIN plus its base64 body."""
    if "PRIVATE KEY" not in text:
        return []
    ends = [m.start() for m in _PEM_END.finditer(text)]
    end_stops = [m.end() for m in _PEM_END.finditer(text)] if ends else []
    found: list[tuple[int, int, str]] = []
    pos = 0
    for m in _PEM_BEGIN.finditer(text):
        if m.start() < pos:
            continue
        i = bisect.bisect_left(ends, m.end())
        if i < len(ends) and ends[i] - m.end() <= _PEM_MAX:
            stop = end_stops[i]
        else:
            stop = _PEM_BODY.match(text, m.end()).end()  # type: ignore[union-attr]
        found.append((m.start(), stop, "private-key"))
        pos = stop
    return found


def _own_rules(text: str) -> list[tuple[int, int, str]]:
    """The findings of this module's own rules (and private key blocks) in ``text``."""
    lowered = text.lower()
    if not _ANY_NEEDLE.search(lowered):
        return []
    found = _private_keys(text)
    decided: dict[tuple[str, str], bool] = {}  # a value repeated in one text is checked once
    for rule in RULES:
        hay = lowered if rule.lower else text
        if not any(map((lowered if rule.context else hay).__contains__, rule.needles)):
            continue
        pattern = rule.pattern
        if rule.fallback is not None and len(lowered) != len(text):  # rare: lower() changed the length ("İ")
            pattern, hay = rule.fallback, text
        matches = _near_context(rule, pattern, hay, lowered) if rule.context else pattern.finditer(hay)
        for m in matches:
            start, stop = m.span(rule.group)
            if rule.check is not None:
                key = (rule.name, text[start:stop])
                ok = decided.get(key)
                if ok is None:
                    ok = decided[key] = rule.check(key[1])
                if not ok:
                    continue
            if rule.context and not any(w in lowered[max(0, start - 80) : start] for w in rule.context):
                continue
            found.append((start, stop, rule.name))
    return found


_CONTEXT_REACH = 80
"""How far before a secret its context word may be written (``Rule.context``)."""
_CONTEXT_SECRET_MAX = 128
"""The longest match of a rule with a context (the Azure key: 88 characters)."""


def _near_context(rule: Rule, pattern: re.Pattern[str], hay: str, lowered: str) -> list[re.Match[str]]:
    """``pattern``'s matches that start within reach of a context word. Only those windows are
    searched (a pattern without a literal is slow over a whole text in ``re``); a match the window's
    end may have cut is confirmed on the whole text."""
    reach = _CONTEXT_REACH + 1 + _CONTEXT_SECRET_MAX + 1
    windows: list[list[int]] = []
    for lo in sorted(m.start() for w in rule.context for m in re.finditer(re.escape(w), lowered)):
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = lo + reach
        else:
            windows.append([lo, lo + reach])
    out: list[re.Match[str]] = []
    for lo, hi in windows:
        for m in pattern.finditer(hay, lo, min(hi, len(hay))):
            if m.end() >= hi:
                whole = pattern.match(hay, m.start())
                if whole is None:
                    continue
                m = whole
            out.append(m)
    return out


def _gitleaks_rules(text: str) -> list[tuple[int, int, str]]:
    """The findings of gitleaks' rule set in ``text`` (character offsets)."""
    data = text.encode("utf-8", "surrogatepass")
    found = gitleaks.find(data)
    if found and len(data) != len(text):  # not ASCII: byte offsets to character offsets

        def char_at(b: int) -> int:
            return len(data[:b].decode("utf-8", "surrogatepass"))

        found = [(char_at(a), char_at(b), rule) for a, b, rule in found]
    # Some rules' classes take a backslash: never end a span inside a JSON escape (``…\"``).
    return [(a, _before_backslashes(text, a, b), rule) for a, b, rule in found]


def _before_backslashes(text: str, start: int, stop: int) -> int:
    while stop > start + 1 and text[stop - 1] == "\\":
        stop -= 1
    return stop


_WORD = re.compile(r"[A-Za-z][a-z]*")


def _across_splits(text: str, spaces: tuple[int, ...]) -> list[tuple[int, int, str]]:
    """The findings that cross a split point of ``text`` (a line break or a non-ASCII space inside
    what may be one token: :mod:`dreamtui.core.secret_rules.joins`), read with the points taken out.

    A finding whose part after the split point is a plain word ("…QH4B3" / "Enter the password",
    a key fingerprint / "gpg: Good signature") is the next line's first word, not the rest of a key."""
    points = joins.split_points(text, spaces)
    if not points:
        return []
    found: list[tuple[int, int, str]] = []
    for window in joins.windows(text, points):
        for start, stop, rule in _own_rules(window.text) + _gitleaks_rules(window.text):
            crossed = window.crossing(start, stop)
            if crossed is None:
                continue
            a, b, after = crossed
            if _WORD.fullmatch(text, after, b):
                continue
            found.append((a, b, rule))
    return found


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Every secret in ``text``, as merged ``(start, stop, rule)`` spans in order (see :func:`scan`)."""
    if not text:
        return []
    norm = normalize(text)
    found = _own_rules(norm.text) + _gitleaks_rules(norm.text) + _across_splits(norm.text, norm.spaces)
    if not found:
        return []
    if norm.marks:
        found = [(*norm.span(start, stop), rule) for start, stop, rule in found]
    if REDACTED in text:  # a redaction mark is never a secret (so redacting twice changes nothing)
        marks = [m.span() for m in _MARK.finditer(text)]
        found = [f for f in found if not any(a <= f[0] and f[1] <= b for a, b in marks)]
        if not found:
            return []
    # the same span found by a format rule is named by it, not by the catch-all token-in-prose
    found.sort(key=lambda f: (f[0], -f[1], f[2] == "token-in-prose"))
    merged: list[tuple[int, int, str]] = []
    last = -1
    for start, stop, rule_name in found:
        if merged and start <= last:
            if stop > last:
                merged[-1] = (merged[-1][0], stop, merged[-1][2])
                last = stop
            continue
        merged.append((start, stop, rule_name))
        last = stop
    return merged


def scan(text: str) -> list[SecretFinding]:
    """Every secret in ``text``, as (rule, start, end) spans, ordered by position; never the secret.

    The rules read ``text`` as :mod:`dreamtui.core.secret_rules.normalize` folds it (NFKC, invisible
    characters and marks removed, look-alike letters read as Latin ones), and once more with the
    points that may split a token taken out (:mod:`dreamtui.core.secret_rules.joins`); the spans are
    those of the original ``text``. This module's own rules come first, then gitleaks' rule set.
    Overlapping or touching findings are merged into the earliest, longest one (named by the first
    rule that found its start).
    """
    return [SecretFinding(rule, start, stop) for start, stop, rule in _spans(text)]


def has_secret(text: str) -> bool:
    """True when ``text`` holds at least one secret."""
    return bool(_spans(text))


def rules_found(text: str) -> list[str]:
    """The distinct rule names found in ``text``, in order of first appearance."""
    return list(dict.fromkeys(rule for _, _, rule in _spans(text)))


REDACTED = "[REDACTED:"
"""How a redaction starts: ``[REDACTED:<rule>]``."""
_MARK = re.compile(r"\[REDACTED:[a-z0-9-]{1,80}\]")


def was_redacted(text: str) -> bool:
    """``text`` shows where a secret was (a ``[REDACTED:<rule>]`` mark): a person must rewrite it."""
    return REDACTED in text


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED:<rule>]``."""
    spans = _spans(text)
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, stop, rule in spans:
        out.append(text[pos:start])
        out.append(f"{REDACTED}{rule}]")
        pos = stop
    out.append(text[pos:])
    return "".join(out)
