#!/usr/bin/env bash
# ddprun on a machine with an NVIDIA GPU (issue #25 part 5): one line per check
# ("PASS|FAIL <check>: <detail>"), launch times beside torchrun's, exit 1 when a check failed,
# 2 when the machine cannot run them (no ddprun, no nvidia-smi, no torch with CUDA and NCCL).
# Needs bash, coreutils, nvidia-smi and a Python with torch; no compiler: it runs the relocatable
# ddprun carried with it. Every command is bounded; the whole run stays under 5 minutes.
#
#   scripts/gpu-check.sh [DDPRUN [PYTHON]]
#
# DDPRUN: default $DDPRUN, else bin/ddprun beside this script's directory (the tarball), else
# `ddprun` on PATH. PYTHON: default $PYTHON_EXEC, else python3 on PATH; torchrun is that Python's
# `-m torch.distributed.run`. DDPRUN_GPU_CHECK_FAKE=1 runs the same checks on a machine without
# a GPU (gloo instead of NCCL, the fake nvidia-smi and NVML of the test tree on PATH and
# LD_LIBRARY_PATH): tests/e2e/gpu_check_fake.sh does that, so this script is tested in CI.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ddprun=${1:-${DDPRUN:-}}
python=${2:-${PYTHON_EXEC:-python3}}
fake=${DDPRUN_GPU_CHECK_FAKE:-0}
reps=${DDPRUN_GPU_CHECK_REPS:-5}
failures=0
[ -n "$ddprun" ] || ddprun=$here/../bin/ddprun
[ -x "$ddprun" ] || ddprun=$(command -v ddprun || true)

cannot() { echo "gpu-check: cannot run the checks: $1" >&2; exit 2; }
pass() { echo "PASS $1: $2"; }
fail() { echo "FAIL $1: $2"; failures=$((failures + 1)); }
check() { if [ "$2" = "$3" ]; then pass "$1" "$4"; else fail "$1" "expected '$3', got '$2' ($4)"; fi; }
present() { grep -q -- "$1" "$work/err" && echo yes || echo no; }

[ -n "$ddprun" ] && [ -x "$ddprun" ] || cannot "no ddprun binary (pass its path)"
command -v nvidia-smi >/dev/null || cannot "nvidia-smi is not on PATH"
work=$(mktemp -d) || cannot "mktemp failed"
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work
smi=$(timeout 30 nvidia-smi -L) || cannot "nvidia-smi -L failed"
ngpu=$(grep -c '^GPU [0-9]' <<<"$smi")
uuid=$(sed -n 's/^GPU 0: .*(UUID: \(GPU-[^)]*\)).*/\1/p' <<<"$smi")
[ "$ngpu" -gt 0 ] || cannot "nvidia-smi -L lists no GPU"
backend=nccl
[ "$fake" = 1 ] && backend=gloo
timeout 120 "$python" -c "import torch, sys; sys.exit(0 if '$fake' == '1' or
  (torch.cuda.is_available() and torch.distributed.is_nccl_available()) else 1)" ||
  cannot "$python has no torch with CUDA and NCCL"
echo "gpu-check: $("$ddprun" --version), $("$python" -c 'import torch; print("torch", torch.__version__)'), $ngpu GPU(s)"

# The worker: `report` writes what it sees, `allreduce` one NCCL all_reduce through the agent's
# store, `timer` an expiring file timer after NCCL init, `stall` silence after NCCL init.
cat >"$work/worker.py" <<'EOF'
import os, sys, time
mode, backend = sys.argv[1], sys.argv[2]
import torch
import torch.distributed as dist
rank, cuda = os.environ["RANK"], backend == "nccl"
if mode == "report":
    n = torch.cuda.device_count() if cuda else 1
    uuid = str(torch.cuda.get_device_properties(0).uuid) if cuda else ""
    print("seen", os.environ["LOCAL_RANK"], os.environ.get("CUDA_VISIBLE_DEVICES", "-"), n, uuid)
    sys.exit(0)
dist.init_process_group(backend)
t = torch.ones(4, device="cuda:0" if cuda else "cpu")
dist.all_reduce(t)
if mode == "allreduce":
    print("allreduce", t.sum().item(), os.environ["TORCHELASTIC_USE_AGENT_STORE"])
    sys.exit(0)
if mode == "timer":
    from torch.distributed.elastic.timer import FileTimerClient, configure, expires
    configure(FileTimerClient(os.environ["TORCHELASTIC_TIMER_FILE"]))
    with expires(after=1, scope="gpu_check"):
        time.sleep(60)
print("stalling", flush=True)
time.sleep(60)
EOF

run() { timeout -k 5 "$1" "${@:2}" >"$work/out" 2>"$work/err"; }
worker() { echo --python "$python" "$work/worker.py" "$1" "$backend"; }
nproc_of() { sed -n 's/^nproc_per_node *= *\([0-9]*\).*/\1/p' "$work/out"; }

