#!/usr/bin/env bash
# Inside the Debian 13 root (torch2.sh): ddprun with torch 2.6 workers. One line per check,
# exit 1 when one failed.   in_root.sh DDPRUN SOURCE_DIR WORK_DIR
set -uo pipefail
ddprun=$1 src=$2 work=$3
workers=$src/tests/support/workers
py=/usr/bin/python3
failures=0
pass() { echo "torch2: PASS $1"; }
fail() {
  echo "torch2: FAIL $1"
  [ -f "$work/err" ] && sed 's/^/    /' "$work/err" | tail -40
  failures=$((failures + 1))
}
has() { grep -qE -- "$1" "$work/$2"; }
# A launch bounded to $1 seconds; stdout and stderr in $work/out and $work/err.
launch() { timeout -k 5 "$1" "$ddprun" "${@:2}" >"$work/out" 2>"$work/err"; }

echo "torch2: $($py -c 'import torch; print("torch", torch.__version__)') $("$ddprun" --version)"

# A real gloo DDP step, two workers on the agent's store; torch 2.6 gets only the NCCL name it reads.
if launch 120 --standalone --nproc-per-node 2 --python $py "$workers/gloo_allreduce.py" &&
  has 'rank=1 world=2 allreduce=3.0' out; then pass "DDP gloo job"; else fail "DDP gloo job"; fi
if launch 60 --standalone --nproc-per-node 1 --no-python "$workers/envdump.sh" "$work" &&
  grep -qx 'TORCH_NCCL_ASYNC_ERROR_HANDLING=1' "$work/env_0.txt" &&
  ! grep -q '^NCCL_ASYNC_ERROR_HANDLING=' "$work/env_0.txt"; then
  pass "NCCL variable for torch 2.6"
else
  fail "NCCL variable for torch 2.6: $(grep NCCL "$work/env_0.txt" 2>/dev/null | tr '\n' ' ')"
fi

# Two agents rendezvousing over c10d, one gloo job across them.
# Below the kernel's ephemeral range, so no outgoing connection on the machine holds one of
# port..port+2 (a random port inside it can be held by a busy machine's outgoing connections:
# the likely cause of one failed store check beside a 4,096-node bench).
low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
if ((low < 21000)); then low=32768; fi
port=$(( (RANDOM % (low - 20003)) + 20000 ))
agent() {
  timeout -k 5 120 "$ddprun" --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d \
    --rdzv-endpoint "127.0.0.1:$port" --rdzv-id t2 --local-addr "$1" \
    --rdzv-conf last_call_timeout=1 --python $py "$workers/gloo_allreduce.py" >"$work/agent_$1" 2>&1
}
agent 127.0.0.2 & first=$!
agent 127.0.0.3
second=$?
wait "$first"
if [ $? -eq 0 ] && [ $second -eq 0 ] && cat "$work"/agent_* | grep -q 'world=2 allreduce=3.0'; then
  pass "two agents over c10d"
else
  cat "$work"/agent_* >"$work/err"
  fail "two agents over c10d"
fi

# torch 2.6's FileTimerClient: the watchdog kills the overrunning attempt, the restart finishes.
mkdir -p "$work/timer"
if TORCHELASTIC_ENABLE_FILE_TIMER=1 launch 120 --nproc-per-node 1 --max-restarts 1 --python $py \
  "$workers/file_timer.py" "$work/timer" hang && has 'watchdog timer "step" expired' err; then
  pass "file-timer watchdog"
else
  fail "file-timer watchdog"
fi

# The hang report names the user's frame, not torch 2.6's c10d_logger wrapper.
launch 120 --nproc-per-node 2 --stacks-on-failure --python $py "$workers/hang_in_collective.py"
if has 'rank 1: all_reduce \(distributed_c10d\.py:[0-9]+\) <- wait_in_all_reduce \(hang_in_collective\.py:[0-9]+\)' err &&
  ! has 'rank 1: [^\n]*wrapper \(c10d_logger' err; then
  pass "hang report names user code"
else
  fail "hang report names user code"
fi

# Resume after a killed rank: attempt 0's rank 1 is SIGKILLed, attempt 1 runs to the end.
if launch 120 --standalone --nproc-per-node 2 --max-restarts 1 --no-python /bin/sh -c \
  '[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$RANK" = 1 ] && kill -KILL $$$$; exec '"$py"' '"$workers/gloo_allreduce.py" &&
  has 'killed by SIGKILL' err && has 'rank=1 world=2 allreduce=3.0' out; then
  pass "resume after a killed rank"
else
  fail "resume after a killed rank"
fi

# torch 2.6's TCPStore client against ddprun's store, and ddprun's verbs against torch 2.6's server.
sport=$((port + 1))
"$ddprun" store serve --host 127.0.0.1 --port "$sport" >"$work/serve" 2>&1 & serve=$!
sleep 1
if timeout 60 $py -c "
import datetime, torch.distributed as d
s = d.TCPStore('127.0.0.1', $sport, is_master=False, timeout=datetime.timedelta(seconds=20))
s.set('k', 'v'); assert s.get('k') == b'v'; assert s.add('n', 5) == 5
assert s.compare_set('k', 'v', 'w') == b'w'
print('client ok')" >"$work/err" 2>&1; then pass "torch 2.6 client, ddprun store"; else
  { echo "ddprun store serve said:"; cat "$work/serve"; } >>"$work/err"
  fail "torch 2.6 client, ddprun store"
fi
kill "$serve"
wait "$serve" 2>/dev/null
tport=$((port + 2))
timeout 90 $py -c "
import datetime, time, torch.distributed as d
s = d.TCPStore('127.0.0.1', $tport, is_master=True, wait_for_workers=False)
time.sleep(60)" >"$work/tserver" 2>&1 & tserver=$!
sleep 4
ep=127.0.0.1:$tport
if timeout 20 "$ddprun" store set /k v --endpoint $ep >"$work/out" 2>"$work/err" &&
  timeout 20 "$ddprun" store get /k --endpoint $ep >"$work/out" 2>"$work/err" && has '^v$' out &&
  timeout 20 "$ddprun" store add /n 2 --endpoint $ep >"$work/out" 2>"$work/err" && has '^2$' out; then
  pass "ddprun store verbs, torch 2.6 server"
else
  fail "ddprun store verbs, torch 2.6 server"
fi
timeout 20 "$ddprun" store keys --endpoint $ep >"$work/out" 2>"$work/err"
keys=$?
if [ $keys -eq 1 ] && has 'does not support listing keys' err && [ "$(wc -l <"$work/err")" -eq 1 ]; then
  pass "store keys, torch 2.6 server: one line"
else
  fail "store keys, torch 2.6 server: one line (exit $keys)"
fi
kill "$tserver" 2>/dev/null
wait "$tserver" 2>/dev/null
echo "torch2: $failures check(s) failed"
[ "$failures" -eq 0 ]
