//! The tools' vectors kept in a folder between starts, so that a text a model embedded once is
//! not embedded again: a server restarted, or a gateway whose mounted servers did not change,
//! embeds only what is new. The `semantic` feature.
//!
//! One file a model, named by the model's fingerprint (the SHA-256 of its three files), holding
//! a vector for each text it embedded, keyed by the text's SHA-256: a vector is found again only
//! for the same text and the same model, whatever else changed. A file is written whole to a
//! temporary file and renamed into place, so that a reader never sees half of one, and a file
//! that is not one of these (cut short, of another model or dimension) is taken for none and
//! written anew.
//!
//! The vectors a build script makes ([`Guard::embedding_model`](crate::build::Guard::embedding_model))
//! are in the same format, which names the model inside, so that a binary knows whether the
//! vectors built with it are its model's.
use std::collections::HashMap;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// What a cache file begins with: the format, and its version.
const MAGIC: &[u8] = b"toolwright vectors 2\n";

/// A text's key: the SHA-256 of its UTF-8 bytes.
pub(crate) type TextKey = [u8; 32];

/// The key of `text`.
pub(crate) fn text_key(text: &str) -> TextKey {
    Sha256::digest(text.as_bytes()).into()
}

/// A folder the vectors of a server's tools are kept in between starts: given to
/// [`Server::embedding_cache`](crate::Server::embedding_cache), or with `--embedding-cache DIR`
/// (`TOOLWRIGHT_EMBEDDING_CACHE`) on the command line.
///
/// Only the vectors of texts a model embedded are kept, none of the texts themselves. The folder
/// keeps every vector it was given, for every model, so that servers sharing it (replicas, a
/// gateway and the servers it mounts) find each other's; it grows by about 1.5 KiB a tool a
/// model embeds (384 numbers), and may be deleted at any time to start afresh.
///
/// ```no_run
/// # fn run() -> Result<(), toolwright::search::EmbedderError> {
/// use toolwright::Server;
/// use toolwright::search::{Embedder, VectorCache};
///
/// let server = Server::new("notes", "1.0.0")
///     .embedder(Embedder::from_dir("models/all-MiniLM-L6-v2")?)
///     .embedding_cache(VectorCache::new("/var/cache/notes-server/vectors"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct VectorCache {
    dir: PathBuf,
}

