//! `solverlab simulate`: one scene, one solver, tidy CSVs.
//!
//! Data flow: scene → [`Simulation`] (predict, solve, measure) → [`Recorder`] (an observer that
//! streams trace rows) → CSV files → `meta.json`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use solverlab_core::hash::{hex, state_hash};
use solverlab_core::sim::{FrameReport, SimError, Simulation};
use solverlab_core::solver::{IterationReport, Observer};
use solverlab_core::Scene;
use solverlab_scenes::file::SceneFile;
use solverlab_solvers::SolverConfig;

use crate::output::{num, write_atomic, CsvOut};
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
}

/// Columns of `steps.csv`. `violation` is the common yardstick of every family
/// (`solverlab_core::metrics::violation`, m); `residual` is each family's own (relax: m,
/// PGS: m/s, CG and direct: relative, dimensionless); `max_violation` and `rms_violation` are the
/// geometric `|C|` of equality rows alone; `support_force` is the total normal force of the world
/// colliders (N).
#[rustfmt::skip]
pub const STEP_COLUMNS: [&str; 29] = [
    "frame", "time", "iterations", "outer_iterations", "residual", "converged", "violation", "max_violation",
    "rms_violation", "max_penetration", "max_stretch", "kinetic_energy", "potential_energy", "momentum_x",
    "momentum_y", "momentum_z", "angular_momentum_x", "angular_momentum_y", "angular_momentum_z", "com_x", "com_y", "com_z", "rms_speed", "body_drift", "top_drift", "in_place",
    "support_force", "solve_seconds", "integrate_seconds",
];

/// Columns of `forces.csv`: one row per active constraint row (pins and friction pairs
/// combined) per recorded frame; see `solverlab_core::forces` for kinds and signs.
pub const FORCE_COLUMNS: [&str; 5] = ["frame", "kind", "a", "b", "force"];

/// The `forces.csv` rows of one frame from a solver's multipliers.
pub fn force_rows(scene: &Scene, frame: u64, multipliers: &[(u64, f64)], h: f64) -> Vec<[String; 5]> {
    solverlab_core::forces::forces(scene, multipliers, h)
        .into_iter()
        .map(|f| [frame.to_string(), f.kind.to_string(), f.a, f.b, num(f.force)])
        .collect()
}

