//! Writes `$OUT_DIR/tools.rs`: the same generated tools as `toolwright-bench-server`'s.

#[path = "../generate_tools.rs"]
mod generate_tools;

fn main() {
    generate_tools::write_tools();
}
