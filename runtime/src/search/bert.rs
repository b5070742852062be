//! A BERT encoder's forward pass, its weights in 8 bits: what turns a text's word pieces into
//! the states `semantic.rs` averages into a vector.
//!
//! The weights come as `f32` (a Hugging Face `model.safetensors`); each layer's four matrices
//! and the word-piece embeddings are quantised at load to ggml's `Q8_0` (blocks of 32 bytes
//! sharing one scale). For the dozen word pieces of a query candle multiplies them with integer
//! dot products, about twice as fast as the `f32` products; a batch of texts long enough to
//! keep the `f32` products busy expands each matrix for its product instead. The model keeps a
//! third of the memory, and its vectors stay within a cosine of 0.998 of the `f32` model's
//! (0.9996 at the median over the evaluation's 1,055 texts). Position embeddings, biases and
//! layer norms stay `f32`.

use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{D, DType, Result, Tensor};

use super::tensors::Tensors;

/// The fields of a BERT `config.json` the forward pass reads.
#[derive(Clone, Debug, serde::Deserialize)]
pub(super) struct Config {
    pub(super) hidden_size: usize,
    pub(super) num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "layer_norm_eps")]
    layer_norm_eps: f64,
    #[serde(default = "gelu")]
    hidden_act: String,
    #[serde(default = "absolute")]
    position_embedding_type: String,
}

fn layer_norm_eps() -> f64 {
    1e-12
}

fn gelu() -> String {
    "gelu".to_owned()
}

fn absolute() -> String {
    "absolute".to_owned()
}

/// From how many rows (the word pieces of all the texts of a batch) a dense layer multiplies in
/// `f32`, its weight expanded for the product: on a long input `f32` products are twice as
/// fast as `Q8_0` ones, and expanding the weight is a small part of their cost (embedding 1,000
/// tools took 18 s in `Q8_0` only, 9 s so).
const EXPANDED_ROWS: usize = 64;

/// A refusal without the backtrace `candle_core::bail!` attaches when `RUST_BACKTRACE` is set:
/// its message is the error a server's author reads.
fn refuse<T>(message: String) -> Result<T> {
    Err(candle_core::Error::Msg(message))
}

/// A dense layer: `x · Wᵀ + b`, `W` in `Q8_0`.
struct Linear {
    weight: QTensor,
    bias: Tensor,
}

impl Linear {
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        let inputs = xs.dim(D::Minus1)?;
        let rows = xs.elem_count() / inputs;
        let product = if rows < EXPANDED_ROWS {
            // candle's integer product, the input quantised row by row.
            xs.apply_op1_no_bwd(&self.weight)?
        } else {
            let mut shape = xs.dims().to_vec();
            *shape.last_mut().expect("a matrix") = self.weight.shape().dims()[0];
            let weight = self.weight.dequantize(xs.device())?;
            xs.reshape((rows, inputs))?
                .matmul(&weight.t()?)?
                .reshape(shape)?
        };
        product.broadcast_add(&self.bias)
    }
}

struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl LayerNorm {
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        candle_nn::ops::layer_norm(xs, &self.weight, &self.bias, self.eps)
    }
}

struct EncoderLayer {
    /// The query, key and value projections as one matrix, three times as tall.
    qkv: Linear,
    attention_output: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The encoder: word pieces in, one state per piece out.
pub(super) struct Encoder {
    /// The word pieces' embeddings, in `Q8_0` too: a row is expanded when a text holds its piece.
    words: QTensor,
    /// Each position's embedding plus the first token type's (every text is one segment).
    positions: Tensor,
    embedding_norm: LayerNorm,
    layers: Vec<EncoderLayer>,
    heads: usize,
    /// `true` for the tanh approximation of GELU, `false` for the exact (erf) one.
    tanh_gelu: bool,
}

/// The tensors of a `model.safetensors`, read one at a time as the layers take them: one `f32`
/// tensor is held beside the quantised model while it loads (and the file's bytes, when they
/// are in memory already), not a copy of every tensor.
struct Weights<'a> {
    file: Tensors<'a>,
    /// `bert.` when the names have it (a model saved with its pre-training heads).
    prefix: &'static str,
}

impl Weights<'_> {
    /// The tensor `name`, of any shape.
    fn any(&self, name: &str) -> Result<Tensor> {
        let name = format!("{}{name}", self.prefix);
        match self.file.get(&name)? {
            Some(tensor) => Ok(tensor),
            None => refuse(format!("there is no tensor `{name}`")),
        }
    }

    fn take(&self, name: &str, shape: &[usize]) -> Result<Tensor> {
        let tensor = self.any(name)?;
        if tensor.dims() != shape {
            return refuse(format!("`{name}` is {:?}, not {shape:?}", tensor.dims()));
        }
        Ok(tensor)
    }

    fn norm(&self, prefix: &str, size: usize, eps: f64) -> Result<LayerNorm> {
        Ok(LayerNorm {
            weight: self.take(&format!("{prefix}.weight"), &[size])?,
            bias: self.take(&format!("{prefix}.bias"), &[size])?,
            eps: eps as f32,
        })
    }

    /// The dense layers under `prefixes`, stacked into one (their outputs side by side).
    fn linear(&self, prefixes: &[&str], inputs: usize, outputs: usize) -> Result<Linear> {
        let (mut weights, mut biases) = (Vec::new(), Vec::new());
        for prefix in prefixes {
            weights.push(self.take(&format!("{prefix}.weight"), &[outputs, inputs])?);
            biases.push(self.take(&format!("{prefix}.bias"), &[outputs])?);
        }
        Ok(Linear {
            weight: QTensor::quantize(&Tensor::cat(&weights, 0)?, GgmlDType::Q8_0)?,
            bias: Tensor::cat(&biases, 0)?,
        })
    }
}

