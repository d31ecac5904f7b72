//! Particles against the world colliders: each contact one row `C = n·x − … ≥ 0` ([`Contact`]),
//! named by a stable [`ColliderRef`]; one function per collider (planes, spheres, box faces,
//! blocks), [`collider_contact`] by name, the flat ones as affine rows ([`FlatCollider`]), and
//! [`for_each_contact`] over every collider of a scene.

use crate::model::{Block, BoxCollider, Plane, Scene, Sphere};
use crate::Vec3;

/// A particle in contact with (or near) a world collider, as one row `C = n·x − … ≥ 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Unit normal, pointing into the allowed region; `∇C = normal`.
    pub normal: Vec3,
    /// Signed distance to the allowed region (m); negative means penetration of depth `−c`.
    pub c: f64,
    /// Coulomb friction coefficient μ of the collider.
    pub friction: f64,
    /// Restitution e of the collider.
    pub restitution: f64,
    /// Which collider and face, stable across frames (see [`ColliderRef`]).
    pub collider: ColliderRef,
}

impl Contact {
    /// The friction and restitution data a contact row carries.
    pub fn info(&self) -> crate::rows::ContactInfo {
        crate::rows::ContactInfo {
            normal: self.normal,
            friction: self.friction,
            restitution: self.restitution,
            collider: Some(self.collider),
        }
    }
}

/// A stable name for one collider face, used to build row ids for warm starting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ColliderRef {
    /// Half-space `k`.
    Plane(u32),
    /// Sphere `k`.
    Sphere(u32),
    /// Face of the box: `2·axis` is the lower face, `2·axis + 1` the upper one.
    BoxFace(u8),
    /// Block `k` (one id per block: a contact keeps its id when the pushing face changes).
    Block(u32),
}

impl ColliderRef {
    /// A dense code, unique among colliders: box faces, then planes, spheres and blocks
    /// interleaved.
    pub fn code(self) -> u64 {
        match self {
            ColliderRef::BoxFace(f) => f as u64,
            ColliderRef::Plane(k) => 8 + 3 * k as u64,
            ColliderRef::Sphere(k) => 9 + 3 * k as u64,
            ColliderRef::Block(k) => 10 + 3 * k as u64,
        }
    }
}

/// Plane: `C = n·x − offset − r` with `n` normalised, `∇C = n`.
#[inline]
pub fn plane_contact(k: usize, p: &Plane, x: &Vec3, r: f64) -> Contact {
    let n = p.normal.normalize();
    Contact {
        normal: n,
        c: n.dot(x) - p.offset - r,
        friction: p.friction,
        restitution: p.restitution,
        collider: ColliderRef::Plane(k as u32),
    }
}

/// Sphere (particles outside): `C = |x − centre| − R − r`, `∇C = (x − centre)/|x − centre|`.
/// At the exact centre the normal is `+y` (any direction is a valid subgradient).
#[inline]
pub fn sphere_contact(k: usize, s: &Sphere, x: &Vec3, r: f64) -> Contact {
    let d = x - s.center;
    let len = d.norm();
    let n = if len > 1e-12 { d / len } else { Vec3::y() };
    Contact {
        normal: n,
        c: len - s.radius - r,
        friction: s.friction,
        restitution: s.restitution,
        collider: ColliderRef::Sphere(k as u32),
    }
}

/// `s` times the unit vector along `axis` (0, 1 or 2; anything above 1 is z), with +0 in the
/// other components.
#[inline(always)]
fn axis_vector(axis: usize, s: f64) -> Vec3 {
    match axis {
        0 => Vec3::new(s, 0.0, 0.0),
        1 => Vec3::new(0.0, s, 0.0),
        _ => Vec3::new(0.0, 0.0, s),
    }
}

/// Box face `f` (particles inside): lower faces `C = x_k − (min_k + r)`, `∇C = e_k`; upper faces
/// `C = (max_k − r) − x_k`, `∇C = −e_k`.
#[inline]
pub fn box_face_contact(f: usize, b: &BoxCollider, x: &Vec3, r: f64) -> Contact {
    let axis = f / 2;
    // The axis vector by value (not written through a variable index), so that the caller can
    // keep it in registers.
    let (n, c) = if f.is_multiple_of(2) {
        (axis_vector(axis, 1.0), x[axis] - (b.min[axis] + r))
    } else {
        (axis_vector(axis, -1.0), (b.max[axis] - r) - x[axis])
    };
    Contact { normal: n, c, friction: b.friction, restitution: b.restitution, collider: ColliderRef::BoxFace(f as u8) }
}

