//! The frame loop: substeps, prediction, solve, timing, measurement, divergence check.
//!
//! Substeps are one shared mechanism: a frame of `dt` seconds is `substeps` steps of
//! `h = dt/substeps`, each a Verlet prediction followed by one call to [`Solver::solve`]. No
//! solver re-implements them. The simulation measures wall time around the solver (the solver
//! never times itself) and stops with [`SimError::Diverged`] the moment a coordinate is NaN or
//! infinite, naming the frame and the solver. A run that blows up without producing a NaN stops
//! with [`SimError::BlewUp`] at the end of the frame in which it is measured to: in a scene that
//! puts no energy in (no moving pins, and no start with overlapping bodies or stretched joints:
//! [`starts_violated`]), the kinetic plus gravitational energy has risen above its
//! initial value by more than [`ENERGY_GAIN`] (10) times the scene's [`energy_scale`] (its
//! initial kinetic and elastic energy plus what gravity can release over its height and 1 m
//! more, at least 1 J);
//! in any scene, a
//! stick is stretched beyond [`BLOWUP_STRETCH`] (100) times its rest length or the kinetic
//! energy exceeds [`BLOWUP_ENERGY`] (10⁶) times the energy scale.
//!
//! A run that tears without blowing up goes on (what happens after is part of the result), but
//! the first frame in which a rigid stick is further than [`TEAR`] (50 %) of its rest length from
//! it, or a joint's anchors are further apart than 50 % of the size of the smaller body it
//! holds ([`crate::metrics::StepMetrics::tear`]), is named by [`tear`], and the runner ends such
//! a run with the status `torn`.

use std::time::Instant;

use crate::integrate::{kinematic_pins, predict, KinematicPin};
use crate::metrics::{measure, StepMetrics};
use crate::model::{Scene, State};
use crate::solver::{Observer, SolveError, SolveInfo, Solver, StepContext};
use crate::Vec3;

/// What happened during one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameReport {
    /// 1-based frame index.
    pub frame: u64,
    /// Simulated time at the end of the frame (s).
    pub time: f64,
    /// Inner iterations summed over the frame's substeps.
    pub iterations: usize,
    /// Outer (Newton) iterations summed over the frame's substeps (the inner count for
    /// single-loop solvers).
    pub outer_iterations: usize,
    /// The total normal force of the world colliders after the last substep (N); 0 without
    /// colliders ([`crate::forces::collider_support`]).
    pub support_force: f64,
    /// Why a substep ended unconverged, when the solver said so.
    pub note: Option<&'static str>,
    /// The solver's residual after the last substep.
    pub residual: f64,
    /// Whether every substep stopped on the solver's tolerance.
    pub converged: bool,
    /// Wall time inside [`Solver::solve`], summed over substeps (s).
    pub solve_seconds: f64,
    /// Wall time in the shared Verlet prediction, summed over substeps (s).
    pub integrate_seconds: f64,
    /// Measurements at the end of the frame.
    pub metrics: StepMetrics,
}

/// Why a simulation stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    /// A coordinate became NaN or infinite.
    Diverged {
        /// The frame (1-based) in which it happened.
        frame: u64,
        /// The substep (1-based) in which it happened.
        substep: u32,
        /// The solver's name.
        solver: String,
    },
    /// A measured quantity passed its blow-up bound (see the module docs) without becoming NaN.
    BlewUp {
        /// The frame (1-based) at whose end it was measured.
        frame: u64,
        /// The solver's name.
        solver: String,
        /// What grew, by how much, and the bound.
        quantity: String,
    },
    /// The solver failed for another reason.
    Solver {
        /// The frame (1-based) in which it happened.
        frame: u64,
        /// The solver's name.
        solver: String,
        /// What it said.
        error: SolveError,
    },
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Diverged { frame, substep, solver } => write!(
                f,
                "the simulation diverged (NaN or Inf) in frame {frame}, substep {substep}, under solver `{solver}`"
            ),
            SimError::BlewUp { frame, solver, quantity } => {
                write!(f, "the simulation blew up in frame {frame} under solver `{solver}`: {quantity}")
            }
            SimError::Solver { frame, solver, error } => {
                write!(f, "solver `{solver}` failed in frame {frame}: {error}")
            }
        }
    }
}

