#!/usr/bin/env bash
# The Debian roots with a newer torch that the `torch2` tests and the torchrun columns of bench/
# run in: made or found by scripts/test-root.sh (cached outside any build tree), then their
# torch patched so that it works at all. Prints the root's path.
#   scripts/torch-root.sh trixie   Debian 13: python3-torch 2.6.0 (torchrun 2.6), Python 3.13
#   scripts/torch-root.sh forky    Debian forky (testing): python3-torch 2.14.1 (torchrun 2.14),
#                                  Python 3.14, with python3-accelerate 1.14 and
#                                  python3-transformers 5.12 (the two users' libraries)
# Debian builds torch 2.6 and 2.14 without libuv, yet TCPStore defaults to use_libuv=True, so
# every TCPStore there fails; torch/distributed/__init__.py gets a marked patch making
# use_libuv=False the default (the root's torch, never ddprun, is changed; docs/from-torchrun.md
# says what a Debian user meets). Exit status as `test-root.sh make` (3: the root cannot be
# made, one line on stderr saying why; 2: an unknown suite).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=${1:-}
case $suite in
  trixie) packages=(python3-torch) ;;
  forky) packages=(python3-torch python3-numpy python3-accelerate python3-transformers) ;;
  *)
    echo "torch-root: unknown suite '$suite' (expected trixie or forky)" >&2
    exit 2
    ;;
esac
root=$(bash "$here/test-root.sh" make "$suite" "$suite" "${packages[@]}")
init=$root/usr/lib/python3/dist-packages/torch/distributed/__init__.py
marker="# >>> ddprun test root: use_libuv=False by default (v2)"
if ! grep -qF "$marker" "$init"; then
  sed -i '/^# >>> ddprun test root/,/^# <<< ddprun test root/d' "$init"  # an older version of it
  cat >>"$init" <<PATCH
$marker
# Debian's torch 2.6 and 2.14 are built without libuv, yet TCPStore defaults to use_libuv=True
# and torchrun and init_process_group do not always pass it.
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
echo "$root"
