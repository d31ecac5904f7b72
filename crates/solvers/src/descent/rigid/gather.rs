//! The rows of a rigid step, gathered once per step at the poses of its start (step 3 of
//! [`super`]): contacts with their friction pairs and sticking anchors, the joints' rows, their
//! warm start, and the compliant augmented Lagrangian's penalties.

use std::collections::HashMap;

use solverlab_core::rigid::{JointKind, Other, RigidContact, RigidState};
use solverlab_core::rows::tangents;
use solverlab_core::{Scene, Vec3};

use super::rows::{Friction, Geometry, Poses, Row, Vec6};
use crate::descent::{alm, DescentConfig, Penalty, Rows};

/// How far a sticking contact's anchors may have drifted apart along the surface (m) for the
/// next step to keep them (the authors' demo's `STICK_THRESH`).
pub(super) const STICK_DRIFT: f64 = 0.01;

/// A contact of the step: its row, the surface points carried by the bodies, for the violation
/// and the sticking anchors.
#[derive(Clone, Copy, Debug)]
pub(super) struct Contact {
    /// Its normal row (its friction pair, if any, follows it).
    pub(super) normal: usize,
    pub(super) a: usize,
    pub(super) b: Option<usize>,
    pub(super) n: Vec3,
    /// The narrow phase's surface points in the bodies' frames (`lb` the world point for a
    /// collider): the violation's.
    pub(super) la: Vec3,
    pub(super) lb: Vec3,
    /// The friction rows' anchors, in the same frames.
    pub(super) anchors: (Vec3, Vec3),
    /// Their tangential offset at the start of the step (m).
    pub(super) drift: f64,
    /// The friction rows' directions.
    pub(super) t: [Vec3; 2],
}

/// What the last step leaves to the next: each hard row's `(λ, k)` by id, the anchors of the
/// contacts that stuck, and each contact's friction force as a world vector (the tangent
/// directions are chosen afresh from the normal in every step, and may turn), both by their
/// normal row's id.
#[derive(Default)]
pub(super) struct Warm {
    pub(super) rows: HashMap<u64, (f64, f64)>,
    pub(super) anchors: HashMap<u64, (Vec3, Vec3)>,
    pub(super) friction: HashMap<u64, Vec3>,
}

