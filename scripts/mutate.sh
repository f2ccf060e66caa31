#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Mutation check: every mutation in tests/mutations/ must be caught.
#
# Copies the tree (tracked and new, unignored files) to a scratch folder,
# builds it once (RelWithDebInfo, warnings as errors) and checks that the
# unmutated suite passes.  Then, for each mutation in name order: apply it,
# rebuild incrementally, run the tests its "Tests:" header names, then (if
# they all pass) the whole suite, stopping at the first failure; restore the
# tree.  A mutation is
#   caught    some test failed (or, with "Caught-at: build", the build or
#             configuration refused it, as designed);
#   SURVIVED  every test passed;
#   STALE     the patch no longer applies or the script changed nothing
#             (refresh it against the current code);
#   BROKEN    it does not build although it should.
# Exit 0 only when every mutation is caught.
#
# Mutations are NAME.patch (a git diff with a short header of "Key: value"
# lines before it, applied with one line of context, or none if that fails)
# or NAME.sh (a bash script run at the top of the tree; "# Key: value"
# header lines).  Keys: Mutation (what breaks), Tests (ctest names to run
# first, space-separated), Caught-at (build).
#
#   scripts/mutate.sh [MUTATION-FILE...]      (default: all of tests/mutations/)
# Environment: AGENTCAP_MUTATE_DIR (scratch folder, kept and reused by the
# next run; default a new temporary folder, removed at the end unless a
# mutation was not caught), AGENTCAP_JOBS (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
top="$PWD"
jobs="${AGENTCAP_JOBS:-$(nproc)}"
if [ $# -gt 0 ]; then
  muts=("$@")
else
  muts=(tests/mutations/*.patch tests/mutations/*.sh)
  IFS=$'\n' muts=($(printf '%s\n' "${muts[@]}" | sort)); unset IFS
fi
for m in "${muts[@]}"; do
  [ -f "$m" ] || { echo "mutate: no mutation file $m"; exit 2; }
done

keep=1
scratch="${AGENTCAP_MUTATE_DIR:-}"
if [ -z "$scratch" ]; then
  scratch="$(mktemp -d "${TMPDIR:-/tmp}/agentcap-mutate.XXXXXX")"
  keep=0
fi
trap '[ "$keep" = 1 ] || rm -rf "$scratch"' EXIT
src="$scratch/src"
build="$scratch/build"
log="$scratch/log"
mkdir -p "$log"
t_start=$SECONDS
# the mutations as they are now, whatever happens to the tree meanwhile
rm -rf "$scratch/mutations"
mkdir -p "$scratch/mutations"
for m in "${muts[@]}"; do
  cp "$m" "$scratch/mutations/"
done

# A private copy under its own throwaway git repository, so a mutation is
# undone by checking the files back out (only they get new times, so the
# next build stays incremental).  A reused scratch folder gets only the
# files whose content changed.
echo "== mutate: copy the tree to $src"
rm -rf "$scratch/new"
mkdir -p "$scratch/new" "$src"
(cd "$top" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) |
  (cd "$scratch/new" && tar -xf -)
if [ -d "$src/.git" ]; then
  git -C "$src" checkout -q -- . && git -C "$src" clean -qfd
  (cd "$src" && git ls-files) | while IFS= read -r f; do
    [ -e "$scratch/new/$f" ] || rm -f "$src/$f"
  done
  (cd "$scratch/new" && find . -type f | sed 's|^\./||') | while IFS= read -r f; do
    if ! cmp -s "$scratch/new/$f" "$src/$f"; then
      mkdir -p "$(dirname "$src/$f")"
      cp -p "$scratch/new/$f" "$src/$f"
      touch "$src/$f"
    fi
  done
  rm -rf "$scratch/new"
else
  rm -rf "$src"
  mv "$scratch/new" "$src"
  git -C "$src" init -q
fi
(cd "$src" && git add -A && git -c user.name=mutate -c user.email=mutate@localhost \
  commit -qm base --allow-empty)

echo "== mutate: build and test the unmutated tree"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAGENTCAP_WERROR=ON >"$log/configure.txt"
cmake --build "$build" -j"$jobs" >"$log/build.txt" 2>&1 || { tail -30 "$log/build.txt"; exit 3; }
if ! ctest --test-dir "$build" -j"$jobs" --timeout 600 >"$log/baseline.txt" 2>&1; then
  tail -30 "$log/baseline.txt"
  echo "mutate: the unmutated suite fails; fix that first"
  exit 3
fi
echo "   unmutated: $(grep -E 'tests passed' "$log/baseline.txt") ($((SECONDS - t_start)) s so far)"

header() { # file key -> value of "Key: value" (patch) or "# Key: value" (sh)
  sed -n -E "s/^(# )?$2: *//p" "$1" | head -1
}

# ctest ARGS...: nothing if every test passed, else the failed tests' names
run_tests() {
  local out="$1"
  shift
  rm -f "$build/Testing/Temporary/LastTestsFailed.log"
  if ctest --test-dir "$build" -j"$jobs" --timeout 600 "$@" >"$out" 2>&1; then
    return 0
  fi
  if [ -s "$build/Testing/Temporary/LastTestsFailed.log" ]; then
    cut -d: -f2 "$build/Testing/Temporary/LastTestsFailed.log" | tr '\n' ' ' | sed 's/ $//'
  else
    echo "ctest (see $out)"
  fi
}

caught=0 survived=0 stale=0 broken=0
for orig in "${muts[@]}"; do
  m="$scratch/mutations/$(basename "$orig")"
  name="$(basename "$m")"
  name="${name%.*}"
  what="$(header "$m" Mutation)"
  tests="$(header "$m" Tests)"
  at="$(header "$m" Caught-at)"
  t0=$SECONDS
  applied=1 note=""
  case "$m" in
    *.patch)
      if ! git -C "$src" apply -C1 "$m" 2>/dev/null; then
        if git -C "$src" apply -C0 "$m" 2>/dev/null; then
          note=" (applied ignoring context)"
        else
          applied=0
        fi
      fi ;;
    *.sh) (cd "$src" && bash "$m") >"$log/$name.apply.txt" 2>&1 || applied=0 ;;
    *) applied=0 ;;
  esac
  if [ "$applied" = 1 ] && [ -z "$(git -C "$src" status --porcelain)" ]; then
    applied=0
  fi
  if [ "$applied" = 0 ]; then
    printf 'STALE     %-42s does not apply: refresh it\n' "$name"
    stale=$((stale + 1))
    git -C "$src" checkout -q -- . && git -C "$src" clean -qfd
    continue
  fi
  verdict=""
  if ! cmake --build "$build" -j"$jobs" >"$log/$name.build.txt" 2>&1; then
    if [ "$at" = build ]; then
      why="$(grep -m1 -E 'CMake Error|error:' -A2 "$log/$name.build.txt" | tr -s ' \n' ' ' | cut -c1-120)"
      verdict="caught    $name  at build: $why"
    else
      verdict="BROKEN    $name  does not build (see $log/$name.build.txt)"
      broken=$((broken + 1))
    fi
  else
    by=""
    if [ -n "$tests" ]; then
      by="$(run_tests "$log/$name.first.txt" -R "^($(echo "$tests" | tr ' ' '|'))\$")"
    fi
    if [ -z "$by" ]; then
      by="$(run_tests "$log/$name.test.txt" --stop-on-failure)"
    fi
    if [ -n "$by" ]; then
      verdict="caught    $name  by $by"
    else
      verdict="SURVIVED  $name  every test passed"
      survived=$((survived + 1))
    fi
  fi
  [ "${verdict%% *}" = caught ] && caught=$((caught + 1))
  echo "$verdict$note ($((SECONDS - t0)) s)"
  echo "          $what"
  git -C "$src" checkout -q -- . && git -C "$src" clean -qfd
done
# leave the build matching the unmutated tree for a rerun with AGENTCAP_MUTATE_DIR
cmake --build "$build" -j"$jobs" >/dev/null 2>&1 || true
total=$((caught + survived + stale + broken))
echo "mutate: $total mutations: $caught caught, $survived survived, $stale stale, $broken broken" \
     "($((SECONDS - t_start)) s)"
if [ "$caught" -eq "$total" ] && [ "$total" -gt 0 ]; then
  exit 0
fi
[ "$keep" = 1 ] || echo "mutate: logs kept in $log"
keep=1
exit 1
