#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshots of every kind of HTML page at a laptop's width (1366 px) and a
# phone's (390 px), whole pages (at most 8000 px tall), into docs/pages/KIND-laptop.png and
# KIND-phone.png: the pages the browser test checks (tests/cli/test_cli_pages.c),
# made from the same small fixtures.  Needs a built agentcap (BUILD, default
# build) and Chromium (Debian package chromium; scripts/deps.sh installs it).
#   scripts/page-shots.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
A="${1:-build}/cli/agentcap"
[ -x "$A" ] || { echo "page-shots: no $A (build first)" >&2; exit 2; }
command -v chromium >/dev/null || { echo "page-shots: chromium missing (Debian package chromium)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
T=tests/fixtures/traces/mooncake_head200.jsonl
declare -A CMD=(
  [replay]="replay $T --cost --set report.interval_s=60 --set slo.ttft_ms=2000"
  [stats]="stats $T"
  [size]="size --engineers 2 --profile default --hardware h100-sxm,l40s"
  [compare]="compare --engineers 2 --profile default --hardware h100-sxm,rtx-pro-6000 --scenario scenarios/h100-plus-sonnet.json"
  [compare-range]="compare --engineers 1,2 --profile default --hardware h100-sxm,l40s"
  [whatif]="whatif max-output $T --tokens 20 --slo ttft_p95=2s,tpot_p50=50ms --hardware h100-sxm,l40s"
)
chrome() {
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$tmp/profile" "$@" 2>/dev/null
}
mkdir -p docs/pages
js="$(cat tests/fixtures/html/check.js)"
for kind in replay stats size compare compare-range whatif; do
  # shellcheck disable=SC2086
  "$A" ${CMD[$kind]} --quiet --html "$tmp/$kind.html" || [ $? -eq 1 ]
  # the checker gives the page's height at each width, and its verdict
  python3 - "$tmp/$kind.html" "$tmp/$kind.checked.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
js = open("tests/fixtures/html/check.js", encoding="utf-8").read()
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", "<script>" + js + "</script></body>"))
PY
  for w in laptop:1366:900 phone:390:844; do
    IFS=: read -r name width height <<<"$w"
    dom="$(chrome --window-size="$width,$height" --dump-dom "file://$tmp/$kind.checked.html")"
    verdict="$(printf '%s' "$dom" | tr '\n' '|' | grep -o '<pre id="verdict">[^<]*' | tail -1)"
    full="$(printf '%s' "$verdict" | grep -o 'height [0-9]*' | cut -d' ' -f2)"
    case "$verdict" in *'>OK '*) ;; *) echo "page-shots: $kind at $width px: ${verdict//|/$'\n'}" >&2 ;; esac
    # past 8000 px only the per-row assumption tables of compare go on:
    # the shot stops there, the page itself has them all
    full="${full:-$height}"; [ "$full" -le 8000 ] || full=8000
    chrome --window-size="$width,$full" --screenshot="docs/pages/$kind-$name.png" \
      "file://$tmp/$kind.html" >/dev/null
    echo "docs/pages/$kind-$name.png (${width}x$full)"
  done
done
