#!/usr/bin/env bash
# The published crates, packaged and built from their tarballs as crates.io would: packaged
# together, so that each builds against the others' tarballs rather than crates.io.
#
# Run from anywhere: `bash .ci/package.sh`. It builds in a target directory of its own,
# target/packaged (the tarballs and their verifying build are under target/packaged/package),
# so that it can run beside other builds of the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="$PWD/target/packaged"
crates=(toolwright-rules toolwright-macros toolwright toolwright-gateway)
cargo package "${crates[@]/#/--package=}"
version=$(cargo pkgid -p toolwright)
version=${version##*@}
for name in "${crates[@]}"; do
    crate="$CARGO_TARGET_DIR/package/$name-$version.crate"
    echo "${crate#"$PWD/"}: $(tar -tzf "$crate" | wc -l) files, $(du -k "$crate" | cut -f1) KiB"
done
