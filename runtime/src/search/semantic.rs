//! What a query means, beside the words it shares with a tool: a small sentence-embedding model
//! (a BERT encoder, such as all-MiniLM-L6-v2) run in-process with candle, whose cosine
//! similarity is fused with the lexical score. The `semantic` feature.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use candle_core::safetensors::SliceSafetensors;
use candle_core::{DType, Device, Tensor};
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use super::WordsOnly;
use super::bert::{Config, Encoder};
use super::cache::{self, TextKey, VectorCache, text_key};
use super::tensors::{FileTensors, Tensors};

/// The most word pieces of a text the model reads: what all-MiniLM-L6-v2 was trained on; a
/// tool's description is cut there.
const MAX_TOKENS: usize = 256;

/// How many word pieces are embedded together, padding included: batches of texts of like
/// length cost less per text, and a bound on their word pieces bounds the memory a batch takes
/// (its attention grows with the texts times the square of their length): 32 texts of 16, or 2
/// of the longest. Measured with `semantic-speed --memory` (BENCHMARKS.md): 512 kept the peak of
/// embedding 1,000 real servers' tools below that of loading the model, where 16 texts a batch
/// reached twice it.
const BATCH_TOKENS: usize = 512;

/// A sentence-embedding model: texts in, unit vectors out, near for texts that mean alike.
///
/// Loaded from the files a Hugging Face model folder holds: `config.json` (a BERT
/// configuration), `model.safetensors` (its weights) and `tokenizer.json`. Nothing is fetched:
/// the server's author ships the files, or their bytes in the binary. all-MiniLM-L6-v2 (90 MB
/// of `f32` weights) is the model the ranking's fusion weight was chosen for.
///
/// The encoder's matrices and word-piece embeddings are quantised to 8 bits as they load
/// (ggml's `Q8_0`): a query embeds about twice as fast as in `f32`, the model keeps 28 MiB of
/// heap instead of 91, and its vectors stay within a cosine of 0.998 of the `f32` model's.
///
/// ```no_run
/// # fn run() -> Result<(), toolwright::search::EmbedderError> {
/// use toolwright::search::Embedder;
///
/// let embedder = Embedder::from_dir("models/all-MiniLM-L6-v2")?;
/// let [a, b] = [embedder.embed("delete a file")?, embedder.embed("remove a document")?];
/// let similarity: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
/// assert!(similarity > 0.5);
/// # Ok(())
/// # }
/// ```
pub struct Embedder {
    encoder: Encoder,
    tokenizer: Tokenizer,
    /// The model's shape: the length of its vectors, and for its `Debug`.
    config: Config,
    /// The SHA-256 of its three files, in hex: what names its vectors in a [`VectorCache`].
    fingerprint: String,
}

/// Why a model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EmbedderError(String);

