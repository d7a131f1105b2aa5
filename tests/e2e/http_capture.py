"""A transparent HTTP proxy that records an MCP conversation over Streamable HTTP.

    python http_capture.py LOG_DIR TARGET_URL

Listens on a free port of 127.0.0.1, prints its URL on stdout (one line),
and forwards every request to TARGET_URL unchanged (Host rewritten), its
response back as it arrives (event streams included, line by line). Every
message of both directions is appended to LOG_DIR in the format of
capture.py ({"t", "dir": "c2s" | "s2c", "line"}), so validate_wire.py checks
it: one conn-session-<id>.jsonl per handshake-era session (its initialize
included), and conn-stateless.jsonl for requests without a session. Only
the standard library is used.
"""

import http.client
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host", "content-length"}


def main() -> int:
    log_dir, target = sys.argv[1], urllib.parse.urlsplit(sys.argv[2])
    os.makedirs(log_dir, exist_ok=True)
    lock = threading.Lock()
    start = time.monotonic()

    def record(conn: str, direction: str, line: str) -> None:
        entry = {"t": round(time.monotonic() - start, 6), "dir": direction, "line": line}
        with lock, open(os.path.join(log_dir, f"conn-{conn}.jsonl"), "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the body ends with the connection

        def log_message(self, *args):
            pass

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            session = self.headers.get("Mcp-Session-Id")
            upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            headers["Host"] = target.netloc
            upstream.request(self.command, target.path, body=body or None, headers=headers)
            response = upstream.getresponse()
            session = response.getheader("Mcp-Session-Id") or session
            conn = f"session-{session}" if session else "stateless"
            if body:
                record(conn, "c2s", body.decode("utf-8", "surrogateescape"))
            self.send_response(response.status)
            for k, v in response.getheaders():
                if k.lower() not in HOP_BY_HOP:
                    self.send_header(k, v)
            self.end_headers()
            event_stream = (response.getheader("Content-Type") or "").startswith("text/event-stream")
            if not event_stream:
                data = response.read()
                if data.strip():
                    record(conn, "s2c", data.decode("utf-8", "surrogateescape"))
                self.wfile.write(data)
                return
            while True:
                line = response.readline()
                if not line:
                    break
                text = line.decode("utf-8", "surrogateescape").rstrip("\n")
                if text.startswith("data: "):
                    record(conn, "s2c", text[len("data: "):])
                self.wfile.write(line)
                self.wfile.flush()

        def do_POST(self):
            self.forward()

        def do_GET(self):
            self.forward()

        def do_DELETE(self):
            self.forward()

        def do_OPTIONS(self):  # a browser page's CORS preflight (tests/e2e/apps)
            self.forward()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}{target.path}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
