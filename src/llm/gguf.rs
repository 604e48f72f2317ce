//! Reading a GGUF file: header, metadata with typed getters whose errors name the key, and
//! tensors. Structural checks run before any tensor data is read, so a truncated or corrupt
//! file is an error naming the file, never a panic or a huge allocation.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file::{Content, Value};
use candle_core::quantized::QTensor;
use candle_core::Device;

use super::error::{LlmError, Result};

/// An opened GGUF file: its metadata and tensor directory, with the file kept for tensor reads.
pub struct GgufFile {
    path: PathBuf,
    file: BufReader<File>,
    content: Content,
    file_len: u64,
}

impl GgufFile {
    /// Opens and validates the header, metadata and tensor directory of `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let io_err = |source| LlmError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io_err)?;
        let file_len = file.metadata().map_err(io_err)?.len();
        let mut file = BufReader::new(file);
        let mut magic = [0u8; 4];
        let bad = |reason: String| LlmError::BadGguf {
            path: path.to_path_buf(),
            reason,
        };
        file.read_exact(&mut magic)
            .map_err(|_| bad(format!("file is {file_len} bytes, too short for a header")))?;
        if &magic != b"GGUF" {
            return Err(bad(format!(
                "wrong magic {:?} (expected \"GGUF\")",
                String::from_utf8_lossy(&magic)
            )));
        }
        precheck_header(&mut file, file_len).map_err(bad)?;
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        let content = Content::read(&mut file).map_err(|e| bad(candle_reason(&e)))?;
        for (name, info) in &content.tensor_infos {
            let elems: usize = info.shape.elem_count();
            let bytes =
                (elems / info.ggml_dtype.block_size()) as u64 * info.ggml_dtype.type_size() as u64;
            let end = content
                .tensor_data_offset
                .checked_add(info.offset)
                .and_then(|start| start.checked_add(bytes));
            match end {
                Some(end) if end <= file_len => {}
                Some(end) => {
                    return Err(bad(format!(
                        "tensor `{name}` ends at byte {end} but the file has {file_len} bytes (truncated?)"
                    )))
                }
                None => {
                    return Err(bad(format!(
                        "tensor `{name}` has offset {} past the end of the {file_len}-byte file",
                        info.offset
                    )))
                }
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
            content,
            file_len,
        })
    }

    /// The file this was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// All metadata.
    pub fn metadata(&self) -> &HashMap<String, Value> {
        &self.content.metadata
    }

    /// The parsed candle content (tensor directory).
    pub fn content(&self) -> &Content {
        &self.content
    }

    fn missing(&self, key: &str) -> LlmError {
        LlmError::MissingKey {
            path: self.path.clone(),
            key: key.to_string(),
        }
    }

    /// A metadata value, or an error naming the key.
    pub fn get(&self, key: &str) -> Result<&Value> {
        self.content
            .metadata
            .get(key)
            .ok_or_else(|| self.missing(key))
    }

    /// A string value.
    pub fn get_str(&self, key: &str) -> Result<&str> {
        self.get(key)?
            .to_string()
            .map(|s| s.as_str())
            .map_err(|_| self.missing(key))
    }

    /// An unsigned integer value of any width.
    pub fn get_u64(&self, key: &str) -> Result<u64> {
        let v = self.get(key)?;
        match v {
            Value::U8(x) => Ok(*x as u64),
            Value::U16(x) => Ok(*x as u64),
            Value::U32(x) => Ok(*x as u64),
            Value::U64(x) => Ok(*x),
            Value::I8(x) if *x >= 0 => Ok(*x as u64),
            Value::I16(x) if *x >= 0 => Ok(*x as u64),
            Value::I32(x) if *x >= 0 => Ok(*x as u64),
            Value::I64(x) if *x >= 0 => Ok(*x as u64),
            _ => Err(self.missing(key)),
        }
    }

    /// An unsigned integer as usize.
    pub fn get_usize(&self, key: &str) -> Result<usize> {
        self.get_u64(key).map(|v| v as usize)
    }

    /// A float value (f32 or f64).
    pub fn get_f32(&self, key: &str) -> Result<f32> {
        match self.get(key)? {
            Value::F32(x) => Ok(*x),
            Value::F64(x) => Ok(*x as f32),
            _ => Err(self.missing(key)),
        }
    }

    /// An optional value: `None` when absent, an error when present with the wrong type.
    pub fn opt<T>(&self, key: &str, f: impl Fn(&Self, &str) -> Result<T>) -> Result<Option<T>> {
        if self.content.metadata.contains_key(key) {
            f(self, key).map(Some)
        } else {
            Ok(None)
        }
    }

    /// An array of strings.
    pub fn get_str_array(&self, key: &str) -> Result<Vec<String>> {
        let arr = self.get(key)?.to_vec().map_err(|_| self.missing(key))?;
        arr.iter()
            .map(|v| v.to_string().cloned().map_err(|_| self.missing(key)))
            .collect()
    }

    /// An array of numbers, read as f32.
    pub fn get_f32_array(&self, key: &str) -> Result<Vec<f32>> {
        let arr = self.get(key)?.to_vec().map_err(|_| self.missing(key))?;
        arr.iter()
            .map(|v| match v {
                Value::F32(x) => Ok(*x),
                Value::F64(x) => Ok(*x as f32),
                Value::I32(x) => Ok(*x as f32),
                Value::U32(x) => Ok(*x as f32),
                _ => Err(self.missing(key)),
            })
            .collect()
    }

    /// An array of integers, read as i64.
    pub fn get_i64_array(&self, key: &str) -> Result<Vec<i64>> {
        let arr = self.get(key)?.to_vec().map_err(|_| self.missing(key))?;
        arr.iter()
            .map(|v| match v {
                Value::I8(x) => Ok(*x as i64),
                Value::U8(x) => Ok(*x as i64),
                Value::I16(x) => Ok(*x as i64),
                Value::U16(x) => Ok(*x as i64),
                Value::I32(x) => Ok(*x as i64),
                Value::U32(x) => Ok(*x as i64),
                Value::I64(x) => Ok(*x),
                Value::U64(x) => Ok(*x as i64),
                _ => Err(self.missing(key)),
            })
            .collect()
    }

    /// Whether a tensor of this name exists.
    pub fn has_tensor(&self, name: &str) -> bool {
        self.content.tensor_infos.contains_key(name)
    }

    /// Reads one tensor (on the CPU) in its stored format.
    pub fn tensor(&mut self, name: &str) -> Result<QTensor> {
        if !self.has_tensor(name) {
            return Err(LlmError::BadTensor {
                path: self.path.clone(),
                name: name.to_string(),
                reason: "not in the file".into(),
            });
        }
        self.content
            .tensor(&mut self.file, name, &Device::Cpu)
            .map_err(|e| LlmError::BadTensor {
                path: self.path.clone(),
                name: name.to_string(),
                reason: candle_reason(&e),
            })
    }
}

