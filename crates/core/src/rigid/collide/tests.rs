//! Tests of the narrow phase: hand-checked pairs, symmetry, stable feature ids, the margin, and
//! box–box and sphere–box manifolds against brute force.

use super::box_box::FEATURE_EDGE;
use super::*;
use nalgebra::{Quaternion, Unit};

fn rot(axis: Vec3, deg: f64) -> UnitQuaternion<f64> {
    UnitQuaternion::from_axis_angle(&Unit::new_normalize(axis), deg.to_radians())
}
use Pose as P;
fn id() -> Pose {
    Pose::new(Vec3::zeros(), UnitQuaternion::identity())
}
fn bb(ha: Vec3, pa: &Pose, hb: Vec3, pb: &Pose, margin: f64) -> Vec<ContactPoint> {
    let mut out = Vec::new();
    box_box(ha, pa, hb, pb, margin, &mut out);
    out
}
fn local(p: &Pose, w: Vec3) -> Vec3 {
    p.q.inverse_transform_vector(&(w - p.x))
}
/// Distance from `w` to the solid box (0 inside).
fn box_dist(h: Vec3, p: &Pose, w: Vec3) -> f64 {
    let l = local(p, w);
    (l - Vec3::new(l.x.clamp(-h.x, h.x), l.y.clamp(-h.y, h.y), l.z.clamp(-h.z, h.z))).norm()
}
fn features_unique(out: &[ContactPoint]) -> bool {
    out.iter().enumerate().all(|(i, c)| out[..i].iter().all(|o| o.feature != c.feature))
}
fn sorted_seps(out: &[ContactPoint]) -> Vec<f64> {
    let mut v: Vec<f64> = out.iter().map(|c| c.separation).collect();
    v.sort_by(f64::total_cmp);
    v
}
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    fn vec(&mut self, lo: f64, hi: f64) -> Vec3 {
        Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
    }
    fn quat(&mut self) -> UnitQuaternion<f64> {
        let v = self.vec(-1.0, 1.0);
        UnitQuaternion::from_quaternion(Quaternion::new(self.range(0.1, 1.0), v.x, v.y, v.z))
    }
}
/// Independent SAT: projections of all 8 corners on the 15 axes; returns the largest separation over
/// A's face axes, B's face axes and the edge axes.
fn sat_corners(ha: Vec3, pa: &Pose, hb: Vec3, pb: &Pose) -> [f64; 3] {
    let corners = |h: Vec3, p: &Pose| {
        let mut c = [Vec3::zeros(); 8];
        for (i, ci) in c.iter_mut().enumerate() {
            let s = |b: usize| if i & b != 0 { 1.0 } else { -1.0 };
            *ci = p.x + p.q * Vec3::new(s(1) * h.x, s(2) * h.y, s(4) * h.z);
        }
        c
    };
    let (ca, cb) = (corners(ha, pa), corners(hb, pb));
    let axa = [pa.q * Vec3::x(), pa.q * Vec3::y(), pa.q * Vec3::z()];
    let axb = [pb.q * Vec3::x(), pb.q * Vec3::y(), pb.q * Vec3::z()];
    let mut axes = [axa, axb].concat();
    let crosses = axa.iter().flat_map(|a| axb.iter().map(move |b| a.cross(b)));
    axes.extend(crosses.filter(|c| c.norm() > 1e-6).map(|c| c.normalize()));
    let mut best = [f64::NEG_INFINITY; 3];
    for (n, l) in axes.into_iter().enumerate() {
        let iv = |c: &[Vec3; 8]| {
            c.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.dot(&l)), hi.max(p.dot(&l))))
        };
        let (ia, ib) = (iv(&ca), iv(&cb));
        let g = n.min(6) / 3;
        best[g] = best[g].max((ib.0 - ia.1).max(ia.0 - ib.1));
    }
    best
}

const H: Vec3 = Vec3::new(0.5, 0.5, 0.5);

