"""A transparent stdio proxy that records an MCP conversation.

    python capture.py LOG_DIR -- Rscript tests/e2e/server.R

The client starts this instead of the server. It starts the server command,
forwards the client's bytes to the server's stdin and the server's stdout
bytes back, unchanged, and appends every line of both directions to
LOG_DIR/conn-<pid>.jsonl as {"t": seconds, "dir": "c2s" | "s2c", "line": ...}.
One file per process, because some clients (TS SDK v2 in auto mode) start a
second, short-lived server to probe it. The server's stderr is passed through
untouched. Only the standard library is used.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print("usage: capture.py LOG_DIR -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    log_dir, command = sys.argv[1], sys.argv[3:]
    os.makedirs(log_dir, exist_ok=True)
    log = open(os.path.join(log_dir, f"conn-{os.getpid()}.jsonl"), "a", encoding="utf-8")
    lock = threading.Lock()
    start = time.monotonic()

    def record(direction: str, raw: bytes, unterminated: bool = False) -> None:
        # surrogateescape keeps invalid UTF-8 visible to the validator
        # (json.dumps writes the lone surrogates as \udcXX escapes).
        line = raw.decode("utf-8", "surrogateescape")
        entry = {"t": round(time.monotonic() - start, 6), "dir": direction, "line": line}
        if unterminated:
            entry["unterminated"] = True  # the stream ended mid-line
        with lock:
            if not log.closed:
                log.write(json.dumps(entry) + "\n")
                log.flush()

    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    # A client that gives up sends SIGTERM to us; pass it on so the server
    # does not outlive the proxy.
    def forward_signal(signum, _frame):
        if server.poll() is None:
            server.send_signal(signum)

    signal.signal(signal.SIGTERM, forward_signal)
    signal.signal(signal.SIGINT, forward_signal)

    def write_all(sink: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(sink, view):]
            except OSError:
                return  # the reader went away; keep draining and logging

    def pump(source: int, sink: int, direction: str, on_eof) -> None:
        pending = b""
        while True:
            try:
                chunk = os.read(source, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            # Record, then forward (unchanged): a line is in the log before
            # the other side can react to it, so the log keeps cause before
            # effect across the two threads.
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                record(direction, line)
            write_all(sink, chunk)
        if pending:
            record(direction, pending, unterminated=True)
        on_eof()

    def close_server_stdin() -> None:
        try:
            server.stdin.close()
        except OSError:
            pass

    def close_our_stdout() -> None:
        try:
            os.close(1)
        except OSError:
            pass

    to_server = threading.Thread(
        target=pump, args=(0, server.stdin.fileno(), "c2s", close_server_stdin), daemon=True
    )
    to_server.start()
    # The server's output is read on the main thread; it ends when the
    # server closes its stdout (normally: when it exits after stdin EOF).
    pump(server.stdout.fileno(), 1, "s2c", close_our_stdout)
    status = server.wait()
    with lock:
        log.close()
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
