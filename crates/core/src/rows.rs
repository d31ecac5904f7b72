//! Scalar constraint rows with stable ids: what the Jacobian-based solvers (PGS, CG, direct)
//! gather from a scene at given positions.
//!
//! A row is one scalar `C(x)` with its gradient over one or two particles. Sticks give one row,
//! pins on movable particles three (one per axis), and every collider a particle is near gives one
//! contact row. Row ids are stable from frame to frame (they name the constraint, axis, particle
//! and collider face, never a position in a list), so that warm starting can match multipliers
//! when the set of active contacts changes.
//!
//! ```text
//! stick:   C = ±(|xb − xa| − rest)       ∇a C = −n, ∇b C = n          (see constraint::stick_row)
//! pin:     C = x_k − (target_k + velocity_k·t)   ∇C = e_k,   ∂C/∂t = −velocity_k
//! contact: C = signed distance ≥ 0       ∇C = normal                   (see constraint::Contact)
//! ```

use crate::constraint::{for_each_contact, stick_row, ColliderRef};
use crate::model::{Kind, Scene, Sense};
use crate::Vec3;

/// The most particles one row touches: two bodies of four (a body-body contact).
pub const ROW_PARTICLES: usize = 8;

/// Particle indices padded to a row's fixed size.
pub fn padded(particles: &[usize]) -> [usize; ROW_PARTICLES] {
    let mut out = [0; ROW_PARTICLES];
    out[..particles.len()].copy_from_slice(particles);
    out
}

/// Gradients padded to a row's fixed size.
pub fn padded_grad(grad: &[Vec3]) -> [Vec3; ROW_PARTICLES] {
    let mut out = [Vec3::zeros(); ROW_PARTICLES];
    out[..grad.len()].copy_from_slice(grad);
    out
}

/// Equality (`C = 0`, any multiplier) or inequality (`C ≥ 0`, multiplier ≥ 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// `C = 0`.
    Equality,
    /// `C ≥ 0`; the multiplier may only push.
    Inequality,
}

/// Friction and restitution of a contact row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactInfo {
    /// The unit contact normal; the row's gradient on particle k is `cₖ·normal`.
    pub normal: Vec3,
    /// Coulomb friction coefficient μ.
    pub friction: f64,
    /// Restitution e.
    pub restitution: f64,
    /// Which collider face; `None` for body-body contacts.
    pub collider: Option<ColliderRef>,
}

/// One scalar row, whole: room for [`ROW_PARTICLES`] particles (352 bytes). Rows are built one at
/// a time in this form; the solvers keep them in a [`RowSet`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// Stable id (see [`constraint_row_id`], [`contact_row_id`]).
    pub id: u64,
    /// The value `C` (m); for inequalities `C ≥ 0` is allowed.
    pub c: f64,
    /// Compliance α (m/N).
    pub compliance: f64,
    /// `∂C/∂t` (m/s): nonzero for moving pin targets.
    pub dc_dt: f64,
    /// Number of particles (1 to [`ROW_PARTICLES`]).
    pub n: usize,
    /// Equality or inequality.
    pub kind: RowKind,
    /// The particles; only the first `n` are meaningful, the rest are 0.
    pub particles: [usize; ROW_PARTICLES],
    /// `∇C` with respect to each particle; zero beyond the first `n`.
    pub grad: [Vec3; ROW_PARTICLES],
    /// Contact data, for collider rows.
    pub contact: Option<ContactInfo>,
}

impl Row {
    /// `Σ wᵢ |∇ᵢC|²` for inverse masses `w`.
    pub fn w_grad2(&self, w: &[f64]) -> f64 {
        (0..self.n).map(|k| w[self.particles[k]] * self.grad[k].norm_squared()).sum()
    }

    /// `J·v` for per-particle vectors `v`.
    pub fn dot(&self, v: &[Vec3]) -> f64 {
        (0..self.n).map(|k| self.grad[k].dot(&v[self.particles[k]])).sum()
    }
}

