//! Box bodies carried by a tetrahedron of particles (Jakobsen §5), and the vertex-face contacts
//! between them.
//!
//! A box of half extents `(a, b, c)` is simulated as the tetrahedron of four of its corners,
//! `(+,+,+)`, `(+,−,−)`, `(−,+,−)`, `(−,−,+)` (in units of the half extents), joined by six
//! sticks. Any point with box coordinates `s = (sx, sy, sz)` (−1 ≤ sᵢ ≤ 1 on the surface) is the
//! affine combination
//!
//! ```text
//! c₀ = (1 + sx + sy + sz)/4,   c₁ = (1 + sx − sy − sz)/4,
//! c₂ = (1 − sx + sy − sz)/4,   c₃ = (1 − sx − sy + sz)/4,     p = Σ cᵢ xᵢ
//! ```
//!
//! so the box's frame follows the particles: the centre is their mean and the axes are
//! `(x₀ + x₁ − x₂ − x₃)/4 = a·eₓ` and its two companions.
//!
//! Contacts: for each pair of boxes whose bounding spheres overlap (found by the uniform-grid
//! broadphase), the face of one box that faces the other's centre (largest centre offset in
//! units of the half extents) gives the normal `n`, and every corner `p` of the other box within
//! that face's extent and below it (or within a margin above) gives one row, with `q` its
//! projection on the face. Both are carried by their bodies with fixed weights for the step:
//!
//! ```text
//! C = n·(p − q) = n·(Σ cᴬᵢ xᴬᵢ − Σ cᴮᵢ xᴮᵢ) ≥ 0,     ∇xᴬᵢ C = cᴬᵢ n,   ∇xᴮᵢ C = −cᴮᵢ n
//! ```
//!
//! This is Jakobsen's §5 treatment of body-body collisions ("move p and q toward each other").
//!
//! Edge-edge contacts catch what corners miss (two boxes crossed edge on edge): for every pair
//! of non-parallel edges, one of each box, the closest points `p` (on `a`'s edge) and `q` (on
//! `b`'s) of the two lines give a contact when both lie inside their edges, away from the
//! corners by [`EDGE_END`] of the edge (corners are the vertex-face contacts' job), each lies
//! inside the other box, and the pair's axis is the separating axis of least overlap (less than
//! 95 % of every face axis's); of those, the deepest pair gives the one edge-edge contact of the
//! two boxes. The normal is `n = ±(dᴬ × dᴮ)/|dᴬ × dᴮ|`, oriented from `b`'s
//! centre towards `a`'s, and `C = n·(p − q)` as above, with `p` and `q` carried by their bodies
//! through the weights of their box coordinates.

use crate::Vec3;

/// A box body: its four particles and half extents.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxBody {
    /// The particles at the box corners `(+,+,+)`, `(+,−,−)`, `(−,+,−)`, `(−,−,+)`.
    pub particles: [usize; 4],
    /// Half extents (m).
    pub half: Vec3,
    /// Friction coefficient against other bodies.
    pub friction: f64,
}

/// The affine weights of the point with box coordinates `s`.
pub fn weights(s: &Vec3) -> [f64; 4] {
    [
        (1.0 + s.x + s.y + s.z) / 4.0,
        (1.0 + s.x - s.y - s.z) / 4.0,
        (1.0 - s.x + s.y - s.z) / 4.0,
        (1.0 - s.x - s.y + s.z) / 4.0,
    ]
}

/// How far (as a fraction of the half extent) a corner may overhang a face and still rest on it.
pub const LATERAL_SLACK: f64 = 0.05;

/// The eight corners in box coordinates.
pub const CORNERS: [[f64; 3]; 8] = [
    [-1.0, -1.0, -1.0],
    [-1.0, -1.0, 1.0],
    [-1.0, 1.0, -1.0],
    [-1.0, 1.0, 1.0],
    [1.0, -1.0, -1.0],
    [1.0, -1.0, 1.0],
    [1.0, 1.0, -1.0],
    [1.0, 1.0, 1.0],
];

impl BoxBody {
    /// Centre and unit axes (Gram-Schmidt on the particle-derived axes).
    pub fn frame(&self, x: &[Vec3]) -> (Vec3, [Vec3; 3]) {
        let [a, b, c, d] = self.particles.map(|i| x[i]);
        let centre = (a + b + c + d) / 4.0;
        let ex = (a + b - c - d).normalize();
        let ey0 = a + c - b - d;
        let ey = (ey0 - ex * ex.dot(&ey0)).normalize();
        (centre, [ex, ey, ex.cross(&ey)])
    }

