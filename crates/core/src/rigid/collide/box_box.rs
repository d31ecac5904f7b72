//! Box–box contacts (steps 1–4 of [`super`]'s algorithm): the separating-axis test with its
//! biased choice of axis, the face case (the incident face clipped against the reference face's
//! side planes, reduced to at most four points) and the edge case.

use super::ContactPoint;
use super::Pose;
use crate::Vec3;

const EDGE_PARALLEL_TOL: f64 = 1e-6;
const FACE_B_REL: f64 = 0.02;
const FACE_B_ABS: f64 = 1e-5;
const EDGE_REL: f64 = 0.05;
const EDGE_ABS: f64 = 1e-4;
const CLIP_TOL: f64 = 1e-9;
const DEPTH_TIE_TOL: f64 = 1e-7;
const FEATURE_FACE: u32 = 1 << 20;
pub(super) const FEATURE_EDGE: u32 = 2 << 20;
const CAP: usize = 8;

/// Oriented box in world coordinates.
#[derive(Clone, Copy)]
struct Obb {
    c: Vec3,
    ax: [Vec3; 3],
    h: [f64; 3],
}

impl Obb {
    fn new(half: Vec3, pose: &Pose) -> Self {
        let m = pose.q.to_rotation_matrix();
        let m = m.matrix();
        let ax = [m.column(0).into_owned(), m.column(1).into_owned(), m.column(2).into_owned()];
        Obb { c: pose.x, ax, h: [half.x, half.y, half.z] }
    }
}

fn face_index(axis: usize, sign: f64) -> u32 {
    (2 * axis + usize::from(sign < 0.0)) as u32
}

/// Box A (half extents `half_a`, pose `a`) against box B (`half_b`, `b`); see the module documentation.
pub fn box_box(half_a: Vec3, a: &Pose, half_b: Vec3, b: &Pose, margin: f64, out: &mut Vec<ContactPoint>) {
    let (oa, ob) = (Obb::new(half_a, a), Obb::new(half_b, b));
    separating_axes(&oa, &ob, margin, out);
}

/// The axis a pair's last box–box test settled on, which [`SatCache`] keeps: a face of either box
/// (its outward normal `±axis` of that box, pointing towards the other box) or the pair of edges
/// along A's axis `a` and B's axis `b`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SatAxis {
    /// Nothing kept: the next call runs the whole test.
    #[default]
    None,
    /// A face of box A: normal `−a_axis` if `negative`, else `+a_axis`.
    FaceA {
        /// A's axis (0, 1 or 2).
        axis: u8,
        /// The face on the axis's negative side.
        negative: bool,
    },
    /// A face of box B: normal `−b_axis` if `negative`, else `+b_axis`.
    FaceB {
        /// B's axis (0, 1 or 2).
        axis: u8,
        /// The face on the axis's negative side.
        negative: bool,
    },
    /// The edges along A's axis `a` and B's axis `b`.
    Edge {
        /// A's axis (0, 1 or 2).
        a: u8,
        /// B's axis (0, 1 or 2).
        b: u8,
    },
}

/// What a pair of boxes keeps of its last separating-axis test from one call of
/// [`box_box_cached`] to the next, as Box3D keeps it (`b3SATCache`, `b3CollideHulls` in Box3D's
/// `convex_manifold.c`): the axis that separated the boxes or that their contacts were built
/// on, and the separation then (m: the separating axis's, or the deepest contact point's).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SatCache {
    /// The axis kept.
    pub axis: SatAxis,
    /// Its separation when it was found by the whole test (m).
    pub separation: f64,
    /// Whether the last call was answered from the kept axis (without the whole test).
    pub hit: bool,
}