/// A contact row (an inequality with friction data): `C = c` with gradient `grad` on the first
/// `n` of `particles`.
fn contact_row(
    id: u64,
    n: usize,
    particles: [usize; ROW_PARTICLES],
    grad: [Vec3; ROW_PARTICLES],
    c: f64,
    info: ContactInfo,
) -> Row {
    Row { id, n, particles, grad, c, dc_dt: 0.0, kind: RowKind::Inequality, compliance: 0.0, contact: Some(info) }
}

/// The id of row `axis` (0 for sticks, 0–2 for pins) of scene constraint `index`.
pub fn constraint_row_id(index: usize, axis: usize) -> u64 {
    ((index as u64) << 2) | axis as u64
}

/// The id of the contact row of `particle` against collider face `collider`; `dir` is 0 for the
/// normal and 1–2 for friction tangents. The top bit keeps contact ids apart from constraint ids.
pub fn contact_row_id(particle: usize, collider: ColliderRef, dir: usize) -> u64 {
    (1 << 63) | ((particle as u64) << 26) | (collider.code() << 2) | dir as u64
}

/// The id of the contact row between particles `i < j` (both below 2³¹); the top two bits keep
/// pair ids apart from constraint and collider-contact ids.
pub fn pair_row_id(i: usize, j: usize) -> u64 {
    (0b11 << 62) | ((i as u64 & 0x7fff_ffff) << 31) | (j as u64 & 0x7fff_ffff)
}

/// A particle-particle contact row: `C = |xj − xi| − (ri + rj) ≥ 0`, gradients as a stick's.
pub fn pair_row(x: &[Vec3], radius: &[f64], i: usize, j: usize) -> Row {
    let r = stick_row(&x[i], &x[j], radius[i] + radius[j], Sense::AtLeast, false, Vec3::y);
    Row {
        id: pair_row_id(i, j),
        n: 2,
        particles: padded(&[i, j]),
        grad: padded_grad(&[-r.normal, r.normal]),
        c: r.c,
        dc_dt: 0.0,
        kind: RowKind::Inequality,
        compliance: 0.0,
        contact: None,
    }
}

/// Gathers the rows of `scene` at positions `x` and time `t` into the compact store `out`
/// (replacing its rows), in a deterministic order: constraints in scene order, then contacts by
/// particle and collider. PGS gathers once a step, the Newton loop at every outer iteration and
/// line-search trial.
///
/// Rows whose particles are all immovable are left out, as are pins on immovable particles (the
/// integrator drives those). Inequality sticks are included when `C < stick_margin`; a collider
/// row of particle `i` when `C < contact_margin(i)` (speculative contacts for velocity solvers;
/// zero margins give exactly the violated ones).
pub fn gather_row_set(
    scene: &Scene,
    x: &[Vec3],
    t: f64,
    stick_margin: f64,
    contact_margin: impl Fn(usize) -> f64,
    out: &mut RowSet,
) {
    out.clear();
    gather_into(scene, x, t, stick_margin, contact_margin, out);
}

/// The rows [`gather_row_set`] gathers, as whole [`Row`]s (for tests and tools; the solvers keep
/// the compact store).
pub fn gather_rows(
    scene: &Scene,
    x: &[Vec3],
    t: f64,
    stick_margin: f64,
    contact_margin: impl Fn(usize) -> f64,
) -> Vec<Row> {
    let mut set = RowSet::default();
    gather_row_set(scene, x, t, stick_margin, contact_margin, &mut set);
    set.iter().map(|r| r.to_row()).collect()
}

/// A row's scalars in a [`RowSet`] (48 bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowHead {
    /// Stable id (see [`constraint_row_id`], [`contact_row_id`]).
    pub id: u64,
    /// The value `C` (m).
    pub c: f64,
    /// Compliance α (m/N).
    pub compliance: f64,
    /// `∂C/∂t` (m/s).
    pub dc_dt: f64,
    /// The row's first slot in the particle and gradient arrays.
    start: u32,
    /// Its contact data in the contact array; `u32::MAX` for none.
    contact: u32,
    /// Number of particles.
    n: u8,
    /// Equality or inequality.
    pub kind: RowKind,
}

