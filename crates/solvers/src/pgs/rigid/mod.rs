//! Sequential impulses on 6-DoF rigid bodies: the contact rows of the impulse tutorial, with the
//! same options as the particle rows of [`super`].
//!
//! Per step, after the shared prediction `v ← v + g·h` ([`solverlab_core::rigid`]):
//!
//! 1. Contacts at the start-of-step poses ([`rigid_contacts`]) within a speculative margin
//!    `4·slop + 2h·max(|v| + |ω|·r)`.
//! 2. Per contact point with arms `r_a = p − x_a`, `r_b = p − x_b`, normal `n` (from b to a) and
//!    two tangents `t₁, t₂`: the row `J = (n, r_a×n, −n, −r_b×n)` acting on `(v_a, ω_a, v_b, ω_b)`
//!    and its effective mass `m = 1/(J M⁻¹ Jᵀ)` with
//!    `J M⁻¹ Jᵀ = 1/m_a + 1/m_b + (r_a×n)·I_a⁻¹(r_a×n) + (r_b×n)·I_b⁻¹(r_b×n)`, `I⁻¹` the world
//!    inverse inertia. The relative normal speed is `v_n = J v`.
//! 3. Position feedback, for separation `s` (negative when penetrating): a speculative contact
//!    (`s > 0`) has bias `s/h` (it may close the gap in this step, no more). Penetration gets
//!    Baumgarte `max(β·min(0, s + slop)/h, −max_push)` in the velocity rows, or in split rows on
//!    pseudo velocities (`split_impulse`), or the soft form `max(ω/a₁·s, −max_push)` with mass
//!    and impulse scales (`feedback = soft`; the same coefficients as the particle rows).
//! 4. Islands: the connected components of the movable bodies linked by body-body contacts
//!    and joints ([`solverlab_core::rigid::islands`]). With `islands` (the default) the sweeps visit the
//!    islands one after the other and each stops on its own tolerance; the rows are the same, so
//!    with no tolerance met the result is bit-identical to one system (`tests/rigid.rs`). An
//!    island with a sleeping body wakes entirely when any of its bodies is awake (a touch merges
//!    islands); sleeping islands are neither solved nor moved.
//! 5. Warm start: each point's last normal impulse (matched by body pair and narrow-phase
//!    feature id, or else by the nearest point of the pair within `4·slop`) and each manifold's
//!    friction impulse (a world vector, projected on the new tangents) and twist impulse, times
//!    `warm_start`.
//! 6. `iterations` sweeps, island by island: first the joints' blocks ([`super::joints`]), then
//!    manifold by manifold: first the normal rows, either point by point,
//!    `Δλ = −m·s_m·(v_n + bias) − s_i·λ`, scaled by SOR `ω`, accumulated and clamped to `λ ≥ 0`,
//!    or (`block`, the default) all points of a manifold of two to four points at once (a box
//!    whose speculative margin reaches past its size can have up to eight against a plane;
//!    those go point by point) as a small complementarity
//!    problem solved by enumerating its active sets (`RigidSi::block_normals`; Box2D's block
//!    solver for two points, which Catto reported let Box2D stack 24 boxes at 10 iterations,
//!    here up to four). One block visit solves a lone manifold exactly; point by point, each
//!    point's impulse turns the body and disturbs the others, and the error that ten sweeps
//!    leave rocks a tall stack with a growing amplitude (tested, and the same in Bullet);
//!    then the manifold's friction at its centre (the mean of its points): the 2 × 2 tangent
//!    block solved exactly and clamped to the disk `|λₜ| ≤ μ·Σλₙ` (or, with
//!    `friction_cone = "pyramid"`, each tangent clamped to `±μ·Σλₙ` on its own), and a twist row on the
//!    relative spin about the normal clamped to `μ·r̄·Σλₙ` (`r̄` the points' mean distance from
//!    the centre). Friction at the centre, as PhysX's patch friction, depends on the total
//!    normal impulse only; per-point friction on a four-point manifold depends on how the load is
//!    split among the points, which is not unique. With split impulses, a sweep of the split
//!    rows on the pseudo velocities follows.
//! 7. Positions: `x ← x + h·(v + v_p)`; the rotation by the torque-free drift of `ω`
//!    ([`solverlab_core::rigid::torque_free_drift`], the gyroscopic term), then by `ω_p`.
//!    With `position_iterations`, positions are then corrected by nonlinear Gauss-Seidel
//!    sweeps over the joints and the contacts (Box2D v2.4's position solver).
//! 8. `relax_iterations` unbiased sweeps (speculative bias only, from the separation the
//!    integrated velocities reach: `s + h·v_n`) and one restitution pass (points that approached
//!    faster than `restitution_threshold` and pushed: `v_n → −e·v_n₀`) change velocities only.
//! 9. Sleeping (`sleep_time > 0`): an island whose bodies all stay under `sleep_speed` and
//!    `sleep_spin` for `sleep_time` seconds sleeps, velocities zeroed; its contacts keep their
//!    last impulses, so the forces it reports stay those that hold it.
//!
//! The forces reported per point ([`ContactForce`]) are the normal impulse over `h` and the
//! manifold's friction shared among its points in proportion to their normal impulses.
//!
//! Residual: the same two numbers as the particle rows (see [`super`]): the common violation
//! `max(0, −(s + h·(v_n + v_pn)))` over the points (the linearised penetration at the end of the
//! step), and the velocity residual `|Δλ|/(m·s_m)` (m/s).