impl std::error::Error for SimError {}

/// A scene, its state and a solver, advanced frame by frame.
pub struct Simulation<'a> {
    scene: &'a Scene,
    solver: &'a mut dyn Solver,
    kinematic: Vec<KinematicPin>,
    /// The current state.
    pub state: State,
    substeps: u32,
    h: f64,
    frame: u64,
    multipliers: Vec<(u64, f64)>,
    contacts: Vec<crate::rigid::ContactForce>,
    /// The energy scale of the blow-up bound (J).
    energy_scale: f64,
    /// The total energy at the start (J), and whether the scene puts energy in (moving pins, or
    /// a violated start), when the energy-gain bound does not apply.
    energy_start: f64,
    energy_in: bool,
    /// The tear the run started with ([`crate::metrics::StepMetrics::tear`]).
    start_tear: f64,
    /// Whether a frame keeps the pool's other threads spinning for work ([`crate::par::keep_awake`]).
    awake: bool,
}

/// A rigid stick or a joint torn by more than this fraction tears the run
/// ([`crate::metrics::StepMetrics::tear`]).
pub const TEAR: f64 = 0.5;

/// What tore in a frame measured `m`, if the tear passed [`TEAR`] (in a scene that starts with
/// every stick and joint closed).
pub fn tear(m: &StepMetrics) -> Option<String> {
    tear_beyond(m, 0.0)
}

/// What tore in a frame measured `m`, if the tear passed [`TEAR`] beyond the tear `start` the
/// run started with (Solver2D's stretched chain starts with every joint open by 250 % of its
/// links' size: it tears when a joint opens 50 % further, not in its first frame).
pub fn tear_beyond(m: &StepMetrics, start: f64) -> Option<String> {
    (m.tear > start + TEAR).then(|| {
        format!(
            "a rigid stick or joint is torn by {:.0} % of its length (bound {:.0} %{}; largest stretch {:.3}×)",
            100.0 * m.tear,
            100.0 * (start + TEAR),
            if start > 0.0 { format!(", {:.0} % more than at the start", 100.0 * TEAR) } else { String::new() },
            m.max_stretch
        )
    })
}

/// In a scene that puts no energy in, a total energy above its initial value by more than this
/// many energy scales ([`energy_scale`]) blows the run up. Ten, because position-based
/// dynamics that ignores a spring's compliance legitimately turns its elastic energy into up to
/// 7 times as much kinetic energy (the XPBD spring at 600 Hz), while a rigid chain that tears
/// gains 15 scales.
pub const ENERGY_GAIN: f64 = 10.0;

/// A scene whose contacts start deeper than this (m) starts violated: 1 mm.
pub const STARTS_OVERLAPPING: f64 = 1e-3;

/// A scene whose rigid sticks or joints start further than this fraction of their size from
/// closed ([`crate::metrics::StepMetrics::tear`]) starts violated: 1 %.
pub const STARTS_STRETCHED: f64 = 0.01;

/// Whether the initial state's metrics `m0` show a violated start ([`STARTS_OVERLAPPING`],
/// [`STARTS_STRETCHED`]):
/// bodies that overlap (Solver2D's overlap recovery and confined scenes) or a joint that starts
/// stretched (its stretched chain). Resolving such a start releases energy the scene does not
/// count (a rigid row holds no elastic energy): a position projection that closes a gap `d` in
/// one step of `h` moves the bodies at `d/h`, and how much of that each method keeps is part of
/// what such a scene measures. The energy-gain bound does not apply to them, as to a scene with
/// moving pins; the NaN check and the kinetic-energy and stretch bounds still do.
pub fn starts_violated(m0: &StepMetrics) -> bool {
    m0.max_penetration > STARTS_OVERLAPPING || m0.tear > STARTS_STRETCHED
}

/// A stick longer than this many times its rest length counts as a blow-up.
pub const BLOWUP_STRETCH: f64 = 100.0;

/// Kinetic energy above this many times [`energy_scale`] counts as a blow-up.
pub const BLOWUP_ENERGY: f64 = 1e6;

