#!/usr/bin/env bash
# Side-by-side throughput on one generated log, all tools in the same run (BENCHMARKS.md).
#
#   benches/compare.sh [SIZE] [RUNS]     e.g. benches/compare.sh 1G 3
#
# Generates ASCII and 5%-non-ASCII serving logs (seed 1), the non-ASCII log's ASCII twin
# (the same lines with each non-ASCII run replaced by as many ASCII bytes), a gzip copy
# of the ASCII one, a log of the independent generator (tools/otherlog.py, seed 1) and
# the corpus's healthy real logs concatenated and repeated (tools/realcat.py),
# warms the page cache, and prints per tool the median wall time, GB/s
# (10^9 bytes/s) and the ratio to `faultline scan -j1`. Needs ripgrep (rg) and gzip.
# Hyperscan (benches/hs_scan.c, built with gcc -lhs where Debian's libhyperscan-dev is
# installed; skipped with a note otherwise) scans the same file with the same exported
# patterns, one thread: the whole process (its pattern compile included) and, from the
# harness's own clock, the scan alone.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-1G}
RUNS=${2:-3}
DIR=${BENCH_DIR:-/tmp/faultline-bench}
mkdir -p "$DIR"

cargo build --release --quiet --bin faultline --example genlog --example count_newlines
T="${CARGO_TARGET_DIR:-target}/release"
FL="$T/faultline"

[ -s "$DIR/ascii-$SIZE.log" ] || "$T/examples/genlog" --bytes "$SIZE" --seed 1 >"$DIR/ascii-$SIZE.log"
[ -s "$DIR/nonascii-$SIZE.log" ] || "$T/examples/genlog" --bytes "$SIZE" --seed 1 --non-ascii 0.05 >"$DIR/nonascii-$SIZE.log"
[ -s "$DIR/twin-$SIZE.log" ] || "$T/examples/genlog" --bytes "$SIZE" --seed 1 --non-ascii 0.05 --ascii-twin >"$DIR/twin-$SIZE.log"
# A cluster's mixed log from a second generator that shares no code with the crate's.
[ -s "$DIR/independent-$SIZE.log" ] || python3 tools/otherlog.py --bytes "$SIZE" --seed 1 >"$DIR/independent-$SIZE.log"
# Real text no generator wrote: the corpus's healthy logs of many projects, repeated.
[ -s "$DIR/real-$SIZE.log" ] || python3 tools/realcat.py --bytes "$SIZE" >"$DIR/real-$SIZE.log"
[ -s "$DIR/ascii-$SIZE.log.gz" ] || gzip -6 -c "$DIR/ascii-$SIZE.log" >"$DIR/ascii-$SIZE.log.gz"
# ripgrep joins the patterns into one regex, where repeated capture names are an error:
# patterns-unnamed drops the names, the matching is unchanged.
"$FL" db export --format patterns-unnamed >"$DIR/patterns.txt"

HS=""
if [ -f /usr/include/hs/hs.h ] && gcc -O2 -D_GNU_SOURCE -o "$DIR/hs_scan" benches/hs_scan.c -lhs 2>"$DIR/hs-build.txt"; then
    HS="$DIR/hs_scan"
fi

# "WALL CPU": medians over RUNS runs of "$@" (output discarded) of the wall-clock seconds
# and of the CPU seconds (user + system). On a busy machine CPU time is the steadier one.
median() {
    local walls=() cpus=()
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f "%e %U %S" -o "$DIR/time.txt" "$@" >/dev/null 2>&1 || true
        # The last line: GNU time writes "Command exited with non-zero status N" before the
        # figures, and a clean log's scan exits 1.
        walls+=("$(awk 'END {print $1}' "$DIR/time.txt")")
        cpus+=("$(awk 'END {print $2 + $3}' "$DIR/time.txt")")
    done
    local mid='{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
    echo "$(printf '%s\n' "${walls[@]}" | sort -n | awk "$mid") $(printf '%s\n' "${cpus[@]}" | sort -n | awk "$mid")"
}

