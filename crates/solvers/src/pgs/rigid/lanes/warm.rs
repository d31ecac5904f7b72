//! The coloured warm start on the lanes of a batch ([`Visit::warm_lanes`]).

use super::simd::Mw;
use super::*;

impl Visit<'_> {
    /// [`Visit::warm_manifold`] on the lanes of `batch`, whose rows' state is `state`: each
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
        state: &mut BatchState,
        scale: f64,
    ) {
        let s = Fw::splat(scale);
        // Each pair's two impulses, and where a lane has the pair (`None`: every lane).
        let mut pairs = [([Fw::default(); 2], None); 2];
        for (u, pair) in pairs.iter_mut().enumerate().take(batch.units) {
            let has = batch.has[u];
            let st = &mut state.unit[u];
            // (A scale of 1 leaves the impulses as they are, `λ·1 = λ`.)
            if scale != 1.0 {
                st.ln = [st.ln[0] * s, st.ln[1] * s];
            }
            *pair = (st.ln, (!has.iter().all(|&h| h)).then(|| Mw::of(has)));
        }
        if scale != 1.0 {
            (state.lt1, state.lt2, state.l_twist) = (state.lt1 * s, state.lt2 * s, state.l_twist * s);
        }
        let (d1, d2, d) = (state.lt1, state.lt2, state.l_twist);
        let fr = &batch.friction;
        let z = Fw::splat(0.0);
        let nothing = Vw { x: z, y: z, z };
        for side_a in [true, false] {
            let (mut v, mut w) = load_side(vel, batch, side_a);
            // `Bodies::push` for one side: `v_a += imp·ima`, `ω_a += dwa`; `v_b += −(imp·imb)`,
            // `ω_b += −dwb`.
            let push = |(v, w): (Vw, Vw), imp: Vw, (ima, imb): (Fw, Fw), ga: Vw, gb: Vw| {
                if side_a {
                    (v + imp.scale(ima), w + ga)
                } else {
                    (v + -imp.scale(imb), w + -gb)
                }
            };
            let im = (batch.ima, batch.imb);
            for (u, (l, only)) in pairs.iter().enumerate().take(batch.units) {
                let UnitLanes { np, nq, rp, rq, .. } = &batch.unit[u];
                for (nrm, row, d) in [(np, rp, l[0]), (nq, rq, l[1])] {
                    let (nv, nw) = push((v, w), nrm.scale(d), im, row.ga.scale(d), row.gb.scale(d));
                    (v, w) = match only {
                        None => (nv, nw),
                        Some(m) => (nv.select(*m, v), nw.select(*m, w)),
                    };
                }
            }
            let imp = fr.t1.scale(d1) + fr.t2.scale(d2);
            let ga = fr.r1.ga.scale(d1) + fr.r2.ga.scale(d2);
            let gb = fr.r1.gb.scale(d1) + fr.r2.gb.scale(d2);
            (v, w) = push((v, w), imp, im, ga, gb);
            (v, w) = push((v, w), nothing, (z, z), fr.twist_a.scale(d), fr.twist_b.scale(d));
            store_side(vel, batch, side_a, (v, w));
        }
    }
}
