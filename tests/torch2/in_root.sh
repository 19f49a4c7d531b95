#!/usr/bin/env bash
# Inside a Debian root with a newer torch (torch2.sh): ddprun with that torch's workers. One line
# per check, exit 1 when one failed.   in_root.sh DDPRUN SOURCE_DIR WORK_DIR SET
#   SET core: a gloo DDP job, the worker variables that torch's torchrun gives, torch's TCPStore
#             client against `ddprun store serve` and `ddprun store` verbs against torch's server
#             (the cheap set, for torch 2.6 in the Debian 13 root)
#   SET full: core, and two agents over c10d, torch's FileTimerClient, the hang and stall reports
#             naming user code, resume after a killed rank, and the two users' libraries (an
#             Accelerate loop and a Transformers Trainer) giving the same final parameters under
#             ddprun as under the root's torchrun (torch 2.14 in the forky root)
set -uo pipefail
ddprun=$1 src=$2 work=$3 set=$4
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
torch=$($py -c 'import torch; print(torch.__version__.split("+")[0])')
minor=$(echo "$torch" | cut -d. -f2)

echo "torch2: torch $torch $("$ddprun" --version) ($set)"

# Below the kernel's ephemeral range, so no outgoing connection on the machine holds one of
# port..port+2 (a random port inside it can be held by a busy machine's outgoing connections:
# the likely cause of one failed store check beside a 4,096-node bench).
low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
if ((low < 21000)); then low=32768; fi
port=$(((RANDOM % (low - 20003)) + 20000))

check_ddp_job() {
  if launch 120 --standalone --nproc-per-node 2 --python $py "$workers/gloo_allreduce.py" &&
    has 'rank=1 world=2 allreduce=3.0' out; then pass "DDP gloo job"; else fail "DDP gloo job"; fi
}

# The names torch >= 2.2 reads, and (torch >= 2.9) the --signals-to-handle torchrun exports.
check_worker_variables() {
  local want_signals=0
  ((minor >= 9)) && want_signals=1
  if launch 60 --standalone --nproc-per-node 1 --no-python "$workers/envdump.sh" "$work" &&
    grep -qx 'TORCH_NCCL_ASYNC_ERROR_HANDLING=1' "$work/env_0.txt" &&
    ! grep -q '^NCCL_ASYNC_ERROR_HANDLING=' "$work/env_0.txt" &&
    [ "$(grep -cx 'TORCHELASTIC_SIGNALS_TO_HANDLE=SIGTERM,SIGINT,SIGHUP,SIGQUIT' "$work/env_0.txt")" = "$want_signals" ]; then
    pass "worker variables for torch $torch"
  else
    fail "worker variables for torch $torch: $(grep -E 'NCCL|SIGNALS' "$work/env_0.txt" 2>/dev/null | tr '\n' ' ')"
  fi
}

# Two agents rendezvousing over c10d, one gloo job across them.
check_two_agents() {
  agent() {
    timeout -k 5 120 "$ddprun" --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d \
      --rdzv-endpoint "127.0.0.1:$port" --rdzv-id t2 --local-addr "$1" \
      --rdzv-conf last_call_timeout=1 --python $py "$workers/gloo_allreduce.py" >"$work/agent_$1" 2>&1
  }
  agent 127.0.0.2 &
  local first=$!
  agent 127.0.0.3
  local second=$?
  wait "$first"
  if [ $? -eq 0 ] && [ $second -eq 0 ] && cat "$work"/agent_* | grep -q 'world=2 allreduce=3.0'; then
    pass "two agents over c10d"
  else
    cat "$work"/agent_* >"$work/err"
    fail "two agents over c10d"
  fi
}

# torch's FileTimerClient: the watchdog kills the overrunning attempt, the restart finishes.
check_file_timer() {
  mkdir -p "$work/timer"
  if TORCHELASTIC_ENABLE_FILE_TIMER=1 launch 120 --nproc-per-node 1 --max-restarts 1 --python $py \
    "$workers/file_timer.py" "$work/timer" hang && has 'watchdog timer "step" expired' err; then
    pass "file-timer watchdog"
  else
    fail "file-timer watchdog"
  fi
}

# The hang report names the user's frame, not torch's c10d_logger wrapper.
check_hang_report() {
  launch 120 --nproc-per-node 2 --stacks-on-failure --python $py "$workers/hang_in_collective.py"
  if has 'rank 1: all_reduce \(distributed_c10d\.py:[0-9]+\) <- wait_in_all_reduce \(hang_in_collective\.py:[0-9]+\)' err &&
    ! has 'rank 1: [^\n]*wrapper \(c10d_logger' err; then
    pass "hang report names user code"
  else
    fail "hang report names user code"
  fi
}

# A stall (no output, no file-timer request): every rank's stack, the stuck one's own function.
check_stall_report() {
  if launch 180 --nproc-per-node 2 --stall-timeout 5 --max-restarts 1 --python $py \
    "$workers/stall_once.py" &&
    has 'rank 1: wait_for_data \(stall_once\.py:[0-9]+\) <- main \(stall_once\.py:[0-9]+\)' err &&
    has 'rank 0: all_reduce \(distributed_c10d\.py:[0-9]+\) <- train_step \(stall_once\.py:[0-9]+\)' err &&
    has 'rank 0 sum 2' out; then
    pass "stall report names user code"
  else
    fail "stall report names user code"
  fi
}