use std::collections::HashMap;

use nalgebra::{Matrix3, Matrix4};
use solverlab_core::rigid::{
    islands, rigid_contacts, rotate, torque_free_drift, ContactForce, JointForce, JointFrame, Other, RigidContact,
    RigidState,
};
use solverlab_core::{Scene, Vec3};

use super::joints::{JointRows, Pseudo};

mod finish;
mod sweep;

use super::rows::soft;
use super::{Feedback, FrictionCone, PgsConfig};
use sweep::pseudo_inverse;

/// One prepared contact point.
#[derive(Clone, Copy, Debug, Default)]
struct Point {
    a: usize,
    b: Option<usize>,
    ra: Vec3,
    rb: Vec3,
    n: Vec3,
    mn: f64,
    /// Separation at the start of the step (m).
    s: f64,
    /// Separation the integrated velocities reach (m), for the relax pass.
    s_end: f64,
    bias: f64,
    mass_scale: f64,
    impulse_scale: f64,
    /// Split-row bias (m/s), 0 when the point needs no split correction.
    split_bias: f64,
    ln: f64,
    lp: f64,
    e: f64,
    vn0: f64,
    /// The contact point at the start of the step, and its arms in each body's frame (for the
    /// position pass, which follows the bodies' motion).
    p0: Vec3,
    la: Vec3,
    lb: Vec3,
    x0a: Vec3,
    x0b: Vec3,
}

/// The friction rows of one manifold (the consecutive points of one pair), at its centre.
#[derive(Clone, Copy, Debug, Default)]
struct Manifold {
    /// The manifold's points are `points[start..end]`.
    start: usize,
    end: usize,
    /// Friction coefficient, the tangents and the (mean) normal.
    mu: f64,
    n: Vec3,
    t1: Vec3,
    t2: Vec3,
    /// Arms of the centre (the mean of the points) from each body's centre of mass.
    ra: Vec3,
    rb: Vec3,
    /// Inverse of the 2 × 2 tangent block `[tᵢ·K·tⱼ]`, row-major (its off-diagonal couples the
    /// two tangent rows through the rotation).
    mt: [f64; 4],
    /// Effective mass of the twist row (relative spin about `n`).
    m_twist: f64,
    /// Mean distance of the points from the centre (m): the twist limit is `μ·radius·Σλₙ`.
    radius: f64,
    lt1: f64,
    lt2: f64,
    l_twist: f64,
    /// Block solve (`block`): the normal coupling matrix `A[i][j]` of the points (the change of
    /// point i's normal speed per unit impulse at point j) and the pseudo-inverse of the whole
    /// block, both row-major 4 × 4 (only the manifold's points are used).
    coupling: [f64; 16],
    coupling_pinv: [f64; 16],
    /// The island of the manifold's movable body.
    island: usize,
}

