#!/bin/sh
# Worker that ignores SIGTERM: the launcher must escalate to SIGKILL to stop it.
# Prints "[ignore_sigterm rank R] pid P ignoring TERM" at start and a line per TERM received.
#   ddprun --nproc_per_node 2 --no_python ./ignore_sigterm.sh
# A foreground `sleep` would receive a group-wide TERM and die; the loop just starts another.
rank="${RANK:-0}"
trap 'echo "[ignore_sigterm rank $rank] got TERM, ignoring"' TERM
echo "[ignore_sigterm rank $rank] pid $$ ignoring TERM"
while :; do
    sleep 1
done
