"""What a dream with a model would read and send, estimated before anything is sent (no network).

:func:`estimate_dream` looks at every session with content not yet dreamed (sizes from ``stat``, the
ledger's offsets), splits them by the recent window (``dream_window_days``, ``--since``, ``--all``) and
estimates the input tokens the cycle would send without digesting everything: it digests a **sample**
of the sessions (per format, stratified by size: the median session of each of up to
:data:`STRATA` equal-count strata) exactly as a cycle would (the digest, the quiet-session rule, the
split into parts, the system prompt, the user message and the output schema), and scales each
stratum's tokens per raw byte to the stratum's bytes. Sessions that memory already covers are not
known before Deep sleep, so the estimate is an upper bound there.

Tokens are counted from characters (:data:`~dreamtui.core.dream.budget.CHARS_PER_TOKEN`); with an API
key the price comes from :data:`PRICES` (and half of it through the Message Batches API). Everything
here is an estimate and says so.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.dream.budget import CHARS_PER_TOKEN
from dreamtui.core.dream.sessions import project_map
from dreamtui.core.errors import ConfigError, TranscriptError
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.prompt import SYSTEM_PROMPT, ExtractionOut, parts_for, system_blocks, user_message
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.digest import digest_session, shared_reads
from dreamtui.core.ingest.formats.protocol import split_address
from dreamtui.core.ingest.records import address_key
from dreamtui.core.ingest.sources import discover_all
from dreamtui.core.ledger import Ledger, extractions, offsets

STRATA = 24
"""Size strata per format whose median session is digested (so at most this many digests per format)."""
OUTPUT_TOKENS_PER_CALL = 400
"""What one extraction call is assumed to answer (its lessons as JSON), for the cost."""
PRICES_TAKEN = "2026-12-07"
"""When :data:`PRICES` were read from Anthropic's model pages (platform.claude.com/docs, Models &
pricing: each model's "Pricing" box); prices change: the cost shown is an estimate."""
PRICES: dict[str, tuple[float, float, float]] = {
    # model id prefix: (input, output, cache read) in USD per million tokens; Batches API: 50% of both
    "claude-fable-5-1": (10.0, 50.0, 1.0),
    "claude-opus-5-5": (4.0, 20.0, 0.40),
    "claude-opus-5": (5.0, 25.0, 0.50),
    "claude-sonnet-5-5": (2.0, 10.0, 0.20),
    "claude-sonnet-5": (2.0, 10.0, 0.20),
    "claude-haiku-4-5": (1.0, 5.0, 0.10),
}
"""Per-model prices (USD per million tokens: input, output, cache read), taken :data:`PRICES_TAKEN`."""
BATCH_DISCOUNT = 0.5
"""The Message Batches API bills half of the standard prices."""


@dataclass(slots=True)
class _Session:
    key: tuple[str, str]
    files: list[str]
    fmt: str
    unread: int
    mtime: float
    records: bool = False


