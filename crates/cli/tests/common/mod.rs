//! What the CLI's integration tests share: running the binary and a fresh temporary folder.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `solverlab ARGS…` to the end.
pub fn solverlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_solverlab")).args(args).output().expect("runs")
}

/// A fresh, empty folder `solverlab-GROUP-PID-NAME` in the system's temporary folder, removed
/// with everything in it when the test that made it passes (a failing test leaves it to look at).
pub fn tmp(group: &str, name: &str) -> TmpDir {
    let d = std::env::temp_dir().join(format!("solverlab-{group}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TmpDir(d)
}

/// A temporary folder's path ([`tmp`], [`absent`]), removed on drop unless the thread panics.
pub struct TmpDir(PathBuf);

impl std::ops::Deref for TmpDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TmpDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TmpDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// What a run printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A path as text.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Like [`tmp`], but the folder does not exist yet (for commands that must create it, or must
/// write nothing).
pub fn absent(group: &str, name: &str) -> TmpDir {
    let d = tmp(group, name);
    std::fs::remove_dir(&d).unwrap();
    d
}

/// A `simulate` folder in `dir` with `frames` recorded frames of `particles` particles: the
/// folder of a short chain run (meta.json, steps.csv) with positions.csv replaced by a generated
/// one, written row by row, and no sticks.
pub fn generated_folder(dir: &Path, frames: u64, particles: u64) {
    use std::io::Write;
    let o = solverlab(&["simulate", "--scene", "chain", "--frames", "2", "--no-figures", "--out", s(dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("positions.csv")).unwrap());
    writeln!(f, "frame,particle,x,y,z").unwrap();
    for frame in 0..frames {
        for p in 0..particles {
            writeln!(f, "{frame},{p},{},{},0.0", p as f64 * 0.01, -(frame as f64) * 1e-3).unwrap();
        }
    }
    f.flush().unwrap();
    let _ = std::fs::remove_file(dir.join("sticks.csv"));
}