/// A group of rows iterated together: one island, or everything.
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    m: (usize, usize),
    j: (usize, usize),
}

/// The rigid part of the PGS solver: per-step contacts and the impulses kept for warm starting.
#[derive(Default)]
pub(super) struct RigidSi {
    /// Per joint, whether it holds this step (a joint leaves with a removed body).
    active: Vec<bool>,
    contacts: Vec<RigidContact>,
    points: Vec<Point>,
    manifolds: Vec<Manifold>,
    /// Manifold indices of the awake islands, island by island (or all in one group).
    order: Vec<usize>,
    /// Joint indices of the awake islands, in the same grouping.
    joint_order: Vec<usize>,
    /// Per group the iterations stop on separately: `order[m.0..m.1]` and `joint_order[j.0..j.1]`.
    groups: Vec<Group>,
    /// The joints' frames in their bodies (from the scene's initial poses), their rows of this
    /// step, and their impulses of the last step (by joint index).
    frames: Vec<JointFrame>,
    joints: Vec<JointRows>,
    warm_joints: Vec<Option<(nalgebra::Vector6<f64>, u8)>>,
    /// Per group: whether it met the tolerance (its rows are then left alone).
    done: Vec<bool>,
    /// Per group: its last violation (m).
    group_violation: Vec<f64>,
    /// Each body's island, and per island whether it is awake.
    island: Vec<usize>,
    awake: Vec<bool>,
    inv_m: Vec<f64>,
    inv_i: Vec<Matrix3<f64>>,
    vp: Vec<Vec3>,
    wp: Vec<Vec3>,
    /// Last step's normal impulses per body pair.
    warm: HashMap<(usize, Other), Vec<WarmPoint>>,
    /// Last step's friction impulse (world vector) and twist impulse per body pair.
    warm_friction: HashMap<(usize, Other), (Vec3, f64)>,
    forces: Vec<ContactForce>,
    /// The joints' forces of the last step.
    joint_forces: Vec<JointForce>,
    /// The friction bound of this step (from the settings).
    cone: FrictionCone,
    /// Whether manifolds' normal rows are solved as blocks (from the settings).
    block: bool,
}

/// A contact point's normal impulse kept for the next step: (feature id, world point, impulse).
type WarmPoint = (u32, Vec3, f64);

/// What one sweep measured: the largest and the summed squared residuals, the row count and the
/// squared impulse changes.
type SweepStats = (f64, f64, usize, f64);

impl RigidSi {
    pub(super) fn reset(&mut self) {
        self.frames.clear();
        self.warm_joints.clear();
        self.warm.clear();
        self.warm_friction.clear();
        self.forces.clear();
        self.joint_forces.clear();
    }

    pub(super) fn forces(&self) -> &[ContactForce] {
        &self.forces
    }

    pub(super) fn joint_forces(&self) -> &[JointForce] {
        &self.joint_forces
    }

    fn vrel(&self, st: &[RigidState], p: &Point, pseudo: bool) -> Vec3 {
        self.vrel_at(st, p.a, p.b, &p.ra, &p.rb, pseudo)
    }

    /// The velocity of the point with arms `ra`, `rb` on body `a` relative to `b`.
    fn vrel_at(&self, st: &[RigidState], a: usize, b: Option<usize>, ra: &Vec3, rb: &Vec3, pseudo: bool) -> Vec3 {
        let v = |k: usize| if pseudo { (self.vp[k], self.wp[k]) } else { (st[k].v, st[k].w) };
        let (va, wa) = v(a);
        let mut rel = va + wa.cross(ra);
        if let Some(b) = b {
            let (vb, wb) = v(b);
            rel -= vb + wb.cross(rb);
        }
        rel
    }

    fn apply(&mut self, st: &mut [RigidState], p: &Point, impulse: Vec3, pseudo: bool) {
        self.apply_at(st, p.a, p.b, &p.ra, &p.rb, impulse, Vec3::zeros(), pseudo);
    }

