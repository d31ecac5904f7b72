//! Position-based dynamics with a per-iteration stiffness `k`, the method of Müller, Heidelberger,
//! Hennix and Ratcliff, "Position Based Dynamics" (2007), §3.3: the worked example of a solver
//! family brought from outside solverlab.
//!
//! # Algorithm
//!
//! After the shared Verlet prediction, `iterations` Gauss-Seidel sweeps, each:
//!
//! 1. every stick, in scene order: `C = |x_b − x_a| − rest` (an inequality stick only while
//!    violated), `s = C/(w_a + w_b)`, and `x_a += k·w_a·s·n`, `x_b −= k·w_b·s·n` with `n` the unit
//!    vector from `a` to `b`: a fraction `k` of the way to the rest length;
//! 2. every movable particle pushed out of every collider it penetrates, fully, along the
//!    collider's normal (no friction);
//! 3. stop when the common violation ([`solverlab_core::metrics::violation`]) is at most
//!    `tolerance`.
//!
//! Scenes with box bodies, embedded points or 6-DoF rigid bodies are refused in `prepare`.
//!
//! # Residual
//!
//! The largest `|C|` of a stick when it was visited (m).
//!
//! # References
//!
//! * M. Müller, B. Heidelberger, M. Hennix, J. Ratcliff, "Position Based Dynamics", VRIPHYS
//!   2006 / JVCIR 2007: stiffness `k` and its iteration dependence, `(1 − k)^n`.

use serde::{Deserialize, Serialize};
use solverlab_core::constraint::for_each_contact;
use solverlab_core::metrics::violation;
use solverlab_core::model::{Kind, Sense};
use solverlab_core::solver::{IterationReport, Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::{FieldError, Scene, State};
use solverlab_solvers::registry::{count_of, Settings, Typed};

/// The family's settings; every field has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PbdConfig {
    /// Gauss-Seidel sweeps per step, at least 1 (default: 10).
    pub iterations: u32,
    /// The fraction `k` in (0, 1] of each stick's error removed per visit (default: 0.5).
    pub stiffness: f64,
    /// Stop when the common violation is at most this (m); 0 runs every sweep (default: 1e-9).
    pub tolerance: f64,
}

impl Default for PbdConfig {
    fn default() -> Self {
        Self { iterations: 10, stiffness: 0.5, tolerance: 1e-9 }
    }
}

impl Settings for PbdConfig {
    fn validate(&self) -> Result<(), FieldError> {
        if self.iterations < 1 {
            return Err(FieldError::new("iterations", format!("{} must be at least 1", self.iterations)));
        }
        if !(self.stiffness > 0.0 && self.stiffness <= 1.0) {
            return Err(FieldError::new("stiffness", format!("{} is outside (0, 1]", self.stiffness)));
        }
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return Err(FieldError::new("tolerance", format!("{} must be a finite number ≥ 0 (m)", self.tolerance)));
        }
        Ok(())
    }
}

/// `kind = "pbd"`: its presets, its capped form and how to build it.
pub fn family() -> Typed<PbdConfig> {
    Typed {
        kind: "pbd",
        summary:
            "position-based dynamics with a per-iteration stiffness k (Müller et al. 2007), from outside solverlab",
        presets: || {
            vec![
                ("pbd-k05", "PBD, k = 0.5, 10 sweeps", PbdConfig::default()),
                (
                    "pbd-k1",
                    "PBD, k = 1 (Jakobsen's projection), 10 sweeps",
                    PbdConfig { stiffness: 1.0, ..Default::default() },
                ),
            ]
        },
        build: |c, label| {
            c.validate()?;
            Ok(Box::new(Pbd { cfg: c.clone(), label: label.to_string(), w: Vec::new() }))
        },
        cap: |c, n| {
            c.iterations = count_of(n);
            c.tolerance = 0.0;
        },
        substeps: |_| 1,
    }
}

/// The solver.
struct Pbd {
    cfg: PbdConfig,
    label: String,
    w: Vec<f64>,
}

impl Solver for Pbd {
    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, scene: &Scene) -> Result<(), SolveError> {
        if scene.has_rigid() || !scene.bodies.is_empty() || !scene.embedded.is_empty() {
            return Err(SolveError::new("pbd", "this example family takes particles and sticks only"));
        }
        self.w = scene.inverse_masses();
        Ok(())
    }

    fn solve(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
    ) -> Result<SolveInfo, SolveError> {
        let (scene, k) = (ctx.scene, self.cfg.stiffness);
        let x = &mut state.x;
        let mut info = SolveInfo::default();
        for it in 1..=self.cfg.iterations as usize {
            let mut residual = 0.0f64;
            for con in &scene.constraints {
                let Kind::Stick { a, b, rest, sense } = con.kind else { continue };
                let (wa, wb) = (self.w[a], self.w[b]);
                let d = x[b] - x[a];
                let len = d.norm();
                let c = len - rest;
                let violated = match sense {
                    Sense::Equal => true,
                    Sense::AtLeast => c < 0.0,
                    Sense::AtMost => c > 0.0,
                };
                if !violated || wa + wb == 0.0 || len < 1e-12 {
                    continue;
                }
                residual = residual.max(c.abs());
                let s = c / (wa + wb);
                let n = d / len;
                x[a] += n * (k * wa * s);
                x[b] -= n * (k * wb * s);
            }
            for (i, p) in scene.particles.iter().enumerate().filter(|(_, p)| p.w > 0.0) {
                let mut push = solverlab_core::Vec3::zeros();
                for_each_contact(scene, &x[i], p.radius, 0.0, |c| {
                    if c.c < 0.0 {
                        push -= c.normal * c.c;
                    }
                });
                x[i] += push;
            }
            let v = violation(scene, x, state.time, ctx.h, &|_, _| 0.0);
            observer.iteration(&IterationReport {
                iteration: it,
                outer: 1,
                residual,
                violation: Some(v),
                ..Default::default()
            });
            (info.iterations, info.outer, info.residual) = (it, it, residual);
            if v <= self.cfg.tolerance {
                info.converged = true;
                break;
            }
        }
        Ok(info)
    }
}
