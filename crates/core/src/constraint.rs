//! Constraint maths as pure functions of positions and inverse masses.
//!
//! Every constraint is a scalar function `C(x)` with gradient `∇C`; equalities ask `C = 0`,
//! inequalities `C ≥ 0`. Every projection here is the same update, from XPBD (Macklin, Müller,
//! Chentanez 2016, eq. 18) with PBD (Müller et al. 2007) and Jakobsen (2001) as special cases:
//!
//! ```text
//! α̃  = α / h²                                      compliance per step
//! Δλ = (−C − α̃·λ) / (Σᵢ wᵢ |∇ᵢC|² + α̃)              multiplier change
//! Δxᵢ = wᵢ ∇ᵢC · Δλ                                  position change of particle i
//! ```
//!
//! With `α = 0` and `λ` not carried between iterations this is Jakobsen's projection; for an
//! inequality the accumulated multiplier is clamped at `λ ≥ 0`, so that it only ever pushes.

use crate::model::{Block, BoxCollider, Plane, Scene, Sense, Sphere};
use crate::Vec3;

/// A stick `|xb − xa| ≷ rest`, linearised at the current positions.
///
/// ```text
/// d   = xb − xa,   ℓ = |d|,   n = d/ℓ
/// C   = ℓ − rest                     (Sense::Equal and Sense::AtLeast)
/// C   = rest − ℓ                     (Sense::AtMost; the sign flips so that C ≥ 0 is allowed)
/// ∇a C = −s·n,  ∇b C = s·n           (s = +1, or −1 for AtMost)
/// Σ wᵢ|∇ᵢC|² = wa + wb               (n is a unit vector)
/// ```
///
/// `normal` below is `s·n`, so `∇a C = −normal` and `∇b C = normal` for every sense.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StickRow {
    /// `s·n`: the gradient with respect to `xb` (unit length).
    pub normal: Vec3,
    /// The constraint value `C` in the sense's sign convention (m).
    pub c: f64,
}

/// Linearises a stick at `xa`, `xb`.
///
/// `sqrt_approx` replaces `ℓ = √(d·d)` by one Newton step from the rest length,
/// `ℓ ≈ (rest² + d·d)/(2·rest)`, Jakobsen's square-root approximation: exact when `ℓ = rest` and
/// within `(ℓ − rest)²/(2·rest)` near it. Then `n = d/ℓ` costs a division and no square root.
///
/// When the particles coincide (`ℓ` below 1e-12 m), `n` is `fallback` (a seeded random unit
/// vector, Jakobsen's "dislocate slightly") so that no NaN appears.
#[inline]
pub fn stick_row(
    xa: &Vec3,
    xb: &Vec3,
    rest: f64,
    sense: Sense,
    sqrt_approx: bool,
    fallback: impl FnOnce() -> Vec3,
) -> StickRow {
    let d = xb - xa;
    let dd = d.dot(&d);
    let len = if sqrt_approx { (rest * rest + dd) / (2.0 * rest) } else { dd.sqrt() };
    // One division, then multiplications: a sweep is bound by its divisions.
    let n = if dd > 1e-24 { d * (1.0 / len) } else { fallback() };
    match sense {
        Sense::Equal | Sense::AtLeast => StickRow { normal: n, c: len - rest },
        Sense::AtMost => StickRow { normal: -n, c: rest - len },
    }
}

/// `C` of a stick in its sense's sign convention, exactly (with a square root).
#[inline]
pub fn stick_value(xa: &Vec3, xb: &Vec3, rest: f64, sense: Sense) -> f64 {
    let len = (xb - xa).norm();
    match sense {
        Sense::Equal | Sense::AtLeast => len - rest,
        Sense::AtMost => rest - len,
    }
}