    /// The orientation for output: the rotation whose columns are [`BoxBody::frame`]'s axes (the
    /// identity for the box as a scene builds it, axis-aligned). The tetrahedron may shear
    /// slightly while constraints are unconverged; Gram-Schmidt makes the axes orthonormal first.
    pub fn orientation(&self, x: &[Vec3]) -> nalgebra::UnitQuaternion<f64> {
        let (_, [ex, ey, ez]) = self.frame(x);
        let r = nalgebra::Rotation3::from_matrix_unchecked(nalgebra::Matrix3::from_columns(&[ex, ey, ez]));
        nalgebra::UnitQuaternion::from_rotation_matrix(&r)
    }

    /// The world position of the point with box coordinates `s`.
    pub fn point(&self, x: &[Vec3], s: &Vec3) -> Vec3 {
        let w = weights(s);
        (0..4).map(|k| x[self.particles[k]] * w[k]).sum()
    }

    /// Radius of the bounding sphere (m).
    pub fn radius(&self) -> f64 {
        self.half.norm()
    }
}

/// How far from either end (as a fraction of the edge) an edge-edge closest point must be.
pub const EDGE_END: f64 = 0.025;

/// The twelve edges as pairs of indices into [`CORNERS`] (they differ in one coordinate).
pub const EDGES: [(usize, usize); 12] =
    [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)];

/// One contact between two bodies: a corner of `a` against a face of `b`, or an edge of `a`
/// against an edge of `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxContact {
    /// The body whose corner it is.
    pub a: usize,
    /// The body whose face it is.
    pub b: usize,
    /// Which feature: `0–7` a corner of `a` (index into [`CORNERS`]) against a face of `b`;
    /// `8 + 12·i + j` edge `i` of `a` against edge `j` of `b` (indices into [`EDGES`]).
    pub feature: usize,
    /// Unit normal, pointing from `b` towards `a` (out of `b`'s face for corners).
    pub normal: Vec3,
    /// Weights of the point `p` (corner or edge point) over `a`'s particles.
    pub weights_a: [f64; 4],
    /// Weights of the point `q` (face or edge point) over `b`'s particles.
    pub weights_b: [f64; 4],
    /// `C = n·(p − q)`: negative when penetrating (m).
    pub c: f64,
}

/// Every vertex-face and edge-edge contact with `C < margin` between the bodies, in a
/// deterministic order.
pub fn contacts(bodies: &[BoxBody], x: &[Vec3], margin: f64) -> Vec<BoxContact> {
    let centres: Vec<Vec3> = bodies.iter().map(|b| b.frame(x).0).collect();
    let radii: Vec<f64> = bodies.iter().map(BoxBody::radius).collect();
    let mut out = Vec::new();
    for (i, j) in crate::broadphase::pairs(&centres, &radii, margin, |_, _| false) {
        for (a, b) in [(i, j), (j, i)] {
            let (cb, axes) = bodies[b].frame(x);
            let half = bodies[b].half;
            let to_local = |p: Vec3| Vec3::new(axes[0].dot(&(p - cb)), axes[1].dot(&(p - cb)), axes[2].dot(&(p - cb)));
            // The face of b that faces a: the axis along which a's centre lies furthest out in
            // units of b's half extents. One face per pair keeps the normals of a resting box
            // consistent (a corner exactly on a side plane would otherwise pick that side).
            let lc = to_local(centres[a]);
            let axis =
                (0..3).max_by(|&u, &v| (lc[u].abs() / half[u]).total_cmp(&(lc[v].abs() / half[v]))).expect("axes");
            let sign = if lc[axis] >= 0.0 { 1.0 } else { -1.0 };
            for (k, s) in CORNERS.iter().enumerate() {
                let s = Vec3::new(s[0], s[1], s[2]);
                let local = to_local(bodies[a].point(x, &s));
                // A corner counts while it overhangs the face by at most `LATERAL_SLACK` of the
                // half extent (its face point is clamped to the edge): aligned boxes put corners
                // exactly on the face boundary, where rounding alone would drop half of them.
                let lateral_ok =
                    (0..3).filter(|&u| u != axis).all(|u| local[u].abs() <= half[u] * (1.0 + LATERAL_SLACK) + margin);
                let c = sign * local[axis] - half[axis];
                if !lateral_ok || c >= margin || sign * local[axis] < -half[axis] {
                    continue;
                }
                let mut q_local = local;
                q_local[axis] = sign * half[axis];
                for u in (0..3).filter(|&u| u != axis) {
                    q_local[u] = q_local[u].clamp(-half[u], half[u]);
                }
                let s_q = Vec3::new(q_local.x / half.x, q_local.y / half.y, q_local.z / half.z);
                out.push(BoxContact {
                    a,
                    b,
                    feature: k,
                    normal: axes[axis] * sign,
                    weights_a: weights(&s),
                    weights_b: weights(&s_q),
                    c,
                });
            }
        }
        edge_contacts(bodies, x, i, j, margin, &mut out);
    }
    out
}

