#!/bin/sh
# Stands for a trainer that checkpoints when signalled. Writes its job id to $1/ready_$RANK,
# appends got_<SIG> to $1/rank_$RANK for every signal it gets, and once it got one, "saves"
# for a second, appends "saved" and exits 0. Without a signal it gives up after 10 minutes
# (exit 3).
out="$1/rank_$RANK"
for s in TERM INT HUP QUIT USR1 USR2; do trap "echo got_$s >> '$out'" $s; done
echo "${SLURM_JOB_ID:-none}" > "$1/ready_$RANK"
loops=0
saving=0
while [ $saving -lt 10 ] && [ $loops -lt 6000 ]; do
  sleep 0.1
  loops=$((loops + 1))
  if [ -s "$out" ]; then saving=$((saving + 1)); fi
done
if [ $saving -lt 10 ]; then exit 3; fi
echo saved >> "$out"
