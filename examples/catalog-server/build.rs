//! Makes the manifest of the 1,000 catalog tools at build time, for `main` to serve, and with
//! the `semantic` feature and a model, their vectors. The tools are generated from tables, so
//! there is no contract to guard with a snapshot.

use catalog_tools as _;

fn main() {
    toolwright::build::Guard::new().compared(false).emit();
}
