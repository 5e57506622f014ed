"""The daily review file ``reviews/review-<date>.md``: every surviving candidate of that day.

Regenerated in full each time (never appended to), written atomically and committed when it changed.
"""

from __future__ import annotations

import re
from datetime import date as Date
from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError
from dreamtui.core.ledger import Ledger, candidates
from dreamtui.core.memory import gitops
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.generated import write_generated
from dreamtui.core.models import Candidate
from dreamtui.core.text import clean_text


class ReviewError(DreamError):
    """The review file cannot be written (a bad date)."""


def review_rel_path(day: str) -> str:
    """``reviews/review-<date>.md``."""
    return f"{memory.REVIEWS}/review-{day}.md"


def _day(value: Date | str) -> str:
    text = value.isoformat() if isinstance(value, Date) else str(value).strip()
    try:
        return Date.fromisoformat(text).isoformat()
    except ValueError:
        raise ReviewError(f"review date {text!r} is not a date like 2026-01-31") from None


def review_candidates(ledger: Ledger, day: str) -> list[Candidate]:
    """Every candidate that survived the gate (not dropped) from that date's cycle(s) or created that date."""
    return candidates.of_day(ledger, day)


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+|~+", text)), default=0)
    return "`" * max(3, longest + 1)


def render_review(day: str, candidates: list[Candidate]) -> str:
    """The Markdown of a review file."""
    counts: dict[str, int] = {}
    for cand in candidates:
        counts[cand.status] = counts.get(cand.status, 0) + 1
    lines = [f"# Review of {day}", ""]
    if not candidates:
        lines += ["No candidate survived the gate on this day.", ""]
    else:
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        noun = "candidate" if len(candidates) == 1 else "candidates"
        lines += [f"{len(candidates)} {noun} survived the gate: {summary}.", ""]
    for number, cand in enumerate(candidates, start=1):
        title = memory.one_line(cand.claim, 100) or "(no claim)"
        model = f"{cand.extractor}/{cand.model}" if cand.model else cand.extractor
        lines += [
            f"## {number}. {title}",
            "",
            f"- **Candidate:** `{cand.id}` · {cand.status} · {memory.one_line(cand.type)} · "
            f"{memory.one_line(cand.scope)} · {memory.one_line(model)}",
            f"- **Claim:** {memory.one_line(cand.claim)}",
            f"- **Why:** {memory.one_line(cand.why) or '—'}",
            f"- **How to apply:** {memory.one_line(cand.how_to_apply) or '—'}",
        ]
        if cand.duplicate_of:
            lines.append(
                f"- **Close to:** {memory.one_line(cand.duplicate_of)} ({cand.duplicate_kind or 'match'})"
            )
        if cand.secrets:
            lines.append(f"- **Secret flagged:** {', '.join(cand.secrets)} (redacted)")
        where = f"line {cand.verified_line}" if cand.verified_line else "line unknown"
        source = f"{cand.provenance or 'unknown'}, session `{memory.one_line(cand.session)}`, {where}"
        quote = clean_text(cand.quote).strip("\n")
        fence = _fence(quote)
        lines += [f"- **Quote** ({source}):", "", f"{fence}text", quote, fence, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_review(config: Config, ledger: Ledger, date: Date | str) -> Path:
    """Write ``reviews/review-<date>.md`` (regenerated, not appended) and commit it when it changed."""
    day = _day(date)
    text = render_review(day, review_candidates(ledger, day))
    rel = review_rel_path(day)
    write_generated(
        config, ledger, rel, text.encode("utf-8"), f"dreamtui: review of {day}", {gitops.TRAILER_REVIEW: day}
    )
    return Path(config.memory) / rel
