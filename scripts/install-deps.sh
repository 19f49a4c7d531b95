#!/usr/bin/env bash
# Installs what ddprun needs to build, test and run its examples on Debian 12 (as root, or
# with sudo available). Safe to run again: apt skips what is already installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache clang clang-tidy clang-format
  libboost-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libssl-dev openssl
  etcd-server etcd-client prometheus
  python3-torch python3-venv python3-pip
  mmdebstrap
  iproute2 procps util-linux time
  groff-base dpkg-dev zsh
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
# The tests start their own etcd clusters on loopback: the packaged service must not hold
# port 2379 (it is not started in a container, but would be at the next boot).
if command -v systemctl >/dev/null; then
  $SUDO systemctl disable --now etcd >/dev/null 2>&1 || true
fi
