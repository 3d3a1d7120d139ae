"""A real HTTP server on 127.0.0.1 for tests that talk to one (webhook receivers, OAuth token endpoints,
JWKS): a free port, a daemon thread, a handler that logs nothing and answers bytes or JSON."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that writes no access log and answers with ``reply``."""

    def log_message(self, *args) -> None:
        return None

    def reply(
        self, status: int, body, *, content_type: str | None = "application/json", headers=None
    ) -> None:
        """Answer ``status`` with ``body`` (bytes as they are, a str encoded, anything else as JSON)."""
        if isinstance(body, bytes):
            data = body
        else:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class LocalServer:
    """``handler`` served on 127.0.0.1 at a free port (``base``, e.g. http://127.0.0.1:40123) from a daemon
    thread once started; ``close`` stops it and frees the port."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> LocalServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
