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
//!   Baumgarte or soft feedback, relax iterations, friction, restitution);
//! * [`descent`]: vertex block descent on particles and on 6-DoF rigid bodies (VBD, AVBD's
//!   augmented-Lagrangian hard rows, and newton's compliant augmented Lagrangian).
//!
//! A solver is chosen by a [`SolverConfig`], written as a TOML table with a `kind` key (or named
//! by a preset, see [`presets`]), and built by [`build`] into a `Box<dyn Solver>`. The families
//! are listed by [`Registry::builtin`]; an outside crate adds its own ([`registry`]).

pub mod common;
pub mod descent;
pub mod newton;
pub mod pgs;
pub mod registry;
pub mod relax;

use solverlab_core::Solver;

pub use newton::{cg, direct, jacobian};

pub use cg::{cg_solver, CgConfig, CgSolver, Preconditioner};
pub use common::order::{self, Order};
pub use common::SpeculativeMargin;
pub use common::PARALLEL_ROWS;
pub use direct::{direct_solver, DirectConfig, DirectSolver};
pub use pgs::{Feedback, FrictionCone, FrictionPass, PgsConfig, PgsSolver, RelaxSeparation, Rotation, StaticColors};
pub use registry::{Family, Preset, Registry, Settings, SolverConfig, Typed};
pub use relax::{Mode, RelaxConfig, RelaxSolver};

/// A solver setting that is out of range: which one, and why (the field error of
/// [`solverlab_core::FieldError`], shared with scene invariants).
pub type ConfigError = solverlab_core::FieldError;

/// Every builtin preset, in the order `solverlab solver list` shows them
/// ([`Registry::builtin`]'s).
pub fn presets() -> Vec<Preset> {
    Registry::builtin().presets()
}

/// The builtin preset called `name`.
pub fn preset(name: &str) -> Option<Preset> {
    Registry::builtin().preset(name)
}

/// Builds a solver labelled `label` from a configuration (checking its settings).
pub fn build(config: &SolverConfig, label: &str) -> Result<Box<dyn Solver>, ConfigError> {
    config.build(label)
}

impl From<RelaxConfig> for SolverConfig {
    fn from(c: RelaxConfig) -> Self {
        SolverConfig::of(relax::family(), &c)
    }
}

impl From<PgsConfig> for SolverConfig {
    fn from(c: PgsConfig) -> Self {
        SolverConfig::of(pgs::family(), &c)
    }
}

impl From<CgConfig> for SolverConfig {
    fn from(c: CgConfig) -> Self {
        SolverConfig::of(cg::family(), &c)
    }
}

impl From<DirectConfig> for SolverConfig {
    fn from(c: DirectConfig) -> Self {
        SolverConfig::of(direct::family(), &c)
    }
}
