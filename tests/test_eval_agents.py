"""The evaluation set's sessions of the other agents (split ``agents``, root ``../eval-agents``): a session
of any format is digested, asked and replayed as ``dreamtui digest --session`` and ``dreamtui extract
--show-request`` read it (``tests/bench/eval_prepare.py``, ``tests/bench/measure_extract.py``).

Built here from the committed fixtures (OpenCode's schema and rows, a real Aider history), so these run
on a fresh machine without ``../eval-agents``.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

from click.testing import CliRunner
from fakes.agent_dbs import SESSION, build_opencode_db
from fakes.anthropic_server import lesson
from fakes.eval_set import EvalSession, file_path, location_names, portable_key, request_key

from dreamtui.cli.digest_cmd import render
from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.ingest.digest import digest_session
from dreamtui.services.transcripts import session_files_for

BENCH = Path(__file__).resolve().parent / "bench"
AIDER = (
    Path(__file__).resolve().parent
    / "fixtures"
    / "agents"
    / "aider"
    / "aquaticat-monochromatic.chat.history.md"
)


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _session(path: Path, fmt: str) -> EvalSession:
    return EvalSession(id="x01", split="agents", root="eval-agents", files=[path], project="", format=fmt)


def test_an_opencode_session_inside_its_database_is_read_by_address_by_the_eval_set_and_the_cli(
    tmp_path: Path, config: Config
) -> None:
    build_opencode_db(tmp_path / "x01" / "opencode")
    address = file_path(tmp_path, {"eval_path": "x01/opencode/opencode.db", "member": SESSION})
    assert str(address).endswith(f"opencode.db#{SESSION}")
    assert _session(address, "opencode").available
    gone = file_path(tmp_path, {"eval_path": "x02/opencode/opencode.db", "member": SESSION})
    assert not _session(gone, "opencode").available

    files = session_files_for(address)
    assert files[0] == address and len(files) == 2  # the session and its sub-agent's, inside the database
    digest = digest_session(files)
    assert any(t.role == "person" for t in digest.turns)
    state = ["--state", str(config.state), "--memory", str(config.memory)]
    shown = CliRunner().invoke(cli, [*state, "digest", "--session", str(address)], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert shown.output == render(digest) + "\n"  # what the labeller reads is what the CLI shows

    prepare = _bench("eval_prepare")
    from dreamtui.cli.extract_cmd import request_text

    bodies = prepare.request_bodies(digest)
    asked = CliRunner().invoke(
        cli, [*state, "extract", str(address), "--show-request"], env={"ANTHROPIC_API_KEY": ""}
    )
    assert asked.exit_code == 0, asked.output
    # what a stand-in model reads (standard output); its size in tokens goes to standard error
    assert asked.stdout == "".join(request_text(b, k, len(bodies)) for k, b in enumerate(bodies, 1))
    assert "prompt tokens (estimated: characters / 3.5)" in asked.stderr


def test_a_recorded_answer_to_an_aider_session_replays_with_the_eval_set_unpacked_elsewhere(
    tmp_path: Path,
) -> None:
    """An Aider history's session id, project and working directory are its folder's: a request made
    with the set in one folder differs from the same session's request in another, and the recording
    still replays there (its portable key), quotes verified by the real gate."""
    prepare = _bench("eval_prepare")
    measure = _bench("measure_extract")
    here = tmp_path / "eval-agents" / "x01" / "proj" / ".aider.chat.history.md"
    here.parent.mkdir(parents=True)
    shutil.copyfile(AIDER, here)
    digest = digest_session([here])
    said = next(
        line
        for t in digest.turns
        if t.role == "person"
        for line in t.text.splitlines()
        if len(line.split()) >= 8
    )
    quote = " ".join(said.split()[:12])
    bodies = prepare.request_bodies(digest)
    answers = [json.dumps({"candidates": [lesson(quote, claim="Keep the person's request in mind.")]})] + [
        json.dumps({"candidates": []})
    ] * (len(bodies) - 1)
    recording = {
        "id": "x01",
        "tag": "t",
        "requests": [
            {
                "part": k,
                "key": request_key(body),
                "portable_key": portable_key(body, location_names(digest)),
                "answer": answer,
            }
            for k, (body, answer) in enumerate(zip(bodies, answers, strict=True), 1)
        ],
    }
    (tmp_path / "recorded" / "t").mkdir(parents=True)
    (tmp_path / "recorded" / "t" / "x01.json").write_text(json.dumps(recording))

    moved = tmp_path / "elsewhere" / "x01" / "proj" / ".aider.chat.history.md"
    shutil.copytree(here.parent, moved.parent)
    there = digest_session([moved])
    assert there.session != digest.session  # the request names where the history lies
    moved_bodies = prepare.request_bodies(there)
    assert request_key(moved_bodies[0]) != recording["requests"][0]["key"]
    assert portable_key(moved_bodies[0], location_names(there)) == recording["requests"][0]["portable_key"]

    stack: list = []
    extractor = measure.recorded_extractor("t", stack, root=tmp_path / "recorded")
    try:
        score = measure.run_session(_session(moved, "aider"), extractor, tmp_path / "work")
    finally:
        for fake in stack:
            fake.__exit__(None, None, None)
    assert score is not None
    assert (score.proposed, score.verified, score.kept) == (1, 1, 1)


def test_a_proposal_quoting_an_opencode_session_matches_the_label_naming_its_database() -> None:
    from fakes.eval_set import Label, Proposal, match_score

    label = Label(
        claim="Read SPEC.md before changing the game's rules.",
        grade="keep",
        quote="Read SPEC.md and improve it",
        line=12,
        file="opencode.db",
        speaker="person",
    )
    found = Proposal(
        claim="Read SPEC.md first.",
        quote="Read SPEC.md and improve it",
        line=12,
        file=f"/x/opencode.db#{SESSION}",
        kept=True,
    )
    assert match_score(found, label) > 1  # the same record: the address names the labelled file
    elsewhere = Proposal(claim="Something else entirely.", quote="", line=12, file="/x/other.db", kept=True)
    assert match_score(elsewhere, label) == 0


def test_a_portable_key_is_the_same_whatever_the_hash_seed() -> None:
    """Names of one length (``/home/build`` and ``-home-build``: a working directory and its folder
    name) get the same placeholders in every run, so a recording replays on another machine: their order
    was once a set's, which changes with Python's hash seed."""
    import subprocess
    import sys

    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from fakes.eval_set import portable_key; "
        "body = {'system': [{'type': 'text', 'text': 's'}], 'messages': [{'role': 'user', 'content': "
        "'cwd /home/build, folder -home-build, project build, session ses_1'}]}; "
        "print(portable_key(body, ['/home/build', '-home-build', 'build', 'ses_1', 'abcdefghijk']))"
    )
    tests = str(Path(__file__).resolve().parent)
    keys = {
        subprocess.run(
            [sys.executable, "-c", code, tests],
            env={"PYTHONHASHSEED": str(seed), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in range(12)
    }
    assert len(keys) == 1, keys
