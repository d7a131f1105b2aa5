"""Made-up bearer tokens against an R token function: how long a caller
whose token is remembered waits for a tool call, and what new valid users
get, while clients flood the server with tokens it has not seen.

    python3 bench/driver/token_flood.py LIB [check_seconds] [bearer_timeout] [clients] [seconds]

LIB is the R library mcpserver is loaded from (e.g. $PWD/.lib). The check
function sleeps check_seconds and accepts "good" and "new-*". Environment:
PREFIX="hang" makes the flood's tokens hang the function (until
interrupted); NEW_FROM=127.0.0.2 sends the new users from another loopback
address (another client), as a real attacker elsewhere would be. Not part
of bench/run.sh: a fairness measurement, not a speed one.
"""
import http.client, json, os, random, string, subprocess, sys, threading, time, re, statistics

lib = sys.argv[1]
check = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 10
attackers = int(sys.argv[4]) if len(sys.argv) > 4 else 40
seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 8
script = f"""
library(mcpserver)
check <- function(token) {{
  if (startsWith(token, 'hang')) Sys.sleep(60) else Sys.sleep({check})
  if (token == 'good') return(list(user = 'ann'))
  startsWith(token, 'new-')
}}
add <- tool(function(x, y) x + y, 'Add', name = 'add', arguments = list(x = type_number(), y = type_number()))
mcp_server(list(add), transport = 'http', port = 0,
  http = http_options(bearer_tokens = check, bearer_timeout = {timeout}))
"""
path = "/tmp/token_flood_server.R"
open(path, "w").write(script)
proc = subprocess.Popen(["Rscript", path], stderr=subprocess.PIPE, env={**os.environ, "R_LIBS": lib}, text=True)
port = None
while port is None:
    if proc.poll() is not None: sys.exit("server died")
    line = proc.stderr.readline()
    m = re.search(r"http://127.0.0.1:(\d+)", line)
    if m: port = int(m.group(1))
threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
def request(token, method="tools/call", name="add", source=None):
    params = {"_meta": META}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Authorization": f"Bearer {token}"}
    if method == "tools/call":
        params.update(name=name, arguments={"x": 1, "y": 2}); headers["Mcp-Name"] = name
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(source, 0) if source else None)
    t = time.perf_counter()
    c.request("POST", "/mcp", body, headers)
    r = c.getresponse(); r.read(); c.close()
    return r.status, time.perf_counter() - t

print("warm:", request("good"))
stop = time.time() + seconds
codes = {}
def attack():
    while time.time() < stop:
        tok = os.environ.get("PREFIX", "") + "".join(random.choices(string.ascii_letters, k=24))
        s, _ = request(tok, "tools/list")
        codes[s] = codes.get(s, 0) + 1
threads = [threading.Thread(target=attack) for _ in range(attackers)]
[t.start() for t in threads]
time.sleep(1)
lat = []
newusers = []
n = 0
while time.time() < stop - 0.5:
    s, d = request("good"); lat.append(d)
    if n % 3 == 0:
        newusers.append(request(f"new-{n}", "tools/list", source=os.environ.get("NEW_FROM")))
    n += 1
[t.join() for t in threads]
proc.kill()
lat.sort()
print(f"cached holder: {len(lat)} calls, median {statistics.median(lat)*1000:.1f} ms, max {lat[-1]*1000:.1f} ms")
print("new valid users:", [(s, round(d, 2)) for s, d in newusers])
print("attackers' answers:", codes)