#[test]
fn spheres_and_plane() {
    let mut out = Vec::new();
    sphere_sphere(0.5, Vec3::new(0.0, 0.9, 0.0), 0.5, Vec3::zeros(), 0.0, &mut out);
    assert_eq!(out.len(), 1);
    assert!((out[0].separation + 0.1).abs() < 1e-12 && (out[0].normal - Vec3::y()).norm() < 1e-15);
    assert!((out[0].point - Vec3::new(0.0, 0.45, 0.0)).norm() < 1e-12);
    sphere_sphere(0.5, Vec3::new(0.0, 1.2, 0.0), 0.5, Vec3::zeros(), 0.1, &mut out);
    assert_eq!(out.len(), 1);
    sphere_plane(0.5, Vec3::new(1.0, 0.45, 0.0), Vec3::y(), 0.0, 0.0, &mut out);
    assert_eq!(out.len(), 2);
    assert!((out[1].separation + 0.05).abs() < 1e-12);
    assert!((out[1].point - Vec3::new(1.0, -0.025, 0.0)).norm() < 1e-12);
}

/// Tests 1 and 2: axis-aligned stack (overlap square known) and A offset + rotated 30° about y.
#[test]
fn resting_stacks() {
    let b = id();
    for (x, z, deg) in [(0.2, 0.1, 0.0), (0.3, 0.0, 30.0)] {
        for gap in [1e-3, -1e-3] {
            let a = P::new(Vec3::new(x, 1.0 + gap, z), rot(Vec3::y(), deg));
            let out = bb(H, &a, H, &b, 0.01);
            assert_eq!(out.len(), 4);
            assert!(features_unique(&out));
            for c in &out {
                assert!((c.normal - Vec3::y()).norm() < 1e-12);
                assert!((c.separation - gap).abs() < 1e-12, "{}", c.separation);
                assert!((c.point.y - (0.5 + 0.5 * gap)).abs() < 1e-12);
                let (la, lb) = (local(&a, c.point), local(&b, c.point));
                assert!(la.x.abs() <= 0.5 + 1e-9 && la.z.abs() <= 0.5 + 1e-9, "{la:?}");
                assert!(lb.x.abs() <= 0.5 + 1e-9 && lb.z.abs() <= 0.5 + 1e-9, "{lb:?}");
            }
            for (x, z) in [(-0.3, -0.4), (0.5, -0.4), (-0.3, 0.5), (0.5, 0.5)].into_iter().filter(|_| deg == 0.0) {
                let want = Vec3::new(x, 0.5 + 0.5 * gap, z);
                assert!(out.iter().any(|c| (c.point - want).norm() < 1e-12), "corner {want:?} missing: {out:?}");
            }
        }
    }
}

fn edge_on_face_pose() -> Pose {
    P::new(Vec3::new(0.1, 0.5 + 0.5 * 2f64.sqrt() - 1e-3, 0.05), rot(Vec3::z(), 45.0))
}
fn edge_edge_pose() -> Pose {
    P::new(Vec3::new(0.05, 2f64.sqrt() - 1e-3, 0.02), rot(Vec3::x(), 45.0))
}

#[test]
fn edge_on_face() {
    let out = bb(H, &edge_on_face_pose(), H, &id(), 0.01);
    assert_eq!(out.len(), 2);
    for c in &out {
        assert!((c.normal - Vec3::y()).norm() < 1e-12);
        assert!((c.separation + 1e-3).abs() < 1e-12);
        assert!((c.point.x - 0.1).abs() < 1e-9 && (c.point.y - (0.5 - 5e-4)).abs() < 1e-12);
    }
    let mut z: Vec<f64> = out.iter().map(|c| c.point.z).collect();
    z.sort_by(f64::total_cmp);
    assert!((z[0] + 0.45).abs() < 1e-9 && (z[1] - 0.5).abs() < 1e-9, "{z:?}");
}

