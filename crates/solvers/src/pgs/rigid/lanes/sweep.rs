//! A sweep on the lanes of a batch ([`Visit::manifolds_lanes`]): the block pairs (or the points
//! one after the other), the friction block and the twist row of each lane's manifold, on the
//! bodies' velocities in lanes.

use super::simd::Mw;
use super::state::{soft_coefficients, soft_rows, PairState, SidePoses};
use super::*;
use crate::pgs::rigid::sweep::AtPoses;

/// The bodies' velocities on the lanes, and their inverse masses.
struct Bodies {
    va: Vw,
    wa: Vw,
    vb: Vw,
    wb: Vw,
    im: (Fw, Fw),
}

impl Bodies {
    /// The velocities of `batch`'s bodies (the world's are zero), and their inverse masses.
    #[inline(always)]
    fn load<S: ?Sized + Store>(vel: &Direct<S>, batch: &Batch) -> Self {
        let ((va, wa), (vb, wb)) = (load_side(vel, batch, true), load_side(vel, batch, false));
        Bodies { va, wa, vb, wb, im: (batch.ima, batch.imb) }
    }

    /// Writes the velocities of `batch`'s bodies that move back.
    #[inline(always)]
    fn store<S: ?Sized + Store>(&self, vel: &mut Direct<S>, batch: &Batch) {
        store_side(vel, batch, true, (self.va, self.wa));
        store_side(vel, batch, false, (self.vb, self.wb));
    }

    /// The row's speed `J·v` along `d` (as [`super::sweep::row_speed`]:
    /// `d·(v_a − v_b) + J_a·ω_a − J_b·ω_b`), with `v_a − v_b` given as `dv` (one subtraction
    /// for the rows read at the same velocities).
    #[inline(always)]
    fn speed_with(&self, d: &Vw, row: &RowLanes, dv: &Vw) -> Fw {
        d.dot(dv) + row.ja.dot(&self.wa) - row.jb.dot(&self.wb)
    }

    /// [`super::sweep::push`] on the lanes: `v_a += imp·ima`, `ω_a += dwa`, `v_b += −(imp·imb)`,
    /// `ω_b += −dwb`; with `only`, in its lanes alone. (A body that does not move takes the
    /// exactly zero changes its zero inverse masses make and is never written back, as in the
    /// parallel visit's copies, `velocities::Local`.)
    #[inline(always)]
    fn push(&mut self, imp: Vw, (ima, imb): (Fw, Fw), dwa: Vw, dwb: Vw, only: Option<Mask>) {
        let (va, wa) = (self.va + imp.scale(ima), self.wa + dwa);
        let (vb, wb) = (self.vb + -imp.scale(imb), self.wb + -dwb);
        match only {
            None => (self.va, self.wa, self.vb, self.wb) = (va, wa, vb, wb),
            Some(m) => {
                let m = Mw::of(m);
                self.va = va.select(m, self.va);
                self.wa = wa.select(m, self.wa);
                self.vb = vb.select(m, self.vb);
                self.wb = wb.select(m, self.wb);
            }
        }
    }
}