/// Rows in compact form: the scalars of each row in one array ([`RowHead`]), the particles and
/// gradients of all rows in two more, and the contact data of the contact rows in a fourth. A
/// stick takes 104 bytes here against 352 as a [`Row`], which has room for eight particles; the
/// Newton loop gathers and reads its rows at every outer iteration, and a cloth's rows do not
/// fit in cache.
#[derive(Clone, Debug, Default)]
pub struct RowSet {
    heads: Vec<RowHead>,
    particles: Vec<u32>,
    grads: Vec<Vec3>,
    contacts: Vec<ContactInfo>,
}

/// One row of a [`RowSet`], borrowed: the fields of a [`Row`], with the particles and gradients
/// as slices of length `n`.
#[derive(Clone, Copy, Debug)]
pub struct RowView<'a> {
    /// Stable id.
    pub id: u64,
    /// The value `C` (m).
    pub c: f64,
    /// Compliance α (m/N).
    pub compliance: f64,
    /// `∂C/∂t` (m/s).
    pub dc_dt: f64,
    /// Equality or inequality.
    pub kind: RowKind,
    /// The particles (or coordinate blocks).
    pub particles: &'a [u32],
    /// `∇C` with respect to each.
    pub grad: &'a [Vec3],
    /// Contact data, for collider rows.
    pub contact: Option<&'a ContactInfo>,
}

impl RowView<'_> {
    /// `Σ wᵢ |∇ᵢC|²` for inverse masses `w` (the same sum as [`Row::w_grad2`]).
    #[inline]
    pub fn w_grad2(&self, w: &[f64]) -> f64 {
        self.particles.iter().zip(self.grad).map(|(&p, g)| w[p as usize] * g.norm_squared()).sum()
    }

    /// The row as a [`Row`].
    pub fn to_row(&self) -> Row {
        let particles: Vec<usize> = self.particles.iter().map(|&p| p as usize).collect();
        Row {
            id: self.id,
            n: particles.len(),
            particles: padded(&particles),
            grad: padded_grad(self.grad),
            c: self.c,
            dc_dt: self.dc_dt,
            kind: self.kind,
            compliance: self.compliance,
            contact: self.contact.copied(),
        }
    }
}

impl RowSet {
    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// Removes every row, keeping the memory.
    pub fn clear(&mut self) {
        self.heads.clear();
        self.particles.clear();
        self.grads.clear();
        self.contacts.clear();
    }

    /// The rows' scalars, in row order.
    #[inline]
    pub fn heads(&self) -> &[RowHead] {
        &self.heads
    }