impl Embedder {
    /// Loads the model in `dir`: `config.json`, `model.safetensors` and `tokenizer.json`. The
    /// weights are read from their file a tensor at a time, each quantised as it comes, so the
    /// file is never held whole: the load's peak is the quantised model and its largest tensor
    /// (the word-piece table, 47 MB for all-MiniLM-L6-v2). Loading takes the SHA-256 of the three
    /// files too, which names the model's vectors in a [`VectorCache`]: about 60 ms for
    /// all-MiniLM-L6-v2's 91 MB in release.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Embedder, EmbedderError> {
        let dir = dir.as_ref();
        let unreadable = |path: &Path, err: &dyn std::fmt::Display| {
            EmbedderError(format!("cannot read {}: {err}", path.display()))
        };
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|err| unreadable(&path, &err))
        };
        let (config, tokenizer) = (read("config.json")?, read("tokenizer.json")?);
        let shape = read_config(&config)?;
        let path = dir.join("model.safetensors");
        let fingerprint = File::open(&path)
            .and_then(|weights| {
                let length = weights.metadata()?.len();
                let weights = BufReader::with_capacity(1 << 20, weights);
                fingerprint([
                    (config.len() as u64, &mut config.as_slice()),
                    (length, &mut { weights }),
                    (tokenizer.len() as u64, &mut tokenizer.as_slice()),
                ])
            })
            .map_err(|err| unreadable(&path, &err))?;
        let weights = FileTensors::open(&path).map_err(|err| match err {
            candle_core::Error::Io(err) => unreadable(&path, &err),
            err => EmbedderError(format!("`model.safetensors` cannot be read: {err}")),
        })?;
        Embedder::load(shape, Tensors::File(weights), &tokenizer, fingerprint)
    }

    /// Loads a model from the bytes of its three files (`include_bytes!` puts them in the
    /// binary). Loading takes the SHA-256 of the three files too, as [`Embedder::from_dir`]
    /// does.
    pub fn from_bytes(
        config: &[u8],
        weights: &[u8],
        tokenizer: &[u8],
    ) -> Result<Embedder, EmbedderError> {
        let fingerprint = fingerprint([
            (config.len() as u64, &mut { config }),
            (weights.len() as u64, &mut { weights }),
            (tokenizer.len() as u64, &mut { tokenizer }),
        ])
        .expect("bytes in memory read");
        let shape = read_config(config)?;
        let weights = SliceSafetensors::new(weights)
            .map_err(|err| EmbedderError(format!("`model.safetensors` cannot be read: {err}")))?;
        Embedder::load(shape, Tensors::Bytes(weights), tokenizer, fingerprint)
    }

    /// The model of `config`, its `weights` and the bytes of its `tokenizer.json`.
    fn load(
        config: Config,
        weights: Tensors<'_>,
        tokenizer: &[u8],
        fingerprint: String,
    ) -> Result<Embedder, EmbedderError> {
        let encoder = Encoder::load(&config, weights).map_err(|err| match err {
            candle_core::Error::SafeTensor(err) => {
                EmbedderError(format!("`model.safetensors` cannot be read: {err}"))
            }
            err => EmbedderError(format!("the weights are not a BERT encoder's: {err}")),
        })?;
        let mut tokenizer = Tokenizer::from_bytes(tokenizer)
            .map_err(|err| EmbedderError(format!("`tokenizer.json` cannot be read: {err}")))?;
        // Each text is tokenized alone and padded in its batch (`embed_all`), not to the
        // length a model's `tokenizer.json` may fix.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|err| EmbedderError(format!("the tokenizer cannot truncate: {err}")))?;
        Ok(Embedder {
            encoder,
            tokenizer,
            config,
            fingerprint,
        })
    }

    /// How many numbers its vectors have.
    pub(super) fn dimension(&self) -> usize {
        self.config.hidden_size
    }

    /// The vector of one text: the mean of its word pieces' states, of length 1.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedderError> {
        let mut vectors = self.embed_all(&[text])?;
        Ok(vectors.pop().expect("one vector per text"))
    }

    /// The vectors of several texts, in their order. They are embedded in batches of texts of
    /// like length, so that a short text is not padded to a long one's length, each batch of a
    /// bounded number of word pieces, so that long texts take no more memory than short ones.
    /// Of each text only its word pieces' ids are kept until its batch, padded to the batch's
    /// longest there.
    pub fn embed_all(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedderError> {
        let failed = |err: candle_core::Error| EmbedderError(format!("the model failed: {err}"));
        let ids = texts
            .iter()
            .map(|&text| {
                let encoding = self.tokenizer.encode_fast(text, true)?;
                Ok(encoding.get_ids().to_vec())
            })
            .collect::<tokenizers::Result<Vec<Vec<u32>>>>()
            .map_err(|err| EmbedderError(format!("the tokenizer failed: {err}")))?;
        let length = |i: usize| ids[i].len().max(1);
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| length(i));
        let mut out = vec![Vec::new(); texts.len()];
        // Shortest first: a batch's last text is its longest.
        let mut batches: Vec<&[usize]> = Vec::new();
        let mut start = 0;
        for end in 1..=order.len() {
            let padded = (end - start) * length(order[end - 1]);
            if padded > BATCH_TOKENS && end - start > 1 {
                batches.push(&order[start..end - 1]);
                start = end - 1;
            }
        }
        if start < order.len() {
            batches.push(&order[start..]);
        }
        for batch in batches {
            let longest = batch.iter().map(|&i| length(i)).max().unwrap_or(1);
            // Padded with the id 0 ([PAD] in BERT's vocabulary), which the mask leaves out.
            let (mut padded, mut mask) = (Vec::new(), Vec::new());
            for &i in batch {
                let pad = longest - ids[i].len();
                padded.extend_from_slice(&ids[i]);
                padded.extend(std::iter::repeat_n(0, pad));
                mask.extend(std::iter::repeat_n(1u32, ids[i].len()));
                mask.extend(std::iter::repeat_n(0, pad));
            }
            let vectors = (|| {
                let shape = (batch.len(), longest);
                let ids = Tensor::from_vec(padded, shape, &Device::Cpu)?;
                let mask = Tensor::from_vec(mask, shape, &Device::Cpu)?;
                let states = self.encoder.forward(&ids, &mask)?;
                // The mean over the word pieces the mask keeps, then unit length: cosine
                // similarity becomes a dot product.
                let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let summed = states.broadcast_mul(&mask)?.sum(1)?;
                let counts = mask.sum(1)?;
                let mean = summed.broadcast_div(&counts)?;
                let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
                mean.broadcast_div(&norms)?.to_vec2::<f32>()
            })()
            .map_err(failed)?;
            for (&i, vector) in batch.iter().zip(vectors) {
                out[i] = vector;
            }
        }
        Ok(out)
    }
}

/// The model's shape, from its `config.json`.
fn read_config(config: &[u8]) -> Result<Config, EmbedderError> {
    serde_json::from_slice(config)
        .map_err(|err| EmbedderError(format!("`config.json` is not a BERT configuration: {err}")))
}

