//! The block-descent family's settings, their range checks and its presets (see [`super`] for
//! the algorithm).

use serde::{Deserialize, Serialize};
use solverlab_core::FieldError;

use super::BlockDescent;
use crate::registry::{count_of, Settings, Typed};

/// How rigid rows are held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Rows {
    /// VBD: every row is a spring (no multipliers); rigid sticks get `stiffness`, contacts
    /// `contact_stiffness`.
    Springs,
    /// AVBD: rigid rows by augmented Lagrangian (a multiplier and a penalty per row).
    #[default]
    Augmented,
}

/// The order of the block steps in a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Sweep {
    /// Particle index order, one after the other.
    #[default]
    Natural,
    /// Colour by colour (greedy colouring of the particles that share rows, per step), each
    /// colour's particles on every core: the same numbers for any thread count.
    Colored,
}

/// Where a step's iterations start (VBD §3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Guess {
    /// `x⁻ + hv + h²g·w`, `w` the last step's acceleration along gravity over `|g|`, in [0, 1].
    #[default]
    Adaptive,
    /// The inertial target `y = x⁻ + hv + h²g`.
    Inertia,
    /// The positions at the start of the step, `x⁻`.
    Previous,
}

/// How the penalty of a hard row is chosen and its multiplier carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Penalty {
    /// AVBD: the penalty starts at `k_start`, grows by `β|C|` after each sweep while the force is
    /// inside its bounds, and decays by γ from step to step; `λ ← αγλ` from step to step.
    #[default]
    Ramp,
    /// The compliant augmented Lagrangian of NVIDIA newton 1.6 (`rigid_compliant_alm`): each row
    /// has a material stiffness `K` (`1/compliance`, or `hard_stiffness`) and an ALM metric `ρ`
    /// from its effective inertia `H = 1/(h²·J M⁻¹ Jᵀ)` (`max(H, 9K)` for equality rows, `H`
    /// for contacts, friction and limits); the force is `k_eff·C + s·λ` with
    /// `k_eff = Kρ/(K + ρ)`, `s = K/(K + ρ)`, no ramp, and `λ ← γλ` from step to step.
    CompliantAlm,
}

/// The family's settings; every field has a default (the `avbd` preset's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DescentConfig {
    /// `augmented` (AVBD) or `springs` (VBD).
    pub rows: Rows,
    /// Sweeps per step, at least 1 (default 10).
    pub iterations: u32,
    /// Stop when the common violation is at most this (m); 0 runs every sweep (default 1e-9).
    pub tolerance: f64,
    /// `springs`: the stiffness of a rigid stick or pin (N/m, default 10⁶).
    pub stiffness: f64,
    /// `springs`: the stiffness of a contact (N/m, default 10⁶).
    pub contact_stiffness: f64,
    /// `augmented`: penalty growth per metre of error, `k += β|C|` (N/m², default 10⁵; 0 keeps
    /// `k` at `k_start`).
    pub beta: f64,
    /// `augmented`: the smallest and starting penalty (N/m, default 10³).
    pub k_start: f64,
    /// `augmented`: the largest penalty (N/m, default 10⁹).
    pub k_max: f64,
    /// `augmented`: error regularisation α in [0, 1] (default 0.99).
    pub alpha: f64,
    /// `augmented`: warm-start decay γ in [0, 1] (default 0.99).
    pub gamma: f64,
    /// Where the iterations start: `adaptive` (default), `inertia` or `previous`.
    pub initial_guess: Guess,
    /// The order of the block steps: `natural` (default) or `colored` (parallel).
    pub order: Sweep,
    /// `augmented`: how penalties and multipliers are chosen, `ramp` (AVBD, default) or
    /// `compliant_alm` (newton 1.6's compliant augmented Lagrangian; `beta` is then unused).
    pub penalty: Penalty,
    /// `compliant_alm`: the material stiffness `K` of a row that the scene makes rigid
    /// (compliance 0: rigid sticks, pins, contacts, joints), N/m (angular joint rows are scaled
    /// to metres, see `descent/rigid`) (default 10⁹, AVBD's largest penalty).
    pub hard_stiffness: f64,
    /// `augmented`, rigid bodies: after the velocities are read off, one more sweep with α = 0
    /// whose dual updates are dropped, which removes the error left at the end of the step
    /// from the positions only (the authors' demo's post-stabilisation; default true).
    pub post_stabilize: bool,
    /// Rigid bodies: which speculative contacts a step keeps, `fastest` or `relative`
    /// ([`crate::SpeculativeMargin`]; base 1 cm, over two steps) (default: `fastest`).
    pub speculative_margin: crate::SpeculativeMargin,
}

