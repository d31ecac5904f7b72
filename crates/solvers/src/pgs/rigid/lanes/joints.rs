//! Ball joints [`W`] at a time on the lanes: visited in a colour ([`solve_ball_lanes`],
//! [`JointRows::solve`]'s ball-joint visit: three point rows, no limit) and prepared in every
//! substep ([`rebuild_ball_lanes`], [`JointRows::rebuild`]), each lane one joint, operation for
//! operation and in the same order, so the numbers are those of the joints visited and prepared
//! one after the other (the unit tests below, `tests/colored.rs`, the joint scenes' final-state
//! hashes).
//!
//! A joint goes on a lane when it joins two bodies ([`on_lanes`]); the joints of a lane group
//! must share no movable body (two joints of one colour, outside the overflow colour). They may
//! share a fixed body: its velocities take no change ([`Velocities::add`] leaves a fixed body
//! alone in the coloured passes), so each joint reads what it would have read alone.
//!
//! A ball joint's visit reads its point rows' arms (their linear parts are the axes), `K⁻¹`
//! and the impulses; the lanes gather them from the two joints and run the residuals, the block solve
//! and the accumulation of `Jᵀ Δλ` as packed arithmetic. The bodies' velocity changes are
//! then applied one joint at a time, through the same inverse masses and world inverse
//! inertias as the scalar visit (`M⁻¹` times the accumulated impulse). The preparation runs the
//! anchors' rotation, the rows' arms, `K` and its closed-form inverse on the lanes and writes
//! each joint's rows back; the feedback ([`JointRows::feedback`]) stays joint by joint.
//!
//! On the 100 × 100 joint grid under `tgs-soft` (one thread, `simulate`, interleaved medians):
//! the visits on the lanes took the frame from 53.0 to 44.9 ms, the preparation on the lanes
//! from 53.4 to 42.7 (fastest runs 46.9 and 41.6); callgrind over 10 frames of the 30 × 30 grid
//! counts 198.0, 188.5 and 170.7 million instructions in the solver. With the rows made
//! compact (a ball joint's 472 bytes, where its six rows and two 6 × 6 inverses took 1.4 kB:
//! the point rows' linear parts are the axes, larger joints' rows lie apart), the 100 × 100
//! grid went from 47.0 to 24.0 ms a frame on one thread and from about 30 to 15.0 on two (the
//! builds alternated three times, medians), the 30 × 30 grid from 1.80 to 1.45 ms (185.2
//! against 163.0 million instructions over 10 frames): the sweeps of the big grid had streamed
//! 28 MB of rows from memory in every pass.

use nalgebra::Matrix3;

use super::simd::{Fw, Vw};
use super::W;
use crate::pgs::joints::{axis, Arms, JointRows, Velocities};
use crate::pgs::rigid::Vec3;
use crate::pgs::PgsConfig;
use solverlab_core::rigid::{Joint, JointFrame, JointKind, RigidState};

/// Whether `rows` can go on a lane: a ball joint (the three point rows, no limit) between two
/// bodies.
#[inline]
pub(in crate::pgs::rigid) fn on_lanes(rows: &JointRows) -> bool {
    rows.dim == 3 && rows.limit == 0 && rows.b.is_some()
}