/// The curvature of a stick: its Hessian over `(xa, xb)`, for the Newton family's full Newton
/// step (the geometric stiffness `−λ ∇²C` of the Lagrangian).
///
/// ```text
/// ∇b C = s·n,  ∇a C = −s·n                  (s = +1, or −1 for AtMost; n = (xb − xa)/ℓ)
/// ∂n/∂xb = (I − n nᵀ)/ℓ = P/ℓ,  ∂n/∂xa = −P/ℓ
/// ∇²C = (s/ℓ) · [ P  −P ]                   (blocks xa xa, xa xb; xb xa, xb xb)
///               [ −P  P ]
/// ```
///
/// Returns `κ = s/ℓ` (1/m) and `n`, so that `∇²C = κ·[P −P; −P P]` with `P = I − n nᵀ`; `None`
/// where the gradient is undefined (coinciding particles). `P` has the two unit tangents of `n`
/// as eigenvectors with eigenvalue 1, so `[P −P; −P P] = Σₜ [−t; t][−t; t]ᵀ` over them.
pub fn stick_curvature(xa: &Vec3, xb: &Vec3, sense: Sense) -> Option<(f64, Vec3)> {
    let d = xb - xa;
    let len = d.norm();
    if len < 1e-12 {
        return None;
    }
    let s = if sense == Sense::AtMost { -1.0 } else { 1.0 };
    Some((s / len, d / len))
}

/// The gradients `(∇a C, ∇b C)` of a stick; `None` where it is undefined (coinciding particles).
pub fn stick_gradient(xa: &Vec3, xb: &Vec3, sense: Sense) -> Option<(Vec3, Vec3)> {
    let d = xb - xa;
    let len = d.norm();
    if len < 1e-12 {
        return None;
    }
    let s = if sense == Sense::AtMost { -1.0 } else { 1.0 };
    let n = s * d / len;
    Some((-n, n))
}

/// The XPBD multiplier change for one row (see the module docs).
///
/// * `c`: constraint value; `w_grad2`: `Σ wᵢ|∇ᵢC|²`; `alpha_tilde`: `α/h²`;
/// * `lambda`: the multiplier accumulated so far in this step (0 for plain PBD);
/// * `unilateral`: clamp the accumulated multiplier to `λ + Δλ ≥ 0`.
///
/// Returns 0 when nothing can move (`w_grad2 + α̃ = 0`, both particles immovable).
#[inline]
pub fn delta_lambda(c: f64, w_grad2: f64, alpha_tilde: f64, lambda: f64, unilateral: bool) -> f64 {
    let denom = w_grad2 + alpha_tilde;
    if denom <= 0.0 {
        return 0.0;
    }
    let dl = (-c - alpha_tilde * lambda) / denom;
    if unilateral {
        (lambda + dl).max(0.0) - lambda
    } else {
        dl
    }
}

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

