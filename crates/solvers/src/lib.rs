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

mod check;
pub mod descent;
pub mod newton;
pub mod order;
pub mod pgs;
pub mod registry;
pub mod relax;

use solverlab_core::Solver;

pub use newton::{cg, direct, jacobian};

pub use cg::{cg_solver, CgConfig, CgSolver, Preconditioner};
pub use direct::{direct_solver, DirectConfig, DirectSolver};
pub use order::Order;
pub use pgs::{Feedback, PgsConfig, PgsSolver};
pub use registry::{Family, Preset, Registry, Settings, SolverConfig, Typed};
pub use relax::{Mode, RelaxConfig, RelaxSolver, PARALLEL_ROWS};

/// A solver setting that is out of range: which one, and why (the field error of
/// [`solverlab_core::FieldError`], shared with scene invariants).
pub type ConfigError = solverlab_core::FieldError;

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

/// Runs `op` and returns its result; when `parallel`, on a worker thread of the current rayon
/// pool, the caller waiting, unless the caller is one already or the pool has one thread. A
/// parallel pass forked from outside the pool (the command line's frame loop runs on the main
/// thread) injects a job, puts the caller to sleep and wakes it when the pass ends, at every
/// pass: at ten colours a sweep that cost the coloured sweep on the 256² cloth all of its second
/// thread's gain through `simulate`, where the performance experiment, which solves inside
/// `ThreadPool::install`, measured 1.7×. Forked from a worker, the passes of one iteration pay
/// that once. A rayon scope runs its body on a worker thread of the current pool; the body
/// spawns nothing.
pub(crate) fn on_worker<R: Send>(parallel: bool, op: impl FnOnce() -> R + Send) -> R {
    match parallel && rayon::current_thread_index().is_none() && rayon::current_num_threads() > 1 {
        true => rayon::scope(|_| op()),
        false => op(),
    }
}

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
