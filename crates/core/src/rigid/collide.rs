//! Narrow-phase contact generation for spheres, half-spaces and oriented boxes.
//!
//! # Conventions
//! * Shape A is the first shape named in each function, shape B the second.
//! * [`ContactPoint::normal`] is a unit vector pointing from B towards A: moving A along `+normal`
//!   (and B along `-normal`) increases the separation.
//! * [`ContactPoint::separation`] is a signed distance measured along the normal: negative when the
//!   shapes interpenetrate, positive for a speculative gap. A point is only emitted when
//!   `separation < margin` (`margin >= 0` is a speculative distance).
//! * [`ContactPoint::point`] is the world point midway between the two surfaces.
//! * Every function appends to `out` and never clears it; nothing besides those pushes allocates.
//! * A box is described by its half extents and a [`Pose`]; its centre is `pose.x`, its local axes are
//!   `pose.q * e_x`, `pose.q * e_y`, `pose.q * e_z`. Box faces are numbered `2 * axis + (negative side)`,
//!   corners by `bit k set <=> + side along axis k`, edges by `4 * axis + sign bits of the other two axes`
//!   (taken in cyclic order `axis + 1`, `axis + 2`).
//! * Results are deterministic: identical inputs give bit-identical outputs (no hashing, no randomness,
//!   fixed iteration orders, ties resolved towards the lowest index).
//!
//! # Box–box algorithm
//! 1. Separating-axis test on the 15 candidate axes (3 face normals of each box and the 9 pairwise edge
//!    cross products), after Gottschalk, Lin & Manocha, "OBBTree" (SIGGRAPH 1996) and Ericson,
//!    "Real-Time Collision Detection" (2005), §4.4. Cross products of nearly parallel edges are skipped
//!    (their direction is numerically meaningless and the face axes already cover that case). If any
//!    axis separates the boxes by at least `margin`, nothing is emitted.
//! 2. The axis with the largest separation is chosen with hysteresis-like biases so resting stacks do not
//!    flicker: B's best face beats A's only if it is better by 2 % (relative) plus `1e-5 * size`, and an
//!    edge axis beats the best face only if better by 5 % plus `1e-4 * size` (`size` = mean half extent).
//! 3. Face case: the reference face is the face of the axis owner facing the other box; the incident face
//!    is the face of the other box whose normal is most anti-parallel to it. The incident quad is clipped
//!    against the four side planes of the reference face (Sutherland–Hodgman polygon clipping, Sutherland &
//!    Hodgman, CACM 1974; Ericson §8.3.4). Points with separation (height above the reference plane)
//!    below `margin` are kept, and at most 4 are retained by this rule: (i) the deepest point (the first
//!    in polygon order within `1e-7 * size` of the minimum), (ii) the point farthest from it, (iii) the
//!    point maximising the triangle area with the first two, (iv) the point adding the most area outside
//!    that triangle (dropped if it adds none).
//! 4. Edge case: closest points between the two extreme edges (Ericson §5.1.9); a single point midway,
//!    with the separation of the chosen axis.
//!
//! # Feature ids
//! * Sphere/plane pairs: `0`. Box–plane: corner index `0..8`. Sphere–box: Voronoi region of the box,
//!   `sum_k code_k * 3^k` with `code_k` = 0 (below −h), 1 (inside), 2 (above +h); a centre inside the
//!   box uses the region code of the face it is pushed through.
//! * Box–box face case: `1 << 20 | ref_is_b << 16 | ref_face << 12 | inc_face << 8 | label`, where the
//!   6-bit label is `v` for incident-quad vertex `v`, `0x10 | e << 2 | p` for the crossing of incident edge
//!   `e` with reference side plane `p`, `0x20 | p1 << 2 | p2` for a reference-face corner (two side planes).
//! * Box–box edge case: `2 << 20 | edge_a << 4 | edge_b`.
//!
//! # Limitations
//! * With the face bias a face contact may be chosen although an edge axis is marginally better; all
//!   clipped points may then lie above `margin`, in which case nothing is emitted for that call.
//! * Swapping A and B gives the mirrored result only when the chosen axis is not within the A/B face bias.

use crate::Vec3;
use nalgebra::UnitQuaternion;

/// Position and orientation of a rigid body: world = x + q * local.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// World position of the body origin (the box centre for boxes) (m).
    pub x: Vec3,
    /// Orientation, rotating body-local vectors into the world frame.
    pub q: UnitQuaternion<f64>,
}

