//! Narrow-phase contact generation for capsules (against planes, spheres, capsules and boxes) plus capsule
//! mass properties.
//!
//! # Conventions
//! * A capsule is the core segment from `pose.x + q * (0, -half_height, 0)` (end 0) to
//!   `pose.x + q * (0, +half_height, 0)` (end 1), inflated by `radius`.
//! * Shape A is the first shape of each function, shape B the second. [`ContactPoint::normal`] is a unit
//!   vector from B towards A; [`ContactPoint::separation`] is the signed gap along it (negative when
//!   penetrating); [`ContactPoint::point`] lies midway between the two surfaces. Points are appended to
//!   `out` only when `separation < margin`; `out` is never cleared.
//! * Deterministic: fixed evaluation order, no randomness, ties go to the lowest index.
//!
//! # Algorithms
//! Every pair is reduced to "core point of the capsule against the other shape": the separation is the
//! distance between the core point and the closest point of the other core (point, segment, box surface),
//! minus both radii.
//! * Plane: both segment ends are tested (features 0 and 1), so a capsule lying flat gets two points.
//! * Sphere: closest point of the segment to the centre (feature 0).
//! * Capsule: closest points of two segments by minimising the squared distance over `(s, t)` in the unit
//!   square (solve the unconstrained 2x2 system, clamp `s`, solve for `t`, clamp `t`, re-solve `s`). When
//!   the segments are nearly parallel (`sin(angle) < 1e-3`) and their projections overlap, the two ends of
//!   the overlap interval are emitted instead (features 0 and 1); if the exact closest pair is strictly
//!   closer than both (the lines cross inside the overlap), it replaces the farther end (feature 2).
//! * Box: the signed distance of a point to a box is convex, so along the segment it is a convex function
//!   of the parameter; its minimiser is found by golden-section search. The two segment ends (features 0
//!   and 1) are candidates; if the interior minimiser is strictly closer than both ends it replaces the
//!   farther end (feature 2). A point inside the box is pushed out through the nearest face (ties: lowest
//!   axis, `+` side first).
//!
//! # Limitations
//! * Capsule–box yields at most 2 points; the interior minimiser is accurate to ~1e-12 in the parameter.
//! * A capsule–box contact whose core segment lies inside the box uses the nearest face of each candidate
//!   point independently, so the two normals may differ.

use super::collide::{ContactPoint, Pose};
use crate::Vec3;

/// Below this `sin(angle)` two capsule segments are treated as parallel.
const PARALLEL_SIN_TOL: f64 = 1e-3;
/// Relative tolerance for "strictly closer" comparisons of candidate points.
const CLOSER_TOL: f64 = 1e-9;
/// Golden-section iterations (0.618^70 ~ 2e-15 of the parameter range).
const GOLDEN_ITERS: usize = 70;

/// World end points (end 0 at local `-y`, end 1 at local `+y`) of a capsule's core segment.
fn segment(half_height: f64, pose: &Pose) -> (Vec3, Vec3) {
    let axis = pose.q * Vec3::new(0.0, half_height, 0.0);
    (pose.x - axis, pose.x + axis)
}

