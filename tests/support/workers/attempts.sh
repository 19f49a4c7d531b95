#!/bin/sh
# Records each attempt in $1, then rank $2 fails with exit code $3; the others wait briefly
# (they are stopped by the agent when the failing rank exits).
echo "attempt=$TORCHELASTIC_RESTART_COUNT rank=$RANK port=$MASTER_PORT" >> "$1/rank_$RANK.log"
if [ "$RANK" = "$2" ]; then exit "$3"; fi
sleep 30
