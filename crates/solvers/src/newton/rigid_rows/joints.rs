//! The joints' rows in the world frame, their forces, and the full method's curvature rows of
//! their anchors.

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
            for w in world_joint_rows(joint, f, pose(Some(joint.a)), pose(joint.b)) {
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

/// One joint row in the world frame: its index within the joint (0–2 the anchors along x, y, z;
/// 3–4 a revolute's axes or 3–5 a fixed joint's orientation; 5 and 6 a revolute's lower and
/// upper limit), `C`, and its gradients on each body as `(linear, angular)` (angular: with
/// respect to a world rotation of the body).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorldRow {
    pub(crate) row: usize,
    pub(crate) c: f64,
    pub(crate) kind: RowKind,
    pub(crate) compliance: f64,
    pub(crate) linear_a: Vec3,
    pub(crate) angular_a: Vec3,
    pub(crate) linear_b: Vec3,
    pub(crate) angular_b: Vec3,
}

/// The rows of `joint` (frames `f`) at the poses `(x, q)` of its bodies (`None` for the world),
/// as pure functions of those poses:
///
/// * anchors, along each world axis `e`: `C = e·(p_a − p_b) = 0`, gradients `(e, r_a×e)` on `a`
///   and `(−e, −r_b×e)` on `b`, with the joint's compliance;
/// * a revolute joint's axes: `C = s·a_b = 0` for the two directions `s` that `a` carries
///   perpendicular to its own axis (`ref_a` and `a_a × ref_a`), angular gradients `s×a_b` on
///   `a` and its opposite on `b` (exact while the axes nearly agree);
/// * a revolute limit within [`LIMIT_MARGIN`] of the hinge angle `θ`: `C = θ − lower ≥ 0`
///   (angular `−a_a`, `+a_a`) or `upper − θ ≥ 0` (the opposite);
/// * a fixed joint: `C = e·φ_rel = 0` with `φ_rel = log(q_b (q_a·rel)⁻¹)`, angular gradients
///   `−J_l⁻¹(−φ_rel)ᵀ e` on `a` and `J_l⁻¹(φ_rel)ᵀ e` on `b`.
pub(crate) fn world_joint_rows(
    joint: &solverlab_core::rigid::Joint,
    f: &solverlab_core::rigid::JointFrame,
    a: Option<(Vec3, UnitQuaternion<f64>)>,
    b: Option<(Vec3, UnitQuaternion<f64>)>,
) -> Vec<WorldRow> {
    let point = |p: &Option<(Vec3, UnitQuaternion<f64>)>, l: &Vec3| p.as_ref().map_or(*l, |(x, q)| x + q * l);
    let arm = |p: &Option<(Vec3, UnitQuaternion<f64>)>, at: &Vec3| p.as_ref().map_or(Vec3::zeros(), |(x, _)| at - x);
    let (pa, pb) = (point(&a, &f.anchor_a), point(&b, &f.anchor_b));
    let (ra, rb) = (arm(&a, &pa), arm(&b, &pb));
    let mut out = Vec::with_capacity(6);
    for (axis, e) in [Vec3::x(), Vec3::y(), Vec3::z()].into_iter().enumerate() {
        out.push(WorldRow {
            row: axis,
            c: e.dot(&(pa - pb)),
            kind: RowKind::Equality,
            compliance: joint.compliance,
            linear_a: e,
            angular_a: ra.cross(&e),
            linear_b: -e,
            angular_b: -rb.cross(&e),
        });
    }
    let qa = a.map_or(UnitQuaternion::identity(), |(_, q)| q);
    let qb = b.map_or(UnitQuaternion::identity(), |(_, q)| q);
    let angular = |row: usize, c: f64, kind: RowKind, ga: Vec3, gb: Vec3| WorldRow {
        row,
        c,
        kind,
        compliance: 0.0,
        linear_a: Vec3::zeros(),
        angular_a: ga,
        linear_b: Vec3::zeros(),
        angular_b: gb,
    };
    match joint.kind {
        JointKind::Ball => {}
        JointKind::Revolute { lower, upper, .. } => {
            let (axis_a, axis_b) = (qa * f.axis_a, qb * f.axis_b);
            // The axes agree when b's axis has no component along the two directions a carries
            // perpendicular to its own: `C = s·a_b`, with `s` turning with a.
            let (ref_a, ref_b) = (qa * f.ref_a, qb * f.ref_b);
            for (row, s) in [ref_a, axis_a.cross(&ref_a)].into_iter().enumerate() {
                let g = s.cross(&axis_b);
                out.push(angular(3 + row, s.dot(&axis_b), RowKind::Equality, g, -g));
            }
            let theta = ref_a.cross(&ref_b).dot(&axis_a).atan2(ref_a.dot(&ref_b));
            if theta - lower < LIMIT_MARGIN {
                out.push(angular(5, theta - lower, RowKind::Inequality, -axis_a, axis_a));
            }
            if upper - theta < LIMIT_MARGIN {
                out.push(angular(6, upper - theta, RowKind::Inequality, axis_a, -axis_a));
            }
        }
        JointKind::Fixed => {
            // `φ_rel = log(q_b·(q_a·rel)⁻¹)`: turning b by `δω` changes it by `J_l⁻¹(φ_rel)·δω`,
            // turning a by `−J_r⁻¹(φ_rel)·δω`.
            let phi = (qb * (qa * f.relative).inverse()).scaled_axis();
            for (axis, e) in [Vec3::x(), Vec3::y(), Vec3::z()].into_iter().enumerate() {
                let gb = left_jacobian_inverse_transpose(&phi, &e);
                let ga = -left_jacobian_inverse_transpose(&-phi, &e);
                out.push(angular(3 + axis, e.dot(&phi), RowKind::Equality, ga, gb));
            }
        }
    }
    out
}