impl Pose {
    /// Builds a pose from a position and an orientation.
    pub fn new(x: Vec3, q: UnitQuaternion<f64>) -> Self {
        Self { x, q }
    }
}

/// One contact point between shape A and shape B.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// World point midway between the two surfaces (m).
    pub point: Vec3,
    /// Unit normal pointing from B to A: pushing A along +normal (and B along −normal) separates them.
    pub normal: Vec3,
    /// Signed distance along the normal (m): negative when penetrating, positive for a speculative gap.
    pub separation: f64,
    /// Feature id, stable while the same features touch (same pair of faces/edges/vertices), so a solver
    /// can match warm-start impulses across frames. Unique within one call's output.
    pub feature: u32,
}

const EDGE_PARALLEL_TOL: f64 = 1e-6;
const FACE_B_REL: f64 = 0.02;
const FACE_B_ABS: f64 = 1e-5;
const EDGE_REL: f64 = 0.05;
const EDGE_ABS: f64 = 1e-4;
const CLIP_TOL: f64 = 1e-9;
const DEPTH_TIE_TOL: f64 = 1e-7;
const FEATURE_FACE: u32 = 1 << 20;
const FEATURE_EDGE: u32 = 2 << 20;
const CAP: usize = 16;

/// Sphere A (radius `ra`, centre `ca`) against sphere B (radius `rb`, centre `cb`).
/// Coincident centres use the normal `+y`. Feature id 0.
pub fn sphere_sphere(ra: f64, ca: Vec3, rb: f64, cb: Vec3, margin: f64, out: &mut Vec<ContactPoint>) {
    let d = ca - cb;
    let dist = d.norm();
    let separation = dist - (ra + rb);
    if separation >= margin {
        return;
    }
    let normal = if dist > 1e-12 * (ra + rb) { d / dist } else { Vec3::y() };
    let point = ((ca - normal * ra) + (cb + normal * rb)) * 0.5;
    out.push(ContactPoint { point, normal, separation, feature: 0 });
}

/// Sphere A (radius `r`, centre `c`) against the half-space B `{p : n·p <= offset}` whose boundary is the
/// plane `n·p = offset` (`plane_normal` unit, allowed side `n·p >= offset`). Feature id 0.
pub fn sphere_plane(r: f64, c: Vec3, plane_normal: Vec3, offset: f64, margin: f64, out: &mut Vec<ContactPoint>) {
    let h = plane_normal.dot(&c) - offset;
    let separation = h - r;
    if separation < margin {
        let point = c - plane_normal * (0.5 * (r + h));
        out.push(ContactPoint { point, normal: plane_normal, separation, feature: 0 });
    }
}

/// Box A (half extents `half`, `pose`) against the half-space B below the plane `n·p = offset`
/// (see [`sphere_plane`]). Emits every corner with separation < `margin`; feature = corner index `0..8`.
pub fn box_plane(half: Vec3, pose: &Pose, plane_normal: Vec3, offset: f64, margin: f64, out: &mut Vec<ContactPoint>) {
    for i in 0..8u32 {
        let sgn = |bit: u32, h: f64| if i & bit != 0 { h } else { -h };
        let local = Vec3::new(sgn(1, half.x), sgn(2, half.y), sgn(4, half.z));
        let w = pose.x + pose.q * local;
        let separation = plane_normal.dot(&w) - offset;
        if separation < margin {
            let point = w - plane_normal * (0.5 * separation);
            out.push(ContactPoint { point, normal: plane_normal, separation, feature: i });
        }
    }
}

/// Sphere A (radius `r`, centre `c`) against box B (half extents `half`, `pose`). A centre inside the box
/// is pushed out through the nearest face (ties: lowest axis, `+` side first). Feature = Voronoi region.
pub fn sphere_box(r: f64, c: Vec3, half: Vec3, pose: &Pose, margin: f64, out: &mut Vec<ContactPoint>) {
    let l = pose.q.inverse_transform_vector(&(c - pose.x));
    let mut p = Vec3::new(l.x.clamp(-half.x, half.x), l.y.clamp(-half.y, half.y), l.z.clamp(-half.z, half.z));
    let code = |k: usize| u32::from(l[k] >= -half[k]) + u32::from(l[k] > half[k]);
    let mut region = code(0) + 3 * code(1) + 9 * code(2);
    let dl = l - p;
    let dist = dl.norm();
    let (n_local, separation) = if dist > 1e-12 * (half.x + half.y + half.z) {
        (dl / dist, dist - r)
    } else {
        let mut best = (f64::INFINITY, 0usize, 1.0);
        for k in 0..3 {
            for s in [1.0, -1.0] {
                let depth = half[k] - s * l[k];
                if depth < best.0 {
                    best = (depth, k, s);
                }
            }
        }
        let (depth, k, s) = best;
        let pow3 = [1u32, 3, 9][k];
        region = if s > 0.0 { 13 + pow3 } else { 13 - pow3 };
        p = l;
        p[k] = s * half[k];
        let mut n = Vec3::zeros();
        n[k] = s;
        (n, -depth - r)
    };
    if separation >= margin {
        return;
    }
    let normal = pose.q * n_local;
    let on_box = pose.x + pose.q * p;
    let point = (on_box + (c - normal * r)) * 0.5;
    out.push(ContactPoint { point, normal, separation, feature: region });
}

