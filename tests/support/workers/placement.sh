#!/bin/sh
# Writes where this worker runs to $1/place_$RANK.txt (one node: RANK is the local rank, and
# LOCAL_RANK is 0 for every worker under --virtual-local-rank): its CPU list, OMP_NUM_THREADS,
# CUDA_VISIBLE_DEVICES ("-" when unset) and LOCAL_RANK.
{
  echo "cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
  echo "omp=${OMP_NUM_THREADS--}"
  echo "cvd=${CUDA_VISIBLE_DEVICES--}"
  echo "lr=${LOCAL_RANK--}"
} > "$1/place_$RANK.txt"
