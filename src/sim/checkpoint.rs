//! The checkpoint a run writes after every step, atomically (a temporary file, synced, then
//! renamed over the old one), and `resume` reads back.
//!
//! Layout: a magic line, the JSON state's length (u64 LE) and text, the event log's length
//! at that step (u64 LE), the number of memory streams (u32 LE), then each stream's length
//! (u64 LE) and bytes in the memory module's own format.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::error::{io_err, Result, SimError};
use super::tick::SimState;
use crate::memory::MemoryStream;

const MAGIC: &[u8] = b"HUMANOID-CHECKPOINT 1\n";

/// What a checkpoint holds.
pub struct Checkpoint {
    pub state: SimState,
    pub memories: Vec<MemoryStream>,
    /// Bytes of `events.jsonl` written up to this step.
    pub events_len: u64,
}

/// Writes a checkpoint to `path` atomically.
pub fn write(
    path: &Path,
    state: &SimState,
    memories: &[MemoryStream],
    events_len: u64,
) -> Result<()> {
    let mut buf = Vec::with_capacity(1 << 20);
    buf.extend_from_slice(MAGIC);
    let json = serde_json::to_vec(state).map_err(|e| SimError::Invalid(e.to_string()))?;
    buf.extend_from_slice(&(json.len() as u64).to_le_bytes());
    buf.extend_from_slice(&json);
    buf.extend_from_slice(&events_len.to_le_bytes());
    buf.extend_from_slice(&(memories.len() as u32).to_le_bytes());
    for m in memories {
        let mut bytes = Vec::new();
        m.write_to(&mut bytes)?;
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(&bytes);
    }
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp).map_err(io_err(&tmp))?;
        f.write_all(&buf).map_err(io_err(&tmp))?;
        f.sync_all().map_err(io_err(&tmp))?;
    }
    std::fs::rename(&tmp, path).map_err(io_err(path))?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(SimError::Corrupt {
                path: self.path.to_path_buf(),
                reason: format!("truncated checkpoint: {what} missing at byte {}", self.pos),
            }),
        }
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    fn len(&mut self, what: &str) -> Result<usize> {
        let v = self.u64(what)?;
        usize::try_from(v)
            .ok()
            .filter(|&v| v <= self.bytes.len())
            .ok_or_else(|| SimError::Corrupt {
                path: self.path.to_path_buf(),
                reason: format!("{what}: length {v} is larger than the file"),
            })
    }
}

/// Reads a checkpoint; a truncated or corrupt file is an error naming what is wrong.
pub fn read(path: &Path) -> Result<Checkpoint> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let mut r = Reader {
        bytes: &bytes,
        pos: 0,
        path,
    };
    if r.take(MAGIC.len(), "header")? != MAGIC {
        return Err(SimError::Corrupt {
            path: path.to_path_buf(),
            reason: "not a humanoid checkpoint (wrong header)".into(),
        });
    }
    let n = r.len("state length")?;
    let json = r.take(n, "state")?;
    let state: SimState = serde_json::from_slice(json).map_err(|e| SimError::Corrupt {
        path: path.to_path_buf(),
        reason: format!("state: {e}"),
    })?;
    let events_len = r.u64("event log length")?;
    let count = u32::from_le_bytes(
        r.take(4, "memory stream count")?
            .try_into()
            .unwrap_or([0; 4]),
    ) as usize;
    if count != state.agents.len() {
        return Err(SimError::Corrupt {
            path: path.to_path_buf(),
            reason: format!("{count} memory streams for {} agents", state.agents.len()),
        });
    }
    let mut memories = Vec::with_capacity(count);
    for i in 0..count {
        let n = r.len("memory stream length")?;
        let mut slice = r.take(n, "memory stream")?;
        let m = MemoryStream::read_from(&mut slice).map_err(|e| SimError::Corrupt {
            path: path.to_path_buf(),
            reason: format!("memory stream of agent {i}: {e}"),
        })?;
        memories.push(m);
    }
    Ok(Checkpoint {
        state,
        memories,
        events_len,
    })
}
