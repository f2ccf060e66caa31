#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install what agentcap needs to build and test on Debian/Ubuntu, only if
# something is missing.  Sourced by quickstart.sh and check.sh.
set -euo pipefail

AGENTCAP_PACKAGES=(build-essential cmake pkg-config zlib1g-dev libcjson-dev libgsl-dev
                   libpcre2-dev libcsv-dev libcmocka-dev)

agentcap_deps() {
  local missing=()
  for p in "${AGENTCAP_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "installing: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
