//! Ball joints of one colour visited [`W`] at a time on the lanes: [`JointRows::solve`]'s
//! ball-joint visit (three point rows, no limit) with each lane one joint, operation for
//! operation and in the same order, so the numbers are those of the joints visited one after
//! the other (`tests/colored.rs`; the joint scenes' final-state hashes).
//!
//! A joint goes on a lane when it joins two bodies ([`on_lanes`]); the joints of a lane group
//! must share no movable body (two joints of one colour, outside the overflow colour). They may
//! share a fixed body: its velocities take no change ([`Velocities::add`] leaves a fixed body
//! alone in the coloured passes), so each joint reads what it would have read alone.
//!
//! Each joint's block is over a kilobyte and its visit reads the rows' Jacobians, `K⁻¹` and the
//! impulses; the lanes gather them from the two joints and run the residuals, the block solve
//! and the accumulation of `Jᵀ Δλ` as packed arithmetic. The bodies' velocity changes are
//! then applied one joint at a time, through the same inverse masses and world inverse
//! inertias as the scalar visit (`M⁻¹` times the accumulated impulse).

use nalgebra::Matrix3;

use super::simd::{Fw, Vw};
use super::W;
use crate::pgs::joints::{JointRows, Velocities};
use crate::pgs::rigid::Vec3;

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
    // The residuals `J v + γλ (+ bias)`, row by row.
    let mut residual = [zero; 3];
    for (r, out) in residual.iter_mut().enumerate() {
        let (la, aa, lb, ab) = (
            vectors(&js, |j| j.rows[r].la),
            vectors(&js, |j| j.rows[r].aa),
            vectors(&js, |j| j.rows[r].lb),
            vectors(&js, |j| j.rows[r].ab),
        );
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
        let k = |c: usize| numbers(&js, |j| j.k_inv[(r, c)]);
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
        la = la + vectors(&js, |j| j.rows[r].la).scale(*dr);
        aa = aa + vectors(&js, |j| j.rows[r].aa).scale(*dr);
        lb = lb + vectors(&js, |j| j.rows[r].lb).scale(*dr);
        ab = ab + vectors(&js, |j| j.rows[r].ab).scale(*dr);
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
        let settings = crate::preset("tgs-soft").unwrap().config.settings().clone();
        let cfg: PgsConfig = toml::Value::Table(settings).try_into().unwrap();
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
}