    /// Row `i`.
    #[inline]
    pub fn get(&self, i: usize) -> RowView<'_> {
        self.view(&self.heads[i])
    }

    #[inline]
    fn view<'a>(&'a self, h: &RowHead) -> RowView<'a> {
        let slots = h.start as usize..h.start as usize + h.n as usize;
        RowView {
            id: h.id,
            c: h.c,
            compliance: h.compliance,
            dc_dt: h.dc_dt,
            kind: h.kind,
            particles: &self.particles[slots.clone()],
            grad: &self.grads[slots],
            contact: (h.contact != u32::MAX).then(|| &self.contacts[h.contact as usize]),
        }
    }

    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = RowView<'_>> + '_ {
        self.heads.iter().map(|h| self.view(h))
    }

    /// Row `i`'s slots in [`RowSet::all_particles`] and [`RowSet::all_grads`].
    #[inline]
    pub fn slots(&self, i: usize) -> std::ops::Range<usize> {
        let h = &self.heads[i];
        h.start as usize..h.start as usize + h.n as usize
    }

    /// Every row's particles, row after row.
    pub fn all_particles(&self) -> &[u32] {
        &self.particles
    }

    /// Every row's gradients, row after row.
    pub fn all_grads(&self) -> &[Vec3] {
        &self.grads
    }

    /// Appends a row.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn push_fields(
        &mut self,
        id: u64,
        particles: &[usize],
        grad: &[Vec3],
        c: f64,
        dc_dt: f64,
        kind: RowKind,
        compliance: f64,
        contact: Option<ContactInfo>,
    ) {
        debug_assert!(particles.len() == grad.len() && particles.len() <= ROW_PARTICLES);
        let start = self.particles.len() as u32;
        self.particles.extend(particles.iter().map(|&p| p as u32));
        self.grads.extend_from_slice(grad);
        let contact = match contact {
            Some(info) => {
                self.contacts.push(info);
                self.contacts.len() as u32 - 1
            }
            None => u32::MAX,
        };
        let n = particles.len() as u8;
        self.heads.push(RowHead { id, c, compliance, dc_dt, start, contact, n, kind });
    }

    /// Appends `row`.
    #[inline(always)]
    pub fn push(&mut self, row: &Row) {
        let n = row.n;
        let (particles, grad) = (&row.particles[..n], &row.grad[..n]);
        self.push_fields(row.id, particles, grad, row.c, row.dc_dt, row.kind, row.compliance, row.contact);
    }

    /// Keeps the rows whose scalars satisfy `keep`, in order (it sees each row once, in order).
    /// Nothing moves up to the first row dropped.
    pub fn retain(&mut self, mut keep: impl FnMut(&RowHead) -> bool) {
        let Some(first) = self.heads.iter().position(|h| !keep(h)) else { return };
        let mut kept = first;
        let mut slot = self.heads.get(first).map_or(0, |h| h.start as usize);
        let mut contacts = self.heads[..first].iter().filter(|h| h.contact != u32::MAX).count();
        for i in first + 1..self.heads.len() {
            let h = self.heads[i];
            if !keep(&h) {
                continue;
            }
            let (start, n) = (h.start as usize, h.n as usize);
            self.particles.copy_within(start..start + n, slot);
            self.grads.copy_within(start..start + n, slot);
            let contact = match h.contact {
                u32::MAX => u32::MAX,
                k => {
                    self.contacts[contacts] = self.contacts[k as usize];
                    contacts += 1;
                    contacts as u32 - 1
                }
            };
            self.heads[kept] = RowHead { start: slot as u32, contact, ..h };
            slot += n;
            kept += 1;
        }
        self.heads.truncate(kept);
        self.particles.truncate(slot);
        self.grads.truncate(slot);
        self.contacts.truncate(contacts);
    }
}

