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

mod args;
mod assemble;
mod experiment;
mod export;
mod expr;
mod figures;
mod interrupt;
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
use std::sync::atomic::AtomicBool;

use args::{set_form_error, Cli, Command, SceneCommand, SolverCommand};
use clap::Parser;
pub use experiment::run_experiment;
pub use figures::Style;
/// `steps.csv`'s columns and one frame's fields, for tools that write the same table (the
/// Rapier peer).
pub use output::{date, num, write_atomic};
use solverlab_scenes::file::SceneFile;
pub use solverlab_solvers::Registry;
use solverlab_solvers::SolverConfig;
pub use tables::{body_rows, step_fields, BODY_COLUMNS, STEP_COLUMNS};

/// Set by the Ctrl-C handler (or by a caller of the library, such as the Python package): every
/// command stops at its next frame, solve, run, table or figure (see `interrupt.rs`).
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

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

impl CliError {
    /// The message, whatever the kind.
    pub fn message(&self) -> &str {
        match self {
            CliError::Input(m) | CliError::Diverged(m) | CliError::Io(m) | CliError::Interrupted(m) => m,
        }
    }
}

/// Parses `--solver` with the families of `registry`: an inline table, a file, or a preset name;
/// its label and settings (also for tools that build a solver as `simulate` does).
pub fn parse_solver(arg: &str, registry: &Registry) -> Result<(String, SolverConfig), CliError> {
    #[derive(serde::Deserialize)]
    struct Wrapper {
        solver: toml::Table,
    }
    let bad =
        |source: &str, e: &dyn std::fmt::Display| CliError::Input(format!("{source}: {}", e.to_string().trim_end()));
    let (label, config) = if arg.trim_start().starts_with('{') {
        let w: Wrapper = toml::from_str(&format!("solver = {arg}")).map_err(|e| bad("--solver", &e))?;
        let config = registry.parse(&w.solver).map_err(|e| bad("--solver", &e))?;
        (inline_label(&w.solver, config.kind()), config)
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

/// The label of an inline `--solver` table: its preset and the settings it changes, as
/// `soft-step+max_frame_turn` for `{ preset = "soft-step", max_frame_turn = 0 }` (the preset's
/// name alone when it changes none), or else its kind.
fn inline_label(table: &toml::Table, kind: &str) -> String {
    match table.get("preset").and_then(|p| p.as_str()) {
        Some(preset) => {
            let changed = table.keys().filter(|k| *k != "preset" && *k != "kind");
            std::iter::once(preset).chain(changed.map(|k| k.as_str())).collect::<Vec<_>>().join("+")
        }
        None => kind.to_string(),
    }
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
    let scene_source = spec::SceneSource::of(&scene);
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
        scene_source,
    })
}

fn run(cli: Cli, registry: &Registry) -> Result<(), CliError> {
    // Ctrl-C or SIGTERM: every command stops at its next frame and drops its temporary files;
    // a second one stops at once.
    interrupt::install();
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
            let _lock = output::FolderLock::acquire(&out).map_err(CliError::Input)?;
            assemble::check_replaceable(&out)?;
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
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            let listed =
                experiment::list_runs(&exp, &runs, &mut stdout).and_then(|_| std::io::Write::flush(&mut stdout));
            match listed {
                // A closed pipe (`| head`) is not an error.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Io(format!("stdout: {e}"))),
                _ => Ok(()),
            }
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
    assemble::check_replaceable(&args.out)?;
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
    let _lock = match dir.is_dir() {
        true => Some(output::FolderLock::acquire(dir).map_err(CliError::Input)?),
        false => None,
    };
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
    figures::draw_all(&file, dir, style).map_err(figure_error)
}

/// A figure that was not drawn: interrupted (exit 130) or not written (exit 1).
fn figure_error(e: String) -> CliError {
    match interrupt::interrupted() {
        true => CliError::Interrupted(e),
        false => CliError::Io(e),
    }
}

/// `solverlab report DIR --out OUT --max-mb MB`: writes `OUT/report.html`; returns its size in
/// bytes.
pub fn report(dir: &std::path::Path, out: &std::path::Path, max_mb: f64) -> Result<u64, CliError> {
    output_dir(out)?;
    let _lock = output::FolderLock::acquire(out).map_err(CliError::Input)?;
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
    let written = figures::draw_all(&file, &out, Style::Screen).map_err(figure_error)?;
    Ok((out, written))
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

/// Makes the calling thread one of the global rayon pool's workers (of `RAYON_NUM_THREADS`, or
/// one per core), as [`main_with`] does first: the runner's own thread then takes part in every
/// parallel pass of a solver instead of handing each to the pool and sleeping until it returns.
/// Each hand-off costs a wake-up, and a substepped rigid solver makes some hundred of them a
/// frame (two threads on the 4,095-box pyramid under coloured `tgs-soft`: 13.7 against 12.8 ms a
/// frame). Call it before anything runs in parallel; once a global pool exists (an earlier
/// call, a parallel pass, a test harness) it changes nothing.
pub fn join_thread_pool() {
    let _ = rayon::ThreadPoolBuilder::new().use_current_thread().build_global();
}

/// Runs the command line (the process's arguments) with the solver families of `registry`, and
/// returns the exit status (see the crate docs).
pub fn main_with(registry: Registry) -> ExitCode {
    join_thread_pool();
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
