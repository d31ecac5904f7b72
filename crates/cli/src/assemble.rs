//! An experiment's folder from finished runs: resuming an interrupted run and merging shards.
//!
//! While `solverlab run` works, each finished run is a part folder `DIR/.partial/run-N/` holding
//! that run's rows of every table and its `run.json`, written last. When the runs are done,
//! [`assemble`] concatenates, table by table and in run order, the rows of every run from the
//! sources that hold them: parts, and (with `--resume`, or for `merge`) earlier folders, split by
//! their `run` column. Every table's rows are copied byte for byte, so a folder assembled from
//! shards or from an interrupted and resumed run equals one written in a single go, apart from
//! the timing columns and the provenance in meta.json.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::interrupt::{self, Temporary};
use crate::output::{digest, sibling, write_atomic, AtomicFile};
use crate::results::{this_commit, Meta};
use crate::spec::Experiment;
use crate::CliError;

/// The scratch folder of an unfinished run, inside its output folder.
pub const PARTIAL: &str = ".partial";

/// What an unfinished run is: written to `DIR/.partial/plan.json` when it starts.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Plan {
    experiment: String,
    commit: String,
    /// `(I, N)` for `--shard I/N`.
    shard: Option<(usize, usize)>,
}

/// A folder that holds finished runs: a part (one run) or an assembled folder (several).
#[derive(Debug)]
pub struct Source {
    dir: PathBuf,
    /// Each run's meta.json entry, by run index.
    runs: BTreeMap<usize, serde_json::Value>,
}

impl Source {
    /// A part folder; `None` unless its `run.json` exists (the part is finished).
    fn part(dir: &Path) -> Result<Option<Source>, String> {
        let path = dir.join("run.json");
        let Ok(text) = std::fs::read_to_string(&path) else { return Ok(None) };
        let entry: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let run = entry["run"].as_u64().ok_or_else(|| format!("{}: no run index", path.display()))? as usize;
        Ok(Some(Source { dir: dir.to_path_buf(), runs: BTreeMap::from([(run, entry)]) }))
    }

    /// An assembled folder with its meta.json.
    fn folder(dir: &Path, meta: &Meta) -> Result<Source, String> {
        let mut runs = BTreeMap::new();
        for entry in &meta.runs {
            let run =
                entry["run"].as_u64().ok_or_else(|| format!("{}: meta.json: a run without an index", dir.display()))?;
            runs.insert(run as usize, entry.clone());
        }
        Ok(Source { dir: dir.to_path_buf(), runs })
    }

    /// The run indices it holds.
    pub fn runs(&self) -> impl Iterator<Item = usize> + '_ {
        self.runs.keys().copied()
    }
}

/// A CSV file's header line and its rows grouped by run (its first column), as raw bytes with
/// their count.
struct Split {
    header: Vec<u8>,
    rows: BTreeMap<usize, (Vec<u8>, u64)>,
}

/// The row count and content hash of every table of a part folder (one run), for its
/// `run.json`: `{"steps.csv": {"rows": N, "hash": "…"}, …}`. `merge` and `--resume` check them.
pub fn table_records(dir: &Path) -> Result<serde_json::Value, String> {
    let mut out = serde_json::Map::new();
    let mut names = csv_names(dir);
    names.sort();
    for name in names {
        let split = split(&dir.join(&name))?;
        let (bytes, rows) = split.rows.values().fold((Vec::new(), 0u64), |(mut b, n), (r, k)| {
            b.extend_from_slice(r);
            (b, n + k)
        });
        out.insert(name, serde_json::json!({ "rows": rows, "hash": digest(&bytes) }));
    }
    Ok(serde_json::Value::Object(out))
}