@dataclass(slots=True)
class Estimate:
    """What a dream would read now, and what it would cost (every figure an estimate)."""

    sessions: int = 0
    bytes: int = 0
    tokens: int = 0
    calls: int = 0
    sparks: int = 0
    """Of the sessions, how many are expected to be sent (the others are too quiet)."""
    older_sessions: int = 0
    older_bytes: int = 0
    """Sessions (and bytes) written before the window: not read unless asked (``--since``, ``--all``)."""
    since: datetime | None = None
    """The window's start (None: every session is read)."""
    sampled: int = 0
    cost_usd: float | None = None
    batch: bool = False
    model: str | None = None
    extractor: str = ""
    seconds: float = 0.0
    per_format: dict[str, int] = field(default_factory=dict)
    first: bool = False
    """No model has dreamed with this ledger yet: the first dream with a model always asks."""
    samples: list[tuple[list[str], int]] = field(default_factory=list)
    """The sampled sessions that would be sent: their files and the characters of their requests."""
    counted: float | None = None
    """Tokens the API counted ÷ tokens estimated from characters, on a few sampled requests
    (:func:`refine_with_count`); None when the estimate is from characters alone."""
    counted_requests: int = 0
    count_error: str | None = None

    def asks(self, config: Config) -> bool:
        """Whether a person is asked before this dream: the first with a model, or more than
        ``ask_above_tokens`` estimated (and something to send at all)."""
        if not self.sessions:
            return False
        return self.first or self.tokens > config.ask_above_tokens

    def lines(self) -> list[str]:
        """What the person reads before the dream: what it reads, the tokens, the cost, the back-fill."""
        mb = self.bytes / 1e6
        when = f"written since {self.since.astimezone():%Y-%m-%d}" if self.since else "of every date"
        out = [
            f"This dream would read {self.sessions:,} session(s) {when} ({mb:,.1f} MB not yet dreamed) "
            f"and send about {self.tokens:,} input tokens in about {self.calls:,} call(s) to "
            f"{self.extractor}{' / ' + self.model if self.model else ''} (estimate, from a sample of "
            f"{self.sampled} session(s))."
        ]
        if self.counted is not None:
            out.append(
                f"Refined with the API's token count of {self.counted_requests} sampled request(s): "
                f"{self.counted:.2f} × the estimate from characters (count_tokens; nothing was sent "
                "to the model)."
            )
        elif self.count_error:
            out.append(f"The API's token count failed ({self.count_error}): the estimate is from characters.")
        if self.cost_usd is not None:
            how = "through the Message Batches API (half price)" if self.batch else "at standard prices"
            out.append(
                f"Estimated cost: about ${self.cost_usd:,.2f} {how} (prices of {PRICES_TAKEN}; an estimate)."
            )
        elif self.extractor == "claude-code":
            out.append("It counts toward your Claude Code plan's usage limits (no API charge).")
        if self.older_sessions:
            out.append(
                f"{self.older_sessions:,} older session(s) ({self.older_bytes / 1e6:,.1f} MB) wait for a "
                "back-fill: `dreamtui dream --since YYYY-MM-DD` or `--all`."
            )
        return out

    def to_json(self) -> dict[str, object]:
        """The estimate as JSON (``dreamtui dream --estimate --json``)."""
        return {
            "sessions": self.sessions,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "calls": self.calls,
            "sparks": self.sparks,
            "older_sessions": self.older_sessions,
            "older_bytes": self.older_bytes,
            "since": self.since.isoformat() if self.since else None,
            "sampled": self.sampled,
            "cost_usd": self.cost_usd,
            "batch": self.batch,
            "model": self.model,
            "extractor": self.extractor,
            "seconds": self.seconds,
            "prices_taken": PRICES_TAKEN,
            "first": self.first,
            "counted": self.counted,
            "counted_requests": self.counted_requests,
        }


def parse_since(text: str) -> datetime:
    """``--since YYYY-MM-DD``: the start of that local day (aware); a bad date is a ConfigError."""
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(f"--since must be YYYY-MM-DD, not {text!r}") from None
    return datetime(day.year, day.month, day.day).astimezone()


def window_start(config: Config, since: datetime | None = None, everything: bool = False) -> datetime | None:
    """Where a dream with a model starts reading: ``since``, else ``dream_window_days`` before now
    (None: everything, with ``everything`` or a window of 0)."""
    if everything:
        return None
    if since is not None:
        return since
    if not config.dream_window_days:
        return None
    return clock.now() - timedelta(days=config.dream_window_days)


MODEL_EXTRACTORS = ("anthropic", "claude-code", "openai")
"""The extractors that ask a model (and so spend tokens): a dream with one reads the recent window."""


def spends(config: Config) -> bool:
    """Whether a dream with ``config`` asks a model (its chosen extractor is one of :data:`MODEL_EXTRACTORS`)."""
    from dreamtui.core.extract.choose import choose

    return choose(config).kind in MODEL_EXTRACTORS


def default_window(config: Config) -> datetime | None:
    """The window a dream reads when nothing is said: the recent one with a model, everything without."""
    return window_start(config) if spends(config) else None


def session_mtime(files: list[str] | list[Path]) -> float:
    """The newest modification time of a session's files (0 when none can be read)."""
    newest = 0.0
    for f in files:
        try:
            newest = max(newest, os.stat(split_address(f)[0]).st_mtime)
        except OSError:
            continue
    return newest


