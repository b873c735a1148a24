#!/usr/bin/env bash
# CI for the Python package (issue 14), run from anywhere: builds the abi3 wheel with maturin,
# installs it into a fresh virtual environment under target/, and runs the pytest suite:
# the API against the CLI built from the same source, Ray Data on a local single-node cluster
# (ray.init(num_cpus=2)), s3:// against moto's server on 127.0.0.1, PySpark in local mode.
#
# Run time on 2 shared cores, downloads excluded: about 1 min of Rust when target/ is warm
# (a cold build of the extension and the CLI is about 5-9 min), about 3-4 min of tests.
# Needs python3 (3.9+) with venv, cargo, and network access to PyPI; installs a headless JRE
# with apt-get only where `java` is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="$ROOT/target"
VENV="$ROOT/target/faultline-py-venv"
WHEELS="$ROOT/target/faultline-py-wheels"
PY="$VENV/bin/python"

step_start=0
step() {
    step_start=$(date +%s)
    echo "== faultline-py: $*"
}
done_step() {
    echo "== faultline-py: ... $(( $(date +%s) - step_start )) s"
}
total_start=$(date +%s)

if ! command -v java >/dev/null 2>&1; then
    step "java is missing: installing a headless JRE (PySpark)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless \
        || apt-get install -y -qq --no-install-recommends default-jre-headless
    done_step
fi

step "fresh virtual environment $VENV"
rm -rf "$VENV"
python3 -m venv "$VENV"
done_step

step "pip install maturin pytest ray[data] pyspark moto[server] boto3 pyarrow zstandard"
# No pip cache: it would hold a second copy of every wheel (pyspark alone is ~300 MB).
export PIP_NO_CACHE_DIR=1
"$PY" -m pip install -q --upgrade pip
"$PY" -m pip install -q maturin pytest "ray[data]" pyspark "moto[server]" boto3 pyarrow zstandard
done_step

step "cargo build --release --bin faultline (the CLI the tests compare with)"
cargo build --release --bin faultline
done_step

step "maturin build --release (abi3 wheel, CPython 3.9+)"
rm -rf "$WHEELS"
(cd crates/faultline-py && "$VENV/bin/maturin" build --release --out "$WHEELS")
done_step

step "install the wheel"
"$PY" -m pip install -q --force-reinstall "$WHEELS"/faultline-*.whl
done_step

step "pytest"
# From a directory outside the package source, so that the installed wheel is what is tested.
(cd "$ROOT/crates/faultline-py/tests" && \
    FAULTLINE_BIN="$CARGO_TARGET_DIR/release/faultline" FAULTLINE_PY_CI=1 \
    "$PY" -m pytest -q -p no:cacheprovider .)
done_step

echo "== faultline-py: all steps $(( $(date +%s) - total_start )) s"
