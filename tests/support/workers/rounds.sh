#!/bin/sh
# Multi-node test worker. Appends one line per start to $1/starts_$LOCAL_RANK.log (restart count,
# ranks, sizes, master), then waits until the file $2 exists and exits 0 (exit 1 after about
# 120 s without it). With a third argument "fail_first", the first attempt
# (TORCHELASTIC_RESTART_COUNT=0) exits 3 at once instead; with "fail_always", every attempt does;
# with "fail_when FILE", every attempt runs until FILE exists and exits 3 a second later.
echo "restart=$TORCHELASTIC_RESTART_COUNT rank=$RANK world=$WORLD_SIZE group_rank=$GROUP_RANK" \
  "group_world=$GROUP_WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT" >> "$1/starts_$LOCAL_RANK.log"
if [ "$3" = "fail_first" ] && [ "$TORCHELASTIC_RESTART_COUNT" = "0" ]; then exit 3; fi
if [ "$3" = "fail_always" ]; then exit 3; fi
if [ "$3" = "fail_when" ]; then
  i=0
  while [ ! -e "$4" ] && [ "$i" -lt 1200 ]; do i=$((i + 1)); sleep 0.1; done
  sleep 1
  exit 3
fi
i=0
while [ ! -e "$2" ]; do
  i=$((i + 1))
  if [ "$i" -gt 1200 ]; then exit 1; fi
  sleep 0.1
done
