//! Constraint maths as pure functions of positions and inverse masses.
//!
//! Every constraint is a scalar function `C(x)` with gradient `∇C`; equalities ask `C = 0`,
//! inequalities `C ≥ 0`. Every projection here is the same update, from XPBD (Macklin, Müller,
//! Chentanez 2016, eq. 18) with PBD (Müller et al. 2007) and Jakobsen (2001) as special cases:
//!
//! ```text
//! α̃  = α / h²                                      compliance per step
//! Δλ = (−C − α̃·λ) / (Σᵢ wᵢ |∇ᵢC|² + α̃)              multiplier change
//! Δxᵢ = wᵢ ∇ᵢC · Δλ                                  position change of particle i
//! ```
//!
//! With `α = 0` and `λ` not carried between iterations this is Jakobsen's projection; for an
//! inequality the accumulated multiplier is clamped at `λ ≥ 0`, so that it only ever pushes.

use crate::model::Sense;
use crate::Vec3;

mod colliders;
#[cfg(test)]
mod tests;

pub use colliders::{
    block_contact, box_face_contact, collider_contact, flat_collider, for_each_contact, plane_contact, sphere_contact,
    ColliderRef, Contact, FlatCollider,
};

/// A stick `|xb − xa| ≷ rest`, linearised at the current positions.
///
/// ```text
/// d   = xb − xa,   ℓ = |d|,   n = d/ℓ
/// C   = ℓ − rest                     (Sense::Equal and Sense::AtLeast)
/// C   = rest − ℓ                     (Sense::AtMost; the sign flips so that C ≥ 0 is allowed)
/// ∇a C = −s·n,  ∇b C = s·n           (s = +1, or −1 for AtMost)
/// Σ wᵢ|∇ᵢC|² = wa + wb               (n is a unit vector)
/// ```
///
/// `normal` below is `s·n`, so `∇a C = −normal` and `∇b C = normal` for every sense.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StickRow {
    /// `s·n`: the gradient with respect to `xb` (unit length).
    pub normal: Vec3,
    /// The constraint value `C` in the sense's sign convention (m).
    pub c: f64,
}

/// Linearises a stick at `xa`, `xb`.
///
/// `sqrt_approx` replaces `ℓ = √(d·d)` by one Newton step from the rest length,
/// `ℓ ≈ (rest² + d·d)/(2·rest)`, Jakobsen's square-root approximation: exact when `ℓ = rest` and
/// within `(ℓ − rest)²/(2·rest)` near it. Then `n = d/ℓ` costs a division and no square root.
///
/// When the particles coincide (`ℓ` below 1e-12 m), `n` is `fallback` (a seeded random unit
/// vector, Jakobsen's "dislocate slightly") so that no NaN appears.
#[inline]
pub fn stick_row(
    xa: &Vec3,
    xb: &Vec3,
    rest: f64,
    sense: Sense,
    sqrt_approx: bool,
    fallback: impl FnOnce() -> Vec3,
) -> StickRow {
    let d = xb - xa;
    let dd = d.dot(&d);
    let len = if sqrt_approx { (rest * rest + dd) / (2.0 * rest) } else { dd.sqrt() };
    // One division, then multiplications: a sweep is bound by its divisions.
    let n = if dd > 1e-24 { d * (1.0 / len) } else { fallback() };
    match sense {
        Sense::Equal | Sense::AtLeast => StickRow { normal: n, c: len - rest },
        Sense::AtMost => StickRow { normal: -n, c: rest - len },
    }
}

/// `C` of a stick in its sense's sign convention, exactly (with a square root).
#[inline]
pub fn stick_value(xa: &Vec3, xb: &Vec3, rest: f64, sense: Sense) -> f64 {
    let len = (xb - xa).norm();
    match sense {
        Sense::Equal | Sense::AtLeast => len - rest,
        Sense::AtMost => rest - len,
    }
}

/// The curvature of a stick: its Hessian over `(xa, xb)`, for the Newton family's full Newton
/// step (the geometric stiffness `−λ ∇²C` of the Lagrangian).
///
/// ```text
/// ∇b C = s·n,  ∇a C = −s·n                  (s = +1, or −1 for AtMost; n = (xb − xa)/ℓ)
/// ∂n/∂xb = (I − n nᵀ)/ℓ = P/ℓ,  ∂n/∂xa = −P/ℓ
/// ∇²C = (s/ℓ) · [ P  −P ]                   (blocks xa xa, xa xb; xb xa, xb xb)
///               [ −P  P ]
/// ```
///
/// Returns `κ = s/ℓ` (1/m) and `n`, so that `∇²C = κ·[P −P; −P P]` with `P = I − n nᵀ`; `None`
/// where the gradient is undefined (coinciding particles). `P` has the two unit tangents of `n`
/// as eigenvectors with eigenvalue 1, so `[P −P; −P P] = Σₜ [−t; t][−t; t]ᵀ` over them.
pub fn stick_curvature(xa: &Vec3, xb: &Vec3, sense: Sense) -> Option<(f64, Vec3)> {
    let d = xb - xa;
    let len = d.norm();
    if len < 1e-12 {
        return None;
    }
    let s = if sense == Sense::AtMost { -1.0 } else { 1.0 };
    Some((s / len, d / len))
}

