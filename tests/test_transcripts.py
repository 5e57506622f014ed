"""Finding transcript files in all three sub-agent layouts."""

from __future__ import annotations

import shutil
from pathlib import Path

from dreamtui.core.ingest.transcripts import describe, discover, project_of, session_files, session_of

FIX = Path(__file__).parent / "fixtures" / "transcripts"
S1 = "11111111-2222-4333-8444-555555555555"
SHAPES = FIX / "-home-kim-shapes"


def test_discover_tells_main_subagent_and_compaction_files_apart():
    found = {tf.path.relative_to(FIX).as_posix(): tf for tf in discover(FIX)}
    main = found[f"-home-kim-shapes/{S1}.jsonl"]
    assert (main.kind, main.session, main.project, main.agent_id) == ("main", S1, "-home-kim-shapes", None)
    sub21 = found[f"-home-kim-shapes/{S1}/subagents/agent-a1b2c3d.jsonl"]
    assert (sub21.kind, sub21.session, sub21.project, sub21.agent_id) == (
        "subagent",
        S1,
        "-home-kim-shapes",
        "a1b2c3d",
    )
    compact = found[f"-home-kim-shapes/{S1}/subagents/agent-acompact-7f3e2a.jsonl"]
    assert (compact.kind, compact.session) == ("compact", S1)
    sub20 = found["-home-kim-shapes/agent-deadbeef.jsonl"]
    assert (sub20.kind, sub20.session, sub20.agent_id) == ("subagent", S1, "deadbeef")
    assert not any(p.endswith(".meta.json") for p in found)
    assert found["-home-kim-legacy/99999999-8888-4777-8666-555555555555.jsonl"].kind == "main"


def test_discover_puts_each_main_file_before_its_subagents():
    shapes = [tf for tf in discover(FIX) if tf.project == "-home-kim-shapes"]
    assert [tf.kind for tf in shapes] == ["main", "subagent", "subagent", "compact"]


def test_session_files_lists_main_first_then_every_layout():
    files = session_files(FIX, "-home-kim-shapes", S1)
    assert [f.name for f in files] == [
        f"{S1}.jsonl",
        "agent-a1b2c3d.jsonl",
        "agent-deadbeef.jsonl",
        "agent-acompact-7f3e2a.jsonl",
    ]
    assert session_files(FIX, "-home-kim-shapes", "no-such-session") == []
    assert session_files(FIX, "no-such-project", S1) == []


def test_missing_or_empty_roots_give_nothing(tmp_path: Path):
    assert discover(tmp_path / "absent") == []
    assert discover(tmp_path) == []
    (tmp_path / "file.txt").write_text("not a folder of projects")
    assert discover(tmp_path / "file.txt") == []


def test_project_and_session_of_each_layout(tmp_path: Path):
    root = tmp_path / "projects"
    shutil.copytree(FIX, root)
    sub = root / "-home-kim-shapes" / S1 / "subagents" / "agent-a1b2c3d.jsonl"
    assert (project_of(sub), session_of(sub)) == ("-home-kim-shapes", S1)
    old = root / "-home-kim-shapes" / "agent-deadbeef.jsonl"
    assert (project_of(old), session_of(old)) == ("-home-kim-shapes", S1)
    # a 2.0.x agent file whose lines carry no sessionId falls back to its own name
    (root / "-home-kim-shapes" / "agent-0badc0de.jsonl").write_bytes(b"not json\n")
    assert session_of(root / "-home-kim-shapes" / "agent-0badc0de.jsonl") == "agent-0badc0de"
    loose = root / "loose.jsonl"
    loose.write_bytes(b"{}\n")
    assert describe(loose).project == "projects"
    assert any(tf.path == loose for tf in discover(root))


def test_discover_finds_every_corpus_transcript(corpus: Path):
    found = discover(corpus)
    assert {tf.path for tf in found} == set(corpus.rglob("*.jsonl"))
    kinds = {tf.path.name: tf.kind for tf in found}
    assert kinds["agent-ea02459f.jsonl"] == "subagent"
    assert kinds["agent-a52886dc180afb356.jsonl"] == "subagent"
    assert kinds["cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"] == "main"
    helper = [tf for tf in found if tf.path.name == "agent-ea02459f.jsonl"][0]
    assert helper.session == "cb2e607c-c758-415a-8b45-c49e4631906a"
