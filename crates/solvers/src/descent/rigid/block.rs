//! One rigid body's block step (step 4 of [`super`]): the 6 × 6 Newton step on its part of the
//! step's energy, and the colouring of the bodies for the parallel order.

use nalgebra::{Matrix3, Matrix6, UnitQuaternion};
use solverlab_core::Vec3;

use super::rows::{friction_forces, Poses, Row, Vec6};

/// A body's inertia for its block step: mass, world inertia tensor, and its inertial target
/// `y` (centre and orientation).
pub(super) struct Inertia {
    pub(super) mass: f64,
    pub(super) tensor: Matrix3<f64>,
    pub(super) x: Vec3,
    pub(super) q: UnitQuaternion<f64>,
}

/// Body `i`'s block step from the poses `p`: `Δ = LHS⁻¹·RHS` with
///
/// ```text
/// LHS = M/h² + Σᵣ (kᵣ JᵣJᵣᵀ + Gᵣ),   RHS = M/h²·(x − y) + Σᵣ Jᵣ Fᵣ
/// ```
///
/// over the rows `touching` it (`M = diag(m·I, I_world)`, `x − y` the centre's offset and the
/// rotation vector `log(q·q_y⁻¹)`, `Fᵣ = clamp(kᵣCᵣ + sᵣλᵣ, fmin, fmax)`; the penalty term only
/// while the force is inside its bounds, `Gᵣ` the lumped angular curvature times `|Fᵣ|`). The
/// new pose is `x − Δ_lin`, `exp(−Δ_ang)·q`. Returns `Δ`.
pub(super) fn block_step(rows: &[Row], touching: &[usize], p: &Poses, i: usize, inertia: &Inertia, h: f64) -> Vec6 {
    let s = &p.st[i];
    let inv_h2 = 1.0 / (h * h);
    let mut lhs = Matrix6::zeros();
    let mut rhs = Vec6::zeros();
    // Inertia: M/h² and its gradient at the current pose.
    let angular = inertia.tensor * inv_h2;
    for d in 0..3 {
        lhs[(d, d)] = inertia.mass * inv_h2;
    }
    lhs.fixed_view_mut::<3, 3>(3, 3).copy_from(&angular);
    let dx = (s.x - inertia.x) * (inertia.mass * inv_h2);
    let dq = angular * (s.q * inertia.q.inverse()).scaled_axis();
    rhs.fixed_rows_mut::<3>(0).copy_from(&dx);
    rhs.fixed_rows_mut::<3>(3).copy_from(&dq);
    let mut lumps = Vec3::zeros();
    for &r in touching {
        let row = &rows[r];
        match row.friction {
            // The pair's second row is taken with its first.
            Some(f) if f.second => continue,
            Some(_) => {
                let other = &rows[r + 1];
                let (c1, j1, _) = row.eval(p, Some(i));
                let (c2, j2, _) = other.eval(p, Some(i));
                let (f1, f2, sticking) = friction_forces(row, other, c1, c2);
                rhs += j1 * f1 + j2 * f2;
                // Sliding, the friction force is constant over the block step: no stiffness.
                if sticking {
                    lhs += j1 * j1.transpose() * row.k + j2 * j2.transpose() * other.k;
                }
            }
            None => {
                let (c, j, lump) = row.eval(p, Some(i));
                let u = row.k * c + row.s * row.lambda;
                let force = u.clamp(row.fmin, row.fmax);
                rhs += j * force;
                if u > row.fmin && u < row.fmax {
                    lhs += j * j.transpose() * row.k;
                }
                lumps += lump * force.abs();
            }
        }
    }
    for d in 0..3 {
        lhs[(3 + d, 3 + d)] += lumps[d];
    }
    // M/h² > 0 and every added term is positive semidefinite: the block is positive definite.
    match lhs.cholesky() {
        Some(ch) => ch.solve(&rhs),
        None => Vec6::zeros(),
    }
}

/// Moves pose `(x, q)` by a block step `Δ`: `x − Δ_lin`, `exp(−Δ_ang)·q`.
pub(super) fn apply(x: &mut Vec3, q: &mut UnitQuaternion<f64>, delta: &Vec6) {
    *x -= delta.fixed_rows::<3>(0);
    *q = UnitQuaternion::from_scaled_axis(-delta.fixed_rows::<3>(3).into_owned()) * *q;
}

/// Colours of the movable bodies such that no two of a colour share a row (greedy, in index
/// order): the order of `order = "colored"`.
pub(super) fn colour_bodies(movable: &[bool], rows: &[Row]) -> Vec<Vec<usize>> {
    let n = movable.len();
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); n];
    for row in rows {
        if let Some(b) = row.b {
            if movable[row.a] && movable[b] {
                neighbours[row.a].push(b);
                neighbours[b].push(row.a);
            }
        }
    }
    let mut colour = vec![usize::MAX; n];
    let mut colours: Vec<Vec<usize>> = Vec::new();
    let mut taken: Vec<bool> = Vec::new();
    for i in (0..n).filter(|&i| movable[i]) {
        taken.clear();
        taken.resize(colours.len() + 1, false);
        for &j in &neighbours[i] {
            if colour[j] != usize::MAX {
                taken[colour[j]] = true;
            }
        }
        let c = taken.iter().position(|t| !t).unwrap_or(colours.len());
        if c == colours.len() {
            colours.push(Vec::new());
        }
        colour[i] = c;
        colours[c].push(i);
    }
    colours
}