#[test]
fn edge_edge() {
    let b = P::new(Vec3::zeros(), rot(Vec3::z(), 45.0));
    let out = bb(H, &edge_edge_pose(), H, &b, 0.01);
    assert_eq!(out.len(), 1);
    let c = out[0];
    assert!((c.normal.y.abs() - 1.0).abs() < 1e-12 && c.normal.y > 0.0);
    assert!((c.separation + 1e-3).abs() < 1e-12);
    assert!((c.point - Vec3::new(0.0, 0.5 * 2f64.sqrt() - 5e-4, 0.02)).norm() < 1e-9, "{:?}", c.point);
    assert!(c.feature >= FEATURE_EDGE);
}

#[test]
fn swap_symmetry() {
    let id = id();
    let mut cases = vec![
        (H, P::new(Vec3::new(0.2, 0.999, 0.1), UnitQuaternion::identity()), H, id),
        (H, P::new(Vec3::new(0.3, 0.999, 0.0), rot(Vec3::y(), 30.0)), H, id),
        (H, edge_on_face_pose(), H, id),
        (H, edge_edge_pose(), H, P::new(Vec3::zeros(), rot(Vec3::z(), 45.0))),
    ];
    let mut rng = Lcg(7);
    while cases.len() < 12 {
        let (ha, hb) = (rng.vec(0.2, 1.0), rng.vec(0.2, 1.0));
        let (pa, pb) = (P::new(rng.vec(-0.8, 0.8), rng.quat()), P::new(rng.vec(-0.8, 0.8), rng.quat()));
        // Skip near-ties, where the documented A/B face bias legitimately breaks the symmetry.
        let [sa, sb, se] = sat_corners(ha, &pa, hb, &pb);
        let face = sa.max(sb);
        let clear = (sa - sb).abs() > 0.03 * face.abs() + 1e-4 && (se - face).abs() > 0.06 * face.abs() + 1e-3;
        if clear && !bb(ha, &pa, hb, &pb, 0.0).is_empty() {
            cases.push((ha, pa, hb, pb));
        }
    }
    for (ha, pa, hb, pb) in cases {
        let (ab, ba) = (bb(ha, &pa, hb, &pb, 0.01), bb(hb, &pb, ha, &pa, 0.01));
        assert!(!ab.is_empty());
        assert_eq!(ab.len(), ba.len());
        for (x, y) in ab.iter().zip(&ba) {
            assert!((x.normal + y.normal).norm() < 1e-12, "{ha:?} {pa:?} {hb:?} {pb:?}\n{ab:?}\n{ba:?}");
        }
        for (x, y) in sorted_seps(&ab).iter().zip(sorted_seps(&ba)) {
            assert!((x - y).abs() < 1e-12);
        }
    }
}

#[test]
fn feature_ids_stable() {
    let b = id();
    let hb = Vec3::new(0.7, 0.5, 0.6);
    let sets =
        [(H, Vec3::new(0.3, 0.999, 0.0), rot(Vec3::y(), 30.0)), (H, Vec3::new(0.4, 0.999, -0.3), rot(Vec3::y(), 0.0))];
    for (ha, x, q) in sets {
        let ids = |dx: Vec3| {
            let out = bb(ha, &P::new(x + dx, q), hb, &b, 0.01);
            assert!(features_unique(&out));
            let mut f: Vec<u32> = out.iter().map(|c| c.feature).collect();
            f.sort();
            f
        };
        let f0 = ids(Vec3::zeros());
        assert_eq!(f0.len(), 4);
        assert_eq!(f0, ids(Vec3::new(1e-4, 0.0, 0.0)));
        assert_eq!(f0, ids(Vec3::new(0.0, 0.0, 1e-4)));
    }
}