/// Oriented box in world coordinates.
#[derive(Clone, Copy)]
struct Obb {
    c: Vec3,
    ax: [Vec3; 3],
    h: [f64; 3],
}

impl Obb {
    fn new(half: Vec3, pose: &Pose) -> Self {
        let ax = [pose.q * Vec3::x(), pose.q * Vec3::y(), pose.q * Vec3::z()];
        Obb { c: pose.x, ax, h: [half.x, half.y, half.z] }
    }
    /// Half length of the projection of the box onto the unit direction `l`.
    fn radius(&self, l: &Vec3) -> f64 {
        self.h[0] * self.ax[0].dot(l).abs() + self.h[1] * self.ax[1].dot(l).abs() + self.h[2] * self.ax[2].dot(l).abs()
    }
}

fn face_index(axis: usize, sign: f64) -> u32 {
    (2 * axis + usize::from(sign < 0.0)) as u32
}

/// Box A (half extents `half_a`, pose `a`) against box B (`half_b`, `b`); see the module documentation.
pub fn box_box(half_a: Vec3, a: &Pose, half_b: Vec3, b: &Pose, margin: f64, out: &mut Vec<ContactPoint>) {
    let (oa, ob) = (Obb::new(half_a, a), Obb::new(half_b, b));
    let d = oa.c - ob.c;
    // Separation along unit axis `l` and the axis oriented from B to A.
    let test = |l: Vec3| {
        let dist = d.dot(&l);
        let sep = dist.abs() - (oa.radius(&l) + ob.radius(&l));
        (sep, if dist < 0.0 { -l } else { l })
    };
    // Candidate axes 0..3: faces of A, 3..6: faces of B, 6..15: edge pairs (i, j) = ((k - 6) / 3, (k - 6) % 3).
    // best[g] = (separation, normal from B to A, axis id) of the best axis in group g (A faces, B faces, edges).
    let mut best = [(f64::NEG_INFINITY, Vec3::zeros(), 0usize); 3];
    for k in 0..15 {
        let l = match k {
            0..3 => oa.ax[k],
            3..6 => ob.ax[k - 3],
            _ => {
                let l = oa.ax[(k - 6) / 3].cross(&ob.ax[(k - 6) % 3]);
                let len = l.norm();
                if len < EDGE_PARALLEL_TOL {
                    continue;
                }
                l / len
            }
        };
        let (s, n) = test(l);
        if s >= margin {
            return;
        }
        let g = k.min(6) / 3;
        if s > best[g].0 {
            best[g] = (s, n, k);
        }
    }
    let size = (oa.h.iter().sum::<f64>() + ob.h.iter().sum::<f64>()) / 6.0;
    let clearly_better = |cand: f64, cur: f64, rel: f64, abs: f64| cand > cur + rel * cur.abs() + abs * size;
    let use_b = clearly_better(best[1].0, best[0].0, FACE_B_REL, FACE_B_ABS);
    let (s, n, k) = best[usize::from(use_b)];
    if clearly_better(best[2].0, s, EDGE_REL, EDGE_ABS) {
        let (s, n, k) = best[2];
        edge_case(&oa, &ob, (k - 6) / 3, (k - 6) % 3, n, s, out);
    } else if use_b {
        let sign = if ob.ax[k - 3].dot(&n) < 0.0 { -1.0 } else { 1.0 };
        face_case(&ob, &oa, k - 3, sign, true, margin, out);
    } else {
        let sign = if oa.ax[k].dot(&n) > 0.0 { -1.0 } else { 1.0 };
        face_case(&oa, &ob, k, sign, false, margin, out);
    }
}

