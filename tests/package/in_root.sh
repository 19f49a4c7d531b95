#!/bin/bash
# Runs inside the test root (tests/package/bullseye.sh): WORK holds the wheel, the unpacked
# tarball and ddprun_glibc_probe; HEAD_NAME is a name the root's /etc/hosts maps to 127.0.0.1 (the binary resolves it
# with getaddrinfo, through the root's NSS). Every ddprun run is bounded by timeout(1);
# LD_BIND_NOW makes a symbol missing from the root's glibc fail at start instead of at its first
# call.
#   in_root.sh WORK HEAD_NAME
set -euo pipefail
work=$1 head=$2
cd "$work"
# TMPDIR: ddprun's torchelastic_* run directories go with WORK, not into the cached root's /tmp.
export TMPDIR=$work LD_BIND_NOW=1 PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
limit=120
fail() {
  echo "in_root: FAIL: $*" >&2
  exit 1
}
echo "in_root: $(ldd --version | head -1), $(python3 --version), $(pip3 --version | cut -d' ' -f1-2)"

timeout $limit ./ddprun_glibc_probe "$head" || fail "ddprun_glibc_probe $head"

# One write(2) per line: the workers share the log's file offset, and an unbuffered print
# writes each piece on its own, which interleaves the two ranks' lines.
# Each worker also prints a variable of the launcher's own environment, which ddprun must pass
# on (the relocatable binary once lost the whole environment: glibc stubs, copy-relocated environ).
export DDPRUN_PKG_TAG=from-the-launcher
cat >worker.py <<'PY'
import os
os.write(1, ("worker-ok %s %s %s\n" % (os.environ["RANK"], os.environ["WORLD_SIZE"],
                                       os.environ.get("DDPRUN_PKG_TAG", "lost"))).encode())
PY
# expect_ranks LOG N: LOG shows ranks 0..N-1 of a world of N, each once, with the launcher's env.
expect_ranks() {
  local log=$1 n=$2 r
  for ((r = 0; r < n; r++)); do
    [ "$(grep -c "worker-ok $r $n $DDPRUN_PKG_TAG\$" "$log")" = 1 ] ||
      fail "rank $r of $n missing (or without the launcher's environment) in $log: $(cat "$log")"
  done
}

python3 -m venv venv
venv/bin/pip install -q --no-index ./ddprun-*.whl || fail "pip install of the wheel"
timeout $limit venv/bin/ddprun --version | grep -q '^ddprun ' || fail "ddprun --version"
timeout $limit venv/bin/python -m ddprun --version | grep -q '^ddprun ' || fail "python -m ddprun --version"

timeout $limit venv/bin/ddprun --standalone --nproc-per-node 2 worker.py >job.log 2>&1 ||
  fail "2-worker job: $(cat job.log)"
expect_ranks job.log 2
echo "in_root: wheel: --version, python -m ddprun, 2-worker job"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for node in 0 1; do
  timeout $limit venv/bin/ddprun --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d \
    --rdzv-endpoint "localhost:$port" --rdzv-id bullseye worker.py >"agent$node.log" 2>&1 &
done
for node in 0 1; do
  wait -n || fail "an agent of the c10d job failed: $(cat agent0.log agent1.log)"
done
cat agent0.log agent1.log >agents.log
expect_ranks agents.log 2
echo "in_root: wheel: two agents over c10d at localhost:$port"

# An /etc/hosts name as the static rendezvous' master address: the agent hosts the store there.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout $limit venv/bin/ddprun --nnodes 1 --nproc-per-node 2 --master-addr "$head" \
  --master-port "$port" worker.py >static.log 2>&1 || fail "static job at $head:$port: $(cat static.log)"
expect_ranks static.log 2
# A bad value: ddprun throws the usage error up to main, so the unwinder runs through the
# binary's _dl_find_object (the shim's own lookup on glibc < 2.35).
set +e
timeout $limit venv/bin/ddprun --nproc-per-node many worker.py >bad.log 2>&1
bad=$?
set -e
[ "$bad" = 2 ] && grep -q 'many' bad.log || fail "--nproc-per-node many: exit $bad, expected 2: $(cat bad.log)"
echo "in_root: wheel: static rendezvous at $head:$port, a usage error exits 2"

venv/bin/pip uninstall -q -y ddprun || fail "pip uninstall"
[ ! -e venv/bin/ddprun ] || fail "venv/bin/ddprun is still there after pip uninstall"

timeout $limit ddprun-*/bin/ddprun --standalone --nproc-per-node 2 worker.py >tar.log 2>&1 ||
  fail "tarball 2-worker job: $(cat tar.log)"
expect_ranks tar.log 2
echo "in_root: tarball: 2-worker job; pip uninstall removed bin/ddprun"