/// One visit of the [`W`] joints `js` (each [`on_lanes`], no two sharing a movable body) on
/// the velocities `vel`: per joint, the largest velocity residual and `Σ Δλ²`, as
/// [`JointRows::solve`] returns them.
#[inline(always)]
pub(in crate::pgs::rigid) fn solve_ball_lanes<V: Velocities + ?Sized>(
    vel: &mut V,
    mut js: [&mut JointRows; W],
    (inv_m, inv_i): (&[f64], &[Matrix3<f64>]),
    omega: f64,
    biased: bool,
) -> [(f64, f64); W] {
    let bodies: [(usize, usize); W] =
        std::array::from_fn(|l| (js[l].a, js[l].b.expect("a joint on the lanes joins two bodies")));
    let at_a: [_; W] = std::array::from_fn(|l| vel.get(bodies[l].0));
    let at_b: [_; W] = std::array::from_fn(|l| vel.get(bodies[l].1));
    let (va, wa) = (Vw::from_fn(|l| at_a[l].0), Vw::from_fn(|l| at_a[l].1));
    let (vb, wb) = (Vw::from_fn(|l| at_b[l].0), Vw::from_fn(|l| at_b[l].1));
    let zero = Fw::splat(0.0);
    // The point rows' linear parts `−eᵢ` on `a` and `eᵢ` on `b`, the same in every lane.
    let lb_rows: [Vw; 3] = std::array::from_fn(|r| Vw::from_fn(|_| axis(r)));
    let la_rows: [Vw; 3] = std::array::from_fn(|r| Vw::from_fn(|_| -axis(r)));
    // The residuals `J v + γλ (+ bias)`, row by row.
    let mut residual = [zero; 3];
    for (r, out) in residual.iter_mut().enumerate() {
        let (la, aa, lb, ab) =
            (la_rows[r], vectors(&js, |j| j.point[r].aa), lb_rows[r], vectors(&js, |j| j.point[r].ab));
        let cdot = la.dot(&va) + aa.dot(&wa) + lb.dot(&vb) + ab.dot(&wb);
        let gamma = numbers(&js, |j| j.gamma[r]);
        let plain = cdot + gamma * numbers(&js, |j| j.lambda[r]);
        let with_bias = plain + numbers(&js, |j| j.bias[r]);
        // (`biased || γ > 0`: a compliant row keeps its bias in every pass.)
        *out = if biased { with_bias } else { with_bias.select(gamma.gt(zero), plain) };
    }
    let ms = numbers(&js, |j| if biased { j.mass_scale } else { 1.0 } * omega);
    let is = numbers(&js, |j| if biased { j.impulse_scale } else { 0.0 } * omega);
    let (mut worst, mut d2) = (zero, zero);
    let (mut d, mut after) = ([zero; 3], [zero; 3]);
    for r in 0..3 {
        let k = |c: usize| numbers(&js, |j| j.k3[(r, c)]);
        let y = k(0) * residual[0] + k(1) * residual[1] + k(2) * residual[2] + zero;
        let lambda = numbers(&js, |j| j.lambda[r]);
        d[r] = -y * ms - lambda * is;
        after[r] = lambda + d[r];
        worst = worst.max(residual[r].abs());
        d2 = d2 + d[r] * d[r];
    }
    // `Jᵀ Δλ` on each body, accumulated over the rows as the scalar visit does.
    let (mut la, mut aa, mut lb, mut ab) = (Vw::default(), Vw::default(), Vw::default(), Vw::default());
    for (r, dr) in d.iter().enumerate() {
        la = la + la_rows[r].scale(*dr);
        aa = aa + vectors(&js, |j| j.point[r].aa).scale(*dr);
        lb = lb + lb_rows[r].scale(*dr);
        ab = ab + vectors(&js, |j| j.point[r].ab).scale(*dr);
    }
    for (r, lambda) in after.iter().enumerate() {
        for (j, x) in js.iter_mut().zip(lambda.lanes()) {
            j.lambda[r] = x;
        }
    }
    for (l, &(a, b)) in bodies.iter().enumerate() {
        vel.add(a, la.lane(l) * inv_m[a], inv_i[a] * aa.lane(l));
        vel.add(b, lb.lane(l) * inv_m[b], inv_i[b] * ab.lane(l));
    }
    let (worst, d2) = (worst.lanes(), d2.lanes());
    std::array::from_fn(|l| (worst[l], d2[l]))
}

/// Whether joint `j` can be prepared on a lane ([`rebuild_ball_lanes`]): a ball joint between
/// two bodies.
#[inline]
pub(in crate::pgs::rigid) fn builds_on_lanes(j: &Joint) -> bool {
    j.kind == JointKind::Ball && j.b.is_some()
}

