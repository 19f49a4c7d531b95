#!/bin/sh
# Writes where this worker runs to $1/place_$LOCAL_RANK.txt: its CPU list, OMP_NUM_THREADS and
# CUDA_VISIBLE_DEVICES ("-" when unset).
{
  echo "cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
  echo "omp=${OMP_NUM_THREADS--}"
  echo "cvd=${CUDA_VISIBLE_DEVICES--}"
} > "$1/place_$LOCAL_RANK.txt"
