//! The coloured warm start on the lanes of a batch ([`Visit::warm_lanes`]).

use super::simd::Mw;
use super::*;

impl Visit<'_> {
    /// [`Visit::warm_manifold`] on the lanes of `batch` (manifolds `ms`, points `points`): each
    /// point's impulse times `scale`, point after point, then the friction and twist impulses
    /// times `scale`, each pushed through the rows' `M⁻¹Jᵀ` as the scalar warm start pushes
    /// them, operation for operation. The impulses are scaled first; then body `a`'s velocities
    /// take their changes, then body `b`'s. (No change depends on a velocity, so each body
    /// takes the same additions in the same order as in the scalar warm start; one body's six
    /// lanes at a time fit the registers, where the two bodies' twelve spilled: 86 million
    /// instructions over 120 frames of the 210-box pyramid, no fewer than the scalar visit.)
    pub(in crate::pgs::rigid) fn warm_lanes<S: ?Sized + Store>(
        &self,
        vel: &mut Direct<S>,
        batch: &Batch,
        ms: &mut [&mut Manifold],
        points: &mut [&mut [Point]],
        scale: f64,
    ) {
        let n = batch.n;
        debug_assert_eq!(ms.len(), n, "a batch's manifolds");
        let s = Fw::splat(scale);
        // Each pair's two impulses, and where a lane has the pair (`None`: every lane).
        let mut pairs = [([Fw::default(); 2], None); 2];
        for (u, pair) in pairs.iter_mut().enumerate().take(batch.units) {
            let has = batch.has[u];
            let k = |l: usize| if has[l] { 2 * u } else { 0 };
            let (mut lp, mut lq) = (Fw::from_fn(|l| points[l][k(l)].ln), Fw::from_fn(|l| points[l][k(l) + 1].ln));
            // (A scale of 1 leaves the impulses as they are, `λ·1 = λ`: nothing to write back.)
            if scale != 1.0 {
                (lp, lq) = (lp * s, lq * s);
                for l in 0..n {
                    if has[l] {
                        (points[l][2 * u].ln, points[l][2 * u + 1].ln) = (lp.lane(l), lq.lane(l));
                    }
                }
            }
            *pair = ([lp, lq], (!has.iter().all(|&h| h)).then(|| Mw::of(has)));
        }
        let (mut d1, mut d2, mut d) =
            (Fw::from_fn(|l| ms[l].lt1), Fw::from_fn(|l| ms[l].lt2), Fw::from_fn(|l| ms[l].l_twist));
        if scale != 1.0 {
            (d1, d2, d) = (d1 * s, d2 * s, d * s);
            for (l, m) in ms.iter_mut().enumerate() {
                (m.lt1, m.lt2, m.l_twist) = (d1.lane(l), d2.lane(l), d.lane(l));
            }
        }
        let fr = &batch.friction;
        let z = Fw::splat(0.0);
        let nothing = Vw { x: z, y: z, z };
        for side_a in [true, false] {
            let (mut v, mut w) = load_side(vel, batch, side_a);
            // `Bodies::push` for one side: `v_a += imp·ima`, `ω_a += dwa`; `v_b += −(imp·imb)`,
            // `ω_b += −dwb`.
            let push = |(v, w): (Vw, Vw), imp: Vw, row: &RowLanes, ga: Vw, gb: Vw| {
                if side_a {
                    (v + imp.scale(row.ima), w + ga)
                } else {
                    (v + -imp.scale(row.imb), w + -gb)
                }
            };
            for (u, (l, only)) in pairs.iter().enumerate().take(batch.units) {
                let UnitLanes { np, nq, rp, rq, .. } = &batch.unit[u];
                for (nrm, row, d) in [(np, rp, l[0]), (nq, rq, l[1])] {
                    let (nv, nw) = push((v, w), nrm.scale(d), row, row.ga.scale(d), row.gb.scale(d));
                    (v, w) = match only {
                        None => (nv, nw),
                        Some(m) => (nv.select(*m, v), nw.select(*m, w)),
                    };
                }
            }
            let imp = fr.t1.scale(d1) + fr.t2.scale(d2);
            let ga = fr.r1.ga.scale(d1) + fr.r2.ga.scale(d2);
            let gb = fr.r1.gb.scale(d1) + fr.r2.gb.scale(d2);
            (v, w) = push((v, w), imp, &fr.r1, ga, gb);
            let still = RowLanes { ima: z, imb: z, ..RowLanes::default() };
            (v, w) = push((v, w), nothing, &still, fr.twist_a.scale(d), fr.twist_b.scale(d));
            store_side(vel, batch, side_a, (v, w));
        }
    }
}
