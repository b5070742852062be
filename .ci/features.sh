#!/usr/bin/env bash
# toolwright's cargo features: none, then each alone (the workspace's build has them all). Each
# set is linted with clippy and tested; the semantic feature's tests that run the model are given
# it. Then: nothing of the HTTP stack, the CLI parser or the validator without the features.
#
# Usage: bash .ci/features.sh MODEL_DIR. It builds in a target directory of its own,
# target/features, so that it can run beside the other checks (.ci/run starts it at a low
# priority and reads its report at its end); what each set built of toolwright is removed once it
# has passed.
set -euo pipefail
cd "$(dirname "$0")/.."
model_dir=$1
export CARGO_TARGET_DIR="$PWD/target/features"
mkdir -p "$CARGO_TARGET_DIR"
touch "$CARGO_TARGET_DIR/loop.start"
for features in "" http cli validate oauth redis semantic otel client gateway; do
    echo "-- features: ${features:-none} (${SECONDS}s in)"
    cargo clippy --quiet -p toolwright --all-targets --no-default-features --features "$features" \
        -- -D warnings
    # The model for the semantic feature's tests; empty (none) for the others.
    model_for=""
    case "$features" in *semantic*) model_for="$model_dir" ;; esac
    TOOLWRIGHT_EMBEDDING_MODEL="$model_for" \
        cargo test --quiet -p toolwright --no-default-features --features "$features" 2>&1 \
        | grep -E '^test result' || { echo "tests failed with features: ${features:-none}"; exit 1; }
    # The tests that run the model are ignored without one; here they have it.
    if [ -n "$model_for" ]; then
        TOOLWRIGHT_EMBEDDING_MODEL="$model_for" \
            cargo test --quiet -p toolwright --no-default-features --features "$features" --lib \
            -- --ignored 2>&1 | grep -E '^test result' \
            || { echo "the model's tests failed with features: $features"; exit 1; }
    fi
    find "$CARGO_TARGET_DIR/debug/deps" -maxdepth 1 -type f -newer "$CARGO_TARGET_DIR/loop.start" \
        \( -name 'toolwright-*' -o -name 'libtoolwright-*' \) -delete
done
if cargo tree -p toolwright --no-default-features -e normal --prefix none \
    | grep -E '^(axum|hyper|clap|jsonschema|jsonwebtoken|reqwest|redis|candle-core|tokenizers) '; then
    echo "a default-features = false build still depends on the crates above"
    exit 1
fi
echo "every feature set passed, in ${SECONDS}s; $(du -sh "$CARGO_TARGET_DIR" | cut -f1) built"