/// The SHA-256 of a model's three files (`config.json`, `model.safetensors`, `tokenizer.json`),
/// each after its length, in hex.
fn fingerprint(files: [(u64, &mut dyn Read); 3]) -> io::Result<String> {
    let mut hasher = Sha256::new();
    for (length, file) in files {
        hasher.update(length.to_le_bytes());
        let copied = io::copy(file, &mut hasher)?;
        if copied != length {
            return Err(io::Error::other("the file changed while it was read"));
        }
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// Where a model's vectors are found before it embeds: those built with the binary
/// ([`Server::embedded_vectors`](crate::Server::embedded_vectors)), and a cache folder, which
/// keeps what it embeds too.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kept {
    /// What [`embedded_vectors!`](crate::build::embedded_vectors) includes.
    pub(crate) built: Option<&'static [u8]>,
    pub(crate) cache: Option<VectorCache>,
}

impl Kept {
    /// Vectors kept in `cache` only.
    pub(crate) fn in_cache(cache: Option<VectorCache>) -> Kept {
        Kept { built: None, cache }
    }

    /// The vectors of `embedder`'s model built with the binary, if there are any.
    fn built(&self, embedder: &Embedder) -> Option<HashMap<TextKey, Vec<f32>>> {
        let built = self.built?;
        if cache::built_without_model(built) {
            tracing::debug!("the binary was built without a model: no vectors built with it");
            return None;
        }
        cache::decode(built, &embedder.fingerprint, embedder.dimension())
            .inspect_err(|why| {
                tracing::warn!(
                    "the vectors built with the binary are not this model's ({why}): the tools \
                     are embedded at start"
                );
            })
            .ok()
    }

    /// The vectors of `embedder`'s model in the cache.
    fn cached(&self, embedder: &Embedder) -> HashMap<TextKey, Vec<f32>> {
        self.cache
            .as_ref()
            .map(|cache| cache.load(&embedder.fingerprint, embedder.dimension()))
            .unwrap_or_default()
    }
}

/// The vectors kept of a catalog's texts, and which texts they lack.
struct Known {
    /// Each text's key, in the catalog's order.
    keys: Vec<TextKey>,
    /// The vectors known, by key: those kept, of these texts and others.
    vectors: HashMap<TextKey, Vec<f32>>,
    /// The texts to embed, by their place: each text once, however often the catalog has it.
    missing: Vec<usize>,
    /// How many of the texts have a vector built with the binary, if it has any.
    built: Option<usize>,
}

impl Known {
    /// What `kept` has of `texts`, for the model of `embedder`.
    fn read(embedder: &Embedder, texts: &[String], kept: &Kept) -> Known {
        let keys: Vec<TextKey> = texts.iter().map(|text| text_key(text)).collect();
        let mut vectors = kept.cached(embedder);
        let built = kept.built(embedder).map(|built| {
            let found = keys.iter().filter(|key| built.contains_key(*key)).count();
            vectors.extend(built);
            found
        });
        let mut missing: Vec<usize> = (0..texts.len())
            .filter(|&i| !vectors.contains_key(&keys[i]))
            .collect();
        missing.sort_by_key(|&i| keys[i]);
        missing.dedup_by_key(|&mut i| keys[i]);
        Known {
            keys,
            vectors,
            missing,
            built,
        }
    }

    /// Embeds the texts it lacks with `embedder`, and knows their vectors too.
    fn embed_missing(
        &mut self,
        embedder: &Embedder,
        texts: &[String],
    ) -> Result<(), EmbedderError> {
        let asked: Vec<&str> = self.missing.iter().map(|&i| texts[i].as_str()).collect();
        let made = embedder.embed_all(&asked)?;
        for (&i, vector) in self.missing.iter().zip(made) {
            self.vectors.insert(self.keys[i], vector);
        }
        Ok(())
    }
}

/// For a build script: the vectors of `texts`, by `embedder`, as the bytes
/// [`Server::embedded_vectors`](crate::Server::embedded_vectors) reads, embedding only what
/// `cache` lacks and keeping it there. Also how many texts were embedded.
pub(crate) fn built(
    embedder: &Embedder,
    texts: &[String],
    cache: Option<VectorCache>,
) -> Result<(Vec<u8>, usize), EmbedderError> {
    let kept = Kept::in_cache(cache);
    let mut known = Known::read(embedder, texts, &kept);
    known.embed_missing(embedder, texts)?;
    let (model, dimension) = (&embedder.fingerprint, embedder.dimension());
    if let Some(cache) = &kept.cache
        && !known.missing.is_empty()
    {
        // A build that cannot keep them embeds them again next time, no more.
        let _ = cache.store(model, dimension, &known.vectors);
    }
    let these: HashMap<TextKey, Vec<f32>> = known
        .keys
        .iter()
        .map(|key| (*key, known.vectors[key].clone()))
        .collect();
    Ok((cache::encode(model, dimension, &these), known.missing.len()))
}

/// The bytes of vectors built without a model: none.
pub(crate) fn no_vectors() -> Vec<u8> {
    cache::encode("", 0, &HashMap::new())
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("hidden_size", &self.config.hidden_size)
            .field("layers", &self.config.num_hidden_layers)
            .finish_non_exhaustive()
    }
}