/// Position-level Coulomb friction on one contact row, applied after its normal projection
/// (Macklin, Müller, Chentanez, Kim, "Unified Particle Physics for Real-Time Applications",
/// 2014, §6.1; Müller et al., "Detailed Rigid Body Simulation with Extended Position Based
/// Dynamics", 2020, §3.5). The row's point is `Σ cₖxₖ` over `particles` with coefficients `cₖ`
/// along the unit normal `n` (one particle: `c = 1`; two bodies: `+cᴬ` and `−cᴮ`), so its
/// tangential displacement over the step, from the start-of-step positions `x_start`, is
///
/// ```text
/// D  = Σ cₖ (xₖ − xₖ_start),   Dₜ = D − (D·n) n,    K = Σ wₖ cₖ²
/// λₜ' = clamp(λₜ − Dₜ/K, |λₜ'| ≤ μ λₙ)          accumulated tangential multiplier (kg·m)
/// xₖ += wₖ cₖ (λₜ' − λₜ)
/// ```
///
/// While the whole displacement can be cancelled within the cone it is (static friction: the
/// point stays where it started the step); beyond it the correction is limited to `μ λₙ`, the
/// normal multiplier times μ (dynamic friction). Called once per iteration, the accumulated `λₜ`
/// keeps repeated calls from removing the displacement twice. Velocities are then read off the
/// corrected positions, `(x − x*)/h`, so a block that slides reports the speed it slides at.
/// Returns the new `λₜ` (a tangent vector; the friction force is `λₜ/h²`).
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn coulomb_friction(
    x: &mut [Vec3],
    x_start: &[Vec3],
    w: &[f64],
    particles: &[usize],
    coeffs: &[f64],
    n: &Vec3,
    lambda_n: f64,
    mu: f64,
    lambda_t: Vec3,
) -> Vec3 {
    if mu <= 0.0 || lambda_n <= 0.0 {
        return lambda_t;
    }
    let k: f64 = particles.iter().zip(coeffs).map(|(&i, c)| w[i] * c * c).sum();
    if k <= 0.0 {
        return lambda_t;
    }
    let d: Vec3 = particles.iter().zip(coeffs).map(|(&i, c)| (x[i] - x_start[i]) * *c).sum();
    let dt = d - n * d.dot(n);
    let mut new = lambda_t - dt / k;
    let limit = mu * lambda_n;
    let norm = new.norm();
    if norm > limit {
        new *= limit / norm;
    }
    let change = new - lambda_t;
    for (&i, c) in particles.iter().zip(coeffs) {
        x[i] += change * (w[i] * c);
    }
    new
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flat collider's affine row gives exactly the bits of the contact function it stands
    /// for, at random points, radii and walls (the relaxation solver relies on it: its results
    /// must not depend on which of the two it evaluates).
    #[test]
    fn flat_colliders_give_the_contact_functions_bits() {
        use crate::model::{BoxCollider, Plane};
        let mut rng = crate::rng::Rng::new(5);
        let mut value = |scale: f64| (rng.next_f64() - 0.5) * scale;
        for _ in 0..2000 {
            let mut scene = Scene::new("flat");
            let min = Vec3::new(value(3.0), value(3.0), value(3.0));
            let max = min + Vec3::new(1.0 + value(1.0).abs(), 0.7, 2.0 + value(0.3));
            scene.bounds = Some(BoxCollider { min, max, friction: 0.3, restitution: 0.0 });
            let normal = Vec3::new(value(1.0), value(1.0), value(1.0));
            scene.planes.push(Plane { normal, offset: value(2.0), friction: 0.1, restitution: 0.0 });
            let x = Vec3::new(value(7.0), value(7.0), value(7.0));
            let r = value(0.2).abs();
            let colliders = (0..6).map(ColliderRef::BoxFace).chain([ColliderRef::Plane(0)]);
            for collider in colliders {
                let full = collider_contact(&scene, collider, &x, r).unwrap();
                let flat = flat_collider(&scene, collider).unwrap();
                assert_eq!(flat.c(&x, r), full.c, "{collider:?} at {x:?}, r = {r}");
                assert_eq!((flat.normal, flat.friction), (full.normal, full.friction));
            }
        }
        assert!(flat_collider(&Scene::new("empty"), ColliderRef::Plane(0)).is_none());
        assert!(flat_collider(&Scene::new("empty"), ColliderRef::Sphere(0)).is_none());
    }

    fn fd_gradient(f: impl Fn(&Vec3, &Vec3) -> f64, xa: &Vec3, xb: &Vec3) -> (Vec3, Vec3) {
        let h = 1e-6;
        let mut ga = Vec3::zeros();
        let mut gb = Vec3::zeros();
        for k in 0..3 {
            let mut e = Vec3::zeros();
            e[k] = h;
            ga[k] = (f(&(xa + e), xb) - f(&(xa - e), xb)) / (2.0 * h);
            gb[k] = (f(xa, &(xb + e)) - f(xa, &(xb - e))) / (2.0 * h);
        }
        (ga, gb)
    }

    #[test]
    fn stick_gradients_match_finite_differences_for_every_sense() {
        let xa = Vec3::new(0.3, -1.2, 0.7);
        let xb = Vec3::new(1.1, 0.4, -0.2);
        for sense in [Sense::Equal, Sense::AtLeast, Sense::AtMost] {
            let (ga, gb) = stick_gradient(&xa, &xb, sense).unwrap();
            let (fa, fb) = fd_gradient(|a, b| stick_value(a, b, 0.8, sense), &xa, &xb);
            assert!((ga - fa).norm() < 1e-8, "{sense:?}: {ga} vs {fa}");
            assert!((gb - fb).norm() < 1e-8, "{sense:?}: {gb} vs {fb}");
            let row = stick_row(&xa, &xb, 0.8, sense, false, || unreachable!());
            assert!((row.normal - gb).norm() < 1e-15);
            assert!((row.c - stick_value(&xa, &xb, 0.8, sense)).abs() < 1e-15);
        }
    }

    /// `∇²C` of a stick, from its curvature, matches central differences of its gradient for
    /// every sense.
    #[test]
    fn stick_hessians_match_finite_differences_for_every_sense() {
        let xa = Vec3::new(0.3, -1.2, 0.7);
        let xb = Vec3::new(1.1, 0.4, -0.2);
        let h = 1e-6;
        for sense in [Sense::Equal, Sense::AtLeast, Sense::AtMost] {
            let (kappa, n) = stick_curvature(&xa, &xb, sense).unwrap();
            let p = nalgebra::Matrix3::identity() - n * n.transpose();
            // Column k of ∂(∇a C, ∇b C)/∂xb, by central differences; the analytic blocks are
            // (xa, xb) = −κP and (xb, xb) = κP, and by symmetry the xa columns are their negatives.
            for k in 0..3 {
                let mut e = Vec3::zeros();
                e[k] = h;
                let (ga_p, gb_p) = stick_gradient(&xa, &(xb + e), sense).unwrap();
                let (ga_m, gb_m) = stick_gradient(&xa, &(xb - e), sense).unwrap();
                let (da, db) = ((ga_p - ga_m) / (2.0 * h), (gb_p - gb_m) / (2.0 * h));
                assert!((da + kappa * p.column(k)).norm() < 1e-8, "{sense:?} xa-xb column {k}");
                assert!((db - kappa * p.column(k)).norm() < 1e-8, "{sense:?} xb-xb column {k}");
                let (ga_p, gb_p) = stick_gradient(&(xa + e), &xb, sense).unwrap();
                let (ga_m, gb_m) = stick_gradient(&(xa - e), &xb, sense).unwrap();
                let (da, db) = ((ga_p - ga_m) / (2.0 * h), (gb_p - gb_m) / (2.0 * h));
                assert!((da - kappa * p.column(k)).norm() < 1e-8, "{sense:?} xa-xa column {k}");
                assert!((db + kappa * p.column(k)).norm() < 1e-8, "{sense:?} xb-xa column {k}");
            }
            assert!(stick_curvature(&xa, &xa, sense).is_none());
        }
    }

    #[test]
    fn collider_gradients_match_finite_differences() {
        let x = Vec3::new(0.2, 0.35, -0.4);
        let plane = Plane { normal: Vec3::new(1.0, 2.0, 0.5), offset: 0.1, friction: 0.0, restitution: 0.0 };
        let sphere = Sphere { center: Vec3::new(1.0, 0.0, 0.0), radius: 0.5, friction: 0.0, restitution: 0.0 };
        let bx = BoxCollider {
            min: Vec3::new(-1.0, 0.0, -1.0),
            max: Vec3::new(1.0, 2.0, 1.0),
            friction: 0.0,
            restitution: 0.0,
        };
        type ContactFn<'a> = Box<dyn Fn(&Vec3) -> Contact + 'a>;
        let checks: Vec<ContactFn> = vec![
            Box::new(|x: &Vec3| plane_contact(0, &plane, x, 0.05)),
            Box::new(|x: &Vec3| sphere_contact(0, &sphere, x, 0.05)),
            Box::new(|x: &Vec3| box_face_contact(3, &bx, x, 0.05)),
            Box::new(|x: &Vec3| box_face_contact(4, &bx, x, 0.05)),
        ];
        for f in checks {
            let h = 1e-6;
            for k in 0..3 {
                let mut e = Vec3::zeros();
                e[k] = h;
                let fd = (f(&(x + e)).c - f(&(x - e)).c) / (2.0 * h);
                assert!((fd - f(&x).normal[k]).abs() < 1e-8);
            }
        }
    }

    #[test]
    fn sqrt_approximation_is_exact_at_rest_and_second_order_near_it() {
        let xa = Vec3::zeros();
        let rest = 2.0;
        let at_rest = stick_row(&xa, &Vec3::new(rest, 0.0, 0.0), rest, Sense::Equal, true, || unreachable!());
        assert_eq!(at_rest.c, 0.0);
        for eps in [1e-2, 1e-3] {
            let xb = Vec3::new(rest + eps, 0.0, 0.0);
            let approx = stick_row(&xa, &xb, rest, Sense::Equal, true, || unreachable!()).c;
            // (ℓ² + r²)/(2r) − r = (ℓ − r)²/(2r) + (ℓ − r)
            assert!((approx - eps - eps * eps / (2.0 * rest)).abs() < 1e-14);
        }
    }

    #[test]
    fn coinciding_particles_use_the_fallback_direction() {
        let x = Vec3::new(1.0, 1.0, 1.0);
        let row = stick_row(&x, &x, 1.0, Sense::Equal, false, Vec3::z);
        assert_eq!(row.normal, Vec3::z());
        assert_eq!(row.c, -1.0);
    }

    #[test]
    fn delta_lambda_clamps_unilateral_rows_and_skips_immovable_ones() {
        assert_eq!(delta_lambda(0.5, 2.0, 0.0, 0.0, true), 0.0, "satisfied inequality: no push");
        assert_eq!(delta_lambda(-0.5, 2.0, 0.0, 0.0, true), 0.25);
        assert_eq!(delta_lambda(0.5, 2.0, 0.0, 0.1, true), -0.1, "may release what it pushed, no more");
        assert_eq!(delta_lambda(0.5, 0.0, 0.0, 0.0, false), 0.0);
        // XPBD: α̃ = 1, λ = 0.5 → (−0.2 − 0.5)/(1 + 1)
        assert!((delta_lambda(0.2, 1.0, 1.0, 0.5, false) + 0.35).abs() < 1e-15);
    }

    /// A particle on the floor (`w = 1`, pushed up by `λₙ = 0.1`) that moved 0.03 sideways over the
    /// step: within the cone `μλₙ = 0.05` the whole displacement is cancelled; with `μ = 0.2`
    /// (limit 0.02) it keeps 0.01 of it; a second call changes nothing more.
    #[test]
    fn coulomb_friction_cancels_inside_the_cone_and_limits_outside() {
        let n = Vec3::y();
        let start = [Vec3::new(0.0, 0.0, 0.0)];
        let moved = Vec3::new(0.03, 0.0, 0.0);
        let mut x = [moved];
        let lt = coulomb_friction(&mut x, &start, &[1.0], &[0], &[1.0], &n, 0.1, 0.5, Vec3::zeros());
        assert!(x[0].norm() < 1e-16 && (lt.x + 0.03).abs() < 1e-16, "static: back to the start");
        let mut x = [moved];
        let lt = coulomb_friction(&mut x, &start, &[1.0], &[0], &[1.0], &n, 0.1, 0.2, Vec3::zeros());
        assert!((x[0].x - 0.01).abs() < 1e-15 && (lt.x + 0.02).abs() < 1e-15, "dynamic: limited to μλₙ");
        let again = coulomb_friction(&mut x, &start, &[1.0], &[0], &[1.0], &n, 0.1, 0.2, lt);
        assert!((x[0].x - 0.01).abs() < 1e-15 && (again - lt).norm() < 1e-16, "accumulated: no double removal");
        // Two bodies: only the relative motion is resisted (both moved together: nothing to do).
        let start = [Vec3::zeros(), Vec3::zeros()];
        let mut x = [moved, moved];
        coulomb_friction(&mut x, &start, &[1.0, 1.0], &[0, 1], &[1.0, -1.0], &n, 0.1, 0.5, Vec3::zeros());
        assert_eq!(x, [moved, moved]);
    }

    #[test]
    fn a_block_pushes_out_through_the_face_of_least_penetration() {
        let b = Block { min: Vec3::new(0.0, 0.0, 0.0), max: Vec3::new(2.0, 1.0, 4.0), friction: 0.3, restitution: 0.0 };
        // 0.1 below the top, 0.5 from the nearest side: out through the top.
        let c = block_contact(2, &b, &Vec3::new(0.5, 0.9, 2.0), 0.0);
        assert!((c.c + 0.1).abs() < 1e-15 && c.normal == Vec3::y() && c.collider == ColliderRef::Block(2));
        // 0.05 inside the x = 0 side: out through −x; a radius adds to the depth.
        let c = block_contact(0, &b, &Vec3::new(0.05, 0.5, 2.0), 0.02);
        assert!((c.c + 0.07).abs() < 1e-15 && c.normal == -Vec3::x());
        // Outside above the top by 0.3 and beside it by 0.1: C is the larger axis distance.
        let c = block_contact(0, &b, &Vec3::new(2.1, 1.3, 2.0), 0.0);
        assert!((c.c - 0.3).abs() < 1e-15 && c.normal == Vec3::y());
        // Moving along the normal changes C at unit rate (∇C = n).
        let x = Vec3::new(0.5, 0.9, 2.0);
        let d = block_contact(0, &b, &(x + Vec3::y() * 1e-3), 0.0).c - block_contact(0, &b, &x, 0.0).c;
        assert!((d - 1e-3).abs() < 1e-12);
    }

    #[test]
    fn collider_codes_are_distinct() {
        let mut codes: Vec<u64> = (0..6u8).map(|f| ColliderRef::BoxFace(f).code()).collect();
        for k in 0..50u32 {
            codes.extend([ColliderRef::Plane(k).code(), ColliderRef::Sphere(k).code(), ColliderRef::Block(k).code()]);
        }
        let n = codes.len();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), n);
    }
}