/// The gradients `(∇a C, ∇b C)` of a stick; `None` where it is undefined (coinciding particles).
pub fn stick_gradient(xa: &Vec3, xb: &Vec3, sense: Sense) -> Option<(Vec3, Vec3)> {
    let d = xb - xa;
    let len = d.norm();
    if len < 1e-12 {
        return None;
    }
    let s = if sense == Sense::AtMost { -1.0 } else { 1.0 };
    let n = s * d / len;
    Some((-n, n))
}

/// The XPBD multiplier change for one row (see the module docs).
///
/// * `c`: constraint value; `w_grad2`: `Σ wᵢ|∇ᵢC|²`; `alpha_tilde`: `α/h²`;
/// * `lambda`: the multiplier accumulated so far in this step (0 for plain PBD);
/// * `unilateral`: clamp the accumulated multiplier to `λ + Δλ ≥ 0`.
///
/// Returns 0 when nothing can move (`w_grad2 + α̃ = 0`, both particles immovable).
#[inline]
pub fn delta_lambda(c: f64, w_grad2: f64, alpha_tilde: f64, lambda: f64, unilateral: bool) -> f64 {
    let denom = w_grad2 + alpha_tilde;
    if denom <= 0.0 {
        return 0.0;
    }
    let dl = (-c - alpha_tilde * lambda) / denom;
    if unilateral {
        (lambda + dl).max(0.0) - lambda
    } else {
        dl
    }
}

/// Position-level Coulomb friction on one contact row, applied after its normal projection
/// (Macklin, Müller, Chentanez, Kim, "Unified Particle Physics for Real-Time Applications",
/// 2014, §6.1; Müller et al., "Detailed Rigid Body Simulation with Extended Position Based
/// Dynamics", 2020, §3.5). The row's point is `Σ cₖxₖ` over `particles` with coefficients `cₖ`
/// along the unit normal `n` (one particle: `c = 1`; two bodies: `+cᴬ` and `−cᴮ`), so its
/// tangential displacement over the step, from the start-of-step positions `x_start`, is
///
/// ```text
/// D  = Σ cₖ (xₖ − xₖ_start),   Dₜ = D − (D·n) n,    K = Σ wₖ cₖ²
/// λₜ' = clamp(λₜ − Dₜ/K, |λₜ'| ≤ μ λₙ)          accumulated tangential multiplier (kg·m)
/// xₖ += wₖ cₖ (λₜ' − λₜ)
/// ```
///
/// While the whole displacement can be cancelled within the cone it is (static friction: the
/// point stays where it started the step); beyond it the correction is limited to `μ λₙ`, the
/// normal multiplier times μ (dynamic friction). Called once per iteration, the accumulated `λₜ`
/// keeps repeated calls from removing the displacement twice. Velocities are then read off the
/// corrected positions, `(x − x*)/h`, so a block that slides reports the speed it slides at.
/// Returns the new `λₜ` (a tangent vector; the friction force is `λₜ/h²`).
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn coulomb_friction(
    x: &mut [Vec3],
    x_start: &[Vec3],
    w: &[f64],
    particles: &[usize],
    coeffs: &[f64],
    n: &Vec3,
    lambda_n: f64,
    mu: f64,
    lambda_t: Vec3,
) -> Vec3 {
    if mu <= 0.0 || lambda_n <= 0.0 {
        return lambda_t;
    }
    let k: f64 = particles.iter().zip(coeffs).map(|(&i, c)| w[i] * c * c).sum();
    if k <= 0.0 {
        return lambda_t;
    }
    let d: Vec3 = particles.iter().zip(coeffs).map(|(&i, c)| (x[i] - x_start[i]) * *c).sum();
    let dt = d - n * d.dot(n);
    let mut new = lambda_t - dt / k;
    let limit = mu * lambda_n;
    let norm = new.norm();
    if norm > limit {
        new *= limit / norm;
    }
    let change = new - lambda_t;
    for (&i, c) in particles.iter().zip(coeffs) {
        x[i] += change * (w[i] * c);
    }
    new
}
