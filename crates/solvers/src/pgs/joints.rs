//! Joint rows between rigid bodies for the sequential-impulse solver (used by [`super::rigid`]).
//!
//! A joint's equality rows are solved together as one block per visit (3 rows for a ball joint,
//! 5 for a revolute, 6 for a fixed joint), plus scalar limit rows:
//!
//! * **point rows** (every joint): the anchors coincide, `C = p_b − p_a` (m), with
//!   `Ċ·eᵢ = eᵢ·v_b + (r_b×eᵢ)·ω_b − eᵢ·v_a − (r_a×eᵢ)·ω_a`;
//! * **angular rows**: the relative angular velocity `ω_b − ω_a` along the joint's directions
//!   vanishes. Revolute: the two directions perpendicular to the axis carried by `a`, with
//!   `C = axis_a × axis_b` on them (rad). Fixed: all three, with `C` the rotation vector of the
//!   relative orientation against the start's;
//! * **a limit row** (revolute with limits): the angle θ about the axis against the nearer
//!   limit, `θ ≥ lower` or `θ ≤ upper`, a one-sided row on `±(ω_b − ω_a)·axis`, speculative
//!   while inside (it may close the gap to the limit in one step, no more). It is part of the
//!   block: the block is solved with it, and if that would make its accumulated impulse pull,
//!   its impulse is set to zero and the other rows are solved without it (the two cases of a
//!   block with one inequality).
//!
//! The block is `K = J M⁻¹ Jᵀ` over both bodies, inverted once per step, and each visit solves
//! it exactly: `Δλ = −K⁻¹ (Ċ + bias)`, accumulated for warm starting (by joint index). Row by
//! row Gauss-Seidel is not enough here: on a pendulum whose mass sits far from the anchor the
//! point and angular rows of a revolute joint are coupled with a coefficient near 1 (on a
//! 0.1 m sphere 1 m below its hinge, about 0.996 from the effective masses), and ten sweeps of
//! separate point and angular blocks let it swing 7 cm out of its plane.
//!
//! The bias follows the solver's feedback: Baumgarte `β·C/h` in the velocity rows (split
//! impulses apply to contacts only, as in Bullet: split rows on these joints tore a whipping
//! 20-link chain apart and made a 20-plank bridge gain energy at 20 sweeps), or the soft form with
//! `joint_hertz` and `joint_damping_ratio`. A joint with `compliance` `α > 0` is an implicit
//! spring on its point rows: `K + α/h²` on their diagonal and the bias `C/h` (the velocity form
//! of XPBD, as for the particle rows), kept in the relax pass. With `position_iterations` (the
//! `pgs-ngs` preset) the rigid rows carry no Baumgarte bias; instead each position sweep
//! re-linearises every joint at the current poses and removes its error by a position impulse
//! ([`JointRows::correct_positions`]), as Box2D v2.4's position solver does.

use std::borrow::Cow;

use nalgebra::{Matrix3, Matrix6, UnitQuaternion, Vector6};
use solverlab_core::rigid::frame::perpendicular;
use solverlab_core::rigid::joint_rows::{hinge, relative_rotation, Hinge};
use solverlab_core::rigid::{Joint, JointFrame, JointKind, RigidState};
use solverlab_core::Vec3;

use super::rows::{soft, Pass};
use super::{Feedback, PgsConfig};

/// The inverse of `k`, identity outside its leading `n × n` block (zero if that block is
/// singular): the block alone is inverted, in closed form (cofactors over the determinant) up
/// to 4 × 4 and by LU with partial pivoting above, at a fraction of inverting the padded 6 × 6.
fn padded_inverse(k: &Matrix6<f64>, n: usize) -> Matrix6<f64> {
    macro_rules! block {
        ($n:literal) => {{
            k.fixed_view::<$n, $n>(0, 0).into_owned().try_inverse().map(|inv| {
                let mut out = Matrix6::identity();
                out.fixed_view_mut::<$n, $n>(0, 0).copy_from(&inv);
                out
            })
        }};
    }
    let inv = match n {
        1 => block!(1),
        2 => block!(2),
        3 => block!(3),
        4 => block!(4),
        5 => k.fixed_view::<5, 5>(0, 0).into_owned().lu().try_inverse().map(|inv| {
            let mut out = Matrix6::identity();
            out.fixed_view_mut::<5, 5>(0, 0).copy_from(&inv);
            out
        }),
        _ => k.lu().try_inverse(),
    };
    inv.unwrap_or_else(Matrix6::zeros)
}

