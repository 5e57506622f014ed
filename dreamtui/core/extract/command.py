"""The ``command`` extractor: any program (e.g. a local model) that reads a digest and prints candidates.

The program gets ``{"session", "project", "memories", "max_chars", "digest": {...}}`` as JSON on stdin
(turn texts redacted) and must print ``{"candidates": [...]}`` or a bare list as JSON on stdout. Each
candidate has ``claim``, ``why``, ``how_to_apply``, ``type``, ``scope`` and ``quote``. A timeout kills
the program; a non-zero exit, non-JSON output or a candidate missing fields is a clear one-line error
(or, for single bad candidates, dropped and counted).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Sequence
from typing import Any

from dreamtui.core.errors import ExtractorError
from dreamtui.core.extract.base import OFFLINE, ExtractContext, candidate_from_mapping
from dreamtui.core.extract.prompt import sendable
from dreamtui.core.models import Digest, ExtractionResult, RawCandidate, Turn

MAX_OUTPUT_BYTES = 16 * 1024 * 1024


def _redacted_digest(digest: Digest) -> dict[str, Any]:
    data = digest.to_json()
    data["turns"] = [
        Turn(t.role, sendable(t.text), t.file, t.line, t.uuid, t.timestamp, t.kind).to_json()
        for t in digest.turns
    ]
    return data


def _tail(text: str, limit: int = 160) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    return last if len(last) <= limit else last[: limit - 1] + "…"


class CommandExtractor:
    """Runs ``argv`` once per digest, digest JSON on stdin, candidates JSON on stdout."""

    name = "command"
    capabilities = OFFLINE

    def structured(self) -> None:
        """A command's model (if any) is not ours to ask: the dedup judge stays lexical."""
        return None

    def __init__(self, argv: Sequence[str], *, timeout: float = 120.0, model: str | None = None) -> None:
        if not argv:
            raise ExtractorError("the command extractor needs a command: set `command` in the config file")
        self.argv = list(argv)
        if shutil.which(self.argv[0]) is None:  # cannot start: say so before a cycle records anything
            raise ExtractorError(f"extractor command not found or not executable: {self.argv[0]}")
        self.timeout = timeout
        self.model = model or os.path.basename(self.argv[0])

    def _run(self, payload: bytes) -> tuple[int, bytes, bytes]:
        """Run the program; on timeout kill its whole process group."""
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise ExtractorError(f"extractor command not found: {self.argv[0]}") from None
        except PermissionError:
            raise ExtractorError(f"extractor command is not executable: {self.argv[0]}") from None
        except OSError as exc:
            raise ExtractorError(f"cannot start extractor command {self.argv[0]}: {exc.strerror}") from None
        try:
            out, err = proc.communicate(payload, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.communicate()
            raise ExtractorError(
                f"extractor command timed out after {self.timeout:g}s and was stopped: {self.argv[0]}"
            ) from None
        return proc.returncode, out, err

    def extract(self, digest: Digest, context: ExtractContext) -> ExtractionResult:
        """Run the command for one digest and read its candidates."""
        request = {
            "session": digest.session,
            "project": context.project or digest.project,
            "memories": list(context.memories),
            "max_chars": context.max_chars,
            "digest": _redacted_digest(digest),
        }
        payload = json.dumps(request, ensure_ascii=False).encode("utf-8", "replace")
        code, out, err = self._run(payload)
        if code != 0:
            why = _tail(err.decode("utf-8", "replace")) or "no message on stderr"
            raise ExtractorError(f"extractor command exited with status {code}: {why}")
        if len(out) > MAX_OUTPUT_BYTES:
            raise ExtractorError(f"extractor command printed more than {MAX_OUTPUT_BYTES} bytes")
        try:
            data = json.loads(out.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            snippet = _tail(out.decode("utf-8", "replace"), 80) or "(nothing)"
            raise ExtractorError(
                f"extractor command did not print JSON on stdout (got: {snippet!r})"
            ) from None
        if isinstance(data, dict):
            items = data.get("candidates")
            if not isinstance(items, list):
                raise ExtractorError('extractor command output has no "candidates" list')
        elif isinstance(data, list):
            items = data
        else:
            raise ExtractorError('extractor command output must be {"candidates": [...]} or a list')
        result = ExtractionResult(session=digest.session)
        reasons: dict[str, int] = {}
        for item in items:
            cand = candidate_from_mapping(
                item,
                session=digest.session,
                project=context.project or digest.project,
                extractor=self.name,
                model=self.model,
            )
            if isinstance(cand, RawCandidate):
                result.candidates.append(cand)
            else:
                reasons[cand] = reasons.get(cand, 0) + 1
        if reasons:
            result.malformed = sum(reasons.values())
            detail = ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))
            result.notes.append(f"{result.malformed} malformed candidate(s) dropped ({detail})")
            if not result.candidates:
                raise ExtractorError(f"every candidate from the extractor command was malformed ({detail})")
        return result
