//! # solverlab-cli
//!
//! The `solverlab` command line as a library: [`main_with`] runs the whole command line with a
//! [`Registry`] of solver families, so that an outside crate adds its own family with three
//! lines (`examples/outside-solver` in the repository is the worked case), and [`simulate`],
//! [`run_experiment`], [`plot`], [`report`] and [`merge`] do what the commands of the same names
//! do, from Rust.
//!
//! Exit status of the command line: 0 on success, 2 on bad input (nothing is written), 1 when a
//! run diverges or tears (the rows computed so far are kept) or a file cannot be written, 130 on
//! Ctrl-C or SIGTERM.

mod assemble;
mod export;
mod expr;
mod figures;
mod output;
pub mod progress;
mod report;
mod results;
mod runner;
mod simulate;
mod single;
mod spec;
mod tables;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, Subcommand};
pub use figures::Style;
use solverlab_scenes::file::SceneFile;
pub use solverlab_solvers::Registry;
use solverlab_solvers::SolverConfig;

/// Set by the Ctrl-C handler: runs stop at their next frame, `plot` between figures.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Compare physics constraint solvers on identical scenes.
#[derive(Parser)]
#[command(name = "solverlab", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate one scene with one solver and write steps.csv, trace.csv, positions.csv, meta.json.
    Simulate {
        /// A builtin scene name or a scene file (.toml).
        #[arg(long)]
        scene: String,
        /// Override a scene parameter: key=value (repeatable). `solverlab scene list` shows them.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// A preset name (`solverlab solver list`), a solver file (.toml), or an inline TOML
        /// table such as '{ kind = "relax", mode = "jacobi", iterations = 20, omega = 1.5 }'.
        #[arg(long, default_value = "gs")]
        solver: String,
        /// Frames to simulate, at least 1.
        #[arg(long, default_value_t = 120, allow_negative_numbers = true, value_parser = at_least_one)]
        frames: u64,
        /// Frame step in seconds (default: the scene's dt).
        #[arg(long, allow_negative_numbers = true)]
        dt: Option<f64>,
        /// Substeps per frame: each frame is this many steps of dt/substeps (default: 1, or the
        /// preset's own, e.g. 4 for soft-step).
        #[arg(long, allow_negative_numbers = true, value_parser = substeps)]
        substeps: Option<u32>,
        /// Output directory.
        #[arg(long, default_value = "results/simulate")]
        out: PathBuf,
        /// Write positions every N frames; 0 writes none.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = at_least_zero)]
        positions_every: u64,
        /// Also compute the common position violation after every iteration (trace.csv).
        #[arg(long)]
        violation: bool,
        /// Do not draw overview.svg/.png (violation, energy, iterations; drift, penetration and
        /// support force when the scene has them).
        #[arg(long)]
        no_figures: bool,
    },
    /// Write the linearised system a cg or direct solver solves in one frame, as Matrix Market
    /// files plus system.json, for other tools (SciPy, MATLAB, Julia).
    ExportSystem {
        /// A builtin scene name or a scene file (.toml).
        #[arg(long)]
        scene: String,
        /// Override a scene parameter: key=value (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// A solver with an explicit system: cg, cg-cold, direct, or an inline table.
        #[arg(long, default_value = "cg")]
        solver: String,
        /// The frame (1-based) whose system to write.
        #[arg(long, allow_negative_numbers = true, value_parser = at_least_one)]
        frame: u64,
        /// Frame step in seconds (default: the scene's dt).
        #[arg(long, allow_negative_numbers = true)]
        dt: Option<f64>,
        /// Substeps per frame (the last substep's system is written).
        #[arg(long, allow_negative_numbers = true, value_parser = substeps)]
        substeps: Option<u32>,
        /// The outer (Newton) iteration whose system to write, counting from 1.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = at_least_one_usize)]
        outer: usize,
        /// Output directory.
        #[arg(long, default_value = "results/system")]
        out: PathBuf,
    },
    /// Run an experiment file: every scene × solver × sweep value, tidy CSVs, figures.
    Run {
        /// The experiment file (see experiments/).
        #[arg(required_unless_present = "all")]
        experiment: Option<PathBuf>,
        /// Output directory (default: results/NAME).
        #[arg(long, conflicts_with = "all")]
        out: Option<PathBuf>,
        /// Run every experiments/*.toml in name order, each into results/NAME: regenerates every
        /// committed result.
        #[arg(long, conflicts_with_all = ["experiment", "shard", "resume", "list_runs"])]
        all: bool,
        /// Print one line per run (index, scene, solver label, sweep values) and run nothing.
        /// With --shard, only that shard's runs.
        #[arg(long)]
        list_runs: bool,
        /// Run only the I-th of N disjoint shards of the runs (1-based), balanced by estimated
        /// cost, for a cluster; `solverlab merge` combines the shard folders.
        #[arg(long, value_name = "I/N", value_parser = spec::parse_shard)]
        shard: Option<(usize, usize)>,
        /// Keep the finished runs of an interrupted run in --out and do the rest.
        #[arg(long)]
        resume: bool,
        /// Runs at a time (default: the experiment's `jobs`, else one per core).
        #[arg(long, allow_negative_numbers = true, value_parser = at_least_one_usize)]
        jobs: Option<usize>,
        /// Also write report.html (see `solverlab report`) into the output folder.
        #[arg(long)]
        report: bool,
    },
    /// Write a self-contained HTML page of an experiment's results: description, provenance,
    /// figures, the runs table and a 3-D replay of every run side by side. It loads nothing
    /// from the network.
    Report {
        /// The results directory (as `solverlab run` writes it).
        dir: PathBuf,
        /// Where to write report.html (default: DIR).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Size budget of the replay data in MB; frames are decimated evenly to fit (default 20).
        #[arg(long, default_value_t = report::BUDGET_MB, value_parser = positive_mb)]
        max_mb: f64,
    },
    /// Combine shard folders (`run --shard I/N`) into the folder an unsharded run writes, and
    /// draw its figures.
    Merge {
        /// The shard folders, all N of them.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output directory (default: results/NAME).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Redraw every figure of an experiment from its CSVs, without simulating again.
    Plot {
        /// The results directory (holding experiment.toml and the CSVs).
        dir: PathBuf,
        /// `screen`: NAME.svg and NAME.png beside the CSVs, as `run` draws them. `paper`: vector
        /// figures in DIR/paper/, NAME-single.svg (3.5 in) and NAME-double.svg (7 in), serif text
        /// at 7-8 pt, no title, with 3× PNG previews.
        #[arg(long, value_enum, default_value = "screen")]
        style: Style,
    },
    /// Builtin scenes.
    Scene {
        #[command(subcommand)]
        command: SceneCommand,
    },
    /// Solver presets.
    Solver {
        #[command(subcommand)]
        command: SolverCommand,
    },
}

