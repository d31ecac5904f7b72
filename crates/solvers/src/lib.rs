//! # solverlab-solvers
//!
//! One module per solver family, each opening with `# Algorithm`, `# Residual` and
//! `# References`:
//!
//! * [`relax`]: Jakobsen relaxation (Gauss-Seidel, Jacobi, SOR, square-root approximation, PBD
//!   stiffness, XPBD compliance).
//! * [`cg`]: explicit sparse Jacobian, preconditioned conjugate gradient on `J W Jᵀ`,
//!   warm-started from the last frame's multipliers (Gauss-Newton loop in [`newton`]);
//! * [`direct`]: the same loop with faer's sparse Cholesky, the exact reference;
//! * [`pgs`]: sequential impulses / projected Gauss-Seidel at the velocity level (warm starting,
//!   Baumgarte or soft feedback, relax iterations, friction, restitution).
//!
//! A solver is chosen by a [`SolverConfig`], written as a TOML table with a `kind` key (or named
//! by a preset, see [`presets`]), and built by [`build`] into a `Box<dyn Solver>`.

pub mod cg;
mod check;
pub mod direct;
pub mod jacobian;
pub mod newton;
pub mod order;
pub mod pgs;
pub mod relax;
mod rigid_rows;

use serde::{Deserialize, Serialize};
use solverlab_core::Solver;

pub use cg::{cg_solver, CgConfig, CgSolver, Preconditioner};
pub use direct::{direct_solver, DirectConfig, DirectSolver};
pub use order::Order;
pub use pgs::{Feedback, PgsConfig, PgsSolver};
pub use relax::{Mode, RelaxConfig, RelaxSolver, PARALLEL_ROWS};

/// A solver setting that is out of range: which one, and why (the field error of
/// [`solverlab_core::FieldError`], shared with scene invariants).
pub type ConfigError = solverlab_core::FieldError;

/// The fields of the configurations that are counts (iterations, sweeps, substeps, budgets):
/// unsigned (`u32`), each with its minimum checked by `validate`.
pub const COUNT_FIELDS: [&str; 8] = [
    "iterations",
    "relax_iterations",
    "substeps",
    "position_iterations",
    "outer_iterations",
    "cg_max_iterations",
    "cg_budget",
    "active_set_iterations",
];

/// Every solver's settings, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SolverConfig {
    /// Jakobsen relaxation ([`relax`]).
    Relax(RelaxConfig),
    /// Sequential impulses / projected Gauss-Seidel ([`pgs`]).
    Pgs(PgsConfig),
    /// Explicit-Jacobian preconditioned conjugate gradient ([`cg`]).
    Cg(CgConfig),
    /// Sparse Cholesky, the exact reference ([`direct`]).
    Direct(DirectConfig),
}

impl SolverConfig {
    /// The family name (`relax`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            SolverConfig::Relax(_) => "relax",
            SolverConfig::Pgs(_) => "pgs",
            SolverConfig::Cg(_) => "cg",
            SolverConfig::Direct(_) => "direct",
        }
    }

    /// The substeps a run uses when the command line gives none: 1, or the preset's own (the
    /// soft step is defined with 4). Substepping itself is the shared mechanism of
    /// [`solverlab_core::sim::Simulation`].
    pub fn default_substeps(&self) -> u32 {
        match self {
            SolverConfig::Pgs(c) => c.substeps,
            _ => 1,
        }
    }

    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            SolverConfig::Relax(c) => c.validate(),
            SolverConfig::Pgs(c) => c.validate(),
            SolverConfig::Cg(c) => c.validate(),
            SolverConfig::Direct(c) => c.validate(),
        }
    }
}

/// A named configuration users can pick with `--solver NAME`.
#[derive(Clone, Debug)]
pub struct Preset {
    /// The name.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// The settings.
    pub config: SolverConfig,
}

/// The larger of a running residual `r` and a row's residual `res`: the bits of `r.max(res)` for
/// every `res` (a NaN row leaves `r` as it is), in one `maxsd`. `f64::max`'s NaN handling is a
/// chain of several instructions that carries from row to row; it cost the relaxation's coloured
/// sweep about 1 ns per row (15 %).
#[inline(always)]
pub(crate) fn larger(r: f64, res: f64) -> f64 {
    if res > r {
        res
    } else {
        r
    }
}