#[test]
fn margin_behaviour() {
    let b = id();
    assert!(bb(H, &P::new(Vec3::new(0.1, 1.02, 0.0), UnitQuaternion::identity()), H, &b, 0.01).is_empty());
    let out = bb(H, &P::new(Vec3::new(0.1, 1.005, 0.0), UnitQuaternion::identity()), H, &b, 0.01);
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|c| (c.separation - 0.005).abs() < 1e-12));
    let be = P::new(Vec3::zeros(), rot(Vec3::z(), 45.0));
    let ee = |dy: f64| bb(H, &P::new(Vec3::new(0.05, 2f64.sqrt() + dy, 0.02), rot(Vec3::x(), 45.0)), H, &be, 0.01);
    assert!(ee(0.02).is_empty());
    let out = ee(0.004);
    assert_eq!(out.len(), 1);
    assert!((out[0].separation - 0.004).abs() < 1e-12);
    assert!(bb(H, &P::new(Vec3::new(0.0, 0.0, 1.5), rot(Vec3::y(), 20.0)), H, &b, 0.01).is_empty());
}

#[test]
fn box_on_plane() {
    let (h, th) = (Vec3::new(0.5, 0.3, 0.4), 10f64.to_radians());
    let y0 = 0.3 * th.cos() + 0.4 * th.sin() - 0.002;
    let p = P::new(Vec3::new(0.2, y0, -0.1), rot(Vec3::x(), 10.0));
    let mut out = Vec::new();
    box_plane(h, &p, Vec3::y(), 0.0, 0.01, &mut out);
    assert_eq!(out.iter().map(|c| c.feature).collect::<Vec<_>>(), vec![4, 5]);
    for c in &out {
        let corner = p.x + p.q * Vec3::new(if c.feature & 1 != 0 { 0.5 } else { -0.5 }, -0.3, 0.4);
        assert!((c.separation - corner.y).abs() < 1e-12 && (c.separation + 0.002).abs() < 1e-12);
        assert!((c.point - (corner - Vec3::y() * 0.5 * corner.y)).norm() < 1e-12);
        assert_eq!(c.normal, Vec3::y());
    }
    out.clear();
    box_plane(h, &p, Vec3::y(), 0.0, 0.2, &mut out);
    assert_eq!(out.iter().map(|c| c.feature).collect::<Vec<_>>(), vec![0, 1, 4, 5]);
}

/// The bounding sphere's early out changes nothing: on boxes of random sizes, turns and
/// heights around the margin's reach (the lowest corner from well inside to just beyond it,
/// on tilted planes too), `box_plane` gives the corners the test of all eight gives, and the
/// boxes whose sphere lies beyond the margin give none.
#[test]
fn box_plane_skips_only_boxes_that_give_no_corner() {
    let mut rng = crate::rng::Rng::new(23);
    let mut skipped = 0;
    for case in 0..4000 {
        let mut u = || rng.next_f64();
        let h = Vec3::new(0.05 + u(), 0.05 + u(), 0.05 + u());
        let q = rot(Vec3::new(u() - 0.5, u() - 0.5, u() - 0.5), 360.0 * u());
        let n = Vec3::new(0.3 * (u() - 0.5), 1.0, 0.3 * (u() - 0.5)).normalize();
        let (offset, margin) = (2.0 * (u() - 0.5), 0.05 * u());
        // The centre's height above the plane: from inside the box's reach to beyond the
        // bounding sphere and the margin.
        let height = h.norm() * (0.5 + u()) + margin * (u() - 0.5);
        let x = n * (offset + height) + Vec3::new(u() - 0.5, 0.0, u() - 0.5).cross(&n);
        let pose = P::new(x, q);
        let mut out = Vec::new();
        box_plane(h, &pose, n, offset, margin, &mut out);
        let mut all = Vec::new();
        for i in 0..8u32 {
            let sgn = |bit: u32, v: f64| if i & bit != 0 { v } else { -v };
            let w = pose.x + pose.q * Vec3::new(sgn(1, h.x), sgn(2, h.y), sgn(4, h.z));
            let separation = n.dot(&w) - offset;
            if separation < margin {
                all.push(ContactPoint { point: w - n * (0.5 * separation), normal: n, separation, feature: i });
            }
        }
        assert_eq!(out.len(), all.len(), "case {case}");
        for (a, b) in out.iter().zip(&all) {
            assert!(a.feature == b.feature && a.point == b.point && a.separation == b.separation, "case {case}");
        }
        skipped += usize::from(n.dot(&x) - offset - h.norm() > margin);
    }
    assert!(skipped > 500, "{skipped} boxes beyond the reach");
}

