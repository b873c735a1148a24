#!/usr/bin/env bash
# Shows that two revisions of faultline print the same `scan --format json` output, byte for
# byte except `database.hash`, over the real-log corpus (fragments and whole logs), the shipped launch log and a
# generated serving log (issue 13: "nothing else changes").
#
#   tools/json-identity.sh [--gen-mib N] OLD NEW
#
# OLD and NEW are each a git revision (built in a temporary worktree, `cargo build --release
# --bin faultline`, one target directory shared by both builds) or the path of a faultline
# binary already built (e.g. /work/bin/faultline-main, target/release/faultline).
# --gen-mib: size of the generated log in MiB (default 64; the issue asks for 1024), written
# once by this checkout's `cargo run --release --example genlog -- --bytes NM --seed 1`.
# Each input is scanned with --all as well, so every matched line is compared too.
# Exit 0 when every output agrees, 1 when one differs (the diff is printed), 2 on an error.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

gen_mib=64
while [ $# -gt 0 ]; do
    case "$1" in
        --gen-mib) gen_mib="$2"; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
[ $# -eq 2 ] || { echo "usage: tools/json-identity.sh [--gen-mib N] OLD NEW" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/json-identity.XXXXXX")
cleanup() {
    for wt in "$work"/wt-*; do
        [ -d "$wt" ] && git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
target=${JSON_IDENTITY_TARGET:-$work/target}

# Prints the path of a faultline binary for a revision or a binary path.
binary_of() {
    local what=$1 name=$2
    if [ -x "$what" ] && [ -f "$what" ]; then
        realpath "$what"
        return
    fi
    local sha
    sha=$(git rev-parse --verify "$what^{commit}") || { echo "not a binary nor a revision: $what" >&2; exit 2; }
    git worktree add --detach "$work/wt-$name" "$sha" >/dev/null 2>&1
    echo "building $what ($sha) ..." >&2
    (cd "$work/wt-$name" && CARGO_TARGET_DIR="$target" cargo build --release --quiet --bin faultline >&2)
    cp "$target/release/faultline" "$work/faultline-$name"
    echo "$work/faultline-$name"
}

old=$(binary_of "$1" old)
new=$(binary_of "$2" new)
echo "old: $1 ($("$old" --version | head -1))"
echo "new: $2 ($("$new" --version | head -1))"

gen="$work/generated-${gen_mib}MiB.log"
echo "generating a ${gen_mib} MiB serving log ..."
cargo run --release --quiet --example genlog -- --bytes "${gen_mib}M" --seed 1 > "$gen"

inputs=(tests/corpus/*.log tests/corpus/whole/*.log tests/corpus/whole/*.log.zst examples/kimi-k2.5-launch.log "$gen")

# JSON Lines with each object's database.hash blanked (the only field allowed to differ).
normalise() {
    sed -E 's/("database":\{"name":"[^"]*","version":"[^"]*","hash":")[^"]*"/\1-"/'
}

status=0
compared=0
for input in "${inputs[@]}"; do
    for flags in "" "--all"; do
        # shellcheck disable=SC2086
        "$old" scan --format json $flags "$input" > "$work/old.json" 2>"$work/old.err" && rc_old=0 || rc_old=$?
        # shellcheck disable=SC2086
        "$new" scan --format json $flags "$input" > "$work/new.json" 2>"$work/new.err" && rc_new=0 || rc_new=$?
        compared=$((compared + 1))
        if [ "$rc_old" != "$rc_new" ]; then
            echo "DIFFERENT exit status on $input $flags: $rc_old vs $rc_new"
            status=1
        fi
        if ! cmp -s <(normalise < "$work/old.json") <(normalise < "$work/new.json"); then
            echo "DIFFERENT output on $input $flags:"
            diff <(normalise < "$work/old.json") <(normalise < "$work/new.json") | head -20 || true
            status=1
        fi
        if ! grep -q '"database":{"name":"[^"]*","version":"[^"]*","hash":"' "$work/new.json"; then
            echo "no database field in the output on $input $flags (the normalisation would not apply)"
            status=1
        fi
    done
done
if [ $status -eq 0 ]; then
    echo "identical: $compared scans (${#inputs[@]} inputs, with and without --all), database.hash aside"
fi
exit $status