impl Visit<'_> {
    /// [`Visit::manifolds_interleaved`] on the lanes of `batch`, whose rows' state is `state`
    /// and whose points carry `carried`: `true` when done, `false` (nothing touched) when a
    /// soft row of a block pair has no mass scale in this pass (its block divides by it; points
    /// one after the other never return `false`). A relax pass at the poses
    /// ([`Visit::at_poses`]) first measures each pair's separations there, its relax biases and
    /// the batch's [`BatchState::end_worst`] from them, and sets up the next substep's rows.
    pub(in crate::pgs::rigid) fn manifolds_lanes<S: ?Sized + Store>(
        &self,
        vel: &mut Direct<S>,
        batch: &Batch,
        (state, carried): (&mut BatchState, &BatchCarried),
        acc: &mut SweepStats,
    ) -> bool {
        let n = batch.n;
        let pass = usize::from(self.pass != Pass::Biased);
        if pass == 0 && batch.paired {
            for u in 0..batch.units {
                let [p, q] = state.unit[u].mass_scale.map(Fw::lanes);
                if (0..n).any(|l| batch.has[u][l] && !(p[l] > 0.0 && q[l] > 0.0)) {
                    return false;
                }
            }
        }
        if let Some(at) = self.at_poses.filter(|_| pass == 1) {
            Self::relax_at_poses(at, batch, state, carried);
        }
        let mut bodies = Bodies::load(vel, batch);
        let (omega, inv_omega) = (Fw::splat(self.omega), Fw::splat(self.inv_omega));
        let mut total = Fw::splat(0.0);
        // Per lane and point: the squared impulse change and the residual.
        let mut d2 = [[0.0; 4]; W];
        let mut res = [[0.0; 4]; W];
        for u in 0..batch.units {
            let has = batch.has[u];
            if !batch.paired {
                let rows = self.sequential_unit(&mut bodies, &batch.unit[u], &mut state.unit[u], has, pass);
                for (j, (x, d, r)) in rows.into_iter().enumerate() {
                    if self.counted() {
                        for l in (0..n).filter(|&l| has[l]) {
                            (d2[l][2 * u + j], res[l][2 * u + j]) = (d.lane(l) * d.lane(l), r.lane(l));
                        }
                    }
                    // (The scalar visit sums the impulses point by point as it goes.)
                    total = (total + x).select(Mw::of(has), total);
                }
                continue;
            }
            let unit = &batch.unit[u];
            let UnitLanes { np, nq, rp, rq, k11, k12, k22, .. } = unit;
            let (k11, k12, k22) = (*k11, *k12, *k22);
            let st = &mut state.unit[u];
            let PairSolve { kp: [kp11, kp22], det, inv_det, scaled: [scaled_p, scaled_q] } =
                if pass == 0 { st.solve } else { PairSolve::new(unit, None) };
            let (bias_p, bias_q) =
                if pass == 0 { (st.bias[0], st.bias[1]) } else { (st.relax_bias[0], st.relax_bias[1]) };
            let (lp, lq) = (st.ln[0], st.ln[1]);
            let (inv_mn_p, inv_mn_q) = (st.inv_mn[pass][0], st.inv_mn[pass][1]);
            // (The arithmetic of `Visit::normal_pair`, lane by lane, its divisions and the
            // products of the mass scales prepared: `PairSolve`.)
            let dv = bodies.va - bodies.vb;
            let vp = bodies.speed_with(np, rp, &dv) + bias_p;
            let vq = bodies.speed_with(nq, rq, &dv) + bias_q;
            let b1 = vp - k11 * lp - k12 * lq;
            let b2 = vq - k12 * lp - k22 * lq;
            let both = ((k12 * b2 - kp22 * b1) * inv_det, (k12 * b1 - kp11 * b2) * inv_det);
            let (one, two) = (-b1 * scaled_p, -b2 * scaled_q);
            let z = Fw::splat(0.0);
            let c_both = det.gt(z).and(both.0.ge(z)).and(both.1.ge(z));
            let c_one = one.ge(z).and((b2 + k12 * one).ge(z));
            let c_two = two.ge(z).and((b1 + k12 * two).ge(z));
            let c_none = b1.ge(z).and(b2.ge(z));
            // The first valid case of each lane, by selects from the last case up (no branch per
            // lane: the cases change from lane to lane and from sweep to sweep).
            let (mut x, mut y) = (z.select(c_none, lp), z.select(c_none, lq));
            (x, y) = (z.select(c_two, x), two.select(c_two, y));
            (x, y) = (one.select(c_one, x), z.select(c_one, y));
            (x, y) = (both.0.select(c_both, x), both.1.select(c_both, y));
            if self.omega != 1.0 {
                (x, y) = ((lp + omega * (x - lp)).max(z), (lq + omega * (y - lq)).max(z));
            }
            let (dp, dq) = (x - lp, y - lq);
            let imp = np.scale(dp) + nq.scale(dq);
            let dwa = rp.ga.scale(dp) + rq.ga.scale(dq);
            let dwb = rp.gb.scale(dp) + rq.gb.scale(dq);
            let every = has.iter().all(|&h| h);
            bodies.push(imp, bodies.im, dwa, dwb, (!every).then_some(has));
            // (A lane without the pair keeps its impulses.)
            if every {
                st.ln = [x, y];
            } else {
                let m = Mw::of(has);
                st.ln = [x.select(m, lp), y.select(m, lq)];
            }
            if self.counted() {
                let (r_p, r_q) = (dp.abs() * inv_omega * inv_mn_p, dq.abs() * inv_omega * inv_mn_q);
                for l in (0..n).filter(|&l| has[l]) {
                    (d2[l][2 * u], d2[l][2 * u + 1]) = (dp.lane(l) * dp.lane(l), dq.lane(l) * dq.lane(l));
                    (res[l][2 * u], res[l][2 * u + 1]) = (r_p.lane(l), r_q.lane(l));
                }
            }
            // (The scalar visit sums the impulses point by point as it goes.)
            total = if every { total + x + y } else { (total + x).select(Mw::of(has), total) };
            if !every {
                total = (total + y).select(Mw::of(has), total);
            }
        }
        let rows = self.friction_lanes(&mut bodies, &batch.friction, state, total);
        // Write the velocities back, then the statistics in the scalar visit's order.
        bodies.store(vel, batch);
        if !self.counted() {
            return true;
        }
        let (max, sum2, count, dl2) = (&mut acc.0, &mut acc.1, &mut acc.2, &mut acc.3);
        for l in 0..n {
            for k in 0..batch.len[l] {
                let r = res[l][k];
                *max = max.max(r);
                *sum2 += r * r;
                *count += 1;
                *dl2 += d2[l][k];
            }
            *dl2 += rows[l].0;
            *dl2 += rows[l].1;
        }
        true
    }

    /// A relax pass's separations of `batch`'s points at the poses `at` (see
    /// [`Visit::manifolds_lanes`]): per pair slot, the relax biases `max(s/h, 0)` and, with
    /// `at.ahead`, the next substep's rows at `s` ([`soft_rows`], as
    /// [`RigidSi::advance_batches`] sets them up); the largest penetration of the points the
    /// batch holds into [`BatchState::end_worst`].
    #[inline(always)]
    fn relax_at_poses(at: AtPoses, batch: &Batch, state: &mut BatchState, carried: &BatchCarried) {
        let sides = SidePoses::of(|k| at.poses[k], batch);
        let (z, hw) = (Fw::splat(0.0), Fw::splat(at.h));
        let coefficients = at.ahead.map(|(softness, max_push)| (soft_coefficients(batch, softness), max_push));
        let mut worst = z;
        for u in 0..batch.units {
            let sep = sides.separations(&batch.unit[u], &carried.unit[u]);
            let st = &mut state.unit[u];
            st.relax_bias = sep.map(|s| (s / hw).max(z));
            if let Some((coefficients, max_push)) = coefficients {
                soft_rows(batch, u, st, sep, coefficients, (hw, Fw::splat(-max_push)));
            }
            // (A lane without the pair repeats its first pair: its separations count again.)
            let has = Mw::of(batch.has[u]);
            worst = worst.max((-sep[0]).select(has, z)).max((-sep[1]).select(has, z));
        }
        state.end_worst = worst.lanes().into_iter().fold(0.0, f64::max);
    }

    /// The two normal rows of `unit` one after the other (as [`Visit::normal_row`], lane by
    /// lane), whose state is `st`, in the lanes `has`: per row its new impulse, its impulse
    /// change and (in a counted pass, [`Visit::counted`]) its residual.
    #[inline(always)]
    fn sequential_unit(
        &self,
        bodies: &mut Bodies,
        unit: &UnitLanes,
        st: &mut PairState,
        has: Mask,
        pass: usize,
    ) -> [(Fw, Fw, Fw); 2] {
        let (omega, inv_omega) = (Fw::splat(self.omega), Fw::splat(self.inv_omega));
        let (z, one) = (Fw::splat(0.0), Fw::splat(1.0));
        let only = (!has.iter().all(|&h| h)).then_some(has);
        let mut out = [(z, z, z); 2];
        for (j, out) in out.iter_mut().enumerate() {
            let (n, row, mn) = if j == 0 { (&unit.np, &unit.rp, unit.mn_p) } else { (&unit.nq, &unit.rq, unit.mn_q) };
            let (bias, ms, is) = if pass == 0 {
                (st.bias[j], st.mass_scale[j], st.impulse_scale[j])
            } else {
                (st.relax_bias[j], one, z)
            };
            let ln = st.ln[j];
            let dv = bodies.va - bodies.vb;
            let vn = bodies.speed_with(n, row, &dv);
            let raw = -mn * ms * (vn + bias) - is * ln;
            let new = (ln + omega * raw).max(z);
            let d = new - ln;
            st.ln[j] = match only {
                None => new,
                Some(m) => new.select(Mw::of(m), ln),
            };
            let r = if self.counted() {
                raw.select((omega * raw).eq(d), d * inv_omega).abs() * st.inv_mn[pass][j]
            } else {
                z
            };
            bodies.push(n.scale(d), bodies.im, row.ga.scale(d), row.gb.scale(d), only);
            *out = (new, d, r);
        }
        out
    }

    /// The friction and twist rows `fr` of the lanes' manifolds `ms` (as
    /// [`Visit::friction_rows`], lane by lane), whose normal impulses sum to `total`: per lane
    /// the squared changes of the tangent impulses and of the twist impulse (0 for a row not
    /// solved).
    #[inline(always)]
    fn friction_lanes(
        &self,
        bodies: &mut Bodies,
        fr: &FrictionLanes,
        state: &mut BatchState,
        total: Fw,
    ) -> [(f64, f64); W] {
        let mut out = [(0.0, 0.0); W];
        if !self.friction || !fr.on.iter().any(|&x| x) {
            return out;
        }
        let only = (!fr.on.iter().all(|&x| x)).then_some(fr.on);
        let omega = Fw::splat(self.omega);
        let dv = bodies.va - bodies.vb;
        let (v1, v2) = (bodies.speed_with(&fr.t1, &fr.r1, &dv), bodies.speed_with(&fr.t2, &fr.r2, &dv));
        let (o1, o2) = (state.lt1, state.lt2);
        let mt = &fr.mt;
        let mut l1 = o1 - omega * (mt[0] * v1 + mt[1] * v2);
        let mut l2 = o2 - omega * (mt[2] * v1 + mt[3] * v2);
        let limit = fr.mu * total;
        match self.cone {
            FrictionCone::Disk => {
                // (The scalar visit's `if len > limit`, by selects.)
                let len = (l1 * l1 + l2 * l2).sqrt();
                let over = len.gt(limit);
                (l1, l2) = ((l1 * limit / len).select(over, l1), (l2 * limit / len).select(over, l2));
            }
            FrictionCone::Pyramid => (l1, l2) = (l1.max(-limit).min(limit), l2.max(-limit).min(limit)),
        }
        let (d1, d2) = (l1 - o1, l2 - o2);
        let tangent = d1 * d1 + d2 * d2;
        let imp = fr.t1.scale(d1) + fr.t2.scale(d2);
        let dwa = fr.r1.ga.scale(d1) + fr.r2.ga.scale(d2);
        let dwb = fr.r1.gb.scale(d1) + fr.r2.gb.scale(d2);
        bodies.push(imp, bodies.im, dwa, dwb, only);
        // Twist: the relative spin about the normal, clamped to μ·radius·Σλₙ.
        let spin = bodies.wa - bodies.wb;
        let old = state.l_twist;
        let limit = fr.mu * fr.radius * total;
        let new = (old - omega * fr.m_twist * fr.n.dot(&spin)).max(-limit).min(limit);
        let d = new - old;
        let twist = d * d;
        let z = Fw::splat(0.0);
        let nothing = Vw { x: z, y: z, z };
        bodies.push(nothing, (z, z), fr.twist_a.scale(d), fr.twist_b.scale(d), only);
        // (A lane without friction keeps its impulses.)
        let on = Mw::of(fr.on);
        (state.lt1, state.lt2, state.l_twist) = (l1.select(on, o1), l2.select(on, o2), new.select(on, old));
        let (tangent, twist) = (tangent.lanes(), twist.lanes());
        for (l, out) in out.iter_mut().enumerate().filter(|(l, _)| fr.on[*l]) {
            *out = (tangent[l], twist[l]);
        }
        out
    }
}