# "RATIO": -j1 and -j2 on FILE run in alternation RUNS times; the median over the pairs of
# (-j1 wall / -j2 wall). Pairs taken moments apart share the machine's load, which on a
# shared machine drifts more between one batch of runs and the next than within a pair.
paired_ratio() {
    local ratios=()
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f "%e" -o "$DIR/t1.txt" "$FL" scan -j1 "$1" >/dev/null 2>&1 || true
        /usr/bin/time -f "%e" -o "$DIR/t2.txt" "$FL" scan -j2 "$1" >/dev/null 2>&1 || true
        ratios+=("$(awk -v a="$(tail -n1 "$DIR/t1.txt")" -v b="$(tail -n1 "$DIR/t2.txt")" \
            'BEGIN { printf "%.3f\n", a / (b > 0 ? b : 0.005) }')")
    done
    printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# row NAME BYTES BASE_WALL "WALL CPU"
row() {
    local name=$1 bytes=$2 base=$3
    read -r wall cpu <<<"$4"
    awk -v n="$name" -v b="$bytes" -v w="$wall" -v c="$cpu" -v base="$base" \
        'BEGIN { w = (w > 0 ? w : 0.005); c = (c > 0 ? c : 0.005);
                 printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", n, w, b / w / 1e9, c, b / c / 1e9, base / w }'
}

header() {
    echo "| command | wall s | GB/s (wall) | CPU s | GB/s per CPU second | speed vs $1 (wall) |"
    echo "| --- | --- | --- | --- | --- | --- |"
}

echo "machine: $(nproc) CPUs, $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2}'), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rg: $(rg --version | sed -n 1p)"
[ -z "$HS" ] || echo "Hyperscan: $(dpkg-query -W -f '${Version}' libhyperscan-dev 2>/dev/null || echo installed)"

for kind in ascii nonascii independent real; do
    f="$DIR/$kind-$SIZE.log"
    bytes=$(stat -L -c %s "$f")
    cat "$f" >/dev/null
    echo
    echo "### $kind, $SIZE ($bytes bytes), median of $RUNS"
    echo
    header "faultline -j1"
    j1t=$(median "$FL" scan -j1 "$f")
    j1=${j1t%% *}
    row "faultline scan -j1" "$bytes" "$j1" "$j1t"
    row "faultline scan -j2" "$bytes" "$j1" "$(median "$FL" scan -j2 "$f")"
    echo "| faultline -j2 speed-up over -j1, median of $RUNS alternating pairs | | | | | $(paired_ratio "$f") |"
    row "rg -j1 --no-unicode -c -f patterns" "$bytes" "$j1" \
        "$(median rg -j1 --no-unicode -c -f "$DIR/patterns.txt" "$f")"
    if [ -n "$HS" ]; then
        row "Hyperscan -j1 (hs_scan, whole process, compile included)" "$bytes" "$j1" \
            "$(median "$HS" "$DIR/patterns.txt" "$f")"
        # The harness's own clocks around hs_scan(): the scan alone (wall, CPU), medians of RUNS.
        for _ in $(seq "$RUNS"); do "$HS" "$DIR/patterns.txt" "$f" 2>/dev/null; done >"$DIR/hs-alone.txt"
        mid='{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
        row "Hyperscan -j1, scan alone (hs_scan's clocks; its compile not counted)" "$bytes" "$j1" \
            "$(awk '{ print $8 }' "$DIR/hs-alone.txt" | sort -g | awk "$mid") $(awk '{ print $14 }' "$DIR/hs-alone.txt" | sort -g | awk "$mid")"
    else
        echo "| Hyperscan: not installed (no /usr/include/hs/hs.h; Debian: libhyperscan-dev), skipped | | | | | |"
    fi
    row "count_newlines (memchr/bytecount, mmap)" "$bytes" "$j1" "$(median "$T/examples/count_newlines" "$f")"
    row "cat > /dev/null" "$bytes" "$j1" "$(median cat "$f")"
    if [ "$kind" = nonascii ]; then
        twin="$DIR/twin-$SIZE.log"
        cat "$twin" >/dev/null
        row "faultline scan -j1, ASCII twin (same lines, non-ASCII runs made ASCII)" "$bytes" "$j1" \
            "$(median "$FL" scan -j1 "$twin")"
        row "faultline scan -j2, ASCII twin" "$bytes" "$j1" "$(median "$FL" scan -j2 "$twin")"
    fi
done

gz="$DIR/ascii-$SIZE.log.gz"
bytes=$(stat -L -c %s "$DIR/ascii-$SIZE.log")
cat "$gz" >/dev/null
echo
echo "### gzip ($(stat -L -c %s "$gz") bytes compressed, $bytes bytes of log), median of $RUNS"
echo
header "decompression alone"
alonet=$(median "$T/examples/count_newlines" "$gz")
alone=${alonet%% *}
row "decompression alone (flate2 zlib-rs + newline count)" "$bytes" "$alone" "$alonet"
row "faultline scan -j2 (.gz)" "$bytes" "$alone" "$(median "$FL" scan -j2 "$gz")"
row "faultline scan -j1 (.gz)" "$bytes" "$alone" "$(median "$FL" scan -j1 "$gz")"
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