def price_of(model: str | None) -> tuple[float, float, float] | None:
    """The prices of ``model`` (its longest known id prefix), None when unknown."""
    if not model:
        return None
    for prefix in sorted(PRICES, key=len, reverse=True):
        if model.startswith(prefix):
            return PRICES[prefix]
    return None


_SCHEMA_CHARS: list[int] = []


def schema_chars() -> int:
    """The characters of the output schema every extraction call carries."""
    if not _SCHEMA_CHARS:
        _SCHEMA_CHARS.append(len(json.dumps(ExtractionOut.model_json_schema())))
    return _SCHEMA_CHARS[0]


def request_chars(files: list[str], config: Config) -> tuple[int, int]:
    """(characters sent, calls) for one session's files as a cycle would send them; (0, 0) for a
    session too quiet to dream."""
    try:
        digest = digest_session(files)
    except (TranscriptError, OSError, ValueError):
        return 0, 0
    if digest.person_chars() < config.min_person_chars:
        return 0, 0
    context = ExtractContext(project=digest.project, max_chars=config.max_digest_chars)
    parts, _ = parts_for(digest, context, config.max_digest_chars)
    fixed = len(SYSTEM_PROMPT) + schema_chars()
    return sum(fixed + len(user_message(digest, context, p)) for p in parts), len(parts)


def _unread_sessions(config: Config, ledger: Ledger, project: str | None) -> list[_Session]:
    """Every session with bytes not yet dreamed (sizes only), in the scope."""
    dreamed = offsets.dreamed_offsets(ledger)
    quiet = offsets.quiet_offsets(ledger)
    pmap = project_map(config, ledger)
    groups: dict[tuple[str, str], _Session] = {}
    for tf in discover_all(config):
        key = pmap.key(tf.project, tf.path)
        if project is not None and key != project:
            continue
        fmt = formats.of_file(tf)
        try:
            st = tf.path.stat()
        except OSError:
            continue
        fkey = address_key(tf.address)
        records = fmt.layout == "records"
        if records:
            row = offsets.file_state(ledger, fkey)
            unread = 0 if row is not None and (row.size, row.mtime) == (st.st_size, st.st_mtime) else 1
        else:
            unread = max(0, st.st_size - max(dreamed.get(fkey, 0), quiet.get(fkey, 0)))
        work = groups.get((key, tf.session))
        if work is None:
            work = groups[(key, tf.session)] = _Session((key, tf.session), [], tf.format, 0, 0.0, records)
        if tf.kind == "main":
            work.files.insert(0, tf.address)
        else:
            work.files.append(tf.address)
        work.unread += unread
        work.mtime = max(work.mtime, st.st_mtime)
    return [w for w in groups.values() if w.unread > 0]


