//! The Newton family's rows for 6-DoF rigid bodies: contacts and joints as scalar position-level
//! rows over coordinates in which `W` is diagonal, so that [`crate::newton`]'s loop, the sparse
//! `J` and `J W Jᵀ` of [`crate::newton::jacobian`], and both linear solvers run on them unchanged.
//!
//! # Formulation
//!
//! Position level with an exponential retraction, as the relaxation family's extended
//! position-based dynamics (the shared floor's [`RigidXpbd`]) and this family's particle rows:
//!
//! 1. The step's prediction, contacts (normal, surface points in the bodies' frames, the
//!    push-out floor), friction and velocity update are the relaxation family's
//!    ([`RigidXpbd`], in the shared floor): only the solve of the normal and joint rows differs.
//! 2. Each movable body `k` has two coordinate blocks of three: its position `xₖ` (m), with
//!    inverse mass `1/m`, and `uₖ = D⁻¹ R̃ᵀ φₖ` with inverse mass 1, where `φₖ` is the rotation
//!    vector taking the predicted orientation `q̃ₖ` to the current one, `qₖ = exp(φₖ)·q̃ₖ`, `R̃` is
//!    `q̃ₖ`'s rotation and `D = diag(√I⁻¹)` in the body's principal frame. A row's gradient
//!    `g` with respect to `φ` (world) becomes `D R̃ᵀ g` with respect to `u`, and a correction
//!    `Δu = D R̃ᵀ g Δλ` turns the body by `R̃ D Δu = I⁻¹ g Δλ` (with the world inverse inertia at
//!    the predicted orientation, one tensor per step as in the other families): the block-diagonal
//!    `M⁻¹` is the diagonal `W` of these coordinates.
//! 3. Rows, with `r` the arm from a body's centre and gradients `(linear, angular)` per body:
//!    * a contact's normal: `C = (pₐ − p_b)·n − floor ≥ 0` (the surface points, `floor ≤ 0`
//!      the overlap a deep contact may keep this step), `(n, rₐ×n)` and `(−n, −r_b×n)`;
//!    * a joint's anchors, three rows along the world axes `e`: `C = e·(pₐ − p_b) = 0`,
//!      `(e, rₐ×e)` and `(−e, −r_b×e)`, with the joint's compliance;
//!    * a revolute joint's axes: `C = t·(aₐ × a_b) = 0` for the two unit tangents `t` of `aₐ`,
//!      angular gradients `−t` on `a`, `+t` on `b` (exact while the axes nearly agree);
//!    * a revolute limit: `C = θ − lower ≥ 0` or `upper − θ ≥ 0` on the hinge angle `θ`,
//!      angular `∓aₐ` and `±aₐ`, present while `θ` is within 0.1 rad of the limit;
//!    * a fixed joint: `C = e·φ_rel = 0` along the world axes, `φ_rel` the rotation vector from
//!      `a`'s carried frame to `b`'s, angular `−e` and `+e`.
//!
//!    Contact rows' ids are built from the contact's key (body, other body or collider, feature),
//!    so a resting contact warm-starts from its multiplier of the last step.
//! 4. Friction (the Newton loop's step 6, in rounds): from the prediction, Gauss-Seidel passes
//!    of the relaxation family's position-level Coulomb friction, point by point, limited by the
//!    first pass's `μ·λₙ`; then every manifold with friction that pushed sticks: two rows hold
//!    the centre of its points in place since the step's start, `C = t·((cₐ − cₐ⁰) − (c_b −
//!    c_b⁰)) = 0` along the tangents, and one its bodies' relative turn about the normal, and the
//!    second pass solves them with the normal and joint rows. A manifold whose rows took more
//!    than its cone (`|λₜ| > μ·Σλₙ`, or a twist above `μ·Σλₙ` times its radius) is released
//!    and the round runs again with it sliding under the passes' Coulomb correction. (Point by
//!    point, the passes can stop a sliding box's corners by turning it, which the normal rows
//!    then undo: a box released from rest on a 35° slope with μ = 0.5 takes 56 % of its cone in
//!    its first step and slides 2.2 % further in 2 s than the discrete closed form; from the
//!    second step on its acceleration is Coulomb's to 1e-4. Applying the rest of the cone at a
//!    sliding manifold's centre fixed the box and made a pile of ragdolls under `direct` gain
//!    energy, so it is not done.) Rows per
//!    point instead of per manifold over-constrain a box (eight tangent rows and four normal
//!    rows on six degrees of freedom, not all satisfiable at once when the box must tilt) and the
//!    direct solve stopped converging; friction fixed after the normal solve (as for the
//!    particles) let a box with μ = 1 creep down a 30° slope, because a normal correction at an
//!    arm turns the body and slides its other points.
//! 5. Each outer iteration's step is scaled so that no body turns by more than 0.25 rad (a trust
//!    region): at one step a frame a pile of ragdolls otherwise had a hinge turned half a
//!    revolution in one Newton step, onto the other zero of its axis rows, and blew up.
//!
//! # Residual
//!
//! The Newton loop's stopping measure over these rows: `max(0, −C)` for contacts (beyond the
//! push-out floor), `|C + α̃λ|` for joint rows (per axis, m and rad) and `|C|` for a sticking
//! manifold's friction rows. The violation it reports to an observer per iteration is the
//! relaxation family's on the same poses ([`RigidXpbd::violation`]: penetration and joint
//! errors), so that traces of the two families compare; the two agree once a step converges,
//! except that a deep overlap pushed out over several steps counts in full in the latter.
//!
//! # References
//!
//! * M. Müller, M. Macklin, N. Chentanez, S. Jeschke, T.-Y. Kim, "Detailed Rigid Body Simulation
//!   with Extended Position Based Dynamics", SCA 2020: the rows, the generalised inverse masses.
//! * J. Nocedal, S. J. Wright, "Numerical Optimization", 2nd ed., 2006, §10.3 (Gauss-Newton)
//!   and §4 (trust regions).
//! * T. D. Barfoot, "State Estimation for Robotics", 2017, §7.1: the left Jacobian of SO(3)
//!   and its inverse.
//! * D. M. Kaufman, S. Sueda, D. L. James, D. K. Pai, "Staggered Projections for Frictional
//!   Contact in Multibody Systems", SIGGRAPH Asia 2008: alternating friction and normal solves.