/// [`JointRows::rebuild`] of the [`W`] ball joints `joints` (each [`builds_on_lanes`]) into
/// `outs`, lane by lane: the anchors' arms by the bodies' rotations, the point rows, `C`, the
/// compliance terms, `K = J M⁻¹ Jᵀ` and its inverse in closed form (nalgebra's, operation for
/// operation), then the feedback ([`JointRows::feedback`]) joint by joint. The same numbers as
/// the joints prepared one by one; a lane whose `K` is singular takes the zero inverse, as
/// there.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(in crate::pgs::rigid) fn rebuild_ball_lanes(
    outs: [&mut JointRows; W],
    joints: [&Joint; W],
    frames: [&JointFrame; W],
    st: &[RigidState],
    (inv_m, inv_i): (&[f64], &[Matrix3<f64>]),
    cfg: &PgsConfig,
    h: f64,
) {
    let b: [usize; W] = std::array::from_fn(|l| joints[l].b.expect("a joint on the lanes joins two bodies"));
    let a: [usize; W] = std::array::from_fn(|l| joints[l].a);
    // `q · r` as nalgebra forms it: `t = 2 (q⃗ × r)`, then `(t q_w + q⃗ × t) + r`.
    let rotate = |k: [usize; W], r: Vw| {
        let q = |c: usize| Fw::from_fn(|l| st[k[l]].q.coords[c]);
        let qv = Vw { x: q(0), y: q(1), z: q(2) };
        let t = qv.cross(&r).scale(Fw::splat(2.0));
        t.scale(q(3)) + qv.cross(&t) + r
    };
    let ra = rotate(a, Vw::from_fn(|l| frames[l].anchor_a));
    let rb = rotate(b, Vw::from_fn(|l| frames[l].anchor_b));
    let (xa, xb) = (Vw::from_fn(|l| st[a[l]].x), Vw::from_fn(|l| st[b[l]].x));
    let gap = (xb + rb) - (xa + ra);
    let units: [Vec3; 3] = std::array::from_fn(axis);
    let (mut aa, mut ab) = ([Vw::default(); 3], [Vw::default(); 3]);
    for (i, e) in units.iter().enumerate() {
        let e = Vw::from_fn(|_| *e);
        (aa[i], ab[i]) = (-ra.cross(&e), rb.cross(&e));
    }
    // K = J M⁻¹ Jᵀ + γ on the diagonal, entry by entry as the scalar rebuild forms it (the
    // linear rows' `±e` give the same products in every lane).
    let (ima, imb) = (Fw::from_fn(|l| inv_m[a[l]]), Fw::from_fn(|l| inv_m[b[l]]));
    let ia_aa: [Vw; 3] = std::array::from_fn(|s| aa[s].times(|l| inv_i[a[l]]));
    let ib_ab: [Vw; 3] = std::array::from_fn(|s| ab[s].times(|l| inv_i[b[l]]));
    let gamma = Fw::from_fn(|l| joints[l].compliance / (h * h));
    let k: [[Fw; 3]; 3] = std::array::from_fn(|r| {
        std::array::from_fn(|s| {
            let (la, lb) = ((-units[r]).dot(&-units[s]), units[r].dot(&units[s]));
            let entry = ima * Fw::splat(la) + aa[r].dot(&ia_aa[s]) + imb * Fw::splat(lb) + ab[r].dot(&ib_ab[s]);
            if r == s {
                entry + gamma
            } else {
                entry
            }
        })
    });
    // nalgebra's closed-form 3 × 3 inverse (`try_inverse`), lane by lane.
    let [[m11, m12, m13], [m21, m22, m23], [m31, m32, m33]] = k;
    let minor_m12_m23 = m22 * m33 - m32 * m23;
    let minor_m11_m23 = m21 * m33 - m31 * m23;
    let minor_m11_m22 = m21 * m32 - m31 * m22;
    let det = m11 * minor_m12_m23 - m12 * minor_m11_m23 + m13 * minor_m11_m22;
    let inv = [
        [minor_m12_m23 / det, (m13 * m32 - m33 * m12) / det, (m12 * m23 - m22 * m13) / det],
        [-minor_m11_m23 / det, (m11 * m33 - m31 * m13) / det, (m13 * m21 - m23 * m11) / det],
        [minor_m11_m22 / det, (m12 * m31 - m32 * m11) / det, (m11 * m22 - m21 * m12) / det],
    ];
    let (det, inv) = (det.lanes(), inv.map(|row| row.map(Fw::lanes)));
    let gap = [gap.x.lanes(), gap.y.lanes(), gap.z.lanes()];
    for (l, (out, j)) in outs.into_iter().zip(joints).enumerate() {
        out.start(j);
        for i in 0..3 {
            out.point[i] = Arms { aa: aa[i].lane(l), ab: ab[i].lane(l) };
            out.c[i] = gap[i][l];
            out.gamma[i] = j.compliance / (h * h);
        }
        out.dim = 3;
        out.k3 = if det[l] == 0.0 { Matrix3::zeros() } else { Matrix3::from_fn(|r, c| inv[r][c][l]) };
        out.feedback(j, cfg, h);
    }
}