def estimate_dream(
    config: Config,
    ledger: Ledger,
    *,
    project: str | None = None,
    since: datetime | None = None,
    extractor: str = "",
    model: str | None = None,
    batch: bool = False,
    priced: bool = False,
) -> Estimate:
    """What a dream of ``project`` (every project when None) reading from ``since`` (None: everything)
    would read and send; ``priced`` adds the cost at :data:`PRICES` (an API key's dream)."""
    t0 = time.monotonic()
    found = _unread_sessions(config, ledger, project)
    cut = since.timestamp() if since is not None else None
    inside = [s for s in found if cut is None or s.mtime >= cut]
    older = [s for s in found if cut is not None and s.mtime < cut]
    est = Estimate(since=since, batch=batch, model=model, extractor=extractor)
    est.sessions = len(inside)
    est.bytes = sum(s.unread for s in inside if not s.records)
    est.older_sessions = len(older)
    est.older_bytes = sum(s.unread for s in older if not s.records)
    by_format: dict[str, list[_Session]] = {}
    for s in inside:
        by_format.setdefault(s.fmt, []).append(s)
    tokens = calls = sparks = 0.0
    with shared_reads():  # the samples of one database read through one connection
        for fmt, group in by_format.items():
            group.sort(key=lambda s: (s.unread, s.key))
            strata = min(STRATA, len(group))
            f_tokens = 0.0
            for k in range(strata):
                stratum = group[k * len(group) // strata : (k + 1) * len(group) // strata]
                pick = stratum[len(stratum) // 2]
                chars, n_calls = request_chars(pick.files, config)
                est.sampled += 1
                if not n_calls:  # too quiet to dream: its stratum is taken as quiet too
                    continue
                est.samples.append((pick.files, chars))
                sparks += len(stratum)
                calls += n_calls * len(stratum)
                if pick.records:  # a whole-file source holding many sessions: scale by sessions
                    f_tokens += chars / CHARS_PER_TOKEN * len(stratum)
                else:  # tokens per raw byte of the sample, times the stratum's bytes not yet dreamed
                    size = sum(_size(f) for f in pick.files) or 1
                    f_tokens += chars / size / CHARS_PER_TOKEN * sum(s.unread for s in stratum)
            est.per_format[fmt] = int(f_tokens)
            tokens += f_tokens
    est.tokens, est.calls, est.sparks = int(tokens), round(calls), int(sparks)
    est.cost_usd = _cost(est) if priced else None
    est.seconds = round(time.monotonic() - t0, 3)
    return est


def _cost(est: Estimate) -> float | None:
    """The estimate's price at :data:`PRICES` (the system prompt read from the cache after the first
    call; :data:`OUTPUT_TOKENS_PER_CALL` answered per call; half through the Batches API)."""
    prices = price_of(est.model)
    if prices is None:
        return None
    inp, out, cache_read = prices
    scale = est.counted or 1.0
    system = len(SYSTEM_PROMPT) / CHARS_PER_TOKEN * scale * est.calls
    cost = (
        max(0.0, est.tokens - system) * inp + system * cache_read + est.calls * OUTPUT_TOKENS_PER_CALL * out
    ) / 1e6
    return round(cost * (BATCH_DISCOUNT if est.batch else 1.0), 2)


Counter = Callable[[dict[str, Any]], int]
"""Counts the input tokens of one request's ``system`` and ``messages`` (``client.messages.count_tokens``)."""


def refine_with_count(est: Estimate, config: Config, count: Counter, most: int = 3) -> None:
    """Scale the estimate by the tokens ``count`` gives for the requests of up to ``most`` sampled
    sessions (the largest) against what their characters gave; a failing count leaves it as it was
    (``count_error`` says why)."""
    picks = sorted(est.samples, key=lambda s: -s[1])[:most]
    counted = 0
    guessed = 0.0
    try:
        for files, chars in picks:
            digest = digest_session(files)
            context = ExtractContext(project=digest.project, max_chars=config.max_digest_chars)
            parts, _ = parts_for(digest, context, config.max_digest_chars)
            for part in parts:
                counted += count(
                    {
                        "system": system_blocks(),
                        "messages": [{"role": "user", "content": user_message(digest, context, part)}],
                    }
                )
                est.counted_requests += 1
            guessed += chars / CHARS_PER_TOKEN
    except Exception as exc:  # noqa: BLE001 - a refinement that fails never fails the estimate
        est.count_error = " ".join(str(exc).split())[:160] or type(exc).__name__
        est.counted_requests = 0
        return
    if not guessed or not counted:
        return
    est.counted = round(counted / guessed, 3)
    est.tokens = int(est.tokens * est.counted)
    est.per_format = {k: int(v * est.counted) for k, v in est.per_format.items()}
    if est.cost_usd is not None:
        est.cost_usd = _cost(est)


def _size(address: str) -> int:
    try:
        return os.stat(split_address(address)[0]).st_size
    except OSError:
        return 0


def first_model_dream(ledger: Ledger) -> bool:
    """No extraction by a model has been recorded yet (the heuristic's and a command's do not count)."""
    return not extractions.any_by(ledger, MODEL_EXTRACTORS)


__all__ = [
    "PRICES",
    "PRICES_TAKEN",
    "Estimate",
    "estimate_dream",
    "first_model_dream",
    "parse_since",
    "price_of",
    "refine_with_count",
    "session_mtime",
    "window_start",
]
