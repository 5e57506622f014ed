"""What Gemini CLI's ``save_memory`` tool writes into the global ``GEMINI.md``: a line-for-line port of
``computeGlobalMemoryContent``, ``sanitizeFact`` and ``ensureNewlineSeparation`` of
``packages/core/src/tools/memoryTool.ts`` in google-gemini/gemini-cli at commit
0750b01fe4e7b62d55d92918b1c4535a77acc334 (2026-05-13, the last before the tool was retired for
direct edits of the memory files in 7504259d72). Tests write with it so the section dreamtui guards is
the one the real tool makes."""

from __future__ import annotations

import re

MEMORY_SECTION_HEADER = "## Gemini Added Memories"


def _ensure_newline_separation(current: str) -> str:
    if len(current) == 0:
        return ""
    if current.endswith("\n\n") or current.endswith("\r\n\r\n"):
        return ""
    if current.endswith("\n") or current.endswith("\r\n"):
        return "\n"
    return "\n\n"


def _sanitize_fact(fact: str) -> str:
    text = re.sub(r"[\r\n]", " ", fact).strip()
    text = re.sub(r"^(-+\s*)+", "", text).strip()
    return re.sub(r"[<>]", " ", text)


def save_memory(current: str, fact: str) -> str:
    """The whole new content of ``GEMINI.md`` after ``save_memory(fact)`` (scope global)."""
    item = f"- {_sanitize_fact(fact)}"
    header_index = current.find(MEMORY_SECTION_HEADER)
    if header_index == -1:
        return current + f"{_ensure_newline_separation(current)}{MEMORY_SECTION_HEADER}\n{item}\n"
    start = header_index + len(MEMORY_SECTION_HEADER)
    end = current.find("\n## ", start)
    if end == -1:
        end = len(current)
    before = current[:start].rstrip()
    section = current[start:end].rstrip()
    after = current[end:]
    section += f"\n{item}"
    return f"{before}\n{section.lstrip()}\n{after}".rstrip() + "\n"