/// One row: its coefficients on `(v_a, ω_a, v_b, ω_b)`.
#[derive(Clone, Copy, Debug, Default)]
struct Row {
    la: Vec3,
    aa: Vec3,
    lb: Vec3,
    ab: Vec3,
}

/// The axis `eᵢ` of point row `i`: its linear parts are `−eᵢ` on `a` and `eᵢ` on `b`.
#[inline(always)]
pub(in crate::pgs) fn axis(i: usize) -> Vec3 {
    match i {
        0 => Vec3::x(),
        1 => Vec3::y(),
        _ => Vec3::z(),
    }
}

/// A point row's angular parts: `−r_a×eᵢ` on `a`'s angular velocity, `r_b×eᵢ` on `b`'s.
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::pgs) struct Arms {
    pub(in crate::pgs) aa: Vec3,
    pub(in crate::pgs) ab: Vec3,
}

/// What a joint with more than its three point rows (angular rows, a limit) keeps beside them:
/// those rows and the block's inverses (both identity-padded outside their rows, with zero
/// right-hand sides; the second set and read only when there is a limit row). A ball joint
/// has none, and its rows stay a third of the size: the sweeps of the 100 × 100 joint grid
/// stream its 19,802 joints' rows from memory in every pass.
#[derive(Clone, Debug, Default)]
struct Extra {
    rows: [Row; 3],
    k_inv: Matrix6<f64>,
    k_inv_limit: Matrix6<f64>,
}

/// The rows of one joint in one step. (The fields the sweeps read are open to the rigid
/// solver's lanes, [`crate::pgs::rigid`], which visit two ball joints at once.)
#[derive(Clone, Debug, Default)]
pub(in crate::pgs) struct JointRows {
    pub(in crate::pgs) a: usize,
    pub(in crate::pgs) b: Option<usize>,
    /// Equality rows used (3, 5 or 6); the limit row, when there is one, is row `dim`.
    pub(in crate::pgs) dim: usize,
    /// Which limit row is in use: 0 none, 1 lower, 2 upper.
    pub(in crate::pgs) limit: u8,
    /// The point rows 0–2 ([`JointRows::row`]): their angular parts.
    pub(in crate::pgs) point: [Arms; 3],
    /// `K⁻¹` of a ball joint's block (its three point rows; zero when `K` is singular), read
    /// when the block has three rows; a larger block's is in [`Extra`].
    pub(in crate::pgs) k3: Matrix3<f64>,
    /// Rows 3 and up and their block's inverses, for a joint that has them (kept in its slot
    /// from step to step, so that a step in steady state allocates none).
    extra: Option<Box<Extra>>,
    /// Position error `C`, velocity bias, compliance terms `α/h²` per row.
    pub(in crate::pgs) c: Vector6<f64>,
    pub(in crate::pgs) bias: Vector6<f64>,
    pub(in crate::pgs) gamma: Vector6<f64>,
    /// Soft scales (1, 0 when rigid or compliant).
    pub(in crate::pgs) mass_scale: f64,
    pub(in crate::pgs) impulse_scale: f64,
    pub(in crate::pgs) lambda: Vector6<f64>,
    /// Whether `lambda` holds a warm start not yet applied ([`JointRows::apply_warm`]).
    warmed: bool,
}

/// The velocities the rows act on: the bodies' real velocities or the split pseudo velocities.
pub(super) trait Velocities {
    /// Linear and angular velocity of body `k`.
    fn get(&self, k: usize) -> (Vec3, Vec3);
    /// Adds to body `k`'s linear and angular velocity.
    fn add(&mut self, k: usize, dv: Vec3, dw: Vec3);
}

impl Velocities for [RigidState] {
    fn get(&self, k: usize) -> (Vec3, Vec3) {
        (self[k].v, self[k].w)
    }
    fn add(&mut self, k: usize, dv: Vec3, dw: Vec3) {
        self[k].v += dv;
        self[k].w += dw;
    }
}

/// Pseudo velocities: `(v_p, ω_p)` of every body.
pub(super) struct Pseudo<'a>(pub(super) &'a mut [Vec3], pub(super) &'a mut [Vec3]);

