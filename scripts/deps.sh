#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install what agentcap needs on Debian/Ubuntu, only what is missing.
# Sourced by quickstart.sh (agentcap_deps) and check.sh (agentcap_deps,
# agentcap_mpi_deps and agentcap_fuzz_deps).
set -euo pipefail

AGENTCAP_PACKAGES=(build-essential cmake pkg-config zlib1g-dev libcjson-dev libgsl-dev
                   libpcre2-dev libcsv-dev libcmocka-dev
                   chromium libxml2-utils)  # the HTML report's tests: a browser, a strict XML parser

agentcap_apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "installing: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ -z "${AGENTCAP_APT_UPDATED:-}" ]; then
    $sudo apt-get update -qq
    AGENTCAP_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

agentcap_deps() {
  agentcap_apt_install "${AGENTCAP_PACKAGES[@]}"
}

# Open MPI for the MPI build of agentcap sweep (-DAGENTCAP_MPI=ON), which
# check.sh builds and tests; the default build does not need it.
agentcap_mpi_deps() {
  agentcap_apt_install openmpi-bin libopenmpi-dev
}

# GNU time (peak RSS) for scripts/probe-limits.sh.
agentcap_probe_deps() {
  agentcap_apt_install time
}

# clang and its compiler runtime (libFuzzer, sanitizers) for the fuzz step of
# check.sh.  Debian names the runtime libclang-rt-dev; Ubuntu only has the
# versioned libclang-rt-NN-dev, so take the one matching the installed clang.
agentcap_fuzz_deps() {
  agentcap_apt_install clang
  if apt-cache show libclang-rt-dev >/dev/null 2>&1; then
    agentcap_apt_install libclang-rt-dev
  else
    local v
    v="$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)"
    agentcap_apt_install "libclang-rt-$v-dev"
  fi
}
