#!/usr/bin/env bash
# Captures what torchrun gives its workers, for launcher_e2e_test's table test
# (LauncherE2E.WorkerEnvironmentEqualsTorchrunsForEachTorch): `--standalone --nproc_per_node 2
# --no_python envdump.sh` under `env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 FOO=bar`,
# both workers' environments in one file, the values that differ from run to run or host to host
# replaced by a mark (<port>, <run id>, <error file of rank N>, <fqdn>: the host's name as
# Python's socket.getfqdn() gives it) and the shell's own variables (PWD, OLDPWD, SHLVL, _) left
# out. The capture runs in its own UTS and mount namespaces under the host name capture-host
# (/etc/hosts: 127.0.1.1 capture-host.example), so the host's name cannot be mistaken for
# `localhost`. Not run by the tests: the files it wrote are committed beside it. As root:
#   capture.sh host TORCHRUN OUT     this machine's torch (Debian 12: tools/torchrun-patched,
#                                    its torchrun 1.13 crashes in Std.from_str on Python 3.11)
#   capture.sh ROOT TORCHRUN OUT     the torch of a scripts/test-root.sh root (trixie, forky)
# e.g. capture.sh forky /usr/bin/torchrun tests/e2e/torchrun_env/torch-2.14.env
set -euo pipefail
where=$1 torchrun=$2 out=$(realpath -m "$3")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
hosts_line="127.0.1.1 capture-host.example capture-host"

if [ "${CAPTURE_INSIDE:-}" != 1 ]; then
  export CAPTURE_INSIDE=1
  if [ "$where" = host ]; then
    exec unshare --uts --mount --propagation private bash -c '
      hostname capture-host
      hosts=$(mktemp); { cat /etc/hosts; echo "$1"; } >"$hosts"; mount --bind "$hosts" /etc/hosts
      exec bash "$2" host "$3" "$4"' capture "$hosts_line" "$0" "$torchrun" "$out"
  fi
  exec unshare --uts bash -c 'hostname capture-host; exec "$@"' capture \
    bash "$src/scripts/test-root.sh" run "$where" --bind "$src" --bind "$(dirname "$out")" \
    --host "$hosts_line" /usr/bin/env CAPTURE_INSIDE=1 bash "$here/capture.sh" inside "$torchrun" "$out"
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && timeout 120 env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 FOO=bar \
  "$torchrun" --standalone --nproc_per_node 2 --no_python \
  "$src/tests/support/workers/envdump.sh" "$dir" >/dev/null 2>&1)
fqdn=$(python3 -c 'import socket; print(socket.getfqdn())')
[ "$fqdn" != localhost ] || { echo "capture: the host's name reads as localhost" >&2; exit 1; }
for rank in 0 1; do
  echo "# rank $rank"
  grep -vE '^(PWD|OLDPWD|SHLVL|_)=' "$dir/env_$rank.txt" | sed -E \
    -e 's/^MASTER_PORT=.*/MASTER_PORT=<port>/' \
    -e 's/^TORCHELASTIC_RUN_ID=.*/TORCHELASTIC_RUN_ID=<run id>/' \
    -e "s|^TORCHELASTIC_ERROR_FILE=.*|TORCHELASTIC_ERROR_FILE=<error file of rank $rank>|" \
    -e "s/^MASTER_ADDR=$fqdn\$/MASTER_ADDR=<fqdn>/"
done >"$out"
