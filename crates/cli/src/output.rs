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
