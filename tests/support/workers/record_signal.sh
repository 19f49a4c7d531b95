#!/bin/sh
# Writes the name of the first signal it receives to $1/signal_$RANK, then exits 0.
for s in TERM INT HUP QUIT USR1 USR2; do
  trap "echo $s > '$1/signal_$RANK'; exit 0" $s
done
touch "$1/ready_$RANK"
while true; do sleep 0.1; done
