"""Every real transcript in ../shared/corpus digests; the prompts a careful reader finds are in it,
and no tool output, system reminder or other harness text is.

The expected prompts below were found by reading each file (``user`` records a person typed,
slash commands, the rejection reason, text typed while the agent was busy). Skipped without the
corpus (a fresh clone).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from dreamtui.core.ingest.digest import digest_file, digest_session
from dreamtui.core.ingest.formats.claude_code import pieces, provenance_of
from dreamtui.core.ingest.transcripts import discover, session_files

# file name -> the person's turns (interrupt markers aside), in order; each a prefix of the turn text
PROMPTS: dict[str, list[str]] = {
    "short.jsonl": ["mix phx.server doesnt seem to start"],
    "tool_heavy.jsonl": [
        "start phoenix in background",
        "/mcp",
        "scrolling back in xterm.js still does not work (maybe because outer web catches it)? "
        "websearch xterm.js tmux interactions",
    ],
    "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl": [
        "OK, we're going to make a little experiment here. Pretend we have a list of tasks",
        "Well, the subagents seem to be either stuck or done... can you check?",
        "/exit",
    ],
    "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl": [
        "Hey Claude, I'd like your help with refactoring the timeline filtering so that we hide the group",
        "You can set group.visible using the vis library which is less work",
        "I don't think we need to loop through all items, the group names should match the filters?",
        "I think the library is setting it, it's an inline style (and there's no data-groupid:",
        "/doctor",
        "/status",
        "/mcp",
    ],
    "a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl": [
        "/context",
        "/model",
        "It's been a while - I see that I have pending changes, examine them, add and commit",
        "Is everything OK with this project? Do all the tests pass? Does the README correctly reflects",
        'The above "status report" is very interesting and good to keep as milestone information.',
        "New feature: we support .zip, but I've seen an archive that contains embedded tar.gz.",
        "I saw in passing that in case of BadZipFile we don't do anything (pass)",
        "OK, so first commit the changes related to the previous task, adding support for tar",
        "Excellent work, thank you!",
    ],
    "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl": [
        "How can I make this possible to install as a library with `uv` so I can run from any directory?",
        "Let's keep the name of the py file but change the pyproject script to reference it, otherwise gtg",
        "Please add these in @README.md but also how to install with `uv sync`",
        "Can you please change the default command behaviour (without pr_input)",
        "We need to find a cleaner way to reinstall without manually going hunting",
        "Let's update readme with the working reinstall",
    ],
    "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl": [
        "Spaw sub-agents to write poems about Thai green curry, Thai yellow curry and Thai red curry.",
        "is the 3rd tool still running?",
        "??",
        "are they still being written?",
        "/plugin",
        "/plugin",
        "/publish-session",
        "/publish-session",
        "why won't you run it?",
    ],
    "images-in-user-messages.jsonl": [
        "what's this an image of?",
        "what's the session iD?",
        "/publish-session",
    ],
    # sub-agent files: their "user" lines are the parent agent, never a person
    "agent-ea02459f.jsonl": [],
    "agent-a52886dc180afb356.jsonl": [],
    "agent-a5bdbc1.jsonl": [],
}

HARNESS = [
    "<system-reminder>",
    "</system-reminder>",
    "<ide_opened_file>",
    "<ide_selection>",
    "<local-command-stdout>",
    "<local-command-caveat>",
    "Caveat: The messages below were generated",
    "<command-name>",
    "<command-message>",
    "<task-notification>",
    "The user doesn't want to proceed",
    "This session is being continued from a previous conversation",
    "Base directory for this skill",
]


def _tool_strings(path: Path) -> Iterator[str]:
    """Every tool-output string of a file (tool_result blocks), long enough to be distinctive."""
    for raw in path.read_bytes().splitlines():
        obj = orjson.loads(raw)
        for piece in pieces(obj):
            if piece.role == "tool" and len(piece.text.strip()) >= 40:
                yield piece.text.strip()


def test_every_corpus_file_has_expected_prompts(corpus: Path):
    names = {tf.path.name for tf in discover(corpus)}
    assert names == set(PROMPTS), "a corpus file was added or removed: write down its prompts"


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_corpus_file_digest(corpus: Path, name: str):
    path = next(corpus.rglob(name))
    d = digest_file(path)
    assert d.stats.skipped_lines == 0 and not d.stats.partial_tail
    person = [t for t in d.turns if t.role == "person" and t.kind != "interrupt"]
    expected = PROMPTS[name]
    assert len(person) == len(expected), [t.text[:60] for t in person]
    for turn, prefix in zip(person, expected, strict=True):
        assert turn.text.startswith(prefix), (turn.text[:100], prefix)
    kept = "\n".join(t.text for t in d.turns)
    for marker in HARNESS:
        assert marker not in kept, marker
    said = "\n".join(t.text for t in person)
    texts = {t.text for t in d.turns}
    for tool_text in _tool_strings(path):
        assert tool_text not in said, tool_text[:80]  # tool output is never a person's words
        assert tool_text not in texts, tool_text[:80]  # nor a turn of its own
        if len(tool_text) >= 300:  # and long output is not kept (prose may quote a short path)
            assert tool_text not in kept, tool_text[:80]
    raw_lines = path.read_bytes().split(b"\n")
    for turn in d.turns:  # each turn points at the record it came from, with the right provenance
        obj = orjson.loads(raw_lines[turn.line - 1])
        assert obj.get("uuid") == turn.uuid
        if turn.kind != "interrupt":
            roles = {provenance_of(obj, p.path) for p in pieces(obj) if p.text.strip() == turn.text}
            assert (
                turn.role in roles
                or turn.kind == "queued"
                and "person" in {provenance_of(obj, p.path) for p in pieces(obj)}
            )


def test_corpus_sessions_digest_with_their_subagents(corpus: Path):
    mains = [tf for tf in discover(corpus) if tf.kind == "main"]
    for tf in mains:
        files = session_files(corpus, tf.project, tf.session)
        d = digest_session(files)
        alone = digest_file(tf.path)
        assert [t.text for t in d.turns if t.role == "person"] == [
            t.text for t in alone.turns if t.role == "person"
        ]
        if len(files) > 1:
            assert any(t.kind == "subagent" for t in d.turns), tf.path.name