/// Every preset, in the order `solverlab solver list` shows them.
pub fn presets() -> Vec<Preset> {
    let relax = RelaxConfig::default();
    let pgs = PgsConfig::default();
    vec![
        Preset {
            name: "gs",
            summary: "Jakobsen's relaxation: Gauss-Seidel, 10 iterations, natural order",
            config: SolverConfig::Relax(relax.clone()),
        },
        Preset {
            name: "jacobi",
            summary: "Jacobi relaxation with per-particle averaging, 10 iterations, ω = 1.5",
            config: SolverConfig::Relax(RelaxConfig { mode: Mode::Jacobi, omega: 1.5, ..relax.clone() }),
        },
        Preset {
            name: "jacobi-split",
            summary: "mass-splitting Jacobi (Tonge 2012): each particle's mass shared among its rows, momentum conserving, 10 iterations, ω = 1.5",
            config: SolverConfig::Relax(RelaxConfig { mode: Mode::MassSplitting, omega: 1.5, ..relax.clone() }),
        },
        Preset {
            name: "jacobi-cheb",
            summary: "Chebyshev-accelerated Jacobi (Wang 2015): ρ measured in each step by sweeps 2–4 (at most 0.99), extrapolation from the 5th sweep, ω = 1.5, 10 iterations",
            config: SolverConfig::Relax(RelaxConfig {
                mode: Mode::Jacobi,
                omega: 1.5,
                chebyshev_rho: 0.99,
                chebyshev_delay: 5,
                chebyshev_estimate: true,
                ..relax.clone()
            }),
        },
        Preset {
            name: "sor",
            summary: "Gauss-Seidel with over-relaxation ω = 1.5, 10 iterations",
            config: SolverConfig::Relax(RelaxConfig { omega: 1.5, ..relax.clone() }),
        },
        Preset {
            name: "xpbd",
            summary: "Gauss-Seidel with XPBD compliance (λ accumulated over the step), 10 iterations",
            config: SolverConfig::Relax(RelaxConfig { xpbd: true, ..relax }),
        },
        Preset {
            name: "cg",
            summary: "explicit-Jacobian CG on J W Jᵀ, Jacobi preconditioner, warm-started from the last frame",
            config: SolverConfig::Cg(CgConfig::default()),
        },
        Preset {
            name: "cg-cold",
            summary: "as cg, without warm start (for ablations)",
            config: SolverConfig::Cg(CgConfig { warm_start: 0.0, ..CgConfig::default() }),
        },
        Preset {
            name: "direct",
            summary: "sparse Cholesky (faer) Newton iterations to max |C| ≤ 1e-12: the exact reference",
            config: SolverConfig::Direct(DirectConfig::default()),
        },
        Preset {
            name: "pgs",
            summary: "sequential impulses: 10 iterations, Baumgarte β = 0.2 (split), warm start 1.0, rigid manifolds' normals as blocks",
            config: SolverConfig::Pgs(pgs.clone()),
        },
        Preset {
            name: "pgs-bullet",
            summary: "sequential impulses as Bullet ships them: warm start 0.85, ERP 0.2, 10 iterations, point by point",
            config: SolverConfig::Pgs(PgsConfig { warm_start: 0.85, block: false, ..pgs.clone() }),
        },
        Preset {
            name: "pgs-ngs",
            summary: "PGS then nonlinear Gauss-Seidel as Box2D v2.4: 8 block sweeps, 3 position sweeps on joints, sticks and contacts (β = 0.2 on contacts)",
            config: SolverConfig::Pgs(PgsConfig { iterations: 8, position_iterations: 3, ..pgs.clone() }),
        },
        Preset {
            name: "soft-step",
            summary: "Box2D v3 soft step: 4 substeps × (1 biased, 1 relax); contacts 30 Hz ζ 10, joints 60 Hz ζ 2",
            config: SolverConfig::Pgs(PgsConfig {
                iterations: 1,
                relax_iterations: 1,
                feedback: Feedback::Soft,
                substeps: 4,
                block: false,
                ..pgs
            }),
        },
        Preset {
            name: "tgs-soft",
            summary: "Rapier's TGS-soft: 4 substeps × (1 biased, 2 relax); contacts 30 Hz ζ 5, push ≤ 10 m/s",
            config: SolverConfig::Pgs(tgs_soft()),
        },
    ]
}

/// Rapier's TGS-soft defaults (`IntegrationParameters::tgs_soft`, rapier 0.2x) in solverlab's
/// terms: `num_solver_iterations = 4` substeps, each with `num_internal_pgs_iterations = 1`
/// biased sweep and `num_internal_stabilization_iterations = 2` unbiased ones after the position
/// update; soft contacts at 30 Hz with damping ratio 5; `max_corrective_velocity` 10 m/s as the
/// push-out cap; warm start 1. Rapier lets 1 mm of penetration go uncorrected
/// (`allowed_linear_error`); solverlab's soft rows, like Box2D v3's, act on all of it. Rapier's joints are
/// effectively rigid (10⁶ Hz, ζ 1); here joints keep the soft rows' cap of half the substep rate
/// (120 Hz at 60 Hz × 4), the stiffest the step can follow. Structurally it is the soft step of
/// Box2D v3; what differs is the damping, the relax count, the slop and the push-out cap.
fn tgs_soft() -> PgsConfig {
    PgsConfig {
        iterations: 1,
        relax_iterations: 2,
        feedback: Feedback::Soft,
        substeps: 4,
        contact_hertz: 30.0,
        contact_damping_ratio: 5.0,
        joint_hertz: 1e6,
        joint_damping_ratio: 1.0,
        max_push: 10.0,
        block: false,
        ..PgsConfig::default()
    }
}

/// The preset called `name`.
pub fn preset(name: &str) -> Option<Preset> {
    presets().into_iter().find(|p| p.name == name)
}

/// Builds a solver labelled `label` from validated settings.
pub fn build(config: &SolverConfig, label: &str) -> Result<Box<dyn Solver>, ConfigError> {
    Ok(match config {
        SolverConfig::Relax(c) => Box::new(RelaxSolver::new(c.clone(), label)?),
        SolverConfig::Pgs(c) => Box::new(PgsSolver::new(c.clone(), label)?),
        SolverConfig::Cg(c) => Box::new(cg_solver(c, label)?),
        SolverConfig::Direct(c) => Box::new(direct_solver(c, label)?),
    })
}
