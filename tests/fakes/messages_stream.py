"""A stand-in for the Messages API as the real Claude Code CLI calls it (``POST /v1/messages`` with
``stream: true``): every request is recorded, and every answer is one streamed text reply. Enough for a
real headless session (``claude -p``) to start, answer and end, so its hooks run as they do for a person.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class MessagesStream:
    """A local server on a free port; ``url`` is its base URL, ``bodies`` what the CLI sent."""

    def __init__(self, reply: str = "Done.") -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(200, "application/json", b"{}")

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    self._send(200, "application/json", b'{"input_tokens": 3}')
                    return
                owner.bodies.append(body)
                self._send(200, "text/event-stream", owner.events(str(body.get("model", "claude"))))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def events(self, model: str) -> bytes:
        message = {
            "id": "msg_stand_in",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 0},
        }
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": self.reply},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 1},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()

    def __enter__(self) -> MessagesStream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