fn split(path: &Path) -> Result<Split, String> {
    let bad = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let data = std::fs::read(path).map_err(|e| bad(&e))?;
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(&data[..]);
    reader.byte_headers().map_err(|e| bad(&e))?;
    let mut starts: Vec<(usize, usize)> = Vec::new();
    let mut record = csv::ByteRecord::new();
    loop {
        let at = reader.position().byte() as usize;
        if !reader.read_byte_record(&mut record).map_err(|e| bad(&e))? {
            break;
        }
        let run = std::str::from_utf8(record.get(0).unwrap_or_default())
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .ok_or_else(|| bad(&format!("line {}: the first column is not a run index", starts.len() + 2)))?;
        starts.push((at, run));
    }
    let header_end = starts.first().map_or(data.len(), |s| s.0);
    let mut rows: BTreeMap<usize, (Vec<u8>, u64)> = BTreeMap::new();
    for (k, &(at, run)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(data.len(), |s| s.0);
        let entry = rows.entry(run).or_default();
        entry.0.extend_from_slice(&data[at..end]);
        entry.1 += 1;
    }
    Ok(Split { header: data[..header_end].to_vec(), rows })
}

fn csv_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".csv") && !n.starts_with('.'))
        .collect()
}

/// Checks each run's rows in every table against the row count and content hash its record
/// keeps (records without `tables`, from before they were kept, are taken as they are): a
/// table cut short, edited or deleted after its run finished is refused, naming the folder, the
/// run and the table.
fn verify(sources: &[&Source], owner: &BTreeMap<usize, usize>) -> Result<(), CliError> {
    for (&run, &k) in owner {
        let source = sources[k];
        let Some(tables) = source.runs[&run]["tables"].as_object() else { continue };
        let part = source.dir.parent().and_then(Path::file_name).is_some_and(|n| n == PARTIAL);
        let redo = match part {
            true => format!("delete {} and run again with --resume to redo it", source.dir.display()),
            false => "run that shard (or folder) again".to_string(),
        };
        let refuse = |what: String| {
            CliError::Input(format!(
                "run {run} in {}: {what}; the folder was changed after the run finished: {redo}",
                source.dir.display()
            ))
        };
        for (name, record) in tables {
            let path = source.dir.join(name);
            if !path.exists() {
                return Err(refuse(format!("{name} is missing")));
            }
            let split = split(&path).map_err(|e| refuse(format!("{name} cannot be read: {e}")))?;
            let (bytes, rows) = split.rows.get(&run).map_or((&[][..], 0), |(b, n)| (&b[..], *n));
            let (want_rows, want_hash) = (record["rows"].as_u64().unwrap_or(0), record["hash"].as_str().unwrap_or(""));
            if rows != want_rows {
                return Err(refuse(format!("{name} holds {rows} rows of it where its record says {want_rows}")));
            }
            if digest(bytes) != want_hash {
                return Err(refuse(format!("{name}: its rows differ from those it wrote (content hash)")));
            }
        }
    }
    Ok(())
}

/// The scene file a run's record says it read, with its content hash (records of builtin
/// scenes, and those from before the hash was kept, have none).
fn scene_source(entry: &serde_json::Value) -> Option<(&str, &str)> {
    Some((entry["scene_source"]["file"].as_str()?, entry["scene_source"]["hash"].as_str()?))
}

/// Refuses shards whose runs read one scene file with different contents: the file was edited
/// between shards, so their runs simulated different scenes under one name.
fn same_scene_files(sources: &[Source]) -> Result<(), CliError> {
    let mut first: BTreeMap<&str, (&str, &Path, usize)> = BTreeMap::new();
    for source in sources {
        for (&run, entry) in &source.runs {
            let Some((file, hash)) = scene_source(entry) else { continue };
            let (hash0, dir0, run0) = *first.entry(file).or_insert((hash, &source.dir, run));
            if hash != hash0 {
                return Err(CliError::Input(format!(
                    "merge: run {run} in {} read the scene file {file} with content hash {hash}, but run {run0} in {} \
                     read it with content hash {hash0}: the file was changed between shards; run the shards again \
                     with one version of it",
                    source.dir.display(),
                    dir0.display()
                )));
            }
        }
    }
    Ok(())
}

