#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install what is missing, build agentcap, and replay the bundled default
# trace on the bundled default scenario.  Extra arguments go to `replay`.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/deps.sh
agentcap_deps
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec ./build/cli/agentcap replay traces/data/mooncake/conversation_trace.jsonl.gz "$@"