fn gather_into(
    scene: &Scene,
    x: &[Vec3],
    t: f64,
    stick_margin: f64,
    contact_margin: impl Fn(usize) -> f64,
    out: &mut RowSet,
) {
    let w = |i: usize| scene.particles[i].w;
    for (j, con) in scene.constraints.iter().enumerate() {
        match con.kind {
            Kind::Stick { a, b, rest, sense } => {
                if w(a) + w(b) == 0.0 {
                    continue;
                }
                // Coinciding particles: any direction is a valid choice; +y keeps it deterministic.
                let r = stick_row(&x[a], &x[b], rest, sense, false, Vec3::y);
                let kind = if sense == Sense::Equal { RowKind::Equality } else { RowKind::Inequality };
                if kind == RowKind::Inequality && r.c >= stick_margin {
                    continue;
                }
                out.push_fields(
                    constraint_row_id(j, 0),
                    &[a, b],
                    &[-r.normal, r.normal],
                    r.c,
                    0.0,
                    kind,
                    con.compliance,
                    None,
                );
            }
            Kind::Pin { a, target, velocity } => {
                if w(a) == 0.0 {
                    continue;
                }
                let goal = target + velocity * t;
                for k in 0..3 {
                    let mut e = Vec3::zeros();
                    e[k] = 1.0;
                    let (c, dc_dt) = (x[a][k] - goal[k], -velocity[k]);
                    out.push_fields(
                        constraint_row_id(j, k),
                        &[a],
                        &[e],
                        c,
                        dc_dt,
                        RowKind::Equality,
                        con.compliance,
                        None,
                    );
                }
            }
        }
    }
    if scene.particles.iter().any(|p| p.radius > 0.0) {
        let radius: Vec<f64> = scene.particles.iter().map(|p| if p.w > 0.0 { p.radius } else { 0.0 }).collect();
        for (i, j) in crate::broadphase::pairs(x, &radius, stick_margin.max(0.0), |_, _| false) {
            let row = pair_row(x, &radius, i, j);
            if row.c < stick_margin {
                out.push(&row);
            }
        }
    }
    if !scene.bodies.is_empty() {
        for k in crate::bodies::contacts(&scene.bodies, x, stick_margin.max(0.0)) {
            let (pa, pb) = (scene.bodies[k.a].particles, scene.bodies[k.b].particles);
            let mut particles = [0; ROW_PARTICLES];
            let mut grad = [Vec3::zeros(); ROW_PARTICLES];
            for m in 0..4 {
                (particles[m], grad[m]) = (pa[m], k.normal * k.weights_a[m]);
                (particles[4 + m], grad[4 + m]) = (pb[m], -k.normal * k.weights_b[m]);
            }
            let info = ContactInfo {
                normal: k.normal,
                friction: scene.bodies[k.a].friction.min(scene.bodies[k.b].friction),
                restitution: 0.0,
                collider: None,
            };
            out.push(&contact_row(body_row_id(k.a, k.b, k.feature, 0), 8, particles, grad, k.c, info));
        }
    }
    if !scene.has_colliders() {
        return;
    }
    for (i, p) in scene.particles.iter().enumerate() {
        if p.w == 0.0 {
            continue;
        }
        let margin = contact_margin(i);
        for_each_contact(scene, &x[i], p.radius, margin, |c| {
            if c.c < margin {
                let row = contact_row(
                    contact_row_id(i, c.collider, 0),
                    1,
                    padded(&[i]),
                    padded_grad(&[c.normal]),
                    c.c,
                    c.info(),
                );
                out.push(&row);
            }
        });
    }
    // Embedded points: C = n·p − … with p = Σ cₖxₖ, so ∇ₖC = cₖ·n.
    for (e, point) in scene.embedded.iter().enumerate() {
        let p = point.position(x);
        let margin = (0..point.count).map(|k| contact_margin(point.particles[k])).fold(0.0, f64::max);
        for_each_contact(scene, &p, 0.0, margin, |c| {
            if c.c < margin {
                let mut grad = [Vec3::zeros(); ROW_PARTICLES];
                for (k, g) in grad.iter_mut().enumerate().take(point.count) {
                    *g = c.normal * point.weights[k];
                }
                let particles = padded(&point.particles[..point.count]);
                out.push(&contact_row(embedded_row_id(e, c.collider, 0), point.count, particles, grad, c.c, c.info()));
            }
        });
    }
}

/// The id of the contact row between bodies `a` and `b` at `feature` (a corner of `a`, or an
/// edge pair; see [`crate::bodies::BoxContact::feature`]), `dir` as in [`contact_row_id`]; bits
/// 63 and 60 keep it apart from the other kinds. Bodies below 2¹⁸ = 262 144 are distinct.
pub fn body_row_id(a: usize, b: usize, feature: usize, dir: usize) -> u64 {
    (1 << 63)
        | (1 << 60)
        | ((a as u64 & 0x3_ffff) << 28)
        | ((b as u64 & 0x3_ffff) << 10)
        | ((feature as u64 & 0xff) << 2)
        | dir as u64
}

