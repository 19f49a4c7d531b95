#!/bin/sh
# Writes the worker's environment, sorted, to $1/env_$RANK.txt.
env | sort > "$1/env_$RANK.txt"