/// Edge of `o` parallel to axis `i`, extreme along `dir`: (centre, edge index).
fn extreme_edge(o: &Obb, i: usize, dir: &Vec3) -> (Vec3, u32) {
    let (mut p, mut bits) = (o.c, 0u32);
    for (bit, k) in [(i + 1) % 3, (i + 2) % 3].into_iter().enumerate() {
        if o.ax[k].dot(dir) < 0.0 {
            p -= o.ax[k] * o.h[k];
            bits |= 1 << bit;
        } else {
            p += o.ax[k] * o.h[k];
        }
    }
    (p, 4 * i as u32 + bits)
}

fn edge_case(oa: &Obb, ob: &Obb, i: usize, j: usize, n: Vec3, separation: f64, out: &mut Vec<ContactPoint>) {
    let (pa, ea) = extreme_edge(oa, i, &-n);
    let (pb, eb) = extreme_edge(ob, j, &n);
    let (da, db, la, lb) = (oa.ax[i], ob.ax[j], oa.h[i], ob.h[j]);
    let r = pa - pb;
    let (bd, c, f) = (da.dot(&db), da.dot(&r), db.dot(&r));
    let denom = 1.0 - bd * bd;
    let mut s = if denom > 1e-12 { ((bd * f - c) / denom).clamp(-la, la) } else { 0.0 };
    let mut t = bd * s + f;
    if t.abs() > lb {
        t = t.clamp(-lb, lb);
        s = (bd * t - c).clamp(-la, la);
    }
    let point = ((pa + da * s) + (pb + db * t)) * 0.5;
    out.push(ContactPoint { point, normal: n, separation, feature: FEATURE_EDGE | ea << 4 | eb });
}

/// Fixed-capacity polygon with vertex labels and labels of the edge leaving each vertex.
#[derive(Clone, Copy)]
struct Poly {
    n: usize,
    p: [Vec3; CAP],
    vl: [u8; CAP],
    el: [u8; CAP],
}

impl Poly {
    fn new() -> Self {
        Poly { n: 0, p: [Vec3::zeros(); CAP], vl: [0; CAP], el: [0; CAP] }
    }
    fn push(&mut self, p: Vec3, vl: u8, el: u8) {
        if self.n < CAP {
            self.p[self.n] = p;
            self.vl[self.n] = vl;
            self.el[self.n] = el;
            self.n += 1;
        }
    }
}

/// Label of the point where the polygon edge labelled `e` crosses side plane `plane`.
fn crossing_label(e: u8, plane: u8) -> u8 {
    (0x10 << u8::from(e >= 4)) | (e & 3) << 2 | plane // e < 4: incident edge, else side plane e - 4
}

/// Sutherland–Hodgman step: keep the part of `src` with `pn·(x − origin) <= lim`. Vertices within `tol`
/// outside the plane count as lying on it (kept as they are, no crossing point created), so that
/// rounding noise on coincident edges does not create spurious points or flip feature labels.
fn clip(src: &Poly, pn: &Vec3, lim: f64, tol: f64, origin: &Vec3, plane: u8) -> Poly {
    let mut dst = Poly::new();
    for k in 0..src.n {
        let k2 = if k + 1 == src.n { 0 } else { k + 1 };
        let (a, b, e) = (src.p[k], src.p[k2], src.el[k]);
        let da = pn.dot(&(a - origin)) - lim;
        let db = pn.dot(&(b - origin)) - lim;
        if da <= tol {
            if db <= tol {
                dst.push(a, src.vl[k], e);
            } else if da >= 0.0 {
                dst.push(a, src.vl[k], 4 + plane); // `a` lies on the plane: it is the exit point
            } else {
                dst.push(a, src.vl[k], e);
                dst.push(a + (b - a) * (da / (da - db)), crossing_label(e, plane), 4 + plane);
            }
        } else if db < 0.0 {
            dst.push(a + (b - a) * (da / (da - db)), crossing_label(e, plane), e);
        }
    }
    dst
}