/// The energy a run can plausibly reach (J): the initial kinetic and elastic energy plus what
/// gravity can release, the movable mass times `|g|` times the scene's initial height span plus
/// 1 m, and at least 1 J (so that a scene at rest without gravity still has a scale).
pub fn energy_scale(scene: &Scene, state: &State) -> f64 {
    let m0 = measure(scene, state, 1.0, &crate::metrics::no_multipliers);
    let g = scene.gravity.norm();
    let up = if g > 0.0 { -scene.gravity / g } else { Vec3::y() };
    let mut mass = 0.0;
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    for (p, x) in scene.particles.iter().zip(&state.x).filter(|(p, _)| p.w > 0.0) {
        mass += 1.0 / p.w;
        (low, high) = (low.min(up.dot(x)), high.max(up.dot(x)));
    }
    for (b, r) in scene.rigid.iter().zip(&state.rigid).filter(|(b, _)| !b.is_fixed()) {
        mass += b.mass();
        (low, high) = (low.min(up.dot(&r.x)), high.max(up.dot(&r.x)));
    }
    let span = if high >= low { high - low } else { 0.0 };
    (m0.kinetic_energy + m0.elastic_energy + mass * g * (span + 1.0)).max(1.0)
}

impl<'a> Simulation<'a> {
    /// Starts at the scene's initial state with `substeps` steps per frame of `dt` seconds.
    pub fn new(scene: &'a Scene, solver: &'a mut dyn Solver, dt: f64, substeps: u32) -> Result<Self, SolveError> {
        let h = dt / substeps.max(1) as f64;
        let state = scene.initial_state(h);
        Self::from_state(scene, solver, state, dt, substeps, 0)
    }

    /// Starts from a given state (a frozen snapshot), counting frames from `frame`.
    pub fn from_state(
        scene: &'a Scene,
        solver: &'a mut dyn Solver,
        state: State,
        dt: f64,
        substeps: u32,
        frame: u64,
    ) -> Result<Self, SolveError> {
        solver.prepare(scene)?;
        let substeps = substeps.max(1);
        let energy_scale = energy_scale(scene, &state);
        let m0 = measure(scene, &state, dt / substeps as f64, &crate::metrics::no_multipliers);
        let moving_pins = scene.constraints.iter().any(|c| match c.kind {
            crate::model::Kind::Pin { velocity, .. } => velocity != Vec3::zeros(),
            _ => false,
        });
        let energy_in = moving_pins || starts_violated(&m0);
        Ok(Self {
            scene,
            solver,
            kinematic: kinematic_pins(scene),
            state,
            substeps,
            h: dt / substeps as f64,
            frame,
            multipliers: Vec::new(),
            contacts: Vec::new(),
            energy_scale,
            energy_start: m0.kinetic_energy + m0.potential_energy - m0.elastic_energy,
            energy_in,
            awake: false,
            start_tear: m0.tear,
        })
    }

    /// What tore in a frame measured `m`, if anything tore beyond the start ([`tear_beyond`]).
    pub fn tear(&self, m: &StepMetrics) -> Option<String> {
        tear_beyond(m, self.start_tear)
    }

    /// The step length `h` (s).
    pub fn h(&self) -> f64 {
        self.h
    }

    /// The solver (for example to read a captured system after a frame).
    pub fn solver(&self) -> &dyn Solver {
        self.solver
    }

    /// The solver, mutably (for example to switch capturing on before a frame).
    pub fn solver_mut(&mut self) -> &mut dyn Solver {
        self.solver
    }

    /// A report of the current state without stepping (frame 0 of a run: no iterations, no
    /// time spent), so that drift can be measured from the initial state.
    pub fn report_now(&self) -> FrameReport {
        FrameReport {
            frame: self.frame,
            time: self.state.time,
            iterations: 0,
            outer_iterations: 0,
            support_force: 0.0,
            note: None,
            residual: 0.0,
            converged: true,
            solve_seconds: 0.0,
            integrate_seconds: 0.0,
            metrics: measure(self.scene, &self.state, self.h, &crate::metrics::no_multipliers),
        }
    }

