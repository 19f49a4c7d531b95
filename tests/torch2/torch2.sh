#!/usr/bin/env bash
# ddprun with torch 2.6 workers: the relocatable binary (it needs only glibc) run in a Debian 13
# root (trixie: python3-torch 2.6.0, Python 3.13; scripts/test-root.sh, cached), with the source
# tree and a work directory bound in; in_root.sh runs the checks. Debian's torch 2.6 is built
# without libuv, yet TCPStore defaults to use_libuv=True, so every TCPStore there fails; the root's
# torch/distributed/__init__.py gets a marked patch making use_libuv=False the default (the root's
# torch, never ddprun, is changed; docs/from-torchrun.md says what a Debian 13 user meets).
# Exit 77 (skipped) with one line when the root can be neither made nor found in the cache, except
# under CI=true, where that is a failure.
#   torch2.sh RELOC_DIR SOURCE_DIR
set -euo pipefail
reloc=$1 src=$(cd "$2" && pwd)
ddprun=$reloc/src/ddprun
[ -x "$ddprun" ] || { echo "torch2: FAILED: no relocatable ddprun at $ddprun"; exit 1; }
errors=$(mktemp)
set +e
root=$(bash "$src/scripts/test-root.sh" make trixie trixie python3-torch 2>"$errors")
made=$?
set -e
why=$(cat "$errors")
rm -f "$errors"
if [ "$made" -ne 0 ]; then
  if [ "$made" -eq 3 ] && [ "${CI:-}" != true ]; then
    echo "torch2: skipped: ${why#test-root: }"
    exit 77
  fi
  echo "torch2: FAILED: $why"
  exit 1
fi
init=$root/usr/lib/python3/dist-packages/torch/distributed/__init__.py
marker="# >>> ddprun test root: use_libuv=False by default (v2)"
if ! grep -qF "$marker" "$init"; then
  sed -i '/^# >>> ddprun test root/,/^# <<< ddprun test root/d' "$init"  # an older version of it
  cat >>"$init" <<PATCH
$marker
# Debian's torch 2.6 is built without libuv, yet TCPStore defaults to use_libuv=True and
# torchrun and init_process_group do not always pass it.
if is_available() and "TCPStore" in globals():
    _ddprun_libuv_store = TCPStore

    class TCPStore(_ddprun_libuv_store):  # type: ignore[no-redef]
        def __init__(self, *args, use_libuv=False, **kwargs):
            super().__init__(*args, use_libuv=use_libuv, **kwargs)

    for _m in list(sys.modules.values()):  # the modules that imported it already
        if getattr(_m, "__name__", "").startswith("torch.distributed") and getattr(
            _m, "TCPStore", None
        ) is _ddprun_libuv_store:
            _m.TCPStore = TCPStore
# <<< ddprun test root
PATCH
fi
work=$(mktemp -d "$root/tmp/ddprun-torch2-XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$ddprun" "$work/ddprun"
timeout -s KILL 540 bash "$src/scripts/test-root.sh" run trixie --bind "$src" \
  env -i PATH=/usr/bin:/bin HOME=/root TMPDIR="${work#"$root"}" \
  bash "$src/tests/torch2/in_root.sh" "${work#"$root"}/ddprun" "$src" "${work#"$root"}"
