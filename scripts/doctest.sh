#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Doc test: re-run the commands quoted in README.md and docs/*.md and fail
# when what they print now differs from what the page quotes.
#
#   scripts/doctest.sh AGENTCAP [--heavy|--all] [FILE.md...]
#
# AGENTCAP is the built binary (ctest passes $<TARGET_FILE:agentcap>); the
# default files are README.md and docs/*.md.  Every fenced block must follow
# a marker comment (the last non-blank line before its opening fence):
#
#   <!-- doctest -->               re-run the block and compare its output
#   <!-- doctest: CMD -->          the same for a block of output only, whose
#                                  command the prose gives: CMD runs first
#   <!-- doctest heavy -->         the same, for a long run: re-run only with
#   <!-- doctest heavy: CMD -->    --heavy (ctest's doc_examples_heavy, left
#                                  out of the sanitizer build) or --all;
#                                  --heavy skips the other doctest blocks
#   <!-- illustrative: REASON -->  agentcap commands or output not re-run
#                                  (your own files, machine-dependent timings,
#                                  runs too long for a test), REASON says which
#   <!-- not output: WHAT -->      not agentcap's commands or output (a
#                                  formula, a diagram, an input file, another
#                                  tool's commands)
#   <!-- doctest-setup: CMD -->    not before a block: a shell command run
#                                  there, in the page's scratch folder, before
#                                  the page's next doctest block (to provide
#                                  a file the prose says the reader has)
#
# An indented code block (a line indented 4 spaces or a tab after a blank
# line, outside a list item) is a problem too: make it a fenced block after
# a marker.
#
# In a doctest block, a line starting "$ " is a command (continued while it
# ends with "\"); the lines after it, up to the next command, are what it
# must print (standard output, then standard error).  A line "..." skips any
# number of printed lines; between two "..." the quoted lines must be printed
# one after the other.  "..." inside a line matches any text.  Runs of blanks
# compare equal, so column widths may move, figures may not.  The commands
# of one page run in order in one scratch folder (a file one block writes is
# there for the next), with the repository's traces/, tests/, scenarios/,
# models/ and docs/ linked in, agentcap on PATH and A=agentcap.
#
# Exit status 0 when every block is marked and every doctest block prints
# what it quotes; 1 otherwise, one line per problem: FILE:LINE: what moved.
set -uo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: scripts/doctest.sh AGENTCAP [--heavy|--all] [FILE.md...]" >&2; exit 2; }
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
[ -x "$bin" ] || { echo "doctest: $bin is not an executable" >&2; exit 2; }
light=1 heavy=0
case "${1:-}" in
  --heavy) light=0 heavy=1; shift ;;
  --all) heavy=1; shift ;;