/// Lane `l` is `f` of joint `l`.
#[inline(always)]
fn numbers(js: &[&mut JointRows; W], f: impl Fn(&JointRows) -> f64) -> Fw {
    Fw::from_fn(|l| f(js[l]))
}

/// Lane `l` is `f` of joint `l`.
#[inline(always)]
fn vectors(js: &[&mut JointRows; W], f: impl Fn(&JointRows) -> Vec3) -> Vw {
    Vw::from_fn(|l| f(js[l]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgs::rigid::{Pass, PgsConfig, RigidSi};
    use crate::Order;

    /// A biased and a relax sweep of the 6 × 6 joint grid, coloured, with the ball joints on
    /// the lanes and without: the same velocities, impulses and statistics bit for bit, and
    /// most joints went on the lanes (all but the two that hang the grid from the world).
    #[test]
    fn ball_joints_on_the_lanes_are_the_joints_one_by_one() {
        let scene = solverlab_scenes::resolve("rigid-joint-grid", &["n=6".to_string()]).unwrap();
        let cfg = crate::pgs::config::preset_config("tgs-soft");
        assert_eq!(cfg.rigid_order, Order::Colored);
        let h = scene.dt / 4.0;
        let run = |lanes: bool| {
            let mut st = scene.initial_state(scene.dt).rigid;
            // Velocities that open the joints unevenly.
            for (i, s) in st.iter_mut().enumerate() {
                let i = i as f64;
                s.v += 0.1 * Vec3::new(i.sin(), (2.0 * i).cos(), 0.5 * (3.0 * i).sin());
                s.w += 0.2 * Vec3::new((5.0 * i).cos(), i.sin(), 0.0);
            }
            let mut si = RigidSi::default();
            si.prepare(&scene, &mut st, &PgsConfig { lanes, ..cfg.clone() }, h, 0.0, 4);
            let stats = [si.sweep(0, &mut st, 1.0, Pass::Biased, true), si.sweep(0, &mut st, 1.0, Pass::Relax, true)];
            let lambdas: Vec<_> = si.joints.iter().map(|j| j.lambda).collect();
            let on = si.joints.iter().filter(|j| on_lanes(j)).count();
            (st, stats, lambdas, on, si.joints.len())
        };
        let (with, without) = (run(true), run(false));
        let bits = |st: &[solverlab_core::rigid::RigidState]| -> Vec<u64> {
            st.iter().flat_map(|s| s.v.iter().chain(s.w.iter()).map(|x| x.to_bits()).collect::<Vec<_>>()).collect()
        };
        assert_eq!(bits(&with.0), bits(&without.0), "velocities");
        let stat_bits = |s: &[(f64, f64, usize, f64); 2]| -> Vec<u64> {
            s.iter().flat_map(|&(a, b, n, d)| [a.to_bits(), b.to_bits(), n as u64, d.to_bits()]).collect()
        };
        assert_eq!(stat_bits(&with.1), stat_bits(&without.1), "statistics");
        let lambda_bits =
            |l: &[nalgebra::Vector6<f64>]| -> Vec<u64> { l.iter().flatten().map(|x| x.to_bits()).collect() };
        assert_eq!(lambda_bits(&with.2), lambda_bits(&without.2), "impulses");
        assert!(with.1[0].0 > 0.0, "the joints were open");
        assert_eq!((with.3, with.4), (60, 62), "ball joints between two bodies, of all");
    }

    /// The ball joints prepared two at a time on the lanes are the joints prepared one by one,
    /// field for field and bit for bit: on a 5 × 5 grid turned and moved at random, its anchors
    /// moved off the bodies' axes, rigid and
    /// compliant joints, under the soft and the Baumgarte feedback, with a body made fixed (its
    /// zero inverse mass and inertia in the block) and a pair of fixed bodies (a singular `K`:
    /// the zero inverse).
    #[test]
    fn ball_joints_prepared_on_the_lanes_are_the_joints_prepared_one_by_one() {
        use nalgebra::UnitQuaternion;
        use solverlab_core::rigid::JointFrame;
        let mut scene = solverlab_scenes::resolve("rigid-joint-grid", &["n=5".to_string()]).unwrap();
        for (k, j) in scene.joints.iter_mut().enumerate() {
            j.compliance = if k % 3 == 0 { 1e-4 } else { 0.0 };
        }
        let mut frames: Vec<JointFrame> = scene.joints.iter().map(|j| JointFrame::new(j, &scene.rigid)).collect();
        // Anchors off the bodies' axes (the grid's lie on them, where many products are zero).
        for (k, f) in frames.iter_mut().enumerate() {
            let k = k as f64;
            f.anchor_a += 0.03 * Vec3::new((1.3 * k).sin(), (1.7 * k).cos(), (2.3 * k).sin());
            f.anchor_b += 0.03 * Vec3::new((2.9 * k).cos(), (3.1 * k).sin(), (0.7 * k).cos());
        }
        let mut st = scene.initial_state(scene.dt).rigid;
        let mut inv_m: Vec<f64> = scene.rigid.iter().map(|b| b.inv_mass).collect();
        for (i, s) in st.iter_mut().enumerate() {
            let i = i as f64;
            s.q = UnitQuaternion::from_scaled_axis(Vec3::new(i.sin(), (2.0 * i).cos(), 0.7 * (3.0 * i).sin()));
            s.x += 0.01 * Vec3::new((5.0 * i).cos(), i.sin(), (7.0 * i).cos());
        }
        let mut inv_i: Vec<Matrix3<f64>> =
            scene.rigid.iter().zip(&st).map(|(b, s)| b.inv_inertia_world(&s.q)).collect();
        // Body 6 fixed; bodies 12 and 13 (joined) both fixed.
        for k in [6, 12, 13] {
            (inv_m[k], inv_i[k]) = (0.0, Matrix3::zeros());
        }
        let ball: Vec<usize> = (0..scene.joints.len()).filter(|&k| builds_on_lanes(&scene.joints[k])).collect();
        assert!(ball.len() > 30, "the grid's ball joints between bodies");
        let soft = crate::pgs::config::preset_config("tgs-soft");
        let baumgarte = PgsConfig { feedback: crate::pgs::Feedback::Baumgarte, ..soft.clone() };
        let h = scene.dt / 4.0;
        let mut singular = 0;
        for cfg in [soft, baumgarte] {
            for pair in ball.windows(2) {
                let (j, f) = (|k: usize| &scene.joints[k], |k: usize| &frames[k]);
                let mut one_by_one: [JointRows; W] = std::array::from_fn(|_| JointRows::default());
                for (out, &k) in one_by_one.iter_mut().zip(pair) {
                    out.rebuild(j(k), f(k), &st, &inv_m, &inv_i, &cfg, h);
                }
                let [mut x, mut y]: [JointRows; W] = std::array::from_fn(|_| JointRows::default());
                let masses = (&inv_m[..], &inv_i[..]);
                rebuild_ball_lanes(
                    [&mut x, &mut y],
                    [j(pair[0]), j(pair[1])],
                    [f(pair[0]), f(pair[1])],
                    &st,
                    masses,
                    &cfg,
                    h,
                );
                for (lanes, alone) in [x, y].iter().zip(&one_by_one) {
                    assert_eq!(format!("{lanes:?}"), format!("{alone:?}"), "joints {pair:?}");
                    singular += usize::from(lanes.k3 == Matrix3::zeros());
                }
            }
        }
        assert!(singular > 0, "a joint between two fixed bodies has the zero inverse");
    }
}