fn face_case(r: &Obb, inc: &Obb, i: usize, sign: f64, ref_is_b: bool, margin: f64, out: &mut Vec<ContactPoint>) {
    let nref = r.ax[i] * sign; // outward normal of the reference face, towards the incident box
    let normal = if ref_is_b { nref } else { -nref };
    let (mut k, mut best) = (0usize, f64::NEG_INFINITY);
    for (m, ax) in inc.ax.iter().enumerate() {
        let v = ax.dot(&nref).abs();
        if v > best {
            (k, best) = (m, v);
        }
    }
    let s_inc = if inc.ax[k].dot(&nref) > 0.0 { -1.0 } else { 1.0 };
    let (u, v) = ((k + 1) % 3, (k + 2) % 3);
    let fc = inc.c + inc.ax[k] * (s_inc * inc.h[k]);
    let (eu, ev) = (inc.ax[u] * inc.h[u], inc.ax[v] * inc.h[v]);
    let mut poly = Poly::new();
    for (m, (su, sv)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)].into_iter().enumerate() {
        poly.push(fc + eu * su + ev * sv, m as u8, m as u8);
    }
    let (j, kk) = ((i + 1) % 3, (i + 2) % 3);
    let tol = CLIP_TOL * (r.h[j] + r.h[kk]);
    let planes = [(r.ax[j], r.h[j]), (-r.ax[j], r.h[j]), (r.ax[kk], r.h[kk]), (-r.ax[kk], r.h[kk])];
    for (p, (pn, ph)) in planes.iter().enumerate() {
        poly = clip(&poly, pn, *ph, tol, &r.c, p as u8);
        if poly.n == 0 {
            return;
        }
    }
    let (mut pts, mut seps, mut labs, mut m) = ([Vec3::zeros(); CAP], [0.0; CAP], [0u8; CAP], 0usize);
    for idx in 0..poly.n {
        let x = poly.p[idx];
        let sep = nref.dot(&(x - r.c)) - r.h[i];
        if sep < margin && !labs[..m].contains(&poly.vl[idx]) {
            (pts[m], seps[m], labs[m]) = (x - nref * (0.5 * sep), sep, poly.vl[idx]);
            m += 1;
        }
    }
    let base = FEATURE_FACE | u32::from(ref_is_b) << 16 | face_index(i, sign) << 12 | face_index(k, s_inc) << 8;
    let mut sel = [0usize; 4];
    let count = reduce(&pts[..m], &seps[..m], &nref, DEPTH_TIE_TOL * (r.h[0] + r.h[1] + r.h[2]), &mut sel);
    for &s in &sel[..count] {
        out.push(ContactPoint { point: pts[s], normal, separation: seps[s], feature: base | u32::from(labs[s]) });
    }
}

/// Index maximising `f` over `0..m` (`None` entries skipped; first index wins ties).
fn argmax(m: usize, f: impl Fn(usize) -> Option<f64>) -> (usize, f64) {
    let mut best = (usize::MAX, f64::NEG_INFINITY);
    for (k, v) in (0..m).filter_map(|k| f(k).map(|v| (k, v))) {
        if best.0 == usize::MAX || v > best.1 {
            best = (k, v);
        }
    }
    best
}

/// Selects at most 4 of the candidate points (rule in the module documentation); returns the count.
fn reduce(pts: &[Vec3], seps: &[f64], n: &Vec3, tie: f64, sel: &mut [usize; 4]) -> usize {
    let m = pts.len();
    if m <= 4 {
        for (k, s) in sel.iter_mut().enumerate().take(m) {
            *s = k;
        }
        return m;
    }
    let min = seps.iter().fold(f64::INFINITY, |acc, &s| acc.min(s));
    let i0 = seps.iter().position(|&s| s <= min + tie).unwrap_or(0);
    let p0 = pts[i0];
    let (i1, _) = argmax(m, |k| (k != i0).then(|| (pts[k] - p0).norm_squared()));
    let p1 = pts[i1];
    let area = |a: &Vec3, b: &Vec3, q: &Vec3| (b - a).cross(&(q - a)).dot(n);
    let (i2, _) = argmax(m, |k| (k != i0 && k != i1).then(|| area(&p0, &p1, &pts[k]).abs()));
    let p2 = pts[i2];
    let orient = if area(&p0, &p1, &p2) < 0.0 { -1.0 } else { 1.0 };
    let (i3, gain) = argmax(m, |k| {
        (k != i0 && k != i1 && k != i2).then(|| {
            let q = &pts[k];
            (-orient * area(&p0, &p1, q)).max(-orient * area(&p1, &p2, q)).max(-orient * area(&p2, &p0, q))
        })
    });
    *sel = [i0, i1, i2, i3];
    3 + usize::from(gain > 0.0)
}

#[cfg(test)]
mod tests {
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
        let sets = [
            (H, Vec3::new(0.3, 0.999, 0.0), rot(Vec3::y(), 30.0)),
            (H, Vec3::new(0.4, 0.999, -0.3), rot(Vec3::y(), 0.0)),
        ];
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
}