/// Columns of `bodies.csv`, written beside `positions.csv` for scenes with box bodies: each
/// body's centre (m) and orientation as a unit quaternion `(w, x, y, z)`, the rotation from the
/// body's own axes to the world (identity as the scene builds it). With the half extents in the
/// scene file, this redraws every box.
pub const BODY_COLUMNS: [&str; 15] =
    ["frame", "body", "cx", "cy", "cz", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"];

/// The `bodies.csv` rows of one frame: the particle box bodies (numbered first; their
/// velocity columns are empty, since a tetrahedron's velocity is its particles'), then the rigid
/// bodies (numbered after them), with `v` (m/s) and the world angular velocity `w` (rad/s).
pub fn body_rows(
    scene: &solverlab_core::Scene,
    frame: u64,
    x: &[solverlab_core::Vec3],
    rigid: &[solverlab_core::rigid::RigidState],
) -> Vec<Vec<String>> {
    let particle_bodies = scene.bodies.iter().enumerate().map(|(k, b)| {
        let (c, _) = b.frame(x);
        let q = b.orientation(x);
        let v = [c.x, c.y, c.z, q.w, q.i, q.j, q.k];
        [frame.to_string(), k.to_string()]
            .into_iter()
            .chain(v.map(num))
            .chain(std::iter::repeat_n(String::new(), 6))
            .collect()
    });
    let n = scene.bodies.len();
    let rigid_bodies = rigid.iter().enumerate().map(|(k, r)| {
        let q = r.q.quaternion();
        let v = [r.x.x, r.x.y, r.x.z, q.w, q.i, q.j, q.k, r.v.x, r.v.y, r.v.z, r.w.x, r.w.y, r.w.z];
        [frame.to_string(), (n + k).to_string()].into_iter().chain(v.map(num)).collect()
    });
    particle_bodies.chain(rigid_bodies).collect()
}

/// Columns of `contacts.csv`: one row per rigid-body contact point per recorded frame, at the
/// start of the frame's last (sub)step. `body_b` is a rigid body index (numbered as in
/// `bodies.csv`) or a world collider (`plane0`, `block2`, …); the normal points from `b` to `a`;
/// `depth` is the penetration (m, negative for a speculative gap); forces in N.
pub const CONTACT_COLUMNS: [&str; 12] =
    ["frame", "body_a", "body_b", "x", "y", "z", "nx", "ny", "nz", "depth", "normal_force", "tangent_force"];

/// The `contacts.csv` rows of one frame.
pub fn contact_rows(
    scene: &solverlab_core::Scene,
    frame: u64,
    contacts: &[solverlab_core::rigid::ContactForce],
) -> Vec<Vec<String>> {
    let n = scene.bodies.len();
    contacts
        .iter()
        .map(|c| {
            let k = &c.contact;
            let b = match k.b {
                solverlab_core::rigid::Other::Body(j) => (n + j).to_string(),
                other => other.name(),
            };
            let p = &k.point;
            let v = [p.point.x, p.point.y, p.point.z, p.normal.x, p.normal.y, p.normal.z, -p.separation];
            [frame.to_string(), (n + k.a).to_string(), b]
                .into_iter()
                .chain(v.map(num))
                .chain([num(c.normal_force), num(c.tangent_force)])
                .collect()
        })
        .collect()
}

/// Columns of `trace.csv`.
pub const TRACE_COLUMNS: [&str; 8] =
    ["frame", "substep", "outer", "iteration", "residual", "residual_rms", "delta_lambda", "violation"];

/// The `steps.csv` fields of one frame report.
pub fn step_fields(r: &FrameReport) -> Vec<String> {
    let m = &r.metrics;
    vec![
        r.frame.to_string(),
        num(r.time),
        r.iterations.to_string(),
        r.outer_iterations.to_string(),
        num(r.residual),
        (r.converged as u8).to_string(),
        num(m.violation),
        num(m.max_violation),
        num(m.rms_violation),
        num(m.max_penetration),
        num(m.max_stretch),
        num(m.kinetic_energy),
        num(m.potential_energy),
        num(m.momentum.x),
        num(m.momentum.y),
        num(m.momentum.z),
        num(m.angular_momentum.x),
        num(m.angular_momentum.y),
        num(m.angular_momentum.z),
        num(m.com.x),
        num(m.com.y),
        num(m.com.z),
        num(m.rms_speed),
        num(m.body_drift),
        num(m.top_drift),
        (m.in_place as u8).to_string(),
        num(r.support_force),
        num(r.solve_seconds),
        num(r.integrate_seconds),
    ]
}

/// An observer that streams every inner iteration to `trace.csv`.
pub struct Recorder {
    trace: CsvOut,
    frame: u64,
    substep: u32,
    violation: bool,
    error: Option<std::io::Error>,
}

impl Observer for Recorder {
    fn wants_violation(&self) -> bool {
        self.violation
    }
    fn begin_step(&mut self, frame: u64, substep: u32) {
        self.frame = frame;
        self.substep = substep;
    }
    fn iteration(&mut self, r: &IterationReport) {
        let opt = |x: Option<f64>| x.map(num).unwrap_or_default();
        let row = [
            self.frame.to_string(),
            self.substep.to_string(),
            r.outer.to_string(),
            r.iteration.to_string(),
            num(r.residual),
            opt(r.residual_rms),
            opt(r.delta_lambda),
            opt(r.violation),
        ];
        if let Err(e) = self.trace.row(row) {
            self.error.get_or_insert(e);
        }
    }
}

#[derive(Serialize)]
struct Meta<'a> {
    solverlab_version: &'static str,
    commit: &'static str,
    rustc: &'static str,
    status: &'a str,
    error: Option<String>,
    scene: SceneMeta<'a>,
    solver: SolverMeta<'a>,
    frames_requested: u64,
    frames_completed: u64,
    dt: f64,
    substeps: u32,
    h: f64,
    unconverged_frames: u64,
    notes: Vec<Note>,
    final_state_hash: String,
}

