//! The joints' forces and the full method's curvature rows of their anchors (the joints' rows
//! themselves are the core's pure functions, [`solverlab_core::rigid::joint_rows`]).

use super::*;

/// The id of curvature row `k` (0–2) on side `side` (0 for `a`, 1 for `b`) of joint `j`.
fn joint_curvature_id(j: usize, side: usize, k: usize) -> u64 {
    TAG | (0b11 << 58) | ((j as u64 & 0x00ff_ffff_ffff) << 3) | (3 * side + k) as u64
}

/// Whether `id` is a joint's curvature row's (see [`RigidRows::curvature_rows`]).
pub(crate) fn is_joint_curvature_id(id: u64) -> bool {
    id >> 58 == TAG >> 58 | 0b11
}

/// `−Σₑ λₑ ∇²_δ (e·p)` for an anchor `p = x + r` of a body turned by a small world rotation
/// `δ`, with `Λ = Σₑ λₑ e`: `(Λ·r) I − ½(Λ rᵀ + r Λᵀ)` (see [`RigidRows::curvature_rows`]).
pub(super) fn anchor_curvature(force: &Vec3, r: &Vec3) -> Matrix3<f64> {
    Matrix3::identity() * force.dot(r) - (force * r.transpose() + r * force.transpose()) * 0.5
}

impl RigidRows {
    /// The full method's curvature rows of the joints' anchor rows (see
    /// `Newton::add_curvature_rows` for the construction). An anchor row along the world axis
    /// `e` is `C = e·(pₐ − p_b)` with `pₐ = xₐ + Rₐ rₐ⁰`. Turning body `a` by a small world
    /// rotation `δ`, `R ← exp(δ)R`, moves its anchor by `δ × r + ½ δ × (δ × r)` (`r` the world
    /// arm), so
    ///
    /// ```text
    /// ∇²_δ (e·pₐ) = ½(e rᵀ + r eᵀ) − (e·r) I          (x enters linearly: no other block)
    /// ```
    ///
    /// and over the three rows with multipliers `λₑ`, `Λ = Σ λₑ e` (the joint's force times
    /// `h²`), the Lagrangian's term `−Σ λₑ ∇²Cₑ` on body `a` is
    /// `Gₐ = (Λ·rₐ) I − ½(Λ rₐᵀ + rₐ Λᵀ)`, and on body `b` (which enters with `−p_b`)
    /// `G_b = ½(Λ r_bᵀ + r_b Λᵀ) − (Λ·r_b) I`. Each is symmetric with eigenvalues
    /// `Λ·r`, `½(Λ·r ± |Λ||r|)` (up to the sign for `b`): a link hanging from its joint has
    /// them all at least zero, a link balanced above it all at most zero. The positive
    /// eigenpairs `(μ, q)` become rows with angular gradient `q` (mapped to the loop's
    /// coordinates as every angular gradient is), `C = 0` and `α̃ = 1/μ`; the negative ones are
    /// left out. In the loop's coordinates the Hessian also has a term from the curvature of
    /// the exponential chart times the Lagrangian's gradient, which vanishes at the solution,
    /// so the step stays quadratic there. The angular rows of revolute and fixed joints and
    /// the contacts' rows carry no curvature rows (their step is Gauss-Newton along them).
    pub(crate) fn curvature_rows(
        &self,
        scene: &Scene,
        c: &[Vec3],
        lambda: impl Fn(u64) -> f64,
        h: f64,
        rows: &mut RowSet,
    ) {
        let pose = |k: Option<usize>| k.map(|k| self.pose(c, k));
        for (j, (joint, f)) in scene.joints.iter().zip(self.xpbd.frames()).enumerate() {
            if !self.xpbd.joint_active(j) {
                continue;
            }
            let force: Vec3 = (0..3).map(|e| Vec3::ith(e, lambda(joint_id(j, e)))).sum();
            if force == Vec3::zeros() {
                continue;
            }
            for (side, k, local, sign) in [(0, Some(joint.a), f.anchor_a, 1.0), (1, joint.b, f.anchor_b, -1.0)] {
                let Some(p) = pose(k) else { continue };
                let r = p.q * local;
                let eigen = (anchor_curvature(&force, &r) * sign).symmetric_eigen();
                // Below a billionth of the body's smallest moment of inertia (`1/max(√I⁻¹)²`)
                // the term changes nothing but the conditioning.
                let floor = match k {
                    Some(k) if self.movable[k] && self.scale[k].max() > 0.0 => 1e-9 / self.scale[k].max().powi(2),
                    _ => continue,
                };
                for axis in 0..3 {
                    let mu = eigen.eigenvalues[axis];
                    if mu > floor {
                        let q: Vec3 = eigen.eigenvectors.column(axis).into();
                        let mut row = Self::row(joint_curvature_id(j, side, axis), 0.0, RowKind::Equality, h * h / mu);
                        self.add(&mut row, k, Some(&p), Vec3::zeros(), q);
                        if row.n > 0 {
                            rows.push(&row);
                        }
                    }
                }
            }
        }
    }

    /// The force and torque each joint that held applied to its body `a`, from its rows'
    /// multipliers `lambda` (N·s², by row id) at the coordinates `c`, over `h²`: the point
    /// rows' gradients on `a` give the force, the angular rows' the torque about the anchor.
    pub(crate) fn joint_forces(
        &self,
        scene: &Scene,
        c: &[Vec3],
        lambda: impl Fn(u64) -> f64,
        h: f64,
        out: &mut Vec<solverlab_core::rigid::JointForce>,
    ) {
        out.clear();
        let pose = |k: Option<usize>| k.map(|k| self.pose(c, k)).map(|p| (p.x, p.q));
        for (j, (joint, f)) in scene.joints.iter().zip(self.xpbd.frames()).enumerate() {
            if !self.xpbd.joint_active(j) {
                continue;
            }
            let mut force = solverlab_core::rigid::JointForce { joint: j, ..Default::default() };
            for w in joint_rows(joint, f, pose(Some(joint.a)), pose(joint.b), LIMIT_MARGIN).iter() {
                let l = lambda(joint_id(j, w.row)) / (h * h);
                match w.row < 3 {
                    true => force.force += w.linear_a * l,
                    false => force.torque += w.angular_a * l,
                }
            }
            out.push(force);
        }
    }
}
