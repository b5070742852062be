//! Writes `$OUT_DIR/tools.rs`: the generated tools (see `../generate_tools.rs`).

#[path = "../generate_tools.rs"]
mod generate_tools;

fn main() {
    generate_tools::write_tools();
}