/// Why frames ended above the solver's tolerance, as the solver explained it, and how many.
#[derive(Clone, Debug, Serialize)]
pub struct Note {
    /// The solver's explanation.
    pub note: &'static str,
    /// Frames that ended unconverged for this reason.
    pub frames: u64,
}

/// The unconverged frames of a run, and the solver's notes on them.
pub fn convergence_notes<'r>(reports: impl IntoIterator<Item = &'r FrameReport>) -> (u64, Vec<Note>) {
    let mut unconverged = 0;
    let mut notes: Vec<Note> = Vec::new();
    for r in reports.into_iter().filter(|r| !r.converged) {
        unconverged += 1;
        if let Some(text) = r.note {
            match notes.iter_mut().find(|n| n.note == text) {
                Some(n) => n.frames += 1,
                None => notes.push(Note { note: text, frames: 1 }),
            }
        }
    }
    (unconverged, notes)
}

#[derive(Serialize)]
struct SceneMeta<'a> {
    argument: &'a str,
    sets: &'a [String],
    resolved: SceneFile,
}

#[derive(Serialize)]
struct SolverMeta<'a> {
    label: &'a str,
    config: &'a SolverConfig,
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> CliError + '_ {
    move |e| CliError::Io(format!("{}: {e}", path.display()))
}

