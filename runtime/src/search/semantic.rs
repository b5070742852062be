//! What a query means, beside the words it shares with a tool: a small sentence-embedding model
//! (a BERT encoder, such as all-MiniLM-L6-v2) run in-process with candle, whose cosine
//! similarity is fused with the lexical score. The `semantic` feature.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

/// The most word pieces of a text the model reads: what all-MiniLM-L6-v2 was trained on; a
/// tool's description is cut there.
const MAX_TOKENS: usize = 256;

/// How many texts are embedded together: batches of texts of like length cost less per text,
/// and more would pad short ones to the longest.
const BATCH: usize = 16;

/// A sentence-embedding model: texts in, unit vectors out, near for texts that mean alike.
///
/// Loaded from the files a Hugging Face model folder holds: `config.json` (a BERT
/// configuration), `model.safetensors` (its weights) and `tokenizer.json`. Nothing is fetched:
/// the server's author ships the files, or their bytes in the binary. all-MiniLM-L6-v2 (90 MB
/// of `f32` weights) is the model the ranking's fusion weight was chosen for.
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
    model: BertModel,
    tokenizer: Tokenizer,
    /// The SHA-256 of the weights and the tokenizer: vectors made by one model are kept under
    /// it, never compared with another's.
    id: [u8; 32],
}

/// Why a model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EmbedderError(String);

impl Embedder {
    /// Loads the model in `dir`: `config.json`, `model.safetensors` and `tokenizer.json`.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Embedder, EmbedderError> {
        let dir = dir.as_ref();
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path)
                .map_err(|err| EmbedderError(format!("cannot read {}: {err}", path.display())))
        };
        Embedder::from_bytes(
            &read("config.json")?,
            read("model.safetensors")?,
            &read("tokenizer.json")?,
        )
    }

    /// Loads a model from the bytes of its three files (`include_bytes!` puts them in the
    /// binary).
    pub fn from_bytes(
        config: &[u8],
        weights: Vec<u8>,
        tokenizer: &[u8],
    ) -> Result<Embedder, EmbedderError> {
        let mut digest = Sha256::new();
        digest.update(&weights);
        digest.update(tokenizer);
        let id = digest.finalize().into();
        let config: Config = serde_json::from_slice(config).map_err(|err| {
            EmbedderError(format!("`config.json` is not a BERT configuration: {err}"))
        })?;
        let weights = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|err| EmbedderError(format!("`model.safetensors` cannot be read: {err}")))?;
        let model = BertModel::load(weights, &config)
            .map_err(|err| EmbedderError(format!("the weights are not a BERT encoder's: {err}")))?;
        let mut tokenizer = Tokenizer::from_bytes(tokenizer)
            .map_err(|err| EmbedderError(format!("`tokenizer.json` cannot be read: {err}")))?;
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|err| EmbedderError(format!("the tokenizer cannot truncate: {err}")))?;
        Ok(Embedder {
            model,
            tokenizer,
            id,
        })
    }

    /// The vector of one text: the mean of its word pieces' states, of length 1.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedderError> {
        let mut vectors = self.embed_all(&[text])?;
        Ok(vectors.pop().expect("one vector per text"))
    }

    /// The vectors of several texts, in their order. They are embedded in batches of texts of
    /// like length, so that a short text is not padded to a long one's length.
    pub fn embed_all(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedderError> {
        let failed = |err: candle_core::Error| EmbedderError(format!("the model failed: {err}"));
        let mut encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|err| EmbedderError(format!("the tokenizer failed: {err}")))?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        let length =
            |e: &tokenizers::Encoding| e.get_attention_mask().iter().filter(|&&m| m == 1).count();
        order.sort_by_key(|&i| length(&encodings[i]));
        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            let longest = batch
                .iter()
                .map(|&i| length(&encodings[i]))
                .max()
                .unwrap_or(0)
                .max(1);
            let (mut ids, mut masks) = (Vec::new(), Vec::new());
            for &i in batch {
                let encoding = &mut encodings[i];
                // Padded to the batch's longest only, not to the longest of all the texts.
                encoding.truncate(longest, 0, tokenizers::TruncationDirection::Right);
                ids.push(Tensor::new(encoding.get_ids(), &Device::Cpu).map_err(failed)?);
                masks.push(
                    Tensor::new(encoding.get_attention_mask(), &Device::Cpu).map_err(failed)?,
                );
            }
            let vectors = (|| {
                let ids = Tensor::stack(&ids, 0)?;
                let mask = Tensor::stack(&masks, 0)?;
                let types = ids.zeros_like()?;
                let states = self.model.forward(&ids, &types, Some(&mask))?;
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

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let id: String = self.id[..8].iter().map(|b| format!("{b:02x}")).collect();
        f.debug_struct("Embedder")
            .field("id", &id)
            .finish_non_exhaustive()
    }
}

/// A catalog's tool vectors, made once by one model, and the model that embeds each query.
#[derive(Clone, Debug)]
pub(super) struct Semantic {
    pub(super) embedder: Arc<Embedder>,
    /// Filled when every tool is embedded; until then the ranking is lexical.
    pub(super) vectors: Arc<OnceLock<Vec<f32>>>,
}

impl Semantic {
    /// Embeds `texts` (a tool's each), now.
    pub(super) fn now(
        embedder: Arc<Embedder>,
        texts: &[String],
    ) -> Result<Semantic, EmbedderError> {
        let semantic = Semantic {
            embedder,
            vectors: Arc::default(),
        };
        semantic.fill(texts)?;
        Ok(semantic)
    }

    /// Embeds `texts` on a thread of its own; the lexical ranking answers until it is done.
    pub(super) fn in_background(embedder: Arc<Embedder>, texts: Vec<String>) -> Semantic {
        let semantic = Semantic {
            embedder,
            vectors: Arc::default(),
        };
        let filling = semantic.clone();
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            match filling.fill(&texts) {
                Ok(()) => tracing::info!(
                    tools = texts.len(),
                    took = ?started.elapsed(),
                    "tools embedded: search_tools ranks by meaning too"
                ),
                Err(err) => tracing::warn!("tools not embedded, search stays lexical: {err}"),
            }
        });
        semantic
    }

    fn fill(&self, texts: &[String]) -> Result<(), EmbedderError> {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = self.embedder.embed_all(&texts)?;
        let _ = self.vectors.set(vectors.into_iter().flatten().collect());
        Ok(())
    }

    /// Each tool's cosine similarity with `query`, once every tool is embedded.
    pub(super) fn similarities(&self, query: &str) -> Option<Vec<f32>> {
        let vectors = self.vectors.get()?;
        let query = match self.embedder.embed(query) {
            Ok(query) => query,
            Err(err) => {
                tracing::warn!("the query was not embedded, search stays lexical: {err}");
                return None;
            }
        };
        Some(
            vectors
                .chunks_exact(query.len())
                .map(|tool| tool.iter().zip(&query).map(|(a, b)| a * b).sum())
                .collect(),
        )
    }
}