# Resume after a killed rank: attempt 0's rank 1 is SIGKILLed, attempt 1 runs to the end.
check_resume() {
  if launch 120 --standalone --nproc-per-node 2 --max-restarts 1 --no-python /bin/sh -c \
    '[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$RANK" = 1 ] && kill -KILL $$$$; exec '"$py"' '"$workers/gloo_allreduce.py" &&
    has 'killed by SIGKILL' err && has 'rank=1 world=2 allreduce=3.0' out; then
    pass "resume after a killed rank"
  else
    fail "resume after a killed rank"
  fi
}

# torch's TCPStore client against ddprun's store, and ddprun's verbs against torch's server.
check_stores() {
  local sport=$((port + 1)) tport=$((port + 2)) serve tserver keys
  "$ddprun" store serve --host 127.0.0.1 --port "$sport" >"$work/serve" 2>&1 &
  serve=$!
  sleep 1
  if timeout 60 $py -c "
import datetime, torch.distributed as d
s = d.TCPStore('127.0.0.1', $sport, is_master=False, timeout=datetime.timedelta(seconds=20))
s.set('k', 'v'); assert s.get('k') == b'v'; assert s.add('n', 5) == 5
assert s.compare_set('k', 'v', 'w') == b'w'
print('client ok')" >"$work/err" 2>&1; then pass "torch $torch client, ddprun store"; else
    { echo "ddprun store serve said:"; cat "$work/serve"; } >>"$work/err"
    fail "torch $torch client, ddprun store"
  fi
  kill "$serve"
  wait "$serve" 2>/dev/null
  timeout 90 $py -c "
import datetime, time, torch.distributed as d
s = d.TCPStore('127.0.0.1', $tport, is_master=True, wait_for_workers=False)
time.sleep(60)" >"$work/tserver" 2>&1 &
  tserver=$!
  sleep 4
  local ep=127.0.0.1:$tport
  if timeout 20 "$ddprun" store set /k v --endpoint $ep >"$work/out" 2>"$work/err" &&
    timeout 20 "$ddprun" store get /k --endpoint $ep >"$work/out" 2>"$work/err" && has '^v$' out &&
    timeout 20 "$ddprun" store add /n 2 --endpoint $ep >"$work/out" 2>"$work/err" && has '^2$' out; then
    pass "ddprun store verbs, torch $torch server"
  else
    fail "ddprun store verbs, torch $torch server"
  fi
  # torch 2.6's server has no list-keys command (one line, exit 1); 2.14's lists them.
  timeout 20 "$ddprun" store keys --endpoint $ep >"$work/out" 2>"$work/err"
  keys=$?
  if ((minor >= 14)); then
    if [ $keys -eq 0 ] && has '^/k$' out && has '^/n$' out; then
      pass "store keys, torch $torch server: listed"
    else
      fail "store keys, torch $torch server: listed (exit $keys: $(tr '\n' ' ' <"$work/out"))"
    fi
  elif [ $keys -eq 1 ] && has 'does not support listing keys' err && [ "$(wc -l <"$work/err")" -eq 1 ]; then
    pass "store keys, torch $torch server: one line"
  else
    fail "store keys, torch $torch server: one line (exit $keys)"
  fi
  kill "$tserver" 2>/dev/null
  wait "$tserver" 2>/dev/null
}

# A users' library under ddprun and under the root's torchrun: the same final line of rank 0.
# same_result NAME PATTERN SCRIPT [ARG...]
same_result() {
  local name=$1 pattern=$2
  shift 2
  timeout -k 5 240 torchrun --standalone --nproc-per-node 2 "$@" >"$work/torchrun_out" 2>"$work/err"
  local theirs ours
  theirs=$(grep -E "$pattern" "$work/torchrun_out")
  if [ -z "$theirs" ]; then
    fail "$name: torchrun $torch gave no result"
    return
  fi
  launch 240 --standalone --nproc-per-node 2 --python $py "$@"
  ours=$(grep -E "$pattern" "$work/out")
  if [ "$ours" = "$theirs" ]; then
    pass "$name: $ours, as under torchrun $torch"
  else
    echo "torchrun: $theirs / ddprun: ${ours:-nothing}" >>"$work/err"
    fail "$name: not the result torchrun $torch gives"
  fi
}

check_ddp_job
check_worker_variables
check_stores
if [ "$set" = full ]; then
  check_two_agents
  check_file_timer
  check_hang_report
  check_stall_report
  check_resume
  same_result "Accelerate" '^accelerate world=2 backend=gloo final=' "$workers/accelerate_train.py"
  same_result "Transformers Trainer" '^trainer world=2 checksum=' "$workers/trainer_train.py" \
    "$work/trainer"
fi
echo "torch2: $failures check(s) failed"
[ "$failures" -eq 0 ]
