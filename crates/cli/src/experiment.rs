//! `solverlab run EXPERIMENT`: every run of an experiment file into its part folder, then the
//! folder assembled from the parts and its figures.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use crate::interrupt::{self, Temporary};
use crate::tables::RunStatus;
use crate::{
    assemble, figures, output, output_dir, progress, results, runner, spec, CliError, Registry, Style, INTERRUPTED,
};

/// `solverlab run EXPERIMENT [--out DIR] [--shard I/N] [--resume] [--jobs N]` with the solver
/// families of `registry`: runs what is not finished yet, each run into its part folder, then
/// assembles the folder (default `results/NAME`) and, unless sharded, draws the figures; returns
/// the folder.
pub fn run_experiment(
    registry: &Registry,
    experiment: &std::path::Path,
    out: Option<PathBuf>,
    shard: Option<(usize, usize)>,
    resume: bool,
    jobs: Option<usize>,
) -> Result<PathBuf, CliError> {
    let exp = spec::Experiment::load(experiment, registry)?;
    let out = out.unwrap_or_else(|| spec::default_out(&exp.file.name));
    output_dir(&out)?;
    let _lock = output::FolderLock::acquire(&out).map_err(CliError::Input)?;
    assemble::check_replaceable(&out)?;
    let planned: Vec<usize> = match shard {
        Some((i, n)) => spec::shard_runs(&exp, i, n),
        None => (0..exp.runs.len()).collect(),
    };
    let previous = assemble::previous(&out, &exp, shard, resume)?;
    let todo: Vec<usize> = planned.iter().copied().filter(|k| !previous.finished.contains(k)).collect();
    let existed = out.exists();
    let io = |e: std::io::Error| CliError::Io(format!("{}: {e}", out.display()));
    // On a second Ctrl-C (an exit at once): the scratch folder goes unless a run in it
    // finished, and a folder this command created goes if nothing is left in it.
    let _created = (!existed).then(|| Temporary::empty_dir(&out));
    let _scratch = Temporary::partial(&out.join(assemble::PARTIAL));
    assemble::start(&out, &exp, shard).map_err(io)?;
    if resume && !previous.finished.is_empty() {
        eprintln!("resuming: {} of {} runs already finished", previous.finished.len(), planned.len());
    }

    let recording = runner::Recording {
        trace: exp.file.trace,
        trace_iterations: exp.file.trace_iterations,
        violation: false,
        positions: runner::Frames::At(figures::position_frames(&exp.file)),
        contacts: exp.file.contacts,
        forces_every: exp.file.forces_every,
        steps_every: exp.file.record_every,
    };
    // A frozen-state study adds its solves to each run's frames.
    let study = runner::study_solves(exp.file.convergence.as_ref());
    let total: u64 = todo.iter().map(|&k| exp.runs[k].frames + study).sum();
    let unit = if study > 0 { "frames and study solves" } else { "frames" };
    let bar = progress::Progress::new(total, unit, &format!("{} ({} runs)", exp.file.name, todo.len()));
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut jobs = jobs.or(exp.file.jobs).unwrap_or_else(rayon::current_num_threads).max(1);
    // More runs at a time than cores only adds threads and memory (each run holds its scene
    // and writer): at most four per core, and never more than there are runs to do.
    let most = (4 * cores).min(todo.len().max(1));
    if jobs > most {
        if jobs > 4 * cores {
            eprintln!("note: {jobs} jobs on {cores} cores; running {most} at a time");
        }
        jobs = most;
    }
    // (One run at a time has the pool to itself: its threads spin through each frame.)
    let alone = jobs == 1;
    let one = |k: usize| -> Result<(), String> {
        if interrupt::interrupted() {
            return Ok(());
        }
        let run = &exp.runs[k];
        // The frames (and study solves) this run counts; those it does not reach are counted
        // as skipped when it ends.
        let counted = std::sync::atomic::AtomicU64::new(0);
        let tick = || {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            bar.inc();
        };
        let dir = assemble::part_dir(&out, k);
        let _ = std::fs::remove_dir_all(&dir);
        let _unfinished = Temporary::dir(&dir);
        let prefix = (results::header(&exp, &[]), results::run_fields(run));
        let fail = |e: std::io::Error| format!("{}: {e}", dir.display());
        let result = results::RunWriter::create(&dir, &run.scene, prefix, exp.file.forces_every.is_some()).and_then(
            |mut writer| {
                let summary =
                    runner::execute(run, &recording, exp.file.convergence.as_ref(), &mut writer, &tick, alone)?;
                match summary.status {
                    RunStatus::Interrupted => Ok(false),
                    _ => writer.finish_part(run, exp.file.warmup, &summary).map(|_| true),
                }
            },
        );
        bar.skip((run.frames + study).saturating_sub(counted.load(std::sync::atomic::Ordering::Relaxed)));
        // A part that did not finish (interrupted, or a write that failed) leaves nothing.
        if !matches!(result, Ok(true)) {
            let _ = std::fs::remove_dir_all(&dir);
        }
        result.map(|_| ()).map_err(fail)
    };
    let errors: Vec<String> = if jobs == 1 {
        todo.iter().filter_map(|&k| one(k).err()).collect()
    } else {
        use rayon::prelude::*;
        let pool =
            rayon::ThreadPoolBuilder::new().num_threads(jobs).build().map_err(|e| CliError::Io(e.to_string()))?;
        pool.install(|| todo.par_iter().filter_map(|&k| one(k).err()).collect())
    };
    bar.finish();

    let mut sources: Vec<assemble::Source> = previous.folder.into_iter().collect();
    sources.extend(assemble::parts(&out).map_err(CliError::Io)?);
    let done: usize = sources.iter().map(|s| s.runs().count()).sum();
    let partial = out.join(assemble::PARTIAL);
    // What an unfinished run leaves: its finished runs, for --resume, or nothing at all.
    let left = || {
        if done == 0 {
            let _ = std::fs::remove_dir_all(&partial);
            if !existed {
                let _ = std::fs::remove_dir(&out);
            }
            return "nothing was written".to_string();
        }
        format!(
            "{done} of {} runs are finished and kept in {}; `solverlab run {} --resume --out {}` does the rest",
            planned.len(),
            partial.display(),
            experiment.display(),
            out.display()
        )
    };
    if let Some(e) = errors.first() {
        return Err(CliError::Io(format!("{e}; {}", left())));
    }
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Err(CliError::Interrupted(format!("{}: interrupted; {}", experiment.display(), left())));
    }
    let shard_meta = shard.map(|(index, count)| results::ShardMeta { index, count, runs: planned.clone() });
    let meta = results::Meta::new(&exp.file.name, shard_meta, exp.runs.len(), Vec::new());
    assemble::assemble_whole(&sources, &out, meta, &exp.text).map_err(|e| match e {
        CliError::Io(m) => CliError::Io(format!("{m}; {}", left())),
        CliError::Interrupted(m) => CliError::Interrupted(format!("{m}; {}", left())),
        other => other,
    })?;
    let failed: Vec<String> = results::Meta::read(&out)
        .map(|m| m.runs)
        .unwrap_or_default()
        .iter()
        .filter(|r| r["status"].as_str().and_then(RunStatus::parse) != Some(RunStatus::Ok))
        .map(|r| {
            format!(
                "run {} ({} on {}): {} {}",
                r["run"],
                r["label"].as_str().unwrap_or(""),
                r["scene"].as_str().unwrap_or(""),
                r["status"].as_str().unwrap_or(""),
                r["error"].as_str().unwrap_or("")
            )
        })
        .collect();
    match shard {
        Some((i, n)) => eprintln!(
            "wrote shard {i}/{n} ({} of {} runs) to {}; `solverlab merge` combines the {n} shard folders",
            planned.len(),
            exp.runs.len(),
            out.display()
        ),
        None => {
            let written = figures::draw_all(&exp.file, &out, Style::Screen).map_err(crate::figure_error)?;
            eprintln!("wrote {} runs and {} figure files to {}", exp.runs.len(), written.len(), out.display());
        }
    }
    for f in &failed {
        eprintln!("note: {f}");
    }
    let unconverged: Vec<String> = results::Meta::read(&out)
        .map(|m| m.runs)
        .unwrap_or_default()
        .iter()
        .filter(|r| r["frozen_reference"]["converged"] == false)
        .map(|r| format!("{} ({})", r["run"], r["scene"].as_str().unwrap_or("")))
        .collect();
    if !unconverged.is_empty() {
        eprintln!(
            "note: the frozen-state reference did not meet its tolerance in runs {}: their error_* columns measure \
             the distance to an unconverged answer (meta.json: frozen_reference)",
            unconverged.join(", ")
        );
    }
    Ok(out)
}

