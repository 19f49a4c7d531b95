#!/bin/sh
# Worker that writes its sorted environment to DIR/env_$RANK.txt (DIR = first argument).
#   ddprun --nproc_per_node 2 --no_python ./envdump.sh /tmp/envs
#   diff /tmp/envs/env_0.txt /tmp/envs/env_1.txt
dir="${1:?usage: envdump.sh DIR}"
mkdir -p "$dir"
env | sort > "$dir/env_${RANK:-unknown}.txt"
