#!/usr/bin/env bash
# Installs, with apt-get, whatever Santral's build, tests, demo and benchmark need and this
# machine lacks (Debian 12). Safe to run again: it installs nothing when all is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache lld
  libboost1.81-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
  libmd-dev catch2 libhiredis-dev libssl-dev openssl curl
  redis-server redis-tools nutcracker etcd-server etcd-client python3 python3-redis python3-yaml procps iproute2
  clang clang-tidy clang-format libclang-rt-14-dev
  chromium fonts-dejavu-core
  strace valgrind  # scripts/bench.sh syscalls, callgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The dashboard's browser test drives chromium from Node (tests/browser). A Node.js from
# elsewhere that brings its own npm is kept.
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# libboost1.81-dev replaces libboost-dev (1.74); apt removes the older one if it is there.
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
