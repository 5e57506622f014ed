"""Current formats (issue 17 item 4): the ``modified:`` field, the index ceiling as Claude Code counts
it, sub-agent files under ``subagents/workflows/<id>/`` and their ``agent-<id>.meta.json``."""

from __future__ import annotations

import json
from pathlib import Path

from dreamtui.core.ingest import transcripts
from dreamtui.core.ingest.formats import claude_code
from dreamtui.core.memory import frontmatter, layout, normalize

TOPIC = (
    "---\nname: Deploy\ndescription: Deploy with make\ntype: project\n"
    'created: "2026-02-03T09:15:00Z"\nmodified: "2026-03-01T10:00:00.000Z"\n---\n\nBody\n'
)


def test_a_topic_file_with_modified_round_trips_and_is_valid() -> None:
    meta, body = frontmatter.parse(TOPIC)
    assert meta["modified"] == "2026-03-01T10:00:00.000Z"
    assert frontmatter.validate(meta) == []
    assert frontmatter.dump(meta, body) == TOPIC
    fixed, fixes = normalize.normalize_text(TOPIC, "deploy")
    assert fixed == TOPIC and fixes == []  # nothing moved into the body
    assert frontmatter.validate({**meta, "modified": "last tuesday"}) == [
        "modified 'last tuesday' is not an ISO 8601 date or timestamp"
    ]


def test_the_ceiling_leaves_out_frontmatter_and_html_comments() -> None:
    lines = "".join(f"- [M{n}](m{n}.md) — hook\n" for n in range(150))
    comment = "<!--\n" + "note\n" * 80 + "-->\n"
    text = "---\nname: index\ndescription: the index\n---\n" + comment + lines + "<!-- one more -->\n"
    status = layout.ceiling_of(text)
    assert (status.lines, status.bytes) == (150, len(lines.encode()))
    assert layout.ceiling_of("- [A](a.md) <!-- why -->\n").bytes == len("- [A](a.md) \n")
    assert not status.over
    assert layout.ceiling_of(lines * 2).over  # 300 real lines still pass the ceiling


def _jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_workflow_subagents_are_found_and_linked_to_the_parents_tool_call(tmp_path: Path) -> None:
    project = tmp_path / "-home-kim-app"
    session = "5f0c0000-0000-4000-8000-00000000000a"
    _jsonl(
        project / f"{session}.jsonl",
        [
            {"type": "user", "sessionId": session, "message": {"role": "user", "content": "go"}},
            {
                "type": "assistant",
                "sessionId": session,
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_wf",
                            "name": "Task",
                            "input": {"description": "Consolidate memory", "prompt": "…"},
                        }
                    ],
                },
            },
        ],
    )
    sub = project / session / "subagents" / "workflows" / "wf-1" / "agent-a77.jsonl"
    _jsonl(
        sub,
        [
            {
                "type": "user",
                "isSidechain": True,
                "sessionId": session,
                "message": {"role": "user", "content": "consolidate"},
            }
        ],
    )
    sub.with_name("agent-a77.meta.json").write_text(
        json.dumps({"agentType": "dream", "description": "Consolidate memory"})
    )
    plain = project / session / "subagents" / "agent-b88.jsonl"
    _jsonl(
        plain,
        [
            {
                "type": "user",
                "isSidechain": True,
                "sessionId": session,
                "message": {"role": "user", "content": "x"},
            }
        ],
    )
    plain.with_name("agent-b88.meta.json").write_text(json.dumps({"toolUseId": "toolu_wf"}))
    found = {tf.path: tf for tf in transcripts.discover(tmp_path)}
    assert set(found) == {project / f"{session}.jsonl", sub, plain}  # meta files are not transcripts
    assert (found[sub].project, found[sub].session, found[sub].kind) == ("-home-kim-app", session, "subagent")
    assert sub in transcripts.session_files(tmp_path, "-home-kim-app", session)
    assert claude_code.agent_meta(sub) == {"agentType": "dream", "description": "Consolidate memory"}
    assert claude_code.parent_tool_call(sub) == (2, "toolu_wf")  # by its description
    assert claude_code.parent_tool_call(plain) == (2, "toolu_wf")  # by the meta's tool-use id
    assert claude_code.agent_meta(project / f"{session}.jsonl") is None
