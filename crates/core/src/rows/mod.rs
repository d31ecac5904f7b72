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

mod set;
#[cfg(test)]
mod tests;

pub use set::{RowHead, RowSet, RowView};

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