#[derive(Subcommand)]
enum SceneCommand {
    /// List the builtin scenes with their parameters and defaults.
    List,
    /// Print a builtin (or a scene file, re-normalised) as a scene file.
    Export {
        /// A builtin name or a scene file.
        name: String,
        /// Override a parameter: key=value (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
}

#[derive(Subcommand)]
enum SolverCommand {
    /// List the presets and their settings.
    List,
}

/// How a command failed.
#[derive(Debug)]
pub enum CliError {
    /// Bad input: exit 2, nothing written.
    Input(String),
    /// The run diverged: exit 1, rows so far kept.
    Diverged(String),
    /// A file could not be written: exit 1.
    Io(String),
    /// Ctrl-C: exit 130, nothing written.
    Interrupted(String),
}

/// Parses `--solver` with the families of `registry`: an inline table, a file, or a preset name.
fn parse_solver(arg: &str, registry: &Registry) -> Result<(String, SolverConfig), CliError> {
    #[derive(serde::Deserialize)]
    struct Wrapper {
        solver: toml::Table,
    }
    let bad =
        |source: &str, e: &dyn std::fmt::Display| CliError::Input(format!("{source}: {}", e.to_string().trim_end()));
    let (label, config) = if arg.trim_start().starts_with('{') {
        let w: Wrapper = toml::from_str(&format!("solver = {arg}")).map_err(|e| bad("--solver", &e))?;
        let config = registry.parse(&w.solver).map_err(|e| bad("--solver", &e))?;
        (config.kind().to_string(), config)
    } else if arg.ends_with(".toml") {
        let text = std::fs::read_to_string(arg).map_err(|e| bad(arg, &e))?;
        let table: toml::Table = toml::from_str(&text).map_err(|e| bad(arg, &e))?;
        let config = registry.parse(&table).map_err(|e| bad(arg, &e))?;
        let stem = std::path::Path::new(arg).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        (stem, config)
    } else {
        let p = registry.preset(arg).ok_or_else(|| {
            let names: Vec<&str> = registry.presets().iter().map(|p| p.name).collect();
            CliError::Input(format!(
                "--solver: unknown preset `{arg}`{} (presets: {}; or an inline table {{ kind = \"relax\", … }})",
                solverlab_core::names::did_you_mean(arg, names.iter().copied()),
                names.join(", ")
            ))
        })?;
        (p.name.to_string(), p.config)
    };
    Ok((label, config))
}

/// Prints to stdout; a closed pipe (`| head`) is not an error.
fn print_out(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Resolves and validates the scene and solver arguments shared by `simulate` and
/// `export-system`.
#[allow(clippy::too_many_arguments)]
fn run_spec(
    registry: &Registry,
    scene: String,
    sets: Vec<String>,
    solver: &str,
    frames: u64,
    dt: Option<f64>,
    substeps: Option<u32>,
    positions_every: u64,
    violation: bool,
    out: PathBuf,
) -> Result<simulate::RunSpec, CliError> {
    let (label, config) = parse_solver(solver, registry)?;
    let mut resolved = solverlab_scenes::resolve(&scene, &sets).map_err(|e| CliError::Input(e.to_string()))?;
    if let Some(dt) = dt {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(CliError::Input(format!("--dt: {dt} must be a positive number of seconds")));
        }
        resolved.dt = dt;
    }
    let substeps = substeps.unwrap_or(config.default_substeps());
    if substeps == 0 {
        return Err(CliError::Input("--substeps: must be at least 1".into()));
    }
    Ok(simulate::RunSpec {
        scene_arg: scene,
        sets,
        scene: resolved,
        label,
        solver: config,
        frames,
        substeps,
        positions_every,
        violation,
        out,
    })
}

fn run(cli: Cli, registry: &Registry) -> Result<(), CliError> {
    // Ctrl-C or SIGTERM: every command stops at its next frame and drops its temporary files.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
    match cli.command {
        Command::Simulate {
            scene,
            sets,
            solver,
            frames,
            dt,
            substeps,
            out,
            positions_every,
            violation,
            no_figures,
        } => {
            let args = Simulate { scene, sets, solver, frames, dt, substeps, out, positions_every, violation };
            let result = simulate(registry, &args);
            // A run that diverged or tore kept its rows: draw and summarise them too.
            if matches!(result, Ok(_) | Err(CliError::Diverged(_))) {
                if !no_figures {
                    single::draw(&args.out).map_err(CliError::Io)?;
                }
                if let Ok(text) = single::summary_text(&args.out) {
                    eprintln!("{text}");
                }
            }
            let hash = result?;
            eprintln!("final state hash {hash}");
            Ok(())
        }
        Command::ExportSystem { scene, sets, solver, frame, dt, substeps, outer, out } => {
            output_dir(&out)?;
            let spec = run_spec(registry, scene, sets, &solver, frame, dt, substeps, 0, false, out)?;
            export::run(&spec, frame, outer)?;
            eprintln!("wrote the system of frame {frame} to {}", spec.out.display());
            Ok(())
        }
        Command::Run { experiment: Some(experiment), out, all: false, list_runs: true, shard, .. } => {
            let exp = spec::Experiment::load(&experiment, registry)?;
            let _ = out;
            let runs = match shard {
                Some((i, n)) => spec::shard_runs(&exp, i, n),
                None => (0..exp.runs.len()).collect(),
            };
            let mut text = String::new();
            for r in runs.iter().map(|&k| &exp.runs[k]) {
                let sweep: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                text += &format!("{}\t{}\t{}\t{}\n", r.index, r.scene_label, r.label, sweep.join(" "));
            }
            print_out(&text);
            Ok(())
        }
        Command::Run { experiment: Some(experiment), out, all: false, shard, resume, jobs, report, .. } => {
            let out = run_experiment(registry, &experiment, out, shard, resume, jobs)?;
            if report {
                let bytes = self::report(&out, &out, report::BUDGET_MB)?;
                eprintln!("wrote {} ({:.1} MB)", out.join("report.html").display(), bytes as f64 / 1e6);
            }
            Ok(())
        }
        Command::Report { dir, out, max_mb } => {
            let out = out.unwrap_or_else(|| dir.clone());
            let bytes = self::report(&dir, &out, max_mb)?;
            eprintln!("wrote {} ({:.1} MB)", out.join("report.html").display(), bytes as f64 / 1e6);
            Ok(())
        }
        Command::Merge { dirs, out } => {
            let (out, written) = merge(&dirs, out)?;
            eprintln!("merged {} shards into {} and drew {} figure files", dirs.len(), out.display(), written.len());
            Ok(())
        }
        Command::Run { experiment: None, all: false, .. } => {
            Err(CliError::Input("run: give an experiment file, or --all for every experiments/*.toml".into()))
        }
        Command::Run { all: true, .. } => {
            let mut files: Vec<PathBuf> = std::fs::read_dir("experiments")
                .map_err(|e| CliError::Input(format!("experiments: cannot read the folder: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("toml"))
                .collect();
            files.sort();
            for (k, file) in files.iter().enumerate() {
                eprintln!("[{}/{}] {}", k + 1, files.len(), file.display());
                run_experiment(registry, file, None, None, false, None)?;
            }
            Ok(())
        }
        Command::Plot { dir, style } => {
            let written = plot(&dir, style)?;
            eprintln!("redrew {} figure files in {}", written.len(), dir.display());
            Ok(())
        }
        Command::Scene { command: SceneCommand::List } => {
            let mut text = String::new();
            for b in solverlab_scenes::builtins() {
                text += &format!("{:<18} {}\n{:<18} source: {}\n", b.name, b.summary, "", b.source);
                for p in (b.params)() {
                    text += &format!("{:<18}   {:<12} = {:<14} {}\n", "", p.name, p.default.to_string(), p.doc);
                }
            }
            text += "\nevery scene also takes --set dt=SECONDS, damping=[0,1), gravity=[x, y, z] (m/s²)\n";
            print_out(&text);
            Ok(())
        }
        Command::Scene { command: SceneCommand::Export { name, sets } } => {
            let scene = solverlab_scenes::resolve(&name, &sets).map_err(|e| CliError::Input(e.to_string()))?;
            let header = if sets.is_empty() {
                format!("# {name}, exported by solverlab")
            } else {
                format!("# {name} with {}, exported by solverlab", sets.join(" "))
            };
            print_out(&format!("{header}\n{}", SceneFile::from_scene(&scene).to_toml()));
            Ok(())
        }
        Command::Solver { command: SolverCommand::List } => {
            let mut text = String::new();
            for f in registry.families() {
                text += &format!("kind = \"{}\": {}\n", f.kind(), f.summary());
            }
            text += "\n";
            for p in registry.presets() {
                let table = toml::to_string(&p.config.to_table()).expect("configs serialise");
                let inline: Vec<String> = table.lines().map(str::to_string).collect();
                text += &format!("{:<10} {}\n{:<10} {{ {} }}\n", p.name, p.summary, "", inline.join(", "));
            }
            print_out(&text);
            Ok(())
        }
    }
}

/// What `solverlab simulate` takes (see its `--help`).
#[derive(Clone, Debug)]
pub struct Simulate {
    /// A builtin scene name or a scene file (.toml).
    pub scene: String,
    /// Scene parameters, `key=value`.
    pub sets: Vec<String>,
    /// A preset name, a solver file (.toml), or an inline TOML table.
    pub solver: String,
    /// Frames to simulate, at least 1.
    pub frames: u64,
    /// Frame step in seconds (default: the scene's dt).
    pub dt: Option<f64>,
    /// Substeps per frame (default: the solver's own).
    pub substeps: Option<u32>,
    /// Output directory.
    pub out: PathBuf,
    /// Write positions every N frames; 0 writes none.
    pub positions_every: u64,
    /// Also compute the common violation after every iteration.
    pub violation: bool,
}

/// `solverlab simulate` with the solver families of `registry`: one scene, one solver, the
/// tables and `meta.json` in `args.out`; returns the final state hash. A run that diverged or
/// tore is an error ([`CliError::Diverged`]) after its rows are written.
pub fn simulate(registry: &Registry, args: &Simulate) -> Result<String, CliError> {
    output_dir(&args.out)?;
    let _lock = output::FolderLock::acquire(&args.out).map_err(CliError::Input)?;
    let a = args.clone();
    let spec = run_spec(
        registry,
        a.scene,
        a.sets,
        &a.solver,
        a.frames,
        a.dt,
        a.substeps,
        a.positions_every,
        a.violation,
        a.out,
    )?;
    simulate::run(&spec)
}

/// `solverlab plot DIR [--style paper]`: redraws every figure of the experiment in `dir` from its
/// CSVs (a `simulate` folder: its overview figure, in the screen style); returns the files
/// written.
pub fn plot(dir: &std::path::Path, style: Style) -> Result<Vec<PathBuf>, CliError> {
    if single::is_single(dir) {
        return single::draw(dir).map_err(CliError::Io);
    }
    if !dir.join("experiment.toml").exists() {
        return Err(CliError::Input(format!(
            "plot: {} is not a results folder (it needs experiment.toml as `solverlab run` writes it, or meta.json \
             and steps.csv as `solverlab simulate` writes them)",
            dir.display()
        )));
    }
    let (file, _) = spec::ExperimentFile::read(&dir.join("experiment.toml"))?;
    figures::draw_all(&file, dir, style).map_err(|e| match INTERRUPTED.load(Ordering::Relaxed) {
        true => CliError::Interrupted(e),
        false => CliError::Io(e),
    })
}

/// `solverlab report DIR --out OUT --max-mb MB`: writes `OUT/report.html`; returns its size in
/// bytes.
pub fn report(dir: &std::path::Path, out: &std::path::Path, max_mb: f64) -> Result<u64, CliError> {
    output_dir(out)?;
    report::write(dir, out, max_mb).map(|b| b as u64)
}

/// `solverlab merge DIRS --out OUT`: combines shard folders into the folder an unsharded run
/// writes (default `results/NAME`) and draws its figures; returns the folder and the figure
/// files.
pub fn merge(dirs: &[PathBuf], out: Option<PathBuf>) -> Result<(PathBuf, Vec<PathBuf>), CliError> {
    let first = dirs.first().cloned().unwrap_or_default();
    let name = results::Meta::read(&first).map(|m| m.experiment).unwrap_or_default();
    let out = out.unwrap_or_else(|| spec::default_out(&name));
    output_dir(&out)?;
    let _lock = output::FolderLock::acquire(&out).map_err(CliError::Input)?;
    assemble::check_replaceable(&out)?;
    assemble::merge(dirs, &out)?;
    let (file, _) = spec::ExperimentFile::read(&out.join("experiment.toml"))?;
    let written = figures::draw_all(&file, &out, Style::Screen).map_err(CliError::Io)?;
    Ok((out, written))
}

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
    let one = |k: usize| -> Result<(), String> {
        let run = &exp.runs[k];
        let dir = assemble::part_dir(&out, k);
        let _ = std::fs::remove_dir_all(&dir);
        let prefix = (results::header(&exp, &[]), results::run_fields(run));
        let fail = |e: std::io::Error| format!("{}: {e}", dir.display());
        let mut writer =
            results::RunWriter::create(&dir, &run.scene, prefix, exp.file.forces_every.is_some()).map_err(fail)?;
        let summary = runner::execute(run, &recording, exp.file.convergence.as_ref(), &mut writer, &|| bar.inc())
            .map_err(fail)?;
        if summary.status == "interrupted" {
            drop(writer);
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(());
        }
        writer.finish_part(run, exp.file.warmup, &summary).map_err(fail)
    };
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
    let errors: Vec<String> = if jobs == 1 {
        todo.iter().filter_map(|&k| one(k).err()).collect()
    } else {
        use rayon::prelude::*;
        let pool =
            rayon::ThreadPoolBuilder::new().num_threads(jobs).build().map_err(|e| CliError::Io(e.to_string()))?;
        pool.install(|| todo.par_iter().filter_map(|&k| one(k).err()).collect())
    };
    bar.finish();
    if let Some(e) = errors.first() {
        return Err(CliError::Io(e.clone()));
    }

    let mut sources: Vec<assemble::Source> = previous.folder.into_iter().collect();
    sources.extend(assemble::parts(&out).map_err(CliError::Io)?);
    let done: usize = sources.iter().map(|s| s.runs().count()).sum();
    if INTERRUPTED.load(Ordering::Relaxed) {
        let partial = out.join(assemble::PARTIAL);
        if done == 0 {
            let _ = std::fs::remove_dir_all(&partial);
            if !existed {
                let _ = std::fs::remove_dir(&out);
            }
            return Err(CliError::Interrupted(format!("{}: interrupted; nothing was written", experiment.display())));
        }
        return Err(CliError::Interrupted(format!(
            "{}: interrupted; {done} of {} runs are finished and kept in {}; `solverlab run {} --resume --out {}` \
             does the rest",
            experiment.display(),
            planned.len(),
            partial.display(),
            experiment.display(),
            out.display()
        )));
    }
    let shard_meta = shard.map(|(index, count)| results::ShardMeta { index, count, runs: planned.clone() });
    let meta = results::Meta::new(&exp.file.name, shard_meta, exp.runs.len(), Vec::new());
    assemble::assemble_whole(&sources, &out, meta, &exp.text)?;
    let _ = std::fs::remove_dir_all(out.join(assemble::PARTIAL));
    let failed: Vec<String> = results::Meta::read(&out)
        .map(|m| m.runs)
        .unwrap_or_default()
        .iter()
        .filter(|r| r["status"] != "ok")
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
            let written = figures::draw_all(&exp.file, &out, Style::Screen).map_err(CliError::Io)?;
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

/// A count of at least `min`, or a message saying what the value must be.
fn count(s: &str, min: i64) -> Result<i64, String> {
    let v: i64 = s.trim().parse().map_err(|_| format!("{s} is not a whole number"))?;
    match v >= min {
        true => Ok(v),
        false => Err(format!("{v} must be at least {min}")),
    }
}

fn at_least_one(s: &str) -> Result<u64, String> {
    count(s, 1).map(|v| v as u64)
}

fn at_least_one_usize(s: &str) -> Result<usize, String> {
    count(s, 1).map(|v| v as usize)
}

fn at_least_zero(s: &str) -> Result<u64, String> {
    count(s, 0).map(|v| v as u64)
}

fn positive_mb(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("{s} is not a number"))?;
    match v > 0.0 && v.is_finite() {
        true => Ok(v),
        false => Err(format!("{v} must be a positive number of megabytes")),
    }
}

fn substeps(s: &str) -> Result<u32, String> {
    let v = count(s, 1)?;
    u32::try_from(v).map_err(|_| format!("{v} is more substeps than a frame can take (at most {})", u32::MAX))
}

/// `--out` must be a directory or not exist yet, and the folder that will hold it must be
/// writable: checked with a probe file (removed at once) before any work, so a read-only target
/// is a bad-input error (exit 2) naming the folder rather than an I/O failure at the end.
fn output_dir(out: &std::path::Path) -> Result<(), CliError> {
    if out.exists() && !out.is_dir() {
        return Err(CliError::Input(format!(
            "--out: {} exists and is not a directory; give a directory (it is created if missing)",
            out.display()
        )));
    }
    let base = out
        .ancestors()
        .map(|a| if a.as_os_str().is_empty() { std::path::Path::new(".") } else { a })
        .find(|a| a.exists())
        .unwrap_or(std::path::Path::new("."));
    if !base.is_dir() {
        return Err(CliError::Input(format!(
            "--out: {}: {} is a file, so no folder can be made under it",
            out.display(),
            base.display()
        )));
    }
    let probe = base.join(format!(".solverlab-write-test-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(CliError::Input(format!(
            "--out: {}: cannot write in {} ({e}); give a folder you can write to",
            out.display(),
            base.display()
        ))),
    }
}

/// `--set key value` (two arguments) instead of `--set key=value`: clap would report the value
/// as an unexpected argument, so the form is explained before parsing.
fn set_form_error(args: &[std::ffi::OsString]) -> Option<String> {
    let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    for (i, a) in args.iter().enumerate() {
        let value = match a.strip_prefix("--set=") {
            Some(v) => Some(v.to_string()),
            None if a == "--set" => args.get(i + 1).cloned(),
            None => None,
        };
        if let Some(v) = value.filter(|v| !v.contains('=')) {
            let example = match args.get(i + 2).filter(|n| a == "--set" && !n.starts_with('-')) {
                Some(next) => format!("--set {v}={next}"),
                None => format!("--set {v}=VALUE"),
            };
            return Some(format!(
                "--set `{v}`: a parameter is set as one argument key=value, as in `{example}` \
                 (values are TOML: 12, 1.5, true, \"top\", [0, -9.81, 0])"
            ));
        }
    }
    None
}

/// Runs the command line (the process's arguments) with the solver families of `registry`, and
/// returns the exit status (see the crate docs).
pub fn main_with(registry: Registry) -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(m) = set_form_error(&args) {
        eprintln!("error: {m}");
        return ExitCode::from(2);
    }
    match run(Cli::parse_from(args), &registry) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Input(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(CliError::Diverged(m)) | Err(CliError::Io(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
        Err(CliError::Interrupted(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(130)
        }
    }
}