/// The id of the contact row of embedded point `e` against collider face `collider` (`dir` as in
/// [`contact_row_id`]); bit 61 keeps it apart from particle contacts.
pub fn embedded_row_id(e: usize, collider: ColliderRef, dir: usize) -> u64 {
    (1 << 63) | (1 << 61) | ((e as u64 & 0x7_ffff_ffff) << 26) | (collider.code() << 2) | dir as u64
}

/// What a row id names: the inverse of [`constraint_row_id`], [`contact_row_id`],
/// [`pair_row_id`], [`body_row_id`] and [`embedded_row_id`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowRef {
    /// Row `axis` of scene constraint `index` (0 for sticks, 0–2 for pins).
    Constraint {
        /// Index into `Scene::constraints`.
        index: usize,
        /// Row within the constraint.
        axis: usize,
    },
    /// A particle against a collider face; `dir` 0 is the normal, 1–2 the friction tangents.
    Contact {
        /// The particle.
        particle: usize,
        /// The collider face.
        collider: ColliderRef,
        /// 0 normal, 1–2 tangents.
        dir: usize,
    },
    /// Two particles with radii.
    Pair {
        /// The lower particle index.
        i: usize,
        /// The higher one.
        j: usize,
    },
    /// Two box bodies at a feature (see [`crate::bodies::BoxContact::feature`]).
    Body {
        /// The body whose corner (or first edge) it is.
        a: usize,
        /// The body whose face (or second edge) it is.
        b: usize,
        /// Corner or edge pair.
        feature: usize,
        /// 0 normal, 1–2 tangents.
        dir: usize,
    },
    /// An embedded point against a collider face.
    Embedded {
        /// Index into `Scene::embedded`.
        point: usize,
        /// The collider face.
        collider: ColliderRef,
        /// 0 normal, 1–2 tangents.
        dir: usize,
    },
}

impl ColliderRef {
    /// The collider of a dense [`ColliderRef::code`].
    pub fn from_code(code: u64) -> ColliderRef {
        if code < 8 {
            return ColliderRef::BoxFace(code as u8);
        }
        let k = ((code - 8) / 3) as u32;
        match (code - 8) % 3 {
            0 => ColliderRef::Plane(k),
            1 => ColliderRef::Sphere(k),
            _ => ColliderRef::Block(k),
        }
    }

    /// The collider's name in tables: `plane0`, `sphere2`, `block1`, `box3` (box face 3).
    pub fn name(self) -> String {
        match self {
            ColliderRef::Plane(k) => format!("plane{k}"),
            ColliderRef::Sphere(k) => format!("sphere{k}"),
            ColliderRef::Block(k) => format!("block{k}"),
            ColliderRef::BoxFace(f) => format!("box{f}"),
        }
    }
}

/// Decodes a row id (see [`RowRef`]).
pub fn decode(id: u64) -> RowRef {
    let collider = |id: u64| ColliderRef::from_code((id >> 2) & 0xff_ffff);
    let dir = (id & 3) as usize;
    if id >> 63 == 0 {
        RowRef::Constraint { index: (id >> 2) as usize, axis: dir }
    } else if (id >> 62) & 1 == 1 {
        RowRef::Pair { i: ((id >> 31) & 0x7fff_ffff) as usize, j: (id & 0x7fff_ffff) as usize }
    } else if (id >> 61) & 1 == 1 {
        RowRef::Embedded { point: ((id >> 26) & 0x7_ffff_ffff) as usize, collider: collider(id), dir }
    } else if (id >> 60) & 1 == 1 {
        RowRef::Body {
            a: ((id >> 28) & 0x3_ffff) as usize,
            b: ((id >> 10) & 0x3_ffff) as usize,
            feature: ((id >> 2) & 0xff) as usize,
            dir,
        }
    } else {
        RowRef::Contact { particle: ((id >> 26) & 0x3_ffff_ffff) as usize, collider: collider(id), dir }
    }
}

