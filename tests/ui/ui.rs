//! Compile-time tests of `#[mcp_tool]`: every accepted shape compiles and registers what it
//! should (`pass`), and every mistake is one error on the user's token (`fail`).
//!
//! The `.stderr` snapshots depend on the pinned toolchain; refresh them with
//! `TRYBUILD=overwrite cargo test -p toolwright-ui-tests` and read each before committing.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("pass/*.rs");
    cases.compile_fail("fail/*.rs");
}