impl VectorCache {
    /// The cache in `dir`, made when a vector is first kept there.
    pub fn new(dir: impl Into<PathBuf>) -> VectorCache {
        VectorCache { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the model whose fingerprint is `model`.
    fn file(&self, model: &str) -> PathBuf {
        self.dir.join(format!("{model}.vectors"))
    }

    /// The vectors kept for the model `model`, of `dimension` numbers each, by text key: none
    /// when there is no file, or one that is not of this format and dimension (said in the
    /// log).
    pub(crate) fn load(&self, model: &str, dimension: usize) -> HashMap<TextKey, Vec<f32>> {
        let path = self.file(model);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return HashMap::new(),
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "the vector cache cannot be read: every tool is embedded");
                return HashMap::new();
            }
        };
        decode(&bytes, model, dimension).unwrap_or_else(|why| {
            tracing::warn!(
                path = %path.display(),
                "the vector cache is not one this server can read ({why}): every tool is \
                 embedded, and the file written anew"
            );
            HashMap::new()
        })
    }

    /// Keeps `vectors` (each of `dimension` numbers) as the model `model`'s: written to a
    /// temporary file in the folder, then renamed over the model's file.
    pub(crate) fn store(
        &self,
        model: &str,
        dimension: usize,
        vectors: &HashMap<TextKey, Vec<f32>>,
    ) -> io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let path = self.file(model);
        let temporary = self
            .dir
            .join(format!(".{model}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut file = io::BufWriter::new(std::fs::File::create(&temporary)?);
            file.write_all(&encode(model, dimension, vectors))?;
            file.into_inner()
                .map_err(io::IntoInnerError::into_error)?
                .sync_all()?;
            std::fs::rename(&temporary, &path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written
    }
}

/// The bytes of a cache file: the magic, the model's fingerprint and a newline, the dimension
/// (four bytes, little-endian), then each vector's text key and numbers (`f32`, little-endian),
/// in key order. A build without a model writes an empty fingerprint and no vector.
pub(crate) fn encode(
    model: &str,
    dimension: usize,
    vectors: &HashMap<TextKey, Vec<f32>>,
) -> Vec<u8> {
    debug_assert!(!model.contains('\n'));
    let dimension_bytes = u32::try_from(dimension).expect("a vector of fewer than 2^32 numbers");
    let mut keys: Vec<&TextKey> = vectors.keys().collect();
    keys.sort_unstable();
    let mut bytes =
        Vec::with_capacity(MAGIC.len() + model.len() + 5 + keys.len() * (32 + 4 * dimension));
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(model.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(&dimension_bytes.to_le_bytes());
    for key in keys {
        let vector = &vectors[key];
        debug_assert_eq!(vector.len(), dimension);
        bytes.extend_from_slice(key);
        for number in vector {
            bytes.extend_from_slice(&number.to_le_bytes());
        }
    }
    bytes
}

/// The vectors in `bytes`, if they are vectors of the model `model`, of `dimension` numbers
/// each; else what is wrong with them.
pub(crate) fn decode(
    bytes: &[u8],
    model: &str,
    dimension: usize,
) -> Result<HashMap<TextKey, Vec<f32>>, String> {
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or("it does not begin as a vector cache does")?;
    let end = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("it is cut short")?;
    let (stated, rest) = (&rest[..end], &rest[end + 1..]);
    if stated != model.as_bytes() {
        return Err(format!(
            "its vectors are of the model {}, not of {model}",
            String::from_utf8_lossy(stated)
        ));
    }
    let (stated, rest) = rest.split_first_chunk::<4>().ok_or("it is cut short")?;
    let stated = u32::from_le_bytes(*stated) as usize;
    if stated != dimension {
        return Err(format!(
            "its vectors have {stated} numbers, the model's {dimension}"
        ));
    }
    let record = 32 + 4 * dimension;
    if rest.len() % record != 0 {
        return Err("it is cut short".to_owned());
    }
    Ok(rest
        .chunks_exact(record)
        .map(|record| {
            let (key, numbers) = record.split_at(32);
            let key: TextKey = key.try_into().expect("32 bytes");
            let vector = numbers
                .chunks_exact(4)
                .map(|n| f32::from_le_bytes(n.try_into().expect("4 bytes")))
                .collect();
            (key, vector)
        })
        .collect())
}

/// Whether `bytes` are the vectors of a build that had no model: none, of no model.
pub(crate) fn built_without_model(bytes: &[u8]) -> bool {
    bytes
        .strip_prefix(MAGIC)
        .is_some_and(|rest| rest.first() == Some(&b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of its own for the test `name`, empty.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "toolwright-vector-cache-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn vectors() -> HashMap<TextKey, Vec<f32>> {
        HashMap::from([
            (text_key("delete a file"), vec![0.6, 0.8, 0.0]),
            (text_key("remove a document"), vec![0.0, -1.0, 0.0]),
        ])
    }

    #[test]
    fn vectors_kept_are_found_again_for_the_same_model_only() {
        let dir = scratch("same-model");
        let cache = VectorCache::new(dir.join("vectors"));
        assert!(cache.load("model-a", 3).is_empty(), "nothing kept yet");
        cache.store("model-a", 3, &vectors()).unwrap();
        assert_eq!(cache.load("model-a", 3), vectors());
        assert!(cache.load("model-b", 3).is_empty());
        // Written whole and renamed: no temporary file is left.
        let files: Vec<String> = std::fs::read_dir(cache.dir())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(files, ["model-a.vectors"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_cut_short_or_of_another_dimension_is_taken_for_none() {
        let dir = scratch("unreadable");
        let cache = VectorCache::new(&dir);
        cache.store("model", 3, &vectors()).unwrap();
        assert!(cache.load("model", 4).is_empty(), "another dimension");
        let path = dir.join("model.vectors");
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(cache.load("model", 3).is_empty(), "cut short");
        assert_eq!(
            decode(b"not a cache", "model", 3).unwrap_err(),
            "it does not begin as a vector cache does"
        );
        assert_eq!(
            decode(&encode("model-b", 3, &vectors()), "model", 3).unwrap_err(),
            "its vectors are of the model model-b, not of model"
        );
        // Written anew, it reads again.
        cache.store("model", 3, &vectors()).unwrap();
        assert_eq!(cache.load("model", 3), vectors());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
