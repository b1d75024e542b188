#!/usr/bin/env bash
# tools/timed.sh LOG NAME COMMAND...: runs COMMAND, prints how long it took and appends
# "NAME<TAB>seconds<TAB>status" to LOG, so that `make test` and CI can print every stage's
# time at the end (tools/timed.sh LOG --summary prints LOG as a table).
set -u
log=$1
shift
if [ "${1:-}" = "--summary" ]; then
    [ -f "$log" ] || exit 0
    echo "== stage times"
    awk -F'\t' '{ printf "   %-40s %6d s  %s\n", $1, $2, $3; t += $2 } END { printf "   %-40s %6d s\n", "total", t }' "$log"
    exit 0
fi
name=$1
shift
start=$(date +%s)
"$@"
rc=$?
secs=$(( $(date +%s) - start ))
status=passed
[ "$rc" -eq 0 ] || status="FAILED (status $rc)"
mkdir -p "$(dirname "$log")"
printf '%s\t%d\t%s\n' "$name" "$secs" "$status" >>"$log"
echo "== $name: $status in $secs s"
exit "$rc"