/// Runs the simulation and writes `steps.csv`, `trace.csv`, `positions.csv` and `forces.csv`
/// (with `bodies.csv` for scenes with box bodies) and `meta.json`.
///
/// A divergence stops the run, keeps every row written so far, records the error in
/// `meta.json`, and is returned as [`CliError::Diverged`].
pub fn run(spec: &RunSpec) -> Result<String, CliError> {
    let mut solver =
        solverlab_solvers::build(&spec.solver, &spec.label).map_err(|e| CliError::Input(format!("--solver: {e}")))?;
    std::fs::create_dir_all(&spec.out).map_err(io_err(&spec.out))?;
    let path = |name: &str| spec.out.join(name);
    let mut steps = CsvOut::create(&path("steps.csv"), &STEP_COLUMNS).map_err(io_err(&spec.out))?;
    let trace = CsvOut::create(&path("trace.csv"), &TRACE_COLUMNS).map_err(io_err(&spec.out))?;
    let mut positions =
        CsvOut::create(&path("positions.csv"), &["frame", "particle", "x", "y", "z"]).map_err(io_err(&spec.out))?;
    let mut forces = CsvOut::create(&path("forces.csv"), &FORCE_COLUMNS).map_err(io_err(&spec.out))?;
    let mut multipliers = Vec::new();
    let mut recorder = Recorder { trace, frame: 0, substep: 0, violation: spec.violation, error: None };
    let scene = &spec.scene;
    let mut bodies = match (scene.bodies.is_empty() && scene.rigid.is_empty()) || spec.positions_every == 0 {
        true => None,
        false => Some(CsvOut::create(&path("bodies.csv"), &BODY_COLUMNS).map_err(io_err(&spec.out))?),
    };
    let mut contacts = match scene.rigid.is_empty() || spec.positions_every == 0 {
        true => None,
        false => Some(CsvOut::create(&path("contacts.csv"), &CONTACT_COLUMNS).map_err(io_err(&spec.out))?),
    };
    let mut contact_forces = Vec::new();

    let mut sim = Simulation::new(scene, solver.as_mut(), scene.dt, spec.substeps)
        .map_err(|e| CliError::Input(format!("--solver: {e}")))?;
    let write_positions = |positions: &mut CsvOut,
                           bodies: &mut Option<CsvOut>,
                           frame: u64,
                           state: &solverlab_core::State|
     -> std::io::Result<()> {
        for (i, p) in state.x.iter().enumerate() {
            positions.row([frame.to_string(), i.to_string(), num(p.x), num(p.y), num(p.z)])?;
        }
        if let Some(out) = bodies {
            for row in body_rows(scene, frame, &state.x, &state.rigid) {
                out.row(row)?;
            }
        }
        Ok(())
    };
    // Frame 0: the initial state, so that drift can be normalised by it.
    steps.row(step_fields(&sim.report_now())).map_err(io_err(&spec.out))?;
    if spec.positions_every > 0 {
        write_positions(&mut positions, &mut bodies, 0, &sim.state).map_err(io_err(&spec.out))?;
    }

    let bar = crate::progress_bar(spec.frames, &format!("{} · {}", scene.name, spec.label));
    let mut failure = None;
    let mut reports = Vec::new();
    for _ in 0..spec.frames {
        if crate::experiment::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            // Dropping the unfinished writers deletes their temporaries; files of an earlier
            // run in the same folder stay as they were.
            bar.finish_and_clear();
            return Err(CliError::Interrupted(format!(
                "interrupted after {} frames; nothing was written to {}",
                sim.frame(),
                spec.out.display()
            )));
        }
        match sim.step_frame(&mut recorder) {
            Ok(report) => {
                steps.row(step_fields(&report)).map_err(io_err(&spec.out))?;
                reports.push(report);
                if spec.positions_every > 0 && report.frame % spec.positions_every == 0 {
                    write_positions(&mut positions, &mut bodies, report.frame, &sim.state)
                        .map_err(io_err(&spec.out))?;
                    if let Some(out) = contacts.as_mut() {
                        sim.solver().rigid_contacts(&mut contact_forces);
                        for row in contact_rows(scene, report.frame, &contact_forces) {
                            out.row(row).map_err(io_err(&spec.out))?;
                        }
                    }
                    sim.solver().multipliers(&mut multipliers);
                    for row in force_rows(scene, report.frame, &multipliers, sim.h()) {
                        forces.row(row).map_err(io_err(&spec.out))?;
                    }
                }
                bar.inc(1);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    bar.finish_and_clear();
    if let Some(e) = recorder.error.take() {
        return Err(io_err(&spec.out)(e));
    }
    let completed = sim.frame();
    let hash = hex(state_hash(&sim.state));
    let (unconverged_frames, notes) = convergence_notes(&reports);
    let meta = Meta {
        solverlab_version: env!("CARGO_PKG_VERSION"),
        commit: env!("SOLVERLAB_COMMIT"),
        rustc: env!("SOLVERLAB_RUSTC"),
        status: if failure.is_some() { "diverged" } else { "ok" },
        error: failure.as_ref().map(SimError::to_string),
        scene: SceneMeta { argument: &spec.scene_arg, sets: &spec.sets, resolved: SceneFile::from_scene(scene) },
        solver: SolverMeta { label: &spec.label, config: &spec.solver },
        frames_requested: spec.frames,
        frames_completed: completed,
        dt: scene.dt,
        substeps: spec.substeps,
        h: sim.h(),
        unconverged_frames,
        notes,
        final_state_hash: hash.clone(),
    };
    drop(sim);
    steps.commit().map_err(io_err(&spec.out))?;
    recorder.trace.commit().map_err(io_err(&spec.out))?;
    positions.commit().map_err(io_err(&spec.out))?;
    forces.commit().map_err(io_err(&spec.out))?;
    if let Some(b) = bodies {
        b.commit().map_err(io_err(&spec.out))?;
    }
    if let Some(c) = contacts {
        c.commit().map_err(io_err(&spec.out))?;
    }
    let json = serde_json::to_string_pretty(&meta).expect("meta serialises");
    write_atomic(&path("meta.json"), &(json + "\n")).map_err(io_err(&spec.out))?;
    match failure {
        Some(e) => Err(CliError::Diverged(format!(
            "{e}; the rows of frames 0..={completed} are kept in {}",
            spec.out.display()
        ))),
        None => Ok(hash),
    }
}