    /// Frames completed so far.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Keeps the pool's other threads spinning for work through each frame (off by default),
    /// instead of sleeping between the solver's parallel passes ([`crate::par::keep_awake`]).
    /// Only for a run that has its pool to itself, stepped from one of the pool's threads (as
    /// `solverlab simulate` and a one-job `solverlab run` step theirs); the results are the same
    /// bit for bit.
    pub fn keep_workers_awake(&mut self, on: bool) {
        self.awake = on;
    }

    /// Advances one frame.
    pub fn step_frame(&mut self, observer: &mut dyn Observer) -> Result<FrameReport, SimError> {
        match self.awake {
            true => crate::par::keep_awake(|| self.advance(observer)),
            false => self.advance(observer),
        }
    }

    fn advance(&mut self, observer: &mut dyn Observer) -> Result<FrameReport, SimError> {
        let frame = self.frame + 1;
        let mut report = FrameReport {
            frame,
            time: 0.0,
            iterations: 0,
            outer_iterations: 0,
            support_force: 0.0,
            note: None,
            residual: 0.0,
            converged: true,
            solve_seconds: 0.0,
            integrate_seconds: 0.0,
            metrics: StepMetrics::default(),
        };
        for substep in 1..=self.substeps {
            observer.begin_step(frame, substep);
            let t0 = Instant::now();
            predict(self.scene, &self.kinematic, &mut self.state, self.h);
            let t1 = Instant::now();
            let ctx = StepContext { scene: self.scene, h: self.h, substep, substeps: self.substeps };
            let info: SolveInfo = match self.solver.solve(&ctx, &mut self.state, observer) {
                Ok(info) => info,
                // A solver that fails on a NaN it was handed (a factorisation that meets it, say)
                // reports the divergence, not its own symptom of it.
                Err(_) if !self.state.is_finite() => {
                    return Err(SimError::Diverged { frame, substep, solver: self.solver.name().to_string() })
                }
                Err(error) => return Err(SimError::Solver { frame, solver: self.solver.name().to_string(), error }),
            };
            let t2 = Instant::now();
            report.integrate_seconds += (t1 - t0).as_secs_f64();
            report.solve_seconds += (t2 - t1).as_secs_f64();
            report.iterations += info.iterations;
            report.outer_iterations += info.outer;
            report.residual = info.residual;
            report.converged &= info.converged;
            report.note = info.note.or(report.note);
            if !self.state.is_finite() {
                return Err(SimError::Diverged { frame, substep, solver: self.solver.name().to_string() });
            }
        }
        report.time = self.state.time;
        let solver = &*self.solver;
        report.metrics = measure(self.scene, &self.state, self.h, &|id| solver.multiplier(id));
        let m = &report.metrics;
        // Kinetic and gravitational: a compliant stick stretched by an unconverged solve stores
        // elastic energy that is the stretch, not a blow-up.
        let gained = m.kinetic_energy + m.potential_energy - m.elastic_energy - self.energy_start;
        let blown = if report.metrics.max_stretch > BLOWUP_STRETCH {
            Some(format!(
                "a stick is stretched to {:.3e} times its rest length (bound {BLOWUP_STRETCH}×)",
                report.metrics.max_stretch
            ))
        } else if !self.energy_in && gained > ENERGY_GAIN * self.energy_scale {
            Some(format!(
                "the total energy rose by {gained:.3e} J with none put in, above {ENERGY_GAIN} times the scene's energy \
                 scale of {:.3e} J",
                self.energy_scale
            ))
        } else if report.metrics.kinetic_energy > BLOWUP_ENERGY * self.energy_scale {
            Some(format!(
                "the kinetic energy is {:.3e} J, above {BLOWUP_ENERGY:e} times the scene's energy scale of {:.3e} J",
                report.metrics.kinetic_energy, self.energy_scale
            ))
        } else {
            None
        };
        if let Some(quantity) = blown {
            return Err(SimError::BlewUp { frame, solver: solver.name().to_string(), quantity });
        }
        self.frame = frame;
        if self.scene.has_colliders() {
            solver.multipliers(&mut self.multipliers);
            report.support_force = crate::forces::collider_support(&self.multipliers, self.h);
            if self.scene.has_rigid() {
                solver.rigid_contacts(&mut self.contacts);
                report.support_force += crate::rigid::collider_support(&self.contacts);
            }
        }
        Ok(report)
    }
}
