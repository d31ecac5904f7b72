//! Files that appear whole or not at all.
//!
//! Every result file is written to a hidden temporary next to its destination and renamed into
//! place when complete, so a failed or interrupted run never leaves a half-written CSV and never
//! overwrites a good one with a broken one.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::interrupt::Temporary;

/// A file being written; [`AtomicFile::commit`] renames it into place, dropping it uncommitted
/// deletes the temporary. Every error names the file.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    writer: Option<BufWriter<File>>,
    _registered: Temporary,
}

/// An error about writing `path`, naming it.
fn naming(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display()))
}

impl AtomicFile {
    /// Starts writing `dest` (through `.NAME.tmp` in the same directory).
    pub fn create(dest: &Path) -> std::io::Result<Self> {
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dest.with_file_name(format!(".{name}.tmp"));
        let registered = Temporary::file(&tmp);
        let writer = BufWriter::new(File::create(&tmp).map_err(|e| naming(dest, e))?);
        Ok(Self { tmp, dest: dest.to_path_buf(), writer: Some(writer), _registered: registered })
    }

    /// Flushes, syncs and renames into place.
    pub fn commit(mut self) -> std::io::Result<()> {
        let writer = self.writer.take().expect("not yet committed");
        let done = writer
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|file| file.sync_all())
            .and_then(|_| std::fs::rename(&self.tmp, &self.dest));
        if done.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        done.map_err(|e| naming(&self.dest, e))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        full_disk::check(&self.dest, buf.len()).map_err(|e| naming(&self.dest, e))?;
        self.writer.as_mut().expect("not yet committed").write(buf).map_err(|e| naming(&self.dest, e))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.as_mut().expect("not yet committed").flush().map_err(|e| naming(&self.dest, e))
    }
}

/// A full disk, simulated for the tests. In builds with debug assertions (`cargo test`, `cargo
/// build`; never a release build), `SOLVERLAB_FAIL_AFTER_BYTES=N` makes every result file
/// written through [`AtomicFile`] fail with "no space left" once `N` bytes in all have been
/// written, and `SOLVERLAB_FAIL_PATHS=TEXT` limits the count (and the failure) to the files
/// whose path contains `TEXT` (for example `staging`, the folder a result is assembled in).
mod full_disk {
    use std::path::Path;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    struct Budget {
        left: AtomicU64,
        paths: Option<String>,
    }

    fn budget() -> Option<&'static Budget> {
        static BUDGET: OnceLock<Option<Budget>> = OnceLock::new();
        BUDGET
            .get_or_init(|| {
                let bytes = std::env::var("SOLVERLAB_FAIL_AFTER_BYTES").ok()?.trim().parse().ok()?;
                Some(Budget { left: AtomicU64::new(bytes), paths: std::env::var("SOLVERLAB_FAIL_PATHS").ok() })
            })
            .as_ref()
    }

    /// Takes `n` bytes of writing to `path` from the budget, or fails as a full disk would.
    pub fn check(path: &Path, n: usize) -> std::io::Result<()> {
        if !cfg!(debug_assertions) {
            return Ok(());
        }
        let Some(b) = budget() else { return Ok(()) };
        if b.paths.as_ref().is_some_and(|p| !path.to_string_lossy().contains(p.as_str())) {
            return Ok(());
        }
        let n = n as u64;
        match b.left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(n)) {
            Ok(_) => Ok(()),
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "no space left on device (simulated: SOLVERLAB_FAIL_AFTER_BYTES)",
            )),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A CSV file written atomically.
pub struct CsvOut {
    writer: csv::Writer<AtomicFile>,
    rows: u64,
}

impl CsvOut {
    /// Creates `dest` with the given header.
    pub fn create(dest: &Path, header: &[&str]) -> std::io::Result<Self> {
        let mut writer = csv::Writer::from_writer(AtomicFile::create(dest)?);
        writer.write_record(header)?;
        Ok(Self { writer, rows: 0 })
    }

    /// Writes one row.
    pub fn row<I, S>(&mut self, fields: I) -> std::io::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        self.rows += 1;
        self.writer.write_record(fields).map_err(std::io::Error::other)
    }

    /// Rows written so far (the header not counted).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Finishes the file and renames it into place.
    pub fn commit(self) -> std::io::Result<()> {
        let inner = self.writer.into_inner().map_err(|e| std::io::Error::other(e.to_string()))?;
        inner.commit()
    }
}

/// Writes `text` to `dest` atomically.
pub fn write_atomic(dest: &Path, text: &str) -> std::io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.write_all(text.as_bytes())?;
    f.commit()
}

