//! One process per run directory: `run` and `resume` hold an advisory lock on `DIR/run.lock`
//! while they work. The operating system releases it when the process ends, killed or not,
//! so a killed run can always be resumed and two processes never write one run.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::error::{io_err, Result, SimError};

/// The lock file's name inside a run directory.
pub const LOCK_FILE: &str = "run.lock";

/// A held run lock (released on drop or process exit).
#[derive(Debug)]
pub struct RunLock {
    _file: File,
    path: PathBuf,
}

impl RunLock {
    /// Takes the lock of run directory `dir` (which must exist), or fails with
    /// [`SimError::Locked`] naming the process that holds it.
    pub fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io_err(&path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                file.read_to_string(&mut holder).ok();
                return Err(SimError::Locked {
                    dir: dir.to_path_buf(),
                    holder: holder.trim().to_string(),
                });
            }
            Err(TryLockError::Error(e)) => return Err(io_err(&path)(e)),
        }
        // Who holds it, for the message another process would show.
        file.set_len(0).map_err(io_err(&path))?;
        file.rewind().map_err(io_err(&path))?;
        write!(file, "pid {}", std::process::id()).map_err(io_err(&path))?;
        Ok(Self { _file: file, path })
    }

    /// Whether some process holds the lock of `dir` now.
    pub fn is_held(dir: &Path) -> bool {
        let Ok(file) = File::open(dir.join(LOCK_FILE)) else {
            return false;
        };
        matches!(file.try_lock_shared(), Err(TryLockError::WouldBlock))
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_run_is_refused_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path()).unwrap();
        assert!(RunLock::is_held(dir.path()));
        let e = RunLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(e.contains("another process") && e.contains("pid"), "{e}");
        drop(first);
        assert!(!RunLock::is_held(dir.path()));
        RunLock::acquire(dir.path()).unwrap();
    }
}
