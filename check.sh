#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install what is missing, then build and run the whole test suite twice:
# warnings as errors, and again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/deps.sh
agentcap_deps
jobs="$(nproc)"

echo "== build (warnings are errors) and test"
cmake -S . -B build-check -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAGENTCAP_WERROR=ON >/dev/null
cmake --build build-check -j"$jobs"
ctest --test-dir build-check --output-on-failure -j"$jobs"

echo "== build and test under ASan + UBSan"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DAGENTCAP_WERROR=ON -DAGENTCAP_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