/// Refuses to keep a finished run of `source` whose scene file has changed since it ran: its
/// rows would not match the runs still to do.
fn unchanged_scene_files(source: &Source, exp: &Experiment, out: &Path) -> Result<(), CliError> {
    for (&run, entry) in &source.runs {
        let Some((file, hash)) = scene_source(entry) else { continue };
        let now = exp.runs.get(run).and_then(|r| r.scene_source.as_ref());
        if let Some(now) = now.filter(|now| now.file == file && now.hash != hash) {
            return Err(CliError::Input(format!(
                "--resume: run {run} in {} read the scene file {file} with content hash {hash}, and the file has \
                 changed since (content hash {}): the runs still to do would simulate another scene; restore the \
                 file, or start over without --resume (delete {}/{PARTIAL}) or into another --out",
                source.dir.display(),
                now.hash,
                out.display()
            )));
        }
    }
    Ok(())
}

/// Writes the folder `out` from `sources`: every table (the union of the sources' tables) with
/// each run's rows in run order, then `meta` with the runs' entries, and the experiment file.
/// A run held by two sources is an error, and so is a run whose rows do not match its record
/// ([`table_records`]); both are refused before anything is written.
pub fn assemble(sources: &[Source], out: &Path, mut meta: Meta, experiment_text: &str) -> Result<(), CliError> {
    let mut owner: BTreeMap<usize, usize> = BTreeMap::new();
    for (k, s) in sources.iter().enumerate() {
        for run in s.runs() {
            if let Some(other) = owner.insert(run, k) {
                return Err(CliError::Input(format!(
                    "run {run} is in both {} and {}",
                    sources[other].dir.display(),
                    s.dir.display()
                )));
            }
        }
    }
    verify(&sources.iter().collect::<Vec<_>>(), &owner)?;
    let io = CliError::Io;
    let names: BTreeSet<String> = sources.iter().flat_map(|s| csv_names(&s.dir)).collect();
    std::fs::create_dir_all(out).map_err(|e| io(format!("{}: {e}", out.display())))?;
    for name in &names {
        if interrupt::interrupted() {
            return Err(CliError::Interrupted(format!(
                "interrupted before {name}; nothing was changed in the results folder"
            )));
        }
        let splits: Vec<Option<Split>> = sources
            .iter()
            .map(|s| {
                let path = s.dir.join(name);
                path.exists().then(|| split(&path)).transpose()
            })
            .collect::<Result<_, _>>()
            .map_err(io)?;
        let mut headers = splits.iter().zip(sources).filter_map(|(s, src)| s.as_ref().map(|s| (&s.header, src)));
        let (header, first) = headers.next().expect("some source has the table");
        if let Some((_, other)) = headers.find(|(h, _)| *h != header) {
            return Err(CliError::Input(format!(
                "{name} has different columns in {} and {}",
                first.dir.display(),
                other.dir.display()
            )));
        }
        let mut file = AtomicFile::create(&out.join(name)).map_err(|e| io(format!("{}: {e}", out.display())))?;
        let mut bytes = header.clone();
        for (run, &k) in &owner {
            if let Some((rows, _)) = splits[k].as_ref().and_then(|s| s.rows.get(run)) {
                bytes.extend_from_slice(rows);
            }
        }
        use std::io::Write;
        file.write_all(&bytes).and_then(|_| file.commit()).map_err(|e| io(format!("{}/{name}: {e}", out.display())))?;
    }
    meta.runs = owner.iter().map(|(run, &k)| sources[k].runs[run].clone()).collect();
    meta.write(out).map_err(|e| io(format!("{}: {e}", out.display())))?;
    write_atomic(&out.join("experiment.toml"), experiment_text).map_err(|e| io(format!("{}: {e}", out.display())))
}