/// [`box_box`] for a pair that keeps a [`SatCache`] from call to call, after Box3D's
/// `b3CollideHulls`. With a face kept, the other box's deepest corner below that face's plane
/// is found first: at least `margin` above it, the boxes are apart (that face separates them)
/// and nothing is emitted; otherwise the contacts are built on that face (the face case), and
/// kept if their deepest separation is within `slop` (m) of the kept one. With an edge pair
/// kept, its axis's separation likewise says the boxes are apart, or the edge case's point is
/// kept if the closest points lie within both edges and its separation within `slop` of the
/// kept one. Any other case runs the whole test of [`box_box`], whose outcome (the separating
/// axis, or the axis the contacts were built on) is kept. So a resting pair skips the
/// separating-axis test, and its contacts are the whole test's as long as that test would
/// choose the same axis; the kept axis's separation is not updated on a hit, so a pair that
/// drifts by `slop` runs the whole test again.
#[allow(clippy::too_many_arguments)]
pub fn box_box_cached(
    half_a: Vec3,
    a: &Pose,
    half_b: Vec3,
    b: &Pose,
    margin: f64,
    slop: f64,
    cache: &mut SatCache,
    out: &mut Vec<ContactPoint>,
) {
    let (oa, ob) = (Obb::new(half_a, a), Obb::new(half_b, b));
    let start = out.len();
    cache.hit = false;
    match cache.axis {
        SatAxis::None => {}
        SatAxis::FaceA { axis, negative } | SatAxis::FaceB { axis, negative } => {
            let (r, inc, ref_is_b) =
                if matches!(cache.axis, SatAxis::FaceB { .. }) { (&ob, &oa, true) } else { (&oa, &ob, false) };
            let (i, sign) = (axis as usize, if negative { -1.0 } else { 1.0 });
            let n = r.ax[i] * sign;
            // The incident box's corner deepest along `−n`.
            let mut deepest = inc.c;
            for k in 0..3 {
                let along = if inc.ax[k].dot(&n) > 0.0 { -inc.h[k] } else { inc.h[k] };
                deepest += inc.ax[k] * along;
            }
            if n.dot(&(deepest - r.c)) - r.h[i] >= margin {
                cache.hit = true;
                return;
            }
            if let Some(min) = face_case(r, inc, i, sign, ref_is_b, margin, out) {
                if (cache.separation - min).abs() < slop {
                    cache.hit = true;
                    return;
                }
            }
            out.truncate(start);
        }
        SatAxis::Edge { a: i, b: j } => {
            let (i, j) = (i as usize, j as usize);
            let cross = oa.ax[i].cross(&ob.ax[j]);
            let len = cross.norm();
            if len >= EDGE_PARALLEL_TOL {
                let dist = (oa.c - ob.c).dot(&cross);
                let radius = |o: &Obb| (0..3).map(|k| o.h[k] * o.ax[k].dot(&cross).abs()).sum::<f64>();
                let separation = (dist.abs() - (radius(&oa) + radius(&ob))) / len;
                if separation >= margin {
                    cache.hit = true;
                    return;
                }
                let n = cross / len * if dist < 0.0 { -1.0 } else { 1.0 };
                if edge_case(&oa, &ob, i, j, n, separation, out) && (cache.separation - separation).abs() < slop {
                    cache.hit = true;
                    return;
                }
                out.truncate(start);
            }
        }
    }
    let (axis, separation) = separating_axes(&oa, &ob, margin, out);
    *cache = SatCache { axis, separation, hit: false };
}