    /// Applies `impulse` (N·s) at the point with arms `ra`, `rb` and an angular impulse `spin`
    /// (N·m·s) to `a`, and their opposites to `b`.
    #[allow(clippy::too_many_arguments)]
    fn apply_at(
        &mut self,
        st: &mut [RigidState],
        a: usize,
        b: Option<usize>,
        ra: &Vec3,
        rb: &Vec3,
        impulse: Vec3,
        spin: Vec3,
        pseudo: bool,
    ) {
        let dva = impulse * self.inv_m[a];
        let dwa = self.inv_i[a] * (ra.cross(&impulse) + spin);
        if pseudo {
            self.vp[a] += dva;
            self.wp[a] += dwa;
        } else {
            st[a].v += dva;
            st[a].w += dwa;
        }
        if let Some(b) = b {
            let dvb = impulse * self.inv_m[b];
            let dwb = self.inv_i[b] * (rb.cross(&impulse) + spin);
            if pseudo {
                self.vp[b] -= dvb;
                self.wp[b] -= dwb;
            } else {
                st[b].v -= dvb;
                st[b].w -= dwb;
            }
        }
    }

    /// `d₁·K·d₂` with `K` the point mass matrix of the point with arms `ra`, `rb`: the change of
    /// the relative point velocity along `d₁` per unit impulse along `d₂`.
    fn coupling(&self, a: usize, b: Option<usize>, ra: &Vec3, rb: &Vec3, d1: &Vec3, d2: &Vec3) -> f64 {
        let (a1, a2) = (ra.cross(d1), ra.cross(d2));
        let mut k = self.inv_m[a] * d1.dot(d2) + a1.dot(&(self.inv_i[a] * a2));
        if let Some(b) = b {
            let (b1, b2) = (rb.cross(d1), rb.cross(d2));
            k += self.inv_m[b] * d1.dot(d2) + b1.dot(&(self.inv_i[b] * b2));
        }
        k
    }

    fn effective_mass(&self, p: &Point, d: &Vec3) -> f64 {
        let k = self.coupling(p.a, p.b, &p.ra, &p.rb, d, d);
        if k > 0.0 {
            1.0 / k
        } else {
            0.0
        }
    }

    /// `d₁·K·d₂` between two points of one pair: the change of the normal speed at the point
    /// with arms `ra1, rb1` along `n1` per unit impulse along `n2` at the point with arms
    /// `ra2, rb2`.
    #[allow(clippy::too_many_arguments)]
    fn cross_coupling(
        &self,
        a: usize,
        b: Option<usize>,
        ra1: &Vec3,
        rb1: &Vec3,
        n1: &Vec3,
        ra2: &Vec3,
        rb2: &Vec3,
        n2: &Vec3,
    ) -> f64 {
        let mut k = self.inv_m[a] * n1.dot(n2) + ra1.cross(n1).dot(&(self.inv_i[a] * ra2.cross(n2)));
        if let Some(b) = b {
            k += self.inv_m[b] * n1.dot(n2) + rb1.cross(n1).dot(&(self.inv_i[b] * rb2.cross(n2)));
        }
        k
    }

    /// The block of manifold `m` (see [`Manifold::coupling`]).
    fn block_matrices(&self, m: &mut Manifold) {
        let pts = &self.points[m.start..m.end];
        let c = pts.len();
        let mut a = Matrix4::identity();
        for i in 0..c {
            for j in 0..c {
                let (p, q) = (&pts[i], &pts[j]);
                a[(i, j)] = self.cross_coupling(p.a, p.b, &p.ra, &p.rb, &p.n, &q.ra, &q.rb, &q.n);
            }
        }
        let pinv = pseudo_inverse(&a, c);
        for i in 0..4 {
            for j in 0..4 {
                m.coupling[4 * i + j] = a[(i, j)];
                m.coupling_pinv[4 * i + j] = pinv[(i, j)];
            }
        }
    }

