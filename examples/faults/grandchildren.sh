#!/bin/sh
# Worker that spawns background grandchildren (sleep 1000) and then waits forever or exits.
#   grandchildren.sh [DIR] [COUNT] [EXIT_CODE]
# Writes the grandchildren's pids, one per line, to DIR/grandchildren_$RANK.txt (DIR default
# /tmp) and prints them. Without EXIT_CODE the worker then sleeps until killed; with it, it
# exits with EXIT_CODE at once, leaving the grandchildren behind in its process group.
# The grandchildren's stdin/stdout/stderr are /dev/null unless GC_KEEP_STDIO=1 (then they hold
# the worker's output pipe open, like a real leaked helper, and `launcher | grep` waits for them).
# After the launcher stops the job, none of the listed pids should still be alive:
#   ddprun --nproc_per_node 2 --no_python ./grandchildren.sh /tmp/gc 3 1
#   xargs -r ps -o pid,cmd -p < /tmp/gc/grandchildren_0.txt   # expect no rows
dir="${1:-/tmp}"
count="${2:-2}"
exit_code="${3:-}"
rank="${RANK:-0}"
mkdir -p "$dir"
out="$dir/grandchildren_$rank.txt"
: > "$out"
i=0
while [ "$i" -lt "$count" ]; do
    if [ "${GC_KEEP_STDIO:-0}" = 1 ]; then
        sleep 1000 &
    else
        # shellcheck disable=SC2217  # detach the grandchild from the worker's pipes
        sleep 1000 < /dev/null > /dev/null 2>&1 &
    fi
    echo "$!" >> "$out"
    i=$((i + 1))
done
echo "[grandchildren rank $rank] pid $$ spawned: $(tr '\n' ' ' < "$out")"
if [ -n "$exit_code" ]; then
    exit "$exit_code"
fi
wait