/// A candle error's message without the backtrace candle appends when `RUST_BACKTRACE` is set.
pub(crate) fn candle_reason(e: &candle_core::Error) -> String {
    match e {
        candle_core::Error::WithBacktrace { inner, .. } => candle_reason(inner),
        e => e.to_string(),
    }
}

/// Walks the header's counts and string lengths before candle allocates anything, so a corrupt
/// length cannot ask for gigabytes.
fn precheck_header<R: Read + Seek>(r: &mut R, file_len: u64) -> std::result::Result<(), String> {
    let mut u32b = [0u8; 4];
    let mut u64b = [0u8; 8];
    r.read_exact(&mut u32b)
        .map_err(|_| "truncated header".to_string())?;
    let version = u32::from_le_bytes(u32b);
    if !(2..=3).contains(&version) {
        return Err(format!(
            "unsupported GGUF version {version} (expected 2 or 3)"
        ));
    }
    r.read_exact(&mut u64b)
        .map_err(|_| "truncated header".to_string())?;
    let n_tensors = u64::from_le_bytes(u64b);
    r.read_exact(&mut u64b)
        .map_err(|_| "truncated header".to_string())?;
    let n_kv = u64::from_le_bytes(u64b);
    // Every tensor info and key-value pair takes at least 8 bytes on disk.
    if n_tensors.saturating_add(n_kv).saturating_mul(8) > file_len {
        return Err(format!(
            "header claims {n_tensors} tensors and {n_kv} metadata entries, more than a {file_len}-byte file can hold"
        ));
    }
    let mut read_u64 = |r: &mut R, what: &str| -> std::result::Result<u64, String> {
        let mut b = [0u8; 8];
        r.read_exact(&mut b)
            .map_err(|_| format!("truncated while reading {what}"))?;
        Ok(u64::from_le_bytes(b))
    };
    let remaining = |r: &mut R| -> u64 {
        let pos = r.stream_position().unwrap_or(file_len);
        file_len.saturating_sub(pos)
    };
    fn skip<R: Seek>(r: &mut R, n: u64) -> std::result::Result<(), String> {
        r.seek(SeekFrom::Current(n as i64))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    fn value_size(t: u32) -> Option<u64> {
        Some(match t {
            0 | 1 | 7 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            10..=12 => 8,
            _ => return None,
        })
    }
    for i in 0..n_kv {
        let klen = read_u64(r, "a metadata key length")?;
        if klen > remaining(r) || klen > 1 << 16 {
            return Err(format!(
                "metadata entry {i}: key length {klen} is out of range"
            ));
        }
        let mut key = vec![0u8; klen as usize];
        r.read_exact(&mut key)
            .map_err(|_| format!("metadata entry {i}: truncated key"))?;
        let mut tb = [0u8; 4];
        r.read_exact(&mut tb)
            .map_err(|_| format!("metadata entry {i}: truncated"))?;
        let t = u32::from_le_bytes(tb);
        if key == b"general.alignment" {
            check_alignment(r, t)?;
        }
        check_value(r, t, i, &mut read_u64, &remaining, 0)?;
    }
    /// `general.alignment` places the tensor data: candle divides by it, and llama.cpp
    /// requires a power of two. Leaves the reader where it was.
    fn check_alignment<R: Read + Seek>(r: &mut R, t: u32) -> std::result::Result<(), String> {
        let size = match t {
            0 | 1 => 1,
            2 | 3 => 2,
            4 | 5 => 4,
            _ => return Ok(()), // not an integer candle reads: the default alignment
        };
        let mut b = [0u8; 4];
        r.read_exact(&mut b[..size])
            .map_err(|_| "truncated `general.alignment`".to_string())?;
        r.seek(SeekFrom::Current(-(size as i64)))
            .map_err(|e| e.to_string())?;
        let v: i64 = match t {
            0 => i64::from(b[0]),
            1 => i64::from(b[0] as i8),
            2 => i64::from(u16::from_le_bytes([b[0], b[1]])),
            3 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            4 => i64::from(u32::from_le_bytes(b)),
            _ => i64::from(i32::from_le_bytes(b)),
        };
        // Candle ignores a negative value (the default alignment applies).
        if v < 0 || (v as u64).is_power_of_two() {
            Ok(())
        } else {
            Err(format!(
                "`general.alignment` = {v}: the tensor data alignment must be a power of two"
            ))
        }
    }
    fn check_value<R: Read + Seek>(
        r: &mut R,
        t: u32,
        i: u64,
        read_u64: &mut impl FnMut(&mut R, &str) -> std::result::Result<u64, String>,
        remaining: &impl Fn(&mut R) -> u64,
        depth: u32,
    ) -> std::result::Result<(), String> {
        if let Some(sz) = value_size(t) {
            if sz > remaining(r) {
                return Err(format!("metadata entry {i}: truncated value"));
            }
            return skip(r, sz);
        }
        match t {
            8 => {
                let len = read_u64(r, "a string length")?;
                if len > remaining(r) {
                    return Err(format!(
                        "metadata entry {i}: string length {len} exceeds the file"
                    ));
                }
                skip(r, len)
            }
            9 if depth == 0 => {
                let mut tb = [0u8; 4];
                r.read_exact(&mut tb)
                    .map_err(|_| format!("metadata entry {i}: truncated array"))?;
                let et = u32::from_le_bytes(tb);
                let n = read_u64(r, "an array length")?;
                if let Some(sz) = value_size(et) {
                    if n.saturating_mul(sz) > remaining(r) {
                        return Err(format!(
                            "metadata entry {i}: array of {n} items exceeds the file"
                        ));
                    }
                    return skip(r, n * sz);
                }
                if n.saturating_mul(8) > remaining(r) {
                    return Err(format!(
                        "metadata entry {i}: array of {n} items exceeds the file"
                    ));
                }
                for _ in 0..n {
                    check_value(r, et, i, read_u64, remaining, depth + 1)?;
                }
                Ok(())
            }
            _ => Err(format!("metadata entry {i}: unknown value type {t}")),
        }
    }
    for i in 0..n_tensors {
        let nlen = read_u64(r, "a tensor name length")?;
        if nlen > remaining(r) || nlen > 1 << 16 {
            return Err(format!(
                "tensor info {i}: name length {nlen} is out of range"
            ));
        }
        skip(r, nlen)?;
        let mut nd = [0u8; 4];
        r.read_exact(&mut nd)
            .map_err(|_| format!("tensor info {i}: truncated"))?;
        let n_dims = u32::from_le_bytes(nd);
        if n_dims > 4 {
            return Err(format!("tensor info {i}: {n_dims} dimensions (at most 4)"));
        }
        let mut elems: u64 = 1;
        for _ in 0..n_dims {
            let d = read_u64(r, "a tensor dimension")?;
            elems = elems.saturating_mul(d.max(1));
        }
        if elems > file_len.saturating_mul(4) {
            return Err(format!(
                "tensor info {i}: {elems} elements cannot fit the file"
            ));
        }
        let mut tb = [0u8; 4];
        r.read_exact(&mut tb)
            .map_err(|_| format!("tensor info {i}: truncated"))?;
        read_u64(r, "a tensor offset")?;
    }
    Ok(())
}
