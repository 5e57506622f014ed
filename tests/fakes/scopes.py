"""A lesson proposed, gated and accepted in a given project: shared by the scope tests."""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.gate.dedup import DedupIndex
from dreamtui.core.gate.pipeline import GateReport, gate
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions
from dreamtui.core.models import RawCandidate
from fakes.transcript import write_session

ACME = "-home-kim-acme"


SHOP = "-home-kim-shop"


SAID = (
    "Never run the database migrations against production from a laptop, "
    "always go through the deploy pipeline so the change is logged."
)


QUOTE = "Never run the database migrations against production from a laptop"


CLAIM = "Never run database migrations against production from a laptop; go through the deploy pipeline."


SAID_2 = "Please pin every GitHub Action to a full commit SHA, tags can be moved by anyone with push access."


QUOTE_2 = "pin every GitHub Action to a full commit SHA"


CLAIM_2 = "Pin every GitHub Action to a full commit SHA, not a movable tag."


def session(config: Config, project: str, sid: str, text: str = SAID) -> Path:
    return write_session(
        config.transcripts, [("person", text), ("assistant", "Understood.")], project=project, session=sid
    )


def run(
    config: Config,
    ledger: Ledger,
    path: Path,
    project: str,
    *,
    scope: str | None = None,
    claim: str = CLAIM,
    quote: str = QUOTE,
    index: DedupIndex | None = None,
) -> GateReport:
    raw = RawCandidate(
        claim=claim,
        why="A laptop run is not logged.",
        how_to_apply="Use the pipeline.",
        type="feedback",
        scope=scope or project,
        quote=quote,
        session=path.stem,
        extractor="heuristic",
    )
    return gate([raw], config=config, ledger=ledger, project=project, files=[path], index=index)


def accept_in(config: Config, ledger: Ledger, project: str, sid: str, *, scope: str | None = None) -> str:
    """Propose the lesson in ``project`` and accept it: returns the memory file's path."""
    report = run(config, ledger, session(config, project, sid), project, scope=scope)
    assert len(report.kept) == 1, report.to_json()
    return decisions.accept(config, ledger, report.kept[0].id).path


def topic(config: Config, rel: str, text: str, extra: str = "") -> None:
    path = config.memory / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {text[:60]}\ndescription: {text}\ntype: feedback\n{extra}---\n\n{text}\n",
        encoding="utf-8",
    )
