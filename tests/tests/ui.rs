//! Compile-time tests of `#[mcp_tool]`: every accepted shape compiles and registers what it
//! should (`ui/pass`), and every mistake is one error on the user's token (`ui/fail`).
//!
//! The `.stderr` snapshots depend on the pinned toolchain; refresh them with
//! `TRYBUILD=overwrite cargo test -p toolwright-tests --test ui` and read each before committing.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("ui/pass/*.rs");
    cases.compile_fail("ui/fail/*.rs");
}
