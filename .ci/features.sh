#!/usr/bin/env bash
# toolwright's cargo features: none, then each alone (the workspace's build has them all). Each
# set is linted with clippy and tested; the semantic feature's tests that run the model are given
# it. Then: nothing of the HTTP stack, the CLI parser or the validator without the features.
#
# Each set is compiled once, linted as it compiles: clippy's driver compiles the workspace's
# crates with clippy's lints, so that the unit tests' executable (the library's test target) and
# the library the doc tests link (its other target) are linted where they are built, as
# `cargo clippy --all-targets -- -D warnings` would lint them, without a second compile of
# each, and of every dependency, to check them first. What it compiles differs from rustc's in
# ways the tests cannot see: `cfg(clippy)` is set (nothing in the workspace reads it) and MIR is
# not optimised.
#
# Usage: bash .ci/features.sh build|test MODEL_DIR. It builds in a target directory of its own,
# target/features, in two parts:
#   build  lints each set, builds its unit tests, and runs its doc tests (compiled as they run):
#          the CPU's work, which .ci/run gives the lowest priority, beside its other checks;
#   test   runs each set's unit tests, built by `build`: .ci/run runs them in line at its end,
#          so that a test that waits for a deadline is not starved of the CPU meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
part=$1
model_dir=$2
export CARGO_TARGET_DIR="$PWD/target/features"
RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
export RUSTC_WORKSPACE_WRAPPER
# Warnings, clippy's with them, fail the build. Other crates' are capped by cargo as always.
export RUSTFLAGS="-D warnings"
mkdir -p "$CARGO_TARGET_DIR"
sets=("" http cli validate oauth redis semantic otel client gateway)

# Runs `cargo test` for the set $features with `args`, printing only its results; the whole
# output when it fails.
tested() {
    local log="$CARGO_TARGET_DIR/test.log"
    if ! cargo test --quiet -p toolwright --no-default-features --features "$features" "$@" \
        >"$log" 2>&1; then
        cat "$log"
        echo "tests failed with features: ${features:-none}"
        exit 1
    fi
    grep -E '^test result' "$log" || true
}

case "$part" in
    build)
        touch "$CARGO_TARGET_DIR/loop.start"
        for features in "${sets[@]}"; do
            echo "-- features: ${features:-none} (${SECONDS}s in)"
            # The library's test target, linted and built.
            cargo test --quiet -p toolwright --no-default-features --features "$features" --lib \
                --no-run
            # The library, linted and built, then its doc tests.
            tested --doc
            # The library itself, which only the doc tests read; the unit tests' executable
            # stays for `test`.
            find "$CARGO_TARGET_DIR/debug/deps" -maxdepth 1 -type f \
                -newer "$CARGO_TARGET_DIR/loop.start" -name 'libtoolwright-*' -delete
        done
        if cargo tree -p toolwright --no-default-features -e normal --prefix none \
            | grep -E '^(axum|hyper|clap|jsonschema|jsonwebtoken|reqwest|redis|candle-core|tokenizers) '; then
            echo "a default-features = false build still depends on the crates above"
            exit 1
        fi
        echo "every feature set linted and built, its doc tests passed, in ${SECONDS}s;" \
            "$(du -sh "$CARGO_TARGET_DIR" | cut -f1) built"
        ;;
    test)
        for features in "${sets[@]}"; do
            echo "-- features: ${features:-none}"
            # The model for the semantic feature's tests; empty (none) for the others.
            model_for=""
            case "$features" in *semantic*) model_for="$model_dir" ;; esac
            TOOLWRIGHT_EMBEDDING_MODEL="$model_for" tested --lib
            # The tests that run the model are ignored without one; here they have it.
            if [ -n "$model_for" ]; then
                TOOLWRIGHT_EMBEDDING_MODEL="$model_for" tested --lib -- --ignored
            fi
        done
        echo "every feature set's unit tests passed, in ${SECONDS}s"
        ;;
    *)
        echo "usage: bash .ci/features.sh build|test MODEL_DIR" >&2
        exit 2
        ;;
esac