/// `run --list-runs`: one line per run of `runs` (index, scene, solver label, sweep values),
/// written to `out` as it is formatted, so that a listing of 10⁵ runs is never held in memory
/// (the caller buffers `out`). Stops at the first failed write (a closed pipe).
pub fn list_runs(exp: &spec::Experiment, runs: &[usize], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    for r in runs.iter().map(|&k| &exp.runs[k]) {
        write!(out, "{}\t{}\t{}\t", r.index, r.scene_label, r.label)?;
        for (k, (key, value)) in r.params.iter().enumerate() {
            write!(out, "{}{key}={value}", if k > 0 { " " } else { "" })?;
        }
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the size of every write it is handed.
    #[derive(Default)]
    struct Writes(Vec<usize>);

    impl std::io::Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A closed pipe after the first line.
    struct Closed(usize);

    impl std::io::Write for Closed {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.contains(&b'\n') {
                self.0 += 1;
            }
            match self.0 > 1 {
                true => Err(std::io::ErrorKind::BrokenPipe.into()),
                false => Ok(buf.len()),
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The listing is streamed: it reaches the writer a piece of a line at a time (no string of
    /// the whole listing is built), and stops at the first write that fails.
    #[test]
    fn the_run_listing_is_written_line_by_line() {
        let dir = std::env::temp_dir().join(format!("solverlab-list-runs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("many.toml");
        let values: Vec<String> = (1..=500).map(|k| k.to_string()).collect();
        std::fs::write(
            &file,
            format!(
                "name = \"many\"\nframes = 2\n[[scene]]\nname = \"pendulum\"\n[[solver]]\nlabel = \"GS\"\npreset = \"gs\"\n\
                 [sweep]\n\"solver.iterations\" = [{}]\nsubsteps = [1, 2]\n",
                values.join(", ")
            ),
        )
        .unwrap();
        let exp = spec::Experiment::load(&file, &Registry::builtin()).unwrap();
        let runs: Vec<usize> = (0..exp.runs.len()).collect();
        assert_eq!(runs.len(), 1000);
        let mut writes = Writes::default();
        list_runs(&exp, &runs, &mut writes).unwrap();
        assert!(writes.0.len() >= 1000, "{} writes", writes.0.len());
        assert!(writes.0.iter().all(|&n| n < 64), "no write holds more than a line: {:?}", writes.0.iter().max());
        let mut closed = Closed(0);
        let e = list_runs(&exp, &runs, &mut closed).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
        assert_eq!(closed.0, 2, "stopped at the first failed line");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
