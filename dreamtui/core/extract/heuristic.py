"""The offline extractor: finds lesson-shaped sentences with plain rules, no model.

Three shapes of moment make a lesson:

* a person correcting or redirecting the assistant ("no, don't…", "never…", "use X instead",
  "we tried that", "that's wrong") → ``feedback``;
* a person stating a preference or rule ("I prefer…", "from now on…", "make sure to…") → ``feedback``;
* the assistant stating a root cause or conclusion after a failure ("the root cause was…",
  "turns out…", "this fails because…") → ``project``.

Each candidate's quote is the sentence itself, cut verbatim from the turn text (so verification
finds it in the raw transcript); a sentence under six words is joined with its neighbour in the same
turn or skipped. The claim is a cleaned imperative form of the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.models import Digest, ExtractionResult, RawCandidate, Turn

MIN_QUOTE_WORDS = 6
MAX_QUOTE_CHARS = 400
LONG_PERSON_TURN = 1200
PERSON_KINDS = {"text", "prompt", "rejection", "queued"}

# A sentence ends at . ! ? (followed by space or end) or at a line break.
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?]+(?=\s|$)|$)", re.MULTILINE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODEISH_LINE = re.compile(r"^\s*(?:[>$#➜%]|\{|\}|\[|\]|[-+]{3}|@@|\w+\s*[:=]\s*[\[{(]|Traceback|File \")")
_ESCAPES = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b.|[\x00-\x08\x0b-\x1f\x7f]")

# Leading words that carry no meaning for the claim ("No, ", "Please ", "Actually, ").
_LEAD = re.compile(
    r"^(?:(?:no+|nope|nah|ok(?:ay)?|well|hmm+|ugh|sorry|actually|wait|again|also|and|but|so|oh|"
    r"honestly|seriously|look|listen|hey|please|pls|btw|fyi|guys|claude)\b[\s,.!:;—–-]*)+",
    re.IGNORECASE,
)

_I = re.IGNORECASE
# A person correcting / redirecting: pattern, kind.
_PERSON_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?:no+|nope|stop)\b[\s,.!:;—–-]", _I), "correction"),
    (re.compile(r"^(?:please\s+)?(?:don'?t|do not|never|stop|avoid|quit)\b", _I), "correction"),
    (re.compile(r"\b(?:please|you should|you must|we should|we must)\s+(?:always|never|not|stop|avoid)\b", _I),
     "correction"),
    (re.compile(r"^(?:please\s+)?always\b", _I), "preference"),
    (re.compile(r"\b(?:always|never)\s+(?:use|run|call|commit|push|put|add|write|edit|touch|delete|"
                r"remove|mock|skip|ask|check|prefer|keep|do|make|change|rename|use|format|test|merge|"
                r"rebase|import|start|set|leave|trust|assume|rely|hardcode|hard-code|log|print|return|"
                r"catch|store|send|install|pin|bump|modify|create|open|close)\b", _I), "correction"),
    (re.compile(r"\buse\s+[^.!?\n]{1,60}?\s+instead\b", _I), "correction"),
    (re.compile(r"\binstead of\s+[^.!?\n]{1,60}?,\s*(?:use|call|run|do|try|just)\b", _I), "correction"),
    (re.compile(r"\bwe(?:'ve| have)?\s+(?:already\s+)?tried\s+(?:that|this)\b", _I), "correction"),
    (re.compile(r"\b(?:that|this|it)(?:'s| is| was)\s+(?:wrong|not right|incorrect|not what I|not how)\b", _I),
     "correction"),
    (re.compile(r"\bthat(?:'s| is)\s+not\s+(?:the|a|how|what|why)\b", _I), "correction"),
    (re.compile(r"\bI\s+(?:said|told you|asked you)\b", _I), "correction"),
    (re.compile(r"\bI\s+don'?t\s+think\s+(?:we|you)\s+(?:need|should|want)\b", _I), "correction"),
    (re.compile(r"\byou\s+(?:can|could)\s+(?:just\s+)?(?:use|set|call|run)\b[^.!?\n]*\b(?:less work|simpler|"
                r"easier|cleaner|instead|better)\b", _I), "correction"),
    (re.compile(r"\bI(?:'d| would)?\s+(?:really\s+)?(?:prefer|rather)\b", _I), "preference"),
    (re.compile(r"\bI\s+(?:like|want|need)\s+(?:you\s+to|it\s+to|us\s+to|the|my|our|all|every)\b", _I),
     "preference"),
    (re.compile(r"\bI\s+(?:don'?t|do not|never)\s+(?:want|like)\b", _I), "preference"),
    (re.compile(r"\b(?:from now on|going forward|in (?:the )?future|next time|in general|as a rule|"
                r"by default)\b", _I), "preference"),
    (re.compile(r"\b(?:make sure|be sure|remember|don'?t forget)\s+(?:to|that|you)\b", _I), "preference"),
    (re.compile(r"\b(?:you|we)\s+(?:should|must|need to|have to)\s+(?!be able|have been)\w+", _I),
     "preference"),
    (re.compile(r"\blet'?s\s+keep\b", _I), "preference"),
    (re.compile(r"\bI\s+(?:really\s+)?like\b", _I), "preference"),
    (re.compile(r"\b(?:every time|each time|everywhere|whenever|every single time)\b", _I), "preference"),
    (re.compile(r"^before\s+(?:you|we|committing|pushing|merging|deploying|changing|touching)\b", _I),
     "preference"),
    (re.compile(r"^(?:use|run|call|set|enable)\b[^.!?\n]*\bonly\s+(?:for|when|in|if|on)\b", _I), "preference"),
    (re.compile(r"\b\w+\s+must(?:n't| not)?\s+\w+", _I), "preference"),
    (re.compile(r"[,;]\s*(?:and\s+|but\s+)?(?:don'?t|do not|never)\s+\w+", _I), "correction"),
    (re.compile(r"\bnever\b", _I), "correction"),
    (re.compile(r"(?<!\bit )(?<!\bthat )(?<!\bthis )\balways\s+\w+", _I), "preference"),
    (re.compile(r"\bwe\s+(?:got|were|have been|'ve been)\s+(?:burned|burnt|bitten)\b|\bbit us\b", _I),
     "correction"),
    (re.compile(r"\bwe\s+(?:use|don'?t use|never use|always use|only use)\b", _I), "fact"),
    (re.compile(r"\b(?:is|are)\s+[\w ./`-]{1,40},\s+not\s+", _I), "fact"),
    # third round: general shapes of a stated rule (imperative + scope or reason; "any/every X ...")
    (re.compile(r"^(?:only\s+)?(?:use|run|put|keep|add|set|write|report|send|ship|route|pin|name|tag|"
                r"store|test|check|ask|wait|resend|retry|deploy|commit|merge|open|prefer|stick)\b[^?]*"
                r"(?:\b(?:any|anything|every|everything|all|always|whenever|each)\b|,\s*(?:the|that's|that is|"
                r"it|they|we|otherwise|because|since|so)\b)", _I), "preference"),
    (re.compile(r"^(?:any|every|all|no)\s+\w+(?:\s+\w+){0,6}\s+(?:is|are|go|goes|must|should|has|have|"
                r"need|needs|get|gets|belong|belongs)\b", _I), "preference"),
    (re.compile(r"\b\w+\s+(?:go|goes|belong|belongs|live|lives)\s+(?:in|to|through|under)\s+[^,.!?]{1,40},"
                r"\s+not\s+", _I), "fact"),
    (re.compile(r",\s+always\b", _I), "preference"),
    # second round (general forms, added after the first held-out measurement; see docs/extractors.md)
    (re.compile(r"\b(?:we|we're|we are|it's|it is|they're|they are)\s+[\w ./`-]{1,40},\s+not\s+", _I), "fact"),
    (re.compile(r"\b(?:has|have|needs?)\s+to\s+(?!be able)\w+", _I), "preference"),
    (re.compile(r"\bleave\s+(?:it|them|that|this|those)\s+alone\b|\bkeep\s+it\s+that\s+way\b|"
                r"\bdon'?t\s+touch\b", _I), "correction"),
    (re.compile(r"[,;]\s*otherwise\b", _I), "preference"),
    (re.compile(r"\bwe\s+(?:always\s+|never\s+|only\s+)?(?:write|name|keep|put|store|deploy|tag|format|"
                r"release|ship|pin|version|document)\b", _I), "fact"),
    (re.compile(r"^(?!.*\b(?:I'm|I am|I was)\s+asking\b)[^?]*\b\w+\s+(?:\w+\s+){0,6}because\s+(?:of\s+)?"
                r"(?:the|a|an|it|they|we|our|this|that)\b", _I), "fact"),
    (re.compile(r"\b(?:the|our|this)\s+[\w`./-]+(?:\s+[\w`./-]+){0,3}\s+is\s+`?[\w./-]+`?,\s+not\s+`?[\w./-]+", _I),
     "fact"),
]

# The assistant stating a root cause or a conclusion after a failure.
_ASSISTANT_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\broot cause\b", _I), "cause"),
    (re.compile(r"\bthe\s+(?:real\s+|actual\s+|underlying\s+)?(?:issue|problem|bug|culprit|cause)\s+"
                r"(?:was|is|here is|turned out)\b", _I), "cause"),
    (re.compile(r"\bI see the (?:issue|problem)\b\s*[-—–:]", _I), "cause"),
    (re.compile(r"\b(?:it\s+)?turns?\s+out\b|\bit turned out\b", _I), "cause"),
    (re.compile(r"\b(?:this|it|that|the \w+)\s+(?:fails|failed|breaks|broke|happens|happened|hangs|hung|"
                r"crashes|crashed)\s+because\b", _I), "cause"),
    (re.compile(r"\b(?:was|is|were|are)\s+caused\s+by\b", _I), "cause"),
    (re.compile(r"\bthe reason\s+(?:was|is)\s+that\b", _I), "cause"),
    (re.compile(r"\bthat(?:'s| is| was)\s+why\b", _I), "cause"),
    (re.compile(r"\b(?:is|was)\s+the\s+(?:bug|problem|issue|culprit|cause)\b", _I), "cause"),
    (re.compile(r"^(?:interesting|aha|ah|oh)[!.,]", _I), "finding"),
    (re.compile(r"\blesson(?:s)? learned\b|\bnote to self\b|\bin the future,? (?:I|we) should\b", _I), "cause"),
]

_NOT_A_LESSON = re.compile(
    r"^(?:let me|let's see|now let me|i'll|i will|i'm going to|i am going to|here's|here is|great|perfect|"
    r"excellent|done|thanks|thank you|you're (?:absolutely )?right)\b"
    r"|\b(?:never ?mind|don'?t worry|do not worry|don'?t bother|no worries|no problem|no need to worry)\b"
    r"|^i\s+(?:don'?t|do not)\s+like\s+(?:that|this|it)\b",
    _I,
)
_CODE_TOKEN = re.compile(r"`|/\w|\w\.\w{1,5}\b|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w+\b|--\w|\(\)")
_PROJECT_WORDS = re.compile(r"\b(?:this|the|our)\s+(?:project|repo|repository|codebase|app|module|file)\b|\bhere\b"
                            r"|\b(?:we|we're|we've|let's|lets|our|us)\b", _I)
_GLOBAL_KINDS = {"preference"}


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int


def _sentences(text: str) -> list[_Span]:
    """Sentence spans of ``text`` outside fenced code blocks and code/log-looking lines."""
    spans: list[_Span] = []
    in_fence = False
    pos = 0
    for line in text.splitlines(keepends=True):
        start = pos
        pos += len(line)
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        body = line.rstrip("\r\n")
        if in_fence or not body.strip() or _CODEISH_LINE.match(body) or body.startswith(("    ", "\t")):
            continue
        for m in _SENTENCE.finditer(body):
            seg = m.group(0)
            if not seg.strip():
                continue
            lead = len(seg) - len(seg.lstrip())
            s = start + m.start() + lead
            e = start + m.start() + len(seg.rstrip())
            if e > s:
                spans.append(_Span(s, e))
    return spans


def _framing(text: str, spans: list[_Span]) -> list[_Span]:
    """In a long person turn keep only the first and last paragraph: the person's own framing.

    The middle of a long prompt is mostly pasted material (docs, logs, specs) whose "always" and
    "never" are somebody else's rules, not the person's lesson.
    """
    breaks = [m.start() for m in re.finditer(r"\n\s*\n", text)]
    if not breaks:
        return spans
    first_end, last_start = breaks[0], breaks[-1]
    return [sp for sp in spans if sp.end <= first_end or sp.start >= last_start]


def _words(text: str) -> int:
    return len(text.split())


def _clean(text: str) -> str:
    """Remove escape codes and control characters and collapse whitespace (for claims, never quotes)."""
    return " ".join(_ESCAPES.sub("", text).split())


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _imperative(sentence: str, kind: str) -> str:
    """A cleaned imperative form of a person's sentence."""
    text = _clean(sentence)
    text = _LEAD.sub("", text).strip(" ,;:-—–")
    rewrites = [
        (r"^(?:i(?:'d| would)?\s+(?:really\s+)?prefer)\s+(?:that\s+)?(?:you\s+|we\s+)?", "Prefer "),
        (r"^i(?:'d| would)?\s+rather\s+(?:you\s+|we\s+)?", "Prefer to "),
        (r"^i\s+(?:want|need|like)\s+(?:you|us)\s+to\s+", ""),
        (r"^i\s+(?:don'?t|do not)\s+want\s+(?:you|us)\s+to\s+", "Don't "),
        (r"^i\s+(?:don'?t|do not|never)\s+(?:want|like)\s+", "Avoid "),
        (r"^(?:from now on|going forward|in (?:the )?future|next time|as a rule|in general|by default)[,:]?\s*"
         r"(?:(?:please|you should|we should|you must)\s+)?", ""),
        (r"^(?:you|we)\s+(?:should|must|need to|have to)\s+", ""),
        (r"^(?:remember|don'?t forget)\s+(?:to\s+)", ""),
        (r"^let'?s\s+", ""),
    ]
    for pattern, repl in rewrites:
        new = re.sub(pattern, repl, text, count=1, flags=re.IGNORECASE)
        if new != text:
            text = new
            break
    text = text.rstrip(" .!?,;:")
    return _capitalise(text) + "." if text else ""