/// Refuses to make `out` a results folder if it holds other things: a folder that exists, is
/// not empty and has neither `meta.json`, `experiment.toml`, an unfinished run nor an exported
/// system (`system.json`) is not solverlab's, and [`assemble_whole`] (or [`swap_in`]) would
/// replace it.
pub fn check_replaceable(out: &Path) -> Result<(), CliError> {
    let Ok(mut entries) = std::fs::read_dir(out) else { return Ok(()) };
    let ours = ["meta.json", "experiment.toml", PARTIAL, "system.json"].iter().any(|f| out.join(f).exists());
    if ours || entries.next().is_none() {
        return Ok(());
    }
    Err(CliError::Input(format!(
        "--out: {} holds files and is not a solverlab results folder (no meta.json); results replace their folder \
         whole, so give a new folder or an earlier results folder",
        out.display()
    )))
}

/// [`assemble`] into a staging folder beside `out`, then swapped in whole ([`swap_in`]). A
/// failure or an interruption before the swap leaves `out` exactly as it was and removes the
/// staging folder.
pub fn assemble_whole(sources: &[Source], out: &Path, meta: Meta, experiment_text: &str) -> Result<(), CliError> {
    let staging = sibling(out, "staging");
    let _ = std::fs::remove_dir_all(&staging);
    let _registered = Temporary::dir(&staging);
    if let Err(e) = assemble(sources, &staging, meta, experiment_text) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    swap_in(&staging, out)
}