impl Default for DescentConfig {
    fn default() -> Self {
        Self {
            speculative_margin: crate::SpeculativeMargin::Fastest,
            rows: Rows::Augmented,
            iterations: 10,
            tolerance: 1e-9,
            stiffness: 1e6,
            contact_stiffness: 1e6,
            beta: 1e5,
            k_start: 1e3,
            k_max: 1e9,
            alpha: 0.99,
            gamma: 0.99,
            initial_guess: Guess::Adaptive,
            order: Sweep::Natural,
            penalty: Penalty::Ramp,
            hard_stiffness: 1e9,
            post_stabilize: true,
        }
    }
}

impl Settings for DescentConfig {
    fn validate(&self) -> Result<(), FieldError> {
        let positive = |name: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(FieldError::new(name, format!("{v} must be a positive number")))
            }
        };
        if self.iterations < 1 {
            return Err(FieldError::new("iterations", format!("{} must be at least 1", self.iterations)));
        }
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return Err(FieldError::new("tolerance", format!("{} must be a finite number ≥ 0 (m)", self.tolerance)));
        }
        positive("stiffness", self.stiffness)?;
        positive("contact_stiffness", self.contact_stiffness)?;
        positive("k_start", self.k_start)?;
        positive("k_max", self.k_max)?;
        positive("hard_stiffness", self.hard_stiffness)?;
        if self.k_max < self.k_start {
            return Err(FieldError::new("k_max", format!("{} is below k_start = {}", self.k_max, self.k_start)));
        }
        if !(self.beta >= 0.0 && self.beta.is_finite()) {
            return Err(FieldError::new("beta", format!("{} must be a finite number ≥ 0 (N/m²)", self.beta)));
        }
        for (name, v) in [("alpha", self.alpha), ("gamma", self.gamma)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(FieldError::new(name, format!("{v} is outside [0, 1]")));
            }
        }
        Ok(())
    }
}

/// `kind = "block_descent"`: VBD and AVBD on particles and on 6-DoF rigid bodies.
pub fn family() -> Typed<DescentConfig> {
    Typed {
        kind: "block_descent",
        summary: "vertex block descent: per-particle 3×3 and per-rigid-body 6×6 Newton steps, springs (VBD) or augmented-Lagrangian hard rows (AVBD)",
        presets: || {
            vec![
                (
                    "vbd",
                    "VBD (Chen et al. 2024): sticks and contacts as springs of 10⁶ N/m, 10 sweeps",
                    DescentConfig { rows: Rows::Springs, ..Default::default() },
                ),
                ("avbd", "AVBD (Giles et al. 2025): penalty ramp β = 10⁵, α = γ = 0.99, 10 sweeps", DescentConfig::default()),
                (
                    "avbd-fixed",
                    "AVBD with a fixed penalty of 10⁶ N/m (β = 0): the multipliers alone hold the rows",
                    DescentConfig { beta: 0.0, k_start: 1e6, ..Default::default() },
                ),
                (
                    "avbd-alm",
                    "AVBD with newton 1.6's compliant augmented Lagrangian: k_eff = Kρ/(K + ρ) from each row's \
                     inertia, no ramp, λ kept by γ = 0.999",
                    DescentConfig { penalty: Penalty::CompliantAlm, beta: 0.0, gamma: 0.999, ..Default::default() },
                ),
            ]
        },
        build: |c, label| {
            c.validate()?;
            Ok(Box::new(BlockDescent::new(c.clone(), label)))
        },
        cap: |c, n| {
            c.iterations = count_of(n);
            c.tolerance = 0.0;
        },
        substeps: |_| 1,
    }
}
