//! The relaxation family's settings, their ranges, and its presets.

use serde::{Deserialize, Serialize};

use super::RelaxSolver;
use crate::common::order::Order;
use crate::ConfigError;

/// Gauss-Seidel (in place) or Jacobi (simultaneous, averaged).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Each projection sees the ones before it (also spelled `gauss-seidel`).
    #[serde(alias = "gauss-seidel")]
    GaussSeidel,
    /// Every projection sees the positions at the start of the sweep.
    Jacobi,
    /// Jacobi with mass splitting (Tonge et al. 2012; also spelled `mass-splitting`): each
    /// particle's mass is shared among the rows that act on it, each row is solved against its
    /// share, and the shares' corrections are summed. Linear momentum is conserved exactly.
    #[serde(alias = "mass-splitting")]
    MassSplitting,
}

/// Settings of the relaxation solver. Every field has a default, so a TOML table may name only
/// what it changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RelaxConfig {
    /// `gauss_seidel` or `jacobi` (default: `gauss_seidel`).
    pub mode: Mode,
    /// Maximum sweeps per step, at least 1 (default: 10). Symmetric order counts a forward and a
    /// backward sweep as one iteration.
    pub iterations: u32,
    /// Stop when the common violation (see the module docs) is at most this, in metres; 0 runs
    /// every iteration (default: 1e-9).
    pub tolerance: f64,
    /// Relaxation factor ω in (0, 2): below 1 under-relaxes, above 1 over-relaxes (SOR)
    /// (default: 1). Colliders are always projected with ω = 1, so that SOR never pushes a
    /// particle out past a surface.
    pub omega: f64,
    /// Gauss-Seidel visiting order (default: `natural`); ignored by Jacobi.
    pub order: Order,
    /// Seed of the `shuffled` order and of the dislocation of coinciding particles (default: 0).
    pub seed: u64,
    /// Jakobsen's square-root approximation `ℓ ≈ (rest² + d·d)/(2·rest)` (default: false).
    pub sqrt_approx: bool,
    /// PBD stiffness `k` in (0, 1]: the fraction of each correction applied (default: 1).
    pub stiffness: f64,
    /// Use `k' = 1 − (1 − k)^(1/n)` so that `n` iterations act like one with `k` (default: false).
    pub stiffness_correction: bool,
    /// XPBD: use each constraint's compliance and accumulate `λ` over the step (default: false).
    pub xpbd: bool,
    /// Chebyshev semi-iterative acceleration of the Jacobi modes (Wang 2015): the estimated
    /// spectral radius ρ in [0, 1) of the plain iteration; 0 turns it off (default: 0). Ignored by
    /// Gauss-Seidel.
    pub chebyshev_rho: f64,
    /// The iteration at which the Chebyshev extrapolation starts, at least 1 (default: 5); the
    /// ones before it are plain.
    pub chebyshev_delay: u32,
    /// Estimate ρ in every step from the plain sweeps before the delay, at most
    /// `chebyshev_rho`, and drop the extrapolation for the rest of a step whose sweeps start to
    /// grow (default: false; see the module docs).
    pub chebyshev_estimate: bool,
    /// Rigid bodies: which speculative contacts a step keeps, `fastest` or `relative`
    /// ([`crate::SpeculativeMargin`]; base 1 cm, over two steps) (default: `fastest`).
    pub speculative_margin: crate::SpeculativeMargin,
}

impl Default for RelaxConfig {
    fn default() -> Self {
        Self {
            speculative_margin: crate::SpeculativeMargin::Fastest,
            mode: Mode::GaussSeidel,
            iterations: 10,
            tolerance: 1e-9,
            omega: 1.0,
            order: Order::Natural,
            seed: 0,
            sqrt_approx: false,
            stiffness: 1.0,
            stiffness_correction: false,
            xpbd: false,
            chebyshev_rho: 0.0,
            chebyshev_delay: 5,
            chebyshev_estimate: false,
        }
    }
}

/// The relaxation family: `kind = "relax"` and its presets.
pub fn family() -> crate::registry::Typed<RelaxConfig> {
    crate::registry::Typed {
        kind: "relax",
        summary: "Jakobsen relaxation: Gauss-Seidel, Jacobi, mass splitting, Chebyshev, SOR, PBD and XPBD",
        presets: relax_presets,
        build: |c, label| Ok(Box::new(RelaxSolver::new(c.clone(), label)?)),
        cap: |c, n| {
            c.iterations = crate::registry::count_of(n);
            c.tolerance = 0.0;
        },
        substeps: |_| 1,
    }
}

impl crate::registry::Settings for RelaxConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        RelaxConfig::validate(self)
    }
}

/// The relaxation presets.
fn relax_presets() -> Vec<(&'static str, &'static str, RelaxConfig)> {
    let relax = RelaxConfig::default();
    vec![
        ("gs", "Jakobsen's relaxation: Gauss-Seidel, 10 iterations, natural order", relax.clone()),
        (
            "jacobi",
            "Jacobi relaxation with per-particle averaging, 10 iterations, ω = 1.5",
            RelaxConfig { mode: Mode::Jacobi, omega: 1.5, ..relax.clone() },
        ),
        (
            "jacobi-split",
            "mass-splitting Jacobi (Tonge 2012): each particle's mass shared among its rows, momentum conserving, 10 iterations, ω = 1.5",
            RelaxConfig { mode: Mode::MassSplitting, omega: 1.5, ..relax.clone() },
        ),
        (
            "jacobi-cheb",
            "Chebyshev-accelerated Jacobi (Wang 2015): ρ measured in each step by sweeps 2–4 (at most 0.99), extrapolation from the 5th sweep, ω = 1.5, 10 iterations",
            RelaxConfig {
                mode: Mode::Jacobi,
                omega: 1.5,
                chebyshev_rho: 0.99,
                chebyshev_delay: 5,
                chebyshev_estimate: true,
                ..relax.clone()
            },
        ),
        ("sor", "Gauss-Seidel with over-relaxation ω = 1.5, 10 iterations", RelaxConfig { omega: 1.5, ..relax.clone() }),
        (
            "xpbd",
            "Gauss-Seidel with XPBD compliance (λ accumulated over the step), 10 iterations",
            RelaxConfig { xpbd: true, ..relax },
        ),
    ]
}

impl RelaxConfig {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        use crate::common::check::{count, non_negative, within};
        count("iterations", self.iterations, 1)?;
        // (0, 2) is where relaxation can converge.
        within("omega", self.omega, (0.0, 2.0), (false, false))?;
        non_negative("tolerance", self.tolerance, "m")?;
        within("chebyshev_rho", self.chebyshev_rho, (0.0, 1.0), (true, false))?;
        count("chebyshev_delay", self.chebyshev_delay, 1)?;
        within("stiffness", self.stiffness, (0.0, 1.0), (false, true))
    }
}
