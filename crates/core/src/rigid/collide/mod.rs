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
    // A box whose bounding sphere lies beyond the margin has no corner within it (the bound
    // widened far past rounding): none of the eight corners is tested. (Each of the 210-box
    // pyramid's boxes took the floor's eight corner tests every frame: 1.3 % of its frame.)
    let reach = half.norm();
    let centre = plane_normal.dot(&pose.x) - offset;
    if centre - reach > margin + 1e-9 * (1.0 + reach + offset.abs() + pose.x.norm()) {
        return;
    }
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

mod box_box;
#[cfg(test)]
mod tests;

pub use box_box::{box_box, box_box_cached, SatAxis, SatCache};