/// The whole test of [`box_box`]: its contacts appended to `out`, and the axis to keep with its
/// separation (see [`SatCache`]): the first separating axis found, or the axis the contacts
/// were built on with the deepest point's separation; [`SatAxis::None`] if that gave no point.
fn separating_axes(oa: &Obb, ob: &Obb, margin: f64, out: &mut Vec<ContactPoint>) -> (SatAxis, f64) {
    let d = oa.c - ob.c;
    // The candidate axes through the products of the two boxes' axes, `r[i][j] = a_i·b_j`, and
    // the centres' offset along each box's axes: a face axis of A has radii `h_a[i]` and
    // `Σ_j h_b[j]·|r[i][j]|`; an edge axis `a_i × b_j` (length `√(1 − r[i][j]²)`) has offset
    // `r[i1][j]·(d·a_i2) − r[i2][j]·(d·a_i1)` and radii `h_a[i1]·|r[i2][j]| + h_a[i2]·|r[i1][j]|`
    // and `h_b[j1]·|r[i][j2]| + h_b[j2]·|r[i][j1]|` (`i1, i2` and `j1, j2` the next two axes in
    // cyclic order).
    let mut r = [[0.0; 3]; 3];
    let mut abs = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = oa.ax[i].dot(&ob.ax[j]);
            abs[i][j] = r[i][j].abs();
        }
    }
    let ta = [d.dot(&oa.ax[0]), d.dot(&oa.ax[1]), d.dot(&oa.ax[2])];
    let tb = [d.dot(&ob.ax[0]), d.dot(&ob.ax[1]), d.dot(&ob.ax[2])];
    // Candidate axes 0..3: faces of A, 3..6: faces of B, 6..15: edge pairs (i, j) = ((k - 6) / 3, (k - 6) % 3).
    // Each axis's separation is computed on its own, the faces' first (no square roots), so
    // that the nine edge axes' roots and quotients run side by side; any separation of at
    // least `margin` means no contact.
    let mut dist = [0.0; 15];
    let mut sep = [0.0; 15];
    for k in 0..3 {
        let rb = ob.h[0] * abs[k][0] + ob.h[1] * abs[k][1] + ob.h[2] * abs[k][2];
        (dist[k], sep[k]) = (ta[k], ta[k].abs() - (oa.h[k] + rb));
        let ra = oa.h[0] * abs[0][k] + oa.h[1] * abs[1][k] + oa.h[2] * abs[2][k];
        (dist[3 + k], sep[3 + k]) = (tb[k], tb[k].abs() - (ra + ob.h[k]));
    }
    // (A face axis `k` of A or B, its normal towards the other box: `−sign(dist)·axis` for A,
    // `sign(dist)·axis` for B, as the face case takes them below.)
    let face = |k: usize, dist: f64| {
        if k < 3 {
            SatAxis::FaceA { axis: k as u8, negative: dist >= 0.0 }
        } else {
            SatAxis::FaceB { axis: (k - 3) as u8, negative: dist < 0.0 }
        }
    };
    if let Some(k) = sep[..6].iter().position(|&s| s >= margin) {
        return (face(k, dist[k]), sep[k]);
    }
    for (e, (d, s)) in dist[6..].iter_mut().zip(sep[6..].iter_mut()).enumerate() {
        let (i, j) = (e / 3, e % 3);
        let len = (1.0 - r[i][j] * r[i][j]).max(0.0).sqrt();
        let (i1, i2, j1, j2) = ((i + 1) % 3, (i + 2) % 3, (j + 1) % 3, (j + 2) % 3);
        *d = r[i1][j] * ta[i2] - r[i2][j] * ta[i1];
        let ra = oa.h[i1] * abs[i2][j] + oa.h[i2] * abs[i1][j];
        let rb = ob.h[j1] * abs[i][j2] + ob.h[j2] * abs[i][j1];
        // (A near-parallel pair spans no axis: it can neither separate nor be chosen.)
        *s = if len < EDGE_PARALLEL_TOL { f64::NEG_INFINITY } else { (d.abs() - (ra + rb)) / len };
    }
    let edge = |k: usize| SatAxis::Edge { a: ((k - 6) / 3) as u8, b: ((k - 6) % 3) as u8 };
    if let Some(e) = sep[6..].iter().position(|&s| s >= margin) {
        return (edge(6 + e), sep[6 + e]);
    }
    // best[g] = (separation, sign of the axis from B to A, axis id) of the best axis in group g
    // (A faces, B faces, edges), the first of equals.
    let mut best = [(f64::NEG_INFINITY, 1.0, 0usize); 3];
    for k in 0..15 {
        let g = k.min(6) / 3;
        if sep[k] > best[g].0 {
            best[g] = (sep[k], if dist[k] < 0.0 { -1.0 } else { 1.0 }, k);
        }
    }
    let size = (oa.h.iter().sum::<f64>() + ob.h.iter().sum::<f64>()) / 6.0;
    let clearly_better = |cand: f64, cur: f64, rel: f64, abs: f64| cand > cur + rel * cur.abs() + abs * size;
    let use_b = clearly_better(best[1].0, best[0].0, FACE_B_REL, FACE_B_ABS);
    let (s, sign, k) = best[usize::from(use_b)];
    let deepest = if clearly_better(best[2].0, s, EDGE_REL, EDGE_ABS) {
        let (s, sign, k) = best[2];
        let (i, j) = ((k - 6) / 3, (k - 6) % 3);
        edge_case(oa, ob, i, j, oa.ax[i].cross(&ob.ax[j]).normalize() * sign, s, out);
        return (edge(k), s);
    } else if use_b {
        // (The normal from B to A is B's face normal `sign·b_k`: that face is the reference.)
        face_case(ob, oa, k - 3, sign, true, margin, out)
    } else {
        face_case(oa, ob, k, -sign, false, margin, out)
    };
    match deepest {
        Some(min) => (face(k, sign), min),
        None => (SatAxis::None, 0.0),
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

/// The edge case's one point; whether the closest points of the two edges' lines lie within
/// both edges (else the point is the clamped one).
fn edge_case(oa: &Obb, ob: &Obb, i: usize, j: usize, n: Vec3, separation: f64, out: &mut Vec<ContactPoint>) -> bool {
    let (pa, ea) = extreme_edge(oa, i, &-n);
    let (pb, eb) = extreme_edge(ob, j, &n);
    let (da, db, la, lb) = (oa.ax[i], ob.ax[j], oa.h[i], ob.h[j]);
    let r = pa - pb;
    let (bd, c, f) = (da.dot(&db), da.dot(&r), db.dot(&r));
    let denom = 1.0 - bd * bd;
    let free = if denom > 1e-12 { (bd * f - c) / denom } else { 0.0 };
    let mut s = free.clamp(-la, la);
    let mut t = bd * s + f;
    let within = s == free && t.abs() <= lb;
    if t.abs() > lb {
        t = t.clamp(-lb, lb);
        s = (bd * t - c).clamp(-la, la);
    }
    let point = ((pa + da * s) + (pb + db * t)) * 0.5;
    out.push(ContactPoint { point, normal: n, separation, feature: FEATURE_EDGE | ea << 4 | eb });
    within
}

/// A clipped incident face: a quad clipped by four side planes, each of which adds at most one
/// vertex (it cuts a convex polygon along one line), so at most eight vertices, with the label of
/// each vertex and of the edge leaving it.
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
}

