"""The HTTP side every fake model server shares: a local threaded server on a free port that records
each request and answers with a scripted :class:`Reply` chosen by the subclass's ``_route``."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fakes.waiting import MIN_TIMEOUT


@dataclass
class Reply:
    """One scripted HTTP answer."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    hold: bool = False  # answer only when the fake is released (its ``with`` ends): trips client timeouts


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class JsonHTTPFake:
    """A fake JSON API on 127.0.0.1: ``with`` starts and stops it, ``requests`` holds what came in,
    a subclass answers in ``_route(method, path, body)``."""

    default_path = "/"

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.released = threading.Event()
        """Set when the ``with`` ends: a held reply (``Reply(hold=True)``) is sent then, to a client
        that has long given up."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> JsonHTTPFake:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self._server.shutdown()
        self._server.server_close()

    def calls(self, path: str | None = None, method: str = "POST") -> list[Recorded]:
        """The recorded requests to one endpoint (the fake's main one by default)."""
        path = path or self.default_path
        return [r for r in self.requests if r.path == path and r.method == method]

    def _route(self, method: str, path: str, body: Any) -> Reply:
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with fake._lock:
                    fake.requests.append(
                        Recorded(method, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                reply = fake._route(method, self.path, body)
                if reply.hold:
                    fake.released.wait(MIN_TIMEOUT)  # a server that answers only after the client gave up
                data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                payload = data.encode("utf-8")
                self.send_response(reply.status)
                headers = {"content-type": "application/json", **reply.headers}
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:  # the client gave up (a timeout test): nothing to answer
                    self.close_connection = True

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._serve("GET")

        return Handler
