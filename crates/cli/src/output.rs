//! Files that appear whole or not at all.
//!
//! Every result file is written to a hidden temporary next to its destination and renamed into
//! place when complete, so a failed or interrupted run never leaves a half-written CSV and never
//! overwrites a good one with a broken one.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file being written; [`AtomicFile::commit`] renames it into place, dropping it uncommitted
/// deletes the temporary.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `dest` (through `.NAME.tmp` in the same directory).
    pub fn create(dest: &Path) -> std::io::Result<Self> {
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dest.with_file_name(format!(".{name}.tmp"));
        let writer = BufWriter::new(File::create(&tmp)?);
        Ok(Self { tmp, dest: dest.to_path_buf(), writer: Some(writer) })
    }

    /// Flushes, syncs and renames into place.
    pub fn commit(mut self) -> std::io::Result<()> {
        let writer = self.writer.take().expect("not yet committed");
        let file = writer.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&self.tmp, &self.dest)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer.as_mut().expect("not yet committed").write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.as_mut().expect("not yet committed").flush()
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

/// Formats a float for CSV: shortest representation that reads back to the same bits.
pub fn num(x: f64) -> String {
    format!("{x:?}")
}

/// One writer per output folder: a lock file `.NAME.solverlab-lock` beside the folder `NAME`
/// (beside, so that it outlives the folder's replacement), holding the writer's host and
/// process id; removed when the guard is dropped (at the end of the command, on an error or on
/// Ctrl-C). A second command into the same folder stops at once naming the holder. A lock left
/// by a process that no longer runs on this host (`kill -9`) is taken over with a note.
pub struct FolderLock {
    path: PathBuf,
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

    /// Takes the lock of `out`, or says who holds it.
    pub fn acquire(out: &Path) -> Result<FolderLock, String> {
        let path = Self::path_of(out);
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| format!("--out: cannot create {}: {e}", parent.display()))?;
        }
        let (host, me) = (host_name(), std::process::id());
        for _ in 0..3 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    let _ = writeln!(f, "{host} {me}");
                    return Ok(FolderLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let mut words = text.split_whitespace();
                    let (holder, pid) =
                        (words.next().unwrap_or("?").to_string(), words.next().and_then(|p| p.parse().ok()));
                    match pid {
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
        let _ = std::fs::remove_file(&self.path);
    }
}