/// Block `k` (particles outside): the face of least penetration, `C = maxₖ dₖ` with
/// `dₖ = max(minₖ − r − xₖ, xₖ − maxₖ − r)`, `∇C = ±eₖ` (see [`Block`]). Ties go to the lowest
/// axis, then to the lower face.
#[inline]
pub fn block_contact(k: usize, b: &Block, x: &Vec3, r: f64) -> Contact {
    let mut best = (f64::NEG_INFINITY, Vec3::zeros());
    for axis in 0..3 {
        let below = b.min[axis] - r - x[axis];
        let above = x[axis] - b.max[axis] - r;
        let (d, sign) = if below >= above { (below, -1.0) } else { (above, 1.0) };
        if d > best.0 {
            best = (d, axis_vector(axis, sign));
        }
    }
    Contact {
        normal: best.1,
        c: best.0,
        friction: b.friction,
        restitution: b.restitution,
        collider: ColliderRef::Block(k as u32),
    }
}

/// The row of one collider of `scene` for a particle at `x` with radius `r`, exactly as
/// [`for_each_contact`] gives it; `None` if the scene has no such collider. For callers that find
/// a particle's nearby colliders once and evaluate them again as the particle moves.
#[inline]
pub fn collider_contact(scene: &Scene, collider: ColliderRef, x: &Vec3, r: f64) -> Option<Contact> {
    match collider {
        ColliderRef::BoxFace(f) => scene.bounds.as_ref().map(|b| box_face_contact(f as usize, b, x, r)),
        ColliderRef::Plane(k) => scene.planes.get(k as usize).map(|p| plane_contact(k as usize, p, x, r)),
        ColliderRef::Sphere(k) => scene.spheres.get(k as usize).map(|s| sphere_contact(k as usize, s, x, r)),
        ColliderRef::Block(k) => scene.blocks.get(k as usize).map(|b| block_contact(k as usize, b, x, r)),
    }
}

/// A flat collider (a box face or a plane) as an affine row, for callers that evaluate the same
/// collider many times: [`FlatCollider::c`] gives the bits [`collider_contact`] gives, up to the
/// sign of a zero `C`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlatCollider {
    /// The unit normal, `∇C`.
    pub normal: Vec3,
    /// Planes: the offset; box faces: the lower bound, or minus the upper one.
    pub offset: f64,
    /// Whether this is a plane (`C = (n·x − offset) − r`) or a box face (`C = n·x − (offset + r)`).
    pub plane: bool,
    /// Coulomb friction coefficient μ.
    pub friction: f64,
}

impl FlatCollider {
    /// `C` for a particle of radius `r` at `x` (m). For an upper box face this is
    /// `−x − (r − max)`, the same number as `(max − r) − x`: IEEE subtraction is exactly
    /// antisymmetric and addition commutative.
    #[inline(always)]
    pub fn c(&self, x: &Vec3, r: f64) -> f64 {
        if self.plane {
            (self.normal.dot(x) - self.offset) - r
        } else {
            self.normal.dot(x) - (self.offset + r)
        }
    }
}

/// The row of a flat collider of `scene` (see [`FlatCollider`]); `None` for curved colliders
/// (spheres and blocks, whose normal depends on `x`) and for colliders the scene lacks.
pub fn flat_collider(scene: &Scene, collider: ColliderRef) -> Option<FlatCollider> {
    match collider {
        ColliderRef::BoxFace(f) => scene.bounds.as_ref().map(|b| {
            let axis = f as usize / 2;
            let (normal, offset) = if f.is_multiple_of(2) {
                (axis_vector(axis, 1.0), b.min[axis])
            } else {
                (axis_vector(axis, -1.0), -b.max[axis])
            };
            FlatCollider { normal, offset, plane: false, friction: b.friction }
        }),
        ColliderRef::Plane(k) => scene.planes.get(k as usize).map(|p| FlatCollider {
            normal: p.normal.normalize(),
            offset: p.offset,
            plane: true,
            friction: p.friction,
        }),
        ColliderRef::Sphere(_) | ColliderRef::Block(_) => None,
    }
}

/// Calls `f` with every collider row of a particle at `x` with radius `r` whose `C` is below
/// `margin` (m), over the scene's box, planes, spheres and blocks in that order. `margin = 0`
/// gives exactly the penetrating ones (and touching ones, `C = 0`).
#[inline]
pub fn for_each_contact(scene: &Scene, x: &Vec3, r: f64, margin: f64, mut f: impl FnMut(Contact)) {
    if let Some(b) = &scene.bounds {
        for face in 0..6 {
            let c = box_face_contact(face, b, x, r);
            if c.c <= margin {
                f(c);
            }
        }
    }
    for (k, p) in scene.planes.iter().enumerate() {
        let c = plane_contact(k, p, x, r);
        if c.c <= margin {
            f(c);
        }
    }
    for (k, s) in scene.spheres.iter().enumerate() {
        let c = sphere_contact(k, s, x, r);
        if c.c <= margin {
            f(c);
        }
    }
    for (k, b) in scene.blocks.iter().enumerate() {
        let c = block_contact(k, b, x, r);
        if c.c <= margin {
            f(c);
        }
    }
}
