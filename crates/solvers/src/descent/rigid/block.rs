//! One rigid body's block step (step 4 of [`super`]): the 6 × 6 Newton step on its part of the
//! step's energy, and the colouring of the bodies for the parallel order.

use nalgebra::{Matrix3, Matrix6, UnitQuaternion};
use solverlab_core::Vec3;

use super::rows::{friction_energy, friction_forces, Poses, Row, Vec6};

/// Halvings of a block step before it is taken anyway (at 1/2⁷ of its length), as for the
/// particles.
const LINE_SEARCH: usize = 8;

/// A body's inertia for its block step: mass, world inertia tensor, its inertial target `y`
/// (centre and orientation) and its pose at the start of the step.
pub(super) struct Inertia {
    pub(super) mass: f64,
    pub(super) tensor: Matrix3<f64>,
    pub(super) x: Vec3,
    pub(super) q: UnitQuaternion<f64>,
    pub(super) x0: Vec3,
    pub(super) q0: UnitQuaternion<f64>,
}

impl Inertia {
    /// The motion of pose `(x, q)` since the start of the step, `(x − x⁻, log(q·q⁻⁻¹))`.
    pub(super) fn motion(&self, x: &Vec3, q: &UnitQuaternion<f64>) -> Vec6 {
        let (d, turn) = (x - self.x0, (q * self.q0.inverse()).scaled_axis());
        Vec6::new(d.x, d.y, d.z, turn.x, turn.y, turn.z)
    }
}

/// Body `i`'s block step from the poses `p`: `Δ = LHS⁻¹·RHS` with
///
/// ```text
/// LHS = M/h² + Σᵣ (kᵣ JᵣJᵣᵀ + Gᵣ),   RHS = M/h²·(x − y) + Σᵣ Jᵣ Fᵣ
/// ```
///
/// over the rows `touching` it (`M = diag(m·I, I_world)`, `x − y` the centre's offset and the
/// rotation vector `log(q·q_y⁻¹)`, `Fᵣ = clamp(kᵣCᵣ + sᵣλᵣ, fmin, fmax)`; the penalty term only
/// while the force is within its bounds, `Gᵣ` the lumped angular curvature times `|Fᵣ|`). The
/// new pose is `x − s·Δ_lin`, `exp(−s·Δ_ang)·q` with `s` the first of 1, ½, …, 1/128 that does
/// not raise the body's own energy (the particles' backtracking line search: with penalties of
/// 10⁶ N/m a sliding box's full steps overshot and it was thrown off the floor in the first
/// frames). Returns `s·Δ`.
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
                // The penalty's curvature while the force is within its bounds, ends included: a
                // contact that just touches (`kC + λ = 0`) resists at once (without it, a 10 kg
                // box landing on a fresh contact with k = 10⁶ N/m fell a whole g·h² in the first
                // sweep, and the dual step turned that into 5 kN a corner).
                if u >= row.fmin && u <= row.fmax {
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
    let Some(step) = lhs.cholesky().map(|ch| ch.solve(&rhs)) else { return Vec6::zeros() };
    // Backtracking on the body's own energy.
    let before = energy(rows, touching, p, i, inertia, h, &s.x, &s.q, &p.dp[i]);
    let mut scale = 1.0;
    for _ in 0..LINE_SEARCH {
        let delta = step * scale;
        let (mut x, mut q) = (s.x, s.q);
        apply(&mut x, &mut q, &delta);
        let moved = inertia.motion(&x, &q);
        if energy(rows, touching, p, i, inertia, h, &x, &q, &moved) <= before {
            break;
        }
        scale *= 0.5;
    }
    step * scale
}

/// Body `i`'s part of the step's energy with its pose at `(x, q)` and motion `dp`: its inertia
/// `½|p − y|²_M/h²` and the energies of the rows touching it.
#[allow(clippy::too_many_arguments)]
fn energy(
    rows: &[Row],
    touching: &[usize],
    p: &Poses,
    i: usize,
    inertia: &Inertia,
    h: f64,
    x: &Vec3,
    q: &UnitQuaternion<f64>,
    dp: &Vec6,
) -> f64 {
    let trial = Poses { st: p.st, frames: p.frames, dp: p.dp, trial: Some((i, *x, *q, *dp)) };
    let (dx, turn) = (x - inertia.x, (q * inertia.q.inverse()).scaled_axis());
    let mut e = (inertia.mass * dx.norm_squared() + turn.dot(&(inertia.tensor * turn))) / (2.0 * h * h);
    for &r in touching {
        let row = &rows[r];
        e += match row.friction {
            Some(f) if f.second => 0.0,
            Some(_) => friction_energy(row, &rows[r + 1], row.value(&trial), rows[r + 1].value(&trial)),
            None => row.energy(row.value(&trial)),
        };
    }
    e
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