/// Label of the point where the polygon edge labelled `e` crosses side plane `plane`.
fn crossing_label(e: u8, plane: u8) -> u8 {
    (0x10 << u8::from(e >= 4)) | (e & 3) << 2 | plane // e < 4: incident edge, else side plane e - 4
}

/// Sutherland–Hodgman step: keep the part of `src` whose vertices' distances beyond the side
/// plane `plane` are `dist`, written over `dst`. Vertices within `tol` outside the plane count as
/// lying on it (kept as they are, no crossing point created), so that rounding noise on
/// coincident edges does not create spurious points or flip feature labels.
fn clip(src: &Poly, dist: &[f64; CAP], tol: f64, plane: u8, dst: &mut Poly) {
    let n = src.n;
    let mut m = 0;
    let mut push = |p: Vec3, vl: u8, el: u8| {
        // (Never full: see `Poly`; the guard only keeps a bad input from panicking.)
        if m < CAP {
            (dst.p[m], dst.vl[m], dst.el[m]) = (p, vl, el);
            m += 1;
        }
    };
    for k in 0..n {
        let k2 = if k + 1 == n { 0 } else { k + 1 };
        let (da, db, e) = (dist[k], dist[k2], src.el[k]);
        if da <= tol {
            if db <= tol {
                push(src.p[k], src.vl[k], e);
            } else if da >= 0.0 {
                push(src.p[k], src.vl[k], 4 + plane); // the vertex lies on the plane: it is the exit point
            } else {
                let (a, b) = (src.p[k], src.p[k2]);
                push(a, src.vl[k], e);
                push(a + (b - a) * (da / (da - db)), crossing_label(e, plane), 4 + plane);
            }
        } else if db < 0.0 {
            let (a, b) = (src.p[k], src.p[k2]);
            push(a + (b - a) * (da / (da - db)), crossing_label(e, plane), e);
        }
    }
    dst.n = m;
}