    /// The friction rows of the manifold `points[start..end]` (all of one pair).
    fn manifold(&self, st: &[RigidState], start: usize, end: usize, mu: f64) -> Manifold {
        let pts = &self.points[start..end];
        let (a, b) = (pts[0].a, pts[0].b);
        let count = pts.len() as f64;
        let centre = pts.iter().map(|p| p.ra + st[a].x).sum::<Vec3>() / count;
        let n = pts.iter().map(|p| p.n).sum::<Vec3>().normalize();
        let t1 = if n.x.abs() < 0.57 { n.cross(&Vec3::x()) } else { n.cross(&Vec3::y()) }.normalize();
        let t2 = n.cross(&t1);
        let ra = centre - st[a].x;
        let rb = b.map_or(Vec3::zeros(), |k| centre - st[k].x);
        let k11 = self.coupling(a, b, &ra, &rb, &t1, &t1);
        let k12 = self.coupling(a, b, &ra, &rb, &t1, &t2);
        let k22 = self.coupling(a, b, &ra, &rb, &t2, &t2);
        let det = k11 * k22 - k12 * k12;
        let mt = if det > 1e-12 * (k11 * k22).max(f64::MIN_POSITIVE) {
            [k22 / det, -k12 / det, -k12 / det, k11 / det]
        } else {
            [0.0; 4]
        };
        let kt = n.dot(&(self.inv_i[a] * n)) + b.map_or(0.0, |k| n.dot(&(self.inv_i[k] * n)));
        let radius = pts.iter().map(|p| (p.ra + st[a].x - centre).norm()).sum::<f64>() / count;
        Manifold {
            start,
            end,
            mu,
            n,
            t1,
            t2,
            ra,
            rb,
            mt,
            m_twist: if kt > 0.0 { 1.0 / kt } else { 0.0 },
            radius,
            ..Manifold::default()
        }
    }

    /// Steps 1–4: contacts, rows and the warm start.
    pub(super) fn prepare(&mut self, scene: &Scene, st: &mut [RigidState], cfg: &PgsConfig, h: f64, time: f64) {
        self.active.clear();
        self.active.extend((0..scene.joints.len()).map(|j| scene.joint_active(j, time)));
        let n = scene.rigid.len();
        self.cone = cfg.friction_cone;
        self.block = cfg.block;
        self.inv_m.clear();
        self.inv_i.clear();
        for (b, s) in scene.rigid.iter().zip(st.iter()) {
            self.inv_m.push(b.inv_mass);
            self.inv_i.push(b.inv_inertia_world(&s.q));
        }
        self.vp.clear();
        self.vp.resize(n, Vec3::zeros());
        self.wp.clear();
        self.wp.resize(n, Vec3::zeros());
        let speed = solverlab_core::rigid::max_point_speed(&scene.rigid, st);
        let margin = 4.0 * cfg.slop + 2.0 * h * speed;
        let mut contacts = std::mem::take(&mut self.contacts);
        rigid_contacts(scene, st, margin, &mut contacts);
        let (bias_rate, soft_mass, soft_impulse) = soft(cfg.soft_hertz(h).0, cfg.contact_damping_ratio, h);
        self.points.clear();
        for c in &contacts {
            let b = match c.b {
                Other::Body(k) => Some(k),
                Other::Collider(_) => None,
            };
            let nrm = c.point.normal;
            let mut p = Point {
                a: c.a,
                b,
                ra: c.point.point - st[c.a].x,
                rb: b.map_or(Vec3::zeros(), |k| c.point.point - st[k].x),
                n: nrm,
                s: c.point.separation,
                e: c.restitution,
                mass_scale: 1.0,
                ..Point::default()
            };
            p.mn = self.effective_mass(&p, &p.n);
            let s = p.s;
            if s > 0.0 {
                p.bias = s / h;
            } else {
                match cfg.feedback {
                    Feedback::Soft => {
                        p.bias = (bias_rate * s).max(-cfg.max_push);
                        (p.mass_scale, p.impulse_scale) = (soft_mass, soft_impulse);
                    }
                    // With a position pass the penetration is corrected there, not here.
                    Feedback::Baumgarte if cfg.position_iterations > 0 => {}
                    Feedback::Baumgarte => {
                        let push = (cfg.baumgarte * (s + cfg.slop).min(0.0) / h).max(-cfg.max_push);
                        if cfg.split_impulse {
                            p.split_bias = push;
                        } else {
                            p.bias = push;
                        }
                    }
                }
            }
            p.vn0 = p.n.dot(&self.vrel(st, &p, false));
            p.p0 = c.point.point;
            p.la = st[c.a].q.inverse_transform_vector(&p.ra);
            p.x0a = st[c.a].x;
            if let Some(k) = b {
                p.lb = st[k].q.inverse_transform_vector(&p.rb);
                p.x0b = st[k].x;
            }
            self.points.push(p);
        }
        self.contacts = contacts;
        self.manifolds.clear();
        let mut start = 0;
        while start < self.contacts.len() {
            let pair = (self.contacts[start].a, self.contacts[start].b);
            let end = (start..self.contacts.len())
                .find(|&k| (self.contacts[k].a, self.contacts[k].b) != pair)
                .unwrap_or(self.contacts.len());
            let mut m = self.manifold(st, start, end, self.contacts[start].friction);
            if cfg.block && (2..=4).contains(&(end - start)) {
                self.block_matrices(&mut m);
            }
            let c = &self.contacts[start];
            m.island = match c.b {
                Other::Body(b) if scene.rigid[c.a].is_fixed() => b,
                _ => c.a,
            };
            self.manifolds.push(m);
            start = end;
        }
        self.build_islands(scene, st, cfg);
        if self.frames.len() != scene.joints.len() {
            self.frames = scene.joints.iter().map(|j| JointFrame::new(j, &scene.rigid)).collect();
            self.warm_joints = vec![None; scene.joints.len()];
        }
        self.joints.clear();
        for (j, f) in scene.joints.iter().zip(&self.frames) {
            self.joints.push(JointRows::new(j, f, st, &self.inv_m, &self.inv_i, cfg, h));
        }
        self.warm_start(st, cfg);
        if cfg.warm_start > 0.0 {
            for &k in &self.joint_order {
                if let Some((l, side)) = self.warm_joints[k] {
                    self.joints[k].warm(st, l * cfg.warm_start, side, &self.inv_m, &self.inv_i);
                }
            }
        }
    }

