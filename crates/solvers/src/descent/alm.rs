//! The coefficients of the compliant augmented Lagrangian (`penalty = "compliant_alm"`, the
//! `avbd-alm` preset), as NVIDIA newton 1.6 describes and implements it for its VBD solver's
//! rigid rows (`rigid_compliant_alm = True`).
//!
//! A row has a material stiffness `K` (N/m: `1/compliance`, or `hard_stiffness` for a row the
//! scene makes rigid) and an ALM metric `ρ` chosen from its effective inertia
//! `H = 1/(h²·J M⁻¹ Jᵀ)` (N/m: the stiffness of the row's own inertia over one step):
//! `ρ = max(H, 9K)` for an equality row (so that a single block step realises at least
//! `0.9K`), `ρ = H` for a contact, a friction direction or a limit. Its force is
//!
//! ```text
//! F = clamp(k_eff·C + s·λ, fmin, fmax),  k_eff = Kρ/(K + ρ),  s = K/(K + ρ)
//! ```
//!
//! and its dual step `λ ← s·(λ + ρC)`, projected on the bounds, which is `λ ← F` at the
//! current `C` (since `s·ρ = k_eff`): the AVBD update with a fixed penalty `k_eff` and the
//! multiplier shrunk by `s`. A fixed point has `λ = K·C`: the row settles where the material
//! law holds, not at `C = 0`. Friction directions have no material stiffness (`K = ∞`:
//! `k_eff = ρ`, `s = 1`).
//!
//! # References
//!
//! * NVIDIA et al., newton 1.6 (2026), `SolverVBD(rigid_compliant_alm=True)`: the changelog
//!   entry "unified compliant ALM for experimental SolverVBD rigid contacts, structural joints,
//!   drives, and limits" and `newton/_src/solvers/vbd/rigid_vbd_kernels.py`
//!   (`_compliant_alm_coefficients`, `_alm_relaxed_ascent`, `_bilateral_auto_rho`,
//!   `_contact_auto_normal_rho`).

/// The smallest `k_eff/K` an equality row realises in one block step: `ρ ≥ 0.9/(1 − 0.9)·K`.
const EQUALITY_RHO_OVER_K: f64 = 9.0;

/// `ρ` of a row with effective inertia `inertia` (`H`, N/m) and material stiffness `k` (N/m):
/// `max(H, 9K)` for an equality row, `H` otherwise.
pub(super) fn rho(inertia: f64, k: f64, equality: bool) -> f64 {
    if equality {
        inertia.max(EQUALITY_RHO_OVER_K * k)
    } else {
        inertia
    }
}

/// `(k_eff, s)` of a row with material stiffness `k` and metric `rho` (both N/m, positive;
/// `k = ∞` gives `(ρ, 1)`), each computed in the form that keeps the smaller one accurate.
pub(super) fn coefficients(k: f64, rho: f64) -> (f64, f64) {
    if k >= rho {
        // s = 1/(1 + ρ/K) near 1, k_eff = ρ·s.
        let s = 1.0 / (1.0 + rho / k);
        (rho * s, s)
    } else {
        // a = ρ/(K + ρ) near 1, k_eff = K·a, s = (K/ρ)·a small.
        let a = 1.0 / (1.0 + k / rho);
        (k * a, k / rho * a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficients_follow_the_formulas() {
        for (k, rho) in [(1e9, 3600.0), (10.0, 3600.0), (1e6, 9e6), (5.0, 5.0)] {
            let (k_eff, s) = coefficients(k, rho);
            assert!((k_eff / (k * rho / (k + rho)) - 1.0).abs() < 1e-14);
            assert!((s / (k / (k + rho)) - 1.0).abs() < 1e-14);
        }
        assert_eq!(coefficients(f64::INFINITY, 3600.0), (3600.0, 1.0));
        assert_eq!(rho(3600.0, 1e9, true), 9e9);
        assert_eq!(rho(3600.0, 1e9, false), 3600.0);
    }
}
