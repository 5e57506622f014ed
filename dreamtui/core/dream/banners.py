"""The warnings every command and the app show above their output: the yield floor (dreaming proposes
nothing), the memory index's ceiling, and the auto-write (promotion) status."""

from __future__ import annotations

from dreamtui.core.config import Config
from dreamtui.core.dream.promotion import promotion_banner
from dreamtui.core.ledger import Ledger, cycles
from dreamtui.core.memory import layout as memory

YIELD_FLOOR_MESSAGE = "DREAM IS PROPOSING NOTHING — extractor may be mis-tuned or the corpus is saturated."
YIELD_FLOOR_CYCLES = 3
"""This many completed deep cycles in a row with zero new candidates raise the yield floor."""


def yield_floor_active(ledger: Ledger) -> bool:
    """The last :data:`YIELD_FLOOR_CYCLES` completed deep cycles all surfaced zero new candidates.

    Shallow cycles (woke at light sleep: nothing worth extracting) and failed cycles are not counted
    either way; a deep cycle with no sparks counts as zero (the corpus is saturated).
    """
    rows = cycles.last_deep_full(ledger, YIELD_FLOOR_CYCLES)
    if len(rows) < YIELD_FLOOR_CYCLES:
        return False
    return all(r.stats.kept == 0 for r in rows)


def banner_lines(config: Config, ledger: Ledger | None, check_promotion: bool = False) -> list[str]:
    """Warnings every command and the app show: the yield floor, the index ceiling, auto-write status."""
    lines: list[str] = []
    if ledger is not None:
        try:
            if yield_floor_active(ledger):
                lines.append(YIELD_FLOOR_MESSAGE)
        except Exception:  # a broken ledger is reported by the command itself
            pass
    lines.extend(_ceiling_lines(config))
    if ledger is not None:
        try:
            line = promotion_banner(config, ledger, check=check_promotion)
        except Exception:  # a broken ledger is reported by the command itself
            line = None
        if line:
            lines.append(line)
    return lines


def banner_lines_for(config: Config) -> list[str]:
    """:func:`banner_lines` without creating anything: the ledger is opened only when it exists."""
    ledger = None
    try:
        if config.ledger_path.is_file():
            ledger = Ledger(config.ledger_path)
        return banner_lines(config, ledger, check_promotion=True)
    except Exception:
        return []
    finally:
        if ledger is not None:
            ledger.close()


def _ceiling_lines(config: Config) -> list[str]:
    """The index-ceiling warning of ``core/memory/layout.py`` (from 85% of what Claude Code loads)."""
    try:
        message = memory.ceiling_warning(memory.ceiling_status(config.memory))
    except Exception:  # a missing or unreadable memory folder has no ceiling to warn about
        return []
    return [message] if message else []