impl Warm {
    /// A hard row's multiplier and penalty from the last step, decayed (`λ ← αγλ`, or `γλ` under
    /// the compliant augmented Lagrangian; `k ← clamp(γk, k_start, k_max)`); a new row's start.
    fn start(&self, id: u64, c: &DescentConfig) -> (f64, f64) {
        let keep = if c.penalty == Penalty::CompliantAlm { c.gamma } else { c.alpha * c.gamma };
        match self.rows.get(&id) {
            Some(&(lambda, k)) => (lambda * keep, (k * c.gamma).clamp(c.k_start, c.k_max)),
            None => (0.0, c.k_start),
        }
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The id of direction `dir` (0 normal, 1 and 2 friction) of the contact with key
/// `(a, other, feature)`: the same while the same features touch.
fn contact_id(c: &RigidContact, dir: u64) -> u64 {
    let other = match c.b {
        Other::Body(k) => k as u64,
        Other::Collider(code) => (1 << 62) | code,
    };
    let h = mix(mix(mix(c.a as u64) ^ other) ^ c.point.feature as u64);
    (h & !(1 << 63) & !3) | dir
}

/// The id of row `row` (below 16) of joint `j`.
fn joint_id(j: usize, row: u64) -> u64 {
    (1 << 63) | ((j as u64) << 4) | row
}

fn six(linear: Vec3, angular: Vec3) -> Vec6 {
    Vec6::new(linear.x, linear.y, linear.z, angular.x, angular.y, angular.z)
}

/// A row with the settings' penalty and multiplier: a spring of `spring` N/m under `vbd`, a
/// hard row warm-started from the last step otherwise (or a spring of `1/compliance`).
#[allow(clippy::too_many_arguments)]
fn row(c: &DescentConfig, warm: &Warm, id: u64, a: usize, b: Option<usize>, geometry: Geometry, spring: f64) -> Row {
    let hard = c.rows == Rows::Augmented;
    let (lambda, k) = if hard { warm.start(id, c) } else { (0.0, spring) };
    Row {
        id,
        a,
        b,
        geometry,
        scale: 1.0,
        k,
        lambda,
        s: 1.0,
        fmin: f64::NEG_INFINITY,
        fmax: f64::INFINITY,
        hard,
        offset: 0.0,
        friction: None,
    }
}

/// The contacts' rows: per contact its normal (pushing only) and, with friction, a pair of
/// tangent rows bounded together by `μ|λₙ|`, all linearised at the start of the step. A contact
/// that stuck in the last step keeps its friction anchors (the surface points where it first
/// stuck), so its friction rows hold it where it stuck, while they stay within 1 cm of the
/// narrow phase's points (the demo keeps them for the normal row too; a rolling sphere then sank
/// 3 cm, its old anchor carried up and away from the ground).
pub(super) fn contacts(
    c: &DescentConfig,
    warm: &Warm,
    found: &[RigidContact],
    st: &[RigidState],
    rows: &mut Vec<Row>,
    out: &mut Vec<Contact>,
) {
    out.clear();
    for k in found {
        let b = match k.b {
            Other::Body(j) => Some(j),
            Other::Collider(_) => None,
        };
        let (n, s) = (k.point.normal, k.point.separation);
        let id = contact_id(k, 0);
        // The narrow phase's surface points, in the bodies' frames.
        let (pa, pb) = (k.point.point + n * (0.5 * s), k.point.point - n * (0.5 * s));
        let local = |pa: Vec3, pb: Vec3| {
            (
                st[k.a].q.inverse_transform_vector(&(pa - st[k.a].x)),
                b.map_or(pb, |j| st[j].q.inverse_transform_vector(&(pb - st[j].x))),
            )
        };
        let world = |(la, lb): (Vec3, Vec3)| (st[k.a].x + st[k.a].q * la, b.map_or(lb, |j| st[j].x + st[j].q * lb));
        // The normal row at the narrow phase's points.
        let (ra, rb) = (pa - st[k.a].x, b.map_or(Vec3::zeros(), |j| pb - st[j].x));
        let linear = |d: Vec3, c0: f64, ra: Vec3, rb: Vec3| Geometry::Linear {
            ja: six(d, ra.cross(&d)),
            jb: six(-d, -rb.cross(&d)),
            c0,
        };
        let normal = rows.len();
        let c0 = n.dot(&(pa - pb));
        let mut r = row(c, warm, id, k.a, b, linear(n, c0, ra, rb), c.contact_stiffness);
        r.fmax = 0.0;
        // Only an overlap is an error: a gap at the start is kept whole.
        r.offset = if r.hard { c.alpha * c0.min(0.0) } else { 0.0 };
        rows.push(r);
        // The friction rows at the anchors where the contact stuck, while each anchor is still
        // within 1 cm of its fresh point (a rolling body carries its anchor away), or at the
        // fresh points.
        let fresh = local(pa, pb);
        let anchors = warm
            .anchors
            .get(&id)
            .copied()
            .filter(|&anchors| {
                let (qa, qb) = world(anchors);
                (qa - pa).norm() < STICK_DRIFT && (qb - pb).norm() < STICK_DRIFT
            })
            .unwrap_or(fresh);
        let (pa, pb) = world(anchors);
        let (ra, rb) = (pa - st[k.a].x, b.map_or(Vec3::zeros(), |j| pb - st[j].x));
        let gap = pa - pb;
        let (t1, t2) = tangents(&n);
        let drift = (gap - n * n.dot(&gap)).norm();
        if k.friction > 0.0 {
            // The last step's friction force, on this step's directions.
            let (keep, force) = (rows[normal].lambda, warm.friction.get(&id).copied().unwrap_or_default());
            let last = warm.rows.get(&id).map_or(0.0, |w| w.0);
            let share = if last != 0.0 { keep / last } else { 0.0 };
            for (dir, t) in [(1u64, t1), (2, t2)] {
                let c0 = t.dot(&gap);
                let mut r = row(c, warm, contact_id(k, dir), k.a, b, linear(t, c0, ra, rb), c.contact_stiffness);
                if r.hard {
                    r.lambda = force.dot(&t) * share;
                }
                r.offset = if r.hard { c.alpha * c0 } else { 0.0 };
                (r.fmin, r.fmax) = (0.0, 0.0);
                r.friction = Some(Friction { normal, mu: k.friction, second: dir == 2 });
                rows.push(r);
            }
        }
        out.push(Contact { normal, a: k.a, b, n, la: fresh.0, lb: fresh.1, anchors, drift, t: [t1, t2] });
    }
}

/// The active joints' rows: three anchor rows for every joint; a revolute joint's two axis rows
/// and a row per finite limit; a fixed joint's three twist rows. A joint with compliance `α`
/// has anchor rows of stiffness `1/α`.
pub(super) fn joints(
    c: &DescentConfig,
    warm: &Warm,
    scene: &Scene,
    frames: &[solverlab_core::rigid::JointFrame],
    time: f64,
    rows: &mut Vec<Row>,
) {
    for (j, joint) in scene.joints.iter().enumerate().filter(|(j, _)| scene.joint_active(*j, time)) {
        let (a, b) = (joint.a, joint.b);
        // ℓ: the farthest any point of either body lies from the anchor, at the start.
        let f = &frames[j];
        let reach = |k: usize, arm: &Vec3| arm.norm() + scene.rigid[k].shape.bounding_radius();
        let scale = reach(a, &f.anchor_a).max(b.map_or(0.0, |k| reach(k, &f.anchor_b)));
        for (axis, e) in [Vec3::x(), Vec3::y(), Vec3::z()].into_iter().enumerate() {
            let mut r = row(c, warm, joint_id(j, axis as u64), a, b, Geometry::Anchor { joint: j, e }, c.stiffness);
            if joint.compliance > 0.0 && c.penalty == Penalty::Ramp {
                (r.hard, r.k, r.lambda) = (false, 1.0 / joint.compliance, 0.0);
            }
            rows.push(r);
        }
        let mut angular = |id: u64, geometry: Geometry, one_sided: bool| {
            let mut r = row(c, warm, joint_id(j, id), a, b, geometry, c.stiffness);
            r.scale = scale;
            if one_sided {
                r.fmax = 0.0;
            }
            rows.push(r);
        };
        match joint.kind {
            JointKind::Ball => {}
            JointKind::Revolute { lower, upper, .. } => {
                let across = f.axis_a.cross(&f.ref_a);
                angular(3, Geometry::Align { joint: j, u: f.ref_a, w: f.axis_b }, false);
                angular(4, Geometry::Align { joint: j, u: across, w: f.axis_b }, false);
                if lower.is_finite() {
                    angular(5, Geometry::Limit { joint: j, lower: true, bound: lower }, true);
                }
                if upper.is_finite() {
                    angular(6, Geometry::Limit { joint: j, lower: false, bound: upper }, true);
                }
            }
            JointKind::Fixed => {
                for (axis, e) in [Vec3::x(), Vec3::y(), Vec3::z()].into_iter().enumerate() {
                    angular(3 + axis as u64, Geometry::Twist { joint: j, e }, false);
                }
            }
        }
    }
}

/// The error regularisation of the joints' hard rows: `α·C*(x⁻)` (for a limit only the part
/// past it), at the poses of the start of the step.
pub(super) fn regularise(c: &DescentConfig, rows: &mut [Row], p: &Poses) {
    for row in rows.iter_mut().filter(|r| r.hard && r.joint().is_some()) {
        let value = row.value(p);
        row.offset = c.alpha * if row.equality() { value } else { value.min(0.0) };
    }
}

/// The compliant augmented Lagrangian's `(k_eff, s)` of every hard row ([`alm`]): material
/// stiffness `1/compliance` for a compliant joint's anchor rows, infinite for friction,
/// `hard_stiffness` otherwise; effective inertia `H = 1/(h²·J M⁻¹ Jᵀ)` over the row's movable
/// bodies at the start of the step (`body` gives a body's mass and world inertia tensor, `None`
/// if it does not move). An angular joint row sees each body's inertia about the joint's anchor,
/// `I + m(|r|²·1 − r rᵀ)` with `r` the arm from its centre: its anchor rows hold the body there,
/// so that is the inertia the row turns (about its own centre a pendulum's bob is 250 times
/// lighter, and the limit of a hinge let it through by 0.2 rad).
pub(super) fn alm_rows(
    c: &DescentConfig,
    scene: &Scene,
    rows: &mut [Row],
    p: &Poses,
    h: f64,
    body: &dyn Fn(usize) -> Option<(f64, nalgebra::Matrix3<f64>)>,
) {
    for row in rows.iter_mut() {
        if !row.hard {
            continue;
        }
        let joint = row.joint();
        let mut mobility = 0.0;
        for (k, on_a) in [(Some(row.a), true), (row.b, false)] {
            let Some((k, (mass, mut inertia))) = k.and_then(|k| body(k).map(|b| (k, b))) else { continue };
            if let Some((j, true)) = joint {
                let f = &p.frames[j];
                let arm = p.st[k].q * if on_a { f.anchor_a } else { f.anchor_b };
                inertia += (nalgebra::Matrix3::identity() * arm.norm_squared() - arm * arm.transpose()) * mass;
            }
            let g = row.eval(p, Some(k)).1;
            let (lin, ang) = (g.fixed_rows::<3>(0), g.fixed_rows::<3>(3).into_owned());
            let turn = inertia.try_inverse().map_or(0.0, |inv| ang.dot(&(inv * ang)));
            mobility += lin.norm_squared() / mass + turn;
        }
        if mobility <= 0.0 {
            continue;
        }
        let material = match joint {
            _ if row.friction.is_some() => f64::INFINITY,
            Some((j, false)) if scene.joints[j].compliance > 0.0 => 1.0 / scene.joints[j].compliance,
            _ => c.hard_stiffness,
        };
        let rho = alm::rho(1.0 / (h * h * mobility), material, row.equality());
        (row.k, row.s) = alm::coefficients(material, rho);
    }
}
