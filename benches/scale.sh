#!/usr/bin/env bash
# How faultline scales with the signature count (BENCHMARKS.md, "Signature count"; issue 17).
#
#   benches/scale.sh [SIZE] [RUNS] [COUNTS...]     e.g. benches/scale.sh 1G 5 0 500 2000 5000 10000
#
# For each COUNT, the default set (signatures/) plus COUNT synthetic signatures
# (examples/gensigs: one pattern each, made-up words the log does not hold, checked below) is
# compiled into an archive; the table gives the compile time (`faultline db compile`, once),
# the archive's size, its load time (examples/load_db: `Database::open`, median of 21 in one
# process) and `faultline scan -j1 --db` start-up on an empty file, and the one-thread scan
# of the generated ASCII log (genlog --seed 1): wall and CPU seconds (user + system), medians
# of RUNS, the counts interleaved in every round, and the slowdown against COUNT 0 as the
# median of per-round ratios of CPU seconds (rounds minutes apart see different load; runs
# within a round share it; on a busy machine CPU time is the steadier one). Beside it, where
# Hyperscan's C library is installed (Debian: libhyperscan-dev), benches/hs_scan.c on the same
# exported patterns (`db export --format patterns-unnamed`): its compile time and scan time,
# medians of RUNS (the scan's CPU seconds by the harness's clock). Files go to $SCALE_DIR
# (/tmp/scale).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-1G}
RUNS=${2:-5}
shift $(($# < 2 ? $# : 2))
COUNTS=("$@")
[ ${#COUNTS[@]} -gt 0 ] || COUNTS=(0 500 2000 5000 10000)
DIR=${SCALE_DIR:-/tmp/scale}
mkdir -p "$DIR"

cargo build --release --quiet --bin faultline --example genlog --example gensigs --example load_db
T="${CARGO_TARGET_DIR:-target}/release"
FL="$T/faultline"
LOG="$DIR/ascii-$SIZE.log"
[ -s "$LOG" ] || "$T/examples/genlog" --bytes "$SIZE" --seed 1 >"$LOG"
bytes=$(stat -L -c %s "$LOG")
: >"$DIR/empty.log"

HS=""
if [ -f /usr/include/hs/hs.h ] && gcc -O2 -D_GNU_SOURCE -o "$DIR/hs_scan" benches/hs_scan.c -lhs 2>"$DIR/hs-build.txt"; then
    HS="$DIR/hs_scan"
else
    echo "note: Hyperscan (libhs, /usr/include/hs/hs.h) is not installed: its columns are left empty"
fi

max=0
for n in "${COUNTS[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
# Every smaller count's signatures are the first ones of the largest set (same seed), so
# checking the largest set's literals checks them all.
"$T/examples/gensigs" --count "$max" --seed 1 --check "$LOG" >"$DIR/check.txt" || {
    cat "$DIR/check.txt"
    echo "synthetic literals occur in $LOG: the bench would measure findings, not the prefilter" >&2
    exit 1
}

ms() { date +%s%N; }
# wall seconds of "$@", output discarded
wall() {
    local t0 t1
    t0=$(ms)
    "$@" >/dev/null 2>&1 || true
    t1=$(ms)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }'
}
# "wall cpu" seconds of "$@", output discarded
timed() {
    /usr/bin/time -f "%e %U %S" -o "$DIR/time.txt" "$@" >/dev/null 2>&1 || true
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$DIR/time.txt"
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "") }'; }

declare -A COMPILE ARCHIVE LOAD START ANCHORS
for n in "${COUNTS[@]}"; do
    d="$DIR/sigs-$n"
    rm -rf "$d"
    "$T/examples/gensigs" --count "$n" --seed 1 --base signatures --out "$d" >/dev/null
    COMPILE[$n]=$(wall "$FL" db compile "$d" -o "$d.fla")
    [ -s "$d.fla" ] || { echo "db compile $d failed:" >&2; "$FL" db compile "$d" -o "$d.fla" >&2; exit 1; }
    ARCHIVE[$n]=$(stat -c %s "$d.fla")
    "$T/examples/load_db" "$d.fla" 21 >"$d.load"
    LOAD[$n]=$(awk '{ print $3 }' "$d.load")
    ANCHORS[$n]=$(awk '{ print $9, $10 }' "$d.load")
    START[$n]=$(for _ in $(seq 11); do wall "$FL" scan -j1 --db "$d.fla" "$DIR/empty.log"; done | median)
    "$FL" db export --format patterns-unnamed --db "$d.fla" >"$d.patterns"
done

cat "$LOG" >/dev/null
: >"$DIR/runs.txt"
for r in $(seq "$RUNS"); do
    for n in "${COUNTS[@]}"; do
        echo "fl $r $n $(timed "$FL" scan -j1 --db "$DIR/sigs-$n.fla" "$LOG")" >>"$DIR/runs.txt"
        if [ -n "$HS" ]; then
            "$HS" "$DIR/sigs-$n.patterns" "$LOG" 2>"$DIR/hs-$n.err" |
                awk -v r="$r" -v n="$n" '{ print "hs", r, n, $6, $8, $4, $14 }' >>"$DIR/runs.txt"
        fi
    done
done

echo "machine: $(nproc) CPUs, $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2}'); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "log: $LOG ($bytes bytes, genlog --seed 1); $(cat "$DIR/check.txt")"
echo "scan -j1: medians of $RUNS, all counts interleaved in each round; slowdown = median over rounds of (CPU s at this count / CPU s at count ${COUNTS[0]}); Hyperscan likewise with its scan's CPU s"
echo
echo "| extra signatures | patterns | anchors | compile s | archive bytes | load ms (library) | start-up on empty input ms | scan -j1 wall s | CPU s | GB/s per CPU s | slowdown | Hyperscan compile s | Hyperscan scan wall s | CPU s | GB/s per CPU s | Hyperscan slowdown |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
base=${COUNTS[0]}
for n in "${COUNTS[@]}"; do
    pats=$(wc -l <"$DIR/sigs-$n.patterns")
    anchors=${ANCHORS[$n]}
    scan=$(awk -v n="$n" '$1 == "fl" && $3 == n { print $4 }' "$DIR/runs.txt" | median)
    scpu=$(awk -v n="$n" '$1 == "fl" && $3 == n { print $5 }' "$DIR/runs.txt" | median)
    slow=$(awk -v n="$n" -v b="$base" '$1 == "fl" && $3 == b { t[$2] = $5 } $1 == "fl" && $3 == n { u[$2] = $5 }
        END { for (r in u) if (t[r] > 0) print u[r] / t[r] }' "$DIR/runs.txt" | median)
    hsc="" hss="" hscpu="" hsg="" hsslow=""
    if [ -n "$HS" ]; then
        hsc=$(awk -v n="$n" '$1 == "hs" && $3 == n { print $4 }' "$DIR/runs.txt" | median)
        hss=$(awk -v n="$n" '$1 == "hs" && $3 == n { print $5 }' "$DIR/runs.txt" | median)
        hscpu=$(awk -v n="$n" '$1 == "hs" && $3 == n { print $7 }' "$DIR/runs.txt" | median)
        hsg=$(awk -v s="$hscpu" -v b="$bytes" 'BEGIN { if (s > 0) printf "%.2f", b / s / 1e9 }')
        hsslow=$(awk -v n="$n" -v b="$base" '$1 == "hs" && $3 == b { t[$2] = $7 } $1 == "hs" && $3 == n { u[$2] = $7 }
            END { for (r in u) if (t[r] > 0) printf "%.2f\n", u[r] / t[r] }' "$DIR/runs.txt" | median)
        dropped=$(grep -c '^dropped' "$DIR/hs-$n.err" || true)
        [ "$dropped" = 0 ] || hsc="$hsc ($dropped patterns refused)"
    fi
    awk -v n="$n" -v p="$pats" -v a="$anchors" -v c="${COMPILE[$n]}" -v z="${ARCHIVE[$n]}" -v l="${LOAD[$n]}" \
        -v st="${START[$n]}" -v s="$scan" -v sc="$scpu" -v b="$bytes" -v sl="$slow" \
        -v hc="$hsc" -v hs="$hss" -v hu="$hscpu" -v hg="$hsg" -v hl="$hsslow" \
        'BEGIN { printf "| %d | %d | %s | %.2f | %d | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %s | %s | %s | %s | %s |\n",
                 n, p, a, c, z, l, st * 1000, s, sc, b / (sc > 0 ? sc : 0.005) / 1e9, sl, hc, hs, hu, hg, hl }'
done