/// Two unit tangents orthogonal to the unit normal `n`, chosen deterministically from `n` alone
/// (so that a resting contact keeps the same friction directions, and warm starting matches).
pub fn tangents(n: &Vec3) -> (Vec3, Vec3) {
    // Cross with the world axis least aligned with n.
    let a = n.abs();
    let axis = if a.x <= a.y && a.x <= a.z {
        Vec3::x()
    } else if a.y <= a.z {
        Vec3::y()
    } else {
        Vec3::z()
    };
    let t1 = n.cross(&axis).normalize();
    let t2 = n.cross(&t1);
    (t1, t2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Constraint, Particle, Plane};

    #[test]
    fn ids_are_stable_and_distinct() {
        let mut ids = vec![constraint_row_id(0, 0), constraint_row_id(0, 1), constraint_row_id(1, 0)];
        ids.push(contact_row_id(0, ColliderRef::Plane(0), 0));
        ids.push(contact_row_id(0, ColliderRef::Plane(0), 1));
        ids.push(contact_row_id(0, ColliderRef::Sphere(0), 0));
        ids.push(contact_row_id(1, ColliderRef::BoxFace(3), 0));
        ids.push(embedded_row_id(0, ColliderRef::Plane(0), 0));
        ids.push(embedded_row_id(1, ColliderRef::Plane(0), 0));
        ids.push(pair_row_id(0, 1));
        ids.push(body_row_id(3, 7, 12, 1));
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
    }

    #[test]
    fn ids_decode_to_what_they_name() {
        assert_eq!(decode(constraint_row_id(41, 2)), RowRef::Constraint { index: 41, axis: 2 });
        for collider in [ColliderRef::Plane(3), ColliderRef::Sphere(0), ColliderRef::Block(9), ColliderRef::BoxFace(5)]
        {
            assert_eq!(ColliderRef::from_code(collider.code()), collider);
            assert_eq!(
                decode(contact_row_id(123_456, collider, 1)),
                RowRef::Contact { particle: 123_456, collider, dir: 1 }
            );
            assert_eq!(decode(embedded_row_id(77, collider, 2)), RowRef::Embedded { point: 77, collider, dir: 2 });
        }
        assert_eq!(decode(pair_row_id(5, 900_000)), RowRef::Pair { i: 5, j: 900_000 });
        assert_eq!(decode(body_row_id(3, 7, 140, 1)), RowRef::Body { a: 3, b: 7, feature: 140, dir: 1 });
        assert_eq!(ColliderRef::Plane(0).name(), "plane0");
    }

    /// A fixed particle, one touching the floor and one above it; a stick, a satisfied
    /// minimum distance (left out of the rows) and a pin; a floor with friction 0.5.
    fn small_scene() -> Scene {
        let mut s = Scene::new("rows");
        s.add(Particle::fixed(Vec3::zeros()));
        s.add(Particle::new(Vec3::new(0.0, -0.01, 0.0), 1.0));
        s.add(Particle::new(Vec3::new(1.0, 0.5, 0.0), 1.0));
        s.constraints.push(Constraint::stick(0, 2, 1.0));
        s.constraints.push(Constraint::min_distance(1, 2, 0.1));
        s.constraints.push(Constraint::pin(2, Vec3::new(1.0, 0.0, 0.0)));
        s.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: 0.5, restitution: 0.0 });
        s
    }

    #[test]
    fn rows_of_a_small_scene() {
        let s = small_scene();
        let rows = gather_rows(&s, &s.initial_state(0.01).x, 0.0, 0.0, |_| 0.0);
        assert_eq!(rows.len(), 1 + 3 + 1);
        assert_eq!(rows[0].n, 2);
        assert!((rows[0].c - (1.25f64.sqrt() - 1.0)).abs() < 1e-15);
        assert_eq!(rows[2].c, 0.5, "pin y row");
        let contact = rows[4];
        assert_eq!(contact.particles[0], 1);
        assert_eq!(contact.contact.unwrap().normal, Vec3::y());
        assert!((contact.c + 0.01).abs() < 1e-15);
        assert_eq!(contact.contact.unwrap().friction, 0.5);
    }

    /// Gathering into a store that held other rows (wider, with contacts, more of them) gives
    /// exactly what gathering into an empty one gives; the store's views are the whole rows;
    /// `retain` keeps the chosen rows with their own particles, gradients and contact data.
    #[test]
    fn the_row_set_reuses_its_memory_and_keeps_each_rows_data() {
        let mut s = small_scene();
        s.planes[0].restitution = 0.3;
        let x = s.initial_state(0.01).x;
        let mut fresh = RowSet::default();
        gather_row_set(&s, &x, 0.0, 0.0, |_| 0.0, &mut fresh);
        let rows: Vec<Row> = fresh.iter().map(|r| r.to_row()).collect();
        let old = Row {
            id: 99,
            n: ROW_PARTICLES,
            particles: [7; ROW_PARTICLES],
            grad: [Vec3::new(1.0, 2.0, 3.0); ROW_PARTICLES],
            c: 5.0,
            dc_dt: 6.0,
            kind: RowKind::Inequality,
            compliance: 7.0,
            contact: Some(ContactInfo { normal: Vec3::x(), friction: 8.0, restitution: 9.0, collider: None }),
        };
        for len in [0, 2, rows.len(), 3 * rows.len()] {
            let mut reused = RowSet::default();
            (0..len).for_each(|_| reused.push(&old));
            gather_row_set(&s, &x, 0.0, 0.0, |_| 0.0, &mut reused);
            assert_eq!(reused.iter().map(|r| r.to_row()).collect::<Vec<_>>(), rows, "over {len} old rows");
        }
        let w = s.inverse_masses();
        assert!(fresh.iter().zip(&rows).all(|(r, q)| r.w_grad2(&w) == q.w_grad2(&w)));
        // A wide contact row, the gathered rows and the wide row again, less the gathered stick
        // and a pin row: every row kept, the contact rows before and after the first one dropped
        // among them, keeps its data.
        let mut set = RowSet::default();
        set.push(&old);
        (0..rows.len()).for_each(|i| set.push(&fresh.get(i).to_row()));
        set.push(&old);
        let mut k = 0;
        set.retain(|_| {
            k += 1;
            k != 2 && k != 4
        });
        let mut kept = vec![old];
        kept.extend(rows.iter().enumerate().filter(|(i, _)| *i != 0 && *i != 2).map(|(_, r)| *r));
        kept.push(old);
        assert_eq!(set.iter().map(|r| r.to_row()).collect::<Vec<_>>(), kept);
        assert_eq!(set.all_particles().len(), kept.iter().map(|r| r.n).sum::<usize>());
    }

    #[test]
    fn tangents_are_orthonormal() {
        for n in [Vec3::y(), Vec3::new(1.0, 2.0, -0.5).normalize(), -Vec3::z()] {
            let (t1, t2) = tangents(&n);
            assert!(t1.dot(&n).abs() < 1e-15 && t2.dot(&n).abs() < 1e-15 && t1.dot(&t2).abs() < 1e-15);
            assert!((t1.norm() - 1.0).abs() < 1e-15 && (t2.norm() - 1.0).abs() < 1e-15);
        }
    }
}

/// A hash map keyed by row ids, for warm starting and multiplier lookups.
///
/// Row ids carry their index in the high bits and their collider, feature and direction in the
/// low ones, so the hash must mix every bit into the low bits the table indexes by. [`IdHasher`]
/// does that with SplitMix64's finaliser (two multiplications), several times cheaper than the
/// standard library's SipHash for one `u64`, and the same on every run: solverlab never iterates
/// such a map where the order could reach a result, but a fixed hash keeps that question out of
/// the way.
pub type IdMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The hasher of [`IdMap`]: one `u64` through SplitMix64's finaliser.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        crate::rng::mix64(self.0)
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached by keys other than `u64`; fold the bytes in, eight at a time.
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = crate::rng::mix64(self.0 ^ u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 ^= id;
    }
}
