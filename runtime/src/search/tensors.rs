//! The tensors of a `model.safetensors`, as the encoder takes them one at a time: from the
//! file's bytes in memory (a model in the binary), or from the file itself, each tensor read
//! when it is asked for, so that loading a model never holds the whole file.
//!
//! The file is an 8-byte little-endian length, a JSON header of that length naming each tensor's
//! `dtype`, `shape` and `data_offsets` (from the end of the header), then the tensors' bytes.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Mutex;

use candle_core::safetensors::{Load, SliceSafetensors};
use candle_core::{DType, Device, Error, Result, Tensor};

/// Where the tensors are read from.
pub(super) enum Tensors<'a> {
    /// The whole file, in memory.
    Bytes(SliceSafetensors<'a>),
    /// The file, a tensor at a time.
    File(FileTensors),
}

/// A `model.safetensors` open, its header read.
pub(super) struct FileTensors {
    file: Mutex<File>,
    tensors: HashMap<String, Entry>,
    /// Where the tensors' bytes begin: after the length and the header.
    data: u64,
}

/// One tensor of the header.
struct Entry {
    /// Its type, or the name of one that is not a float.
    dtype: std::result::Result<DType, String>,
    shape: Vec<usize>,
    /// Its bytes, from `data`.
    begin: u64,
    end: u64,
}

/// What the header says of a tensor.
#[derive(serde::Deserialize)]
struct Described {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: (u64, u64),
}

/// The longest header read: a model's names and shapes take kilobytes.
const MAX_HEADER: u64 = 100 << 20;

impl FileTensors {
    /// Opens the file at `path` and reads its header.
    pub(super) fn open(path: &Path) -> Result<FileTensors> {
        let mut file = File::open(path)?;
        let mut length = [0; 8];
        file.read_exact(&mut length)?;
        let length = u64::from_le_bytes(length);
        if length > MAX_HEADER {
            return Err(Error::Msg(format!(
                "its header claims {length} bytes, more than a model's"
            )));
        }
        let mut header = vec![0; usize::try_from(length).expect("a header below 100 MiB")];
        file.read_exact(&mut header)?;
        let header: HashMap<String, serde_json::Value> = serde_json::from_slice(&header)
            .map_err(|err| Error::Msg(format!("its header is not JSON: {err}")))?;
        let size = file.metadata()?.len();
        let data = 8 + length;
        let mut tensors = HashMap::with_capacity(header.len());
        for (name, described) in header {
            if name == "__metadata__" {
                continue;
            }
            let Described {
                dtype,
                shape,
                data_offsets: (begin, end),
            } = serde_json::from_value(described).map_err(|err| {
                Error::Msg(format!("the tensor `{name}` is not described: {err}"))
            })?;
            // A tensor of another type (`position_ids`, of integers) is refused only if asked for.
            let (dtype, width) = match dtype.as_str() {
                "F32" => (Ok(DType::F32), 4),
                "F16" => (Ok(DType::F16), 2),
                "BF16" => (Ok(DType::BF16), 2),
                "F64" => (Ok(DType::F64), 8),
                "I64" | "U64" => (Err(dtype), 8),
                "I32" | "U32" => (Err(dtype), 4),
                "I16" | "U16" => (Err(dtype), 2),
                _ => (Err(dtype), 1),
            };
            let elements: usize = shape.iter().product();
            if begin > end
                || (dtype.is_ok() && end - begin != (elements * width) as u64)
                || data + end > size
            {
                return Err(Error::Msg(format!(
                    "the tensor `{name}` does not fit its place in the file"
                )));
            }
            tensors.insert(
                name,
                Entry {
                    dtype,
                    shape,
                    begin,
                    end,
                },
            );
        }
        Ok(FileTensors {
            file: Mutex::new(file),
            tensors,
            data,
        })
    }

