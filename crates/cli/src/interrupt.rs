//! Ctrl-C and SIGTERM, and the temporaries a command must not leave behind.
//!
//! The first signal sets [`crate::INTERRUPTED`]: every command checks it at its next frame, its
//! next solve of a frozen-state study, its next run, table or figure, stops there, deletes its
//! temporaries as it unwinds and exits 130. A single solve cannot be cut short, so a second
//! signal (a frame that takes minutes) stops at once: the handler deletes every temporary
//! registered here (files being written, staging folders, unfinished parts, the folder lock), in
//! the reverse order of registration, and exits 130. A swap of finished folders is never cut in
//! two ([`uninterruptible`]).
//!
//! What a `kill -9` leaves (no handler runs) is swept by the next command into the same folder
//! ([`crate::output::FolderLock::acquire`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::INTERRUPTED;

/// What to delete on a forced exit.
#[derive(Debug, Clone)]
enum Kind {
    /// A file.
    File,
    /// A folder and everything in it.
    Dir,
    /// A folder, only if it is empty by then (an `--out` the command created).
    EmptyDir,
    /// A run's scratch folder `.partial`, only if no run in it finished (finished runs are kept
    /// for `--resume`).
    Partial,
    /// The hidden temporary files (`.NAME.tmp`, the figures' `.NAME.PID-N.tmp.EXT`) in a folder
    /// being written, and in its `paper/` folder.
    TmpIn,
}

static NEXT: AtomicU64 = AtomicU64::new(0);
static REGISTRY: Mutex<BTreeMap<u64, (PathBuf, Kind)>> = Mutex::new(BTreeMap::new());

/// Whether Ctrl-C or SIGTERM arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Installs the handler of Ctrl-C and SIGTERM for the command line (see the module docs).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if !INTERRUPTED.swap(true, Ordering::Relaxed) {
            eprintln!("\nstopping at the next frame; Ctrl-C again stops at once");
            return;
        }
        force_exit();
    });
}

/// Deletes every registered temporary and exits 130.
fn force_exit() -> ! {
    // Waits for a swap in progress: holding the lock, no new one starts.
    let registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    for (path, kind) in registry.values().rev() {
        remove(path, kind);
    }
    eprintln!("error: interrupted; stopped at once and removed the files being written");
    std::process::exit(130);
}

fn remove(path: &Path, kind: &Kind) {
    match kind {
        Kind::File => {
            let _ = std::fs::remove_file(path);
        }
        Kind::Dir => {
            let _ = std::fs::remove_dir_all(path);
        }
        Kind::EmptyDir => {
            let _ = std::fs::remove_dir(path);
        }
        Kind::Partial => {
            let finished = std::fs::read_dir(path)
                .map(|d| d.flatten().any(|e| e.path().join("run.json").exists()))
                .unwrap_or(false);
            if !finished {
                let _ = std::fs::remove_dir_all(path);
            }
        }
        Kind::TmpIn => {
            for dir in [path.to_path_buf(), path.join("paper")] {
                for tmp in temporaries_in(&dir) {
                    let _ = std::fs::remove_file(tmp);
                }
            }
        }
    }
}

/// Whether `name` is one of solverlab's hidden temporary files: `.NAME.tmp`, or a figure's
/// `.NAME.PID-N.tmp.EXT`.
pub fn is_temporary(name: &str) -> bool {
    name.starts_with('.') && (name.ends_with(".tmp") || name.contains(".tmp."))
}

/// The hidden temporary files directly in `dir`.
pub fn temporaries_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| is_temporary(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect()
}

/// A temporary registered for deletion on a forced exit; dropping it only unregisters it (the
/// owner deletes or keeps the thing itself).
#[must_use = "the registration ends when this is dropped"]
pub struct Temporary {
    id: u64,
}

impl Temporary {
    fn register(path: &Path, kind: Kind) -> Temporary {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        REGISTRY.lock().unwrap_or_else(|e| e.into_inner()).insert(id, (path.to_path_buf(), kind));
        Temporary { id }
    }

    /// A file being written.
    pub fn file(path: &Path) -> Temporary {
        Self::register(path, Kind::File)
    }

    /// A folder being built (a staging folder, a run's unfinished part).
    pub fn dir(path: &Path) -> Temporary {
        Self::register(path, Kind::Dir)
    }

    /// A folder this command created, deleted on a forced exit only if nothing is left in it.
    pub fn empty_dir(path: &Path) -> Temporary {
        Self::register(path, Kind::EmptyDir)
    }

    /// A run's `.partial` folder, deleted on a forced exit only if no run in it finished.
    pub fn partial(path: &Path) -> Temporary {
        Self::register(path, Kind::Partial)
    }

    /// The hidden temporaries written straight into folder `dir` (figures, the report).
    pub fn tmp_in(dir: &Path) -> Temporary {
        Self::register(dir, Kind::TmpIn)
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        REGISTRY.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

/// Runs `f` (a swap of folders: the earlier result moved aside, the new one moved into place)
/// with no forced exit in between.
pub fn uninterruptible<T>(f: impl FnOnce() -> T) -> T {
    let _held = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporaries_are_recognised_by_name() {
        for name in [".steps.csv.tmp", ".violation.4242-0.tmp.svg", ".report.html.tmp"] {
            assert!(is_temporary(name), "{name}");
        }
        for name in ["steps.csv", "tmp", ".partial", "a.tmp", ".results.solverlab-lock"] {
            assert!(!is_temporary(name), "{name}");
        }
    }

    /// A registration ends when its guard is dropped, whatever the order.
    #[test]
    fn registrations_end_with_their_guards() {
        let here = |p: &Path| REGISTRY.lock().unwrap().values().any(|(q, _)| q == p);
        let (a, b) = (Path::new("/nonexistent/solverlab-a"), Path::new("/nonexistent/solverlab-b"));
        let ga = Temporary::file(a);
        let gb = Temporary::dir(b);
        assert!(here(a) && here(b));
        drop(ga);
        assert!(!here(a) && here(b));
        drop(gb);
        assert!(!here(b));
    }
}
