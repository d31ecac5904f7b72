//! # solverlab-solvers
//!
//! One module per solver family, each opening with `# Algorithm`, `# Residual` and
//! `# References`:
//!
//! * [`relax`]: Jakobsen relaxation (Gauss-Seidel, Jacobi, SOR, square-root approximation, PBD
//!   stiffness, XPBD compliance).
//!
//! A solver is chosen by a [`SolverConfig`], written as a TOML table with a `kind` key (or named
//! by a preset, see [`presets`]), and built by [`build`] into a `Box<dyn Solver>`.

pub mod order;
pub mod relax;

use serde::{Deserialize, Serialize};
use solverlab_core::Solver;

pub use order::Order;
pub use relax::{Mode, RelaxConfig, RelaxSolver};

/// A parameter that is out of range: which one, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    /// The parameter name, as written in TOML.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl ConfigError {
    /// A new error for `field`.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { field: field.into(), problem: problem.into() }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for ConfigError {}

/// Every solver's settings, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SolverConfig {
    /// Jakobsen relaxation ([`relax`]).
    Relax(RelaxConfig),
}

impl SolverConfig {
    /// The family name (`relax`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            SolverConfig::Relax(_) => "relax",
        }
    }

    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            SolverConfig::Relax(c) => c.validate(),
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

/// Every preset, in the order `solverlab solver list` shows them.
pub fn presets() -> Vec<Preset> {
    let relax = RelaxConfig::default();
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
            name: "sor",
            summary: "Gauss-Seidel with over-relaxation ω = 1.5, 10 iterations",
            config: SolverConfig::Relax(RelaxConfig { omega: 1.5, ..relax.clone() }),
        },
        Preset {
            name: "xpbd",
            summary: "Gauss-Seidel with XPBD compliance (λ accumulated over the step), 10 iterations",
            config: SolverConfig::Relax(RelaxConfig { xpbd: true, ..relax }),
        },
    ]
}

/// The preset called `name`.
pub fn preset(name: &str) -> Option<Preset> {
    presets().into_iter().find(|p| p.name == name)
}

/// Builds a solver labelled `label` from validated settings.
pub fn build(config: &SolverConfig, label: &str) -> Result<Box<dyn Solver>, ConfigError> {
    Ok(match config {
        SolverConfig::Relax(c) => Box::new(RelaxSolver::new(c.clone(), label)?),
    })
}