    /// The tensor `name` as `f32`, read from the file now.
    fn read(&self, name: &str, entry: &Entry) -> Result<Tensor> {
        let dtype = match &entry.dtype {
            Ok(dtype) => *dtype,
            Err(other) => {
                return Err(Error::Msg(format!(
                    "the tensor `{name}` is of type {other}, not a float"
                )));
            }
        };
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.seek(SeekFrom::Start(self.data + entry.begin))?;
        let length = usize::try_from(entry.end - entry.begin).expect("a tensor that fits memory");
        if dtype == DType::F32 {
            // Read straight into the numbers, a block at a time: no second copy of the bytes.
            let mut numbers = Vec::with_capacity(length / 4);
            let mut block = vec![0; 1 << 20];
            let mut left = length;
            while left > 0 {
                let take = left.min(block.len());
                file.read_exact(&mut block[..take])?;
                numbers.extend(
                    block[..take]
                        .chunks_exact(4)
                        .map(|n| f32::from_le_bytes(n.try_into().expect("4 bytes"))),
                );
                left -= take;
            }
            return Tensor::from_vec(numbers, entry.shape.as_slice(), &Device::Cpu);
        }
        let mut bytes = vec![0; length];
        file.read_exact(&mut bytes)?;
        Tensor::from_raw_buffer(&bytes, dtype, &entry.shape, &Device::Cpu)?.to_dtype(DType::F32)
    }
}

impl Tensors<'_> {
    /// Whether there is a tensor `name`.
    pub(super) fn has(&self, name: &str) -> bool {
        match self {
            Tensors::Bytes(file) => file.get(name).is_ok(),
            Tensors::File(file) => file.tensors.contains_key(name),
        }
    }

    /// The tensor `name` as `f32`, if there is one.
    pub(super) fn get(&self, name: &str) -> Result<Option<Tensor>> {
        match self {
            Tensors::Bytes(file) => match file.get(name) {
                Ok(view) => Ok(Some(view.load(&Device::Cpu)?.to_dtype(DType::F32)?)),
                Err(_) => Ok(None),
            },
            Tensors::File(file) => match file.tensors.get(name) {
                Some(entry) => file.read(name, entry).map(Some),
                None => Ok(None),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `model.safetensors` of a 2×2 `f32` tensor `w`, a 2-number `f16` tensor `h` and an
    /// integer tensor `ids`, written to a file of its own for the test `name`.
    fn file(name: &str, cut: usize) -> std::path::PathBuf {
        let header = serde_json::json!({
            "__metadata__": {"format": "pt"},
            "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
            "h": {"dtype": "F16", "shape": [2], "data_offsets": [16, 20]},
            "ids": {"dtype": "I64", "shape": [1], "data_offsets": [20, 28]},
        });
        let header = serde_json::to_vec(&header).unwrap();
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend(&header);
        for n in [1.0f32, 2.0, 3.0, 4.0] {
            bytes.extend(n.to_le_bytes());
        }
        bytes.extend([0x00, 0x3c, 0x00, 0x40]); // 1.0 and 2.0 in f16
        bytes.extend(7i64.to_le_bytes());
        bytes.truncate(bytes.len() - cut);
        let path = std::env::temp_dir().join(format!(
            "toolwright-tensors-{}-{name}.safetensors",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn tensors_are_read_from_the_file_one_at_a_time() {
        let path = file("whole", 0);
        let tensors = Tensors::File(FileTensors::open(&path).unwrap());
        assert!(tensors.has("w") && !tensors.has("__metadata__"));
        let w = tensors.get("w").unwrap().unwrap();
        assert_eq!(w.to_vec2::<f32>().unwrap(), [[1.0, 2.0], [3.0, 4.0]]);
        let h = tensors.get("h").unwrap().unwrap();
        assert_eq!(h.to_vec1::<f32>().unwrap(), [1.0, 2.0]);
        assert!(tensors.get("absent").unwrap().is_none());
        assert_eq!(
            tensors.get("ids").unwrap_err().to_string(),
            "the tensor `ids` is of type I64, not a float"
        );
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_file_cut_short_is_refused_naming_the_tensor() {
        let path = file("cut", 1);
        let err = FileTensors::open(&path).err().unwrap();
        assert_eq!(
            err.to_string(),
            "the tensor `ids` does not fit its place in the file"
        );
        std::fs::write(&path, u64::MAX.to_le_bytes()).unwrap();
        let err = FileTensors::open(&path).err().unwrap();
        assert_eq!(
            err.to_string(),
            format!("its header claims {} bytes, more than a model's", u64::MAX)
        );
        std::fs::remove_file(path).unwrap();
    }
}
