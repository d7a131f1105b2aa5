"""Samples where one mcpserver build spends its CPU on trivial `add` calls:
starts the server, warms it up, then runs `perf record` (software clock,
every thread) on it while a burst of pipelined calls is answered, or while
sequential calls are (MODE=sequential). Prints `perf report` by thread and
symbol. See bench/per-call.md.

  python3 bench/driver/profile_calls.py LIB [CALLS]
  MODE=sequential python3 bench/driver/profile_calls.py LIB 5000
  CALLGRIND=/tmp/out python3 bench/driver/profile_calls.py LIB 2000

With CALLGRIND set, the server runs under valgrind's callgrind instead
(instruction counts, one file per thread: OUT-<thread>); no perf then.
"""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import mcppipe as m  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lib = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    sequential = os.environ.get("MODE") == "sequential"
    data = os.environ.get("PERF_DATA", "/tmp/mcpserver-calls.perf")
    callgrind = os.environ.get("CALLGRIND")
    cmd = ["Rscript", "bench/servers/mcpserver.R"]
    if callgrind:
        # Counting starts with the timed calls (callgrind_control -i on).
        cmd = ["R", "--no-echo", "--no-restore", "-d",
               f"valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no "
               f"--callgrind-out-file={callgrind}", "-f", "bench/servers/mcpserver.R"]
    p = m.Proc(cmd, env={**os.environ, "R_LIBS": lib})
    p.handshake()
    for i in range(500):
        p.send(m.call(i, "add", {"x": 1, "y": 2}))
        p.response(i, timeout=600)
    if callgrind:
        subprocess.run(["callgrind_control", "-i", "on", str(p.p.pid)], check=True, capture_output=True)
    else:
        # PERF_HZ: samples per second; PERF_ARGS: more options, such as
        # "--call-graph dwarf,16384" for call graphs.
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock",
                                 "-F", os.environ.get("PERF_HZ", "4000"), "-o", data,
                                 *os.environ.get("PERF_ARGS", "").split(),
                                 "-p", str(p.p.pid)], stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    started = time.perf_counter()
    if sequential:
        for i in range(calls):
            p.send(m.call(100000 + i, "add", {"x": i, "y": 2}))
            p.response(100000 + i, timeout=600)
    else:
        burst = b"".join(m.call(100000 + i, "add", {"x": i, "y": 2}) for i in range(calls))
        writer = threading.Thread(target=p.send, args=(burst,))
        writer.start()
        p.read_lines(calls, timeout=600)
        writer.join()
    elapsed = time.perf_counter() - started
    if callgrind:
        subprocess.run(["callgrind_control", "-i", "off", str(p.p.pid)], check=True, capture_output=True)
        p.close()
        print(f"{calls} calls in {elapsed:.2f} s under callgrind; counts in {callgrind}-*")
        return
    perf.send_signal(2)
    perf.wait()
    p.close()
    print(f"{calls} calls in {elapsed:.2f} s ({calls / elapsed:,.0f}/s)")
    report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "comm,dso,sym",
                             "--percent-limit", "0.4"], capture_output=True, text=True)
    print(report.stdout)


if __name__ == "__main__":
    main()