    /// Islands, waking, and the order and groups of the sweeps (see the module docs).
    fn build_islands(&mut self, scene: &Scene, st: &mut [RigidState], cfg: &PgsConfig) {
        // A joint that left with a removed body links nothing.
        let (island, count) = match self.active.iter().all(|&a| a) {
            true => islands(&scene.rigid, &self.contacts, &scene.joints),
            false => {
                let held: Vec<_> =
                    scene.joints.iter().zip(&self.active).filter(|(_, a)| **a).map(|(j, _)| *j).collect();
                islands(&scene.rigid, &self.contacts, &held)
            }
        };
        // An island is awake if any of its bodies is: a body touched by an awake one wakes with
        // its whole island.
        self.awake.clear();
        self.awake.resize(count, false);
        for (k, s) in st.iter().enumerate() {
            if island[k] != usize::MAX && !s.asleep {
                self.awake[island[k]] = true;
            }
        }
        for (k, s) in st.iter_mut().enumerate() {
            if island[k] != usize::MAX && self.awake[island[k]] && s.asleep {
                s.asleep = false;
                s.rest_time = 0.0;
            }
        }
        for m in self.manifolds.iter_mut() {
            m.island = island[m.island];
        }
        let joint_island: Vec<usize> = scene
            .joints
            .iter()
            .map(|j| match j.b {
                Some(b) if scene.rigid[j.a].is_fixed() => island[b],
                _ => island[j.a],
            })
            .collect();
        let awake = |i: usize| i != usize::MAX && self.awake[i];
        self.order.clear();
        self.order.extend((0..self.manifolds.len()).filter(|&i| awake(self.manifolds[i].island)));
        self.joint_order.clear();
        self.joint_order.extend((0..scene.joints.len()).filter(|&j| self.active[j] && awake(joint_island[j])));
        self.groups.clear();
        if cfg.islands {
            self.order.sort_by_key(|&i| self.manifolds[i].island);
            self.joint_order.sort_by_key(|&j| joint_island[j]);
            let (mut m, mut j) = (0, 0);
            while m < self.order.len() || j < self.joint_order.len() {
                let im = self.order.get(m).map_or(usize::MAX, |&i| self.manifolds[i].island);
                let ij = self.joint_order.get(j).map_or(usize::MAX, |&k| joint_island[k]);
                let id = im.min(ij);
                let m_end = (m..self.order.len())
                    .find(|&k| self.manifolds[self.order[k]].island != id)
                    .unwrap_or(self.order.len());
                let j_end = (j..self.joint_order.len())
                    .find(|&k| joint_island[self.joint_order[k]] != id)
                    .unwrap_or(self.joint_order.len());
                self.groups.push(Group { m: (m, m_end), j: (j, j_end) });
                (m, j) = (m_end, j_end);
            }
        } else if !self.order.is_empty() || !self.joint_order.is_empty() {
            self.groups.push(Group { m: (0, self.order.len()), j: (0, self.joint_order.len()) });
        }
        self.done.clear();
        self.done.resize(self.groups.len(), false);
        self.group_violation.clear();
        self.group_violation.resize(self.groups.len(), 0.0);
        self.island = island;
    }