/// Brute-force closest point on the box surface: nearest of the 6 clamped face projections.
fn brute_surface(h: Vec3, p: &Pose, w: Vec3) -> (Vec3, bool) {
    let l = local(p, w);
    let clamped = Vec3::new(l.x.clamp(-h.x, h.x), l.y.clamp(-h.y, h.y), l.z.clamp(-h.z, h.z));
    let on_face = |f: usize| {
        let mut q = clamped;
        q[f % 3] = if f < 3 { h[f % 3] } else { -h[f % 3] };
        q
    };
    let q = (0..6).map(on_face).min_by(|a, b| (a - l).norm().total_cmp(&(b - l).norm())).unwrap();
    (p.x + p.q * q, (0..3).all(|k| l[k].abs() <= h[k]))
}

#[test]
fn sphere_against_box() {
    let h = Vec3::new(0.5, 0.3, 0.8);
    let p = P::new(Vec3::new(0.3, -0.2, 1.0), rot(Vec3::new(1.0, 2.0, 0.5), 37.0));
    let mut rng = Lcg(42);
    let fixed =
        [Vec3::new(0.0, 0.5, 0.1), Vec3::new(0.7, 0.45, 0.0), Vec3::new(0.6, 0.4, 0.9), Vec3::new(0.1, 0.05, -0.2)];
    for i in 0..500 {
        let l = if i < fixed.len() { fixed[i] } else { rng.vec(-1.3, 1.3) };
        let c = p.x + p.q * l;
        let r = 0.25;
        let mut out = Vec::new();
        sphere_box(r, c, h, &p, 100.0, &mut out);
        assert_eq!(out.len(), 1);
        let (q, inside) = brute_surface(h, &p, c);
        let dist = (q - c).norm();
        let (sep, n) = if inside { (-dist - r, (q - c) / dist) } else { (dist - r, (c - q) / dist) };
        let ct = out[0];
        assert!((ct.separation - sep).abs() < 1e-9, "case {i}: {} vs {sep}", ct.separation);
        assert!((ct.normal - n).norm() < 1e-9, "case {i}: {:?} vs {n:?}", ct.normal);
        assert!((ct.point - 0.5 * (q + c - n * r)).norm() < 1e-9);
        let mut out2 = Vec::new();
        sphere_box(r, c, h, &p, sep - 1e-9, &mut out2);
        assert!(out2.is_empty());
    }
    let mut out = Vec::new();
    sphere_box(0.25, p.x + p.q * fixed[2], h, &p, 1.0, &mut out);
    assert_eq!(out[0].feature, 2 + 2 * 3 + 2 * 9);
    sphere_box(0.25, p.x + p.q * fixed[3], h, &p, 1.0, &mut out);
    assert_eq!(out[1].feature, 13 + 3);
}