/// A catalog's tool vectors, made once by one model, and the model that embeds each query.
#[derive(Clone, Debug)]
pub(super) struct Semantic {
    pub(super) embedder: Arc<Embedder>,
    /// Filled when every tool is embedded, or with why they could not be; until then the
    /// ranking is lexical.
    pub(super) vectors: Arc<OnceLock<Result<Vec<f32>, String>>>,
}

impl Semantic {
    /// Embeds `texts` (a tool's each), now, taking what is `kept`.
    pub(super) fn now(
        embedder: Arc<Embedder>,
        texts: &[String],
        kept: &Kept,
    ) -> Result<Semantic, EmbedderError> {
        let semantic = Semantic {
            embedder,
            vectors: Arc::default(),
        };
        semantic.fill(texts, kept)?;
        Ok(semantic)
    }

    /// Embeds `texts` on a thread of its own, taking what is `kept`; the lexical ranking
    /// answers until it is done. When every text's vector is kept, they are read now, and the
    /// first query is ranked by meaning.
    pub(super) fn in_background(
        embedder: Arc<Embedder>,
        texts: Vec<String>,
        kept: Kept,
    ) -> Semantic {
        let semantic = Semantic {
            embedder,
            vectors: Arc::default(),
        };
        let known = Known::read(&semantic.embedder, &texts, &kept);
        if known.missing.is_empty() {
            let _ = semantic.complete(known, &texts, &kept);
            return semantic;
        }
        let filling = semantic.clone();
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            match filling.complete(known, &texts, &kept) {
                Ok(embedded) => tracing::info!(
                    tools = texts.len(),
                    embedded,
                    took = ?started.elapsed(),
                    "tools embedded: search_tools ranks by meaning too"
                ),
                Err(err) => tracing::warn!("tools not embedded, search stays lexical: {err}"),
            }
        });
        semantic
    }

    /// Embeds what is not `kept` of `texts`, and keeps it in the cache: how many were
    /// embedded.
    fn fill(&self, texts: &[String], kept: &Kept) -> Result<usize, EmbedderError> {
        let known = Known::read(&self.embedder, texts, kept);
        self.complete(known, texts, kept)
    }

    /// Embeds the texts `known` lacks, keeps them in the cache `kept` has, and sets every
    /// text's vector: how many were embedded.
    fn complete(
        &self,
        mut known: Known,
        texts: &[String],
        kept: &Kept,
    ) -> Result<usize, EmbedderError> {
        let embedder = &self.embedder;
        if let Err(err) = known.embed_missing(embedder, texts) {
            let _ = self.vectors.set(Err(err.to_string()));
            return Err(err);
        }
        let embedded = known.missing.len();
        if let Some(built) = known.built {
            tracing::info!(
                tools = texts.len(),
                built,
                embedded,
                "the tools' vectors: those built with the binary taken, the others embedded"
            );
        }
        if let Some(cache) = &kept.cache {
            tracing::info!(
                tools = texts.len(),
                embedded,
                dir = %cache.dir().display(),
                "the tools' vectors: those embedded before taken from the cache, the others embedded"
            );
            let (model, dimension) = (&embedder.fingerprint, embedder.dimension());
            if embedded > 0
                && let Err(err) = cache.store(model, dimension, &known.vectors)
            {
                tracing::warn!(
                    dir = %cache.dir().display(),
                    %err,
                    "the tools' vectors could not be kept: they are embedded again at the next \
                     start"
                );
            }
        }
        let vectors = known
            .keys
            .iter()
            .flat_map(|key| known.vectors[key].iter().copied())
            .collect();
        let _ = self.vectors.set(Ok(vectors));
        Ok(embedded)
    }

    /// Each tool's cosine similarity with `query`, or why there are none: the tools are not
    /// embedded yet, or could not be, or the query could not be.
    pub(super) fn similarities(&self, query: &str) -> Result<Vec<f32>, WordsOnly> {
        let vectors = match self.vectors.get() {
            None => return Err(WordsOnly::Embedding),
            Some(Err(err)) => return Err(WordsOnly::ToolsNotEmbedded(err.clone())),
            Some(Ok(vectors)) => vectors,
        };
        let query = self.embedder.embed(query).map_err(|err| {
            tracing::warn!("the query was not embedded, search stays lexical: {err}");
            WordsOnly::QueryNotEmbedded(err.to_string())
        })?;
        Ok(vectors
            .chunks_exact(query.len())
            .map(|tool| tool.iter().zip(&query).map(|(a, b)| a * b).sum())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::search::{Fusion, Matched, SearchIndex, VectorCache};

    /// The folder of the model the tests run, from `TOOLWRIGHT_EMBEDDING_MODEL` (all-MiniLM-L6-v2's
    /// `config.json`, `model.safetensors` and `tokenizer.json`; `.ci/run` fetches it).
    fn model_dir() -> String {
        std::env::var("TOOLWRIGHT_EMBEDDING_MODEL").expect(
            "the `semantic` feature's tests run a model: set TOOLWRIGHT_EMBEDDING_MODEL to the \
             folder of all-MiniLM-L6-v2 (config.json, model.safetensors, tokenizer.json; \
             `bash .ci/run` fetches it into target/embedding-model)",
        )
    }

    fn embedder() -> Arc<Embedder> {
        static EMBEDDER: OnceLock<Arc<Embedder>> = OnceLock::new();
        EMBEDDER
            .get_or_init(|| Arc::new(Embedder::from_dir(model_dir()).expect("the model loads")))
            .clone()
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn texts_that_mean_alike_are_near() {
        let embedder = embedder();
        let vectors = embedder
            .embed_all(&[
                "delete a file",
                "remove a document",
                "tomorrow's weather forecast",
            ])
            .unwrap();
        assert_eq!(vectors[0].len(), 384);
        let norm = cosine(&vectors[0], &vectors[0]);
        assert!((norm - 1.0).abs() < 1e-4, "unit length: {norm}");
        let (alike, unlike) = (
            cosine(&vectors[0], &vectors[1]),
            cosine(&vectors[0], &vectors[2]),
        );
        assert!(alike > unlike + 0.3, "{alike} against {unlike}");
        // One at a time or in a batch of texts of other lengths: the same vector, to the
        // rounding of 8-bit products.
        let alone = embedder.embed("remove a document").unwrap();
        assert!(cosine(&alone, &vectors[1]) > 0.999);
    }

    /// The vectors of the 8-bit encoder are the `f32` model's: each within a cosine of 0.998 of
    /// what candle-transformers' `f32` BERT gives for all-MiniLM-L6-v2 (`testdata/`, rounded to
    /// five decimals), alone and in a batch.
    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn the_vectors_are_the_f32_models() {
        let reference: std::collections::BTreeMap<String, Vec<f32>> =
            serde_json::from_str(include_str!("testdata/all-minilm-l6-v2-f32.json")).unwrap();
        let texts: Vec<&str> = reference.keys().map(String::as_str).collect();
        let embedder = embedder();
        let batch = embedder.embed_all(&texts).unwrap();
        for (text, in_batch) in texts.iter().zip(&batch) {
            let expected = &reference[*text];
            let alone = embedder.embed(text).unwrap();
            for (how, vector) in [("alone", &alone), ("in a batch", in_batch)] {
                let similarity = cosine(vector, expected);
                assert!(similarity > 0.998, "{text:?} {how}: {similarity}");
            }
        }
        // Texts that differ do not pass for one another: the bar above means something.
        let unlike = cosine(&batch[0], &reference[texts[1]]);
        assert!(unlike < 0.9, "{unlike}");
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn a_paraphrase_finds_a_tool_it_shares_no_word_with() {
        let tools = [
            json!({"name": "create_refund", "description": "Refund a charge to the customer's card."}),
            json!({"name": "list_invoices", "description": "List the invoices of a customer."}),
            json!({"name": "get_forecast", "description": "The weather of the next days."}),
        ];
        let index = SearchIndex::with_embedder(&tools, embedder()).unwrap();
        let first = |query: &str| tools[index.search(query)[0].index]["name"].clone();
        assert_eq!(first("give the money back for order 1182"), "create_refund");
        assert_eq!(first("will it rain on Saturday"), "get_forecast");
        // Words still rank a keyword query.
        assert_eq!(first("invoices"), "list_invoices");
        // A query without words lists the catalog in its order.
        let all: Vec<usize> = index.search("?").iter().map(|hit| hit.index).collect();
        assert_eq!(all, [0, 1, 2]);
    }

    /// A query that is a tool's name in words finds that tool first, above its siblings of the
    /// same noun, which a model finds about as near: `catalog-server`'s tools, for four nouns.
    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn a_query_naming_a_tool_whole_finds_it_above_its_siblings() {
        // Each noun: its name, its plural, with an article, and what it is.
        let nouns = [
            (
                "access_policy",
                "access_policies",
                "an",
                "the rules saying who may read a bucket",
            ),
            ("bucket", "buckets", "a", "a container of stored objects"),
            (
                "lifecycle_rule",
                "lifecycle_rules",
                "a",
                "a rule that expires objects by age",
            ),
            (
                "signed_url",
                "signed_urls",
                "a",
                "a time-limited link to one object",
            ),
        ];
        let mut tools = Vec::new();
        for (ident, plural, article, what) in nouns {
            let (one, many) = (ident.replace('_', " "), plural.replace('_', " "));
            let a = format!("{article} {one}");
            let place = "in object storage";
            for (name, sentence) in [
                (
                    format!("list_{plural}"),
                    format!("List the {many} {place}, newest first, one page at a time."),
                ),
                (
                    format!("get_{ident}"),
                    format!("Get one {one} {place} by its id, with every field."),
                ),
                (
                    format!("create_{ident}"),
                    format!(
                        "Create {a} {place}, seen by its owner's team unless `visibility` says."
                    ),
                ),
                (
                    format!("update_{ident}"),
                    format!("Change the name or description of {a} {place}."),
                ),
                (
                    format!("delete_{ident}"),
                    format!("Delete {a} {place} for good; this cannot be undone."),
                ),
                (
                    format!("search_{plural}"),
                    format!("Find {many} {place} whose name or description has the query's words."),
                ),
            ] {
                let description = format!("{sentence} Here {a} is {what}.");
                tools.push(json!({"name": name, "description": description}));
            }
        }
        let index = SearchIndex::with_embedder(&tools, embedder()).unwrap();
        for tool in &tools {
            let name = tool["name"].as_str().unwrap();
            let query = name.replace('_', " ");
            let first = &tools[index.search(&query)[0].index]["name"];
            assert_eq!(first, name, "{query:?}");
        }
    }

    /// Texts long and short, more word pieces than one batch takes: each comes back in its
    /// place, as it would alone.
    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn many_texts_are_embedded_in_bounded_batches_each_as_alone() {
        let long = "Read the complete contents of a file from the file system, as text, with \
                    its encoding detected, ";
        let texts: Vec<String> = (0..40)
            .map(|i| match i % 3 {
                0 => format!("tool {i}"),
                1 => format!("{i}: {}", long.repeat(1 + i % 4)),
                _ => format!("send message number {i} to a channel"),
            })
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embedder = embedder();
        let batch = embedder.embed_all(&texts).unwrap();
        assert_eq!(batch.len(), texts.len());
        for (text, vector) in texts.iter().zip(&batch) {
            let alone = embedder.embed(text).unwrap();
            assert!(cosine(&alone, vector) > 0.999, "{text:?}");
        }
    }

    /// A small catalog of unrelated tools, for the fusion's tests, and its index, embedded once
    /// for all of them.
    fn shop() -> (Vec<serde_json::Value>, SearchIndex) {
        static SHOP: OnceLock<(Vec<serde_json::Value>, SearchIndex)> = OnceLock::new();
        SHOP.get_or_init(|| {
            let tools = shop_tools();
            let index = SearchIndex::with_embedder(&tools, embedder()).unwrap();
            (tools, index)
        })
        .clone()
    }

    fn shop_tools() -> Vec<serde_json::Value> {
        vec![
            json!({"name": "create_refund", "description": "Refund a charge to the customer's card."}),
            json!({"name": "list_invoices", "description": "List the invoices of a customer."}),
            json!({"name": "get_forecast", "description": "The weather of the next days."}),
            json!({"name": "resize_image", "description": "Scale a picture to a width."}),
            json!({"name": "translate_text", "description": "Put a text into another language."}),
            json!({"name": "get_balance", "description": "The account's balance, in euros."}),
        ]
    }

    fn ranked(
        index: &SearchIndex,
        tools: &[serde_json::Value],
        query: &str,
    ) -> Vec<(String, Matched)> {
        index
            .search(query)
            .iter()
            .map(|hit| {
                (
                    tools[hit.index]["name"].as_str().unwrap().to_owned(),
                    hit.matched,
                )
            })
            .collect()
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn a_tool_far_from_the_nearest_is_no_hit_by_meaning_alone() {
        let (tools, index) = shop();
        let query = "give the money back for order 1182";
        let hits = ranked(&index, &tools, query);
        assert_eq!(
            hits[0],
            ("create_refund".to_owned(), Matched::Meaning),
            "{hits:?}"
        );
        // The balance is above the floor (a cosine of about 0.23), but far below the refund
        // (0.40): left out with the cut, kept without it.
        let balance = ("get_balance".to_owned(), Matched::Meaning);
        assert!(!hits.contains(&balance), "{hits:?}");
        let floor_only = Fusion {
            margin: 1.0,
            ..Fusion::default()
        };
        let uncut = ranked(&index.clone().with_fusion(floor_only), &tools, query);
        assert!(uncut.contains(&balance), "{uncut:?}");
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn each_hit_says_how_it_matched() {
        let (tools, index) = shop();
        // `invoices` is a word of one tool, which is also the nearest in meaning; the refund
        // is near in meaning only.
        let hits = ranked(&index, &tools, "customer invoices");
        assert_eq!(
            hits[0],
            ("list_invoices".to_owned(), Matched::Both),
            "{hits:?}"
        );
        // Without a model every hit is by words.
        let words = SearchIndex::new(&tools);
        assert!(
            ranked(&words, &tools, "customer invoices")
                .iter()
                .all(|(_, m)| *m == Matched::Words)
        );
        assert_eq!(Matched::Meaning.as_str(), "meaning");
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn the_fusion_is_set_through_the_index() {
        let (tools, index) = shop();
        let query = "give the money back for order 1182";
        // Meaning counting for nothing, and no tool near enough by meaning alone: words only.
        let words_only = Fusion {
            meaning: 0.0,
            floor: 2.0,
            ..Fusion::default()
        };
        let by_words = ranked(&index.clone().with_fusion(words_only), &tools, query);
        assert!(
            by_words.iter().all(|(_, m)| *m == Matched::Words),
            "{by_words:?}"
        );
        assert!(
            !by_words.iter().any(|(name, _)| name == "create_refund"),
            "{by_words:?}"
        );
        assert_eq!(Fusion::default().margin, 0.1);
    }

    /// Asserts that `index` ranks `tools` as `fresh`, which embedded them all, does.
    fn ranks_alike(index: &SearchIndex, fresh: &SearchIndex, tools: &[serde_json::Value]) {
        for query in [
            "give the money back",
            "will it rain on Saturday",
            "invoices",
        ] {
            assert_eq!(
                ranked(index, tools, query),
                ranked(fresh, tools, query),
                "{query}"
            );
        }
    }

    /// A folder of its own for the test `name`, empty.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("toolwright-semantic-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn a_start_with_the_vector_cache_embeds_only_what_changed_and_ranks_alike() {
        let dir = scratch("cache");
        let cache = VectorCache::new(&dir);
        let mut tools = shop_tools();
        let texts = |tools: &[serde_json::Value]| -> Vec<String> {
            tools.iter().map(crate::search::text::prose).collect()
        };
        let started = || Semantic {
            embedder: embedder(),
            vectors: Arc::default(),
        };
        let kept = Kept::in_cache(Some(cache.clone()));
        let first = started();
        assert_eq!(first.fill(&texts(&tools), &kept).unwrap(), 6);
        // Started again: every vector is the cache's, the very numbers embedded before.
        let again = started();
        assert_eq!(again.fill(&texts(&tools), &kept).unwrap(), 0);
        assert_eq!(
            again.vectors.get().unwrap().as_ref().unwrap(),
            first.vectors.get().unwrap().as_ref().unwrap()
        );
        // Served, with every vector in the cache: read before the first query, no thread.
        let warm = Semantic::in_background(embedder(), texts(&tools), kept.clone());
        assert!(
            warm.vectors.get().is_some_and(Result::is_ok),
            "ranked by meaning at once"
        );
        // A description changed: that tool alone is embedded.
        tools[2]["description"] = json!("Rain, sun and wind of the coming week.");
        assert_eq!(started().fill(&texts(&tools), &kept).unwrap(), 1);
        // The ranking is the one of embedding them all.
        let cached = SearchIndex::with_embedder_cached(&tools, embedder(), Some(&cache)).unwrap();
        let fresh = SearchIndex::with_embedder(&tools, embedder()).unwrap();
        ranks_alike(&cached, &fresh, &tools);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn vectors_built_with_the_binary_are_used_when_they_are_its_models() {
        let mut tools = shop_tools();
        let texts = |tools: &[serde_json::Value]| -> Vec<String> {
            tools.iter().map(crate::search::text::prose).collect()
        };
        let (bytes, embedded) = built(&embedder(), &texts(&tools), None).unwrap();
        assert_eq!(embedded, 6);
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let started = || Semantic {
            embedder: embedder(),
            vectors: Arc::default(),
        };
        let with = |built: Vec<u8>| Kept {
            built: Some(Box::leak(built.into_boxed_slice())),
            cache: None,
        };
        let kept = Kept {
            built: Some(bytes),
            cache: None,
        };
        // Every vector built: none embedded, and the first query is ranked by meaning.
        assert_eq!(started().fill(&texts(&tools), &kept).unwrap(), 0);
        let served = Semantic::in_background(embedder(), texts(&tools), kept.clone());
        assert!(served.vectors.get().is_some_and(Result::is_ok));
        // Built without a model, or with another: every tool embedded at start.
        assert_eq!(
            started().fill(&texts(&tools), &with(no_vectors())).unwrap(),
            6
        );
        let other = cache::encode("another-model", 384, &kept.built(&embedder()).unwrap());
        assert_eq!(started().fill(&texts(&tools), &with(other)).unwrap(), 6);
        // A tool changed since the build: it alone is embedded, and the ranking is the one of
        // embedding them all.
        tools[2]["description"] = json!("Rain, sun and wind of the coming week.");
        assert_eq!(started().fill(&texts(&tools), &kept).unwrap(), 1);
        let fresh = SearchIndex::with_embedder(&tools, embedder()).unwrap();
        let mut served = SearchIndex::new(&tools);
        served.semantic = Some(Semantic::now(embedder(), &texts(&tools), &kept).unwrap());
        ranks_alike(&served, &fresh, &tools);
    }

    #[test]
    fn a_models_fingerprint_is_of_its_three_files_each_in_its_place() {
        let of = |config: &[u8], weights: &[u8], tokenizer: &[u8]| {
            fingerprint([
                (config.len() as u64, &mut { config }),
                (weights.len() as u64, &mut { weights }),
                (tokenizer.len() as u64, &mut { tokenizer }),
            ])
            .unwrap()
        };
        let print = of(b"config", b"weights", b"tokenizer");
        assert_eq!(print.len(), 64);
        assert_ne!(print, of(b"configw", b"eights", b"tokenizer"));
        assert_ne!(print, of(b"config", b"weights", b"tokenizer2"));
        assert_eq!(print, of(b"config", b"weights", b"tokenizer"));
        // A file shorter than it said it was is not taken for another.
        let mut short: &[u8] = b"weight";
        assert!(
            fingerprint([
                (6, &mut { &b"config"[..] }),
                (7, &mut short),
                (0, &mut { &b""[..] })
            ])
            .is_err()
        );
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn a_model_loaded_from_its_folder_is_the_one_loaded_from_its_bytes() {
        let dir = std::path::PathBuf::from(model_dir());
        let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
        let from_bytes = Embedder::from_bytes(
            &read("config.json"),
            &read("model.safetensors"),
            &read("tokenizer.json"),
        )
        .unwrap();
        let from_dir = embedder();
        assert_eq!(from_bytes.fingerprint, from_dir.fingerprint);
        let texts = ["delete a file", "tomorrow's weather forecast"];
        assert_eq!(
            from_bytes.embed_all(&texts).unwrap(),
            from_dir.embed_all(&texts).unwrap()
        );
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn a_ranking_by_words_only_says_why() {
        let (_, mut index) = shop();
        let ranked = index.rank("refund");
        assert_eq!(ranked.words_only, None);
        // Tools whose embedding failed: the ranking is by words, and says so.
        index.semantic = Some(Semantic {
            embedder: embedder(),
            vectors: Arc::new(OnceLock::from(Err("out of memory".to_owned()))),
        });
        let ranked = index.rank("refund");
        assert_eq!(
            ranked.words_only,
            Some(WordsOnly::ToolsNotEmbedded("out of memory".to_owned()))
        );
        let why = ranked.words_only.unwrap();
        assert_eq!(
            why.to_string(),
            "the tools could not be embedded: out of memory"
        );
        assert_eq!(why.kind(), "tools_not_embedded");
        assert_eq!(ranked.hits[0].matched, Matched::Words);
        // Tools still being embedded.
        index.semantic = Some(Semantic {
            embedder: embedder(),
            vectors: Arc::default(),
        });
        let why = index.rank("refund").words_only.unwrap();
        assert_eq!(why.to_string(), "the tools are still being embedded");
        assert_eq!(why.kind(), "embedding");
    }

    #[test]
    #[ignore = "needs the embedding model in TOOLWRIGHT_EMBEDDING_MODEL"]
    fn files_that_are_not_a_model_are_refused_saying_which() {
        let err = Embedder::from_dir("no/such/folder").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot read no/such/folder/config.json: "),
            "{err}"
        );
        let err = Embedder::from_bytes(b"{}", &[], b"{}").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("`config.json` is not a BERT configuration: "),
            "{err}"
        );
        let dir = model_dir();
        let weights = std::fs::read(Path::new(&dir).join("model.safetensors")).unwrap();
        let tokenizer = std::fs::read(Path::new(&dir).join("tokenizer.json")).unwrap();
        let config: serde_json::Value =
            serde_json::from_slice(&std::fs::read(Path::new(&dir).join("config.json")).unwrap())
                .unwrap();
        let with = |field: &str, value: serde_json::Value| {
            let mut config = config.clone();
            config[field] = value;
            let err =
                Embedder::from_bytes(&serde_json::to_vec(&config).unwrap(), &weights, &tokenizer)
                    .unwrap_err();
            err.to_string()
        };
        let err = Embedder::from_bytes(
            &serde_json::to_vec(&config).unwrap(),
            b"not safetensors",
            &tokenizer,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("`model.safetensors` cannot be read: "),
            "{err}"
        );
        // The same from a folder, whose weights are read from their file.
        let folder =
            std::env::temp_dir().join(format!("toolwright-bad-model-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("config.json"),
            serde_json::to_vec(&config).unwrap(),
        )
        .unwrap();
        std::fs::write(folder.join("tokenizer.json"), &tokenizer).unwrap();
        std::fs::write(folder.join("model.safetensors"), b"not safetensors").unwrap();
        let err = Embedder::from_dir(&folder).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("`model.safetensors` cannot be read: its header claims "),
            "{err}"
        );
        std::fs::remove_dir_all(folder).unwrap();
        assert_eq!(
            with("hidden_act", json!("relu")),
            "the weights are not a BERT encoder's: the activation `relu` is not supported"
        );
        assert_eq!(
            with("intermediate_size", json!(1024)),
            "the weights are not a BERT encoder's: `encoder.layer.0.intermediate.dense.weight` \
             is [1536, 384], not [1024, 384]"
        );
        assert_eq!(
            with("num_hidden_layers", json!(7)),
            "the weights are not a BERT encoder's: there is no tensor \
             `encoder.layer.6.attention.self.query.weight`"
        );
    }
}