/// The face case's points, at most four; the deepest one's separation, or `None` if none lies
/// below `margin`.
fn face_case(
    r: &Obb,
    inc: &Obb,
    i: usize,
    sign: f64,
    ref_is_b: bool,
    margin: f64,
    out: &mut Vec<ContactPoint>,
) -> Option<f64> {
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
    // The incident face, clipped by each side plane in turn from one polygon into the other:
    // planes 0 and 1 are `±r.ax[j]·(x − r.c) <= r.h[j]`, planes 2 and 3 the same along `kk`.
    let mut polys = [Poly::new(), Poly::new()];
    for (m, (su, sv)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)].into_iter().enumerate() {
        (polys[0].p[m], polys[0].vl[m], polys[0].el[m]) = (fc + eu * su + ev * sv, m as u8, m as u8);
    }
    polys[0].n = 4;
    let (j, kk) = ((i + 1) % 3, (i + 2) % 3);
    let tol = CLIP_TOL * (r.h[j] + r.h[kk]);
    // `cur` is the polygon holding the face so far. A plane that every vertex lies within (in a
    // resting stack, three of the four) would copy the polygon as it is, so it is skipped; and
    // each vertex's coordinate along a side axis serves both of that axis's planes while the
    // polygon is unchanged (the distance beyond the negative plane, `−u − h`, is bit for bit
    // `(−a)·(x − c) − h`).
    let mut cur = 0;
    for (pair, axis) in [j, kk].into_iter().enumerate() {
        let (ax, lim) = (r.ax[axis], r.h[axis]);
        let mut along = [0.0; CAP];
        let mut fresh = false;
        for negative in [false, true] {
            let plane = (2 * pair + usize::from(negative)) as u8;
            let src = &polys[cur];
            if !fresh {
                for (a, p) in along.iter_mut().zip(&src.p[..src.n]) {
                    *a = ax.dot(&(p - r.c));
                }
                fresh = true;
            }
            let mut dist = [0.0; CAP];
            let mut within = true;
            for (d, &a) in dist.iter_mut().zip(&along[..src.n]) {
                *d = if negative { -a } else { a } - lim;
                within &= *d <= tol;
            }
            if within {
                continue;
            }
            let [first, second] = &mut polys;
            let (src, dst) = if cur == 0 { (&*first, second) } else { (&*second, first) };
            clip(src, &dist, tol, plane, dst);
            if dst.n == 0 {
                return None;
            }
            cur ^= 1;
            fresh = false;
        }
    }
    let poly = &polys[cur];
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
    let mut deepest = None;
    for &s in &sel[..count] {
        out.push(ContactPoint { point: pts[s], normal, separation: seps[s], feature: base | u32::from(labs[s]) });
        deepest = Some(deepest.map_or(seps[s], |d: f64| d.min(seps[s])));
    }
    deepest
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
