#!/usr/bin/env bash
# scripts/gpu-check.sh without a GPU (DDPRUN_GPU_CHECK_FAKE=1: gloo, a fake nvidia-smi here and
# the fake NVML library of the build): every check passes with one fake GPU, and a machine whose
# nvidia-smi lists more GPUs than NVML reports fails the worker-count checks (exit 1).
#   gpu_check_fake.sh DDPRUN FAKE_NVML_DIR SOURCE_DIR
set -uo pipefail
ddprun=$1 nvml_dir=$2 src=$3
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "skipped: /usr/bin/python3 has no torch"; exit 77; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
fake_smi() {
  {
    echo '#!/bin/sh'
    for i in $(seq 0 $(($1 - 1))); do
      echo "echo 'GPU $i: Fake GPU (UUID: GPU-0000000$i-1111-2222-3333-444444444444)'"
    done
  } >"$bin/nvidia-smi"
  chmod +x "$bin/nvidia-smi"
}
gpu_check() {
  PATH=$bin:/usr/bin:/bin LD_LIBRARY_PATH=$nvml_dir FAKE_NVML_GPUS=1 DDPRUN_GPU_CHECK_FAKE=1 \
    DDPRUN_GPU_CHECK_REPS=1 timeout 300 bash "$src/scripts/gpu-check.sh" "$ddprun" /usr/bin/python3
}
fake_smi 1
out=$(gpu_check)
status=$?
echo "$out"
[ "$status" -eq 0 ] || { echo "FAILED: gpu-check exited $status with one fake GPU"; exit 1; }
passes=$(grep -c '^PASS' <<<"$out")
[ "$passes" -eq 9 ] || { echo "FAILED: $passes PASS lines, expected 9"; exit 1; }
grep -q '^TIME ddprun: no-op [0-9.]* s' <<<"$out" || { echo "FAILED: no ddprun launch time"; exit 1; }
fake_smi 2
out=$(gpu_check)
status=$?
[ "$status" -eq 1 ] || { echo "FAILED: exit $status with nvidia-smi and NVML disagreeing"; exit 1; }
grep -q "^FAIL nproc-per-node gpu: expected '2', got '1'" <<<"$out" ||
  { echo "FAILED: the disagreement is not named:"; echo "$out"; exit 1; }
echo "gpu-check fake: ok"