impl Encoder {
    /// The encoder of `config` from the tensors of its `model.safetensors`, their names with
    /// or without a `bert.` prefix.
    pub(super) fn load(config: &Config, file: Tensors<'_>) -> Result<Encoder> {
        let tanh_gelu = match config.hidden_act.as_str() {
            "gelu" => false,
            "gelu_new" | "gelu_pytorch_tanh" => true,
            other => return refuse(format!("the activation `{other}` is not supported")),
        };
        if config.position_embedding_type != "absolute" {
            return refuse(format!(
                "position embeddings of type `{}` are not supported",
                config.position_embedding_type
            ));
        }
        let (hidden, heads) = (config.hidden_size, config.num_attention_heads);
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return refuse(format!(
                "a hidden size of {hidden} does not split into {heads} heads"
            ));
        }
        let intermediate = config.intermediate_size;
        if !hidden.is_multiple_of(32) || !intermediate.is_multiple_of(32) {
            return refuse(format!(
                "sizes of {hidden} and {intermediate} do not split into the 8-bit blocks of 32"
            ));
        }
        let prefix = if file.has("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        let weights = Weights { file, prefix };
        // Quantised in a block of its own, so that its 47 MB of `f32` are gone before the layers
        // load.
        let words = {
            let words = weights.any("embeddings.word_embeddings.weight")?;
            match words.dims() {
                [_, width] if *width == hidden => QTensor::quantize(&words, GgmlDType::Q8_0)?,
                dims => {
                    return refuse(format!(
                        "the word embeddings are {dims:?}, not [_, {hidden}]"
                    ));
                }
            }
        };
        let types = weights.any("embeddings.token_type_embeddings.weight")?;
        let positions = weights
            .take(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, hidden],
            )?
            .broadcast_add(&types.get(0)?)?;
        let embedding_norm = weights.norm("embeddings.LayerNorm", hidden, config.layer_norm_eps)?;
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let at = |name: &str| format!("encoder.layer.{i}.{name}");
                let eps = config.layer_norm_eps;
                Ok(EncoderLayer {
                    qkv: weights.linear(
                        &[
                            &at("attention.self.query"),
                            &at("attention.self.key"),
                            &at("attention.self.value"),
                        ],
                        hidden,
                        hidden,
                    )?,
                    attention_output: weights.linear(
                        &[&at("attention.output.dense")],
                        hidden,
                        hidden,
                    )?,
                    attention_norm: weights.norm(&at("attention.output.LayerNorm"), hidden, eps)?,
                    intermediate: weights.linear(
                        &[&at("intermediate.dense")],
                        hidden,
                        intermediate,
                    )?,
                    output: weights.linear(&[&at("output.dense")], intermediate, hidden)?,
                    output_norm: weights.norm(&at("output.LayerNorm"), hidden, eps)?,
                })
            })
            .collect::<Result<Vec<EncoderLayer>>>()?;
        Ok(Encoder {
            words,
            positions,
            embedding_norm,
            layers,
            heads,
            tanh_gelu,
        })
    }

    /// The states of a batch of texts' word pieces: `ids` and `mask` are `(texts, pieces)`,
    /// `mask` 1 for a piece and 0 for padding; the states are `(texts, pieces, hidden)`.
    pub(super) fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (texts, pieces) = ids.dims2()?;
        if pieces > self.positions.dim(0)? {
            return refuse(format!(
                "{pieces} word pieces, more than the model's positions"
            ));
        }
        let words = self.words.embedding(ids)?;
        let embedded = words.broadcast_add(&self.positions.narrow(0, 0, pieces)?)?;
        let mut states = self.embedding_norm.forward(&embedded)?;
        // What padding adds to an attention score: the lowest `f32`, so that softmax gives it
        // no weight.
        let padding = ((mask.to_dtype(DType::F32)? - 1.0)? * f64::from(f32::MAX))?
            .reshape((texts, 1, 1, pieces))?;
        for layer in &self.layers {
            states = self.layer(layer, &states, &padding)?;
        }
        Ok(states)
    }

    fn layer(&self, layer: &EncoderLayer, states: &Tensor, padding: &Tensor) -> Result<Tensor> {
        let (texts, pieces, hidden) = states.dims3()?;
        let width = hidden / self.heads;
        let qkv = layer.qkv.forward(states)?;
        // One of query, key, value as (texts, heads, pieces, width).
        let part = |i: usize| {
            qkv.narrow(2, i * hidden, hidden)?
                .reshape((texts, pieces, self.heads, width))?
                .transpose(1, 2)?
                .contiguous()
        };
        let (query, key, value) = (part(0)?, part(1)?, part(2)?);
        let scores = (query.matmul(&key.t()?)? / (width as f64).sqrt())?.broadcast_add(padding)?;
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let attended = weights
            .matmul(&value)?
            .transpose(1, 2)?
            .reshape((texts, pieces, hidden))?;
        let attended = layer
            .attention_norm
            .forward(&(layer.attention_output.forward(&attended)? + states)?)?;
        let intermediate = layer.intermediate.forward(&attended)?;
        let intermediate = if self.tanh_gelu {
            intermediate.gelu()?
        } else {
            intermediate.gelu_erf()?
        };
        let output = layer.output.forward(&intermediate)?;
        layer.output_norm.forward(&(output + attended)?)
    }
}
