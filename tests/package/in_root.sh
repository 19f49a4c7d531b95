#!/bin/bash
# Runs inside the test root (tests/package/bullseye.sh): WORK holds the wheel and the unpacked
# tarball. Every ddprun run is bounded by timeout(1); LD_BIND_NOW makes a symbol missing from the
# root's glibc fail at start instead of at its first call.
#   in_root.sh WORK
set -euo pipefail
work=$1
cd "$work"
export LD_BIND_NOW=1 PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
limit=120
fail() {
  echo "in_root: FAIL: $*" >&2
  exit 1
}
echo "in_root: $(ldd --version | head -1), $(python3 --version), $(pip3 --version | cut -d' ' -f1-2)"

cat >worker.py <<'PY'
import os
print("worker-ok", os.environ["RANK"], os.environ["WORLD_SIZE"], flush=True)
PY
# expect_ranks LOG N: LOG shows ranks 0..N-1 of a world of N, each once.
expect_ranks() {
  local log=$1 n=$2 r
  for ((r = 0; r < n; r++)); do
    [ "$(grep -c "worker-ok $r $n\$" "$log")" = 1 ] || fail "rank $r of $n missing in $log: $(cat "$log")"
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

venv/bin/pip uninstall -q -y ddprun || fail "pip uninstall"
[ ! -e venv/bin/ddprun ] || fail "venv/bin/ddprun is still there after pip uninstall"

timeout $limit ddprun-*/bin/ddprun --standalone --nproc-per-node 2 worker.py >tar.log 2>&1 ||
  fail "tarball 2-worker job: $(cat tar.log)"
expect_ranks tar.log 2
echo "in_root: tarball: 2-worker job; pip uninstall removed bin/ddprun"