/// Moves the finished folder `staging` into the place of `out`: the earlier folder is moved
/// aside, the new one renamed into place, and the earlier one deleted (with every file of an
/// earlier result that this one does not write). Never cut in two by Ctrl-C; a failure leaves
/// `out` as it was and removes `staging`.
pub fn swap_in(staging: &Path, out: &Path) -> Result<(), CliError> {
    let old = sibling(out, "old");
    let io = |what: &str, e: std::io::Error| CliError::Io(format!("{}: cannot {what}: {e}", out.display()));
    interrupt::uninterruptible(|| {
        if out.exists() {
            if let Err(e) = std::fs::rename(out, &old) {
                let _ = std::fs::remove_dir_all(staging);
                return Err(io("move the earlier result aside", e));
            }
        }
        if let Err(e) = std::fs::rename(staging, out) {
            if old.exists() {
                let _ = std::fs::rename(&old, out);
            }
            let _ = std::fs::remove_dir_all(staging);
            return Err(io("move the new result into place", e));
        }
        Ok(())
    })?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// What an output folder already holds for a run of `exp`: the finished runs it can keep.
pub struct Previous {
    /// The folder an earlier run finished (with `--resume`), whose runs are kept.
    pub folder: Option<Source>,
    /// The runs already finished, in that folder or in finished parts.
    pub finished: BTreeSet<usize>,
}

/// Checks `out` before a run of `exp` (with `--shard` `shard`) and collects what it may keep.
///
/// Without `resume`, an unfinished run in `out` is refused (it would be lost); with it, the
/// finished runs of an earlier run of the same experiment file, commit and shard are kept, from
/// the parts of an interrupted run and from a folder it finished. Part folders that never
/// finished are removed.
pub fn previous(
    out: &Path,
    exp: &Experiment,
    shard: Option<(usize, usize)>,
    resume: bool,
) -> Result<Previous, CliError> {
    let partial = out.join(PARTIAL);
    let here = out.display();
    let refuse = |m: String| Err(CliError::Input(m));
    let mut prev = Previous { folder: None, finished: BTreeSet::new() };
    let mut kept: Vec<Source> = Vec::new();
    let plan = Plan { experiment: exp.file.name.clone(), commit: this_commit().into(), shard };
    let describe =
        |s: Option<(usize, usize)>| s.map_or("the whole experiment".to_string(), |(i, n)| format!("shard {i}/{n}"));
    if partial.exists() {
        let done = std::fs::read_dir(&partial)
            .map(|d| d.filter(|e| e.as_ref().is_ok_and(|e| e.path().join("run.json").exists())).count())
            .unwrap_or(0);
        if !resume {
            return refuse(format!(
                "{here} holds an unfinished run ({done} runs finished, in {here}/{PARTIAL}); continue it with \
                 --resume, or delete {here}/{PARTIAL} to start over"
            ));
        }
        let text = std::fs::read_to_string(partial.join("experiment.toml")).unwrap_or_default();
        if text != exp.text {
            return refuse(format!(
                "--resume: {here}/{PARTIAL} holds a run of a different experiment file; nothing was changed"
            ));
        }
        let old: Option<Plan> =
            std::fs::read_to_string(partial.join("plan.json")).ok().and_then(|t| serde_json::from_str(&t).ok());
        match old {
            Some(old) if old.commit != plan.commit => {
                return refuse(format!(
                    "--resume: {here} was started by solverlab at commit {}, this is {}; finish it with that build or start over",
                    old.commit, plan.commit
                ))
            }
            Some(old) if old.shard != shard => {
                return refuse(format!(
                    "--resume: {here} holds {}, not {}",
                    describe(old.shard),
                    describe(shard)
                ))
            }
            Some(_) => {}
            None => return refuse(format!("--resume: {here}/{PARTIAL}/plan.json is missing or unreadable")),
        }
    }
    if resume && out.join("meta.json").exists() {
        let meta = Meta::read(out).map_err(CliError::Input)?;
        let text = std::fs::read_to_string(out.join("experiment.toml")).unwrap_or_default();
        if text != exp.text {
            return refuse(format!(
                "--resume: {here} holds results of a different experiment file; nothing was changed"
            ));
        }
        if meta.commit != plan.commit {
            return refuse(format!(
                "--resume: {here} was written by solverlab at commit {}, this is {}; start over without --resume",
                meta.commit, plan.commit
            ));
        }
        let old_shard = meta.shard.as_ref().map(|s| (s.index, s.count));
        if old_shard != shard {
            return refuse(format!("--resume: {here} holds {}, not {}", describe(old_shard), describe(shard)));
        }
        let folder = Source::folder(out, &meta).map_err(CliError::Input)?;
        unchanged_scene_files(&folder, exp, out)?;
        prev.finished.extend(folder.runs());
        prev.folder = Some(folder);
    }
    if partial.exists() {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&partial)
            .map_err(|e| CliError::Io(format!("{}: {e}", partial.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            match Source::part(&dir).map_err(CliError::Input)? {
                Some(part) if part.runs().all(|r| !prev.finished.contains(&r)) => {
                    unchanged_scene_files(&part, exp, out)?;
                    prev.finished.extend(part.runs());
                    kept.push(part);
                }
                _ => {
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
        }
    }
    // Every kept run's tables are checked now, before the runs still to do (hours, perhaps),
    // not only when the folder is assembled.
    let mut owner = BTreeMap::new();
    for (k, source) in prev.folder.iter().chain(&kept).enumerate() {
        owner.extend(source.runs().map(|run| (run, k)));
    }
    let sources: Vec<&Source> = prev.folder.iter().chain(&kept).collect();
    verify(&sources, &owner)?;
    Ok(prev)
}

/// Creates `out/.partial` with the plan and a copy of the experiment file (kept if present).
pub fn start(out: &Path, exp: &Experiment, shard: Option<(usize, usize)>) -> std::io::Result<()> {
    let partial = out.join(PARTIAL);
    std::fs::create_dir_all(&partial)?;
    let plan = Plan { experiment: exp.file.name.clone(), commit: this_commit().into(), shard };
    write_atomic(&partial.join("plan.json"), &serde_json::to_string_pretty(&plan).expect("serialises"))?;
    write_atomic(&partial.join("experiment.toml"), &exp.text)
}

/// The part folder of run `run`.
pub fn part_dir(out: &Path, run: usize) -> PathBuf {
    out.join(PARTIAL).join(format!("run-{run:06}"))
}

/// The finished parts in `out/.partial`.
pub fn parts(out: &Path) -> Result<Vec<Source>, String> {
    let partial = out.join(PARTIAL);
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(&partial) {
        Ok(d) => d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect(),
        Err(_) => Vec::new(),
    };
    dirs.sort();
    Ok(dirs.iter().map(|d| Source::part(d)).collect::<Result<Vec<_>, _>>()?.into_iter().flatten().collect())
}

/// Merges shard folders into `out`: checks that they are the N shards of one experiment file
/// built at one commit, each exactly once and finished, then assembles them. Returns the
/// experiment file's text.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<String, CliError> {
    let bad = |m: String| CliError::Input(format!("merge: {m}"));
    if dirs.is_empty() {
        return Err(bad("give the shard folders to merge".into()));
    }
    let mut seen: BTreeMap<PathBuf, &PathBuf> = BTreeMap::new();
    for d in dirs {
        let canon = d.canonicalize().map_err(|e| bad(format!("{}: {e}", d.display())))?;
        if let Some(first) = seen.insert(canon, d) {
            return Err(bad(format!("{} is given twice (also as {})", d.display(), first.display())));
        }
    }
    if let Ok(o) = out.canonicalize() {
        if seen.contains_key(&o) {
            return Err(bad(format!("--out {} is one of the shards; give a new folder", out.display())));
        }
    }
    let mut shards = Vec::new();
    for d in dirs {
        if d.join(PARTIAL).exists() {
            return Err(bad(format!(
                "{} is unfinished ({}/{PARTIAL} exists); finish it with `solverlab run … --resume` first",
                d.display(),
                d.display()
            )));
        }
        let meta = Meta::read(d).map_err(|e| bad(format!("{e} (not a finished results folder)")))?;
        let Some(shard) = meta.shard.clone() else {
            return Err(bad(format!(
                "{} is not a shard (its meta.json names no shard; write shards with --shard I/N)",
                d.display()
            )));
        };
        let text = std::fs::read_to_string(d.join("experiment.toml"))
            .map_err(|e| bad(format!("{}/experiment.toml: {e}", d.display())))?;
        shards.push((d, meta, shard, text));
    }
    let (d0, m0, s0, t0) = &shards[0];
    for (d, m, s, t) in &shards[1..] {
        if t != t0 {
            return Err(bad(format!("{} and {} ran different experiment files", d0.display(), d.display())));
        }
        if m.commit != m0.commit {
            return Err(bad(format!(
                "{} was run at commit {} and {} at commit {}",
                d0.display(),
                m0.commit,
                d.display(),
                m.commit
            )));
        }
        if s.count != s0.count {
            return Err(bad(format!(
                "{} is shard {}/{} but {} is shard {}/{}: different shard counts",
                d0.display(),
                s0.index,
                s0.count,
                d.display(),
                s.index,
                s.count
            )));
        }
    }
    let mut by_index: BTreeMap<usize, &PathBuf> = BTreeMap::new();
    for (d, _, s, _) in &shards {
        if let Some(other) = by_index.insert(s.index, d) {
            return Err(bad(format!(
                "shard {}/{} is given twice: {} and {}",
                s.index,
                s.count,
                other.display(),
                d.display()
            )));
        }
    }
    let missing: Vec<String> =
        (1..=s0.count).filter(|i| !by_index.contains_key(i)).map(|i| format!("{i}/{}", s0.count)).collect();
    if !missing.is_empty() {
        return Err(bad(format!("missing shard{} {}", if missing.len() > 1 { "s" } else { "" }, missing.join(", "))));
    }
    let mut sources = Vec::new();
    for (d, m, s, _) in &shards {
        let source = Source::folder(d, m).map_err(bad)?;
        let held: Vec<usize> = source.runs().collect();
        if held != s.runs {
            return Err(bad(format!(
                "{} is missing runs of its shard (it holds {} of {})",
                d.display(),
                held.len(),
                s.runs.len()
            )));
        }
        sources.push(source);
    }
    let total = m0.runs_total;
    let held: BTreeSet<usize> = sources.iter().flat_map(|s| s.runs().collect::<Vec<_>>()).collect();
    if held != (0..total).collect::<BTreeSet<_>>() {
        return Err(bad(format!("the shards hold {} distinct runs of {total}", held.len())));
    }
    same_scene_files(&sources)?;
    assemble_whole(&sources, out, Meta::new(&m0.experiment, None, total, Vec::new()), t0)?;
    Ok(t0.clone())
}
