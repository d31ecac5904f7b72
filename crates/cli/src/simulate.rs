//! `solverlab simulate`: one scene, one solver, tidy CSVs.
//!
//! A one-run experiment: the run goes through the same runner ([`crate::runner::execute`]),
//! tables ([`crate::tables`]) and writer ([`RunWriter`]) as `solverlab run`, into its folder
//! directly and without the run columns, so its files keep their documented names and columns.

use std::path::PathBuf;

use solverlab_core::Scene;
use solverlab_scenes::file::SceneFile;
use solverlab_solvers::SolverConfig;

use crate::results::{RunWriter, SceneMeta};
use crate::runner::{execute, Frames, Recording};
use crate::spec::RunConfig;
use crate::tables::RunStatus;
use crate::CliError;

/// Everything a simulate run needs, already validated.
pub struct RunSpec {
    /// The scene as given on the command line (name or path).
    pub scene_arg: String,
    /// The `--set` overrides.
    pub sets: Vec<String>,
    /// The resolved scene.
    pub scene: Scene,
    /// The solver label.
    pub label: String,
    /// The solver settings.
    pub solver: SolverConfig,
    /// Frames to simulate.
    pub frames: u64,
    /// Substeps per frame.
    pub substeps: u32,
    /// Write positions (and forces) every this many frames (0: never).
    pub positions_every: u64,
    /// Compute the common violation after every iteration (trace column `violation`).
    pub violation: bool,
    /// Output directory.
    pub out: PathBuf,
    /// The scene file read, with its content hash (a `--scene` given as a file).
    pub scene_source: Option<crate::spec::SceneSource>,
}

/// Runs the simulation and writes `steps.csv`, `trace.csv`, `positions.csv` and `forces.csv`
/// (with `bodies.csv` and `contacts.csv` for scenes with bodies) and `meta.json`; returns the
/// final state hash.
///
/// A divergence stops the run, keeps every row written so far, records the error in
/// `meta.json`, and is returned as [`CliError::Diverged`]. An interruption or a failed write
/// leaves the folder as it was.
pub fn run(spec: &RunSpec) -> Result<String, CliError> {
    solverlab_solvers::build(&spec.solver, &spec.label).map_err(|e| CliError::Input(format!("--solver: {e}")))?;
    let run = RunConfig {
        index: 0,
        scene_label: spec.scene.name.clone(),
        label: spec.label.clone(),
        scene: spec.scene.clone(),
        solver: spec.solver.clone(),
        frames: spec.frames,
        substeps: spec.substeps,
        params: Vec::new(),
        scene_source: spec.scene_source.clone(),
    };
    let every = spec.positions_every;
    let recording = Recording {
        trace: true,
        trace_iterations: None,
        violation: spec.violation,
        positions: if every == 0 { Frames::None } else { Frames::Every(every) },
        contacts: true,
        forces_every: (every > 0).then_some(every),
        steps_every: None,
    };
    // Written into a staging folder beside --out and swapped in whole: a failed write or an
    // interruption leaves --out as it was.
    let out = &spec.out;
    let staging = crate::output::sibling(out, "staging");
    let _ = std::fs::remove_dir_all(&staging);
    let _registered = crate::interrupt::Temporary::dir(&staging);
    let io = |e: std::io::Error| {
        let _ = std::fs::remove_dir_all(&staging);
        CliError::Io(format!("{}: {e}", out.display()))
    };
    let mut writer = RunWriter::create(&staging, &run.scene, (Vec::new(), Vec::new()), true).map_err(io)?;
    let bar = crate::progress::Progress::new(spec.frames, "frames", &format!("{} · {}", spec.scene.name, spec.label));
    let summary = execute(&run, &recording, None, &mut writer, &|| bar.inc(), true).map_err(io)?;
    bar.finish();
    let completed = summary.steps.last().map_or(0, |r| r.frame);
    match summary.status {
        RunStatus::Failed => {
            drop(writer);
            let _ = std::fs::remove_dir_all(&staging);
            return Err(CliError::Input(format!("--solver: {}", summary.error)));
        }
        RunStatus::Interrupted => {
            drop(writer);
            let _ = std::fs::remove_dir_all(&staging);
            return Err(CliError::Interrupted(format!(
                "interrupted after {completed} frames; nothing was written to {}",
                out.display()
            )));
        }
        _ => {}
    }
    let text = SceneFile::from_scene(&spec.scene).to_toml();
    crate::output::write_atomic(&staging.join("scene.toml"), &text).map_err(io)?;
    let scene_meta = SceneMeta {
        argument: spec.scene_arg.clone(),
        sets: spec.sets.clone(),
        file: "scene.toml".into(),
        hash: crate::output::digest(text.as_bytes()),
        particles: spec.scene.particles.len(),
        constraints: spec.scene.constraints.len(),
        rigid_bodies: spec.scene.rigid.len(),
    };
    writer.finish_single(&run, &summary, scene_meta).map_err(io)?;
    crate::assemble::swap_in(&staging, out)?;
    match summary.status {
        RunStatus::Ok => Ok(summary.hash),
        _ => Err(CliError::Diverged(format!(
            "{}; the rows of frames 0..={completed} are kept in {}",
            summary.error,
            out.display()
        ))),
    }
}