#[test]
fn box_box_random_brute_force() {
    let mut rng = Lcg(12345);
    let (mut hits, mut empties) = (0, 0);
    for _ in 0..400 {
        let (ha, hb) = (rng.vec(0.1, 0.8), rng.vec(0.1, 0.8));
        let (pa, pb) = (P::new(rng.vec(-1.0, 1.0), rng.quat()), P::new(rng.vec(-1.0, 1.0), rng.quat()));
        let margin = 0.02;
        let out = bb(ha, &pa, hb, &pb, margin);
        let [sa, sb, se] = sat_corners(ha, &pa, hb, &pb);
        let sat = sa.max(sb).max(se);
        if sat > margin + 1e-9 {
            assert!(out.is_empty());
            empties += 1;
            continue;
        }
        if sat < -1e-6 {
            assert!(!out.is_empty(), "overlapping boxes (sat {sat}) gave no contact");
        }
        if out.is_empty() {
            continue;
        }
        hits += 1;
        assert!(out.len() <= 4 && features_unique(&out));
        let min = out.iter().fold(f64::INFINITY, |m, c| m.min(c.separation));
        if min < 0.0 {
            assert!(sat < 1e-9, "reported penetration {min} but SAT separation {sat}");
        }
        assert!(min >= sat - 0.08 * sat.abs() - 1e-4 * 0.8 - 1e-9, "min {min} sat {sat}");
        for c in &out {
            assert!(c.separation < margin && (c.normal.norm() - 1.0).abs() < 1e-12);
            // A penetrating point lies within |separation|/2 of both solids (speculative edge points may
            // come from clamped closest points, so they are not checked this way).
            let tol = 0.5 * c.separation.abs() + 1e-9;
            if c.separation <= 0.0 {
                assert!(box_dist(ha, &pa, c.point) <= tol && box_dist(hb, &pb, c.point) <= tol, "{c:?}");
            }
        }
    }
    assert!(hits > 50 && empties > 50, "{hits} {empties}");
}

fn bits(out: &[ContactPoint]) -> Vec<[u64; 8]> {
    out.iter()
        .map(|c| {
            let (p, n) = (c.point, c.normal);
            let b = |x: f64| x.to_bits();
            [b(p.x), b(p.y), b(p.z), b(n.x), b(n.y), b(n.z), b(c.separation), u64::from(c.feature)]
        })
        .collect()
}

fn bb_cached(ha: Vec3, pa: &Pose, hb: Vec3, pb: &Pose, margin: f64, cache: &mut SatCache) -> Vec<ContactPoint> {
    let mut out = Vec::new();
    box_box_cached(ha, pa, hb, pb, margin, 0.005, cache, &mut out);
    out
}

/// With nothing kept, the cached test is the whole test, bit for bit, and keeps an axis.
#[test]
fn sat_cache_first_call_is_the_whole_test() {
    let mut rng = Lcg(99);
    let mut kept = 0;
    for _ in 0..2000 {
        let (ha, hb) = (rng.vec(0.1, 0.8), rng.vec(0.1, 0.8));
        let (pa, pb) = (P::new(rng.vec(-1.0, 1.0), rng.quat()), P::new(rng.vec(-1.0, 1.0), rng.quat()));
        let mut cache = SatCache::default();
        let cached = bb_cached(ha, &pa, hb, &pb, 0.02, &mut cache);
        assert_eq!(bits(&cached), bits(&bb(ha, &pa, hb, &pb, 0.02)));
        assert!(!cache.hit);
        kept += usize::from(cache.axis != SatAxis::None);
    }
    assert!(kept > 1900, "{kept}");
}

