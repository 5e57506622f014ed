"""Goodnight: a person saying good night starts that project's dream cycle."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dreamtui.core.models import Turn

_APOSTROPHE = "['\u2019\u2018\u02bc]"
GOODNIGHT_RE = re.compile(
    r"(?<![\w'\u2019])(?:"
    r"good[\s-]*night"
    rf"|g{_APOSTROPHE}?\s?night"
    r"|nighty[\s-]+night"
    r"|sleep\s+well"
    r"|sweet\s+dreams"
    r")(?![\w'\u2019])",
    re.IGNORECASE,
)


def is_goodnight(text: str) -> bool:
    """The text says good night (goodnight, g'night, gnight, nighty night, sleep well, sweet dreams).

    Any case, whole words only: "goodnightly" or "sleep wellness" do not count.
    """
    if not text:
        return False
    return GOODNIGHT_RE.search(text) is not None


def said_goodnight(turns: Iterable[Turn]) -> bool:
    """A person's turn (not the assistant's, not tool output) among ``turns`` says good night."""
    return any(t.role == "person" and is_goodnight(t.text) for t in turns)