esac
if [ $# -gt 0 ]; then files=("$@"); else files=("$top/README.md" "$top"/docs/*.md); fi

work="$(mktemp -d "${TMPDIR:-/tmp}/agentcap-doctest.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
ln -s "$bin" "$work/bin/agentcap"
export PATH="$work/bin:$PATH" A=agentcap

problems=0 ran=0 skipped=0 illustrative=0 notoutput=0

problem() { echo "$1"; problems=$((problems + 1)); }

# compare EXPECTED ACTUAL WHERE: the awk matcher described above.
compare() {
  awk -v where="$3" '
    function norm(s) { gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
    function skel(s) { gsub(/[0-9][0-9.,]*(e[-+]?[0-9]+)?/, "#", s); return s }
    function like(pat, s,   n, part, i, at, pos) {
      if (index(pat, "...") == 0) return pat == s
      n = split(pat, part, /\.\.\./)
      if (substr(s, 1, length(part[1])) != part[1]) return 0
      pos = length(part[1]) + 1
      for (i = 2; i < n; i++) {
        at = index(substr(s, pos), part[i]); if (at == 0) return 0
        pos += at - 1 + length(part[i])
      }
      return length(s) - pos + 1 >= length(part[n]) && substr(s, length(s) - length(part[n]) + 1) == part[n]
    }
    function figures(s, out,   n) {   # the numbers of s, space-separated
      n = 0
      while (match(s, /[0-9][0-9.,]*(e[-+]?[0-9]+)?/)) {
        out[++n] = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
      }
      return n
    }
    function moved(e, a,   ne, na, fe, fa, i, d) {
      ne = figures(e, fe); na = figures(a, fa); d = ""
      for (i = 1; i <= ne && i <= na; i++) if (fe[i] != fa[i]) d = d (d == "" ? "" : ", ") fe[i] " -> " fa[i]
      return d
    }
    FNR == NR { ex[++ne] = $0; next }
    { act[++na] = norm($0) }
    END {
      bad = 0; p = 1; g = 0
      for (i = 1; i <= ne; ) {
        # one group: expected lines up to the next "..."
        n = 0
        while (i <= ne && ex[i] !~ /^[0-9]+\t\.\.\.$/) {
          split(ex[i], f, "\t"); gl[++n] = norm(substr(ex[i], length(f[1]) + 2)); gn[n] = f[1]; i++
        }
        i++
        if (n == 0) continue
        best = 0; bestat = 0
        for (s = p; s + n - 1 <= na; s++) {
          for (k = 1; k <= n && like(gl[k], act[s + k - 1]); k++) ;
          if (k > n) break
          if (k - 1 > best) { best = k - 1; bestat = s }
        }
        if (s + n - 1 <= na) { p = s + n; continue }
        # not printed: say which line and, when a line of the same shape is, which figures moved
        k = best + 1; e = gl[k]; found = ""
        if (best > 0 && bestat + best <= na && skel(act[bestat + best]) == skel(e)) found = act[bestat + best]
        for (s = 1; found == "" && s <= na; s++) if (skel(act[s]) == skel(e)) found = act[s]
        if (found != "" && like(e, found))
          printf "%s:%s: printed, but not right after the line quoted before it (put \"...\" between them): %s\n", where, gn[k], e
        else if (found != "")
          printf "%s:%s: figure moved (%s)\n    quoted: %s\n    now:    %s\n", where, gn[k], moved(e, found), e, found
        else
          printf "%s:%s: not printed any more: %s\n", where, gn[k], e
        bad = 1
      }
      exit bad
    }' "$1" "$2"
}

# quoted EXPECT-FILE: a command's quoted lines without the blank lines after
# the last (those part it from the next command, they quote nothing).
quoted() {
  awk '{ l[NR] = $0 } END { n = NR; while (n > 0 && l[n] ~ /^[0-9]+\t[ \t]*$/) n--; for (i = 1; i <= n; i++) print l[i] }' "$1"
}

# run_block FILE BODY-FILE START-LINE SCRATCH: run a doctest block's commands.
run_block() {
  local file="$1" body="$2" start="$3" scratch="$4" rel="${1#$top/}"
  local cmd="" cmdline=0 n=0 line expect="$work/expect" out="$work/out" err="$work/err"
  local -a cmds=() cmdlines=() expects=()
  : > "$expect"
  while IFS= read -r line; do
    n=$((n + 1))
    if [ -n "$cmd" ] && [ "${cmd%\\}" != "$cmd" ]; then
      cmd="$cmd"$'\n'"$line"; continue
    fi
    if [ "${line#\$ }" != "$line" ]; then
      [ -n "$cmd" ] && { cmds+=("$cmd"); cmdlines+=("$cmdline"); expects+=("$(quoted "$expect")"); }
      cmd="${line#\$ }"; cmdline=$((start + n)); : > "$expect"
    elif [ -n "$cmd" ]; then
      printf '%s\t%s\n' "$((start + n))" "$line" >> "$expect"
    else
      problem "$rel:$((start + n)): a doctest block must start with a command (\"\$ agentcap ...\")"
      return
    fi
  done < "$body"
  [ -n "$cmd" ] && { cmds+=("$cmd"); cmdlines+=("$cmdline"); expects+=("$(quoted "$expect")"); }
  local i
  for i in "${!cmds[@]}"; do
    ( cd "$scratch" && bash -c "${cmds[$i]}" ) > "$out" 2> "$err" < /dev/null
    cat "$err" >> "$out"
    printf '%s\n' "${expects[$i]}" | grep -v '^$' > "$expect"
    [ -s "$expect" ] || continue
    compare "$expect" "$out" "$rel" || problems=$((problems + 1))
  done
  ran=$((ran + 1))
}

for file in "${files[@]}"; do
  case "$file" in /*) ;; *) file="$PWD/$file" ;; esac
  rel="${file#$top/}"
  scratch="$work/page"
  rm -rf "$scratch"; mkdir "$scratch"
  for d in traces tests scenarios models docs; do ln -s "$top/$d" "$scratch/$d"; done
  marker="" markerline=0 infence=0 fence="" start=0 no=0 setups=()
  blank=1 inlist=0 inindent=0
  body="$work/body"
  while IFS= read -r line || [ -n "$line" ]; do
    no=$((no + 1))
    if [ $infence = 1 ]; then
      if [[ "$line" =~ ^\ *(\`\`\`+|~~~+)\ *$ ]] && [ "${BASH_REMATCH[1]}" = "$fence" ]; then
        infence=0
        case "$marker" in
          doctest|"doctest heavy"|"doctest: "?*|"doctest heavy: "?*)
            if { [ "${marker#doctest heavy}" != "$marker" ] && [ $heavy = 0 ]; } ||
               { [ "${marker#doctest heavy}" = "$marker" ] && [ $light = 0 ]; }; then
              skipped=$((skipped + 1))
            else
              for s in "${setups[@]}"; do
                ( cd "$scratch" && bash -c "$s" ) || problem "$rel: doctest-setup failed: $s"
              done
              setups=()
              if [ "${marker#*: }" != "$marker" ]; then
                { printf '$ %s\n' "${marker#*: }"; cat "$body"; } > "$body.cmd"
                mv "$body.cmd" "$body"
                run_block "$file" "$body" "$((start - 1))" "$scratch"
              else
                run_block "$file" "$body" "$start" "$scratch"
              fi
            fi ;;
          "illustrative: "?*) illustrative=$((illustrative + 1)) ;;
          "not output: "?*) notoutput=$((notoutput + 1)) ;;
          "") problem "$rel:$start: unmarked block: precede it with <!-- doctest -->, <!-- illustrative: REASON --> or <!-- not output: WHAT --> (scripts/doctest.sh)" ;;
          *) problem "$rel:$start: unknown marker <!-- $marker --> (scripts/doctest.sh lists them)" ;;
        esac
        marker=""
      else
        printf '%s\n' "$line" >> "$body"
      fi
      continue
    fi
    # An indented code block (4 spaces or a tab after a blank line, outside
    # a list item and its continuation paragraphs) is a quote the test would
    # not see.  A list runs from an item's line to the first line that starts
    # in column 0 after a blank line.
    if [[ "$line" =~ ^[[:space:]]*$ ]]; then
      blank=1
    else
      if [[ "$line" =~ ^\ {0,3}([-*+]|[0-9]+[.\)])([[:space:]]|$) ]]; then
        inlist=1
      elif [ $blank = 1 ] && [[ "$line" =~ ^[^[:space:]] ]]; then
        inlist=0
      fi
      if [[ "$line" =~ ^(\ {4}|\ {0,3}$'\t') ]]; then
        if [ $blank = 1 ] && [ $inlist = 0 ] && [ $inindent = 0 ]; then
          inindent=1
          problem "$rel:$no: indented code block: make it a fenced block after <!-- doctest -->, <!-- illustrative: REASON --> or <!-- not output: WHAT --> (scripts/doctest.sh)"
        fi
      else
        inindent=0
      fi
      blank=0
    fi
    if [[ "$line" =~ ^\ *(\`\`\`+|~~~+) ]]; then
      fence="${BASH_REMATCH[1]}" infence=1 start=$no
      : > "$body"
      [ $markerline -gt 0 ] || marker=""
      continue
    fi
    if [[ "$line" =~ ^\<\!--\ doctest-setup:\ (.*)\ --\>$ ]]; then
      setups+=("${BASH_REMATCH[1]}"); continue
    fi
    if [[ "$line" =~ ^\<\!--\ (doctest|doctest\ heavy|doctest:\ .*|doctest\ heavy:\ .*|illustrative:\ .*|not\ output:\ .*)\ --\>$ ]]; then
      marker="${BASH_REMATCH[1]}" markerline=$no; continue
    fi
    [[ "$line" =~ ^[[:space:]]*$ ]] || { marker="" markerline=0; }
  done < "$file"
  [ $infence = 0 ] || problem "$rel:$start: fence never closed"
done

echo "doctest: $ran blocks re-run, $skipped left to the other pass (light or heavy), $illustrative illustrative, $notoutput not output; $problems problems"
[ $problems = 0 ]