/// A box resting on another, nudged a little each call: after the first call every call is
/// answered from the kept face, and gives the whole test's contacts bit for bit (the whole
/// test keeps choosing that face); a nudge deeper than the slop runs the whole test again.
#[test]
fn sat_cache_resting_pair_reuses_its_face() {
    let b = id();
    let mut cache = SatCache::default();
    let mut rng = Lcg(5);
    for step in 0..200 {
        let wobble = Vec3::new(rng.range(-0.01, 0.01), rng.range(-0.001, 0.001), rng.range(-0.01, 0.01));
        let a = P::new(Vec3::new(0.25, 1.0, 0.0) + wobble, rot(Vec3::y(), 20.0));
        let cached = bb_cached(H, &a, H, &b, 0.01, &mut cache);
        assert_eq!(cached.len(), 4);
        assert_eq!(bits(&cached), bits(&bb(H, &a, H, &b, 0.01)), "step {step}");
        assert_eq!(cache.hit, step > 0, "step {step}");
    }
    // 6 mm deeper than the depth the face was kept at: past the 5 mm slop.
    let kept = cache.separation;
    let a = P::new(Vec3::new(0.25, 1.0 + kept - 0.006, 0.0), UnitQuaternion::identity());
    let cached = bb_cached(H, &a, H, &b, 0.01, &mut cache);
    assert!(!cache.hit);
    assert_eq!(bits(&cached), bits(&bb(H, &a, H, &b, 0.01)));
}

/// Two boxes apart keep the axis that separates them, and stay apart on it without the whole
/// test while they stay apart; brought into contact, they get the whole test's contacts.
#[test]
fn sat_cache_separated_pair_stays_apart() {
    let b = id();
    let mut cache = SatCache::default();
    for k in 0..10 {
        let a = P::new(Vec3::new(1.1 - 0.002 * k as f64, 0.0, 0.0), rot(Vec3::y(), 0.5 * k as f64));
        assert!(bb_cached(H, &a, H, &b, 0.02, &mut cache).is_empty());
        assert_eq!(cache.hit, k > 0, "call {k}");
    }
    assert!(matches!(cache.axis, SatAxis::FaceA { .. } | SatAxis::FaceB { .. }));
    let a = P::new(Vec3::new(0.99, 0.0, 0.0), UnitQuaternion::identity());
    let cached = bb_cached(H, &a, H, &b, 0.02, &mut cache);
    assert!(!cache.hit && !cached.is_empty());
    assert_eq!(bits(&cached), bits(&bb(H, &a, H, &b, 0.02)));
}

/// Along random walks of two tumbling boxes (up to 5 mm and 0.5° a call on each axis), the
/// cached test never misses an overlap, never reports contacts for boxes apart by the margin,
/// and every penetrating point it reports, from the kept axis or not, lies within half its
/// depth of both boxes; most calls are answered from the kept axis.
#[test]
fn sat_cache_random_walks_agree_with_brute_force() {
    let mut rng = Lcg(2024);
    let (mut hits, mut calls) = (0, 0);
    for _ in 0..100 {
        let (ha, hb) = (rng.vec(0.2, 0.6), rng.vec(0.2, 0.6));
        let mut pa = P::new(rng.vec(-0.3, 0.3), rng.quat());
        let pb = P::new(Vec3::zeros(), rng.quat());
        let (v, w) = (rng.vec(-0.003, 0.003), rng.vec(-0.005, 0.005));
        let mut cache = SatCache::default();
        for _ in 0..60 {
            pa.x += v;
            pa.q = UnitQuaternion::from_scaled_axis(w) * pa.q;
            let margin = 0.02;
            let out = bb_cached(ha, &pa, hb, &pb, margin, &mut cache);
            calls += 1;
            hits += usize::from(cache.hit);
            let [sa, sb, se] = sat_corners(ha, &pa, hb, &pb);
            let sat = sa.max(sb).max(se);
            if sat > margin + 1e-9 {
                assert!(out.is_empty(), "apart by {sat} but {} contacts", out.len());
            }
            if sat < -1e-6 {
                assert!(!out.is_empty(), "overlapping boxes (sat {sat}) gave no contact");
            }
            assert!(out.len() <= 4 && features_unique(&out));
            for c in out.iter().filter(|c| c.separation <= 0.0) {
                let tol = 0.5 * c.separation.abs() + 1e-9;
                assert!(box_dist(ha, &pa, c.point) <= tol && box_dist(hb, &pb, c.point) <= tol, "{c:?}");
            }
        }
    }
    assert!(hits * 2 > calls, "{hits} of {calls}");
}