    /// The number of groups the iterations run over.
    pub(super) fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// Whether group `g` has met its tolerance.
    pub(super) fn group_done(&self, g: usize) -> bool {
        self.done[g]
    }

    /// Marks group `g` as having met its tolerance.
    pub(super) fn set_group_done(&mut self, g: usize) {
        self.done[g] = true;
    }

    /// Step 4. Normal impulses by the same feature of the same pair, or else the nearest point
    /// of that pair within `4·slop` (a feature id can change while the point stays put, for
    /// example when an incident vertex of two equal stacked boxes crosses the reference face's
    /// edge); friction and twist impulses by pair, projected on the new tangents.
    fn warm_start(&mut self, st: &mut [RigidState], cfg: &PgsConfig) {
        let radius2 = (4.0 * cfg.slop).powi(2);
        for i in 0..self.manifolds.len() {
            let m = self.manifolds[i];
            // A sleeping island keeps its impulses as they were (for the forces it reports) and
            // applies nothing.
            let awake = m.island != usize::MAX && self.awake[m.island];
            let ws = if awake { cfg.warm_start } else { 1.0 };
            if ws == 0.0 {
                continue;
            }
            for k in m.start..m.end {
                let c = &self.contacts[k];
                let Some(previous) = self.warm.get(&(c.a, c.b)) else { continue };
                let close = |e: &&WarmPoint| (e.1 - c.point.point).norm_squared() <= radius2;
                let exact = previous.iter().filter(close).find(|e| e.0 == c.point.feature);
                let near = || {
                    previous.iter().filter(close).min_by(|x, y| {
                        (x.1 - c.point.point).norm_squared().total_cmp(&(y.1 - c.point.point).norm_squared())
                    })
                };
                if let Some(&(_, _, ln)) = exact.or_else(near) {
                    let mut p = self.points[k];
                    p.ln = ln * ws;
                    self.points[k] = p;
                    if awake {
                        self.apply(st, &p, p.n * p.ln, false);
                    }
                }
            }
            let c = &self.contacts[m.start];
            if let Some(&(pt, twist)) = self.warm_friction.get(&(c.a, c.b)) {
                let mut m = m;
                m.lt1 = pt.dot(&m.t1) * ws;
                m.lt2 = pt.dot(&m.t2) * ws;
                m.l_twist = twist * ws;
                self.manifolds[i] = m;
                if awake {
                    let p = &self.points[m.start];
                    let (a, b) = (p.a, p.b);
                    self.apply_at(st, a, b, &m.ra, &m.rb, m.t1 * m.lt1 + m.t2 * m.lt2, m.n * m.l_twist, false);
                }
            }
        }
    }
}
