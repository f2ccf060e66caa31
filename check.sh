#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install what is missing, then build and run the whole test suite twice:
# warnings as errors (with the MPI build of agentcap sweep, whose test runs
# mpirun -n 2), and again under AddressSanitizer + UndefinedBehaviorSanitizer
# (without MPI: the sanitizers are for our code);
# then run every libFuzzer target for a bounded time (AGENTCAP_FUZZ_SECONDS each).
set -euo pipefail
cd "$(dirname "$0")"
. scripts/deps.sh
agentcap_deps
agentcap_mpi_deps
agentcap_fuzz_deps
jobs="$(nproc)"

echo "== build (warnings are errors, with MPI for agentcap sweep) and test"
cmake -S . -B build-check -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAGENTCAP_WERROR=ON -DAGENTCAP_MPI=ON >/dev/null
cmake --build build-check -j"$jobs"
ctest --test-dir build-check --output-on-failure -j"$jobs"

echo "== build and test under ASan + UBSan"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DAGENTCAP_WERROR=ON -DAGENTCAP_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"

echo "== fuzz: every libFuzzer target for ${AGENTCAP_FUZZ_SECONDS:-15} s (clang, ASan + UBSan)"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DAGENTCAP_SANITIZE=ON \
  -DBUILD_TESTING=OFF -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_all
fuzz/run.sh build-fuzz "${AGENTCAP_FUZZ_SECONDS:-15}"