for word in gpu auto; do
  env -u CUDA_VISIBLE_DEVICES timeout 30 "$ddprun" --nproc-per-node "$word" --print-config x.py \
    >"$work/out" 2>&1
  check "nproc-per-node $word" "$(nproc_of)" "$ngpu" "nvidia-smi -L lists $ngpu"
done
CUDA_VISIBLE_DEVICES=0 timeout 30 "$ddprun" --nproc-per-node gpu --print-config x.py >"$work/out" 2>&1
check "nproc-per-node gpu, CUDA_VISIBLE_DEVICES=0" "$(nproc_of)" 1 "one visible device"
for cvd in 0 "$uuid"; do
  CUDA_VISIBLE_DEVICES=$cvd run 60 "$ddprun" --standalone --nproc-per-node 1 $(worker report)
  seen=$(grep '^seen' "$work/out")
  check "CUDA_VISIBLE_DEVICES=$cvd" "$(cut -d' ' -f3,4 <<<"$seen")" "$cvd 1" "worker: $seen"
done
(unset CUDA_VISIBLE_DEVICES && run 60 "$ddprun" --standalone --nproc-per-node 1 --pin-gpus $(worker report))
seen=$(grep '^seen' "$work/out")
check "--pin-gpus" "$(cut -d' ' -f2,4 <<<"$seen") $([ "$(cut -d' ' -f3 <<<"$seen")" != - ] && echo set)" \
  "0 1 set" "worker: $seen"
# --agent-store on: torch before 2.4 (the fake check's 1.13) gets worker rank 0's store by default.
run 120 "$ddprun" --standalone --nproc-per-node 1 --agent-store on $(worker allreduce)
check "$backend all_reduce via the agent store" "$(grep '^allreduce' "$work/out")" \
  "allreduce 4.0 True" "exit $?"
TORCHELASTIC_ENABLE_FILE_TIMER=1 run 120 "$ddprun" --standalone --nproc-per-node 1 $(worker timer)
check "file timer with $backend" "$(present 'watchdog timer "gpu_check" expired')" yes \
  "$(grep -m1 'exitcode' "$work/err")"
run 120 "$ddprun" --standalone --nproc-per-node 1 --stall-timeout 5 $(worker stall)
check "stall with $backend" "$(present 'worker group stalled')" yes "$(grep -m1 'rank 0: ' "$work/err")"

# The node's NVLink domain (#42) beside nvidia-smi's fabric fields of GPU 0: ddprun names a
# domain only for a non-zero ClusterUUID (a single HGX node has an all-zero one: "-"). Real GPUs
# only (the fake nvidia-smi knows -L alone).
if [ "$fake" != 1 ]; then
  timeout 30 "$ddprun" --print-config --nnodes 2 --rdzv-backend c10d \
    --rdzv-endpoint 127.0.0.1:29400 x.py >"$work/out" 2>&1
  domain=$(sed -n 's/^node_domain *= *\([^ ]*\).*/\1/p' "$work/out")
  fabric=$(timeout 30 nvidia-smi -i 0 --format=csv,noheader \
    --query-gpu=fabric.state,fabric.status,fabric.clusterUuid,fabric.cliqueId 2>&1 | head -1)
  echo "INFO fabric of GPU 0 (nvidia-smi): $fabric; ddprun: $(grep '^node_domain' "$work/out")"
  smi_uuid=$(awk -F', *' '{print tolower($3)}' <<<"$fabric")
  if [ "$domain" = - ]; then
    got=$(grep -qiE '^[0-9a-f-]{36}$' <<<"$smi_uuid" && [ "${smi_uuid//[0-]/}" != "" ] \
      && grep -qi complete <<<"$fabric" && echo "a domain nvidia-smi reports" || echo none)
    check "node domain from NVML" "$got" none "ddprun: -, nvidia-smi: $fabric"
  else
    check "node domain from NVML" "${domain%.*}" "$smi_uuid" "ddprun: $domain, nvidia-smi: $fabric"
  fi
fi

# Launch times: median of $reps wall times, ddprun beside torchrun, no-op and torch-importing.
median() { sort -n | awk '/failed/ {bad = 1} {a[NR] = $1} END {print bad ? "failed" : a[int((NR + 1) / 2)] " s"}'; }
time_of() {
  local i
  for ((i = 0; i < reps; i++)); do
    /usr/bin/time -f %e timeout 120 "$@" >/dev/null 2>"$work/times" || echo failed >"$work/times"
    tail -1 "$work/times"
  done | median
}
for launcher in ddprun torchrun; do
  cmd=("$ddprun")
  [ "$launcher" = torchrun ] && cmd=("$python" -m torch.distributed.run)
  noop=$(time_of "${cmd[@]}" --standalone --nproc-per-node 1 --no-python /bin/true)
  imp=$(time_of "${cmd[@]}" --standalone --nproc-per-node 1 --no-python "$python" -c 'import torch')
  echo "TIME $launcher: no-op ${noop}, torch-importing ${imp} (median of $reps)"
done
echo "gpu-check: $failures check(s) failed"
[ "$failures" -eq 0 ]