def _conclusion(sentence: str) -> str:
    """A project fact from the assistant's root-cause sentence."""
    text = _clean(sentence)
    text = re.sub(r"^(?:interesting|aha|ah|oh|ok(?:ay)?|so|good|hmm+)\b[!.,\s]*", "", text, flags=re.IGNORECASE)
    text = re.sub(r"^I see the (?:issue|problem)\s*[-—–:]\s*", "", text, flags=re.IGNORECASE)
    text = text.rstrip(" .!?,;:")
    return _capitalise(text) + "." if text else ""


class HeuristicExtractor:
    """Offline rules: corrections, preferences and root causes become candidates."""

    name = "heuristic"
    model: str | None = None

    def extract(self, digest: Digest, context: ExtractContext) -> ExtractionResult:
        """Find lesson-shaped sentences in ``digest``; never raises on odd text."""
        result = ExtractionResult(session=digest.session)
        seen: set[str] = set()
        known = [" ".join(m.lower().split()) for m in context.memories if m]
        for turn in digest.turns:
            for quote, kind in self._moments(turn):
                key = " ".join(quote.lower().split())
                if key in seen or any(key in mem for mem in known):
                    continue
                seen.add(key)
                cand = self._candidate(digest, context, turn, quote, kind)
                if cand is not None:
                    result.candidates.append(cand)
        return result

    def _moments(self, turn: Turn) -> Iterator[tuple[str, str]]:
        """``(quote, kind)`` for each lesson-shaped sentence of one turn."""
        if turn.role == "person":
            if turn.kind not in PERSON_KINDS:
                return
            rules = _PERSON_RULES
        elif turn.role == "assistant":
            rules = _ASSISTANT_RULES
        else:
            return
        text = turn.text or ""
        spans = _sentences(text)
        if turn.role == "person" and len(text) > LONG_PERSON_TURN:
            spans = _framing(text, spans)
        used_until = -1
        for i, span in enumerate(spans):
            if span.start < used_until or span.end - span.start > MAX_QUOTE_CHARS:
                continue  # a sentence too long to be a quote is never read
            sentence = text[span.start:span.end]
            kind = self._match(sentence, rules, turn.role)
            if kind is None:
                continue
            start, end = span.start, span.end
            if _words(sentence) < MIN_QUOTE_WORDS or kind == "finding":
                start, end = self._extend(text, spans, i)
                if start < used_until or _words(text[start:end]) < MIN_QUOTE_WORDS:
                    continue
            quote = text[start:end]
            if len(quote) > MAX_QUOTE_CHARS:
                continue
            used_until = end
            yield quote, kind

    @staticmethod
    def _match(sentence: str, rules: list[tuple[re.Pattern[str], str]], role: str) -> str | None:
        stripped = _clean(sentence)
        if not stripped or _NOT_A_LESSON.match(_LEAD.sub("", stripped) if role == "person" else stripped):
            return None
        question = stripped.endswith("?")
        for pattern, kind in rules:
            target = _LEAD.sub("", stripped) if pattern.pattern.startswith("^(?:please") else stripped
            if pattern.search(target):
                if question and kind not in {"correction"}:
                    return None
                return kind
        return None

    @staticmethod
    def _extend(text: str, spans: list[_Span], i: int) -> tuple[int, int]:
        """Join a short sentence with the next one in the same turn (or the previous one)."""
        span = spans[i]
        if i + 1 < len(spans):
            return span.start, spans[i + 1].end
        if i > 0:
            return spans[i - 1].start, span.end
        return span.start, span.end

    def _candidate(self, digest: Digest, context: ExtractContext, turn: Turn, quote: str,
                   kind: str) -> RawCandidate | None:
        project = context.project or digest.project
        if turn.role == "person":
            claim = _imperative(quote, kind)
            ctype = "project" if kind == "fact" else "feedback"
            why = {
                "correction": "The person corrected or redirected the assistant here.",
                "preference": "The person stated this as a preference or rule.",
                "fact": "The person stated this fact about the project.",
            }[kind]
            general = (kind in _GLOBAL_KINDS and not _CODE_TOKEN.search(quote)
                       and not _PROJECT_WORDS.search(quote))
            scope = "global" if general else project
        else:
            claim = _conclusion(quote)
            ctype = "project"
            why = "The assistant stated this as the cause or conclusion after something went wrong."
            scope = project
        if _words(claim) < 3:
            return None
        where = "in every project" if scope == "global" else f"when working on {project}"
        how = (f"Follow this {where}." if ctype == "feedback"
               else f"Keep this in mind {where}; check it before repeating the same investigation.")
        return RawCandidate(
            claim=claim,
            why=why,
            how_to_apply=how,
            type=ctype,
            scope=scope,
            quote=quote,
            session=digest.session,
            extractor=self.name,
            model=None,
        )