/// FNV-1a (64 bit) of `bytes`, in hex: the content hash of a run's rows in a table, of a scene
/// file, of a resolved scene.
pub fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The civil date (UTC) `days` after 1970-01-01, as `YYYY-MM-DD` (H. Hinnant's civil-from-days).
pub fn date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Formats a float for CSV: shortest representation that reads back to the same bits.
pub fn num(x: f64) -> String {
    format!("{x:?}")
}

/// One writer per output folder: a lock file `.NAME.solverlab-lock` beside the folder `NAME`
/// (beside, so that it outlives the folder's replacement), holding the writer's host and
/// process id; removed when the guard is dropped (at the end of the command, on an error or on
/// Ctrl-C). A second command into the same folder stops at once naming the holder. A lock left
/// by a process that no longer runs on this host (`kill -9`) is taken over with a note. The same
/// process may take a lock it holds again (`run --report`): the inner guard leaves it in place.
pub struct FolderLock {
    path: PathBuf,
    /// Whether this guard took the lock (and removes it), rather than the process holding it.
    owner: bool,
    _registered: Option<(Temporary, Temporary)>,
}

/// This machine's name, as the lock records it.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Whether process `pid` runs on this host; where that cannot be told (no `/proc`), it is
/// taken to run.
fn running(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new(&format!("/proc/{pid}")).exists()
}

impl FolderLock {
    /// The lock file of folder `out`.
    pub fn path_of(out: &Path) -> PathBuf {
        let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
        out.with_file_name(format!(".{name}.solverlab-lock"))
    }

    /// Takes the lock of `out`, or says who holds it; then removes what an earlier writer that
    /// was killed left behind ([`sweep`]).
    pub fn acquire(out: &Path) -> Result<FolderLock, String> {
        let path = Self::path_of(out);
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| format!("--out: cannot create {}: {e}", parent.display()))?;
        }
        let (host, me) = (host_name(), std::process::id());
        for _ in 0..3 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    let registered = (Temporary::file(&path), Temporary::tmp_in(out));
                    let _ = writeln!(f, "{host} {me}");
                    sweep(out);
                    return Ok(FolderLock { path, owner: true, _registered: Some(registered) });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let mut words = text.split_whitespace();
                    let (holder, pid) =
                        (words.next().unwrap_or("?").to_string(), words.next().and_then(|p| p.parse().ok()));
                    match pid {
                        Some(pid) if holder == host && pid == me => {
                            return Ok(FolderLock { path, owner: false, _registered: None })
                        }
                        Some(pid) if holder == host && !running(pid) => {
                            eprintln!(
                                "note: {} was locked by process {pid}, which no longer runs; taking it over",
                                out.display()
                            );
                            let _ = std::fs::remove_file(&path);
                        }
                        Some(pid) => {
                            return Err(format!(
                                "--out: {} is being written by process {pid} on {holder} (lock file {}); wait for it \
                                 to finish or give another --out",
                                out.display(),
                                path.display()
                            ))
                        }
                        // Being written this very moment by its creator: look again.
                        None => std::thread::sleep(std::time::Duration::from_millis(50)),
                    }
                }
                Err(e) => return Err(format!("--out: cannot create the lock file {}: {e}", path.display())),
            }
        }
        Err(format!("--out: {} is locked (lock file {}) and the lock cannot be read", out.display(), path.display()))
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        if self.owner {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `.NAME.WHAT-PID` beside the folder `out`: its staging folder (`staging`) and the place the
/// earlier result waits while the new one is moved in (`old`).
pub fn sibling(out: &Path, what: &str) -> PathBuf {
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    out.with_file_name(format!(".{name}.{what}-{}", std::process::id()))
}

/// Removes what a writer of `out` that was killed (`kill -9`, a lost node: no handler ran) left
/// behind, with a note: staging folders beside `out`, hidden temporary files in it, in its
/// `paper/` folder and in the parts of an unfinished run. Called with the folder's lock held, so
/// that nothing else is writing them. An earlier result caught in the middle of its swap (moved
/// aside, `out` missing) is moved back into place.
pub fn sweep(out: &Path) {
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let ours = |entry: &str, what: &str| {
        entry
            .strip_prefix(&format!(".{name}.{what}-"))
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut removed = Vec::new();
    let siblings: Vec<PathBuf> =
        std::fs::read_dir(&parent).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    for path in &siblings {
        let entry = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if ours(&entry, "old") && !out.exists() && std::fs::rename(path, out).is_ok() {
            eprintln!(
                "note: {} was moved aside by a process that was stopped while replacing it; moved it back",
                out.display()
            );
        }
    }
    for path in &siblings {
        let entry = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if (ours(&entry, "staging") || ours(&entry, "old")) && std::fs::remove_dir_all(path).is_ok() {
            removed.push(path.clone());
        }
    }
    let mut dirs = vec![out.to_path_buf(), out.join("paper")];
    if let Ok(parts) = std::fs::read_dir(out.join(crate::assemble::PARTIAL)) {
        dirs.extend(parts.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    for dir in dirs {
        for tmp in crate::interrupt::temporaries_in(&dir) {
            if std::fs::remove_file(&tmp).is_ok() {
                removed.push(tmp);
            }
        }
    }
    if !removed.is_empty() {
        let list: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "note: removed {} temporar{} left by an earlier writer of {} that was stopped (killed?): {}",
            removed.len(),
            if removed.len() == 1 { "y" } else { "ies" },
            out.display(),
            list.join(", ")
        );
    }
}
