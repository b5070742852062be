#!/usr/bin/env bash
# The published crates, packaged and built from their tarballs as crates.io would: packaged
# together, so that each builds against the others' tarballs rather than crates.io.
#
# Run from anywhere: `bash .ci/package.sh`. It builds in a target directory of its own,
# target/packaged (the tarballs are under target/packaged/package), so that it can run beside
# other builds of the repository; .ci/beside.sh runs the manifest guard there after it.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="$PWD/target/packaged"
# Emptied first. Our crates are built there as a registry's, and cargo takes a registry crate
# of the same name and version as unchanged: a build left by an earlier run (of an earlier
# commit) would stand for this one's.
rm -rf "$CARGO_TARGET_DIR"
crates=(toolwright-rules toolwright-macros toolwright toolwright-gateway)
version=$(cargo pkgid -p toolwright)
version=${version##*@}
# Packaged together, the crates build against a registry cargo makes of their tarballs in
# target/packaged. Cargo unpacks that registry's crates under $CARGO_HOME/registry/src, in a
# folder named for the registry's path, and unpacks a crate of a name and version only once: a
# later run from the same path would build the tarballs of the run before it (their version does
# not change between commits). Our crates' unpacked copies are removed first. Registries with no
# host, as these are, have folders whose names begin with a dash.
for name in "${crates[@]}"; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$name-$version"
done
cargo package "${crates[@]/#/--package=}"
for name in "${crates[@]}"; do
    crate="$CARGO_TARGET_DIR/package/$name-$version.crate"
    echo "${crate#"$PWD/"}: $(tar -tzf "$crate" | wc -l) files, $(du -k "$crate" | cut -f1) KiB"
done
