#!/bin/sh
# Runs a command with the network cut: in a network namespace of its own,
# where only loopback exists (brought up, so that local servers work).
# Before running the command it makes sure that crates.io really is out of
# reach from inside (tools/reachable.py), so a pass proves the command
# needs no network. `make test` builds and tests the package this way.
#   tools/offline.sh COMMAND [ARG...]
# Exits with the command's status; 75 (with the reason on stderr) if no
# namespace can be made here (that needs root, or unprivileged user
# namespaces for `unshare --user`); 1 if the network is still reachable.
set -eu
tools=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" = --inside ]; then
  shift
  # iproute2's ip; without it loopback stays down (the build still works).
  ip link set lo up 2>/dev/null || true
  if python3 "$tools/reachable.py" crates 2>/dev/null; then
    echo "offline: crates.io is still reachable inside the network namespace" >&2
    exit 1
  fi
  exec "$@"
fi

if [ $# -eq 0 ]; then
  echo "usage: tools/offline.sh COMMAND [ARG...]" >&2
  exit 2
fi
for how in "--net" "--user --map-root-user --net"; do
  # shellcheck disable=SC2086 # the options are words
  if unshare $how true 2>/dev/null; then
    # shellcheck disable=SC2086
    exec unshare $how "$tools/offline.sh" --inside "$@"
  fi
done
echo "offline: cannot make a network namespace here (unshare --net needs root, or user namespaces for unshare --user)" >&2
exit 75
