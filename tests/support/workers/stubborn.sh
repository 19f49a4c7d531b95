#!/bin/sh
# Ignores SIGTERM (only SIGKILL stops it), leaves two grandchildren in its process group, and
# says when it is ready by creating $1/ready_$RANK.
trap '' TERM
sleep 120 &
sleep 120 &
touch "$1/ready_$RANK"
while true; do sleep 1; done
