#!/bin/sh
# Leaves a grandchild in its group, says it is ready in $1/ready_$RANK, then sleeps.
sleep 300 &
touch "$1/ready_$RANK"
wait
