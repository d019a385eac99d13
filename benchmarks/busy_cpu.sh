#!/usr/bin/env bash
# Run a command and print, on stderr, its wall time and the whole machine's busy and idle core-seconds
# over it (from /proc/stat: every process counts, Chromium and Streamlit servers included, whether or not
# the command waited for them).  Exits with the command's exit code.
#     bash benchmarks/busy_cpu.sh bash scripts/test.sh
set -u
read_stat() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat; }  # busy, idle (+iowait) jiffies
hz=$(getconf CLK_TCK)
read -r b0 i0 < <(read_stat); t0=$(date +%s.%N)
"$@"; rc=$?
read -r b1 i1 < <(read_stat); t1=$(date +%s.%N)
awk -v t0="$t0" -v t1="$t1" -v b=$(( (b1 - b0) / hz )) -v i=$(( (i1 - i0) / hz )) -v rc=$rc \
    'BEGIN { printf "busy_cpu.sh: wall %.1f s, machine busy %d s, idle %d s, exit %d\n", t1 - t0, b, i, rc }' >&2
exit $rc
