"""The service layer, the one door both front ends (the CLI and the app) go through to the core.

:class:`Workspace` owns a config's ledger and gives every read and decision the front ends need as
typed results. Beside it, one module per job: :mod:`.dreaming` (run a cycle, the daemon, a cycle's
words), :mod:`.extracting` (one session now, the requests a model is sent, Message Batches),
:mod:`.outside` (changes others made to the memory repository), :mod:`.promotion` (auto-write),
:mod:`.briefings` (the briefing's text and history), :mod:`.transcripts` (a session's files, its
digest, a quote verified, the live tail), :mod:`.memory_repo` (the memory folder itself),
:mod:`.display` (text safe to show) and :mod:`.settings` (what the app keeps in the config file).

The front ends import only this package, :mod:`dreamtui.core.models`, :mod:`dreamtui.core.errors` and
:mod:`dreamtui.core.config` (pyproject's import-linter contract and ``tests/test_architecture.py``
hold them to it); the types they name are exported here.
"""

from dreamtui.core.dream.stats import format_stats
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger.consolidations import Consolidation
from dreamtui.core.memory.briefing import BriefingProposal
from dreamtui.core.memory.gitops import CommitInfo
from dreamtui.core.memory.layout import CeilingStatus
from dreamtui.services.dreaming import CycleRecord, DreamPlan
from dreamtui.services.extracting import Choice
from dreamtui.services.promotion import Gate
from dreamtui.services.workspace import (
    BRIEFING,
    Banner,
    DecisionResult,
    MemoryFile,
    PromotionView,
    SessionRow,
    Status,
    Workspace,
    unified_diff,
)

__all__ = [
    "BRIEFING",
    "Banner",
    "BriefingProposal",
    "CeilingStatus",
    "Choice",
    "CommitInfo",
    "Consolidation",
    "CycleRecord",
    "DecisionResult",
    "DreamPlan",
    "Gate",
    "Ledger",
    "MemoryFile",
    "PromotionView",
    "SessionRow",
    "Status",
    "Workspace",
    "format_stats",
    "unified_diff",
]