impl Velocities for Pseudo<'_> {
    fn get(&self, k: usize) -> (Vec3, Vec3) {
        (self.0[k], self.1[k])
    }
    fn add(&mut self, k: usize, dv: Vec3, dw: Vec3) {
        self.0[k] += dv;
        self.1[k] += dw;
    }
}

/// The poses as the target of a position correction: a "velocity" change `(Δv, Δω)` moves body
/// `k` by `Δv` and turns it by the rotation vector `Δω`.
struct Poses<'a>(&'a mut [RigidState]);

impl Velocities for Poses<'_> {
    fn get(&self, k: usize) -> (Vec3, Vec3) {
        (self.0[k].x, Vec3::zeros())
    }
    fn add(&mut self, k: usize, dv: Vec3, dw: Vec3) {
        self.0[k].x += dv;
        self.0[k].q = solverlab_core::rigid::rotate(&self.0[k].q, &dw, 1.0);
    }
}

impl JointRows {
    /// Prepares, in place, the rows of joint `j` at the start-of-step poses `st` (`inv_m`,
    /// `inv_i`: the bodies' inverse mass and world inverse inertia), in its slot (a larger
    /// joint's rows and inverses in the slot's [`Extra`], allocated once for the slot).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rebuild(
        &mut self,
        j: &Joint,
        f: &JointFrame,
        st: &[RigidState],
        inv_m: &[f64],
        inv_i: &[Matrix3<f64>],
        cfg: &PgsConfig,
        h: f64,
    ) {
        let (xa, qa) = (st[j.a].x, st[j.a].q);
        let (xb, qb) = j.b.map_or((Vec3::zeros(), UnitQuaternion::identity()), |k| (st[k].x, st[k].q));
        let (ima, ia) = (inv_m[j.a], inv_i[j.a]);
        let (imb, ib) = j.b.map_or((0.0, Matrix3::zeros()), |k| (inv_m[k], inv_i[k]));
        let ra = qa.transform_vector(&f.anchor_a);
        let rb = qb.transform_vector(&f.anchor_b);
        let out = self;
        out.start(j);
        // Point rows.
        let gap = (xb + rb) - (xa + ra);
        for i in 0..3 {
            let e = axis(i);
            out.point[i] = Arms { aa: -ra.cross(&e), ab: rb.cross(&e) };
            out.c[i] = gap[i];
            out.gamma[i] = j.compliance / (h * h);
        }
        let mut dim = 3;
        let angular = |d: Vec3| Row { la: Vec3::zeros(), aa: -d, lb: Vec3::zeros(), ab: d };
        match j.kind {
            JointKind::Ball => {}
            JointKind::Revolute { lower, upper, .. } => {
                let extra = out.extra.get_or_insert_with(Default::default);
                // The axes and the angle about them, from a's reference to b's (the shared
                // geometry of [`solverlab_core::rigid::joint_rows`]).
                let Hinge { axis_a, axis_b, theta, .. } = hinge(f, &qa, &qb);
                let p1 = perpendicular(&axis_a);
                let p2 = axis_a.cross(&p1);
                let err = axis_a.cross(&axis_b);
                for d in [p1, p2] {
                    extra.rows[dim - 3] = angular(d);
                    out.c[dim] = d.dot(&err);
                    dim += 1;
                }
                let (to_lower, to_upper) = (theta - lower, upper - theta);
                if to_lower.is_finite() || to_upper.is_finite() {
                    let (side, dir, c) =
                        if to_lower <= to_upper { (1, axis_a, to_lower) } else { (2, -axis_a, to_upper) };
                    out.limit = side;
                    extra.rows[dim - 3] = angular(dir);
                    out.c[dim] = c;
                }
            }
            JointKind::Fixed => {
                let extra = out.extra.get_or_insert_with(Default::default);
                let err = relative_rotation(&qa, &qb, &f.relative);
                for (i, e) in [Vec3::x(), Vec3::y(), Vec3::z()].into_iter().enumerate() {
                    extra.rows[dim - 3] = angular(e);
                    out.c[dim] = err[i];
                    dim += 1;
                }
            }
        }
        out.dim = dim;
        let all = dim + (out.limit > 0) as usize;
        // K = J M⁻¹ Jᵀ (+ compliance on the diagonal), identity-padded to 6 × 6.
        let rows: [Row; 6] = std::array::from_fn(|r| if r < all { out.row(r) } else { Row::default() });
        let (mut ia_aa, mut ib_ab) = ([Vec3::zeros(); 6], [Vec3::zeros(); 6]);
        for s in 0..all {
            (ia_aa[s], ib_ab[s]) = (ia * rows[s].aa, ib * rows[s].ab);
        }
        let entry = |r: usize, s: usize| {
            let (x, y) = (&rows[r], &rows[s]);
            ima * x.la.dot(&y.la) + x.aa.dot(&ia_aa[s]) + imb * x.lb.dot(&y.lb) + x.ab.dot(&ib_ab[s])
        };
        if all == 3 {
            // A ball joint: its 3 × 3 block, inverted as `padded_inverse` would invert its
            // leading block (the same numbers; no 6 × 6 to build and copy).
            let mut k = Matrix3::from_fn(entry);
            for r in 0..3 {
                k[(r, r)] += out.gamma[r];
            }
            out.k3 = k.try_inverse().unwrap_or_else(Matrix3::zeros);
        } else {
            let mut k = Matrix6::identity();
            for r in 0..all {
                for s in 0..all {
                    k[(r, s)] = entry(r, s);
                }
                k[(r, r)] += out.gamma[r];
            }
            let extra = out.extra.as_deref_mut().expect("a joint with more than its point rows");
            if out.limit > 0 {
                extra.k_inv_limit = padded_inverse(&k, all);
                for r in 0..6 {
                    k[(r, dim)] = if r == dim { 1.0 } else { 0.0 };
                    k[(dim, r)] = if r == dim { 1.0 } else { 0.0 };
                }
            }
            extra.k_inv = padded_inverse(&k, dim);
        }
        out.feedback(j, cfg, h);
    }

    /// The start of [`JointRows::rebuild`] for joint `j`: its bodies, no rows yet, and zero
    /// errors, biases, compliance terms and impulses. Every field the rows read is set by the
    /// rebuild or reset here; the rows past `all()` and the matrices are overwritten or never
    /// read (writing them anew, when the rows were 1.4 kB, cost more than the rest of the
    /// joint's preparation).
    pub(in crate::pgs) fn start(&mut self, j: &Joint) {
        (self.a, self.b, self.dim, self.limit) = (j.a, j.b, 0, 0);
        (self.c, self.bias, self.gamma, self.lambda) =
            (Vector6::zeros(), Vector6::zeros(), Vector6::zeros(), Vector6::zeros());
        (self.mass_scale, self.impulse_scale, self.warmed) = (1.0, 0.0, false);
    }

    /// The end of [`JointRows::rebuild`], once the rows, `C`, the compliance terms and `K⁻¹`
    /// are set: the biases of the solver's feedback and the soft scales.
    pub(in crate::pgs) fn feedback(&mut self, j: &Joint, cfg: &PgsConfig, h: f64) {
        let dim = self.dim;
        let out = self;
        let (joint_rate, joint_ms, joint_is) = soft(cfg.rigid_joint_hertz(h), cfg.joint_damping_ratio, h);
        let compliant = j.compliance > 0.0;
        for r in 0..dim {
            if out.gamma[r] > 0.0 {
                out.bias[r] = out.c[r] / h;
                continue;
            }
            match cfg.feedback {
                Feedback::Soft if !compliant => out.bias[r] = joint_rate * out.c[r],
                // With a position pass the error is corrected there, not in the velocity rows.
                Feedback::Baumgarte if cfg.position_iterations > 0 => {}
                _ => out.bias[r] = cfg.baumgarte * out.c[r] / h,
            }
        }
        if cfg.feedback == Feedback::Soft && !compliant {
            (out.mass_scale, out.impulse_scale) = (joint_ms, joint_is);
        }
        if out.limit > 0 {
            // The limit row: speculative while inside; at or past the limit, the block's
            // feedback.
            let c = out.c[dim];
            out.bias[dim] = if c > 0.0 {
                c / h
            } else if cfg.position_iterations > 0 && cfg.feedback == Feedback::Baumgarte {
                0.0
            } else if cfg.feedback == Feedback::Soft {
                joint_rate * c
            } else {
                cfg.baumgarte * c / h
            };
        }
    }

    /// The joint's two bodies (`b` none for a joint to the world).
    pub(super) fn bodies(&self) -> (usize, Option<usize>) {
        (self.a, self.b)
    }

    /// Rows in the block: the equality rows and the limit row.
    fn all(&self) -> usize {
        self.dim + (self.limit > 0) as usize
    }

    /// Row `r`'s coefficients on `(v_a, ω_a, v_b, ω_b)`: a point row's from its axis and arms,
    /// the others' as kept.
    #[inline(always)]
    fn row(&self, r: usize) -> Row {
        if r < 3 {
            let e = axis(r);
            Row { la: -e, aa: self.point[r].aa, lb: e, ab: self.point[r].ab }
        } else {
            self.extra().rows[r - 3]
        }
    }

    /// Rows 3 and up and their inverses (only a joint with them reads them).
    fn extra(&self) -> &Extra {
        self.extra.as_deref().expect("a joint with more than its point rows keeps them")
    }

    /// `K⁻¹` on the equality rows, identity-padded to 6 × 6 (zero when `K` is singular), as
    /// the block solve reads it: a larger joint's as kept, a ball joint's padded from its 3 × 3
    /// (read only by the position pass and the test of the ball joints' visit).
    fn k_inv(&self) -> Cow<'_, Matrix6<f64>> {
        if self.all() > 3 {
            return Cow::Borrowed(&self.extra().k_inv);
        }
        if self.k3 == Matrix3::zeros() {
            return Cow::Owned(Matrix6::zeros());
        }
        let mut m = Matrix6::identity();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.k3);
        Cow::Owned(m)
    }

    /// The accumulated impulses on `a`: the linear impulse of the point rows (N·s), and the
    /// angular impulse of the angular and limit rows (N·m·s), which is the whole angular impulse
    /// about the anchor (the point rows' angular parts are their linear impulse's moment about
    /// `a`'s centre).
    pub(super) fn impulse_on_a(&self) -> (Vec3, Vec3) {
        let linear = (0..3).map(|r| -axis(r) * self.lambda[r]).sum();
        let angular = (3..self.all()).map(|r| self.extra().rows[r - 3].aa * self.lambda[r]).sum();
        (linear, angular)
    }

    fn cdot<V: Velocities + ?Sized>(&self, vel: &V) -> Vector6<f64> {
        let (va, wa) = vel.get(self.a);
        let (vb, wb) = self.b.map_or((Vec3::zeros(), Vec3::zeros()), |b| vel.get(b));
        let mut out = Vector6::zeros();
        for r in 0..self.all() {
            let x = self.row(r);
            out[r] = x.la.dot(&va) + x.aa.dot(&wa) + x.lb.dot(&vb) + x.ab.dot(&wb);
        }
        out
    }

    fn apply<V: Velocities + ?Sized>(&self, vel: &mut V, d: &Vector6<f64>, inv_m: &[f64], inv_i: &[Matrix3<f64>]) {
        self.apply_rows(self.all(), vel, d, inv_m, inv_i);
    }

    /// [`JointRows::apply`] of the first `rows` rows.
    fn apply_rows<V: Velocities + ?Sized>(
        &self,
        rows: usize,
        vel: &mut V,
        d: &Vector6<f64>,
        inv_m: &[f64],
        inv_i: &[Matrix3<f64>],
    ) {
        let (mut la, mut aa, mut lb, mut ab) = (Vec3::zeros(), Vec3::zeros(), Vec3::zeros(), Vec3::zeros());
        for r in 0..rows {
            let x = self.row(r);
            la += x.la * d[r];
            aa += x.aa * d[r];
            lb += x.lb * d[r];
            ab += x.ab * d[r];
        }
        vel.add(self.a, la * inv_m[self.a], inv_i[self.a] * aa);
        if let Some(b) = self.b {
            vel.add(b, lb * inv_m[b], inv_i[b] * ab);
        }
    }

    /// Takes the given accumulated impulses as the warm start, to be applied by
    /// [`JointRows::apply_warm`]; `limit` names the side the limit impulse (row `dim`) belonged
    /// to, and it is dropped if the side changed.
    pub(super) fn set_warm(&mut self, mut lambda: Vector6<f64>, limit: u8) {
        if limit != self.limit && self.dim < 6 {
            lambda[self.dim] = 0.0;
        }
        for r in self.all()..6 {
            lambda[r] = 0.0;
        }
        self.lambda = lambda;
        self.warmed = true;
    }

    /// Applies the warm start [`JointRows::set_warm`] took, once (nothing without one).
    pub(super) fn apply_warm<V: Velocities + ?Sized>(&mut self, vel: &mut V, inv_m: &[f64], inv_i: &[Matrix3<f64>]) {
        if std::mem::take(&mut self.warmed) {
            self.apply(vel, &self.lambda, inv_m, inv_i);
        }
    }

    /// One position correction of Box2D v2.4's position solver for these rows, prepared at the
    /// current poses: the block `K·Δ = −C` on the equality rows, with the limit row when it is
    /// violated, and `C` clamped to 0.2 m on the point rows and 8° on the angular rows
    /// (Box2D's largest corrections per pass), applied to the poses as `Δx = M⁻¹·Jᵀ·Δ` and a
    /// rotation by `I⁻¹·Jᵀ·Δ` (`inv_i` from the start of the step). Compliant joints are left
    /// to their springs.
    pub(super) fn correct_positions(&self, st: &mut [RigidState], inv_m: &[f64], inv_i: &[Matrix3<f64>]) {
        if self.gamma.iter().any(|&g| g > 0.0) {
            return;
        }
        let violated = self.limit > 0 && self.c[self.dim] < 0.0;
        let rows = self.dim + violated as usize;
        let mut c = Vector6::zeros();
        for r in 0..rows {
            let cap = if r < 3 { 0.2 } else { 8f64.to_radians() };
            c[r] = self.c[r].clamp(-cap, cap);
        }
        let k_inv = self.k_inv();
        let d = -(if violated { &self.extra().k_inv_limit } else { &*k_inv }) * c;
        self.apply_rows(rows, &mut Poses(st), &d, inv_m, inv_i);
    }

    /// The impulses to keep for the next step's warm start, with the limit side.
    pub(super) fn impulses(&self) -> (Vector6<f64>, u8) {
        (self.lambda, self.limit)
    }

    /// One visit of the velocity rows; returns the largest velocity residual and `Σ Δλ²`.
    /// [`Pass::Relax`] drops the bias of the rigid rows (the limit row keeps its speculative
    /// part); compliant rows keep their spring (physics, not stabilisation). The split rows are
    /// the contacts' only: [`Pass::Split`] is taken as [`Pass::Relax`] here.
    pub(super) fn solve<V: Velocities + ?Sized>(
        &mut self,
        vel: &mut V,
        inv_m: &[f64],
        inv_i: &[Matrix3<f64>],
        omega: f64,
        pass: Pass,
    ) -> (f64, f64) {
        let biased = pass == Pass::Biased;
        if self.limit == 0 && self.dim == 3 {
            self.solve_point(vel, inv_m, inv_i, omega, biased)
        } else {
            self.solve_block(vel, inv_m, inv_i, omega, biased)
        }
    }

    /// [`JointRows::solve`] on the whole padded block.
    fn solve_block<V: Velocities + ?Sized>(
        &mut self,
        vel: &mut V,
        inv_m: &[f64],
        inv_i: &[Matrix3<f64>],
        omega: f64,
        biased: bool,
    ) -> (f64, f64) {
        let cdot = self.cdot(vel);
        let spring = self.gamma.component_mul(&self.lambda);
        let mut residual = cdot + spring;
        for r in 0..self.all() {
            let speculative = r == self.dim && self.c[r] > 0.0;
            if biased || self.gamma[r] > 0.0 || speculative {
                residual[r] += self.bias[r];
            }
        }
        let (ms, is) = if biased { (self.mass_scale, self.impulse_scale) } else { (1.0, 0.0) };
        let change = |k_inv: &Matrix6<f64>, r: &Vector6<f64>, lambda: &Vector6<f64>| {
            -(k_inv * r) * (ms * omega) - lambda * (is * omega)
        };
        let k_inv = self.k_inv();
        let mut d = if self.limit > 0 {
            change(&self.extra().k_inv_limit, &residual, &self.lambda)
        } else {
            change(&k_inv, &residual, &self.lambda)
        };
        if self.limit > 0 && self.lambda[self.dim] + d[self.dim] < 0.0 {
            // The limit would pull: release its impulse and solve the other rows without it,
            // with the release's effect on them moved to the right-hand side.
            let release = -self.lambda[self.dim];
            let mut r = residual;
            for i in 0..self.dim {
                let (x, y) = (self.row(i), self.row(self.dim));
                let (ima, ia) = (inv_m[self.a], inv_i[self.a]);
                let (imb, ib) = self.b.map_or((0.0, Matrix3::zeros()), |b| (inv_m[b], inv_i[b]));
                let k_il =
                    ima * x.la.dot(&y.la) + x.aa.dot(&(ia * y.aa)) + imb * x.lb.dot(&y.lb) + x.ab.dot(&(ib * y.ab));
                r[i] += k_il * release;
            }
            r[self.dim] = 0.0;
            let mut lambda = self.lambda;
            lambda[self.dim] = 0.0;
            d = change(&k_inv, &r, &lambda);
            d[self.dim] = release;
        }
        self.lambda += d;
        self.apply(vel, &d, inv_m, inv_i);
        (residual.rows(0, self.all()).amax(), d.norm_squared())
    }

    /// [`JointRows::solve`] for a ball joint (the three point rows alone), on 3-vectors: the same
    /// operations in the same order as the 6 × 6 block, whose padding adds only zeros (the
    /// `+ 0.0` keeps the sign such a sum gives a zero), so the same numbers bit for bit at a
    /// fraction of the work.
    fn solve_point<V: Velocities + ?Sized>(
        &mut self,
        vel: &mut V,
        inv_m: &[f64],
        inv_i: &[Matrix3<f64>],
        omega: f64,
        biased: bool,
    ) -> (f64, f64) {
        let (va, wa) = vel.get(self.a);
        let (vb, wb) = self.b.map_or((Vec3::zeros(), Vec3::zeros()), |b| vel.get(b));
        let mut residual = [0.0; 3];
        for (r, out) in residual.iter_mut().enumerate() {
            let x = self.row(r);
            let cdot = x.la.dot(&va) + x.aa.dot(&wa) + x.lb.dot(&vb) + x.ab.dot(&wb);
            *out = cdot + self.gamma[r] * self.lambda[r];
            if biased || self.gamma[r] > 0.0 {
                *out += self.bias[r];
            }
        }
        let (ms, is) = if biased { (self.mass_scale, self.impulse_scale) } else { (1.0, 0.0) };
        let (ms, is) = (ms * omega, is * omega);
        let k = &self.k3;
        let mut d = Vector6::zeros();
        let (mut worst, mut d2) = (0.0_f64, 0.0);
        for r in 0..3 {
            let y = k[(r, 0)] * residual[0] + k[(r, 1)] * residual[1] + k[(r, 2)] * residual[2] + 0.0;
            d[r] = -y * ms - self.lambda[r] * is;
            self.lambda[r] += d[r];
            worst = worst.max(residual[r].abs());
            d2 += d[r] * d[r];
        }
        self.apply(vel, &d, inv_m, inv_i);
        (worst, d2)
    }

    /// The joint's position error (m for the anchors, rad for the angular rows and limits) at
    /// the start of the step, linearised to its end by `h`·(velocity + pseudo velocity); the
    /// common violation of [`solverlab_core::metrics`] for these rows.
    pub(super) fn violation<V: Velocities + ?Sized, P: Velocities + ?Sized>(&self, vel: &V, pseudo: &P, h: f64) -> f64 {
        // Compliant rows count `C + α̃λ` (λ as a position-level multiplier, impulse × h).
        let end = self.c + (self.cdot(vel) + self.cdot(pseudo)) * h + self.gamma.component_mul(&self.lambda) * h;
        let mut worst = end.rows(0, self.dim).amax();
        if self.limit > 0 {
            worst = worst.max(-end[self.dim]);
        }
        worst
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;
    use solverlab_core::rigid::JointFrame;

    /// A joint's rows in the sweeps' list hold a ball joint's block and no more (a larger
    /// block's rows lie apart, in [`Extra`]): the coloured sweeps of a large grid stream them
    /// from memory, and at 1.4 kB a joint the 100 × 100 grid's took twice the time.
    #[test]
    fn a_joints_rows_stay_small() {
        let size = std::mem::size_of::<JointRows>();
        assert!(size <= 480, "{size} bytes");
    }

    /// A ball joint's rows: `K⁻¹` inverts `J M⁻¹ Jᵀ` (built here as dense matrices), and the
    /// visit on 3-vectors gives the padded block's numbers bit for bit, in the biased and relax
    /// passes, on a chain and a grid whose bodies move unevenly.
    #[test]
    fn a_ball_joint_on_three_rows_is_the_padded_block() {
        let tgs = crate::pgs::config::preset_config("tgs-soft");
        for (name, sets) in [("rigid-chain", vec![]), ("rigid-joint-grid", vec!["n=4".to_string()])] {
            let scene = solverlab_scenes::resolve(name, &sets).unwrap();
            let mut st = scene.initial_state(scene.dt).rigid;
            for (i, s) in st.iter_mut().enumerate() {
                let i = i as f64 + 1.0;
                s.v += 0.3 * Vec3::new(i.sin(), (2.0 * i).cos(), (3.0 * i).sin());
                s.w += Vec3::new((5.0 * i).cos(), i.sin(), (7.0 * i).cos());
                // Turned off the axes, so that no entry of K is zero.
                s.q = UnitQuaternion::from_scaled_axis(Vec3::new(0.3 * i.cos(), 0.2 * (2.0 * i).sin(), 0.4)) * s.q;
            }
            let inv_m: Vec<f64> = scene.rigid.iter().map(|b| b.inv_mass).collect();
            let inv_i: Vec<Matrix3<f64>> =
                scene.rigid.iter().zip(&st).map(|(b, s)| b.inv_inertia_world(&s.q)).collect();
            let h = scene.dt / 4.0;
            let mut checked = 0;
            for j in scene.joints.iter().filter(|j| j.kind == JointKind::Ball) {
                let mut rows = JointRows::default();
                rows.rebuild(j, &JointFrame::new(j, &scene.rigid), &st, &inv_m, &inv_i, &tgs, h);
                assert_eq!((rows.dim, rows.limit), (3, 0));
                // K from the dense Jacobian and inverse mass.
                let jac = DMatrix::from_fn(3, 12, |r, c| {
                    let x = rows.row(r);
                    [x.la, x.aa, x.lb, x.ab][c / 3][c % 3]
                });
                let mut m = DMatrix::zeros(12, 12);
                let (ib, imb) = j.b.map_or((Matrix3::zeros(), 0.0), |b| (inv_i[b], inv_m[b]));
                for (block, im) in
                    [(0, Matrix3::identity() * inv_m[j.a]), (3, inv_i[j.a]), (6, Matrix3::identity() * imb), (9, ib)]
                {
                    m.view_mut((block, block), (3, 3)).copy_from(&im);
                }
                let k = &jac * m * jac.transpose();
                let identity = k * DMatrix::from_fn(3, 3, |r, c| rows.k3[(r, c)]);
                assert!((identity - DMatrix::identity(3, 3)).amax() < 1e-9, "{name}: K K⁻¹ = I");
                for pass in [true, false] {
                    let (mut a, mut b) = (rows.clone(), rows.clone());
                    let (mut va, mut vb) = (st.clone(), st.clone());
                    a.lambda = Vector6::new(0.1, -0.2, 0.3, 0.0, 0.0, 0.0);
                    b.lambda = a.lambda;
                    let ra = a.solve_point(&mut va[..], &inv_m, &inv_i, 1.0, pass);
                    let rb = b.solve_block(&mut vb[..], &inv_m, &inv_i, 1.0, pass);
                    assert_eq!(ra.0.to_bits(), rb.0.to_bits(), "{name}: the residual");
                    let bits = |v: &[RigidState]| -> Vec<u64> {
                        v.iter()
                            .flat_map(|s| s.v.iter().chain(s.w.iter()).map(|x| x.to_bits()).collect::<Vec<_>>())
                            .collect()
                    };
                    assert_eq!(bits(&va), bits(&vb), "{name}: the velocities");
                    assert_eq!(a.lambda.map(f64::to_bits), b.lambda.map(f64::to_bits), "{name}: the impulses");
                    assert_ne!(bits(&va), bits(&st), "{name}: the visit moved the bodies");
                }
                checked += 1;
            }
            assert!(checked >= 9, "{name}: ball joints checked");
        }
    }
}
