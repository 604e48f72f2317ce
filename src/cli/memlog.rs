//! `HUMANOID_MEM_LOG=FILE`: one CSV line per step with where the process's memory is (the
//! soak benchmark's accounting): resident set, the allocator's live and free heap, the
//! prefix cache's keys and values, and the memory streams' size.

use std::fs::File;
use std::io::Write;

use humanoid::llm::Engine;
use humanoid::sim::Sim;

/// An open memory log, or nothing when the variable is unset.
pub struct MemLog(Option<File>);

impl MemLog {
    /// Opens the file named by `HUMANOID_MEM_LOG` and writes the header (a file that cannot
    /// be created is reported once and the run goes on without it).
    pub fn from_env() -> Self {
        let Some(path) = std::env::var_os("HUMANOID_MEM_LOG") else {
            return Self(None);
        };
        match File::create(&path) {
            Ok(mut f) => {
                let _ = writeln!(
                    f,
                    "step,rss_kib,heap_live_kib,heap_free_kib,prefix_cache_kib,memory_nodes"
                );
                Self(Some(f))
            }
            Err(e) => {
                tracing::warn!("HUMANOID_MEM_LOG {}: {e}", path.to_string_lossy());
                Self(None)
            }
        }
    }

    /// Appends one sample after step `step`.
    pub fn sample(&mut self, step: u64, engine: &Engine, sim: &Sim) {
        let Some(f) = &mut self.0 else { return };
        let (rss, _) = super::memory_usage();
        let (live, free) = heap_bytes();
        let nodes: usize = sim.memories.iter().map(|m| m.len()).sum();
        let _ = writeln!(
            f,
            "{step},{},{},{},{},{nodes}",
            rss / 1024,
            live / 1024,
            free / 1024,
            engine.prefix_cache_bytes() / 1024
        );
    }
}

/// Bytes the allocator has handed out and holds free (glibc; zeros elsewhere).
fn heap_bytes() -> (u64, u64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let m = unsafe { libc::mallinfo2() };
        ((m.uordblks + m.hblkhd) as u64, m.fordblks as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        (0, 0)
    }
}