use nalgebra::{Matrix3, UnitQuaternion};
use solverlab_core::rigid::joint_rows::{joint_rows, left_jacobian_inverse_transpose, left_jacobian_transpose};
use solverlab_core::rigid::{Other, RigidState};
use solverlab_core::rows::{padded, padded_grad, tangents, Row, RowKind, RowSet, ROW_PARTICLES};
use solverlab_core::{Scene, Vec3};

use crate::common::xpbd::RigidXpbd;

/// The top four bits of every rigid row id (bit 59 then tells joints from contacts): no particle
/// row id has them all set below 2²⁹ particles.
const TAG: u64 = 0xf << 60;

/// How close to a revolute limit (rad) its row is gathered.
const LIMIT_MARGIN: f64 = 0.1;

/// The most a body may turn in one outer iteration (rad).
const MAX_TURN: f64 = 0.25;

/// Gauss-Seidel passes of the friction rows (see [`RigidXpbd::friction_passes`]).
const FRICTION_PASSES: usize = 10;

/// Whether `id` is a rigid row's (see [`TAG`]).
pub(crate) fn is_rigid_id(id: u64) -> bool {
    id & TAG == TAG
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The id of a contact row with key `(a, other, feature)`.
fn contact_id(a: usize, other: Other, feature: u32) -> u64 {
    let other = match other {
        Other::Body(k) => k as u64,
        Other::Collider(c) => (1 << 62) | c,
    };
    let h = mix(mix(mix(a as u64) ^ other) ^ feature as u64);
    TAG | (h & ((1 << 59) - 4))
}

/// The id of row `row` (0–7) of joint `j`.
fn joint_id(j: usize, row: usize) -> u64 {
    TAG | (1 << 59) | ((j as u64 & 0x00ff_ffff_ffff_ffff) << 3) | row as u64
}

/// A body's pose at the loop's coordinates.
struct Pose {
    x: Vec3,
    q: UnitQuaternion<f64>,
    /// The rotation vector from the predicted orientation (world).
    phi: Vec3,
}

/// The rigid part of the Newton solver.
#[derive(Default)]
pub(crate) struct RigidRows {
    /// Prediction, contacts, friction and velocities (shared with the relaxation family).
    pub(crate) xpbd: RigidXpbd,
    /// Index of the first body's first coordinate block.
    offset: usize,
    /// Per body: the predicted rotation `R̃`, `D = √I⁻¹` (principal frame), movable this step.
    rot: Vec<Matrix3<f64>>,
    scale: Vec<Vec3>,
    movable: Vec<bool>,
    /// Contact row ids, one per contact of the step (normal; `| 1`, `| 2` its tangents).
    ids: Vec<u64>,
    /// The step's manifolds: runs of contacts between the same two bodies (or body and
    /// collider).
    manifolds: Vec<Manifold>,
    /// The first pass's normal multipliers (kept by the first friction round).
    first_ln: Vec<f64>,
}

/// One manifold's static friction: its contacts' centre carried by each body, and whether its
/// rows hold it.
#[derive(Clone, Copy, Debug)]
struct Manifold {
    /// Its contacts, `first..end` in the step's contact list.
    first: usize,
    end: usize,
    /// Row id of its tangent rows (`| 1`, `| 2`) and its twist row (`| 3`).
    id: u64,
    /// The centre of its surface points in `a`'s and `b`'s frames (world for a collider), and
    /// where they were at the step's start.
    ca: Vec3,
    cb: Vec3,
    ca0: Vec3,
    cb0: Vec3,
    /// The mean normal, and the largest distance of a point from the centre (the twist arm, m).
    n: Vec3,
    radius: f64,
    /// The bodies' orientations at the step's start (for the twist).
    qa0: UnitQuaternion<f64>,
    qb0: UnitQuaternion<f64>,
    /// Held by its friction rows in the second pass; released to slide after its rows asked
    /// for more than the cone allows.
    stick: bool,
    released: bool,
}

impl RigidRows {
    /// The prediction and the step's contacts; the bodies' coordinates start at block `offset`.
    pub(crate) fn begin(
        &mut self,
        scene: &Scene,
        st: &mut [RigidState],
        h: f64,
        offset: usize,
        time: f64,
        rule: crate::common::SpeculativeMargin,
    ) {
        let start: Vec<UnitQuaternion<f64>> = st.iter().map(|s| s.q).collect();
        self.xpbd.begin(scene, st, h, time, rule);
        self.offset = offset;
        self.rot.clear();
        self.rot.extend(self.xpbd.predicted().iter().map(|(_, q)| *q.to_rotation_matrix().matrix()));
        self.scale.clear();
        self.scale.extend(scene.rigid.iter().map(|b| b.inv_inertia.map(f64::sqrt)));
        self.movable.clear();
        self.movable.extend(scene.rigid.iter().zip(st.iter()).map(|(b, s)| !b.is_fixed() && !s.asleep));
        self.ids.clear();
        self.ids.extend(self.xpbd.found().iter().map(|c| contact_id(c.a, c.b, c.point.feature)));
        self.manifolds.clear();
        self.first_ln.clear();
        let (found, contacts) = (self.xpbd.found(), self.xpbd.contacts());
        let mut first = 0;
        while first < found.len() {
            let key = (found[first].a, found[first].b);
            let end = (first..found.len()).find(|&k| (found[k].a, found[k].b) != key).unwrap_or(found.len());
            let run = &contacts[first..end];
            let count = (end - first) as f64;
            let mean = |f: &dyn Fn(&crate::common::xpbd::Contact) -> Vec3| run.iter().map(f).sum::<Vec3>() / count;
            let (ca, cb, ca0, cb0) = (mean(&|c| c.la), mean(&|c| c.lb), mean(&|c| c.a0), mean(&|c| c.b0));
            let n = mean(&|c| c.n).try_normalize(1e-12).unwrap_or(run[0].n);
            let radius = run.iter().map(|c| (c.a0 - ca0).norm()).fold(0.0, f64::max);
            let start = |k: Option<usize>| k.map_or(UnitQuaternion::identity(), |k| start[k]);
            self.manifolds.push(Manifold {
                first,
                end,
                id: contact_id(key.0, key.1, u32::MAX),
                ca,
                cb,
                ca0,
                cb0,
                n,
                radius,
                qa0: start(Some(run[0].a)),
                qb0: start(run[0].b),
                stick: false,
                released: false,
            });
            first = end;
        }
    }

    /// Appends the inverse masses of the bodies' coordinate blocks.
    pub(crate) fn push_inverse_masses(&self, scene: &Scene, w: &mut Vec<f64>) {
        for (b, &m) in scene.rigid.iter().zip(&self.movable) {
            w.extend(if m { [b.inv_mass, 1.0] } else { [0.0, 0.0] });
        }
    }

    /// Appends, per body, metres per unit displacement of its two coordinate blocks: 1 for the
    /// position, and for the rotation block its largest turn per unit (`max √I⁻¹`, rad) times
    /// its bounding radius.
    pub(crate) fn push_coordinate_scales(&self, scene: &Scene, out: &mut Vec<f64>) {
        for (b, d) in scene.rigid.iter().zip(&self.scale) {
            out.extend([1.0, d.max() * b.shape.bounding_radius()]);
        }
    }

    /// Appends the predicted poses' coordinates (`x̃`, `u = 0`).
    pub(crate) fn push_predicted(&self, x: &mut Vec<Vec3>) {
        for (p, _) in self.xpbd.predicted() {
            x.extend([*p, Vec3::zeros()]);
        }
    }

    /// Body `k`'s pose at the coordinates `c` (the bodies' blocks only), with its rotation
    /// vector `φ` from the predicted orientation.
    fn pose(&self, c: &[Vec3], k: usize) -> Pose {
        let q0 = self.xpbd.predicted()[k].1;
        let phi = self.rot[k] * self.scale[k].component_mul(&c[2 * k + 1]);
        Pose { x: c[2 * k], q: UnitQuaternion::from_scaled_axis(phi) * q0, phi }
    }

    /// Writes the poses at the coordinates `c` into `st`.
    pub(crate) fn write_poses(&self, c: &[Vec3], st: &mut [RigidState]) {
        for (k, s) in st.iter_mut().enumerate() {
            if self.movable[k] {
                let p = self.pose(c, k);
                (s.x, s.q) = (p.x, p.q);
            }
        }
    }

    /// The coordinates of the poses in `st` (the inverse of [`RigidRows::write_poses`]).
    pub(crate) fn read_poses(&self, st: &[RigidState], c: &mut [Vec3]) {
        for (k, s) in st.iter().enumerate() {
            if !self.movable[k] {
                continue;
            }
            let phi = (s.q * self.xpbd.predicted()[k].1.inverse()).scaled_axis();
            let local = self.rot[k].transpose() * phi;
            c[2 * k] = s.x;
            c[2 * k + 1] = local.zip_map(&self.scale[k], |p, d| if d > 0.0 { p / d } else { 0.0 });
        }
    }

    /// Adds body `k`'s gradient `(linear, angular in the world)` at pose `p` to `row` (nothing
    /// for a fixed or sleeping body, or the world). The angular part becomes the gradient with
    /// respect to `u`: `D R̃ᵀ J_l(φ)ᵀ g`, where the left Jacobian `J_l(φ)` of SO(3) maps a change
    /// of `φ` to the world rotation it causes (`exp(φ + δφ) = exp(J_l δφ)·exp(φ)`), so that
    /// the direct solve's Newton steps see the exact derivative.
    fn add(&self, row: &mut Row, k: Option<usize>, p: Option<&Pose>, linear: Vec3, angular: Vec3) {
        let (Some(k), Some(p)) = (k.filter(|&k| self.movable[k]), p) else { return };
        debug_assert!(row.n + 2 <= ROW_PARTICLES);
        let angular = left_jacobian_transpose(&p.phi, &angular);
        let u = self.scale[k].component_mul(&(self.rot[k].transpose() * angular));
        row.particles[row.n] = self.offset + 2 * k;
        row.grad[row.n] = linear;
        row.particles[row.n + 1] = self.offset + 2 * k + 1;
        row.grad[row.n + 1] = u;
        row.n += 2;
    }

    fn row(id: u64, c: f64, kind: RowKind, compliance: f64) -> Row {
        Row { id, n: 0, particles: padded(&[]), grad: padded_grad(&[]), c, dc_dt: 0.0, kind, compliance, contact: None }
    }

    /// Appends every contact and joint row at the coordinates `c` (the bodies' blocks only).
    pub(crate) fn gather(&self, scene: &Scene, c: &[Vec3], rows: &mut RowSet) {
        let pose = |k: Option<usize>| k.map(|k| self.pose(c, k));
        let point = |p: &Option<Pose>, l: &Vec3| p.as_ref().map_or(*l, |p| p.x + p.q * l);
        let arm = |p: &Option<Pose>, at: &Vec3| p.as_ref().map_or(Vec3::zeros(), |p| at - p.x);
        for (contact, &id) in self.xpbd.contacts().iter().zip(&self.ids) {
            let (ka, kb) = (Some(contact.a), contact.b);
            let (sa, sb) = (pose(ka), pose(kb));
            let (pa, pb) = (point(&sa, &contact.la), point(&sb, &contact.lb));
            let n = contact.n;
            let mut row = Self::row(id, (pa - pb).dot(&n) - contact.floor, RowKind::Inequality, 0.0);
            let (ra, rb) = (arm(&sa, &pa), arm(&sb, &pb));
            self.add(&mut row, ka, sa.as_ref(), n, ra.cross(&n));
            self.add(&mut row, kb, sb.as_ref(), -n, -rb.cross(&n));
            if row.n > 0 {
                rows.push(&row);
            }
        }
        // Static friction: a sticking manifold's centre keeps its tangential position of the
        // step's start, `C = t·((cₐ − cₐ⁰) − (c_b − c_b⁰)) = 0` along its two tangents, and
        // the bodies keep their relative turn about the normal, `C = n·(φₐ − φ_b) = 0` with `φ`
        // each body's rotation vector since the step's start.
        for m in self.manifolds.iter().filter(|m| m.stick) {
            let contact = &self.xpbd.contacts()[m.first];
            let (ka, kb) = (Some(contact.a), contact.b);
            let (sa, sb) = (pose(ka), pose(kb));
            let (pa, pb) = (point(&sa, &m.ca), point(&sb, &m.cb));
            let (ra, rb) = (arm(&sa, &pa), arm(&sb, &pb));
            let slip = (pa - m.ca0) - (pb - m.cb0);
            let (t1, t2) = tangents(&m.n);
            for (dir, t) in [(1, t1), (2, t2)] {
                let mut row = Self::row(m.id | dir, t.dot(&slip), RowKind::Equality, 0.0);
                self.add(&mut row, ka, sa.as_ref(), t, ra.cross(&t));
                self.add(&mut row, kb, sb.as_ref(), -t, -rb.cross(&t));
                if row.n > 0 {
                    rows.push(&row);
                }
            }
            let turn = |p: &Option<Pose>, q0: &UnitQuaternion<f64>| {
                p.as_ref().map_or(Vec3::zeros(), |p| (p.q * q0.inverse()).scaled_axis())
            };
            let (turn_a, turn_b) = (turn(&sa, &m.qa0), turn(&sb, &m.qb0));
            let mut row = Self::row(m.id | 3, m.n.dot(&(turn_a - turn_b)), RowKind::Equality, 0.0);
            // `log(q·q⁰⁻¹)` changes by `J_l⁻¹(φ)·δω` when the body turns by `δω`.
            self.add(&mut row, ka, sa.as_ref(), Vec3::zeros(), left_jacobian_inverse_transpose(&turn_a, &m.n));
            self.add(&mut row, kb, sb.as_ref(), Vec3::zeros(), -left_jacobian_inverse_transpose(&turn_b, &m.n));
            if row.n > 0 {
                rows.push(&row);
            }
        }
        for (j, (joint, f)) in scene.joints.iter().zip(self.xpbd.frames()).enumerate() {
            if !self.xpbd.joint_active(j) {
                continue;
            }
            let (ka, kb) = (Some(joint.a), joint.b);
            let (sa, sb) = (pose(ka), pose(kb));
            let (a, b) = (sa.as_ref().map(|p| (p.x, p.q)), sb.as_ref().map(|p| (p.x, p.q)));
            for w in joint_rows(joint, f, a, b, LIMIT_MARGIN).iter() {
                let mut row = Self::row(joint_id(j, w.row), w.c, w.kind, w.compliance);
                self.add(&mut row, ka, sa.as_ref(), w.linear_a, w.angular_a);
                self.add(&mut row, kb, sb.as_ref(), w.linear_b, w.angular_b);
                if row.n > 0 {
                    rows.push(&row);
                }
            }
        }
    }

    /// The largest fraction (at most 1) of the change `d` of the bodies' coordinates that turns
    /// no body by more than [`MAX_TURN`]: the Newton loop's first trial step. Without it, a
    /// linearisation far from the solution (a ragdoll's pile-up at one step a frame) can turn a
    /// hinge half a revolution in one iteration, onto the other zero of its axis rows, and the
    /// velocities derived from that turn blow the scene up.
    pub(crate) fn step_limit(&self, d: &[Vec3]) -> f64 {
        let turn = (0..self.movable.len())
            .filter(|&k| self.movable[k])
            .map(|k| self.scale[k].component_mul(&d[2 * k + 1]).norm())
            .fold(0.0, f64::max);
        if turn > MAX_TURN {
            MAX_TURN / turn
        } else {
            1.0
        }
    }

    /// Sets each contact's normal multiplier from `lambda` (by row id); its friction is kept.
    pub(crate) fn set_normal_multipliers(&mut self, lambda: &impl Fn(u64) -> f64) {
        for (contact, &id) in self.xpbd.contacts_mut().iter_mut().zip(&self.ids) {
            contact.ln = lambda(id).max(0.0);
        }
    }

    /// Whether a contact with friction pushed (after [`RigidRows::set_normal_multipliers`]).
    pub(crate) fn needs_friction(&self) -> bool {
        self.xpbd.contacts().iter().any(|c| c.mu > 0.0 && c.ln > 0.0)
    }

    /// The friction pass at the poses in `st` (the prediction): Gauss-Seidel passes of
    /// position-level Coulomb friction with the contacts' normal multipliers, point by point.
    /// Every manifold with friction that pushed and was not released then sticks: its tangent
    /// and twist rows join the Newton loop's second pass, which holds it exactly, and
    /// [`RigidRows::settle_friction`] releases it if that took more than its cone. Released
    /// manifolds slide with the Coulomb correction the passes gave them. (The passes alone
    /// cannot tell sticking from sliding: point by point, a box's corners clamp while the box
    /// could stick, and the clamped points of a sliding box sum to less than the summed cone.)
    ///
    /// The passes' cones use the first pass's normal multipliers in every round: a sliding box
    /// held by its rows pivots on its front edge, and the normal multipliers of that round
    /// would brake it too hard in the next.
    pub(crate) fn friction(&mut self, st: &mut [RigidState]) {
        if self.first_ln.len() != self.ids.len() {
            self.first_ln.clear();
            self.first_ln.extend(self.xpbd.contacts().iter().map(|c| c.ln));
        }
        for (c, ln) in self.xpbd.contacts_mut().iter_mut().zip(&self.first_ln) {
            c.lt = Vec3::zeros();
            c.ln = *ln;
        }
        self.xpbd.friction_passes(st, FRICTION_PASSES);
        let contacts = self.xpbd.contacts();
        for m in &mut self.manifolds {
            let run = &contacts[m.first..m.end];
            m.stick = run[0].mu > 0.0 && run.iter().any(|c| c.ln > 0.0) && !m.released;
        }
    }

    /// After the second pass: a sticking manifold's friction is what the passes gave plus its
    /// rows' multipliers, shared among its points in proportion to their normal multipliers.
    /// A manifold whose friction lies outside its cone `μ·Σλₙ`, or whose twist exceeds
    /// `μ·Σλₙ` times its radius, is released (it slides in the next round); returns whether
    /// any was.
    pub(crate) fn settle_friction(&mut self, lambda: impl Fn(u64) -> f64) -> bool {
        self.set_normal_multipliers(&lambda);
        let contacts = self.xpbd.contacts_mut();
        let mut any = false;
        for m in self.manifolds.iter_mut().filter(|m| m.stick) {
            let run = &mut contacts[m.first..m.end];
            let ln: f64 = run.iter().map(|c| c.ln).sum();
            let (t1, t2) = tangents(&m.n);
            let lt = run.iter().map(|c| c.lt).sum::<Vec3>() + t1 * lambda(m.id | 1) + t2 * lambda(m.id | 2);
            let twist = lambda(m.id | 3);
            let limit = run[0].mu * ln * (1.0 + 1e-6);
            if lt.norm() > limit || twist.abs() > limit * m.radius {
                m.released = true;
                any = true;
            }
            for c in run.iter_mut() {
                c.lt = if ln > 0.0 { lt * (c.ln / ln) } else { Vec3::zeros() };
            }
        }
        any
    }
}

mod joints;
#[cfg(test)]
mod tests;

#[cfg(test)]
use joints::anchor_curvature;
pub(crate) use joints::is_joint_curvature_id;
