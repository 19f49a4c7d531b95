# Sourced by scripts/fuzz-smoke.sh and scripts/fuzz-long.sh (run from the repository root).
# shellcheck shell=bash

# shellcheck disable=SC2034  # the scripts that source this file use these
readonly fuzz_targets=(decoder_fuzz hostlist_fuzz rdzv_conf_fuzz std_spec_fuzz error_file_fuzz
  node_stacks_fuzz)
readonly fuzz_rss_limit_mb=2048
readonly fuzz_slow_input_s=10

# The libFuzzer flags of tests/fuzz/TARGET.options ("name = value" lines), one per line.
fuzz_options() {
  local file=tests/fuzz/$1.options
  [[ -f $file ]] || return 0
  sed -n 's/^[[:space:]]*\([a-z_]*\)[[:space:]]*=[[:space:]]*\([^[:space:]]*\)[[:space:]]*$/-\1=\2/p' \
    "$file"
}

# Checks that BUILD/tests/fuzz/TARGET exists and prints its path.
fuzz_binary() {
  local bin=$1/tests/fuzz/$2
  if [[ ! -x $bin ]]; then
    echo "fuzz: $bin is not built (configure $1 with -DDDPRUN_FUZZ=ON and clang)" >&2
    return 2
  fi
  echo "$bin"
}

# Copies TARGET's committed corpus into WORK/corpus and makes WORK/artifacts.
fuzz_scratch() {
  mkdir -p "$2/corpus" "$2/artifacts"
  cp tests/fuzz/corpus/"$1"/* "$2/corpus/"
}
