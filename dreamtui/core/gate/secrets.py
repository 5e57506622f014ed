"""Secret scanning lives in :mod:`dreamtui.core.secrets` (the base layer: the ledger, the memory writer
and the CLI redact too); this name re-exports it for code that imports it from the gate."""

from dreamtui.core.secrets import (  # noqa: F401
    RULE_NAMES,
    RULES,
    Rule,
    has_secret,
    looks_random,
    redact,
    rules_found,
    scan,
    shannon_entropy,
)
