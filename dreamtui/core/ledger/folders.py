"""The folders a ledger keeps the state of (``meta`` keys ``transcripts`` and ``memory``).

A ledger holds one transcripts folder's offsets and proposals and one memory repository's decisions,
outside changes and briefings. The first command that opens it with a config records the two folders;
a later one with other folders is refused in one line, so no command ever shows or changes another
folder's data (``stats --memory OTHER`` once printed the figures of the repository the ledger kept).
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.errors import ConfigError
from dreamtui.core.ledger.db import Ledger

KEYS = ("transcripts", "memory")
FLAGS = {"transcripts": "transcripts folder", "memory": "memory repository"}


def _resolved(path: Path) -> str:
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError):  # a symlink loop: the path as given
        return str(Path(path).expanduser().absolute())


def recorded(ledger: Ledger) -> dict[str, str]:
    """The folders the ledger recorded, by key (empty for a ledger no command has bound yet)."""
    rows = ledger.query("SELECT key, value FROM meta WHERE key IN ('transcripts', 'memory')")
    return {str(row["key"]): str(row["value"]) for row in rows}


def bind(ledger: Ledger, transcripts: Path, memory: Path) -> None:
    """Record the folders of a ledger that has none; refuse folders other than the recorded ones with
    a one-line :class:`ConfigError` that names both and says how to keep each apart (``--state``)."""
    wanted = {"transcripts": _resolved(transcripts), "memory": _resolved(memory)}
    have = recorded(ledger)
    for key in KEYS:
        if key in have and have[key] != wanted[key]:
            raise ConfigError(
                f"the ledger {ledger.path} keeps the state of the {FLAGS[key]} {have[key]}, not "
                f"{wanted[key]}: give --state a folder of its own for {wanted[key]} "
                f"(or use --{key} {have[key]})"
            )
    missing = [key for key in KEYS if key not in have]
    if missing:
        with ledger.write() as conn:
            for key in missing:
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO NOTHING",
                    (key, wanted[key]),
                )


def open_ledger(config: Config) -> Ledger:
    """The ledger of ``config``'s state folder, bound to its transcripts folder and memory repository
    (:func:`bind`); closed again when it refuses them."""
    ledger = Ledger.open(config.state)
    try:
        bind(ledger, config.transcripts, config.memory)
    except BaseException:
        ledger.close()
        raise
    return ledger
