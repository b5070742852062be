//! The tools' vectors made at build time, for a server to start with
//! ([`embedded_vectors!`](crate::build::embedded_vectors)).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{EMBEDDING_MODEL, GuardError, VECTORS, write_if_changed};
use crate::registry::Registry;
use crate::search::{Embedder, VectorCache, built_vectors, no_vectors};

/// Writes [`VECTORS`] to `out_dir`, the vectors of `registry`'s tools by the model in `model`
/// (else the folder [`EMBEDDING_MODEL`] names; else none), and tells Cargo where it is and when
/// to run again. The vectors of earlier builds are kept in `out_dir` too, so that a build
/// embeds only the tools changed since.
pub(super) fn emit(
    registry: &Registry,
    model: Option<PathBuf>,
    out_dir: &Path,
) -> Result<(), GuardError> {
    println!("cargo:rerun-if-env-changed={EMBEDDING_MODEL}");
    let model = model.or_else(|| std::env::var_os(EMBEDDING_MODEL).map(PathBuf::from));
    let bytes = match &model {
        None => no_vectors(),
        Some(dir) => {
            for file in ["config.json", "model.safetensors", "tokenizer.json"] {
                println!("cargo:rerun-if-changed={}", dir.join(file).display());
            }
            let failed = |source| GuardError::Vectors {
                model: dir.clone(),
                source,
            };
            let embedder = Embedder::from_dir(dir).map_err(failed)?;
            let tools: &[Value] = match &registry.manifest().as_json()["tools"] {
                Value::Array(tools) => tools,
                _ => &[],
            };
            let cache = VectorCache::new(out_dir.join("vectors"));
            let (bytes, _embedded) =
                built_vectors(tools, &embedder, Some(cache)).map_err(failed)?;
            bytes
        }
    };
    let path = out_dir.join(VECTORS);
    write_if_changed(&path, &bytes)?;
    println!("cargo:rustc-env=TOOLWRIGHT_VECTORS={}", path.display());
    Ok(())
}
