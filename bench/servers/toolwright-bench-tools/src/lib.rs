//! The tools of `toolwright-bench-server` (`tool_0000`.., `echo`, `echo_async`), in a library, so
//! that a build script can link them and make their manifest at build time.

include!("../../bench_tools.rs");