/// Parameter in `[0, 1]` of the point of segment `p0 + t (p1 - p0)` closest to `x`.
fn closest_param(p0: Vec3, p1: Vec3, x: Vec3) -> f64 {
    let d = p1 - p0;
    let dd = d.norm_squared();
    if dd > 0.0 {
        ((x - p0).dot(&d) / dd).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Parameters `(s, t)` of the closest points `p0 + s da` and `q0 + t db` of two segments.
fn closest_segment_params(p0: Vec3, da: Vec3, q0: Vec3, db: Vec3) -> (f64, f64) {
    let w = p0 - q0;
    let (aa, bb, ab) = (da.norm_squared(), db.norm_squared(), da.dot(&db));
    let (aw, bw) = (da.dot(&w), db.dot(&w));
    if aa <= 0.0 || bb <= 0.0 {
        // Degenerate segments (not reached for positive half heights): treat as points.
        let s = if aa > 0.0 { (-aw / aa).clamp(0.0, 1.0) } else { 0.0 };
        let t = if bb > 0.0 { ((p0 + da * s - q0).dot(&db) / bb).clamp(0.0, 1.0) } else { 0.0 };
        return (s, t);
    }
    // Stationary point of |w + s da - t db|^2: [aa -ab; ab -bb] (s, t) = (-aw, -bw).
    let det = aa * bb - ab * ab;
    let mut s = if det > 0.0 { ((ab * bw - bb * aw) / det).clamp(0.0, 1.0) } else { 0.0 };
    let mut t = (ab * s + bw) / bb;
    if t < 0.0 {
        t = 0.0;
        s = (-aw / aa).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((ab - aw) / aa).clamp(0.0, 1.0);
    }
    (s, t)
}

/// Some unit vector perpendicular to `v` (`+y` if `v` is zero).
fn any_perpendicular(v: Vec3) -> Vec3 {
    let a = v.abs();
    let e = if a.x <= a.y && a.x <= a.z {
        Vec3::x()
    } else if a.y <= a.z {
        Vec3::y()
    } else {
        Vec3::z()
    };
    let p = v.cross(&e);
    let n = p.norm();
    if n > 0.0 {
        p / n
    } else {
        Vec3::y()
    }
}

/// Contact for core point `x` of A (radius `ra`) with normal `n` and separation `sep`.
fn contact(x: Vec3, ra: f64, n: Vec3, separation: f64, feature: u32) -> ContactPoint {
    ContactPoint { point: x - n * (ra + 0.5 * separation), normal: n, separation, feature }
}

/// Contact between core point `x` of A (radius `ra`) and core point `y` of B (radius `rb`).
fn pair_contact(x: Vec3, y: Vec3, ra: f64, rb: f64, fallback: Vec3, feature: u32) -> ContactPoint {
    let d = x - y;
    let len = d.norm();
    let n = if len > 0.0 { d / len } else { fallback };
    contact(x, ra, n, len - ra - rb, feature)
}

fn push_if(out: &mut Vec<ContactPoint>, c: ContactPoint, margin: f64) {
    if c.separation < margin {
        out.push(c);
    }
}

/// Signed distance from world point `p` to a box and the outward unit normal at its nearest surface point.
fn box_signed_distance(half: Vec3, box_pose: &Pose, p: Vec3) -> (f64, Vec3) {
    let l = box_pose.q.inverse_transform_vector(&(p - box_pose.x));
    let c = Vec3::new(l.x.max(-half.x).min(half.x), l.y.max(-half.y).min(half.y), l.z.max(-half.z).min(half.z));
    let d = l - c;
    let dist = d.norm();
    if dist > 0.0 {
        return (dist, box_pose.q * (d / dist));
    }
    let mut axis = 0;
    let mut depth = half.x - l.x.abs();
    for k in 1..3 {
        let dk = half[k] - l[k].abs();
        if dk < depth {
            depth = dk;
            axis = k;
        }
    }
    let mut n = Vec3::zeros();
    n[axis] = if l[axis] >= 0.0 { 1.0 } else { -1.0 };
    (-depth, box_pose.q * n)
}

/// Minimiser in `[0, 1]` of a convex function by golden-section search (deterministic, fixed iterations).
fn golden_min(f: impl Fn(f64) -> f64) -> f64 {
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let (mut lo, mut hi) = (0.0, 1.0);
    let (mut x1, mut x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..GOLDEN_ITERS {
        if f1 <= f2 {
            hi = x2;
            (x2, f2) = (x1, f1);
            x1 = hi - g * (hi - lo);
            f1 = f(x1);
        } else {
            lo = x1;
            (x1, f1) = (x2, f2);
            x2 = lo + g * (hi - lo);
            f2 = f(x2);
        }
    }
    if f1 <= f2 {
        x1
    } else {
        x2
    }
}

/// Capsule A against the half-space B `{p : n·p <= offset}` (allowed side `n·p >= offset`, `plane_normal`
/// unit). Both segment ends are candidates (feature 0 = end at local `-y`, 1 = end at local `+y`).
pub fn capsule_plane(
    radius: f64,
    half_height: f64,
    pose: &Pose,
    plane_normal: Vec3,
    offset: f64,
    margin: f64,
    out: &mut Vec<ContactPoint>,
) {
    let (p0, p1) = segment(half_height, pose);
    for (feature, e) in [(0u32, p0), (1, p1)] {
        let separation = plane_normal.dot(&e) - offset - radius;
        push_if(out, contact(e, radius, plane_normal, separation, feature), margin);
    }
}

/// Capsule A against sphere B (`sphere_radius`, `center`): closest point of the segment to the centre.
/// A centre on the segment uses a normal perpendicular to the segment. Feature id 0.
pub fn capsule_sphere(
    radius: f64,
    half_height: f64,
    pose: &Pose,
    sphere_radius: f64,
    center: Vec3,
    margin: f64,
    out: &mut Vec<ContactPoint>,
) {
    let (p0, p1) = segment(half_height, pose);
    let x = p0 + (p1 - p0) * closest_param(p0, p1, center);
    let c = pair_contact(x, center, radius, sphere_radius, any_perpendicular(p1 - p0), 0);
    push_if(out, c, margin);
}

/// Capsule A (`ra`, `ha`, pose `a`) against capsule B (`rb`, `hb`, pose `b`). One point (feature 0) at
/// the closest points of the two segments; nearly parallel overlapping segments give up to two points at
/// the ends of the overlap interval (features 0, 1; feature 2 for an exact closest pair replacing one).
#[allow(clippy::too_many_arguments)]
pub fn capsule_capsule(
    ra: f64,
    ha: f64,
    a: &Pose,
    rb: f64,
    hb: f64,
    b: &Pose,
    margin: f64,
    out: &mut Vec<ContactPoint>,
) {
    let (p0, p1) = segment(ha, a);
    let (q0, q1) = segment(hb, b);
    let (da, db) = (p1 - p0, q1 - q0);
    let cross = da.cross(&db);
    let (aa, bb) = (da.norm_squared(), db.norm_squared());
    let parallel = cross.norm_squared() <= PARALLEL_SIN_TOL * PARALLEL_SIN_TOL * aa * bb;
    // Normal used when the core segments touch: perpendicular to both, oriented from B's centre to A's.
    let mut fallback = if parallel { any_perpendicular(da) } else { cross.normalize() };
    if fallback.dot(&(a.x - b.x)) < 0.0 {
        fallback = -fallback;
    }
    let (s, t) = closest_segment_params(p0, da, q0, db);
    let (xa, xb) = (p0 + da * s, q0 + db * t);
    if parallel && aa > 0.0 {
        let u0 = (q0 - p0).dot(&da) / aa;
        let u1 = (q1 - p0).dot(&da) / aa;
        let lo = u0.min(u1).max(0.0);
        let hi = u0.max(u1).min(1.0);
        if hi - lo > CLOSER_TOL {
            let end = |u: f64, feature: u32| {
                let x = p0 + da * u;
                (x, q0 + db * closest_param(q0, q1, x), feature)
            };
            let mut pts = [end(lo, 0), end(hi, 1)];
            let d0 = (pts[0].0 - pts[0].1).norm();
            let d1 = (pts[1].0 - pts[1].1).norm();
            let tol = CLOSER_TOL * (1.0 + ha + hb + ra + rb);
            if (xa - xb).norm() < d0.min(d1) - tol {
                pts[if d0 >= d1 { 0 } else { 1 }] = (xa, xb, 2);
            }
            for (x, y, feature) in pts {
                push_if(out, pair_contact(x, y, ra, rb, fallback, feature), margin);
            }
            return;
        }
    }
    push_if(out, pair_contact(xa, xb, ra, rb, fallback, 0), margin);
}

/// Capsule A against box B (half extents `half`, `box_pose`); up to 2 points. Candidates are the segment
/// ends (features 0, 1) and the segment point with the smallest signed box distance (feature 2), which
/// replaces the farther end when it is strictly closer than both ends.
pub fn capsule_box(
    radius: f64,
    half_height: f64,
    pose: &Pose,
    half: Vec3,
    box_pose: &Pose,
    margin: f64,
    out: &mut Vec<ContactPoint>,
) {
    let (p0, p1) = segment(half_height, pose);
    let sd = |x: Vec3| box_signed_distance(half, box_pose, x);
    let t = golden_min(|t| sd(p0 + (p1 - p0) * t).0);
    let pm = p0 + (p1 - p0) * t;
    let mut cands = [(p0, sd(p0), 0u32), (p1, sd(p1), 1)];
    let (dm, nm) = sd(pm);
    let tol = CLOSER_TOL * (1.0 + half.norm() + half_height + radius);
    let (d0, d1) = (cands[0].1 .0, cands[1].1 .0);
    if dm < d0.min(d1) - tol {
        cands[if d0 >= d1 { 0 } else { 1 }] = (pm, (dm, nm), 2);
    }
    for (x, (d, n), feature) in cands {
        push_if(out, contact(x, radius, n, d - radius, feature), margin);
    }
}

/// Volume of a capsule: cylinder `pi r^2 (2h)` plus one full sphere `4/3 pi r^3`.
pub fn capsule_volume(radius: f64, half_height: f64) -> f64 {
    let r2 = radius * radius;
    std::f64::consts::PI * r2 * (2.0 * half_height) + 4.0 / 3.0 * std::f64::consts::PI * r2 * radius
}

/// Principal moments of inertia `(I_x, I_y, I_z)` about the capsule centre (local axes, `y` along the
/// segment) for a uniform capsule of total `mass`.
pub fn capsule_inertia(mass: f64, radius: f64, half_height: f64) -> Vec3 {
    // Derivation. Let r = radius, h = half_height, L = 2h.
    // * Mass split by volume: V_c = pi r^2 L (cylinder), V_s = 4/3 pi r^3 (both hemispheres together);
    //   m_c = m V_c / (V_c + V_s), and each hemisphere gets m_h = m V_s / (2 (V_c + V_s)).
    // * Solid cylinder about its own centre: axial m_c r^2 / 2, transverse m_c (3 r^2 + L^2) / 12.
    // * Solid hemisphere: about its symmetry axis 2/5 m_h r^2 (half of a sphere with half the mass).
    //   Across, about its flat face centre it is also 2/5 m_h r^2; its centroid lies 3r/8 from the flat
    //   face, so about the centroid: 2/5 - (3/8)^2 = 83/320 (times m_h r^2). The centroid of each
    //   hemisphere is at distance h + 3r/8 from the capsule centre, so by the parallel-axis theorem the
    //   transverse moment of one hemisphere is m_h (83/320 r^2 + (h + 3r/8)^2).
    // * Sum: I_y = m_c r^2 / 2 + 2 (2/5 m_h r^2); I_x = I_z = cylinder + 2 * hemisphere transverse.
    //   Checks: h -> 0 gives m (83/320 + 9/64) r^2 = 2/5 m r^2; r -> 0 gives m L^2 / 12.
    let r2 = radius * radius;
    let vc = std::f64::consts::PI * r2 * (2.0 * half_height);
    let vs = 4.0 / 3.0 * std::f64::consts::PI * r2 * radius;
    let vt = vc + vs;
    if vt.is_nan() || vt <= 0.0 {
        return Vec3::zeros();
    }
    let mc = mass * vc / vt;
    let mh = 0.5 * mass * vs / vt;
    let len = 2.0 * half_height;
    let arm = half_height + 0.375 * radius;
    let axial = 0.5 * mc * r2 + 2.0 * (0.4 * mh * r2);
    let transverse = mc * (3.0 * r2 + len * len) / 12.0 + 2.0 * mh * (83.0 / 320.0 * r2 + arm * arm);
    Vec3::new(transverse, axial, transverse)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::UnitQuaternion;

    struct Lcg(u64);
    impl Lcg {
        fn unit(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
        fn range(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.unit()
        }
        fn vec(&mut self, s: f64) -> Vec3 {
            Vec3::new(self.range(-s, s), self.range(-s, s), self.range(-s, s))
        }
        fn pose(&mut self, s: f64) -> Pose {
            let pi = std::f64::consts::PI;
            let q = UnitQuaternion::from_euler_angles(self.range(-pi, pi), self.range(-pi, pi), self.range(-pi, pi));
            Pose { x: self.vec(s), q }
        }
    }

    const N: usize = 20_001;

    fn flat(x: Vec3) -> Pose {
        Pose { x, q: UnitQuaternion::from_axis_angle(&Vec3::z_axis(), std::f64::consts::FRAC_PI_2) }
    }
    fn upright(x: Vec3) -> Pose {
        Pose { x, q: UnitQuaternion::identity() }
    }
    fn samples(h: f64, p: &Pose) -> impl Iterator<Item = Vec3> {
        let (p0, p1) = segment(h, p);
        (0..N).map(move |i| p0 + (p1 - p0) * (i as f64 / (N - 1) as f64))
    }
    fn point_segment_dist(x: Vec3, q0: Vec3, q1: Vec3) -> f64 {
        let d = q1 - q0;
        let t = ((x - q0).dot(&d) / d.norm_squared()).clamp(0.0, 1.0);
        (x - q0 - d * t).norm()
    }
    /// Independent box SDF (component-wise formula).
    fn box_sdf(half: Vec3, bp: &Pose, p: Vec3) -> f64 {
        let l = bp.q.inverse_transform_vector(&(p - bp.x));
        let q = l.abs() - half;
        q.map(|v| v.max(0.0)).norm() + q.max().min(0.0)
    }
    fn min_sep(out: &[ContactPoint]) -> f64 {
        out.iter().map(|c| c.separation).fold(f64::INFINITY, f64::min)
    }
    fn assert_unique(out: &[ContactPoint]) {
        for i in 0..out.len() {
            for j in i + 1..out.len() {
                assert_ne!(out[i].feature, out[j].feature, "duplicate feature in {out:?}");
            }
        }
    }

    #[test]
    fn plane_flat_and_upright() {
        let (r, h) = (0.1, 0.5);
        let mut out = Vec::new();
        capsule_plane(r, h, &flat(Vec3::new(0.3, r + 1e-3, -0.2)), Vec3::y(), 0.0, 0.01, &mut out);
        assert_eq!(out.len(), 2);
        for c in &out {
            assert!((c.separation - 1e-3).abs() < 1e-12, "{c:?}");
            assert!((c.normal - Vec3::y()).norm() < 1e-15);
            assert!((c.point.y - 5e-4).abs() < 1e-12);
        }
        assert!((out[0].point.x - out[1].point.x).abs() > 0.99);
        assert_unique(&out);
        out.clear();
        capsule_plane(r, h, &upright(Vec3::new(0.0, h + r - 2e-3, 0.0)), Vec3::y(), 0.0, 0.01, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].feature, 0);
        assert!((out[0].separation + 2e-3).abs() < 1e-12);
    }

    #[test]
    fn sphere_brute_force() {
        let mut rng = Lcg(7);
        for _ in 0..200 {
            let (r, h, rs) = (rng.range(0.05, 0.5), rng.range(0.05, 1.0), rng.range(0.05, 0.5));
            let pose = rng.pose(1.0);
            let center = rng.vec(2.0);
            let mut out = Vec::new();
            capsule_sphere(r, h, &pose, rs, center, 100.0, &mut out);
            assert_eq!(out.len(), 1);
            let brute = samples(h, &pose).map(|x| (x - center).norm()).fold(f64::INFINITY, f64::min) - r - rs;
            let c = out[0];
            assert!((c.separation - brute).abs() < 1e-6, "{} vs {brute}", c.separation);
            assert!((c.normal.norm() - 1.0).abs() < 1e-12);
            // The sphere surface point is midpoint - n sep/2 and lies on the sphere, on the A side.
            let sb = c.point - c.normal * (0.5 * c.separation);
            assert!(((sb - center).norm() - rs).abs() < 1e-9);
            assert!((sb - center).dot(&c.normal) > 0.0);
        }
    }

    #[test]
    fn capsule_crossing_and_parallel() {
        let (ra, rb) = (0.1, 0.2);
        let mut out = Vec::new();
        // A along world x at height 0.5, B along world y at the origin: segment distance 0.5 (crossing in z).
        let a = Pose { x: Vec3::new(0.0, 0.0, 0.5), ..flat(Vec3::zeros()) };
        capsule_capsule(ra, 1.0, &a, rb, 1.0, &upright(Vec3::zeros()), 1.0, &mut out);
        assert_eq!(out.len(), 1);
        assert!((out[0].separation - (0.5 - ra - rb)).abs() < 1e-12);
        assert!((out[0].normal - Vec3::z()).norm() < 1e-12);
        out.clear();
        // Both along world x, offset in z by ra + rb - 1 mm, overlapping in x over [-0.3, 0.5].
        let a = flat(Vec3::new(0.0, 0.0, ra + rb - 1e-3));
        let b = flat(Vec3::new(0.7, 0.0, 0.0));
        capsule_capsule(ra, 0.5, &a, rb, 1.0, &b, 0.01, &mut out);
        assert_eq!(out.len(), 2);
        for c in &out {
            assert!((c.separation + 1e-3).abs() < 1e-12, "{c:?}");
            assert!((c.normal - Vec3::z()).norm() < 1e-12);
        }
        let mut xs = [out[0].point.x, out[1].point.x];
        xs.sort_by(f64::total_cmp);
        assert!((xs[0] + 0.3).abs() < 1e-12 && (xs[1] - 0.5).abs() < 1e-12, "{xs:?}");
        assert_unique(&out);
        out.clear();
        // Nearly parallel (tilt 5e-4 rad about y) with the lines crossing mid-overlap: the exact closest
        // pair (distance 0) must replace one interval end.
        let tilt = UnitQuaternion::from_axis_angle(&Vec3::y_axis(), 5e-4);
        let b = Pose { x: Vec3::new(0.0, 0.0, 0.0), q: tilt * flat(Vec3::zeros()).q };
        capsule_capsule(ra, 0.5, &flat(Vec3::new(0.1, 0.0, 0.0)), rb, 1.0, &b, 0.01, &mut out);
        assert_eq!(out.len(), 2);
        assert!((min_sep(&out) + ra + rb).abs() < 1e-12, "{out:?}");
        assert_unique(&out);
    }

    #[test]
    fn capsule_brute_force() {
        let mut rng = Lcg(11);
        for i in 0..200 {
            let (ra, ha, rb, hb) =
                (rng.range(0.05, 0.3), rng.range(0.1, 1.0), rng.range(0.05, 0.3), rng.range(0.1, 1.0));
            let a = rng.pose(1.0);
            // Every fourth case: nearly parallel segments to exercise the two-point path.
            let b = if i % 4 == 0 {
                let tilt = UnitQuaternion::from_axis_angle(&Vec3::x_axis(), rng.range(-5e-4, 5e-4));
                Pose { x: a.x + rng.vec(0.5), q: a.q * tilt }
            } else {
                rng.pose(1.0)
            };
            let mut out = Vec::new();
            capsule_capsule(ra, ha, &a, rb, hb, &b, 100.0, &mut out);
            assert!(!out.is_empty() && out.len() <= 2);
            assert_unique(&out);
            let (q0, q1) = segment(hb, &b);
            let brute = samples(ha, &a).map(|x| point_segment_dist(x, q0, q1)).fold(f64::INFINITY, f64::min) - ra - rb;
            let got = min_sep(&out);
            assert!(got <= brute + 1e-9 && got >= brute - 1e-4, "case {i}: {got} vs {brute}");
            for c in &out {
                assert!((c.normal.norm() - 1.0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn box_flat_and_standing() {
        let (r, h) = (0.1, 0.5);
        let half = Vec3::new(1.0, 0.25, 1.0);
        let bp = Pose { x: Vec3::new(0.2, -0.25, 0.1), q: UnitQuaternion::identity() };
        let mut out = Vec::new();
        capsule_box(r, h, &flat(Vec3::new(0.0, r + 1e-3, 0.0)), half, &bp, 0.01, &mut out);
        assert_eq!(out.len(), 2);
        for c in &out {
            assert!((c.separation - 1e-3).abs() < 1e-12, "{c:?}");
            assert!((c.normal - Vec3::y()).norm() < 1e-12);
            assert!((c.point.y - 5e-4).abs() < 1e-12);
        }
        assert_unique(&out);
        out.clear();
        capsule_box(r, h, &upright(Vec3::new(0.0, h + r - 1e-3, 0.0)), half, &bp, 0.01, &mut out);
        assert_eq!(out.len(), 1);
        assert!((out[0].separation + 1e-3).abs() < 1e-12);
        assert!((out[0].normal - Vec3::y()).norm() < 1e-12);
    }

    #[test]
    fn box_brute_force() {
        let mut rng = Lcg(3);
        let mut checked = 0;
        for i in 0..300 {
            let (r, h) = (rng.range(0.05, 0.3), rng.range(0.1, 1.0));
            let half = Vec3::new(rng.range(0.1, 1.0), rng.range(0.1, 1.0), rng.range(0.1, 1.0));
            let bp = rng.pose(0.5);
            let pose = rng.pose(1.5);
            let mut out = Vec::new();
            capsule_box(r, h, &pose, half, &bp, 100.0, &mut out);
            assert!(!out.is_empty() && out.len() <= 2);
            assert_unique(&out);
            for c in &out {
                // Box surface point: on the surface, and the normal is its outward direction (B -> A).
                let sb = c.point - c.normal * (0.5 * c.separation);
                assert!(box_sdf(half, &bp, sb).abs() < 1e-9, "case {i}: {c:?}");
                assert!((box_sdf(half, &bp, sb + c.normal * 1e-3) - 1e-3).abs() < 1e-9, "case {i}: {c:?}");
            }
            let sd: Vec<f64> = samples(h, &pose).map(|x| box_sdf(half, &bp, x)).collect();
            let brute = sd.iter().copied().fold(f64::INFINITY, f64::min);
            if brute <= 0.0 {
                continue; // segment passes through the box interior
            }
            checked += 1;
            let got = min_sep(&out);
            assert!((got - (brute - r)).abs() < 1e-4, "case {i}: {got} vs {}", brute - r);
        }
        assert!(checked >= 100, "only {checked} outside cases");
    }

    #[test]
    fn inertia_limits() {
        let (m, r) = (2.5, 0.7);
        let i = capsule_inertia(m, r, 1e-13);
        let sphere = 0.4 * m * r * r;
        for k in 0..3 {
            assert!((i[k] - sphere).abs() <= 1e-9 * sphere, "{i:?}");
        }
        let h = 0.8;
        let rod = capsule_inertia(m, 1e-7, h);
        let expect = m * (2.0 * h) * (2.0 * h) / 12.0;
        assert!((rod.x - expect).abs() <= 1e-6 * expect && rod.x == rod.z, "{rod:?}");
        assert!(rod.y < 1e-12);
        // Mid case against a direct evaluation by volume-weighted pieces.
        let (r, h) = (0.3, 0.4);
        let v = capsule_volume(r, h);
        let pi = std::f64::consts::PI;
        assert!((v - (pi * r * r * 2.0 * h + 4.0 / 3.0 * pi * r.powi(3))).abs() < 1e-15);
        let i = capsule_inertia(m, r, h);
        assert!(i.x > i.y && i.y > 0.0);
    }

    #[test]
    fn feature_ids_unique() {
        let mut rng = Lcg(5);
        for _ in 0..300 {
            let (a, b) = (rng.pose(0.5), rng.pose(0.5));
            let mut out = Vec::new();
            capsule_plane(0.2, 0.5, &a, Vec3::y(), 0.0, 10.0, &mut out);
            assert_eq!(out.len(), 2);
            assert_unique(&out);
            out.clear();
            capsule_capsule(0.2, 0.5, &a, 0.1, 0.3, &Pose { q: a.q, ..b }, 10.0, &mut out);
            assert_unique(&out);
            out.clear();
            capsule_box(0.2, 0.5, &a, Vec3::new(0.3, 0.2, 0.4), &b, 10.0, &mut out);
            assert_unique(&out);
        }
    }
}
