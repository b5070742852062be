#!/usr/bin/env bash
# The checks .ci/run starts beside its other steps, in two lanes: toolwright's cargo features
# linted, built and doc-tested (`.ci/features.sh build`; .ci/run runs their unit tests at its
# end) in one; in the other, the published crates packaged and built from their tarballs
# (.ci/package.sh), then the build-time manifest guard in a copy of the repository
# (.ci/manifest_guard.sh), which builds in the same target directory, so that the dependencies
# the two have in common are built once. Each lane has a target directory of its own, removed once
# its checks have passed when nothing reads it after; each check writes its report to
# target/beside/NAME.log, and the first that fails stops the others.
#
# Usage: bash .ci/beside.sh MODEL_DIR (the model for the semantic feature's tests).
set -euo pipefail
cd "$(dirname "$0")/.."
model_dir=$1
rm -rf target/beside
mkdir -p target/beside
run() {
    local name=$1 built=$2
    shift 2
    local started=$SECONDS
    if ! "$@" >"target/beside/$name.log" 2>&1; then
        echo "$name failed after $((SECONDS - started))s (target/beside/$name.log)" \
            >>target/beside/summary
        exit 1
    fi
    if [ -n "$built" ]; then
        rm -rf "$built"
    fi
    echo "$name passed in $((SECONDS - started))s, ${SECONDS}s in" >>target/beside/summary
}
# Two lanes side by side: the stretches where one uses a single core (linking, build scripts,
# doc tests, a crate that waits for its dependencies) leave the other the second one. The
# features' unit tests' executables stay, for `.ci/features.sh test`.
run features "" bash .ci/features.sh build "$model_dir" &
lanes=($!)
(
    run package "" bash .ci/package.sh
    run manifest-guard target/packaged bash .ci/manifest_guard.sh "$PWD/target/packaged"
) &
lanes+=($!)
for _ in "${lanes[@]}"; do
    if ! wait -n; then
        # This script leads its process group (.ci/run starts it with setsid): the other lane's
        # builds stop with it.
        kill -- -$$
    fi
done
