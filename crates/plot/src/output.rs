//! Atomic output: every file is drawn into a temporary file beside its target and renamed into
//! place only once it is complete.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{DrawResult, PlotError};

/// One output file on its way: `<stem>.<ext>`, drawn as `.<stem name>.<pid>-<n>.tmp.<ext>` in the
/// same directory. The temporary keeps the real extension last because plotters picks the
/// bitmap encoder from it. Dropping a `Staged` that was not committed removes the temporary.
pub(crate) struct Staged {
    target: PathBuf,
    tmp: PathBuf,
    committed: bool,
}

impl Staged {
    /// Plans `<stem>.<ext>`; fails if `stem` does not end in a file name.
    pub(crate) fn new(stem: &Path, ext: &str) -> Result<Self, PlotError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = stem.file_name().ok_or_else(|| {
            PlotError(format!("cannot write {}: the path does not end in a file name", stem.display()))
        })?;
        let mut target_name = name.to_os_string();
        target_name.push(format!(".{ext}"));
        let mut tmp_name = OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}-{}.tmp.{ext}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        Ok(Self { target: stem.with_file_name(target_name), tmp: stem.with_file_name(tmp_name), committed: false })
    }

    /// Runs `draw` on the temporary path. An error is reported against the target file.
    pub(crate) fn draw(&self, draw: impl FnOnce(&Path) -> DrawResult) -> Result<(), PlotError> {
        draw(&self.tmp).map_err(|e| PlotError(format!("cannot write {}: {e}", self.target.display())))
    }

    /// Renames the finished temporary into place and returns the target path.
    pub(crate) fn commit(mut self) -> Result<PathBuf, PlotError> {
        fs::rename(&self.tmp, &self.target)
            .map_err(|e| PlotError(format!("cannot move the finished file into {}: {e}", self.target.display())))?;
        self.committed = true;
        Ok(std::mem::take(&mut self.target))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            // The temporary may never have been created; either way it must not stay behind.
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_the_stem_and_end_in_the_extension() {
        let staged = Staged::new(Path::new("out/fig.v2"), "png").unwrap();
        assert_eq!(staged.target, Path::new("out/fig.v2.png"));
        let tmp = staged.tmp.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(tmp.starts_with(".fig.v2.") && tmp.ends_with(".tmp.png"), "{tmp}");
        assert_eq!(staged.tmp.parent(), Some(Path::new("out")));
    }

    #[test]
    fn a_stem_without_file_name_is_an_error() {
        let err = Staged::new(Path::new(".."), "svg").err().unwrap();
        assert!(err.0.contains(".."), "{err}");
    }
}