/// Box coordinates of corner `k`.
fn corner(k: usize) -> Vec3 {
    Vec3::new(CORNERS[k][0], CORNERS[k][1], CORNERS[k][2])
}

/// Box coordinates of the point a fraction `t` along edge `e`.
fn edge_point(e: usize, t: f64) -> Vec3 {
    let (p, q) = (CORNERS[EDGES[e].0], CORNERS[EDGES[e].1]);
    Vec3::new(p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2]))
}

/// The edge-edge contacts between bodies `i` and `j` (see the module notes), with `a = i`.
fn edge_contacts(bodies: &[BoxBody], x: &[Vec3], i: usize, j: usize, margin: f64, out: &mut Vec<BoxContact>) {
    let (ba, bb) = (&bodies[i], &bodies[j]);
    let (ca, axes_a) = ba.frame(x);
    let (cb, axes_b) = bb.frame(x);
    let inside = |p: &Vec3, c: &Vec3, axes: &[Vec3; 3], half: &Vec3| {
        (0..3).all(|u| axes[u].dot(&(p - c)).abs() <= half[u] + margin)
    };
    // Separating-axis overlaps: along a unit axis n the boxes overlap by rᴬ(n) + rᴮ(n) − |Δc·n|
    // with r(n) = Σ halfᵤ|axisᵤ·n|. An edge pair is only the contact when its axis overlaps
    // less than every face axis (by 5 %, so that resting faces keep their corner contacts);
    // otherwise edges of boxes that merely share a face region would look deeply crossed.
    let radius = |axes: &[Vec3; 3], half: &Vec3, n: &Vec3| (0..3).map(|u| half[u] * axes[u].dot(n).abs()).sum::<f64>();
    let overlap = |n: &Vec3| radius(&axes_a, &ba.half, n) + radius(&axes_b, &bb.half, n) - (ca - cb).dot(n).abs();
    let face_overlap = axes_a.iter().chain(&axes_b).map(overlap).fold(f64::INFINITY, f64::min);
    let mut best: Option<BoxContact> = None;
    let ends = |body: &BoxBody| EDGES.map(|(u, v)| (body.point(x, &corner(u)), body.point(x, &corner(v))));
    let (edges_a, edges_b) = (ends(ba), ends(bb));
    for (ea, &(p0, p1)) in edges_a.iter().enumerate() {
        let da = p1 - p0;
        for (eb, &(q0, q1)) in edges_b.iter().enumerate() {
            let db = q1 - q0;
            // Closest points of the lines p0 + s·da and q0 + t·db.
            let r = p0 - q0;
            let (aa, bd, ee, c, f) = (da.dot(&da), da.dot(&db), db.dot(&db), da.dot(&r), db.dot(&r));
            let denom = aa * ee - bd * bd;
            if denom <= 1e-9 * aa * ee {
                continue; // parallel edges: the faces' corners handle them
            }
            let s = (bd * f - c * ee) / denom;
            let t = (aa * f - bd * c) / denom;
            let interior = EDGE_END..=1.0 - EDGE_END;
            if !interior.contains(&s) || !interior.contains(&t) {
                continue;
            }
            let p = p0 + da * s;
            let q = q0 + db * t;
            if !inside(&p, &cb, &axes_b, &bb.half) || !inside(&q, &ca, &axes_a, &ba.half) {
                continue;
            }
            let mut n = da.cross(&db).normalize();
            if n.dot(&(ca - cb)) < 0.0 {
                n = -n;
            }
            let c = n.dot(&(p - q));
            if c >= margin || overlap(&n) >= 0.95 * face_overlap || best.is_some_and(|k| k.c <= c) {
                continue;
            }
            best = Some(BoxContact {
                a: i,
                b: j,
                feature: 8 + 12 * ea + eb,
                normal: n,
                weights_a: weights(&edge_point(ea, s)),
                weights_b: weights(&edge_point(eb, t)),
                c,
            });
        }
    }
    out.extend(best);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::FRAC_PI_4;

    fn unit_box(centre: Vec3, half: f64) -> (BoxBody, Vec<Vec3>) {
        let corners = [[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]];
        let x = corners.iter().map(|c| centre + Vec3::new(c[0], c[1], c[2]) * half).collect();
        (BoxBody { particles: [0, 1, 2, 3], half: Vec3::repeat(half), friction: 0.0 }, x)
    }

    #[test]
    fn weights_reproduce_every_corner_and_the_frame() {
        let (body, x) = unit_box(Vec3::new(1.0, 2.0, 3.0), 0.5);
        for c in CORNERS {
            let s = Vec3::new(c[0], c[1], c[2]);
            assert!((body.point(&x, &s) - (Vec3::new(1.0, 2.0, 3.0) + s * 0.5)).norm() < 1e-15);
            assert!((weights(&s).iter().sum::<f64>() - 1.0).abs() < 1e-15);
        }
        let (centre, axes) = body.frame(&x);
        assert!((centre - Vec3::new(1.0, 2.0, 3.0)).norm() < 1e-15);
        assert!(
            (axes[0] - Vec3::x()).norm() < 1e-15
                && (axes[1] - Vec3::y()).norm() < 1e-15
                && (axes[2] - Vec3::z()).norm() < 1e-15
        );
    }

    #[test]
    fn the_orientation_recovers_a_known_rotation() {
        let (body, x) = unit_box(Vec3::new(1.0, 2.0, 3.0), 0.5);
        let q =
            nalgebra::UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(Vec3::new(1.0, 2.0, -0.5)), 0.9);
        let turned: Vec<Vec3> =
            x.iter().map(|p| Vec3::new(1.0, 2.0, 3.0) + q * (p - Vec3::new(1.0, 2.0, 3.0))).collect();
        assert!(body.orientation(&x).angle() < 1e-15);
        assert!(body.orientation(&turned).angle_to(&q) < 1e-12);
    }

    #[test]
    fn a_box_sunk_into_another_gives_four_corner_contacts_with_the_right_depth() {
        let (a, xa) = unit_box(Vec3::new(0.0, 0.95, 0.0), 0.5);
        let (b, xb) = unit_box(Vec3::zeros(), 0.5);
        let x: Vec<Vec3> = xa.into_iter().chain(xb).collect();
        let bodies = [a, BoxBody { particles: [4, 5, 6, 7], ..b }];
        let found = contacts(&bodies, &x, 0.0);
        // The four lower corners of the upper box are 0.05 inside the lower box's top face,
        // and the four upper corners of the lower box are 0.05 inside the upper box's bottom.
        assert_eq!(found.len(), 8);
        for c in &found {
            assert!((c.c + 0.05).abs() < 1e-12, "{c:?}");
            let expected = if c.a == 0 { Vec3::y() } else { -Vec3::y() };
            assert!((c.normal - expected).norm() < 1e-12);
        }
    }

    #[test]
    fn crossed_edges_give_one_edge_edge_contact_and_no_corner_contacts() {
        // Box a turned 45° about x (its lowest edge runs along x), box b turned 45° about z (its
        // highest edge runs along z), a above b with the edges crossing 0.05 deep.
        let turn = |axis: Vec3, centre: Vec3, first: usize| {
            let q = nalgebra::UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), FRAC_PI_4);
            let (body, x) = unit_box(Vec3::zeros(), 0.5);
            (
                BoxBody { particles: [first, first + 1, first + 2, first + 3], ..body },
                x.into_iter().map(|p| centre + q * p).collect::<Vec<_>>(),
            )
        };
        let reach = 0.5 * std::f64::consts::SQRT_2;
        let (a, xa) = turn(Vec3::x(), Vec3::new(0.0, 2.0 * reach - 0.05, 0.0), 0);
        let (b, xb) = turn(Vec3::z(), Vec3::zeros(), 4);
        let x: Vec<Vec3> = xa.into_iter().chain(xb).collect();
        let found = contacts(&[a.clone(), b.clone()], &x, 0.0);
        assert_eq!(found.len(), 1, "{found:?}");
        let k = found[0];
        assert!(k.feature >= 8, "an edge pair");
        assert!((k.normal - Vec3::y()).norm() < 1e-12, "from b up to a: {}", k.normal);
        assert!((k.c + 0.05).abs() < 1e-12, "depth 0.05: {}", k.c);
        // p and q through the weights are the crossing points on the two edges.
        let p: Vec3 = (0..4).map(|m| x[m] * k.weights_a[m]).sum();
        let q: Vec3 = (0..4).map(|m| x[4 + m] * k.weights_b[m]).sum();
        assert!(
            (p - Vec3::new(0.0, reach - 0.05, 0.0)).norm() < 1e-12 && (q - Vec3::new(0.0, reach, 0.0)).norm() < 1e-12
        );
        // Lifted clear, nothing.
        let lifted: Vec<Vec3> =
            x.iter().enumerate().map(|(i, p)| if i < 4 { p + Vec3::y() * 0.1 } else { *p }).collect();
        assert!(contacts(&[a, b], &lifted, 0.0).is_empty());
    }
}
