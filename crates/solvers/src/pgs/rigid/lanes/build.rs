//! The batches built on the lanes straight from the contacts ([`RigidSi::batches_from_contacts`]),
//! without the points' and manifolds' rows in between: each lane's points, then its manifold's
//! friction and twist rows and its pairs' couplings, with the arithmetic of
//! [`RigidSi::prepare`]'s point rows, [`RigidSi::manifold`] and [`RigidSi::pair_couplings`]
//! operation for operation, so that a batch, its state and what it carries are those that
//! [`Batch::build`] and [`RigidSi::load_batches`] make from the rows (tested,
//! `full_rows_from_lanes_are_the_rows`). The points and manifolds of a batch so built hold only
//! what the passes outside the batches read of them (a manifold's place, bodies, tangents and
//! normal), until [`RigidSi::store_full`] writes them whole.

use super::simd::{M3w, Mw, Qw};
use super::state::{inverse_lanes, Softness};
use super::*;
use crate::pgs::rigid::warm_map::matched_impulse;

/// A batch's points, in lanes, as [`RigidSi::prepare`] builds each point.
struct PointLanes {
    n: Vw,
    ra: Vw,
    rb: Vw,
    row: RowLanes,
    mn: Fw,
    s: Fw,
    s0: Fw,
    bias: Fw,
    mass_scale: Fw,
    impulse_scale: Fw,
    inv_mn: [Fw; 2],
    p0: Vw,
    la: Vw,
    lb: Vw,
}

/// Each lane's bodies: their indices, inverse masses, world inverse inertias, positions and
/// orientations (the world's: zero, unturned).
struct BodyLanes {
    with_b: Mw,
    ima: Fw,
    imb: Fw,
    ia: M3w,
    ib: M3w,
    xa: Vw,
    xb: Vw,
    qa: Qw,
    qb: Qw,
}

/// `d₁·K·d₂` between two rows of `bodies` along `d1` and `d2` ([`JacobianRow::coupling`]).
#[inline(always)]
fn coupling(bodies: &BodyLanes, r: &RowLanes, o: &RowLanes, d1: &Vw, d2: &Vw) -> Fw {
    let dd = d1.dot(d2);
    bodies.ima * dd + r.ja.dot(&o.ga) + (bodies.imb * dd + r.jb.dot(&o.gb))
}

/// The row along `d` at arms `ra`, `rb` ([`RigidSi::jacobian_row`]): body `b`'s parts zero
/// where a lane has none.
#[inline(always)]
fn jacobian(bodies: &BodyLanes, ra: &Vw, rb: &Vw, d: &Vw) -> RowLanes {
    let z = Fw::splat(0.0);
    let zero = Vw { x: z, y: z, z };
    let ja = ra.cross(d);
    let jb = rb.cross(d).select(bodies.with_b, zero);
    RowLanes { ja, ga: bodies.ia.apply(&ja), jb, gb: bodies.ib.apply(&jb).select(bodies.with_b, zero) }
}

/// `v / |v|` as nalgebra's `normalize` forms it: each component over `√(v·v)`.
#[inline(always)]
fn normalize(v: &Vw) -> Vw {
    let norm = v.dot(v).sqrt();
    Vw { x: v.x / norm, y: v.y / norm, z: v.z / norm }
}

impl RigidSi {
    /// The bodies of the lanes' manifolds, whose first contacts are `first`.
    fn body_lanes(&self, st: &[RigidState], first: [&RigidContact; W]) -> (BodyLanes, [usize; W], [Option<usize>; W]) {
        let a: [usize; W] = std::array::from_fn(|l| first[l].a);
        let b: [Option<usize>; W] = std::array::from_fn(|l| match first[l].b {
            Other::Body(k) => Some(k),
            Other::Collider(_) => None,
        });
        let zero = Matrix3::zeros();
        let lanes = BodyLanes {
            with_b: Mw::of(std::array::from_fn(|l| b[l].is_some())),
            ima: Fw::from_fn(|l| self.inv_m[a[l]]),
            imb: Fw::from_fn(|l| b[l].map_or(0.0, |k| self.inv_m[k])),
            ia: M3w::from_fn(|l| self.inv_i[a[l]]),
            ib: M3w::from_fn(|l| b[l].map_or(zero, |k| self.inv_i[k])),
            xa: Vw::from_fn(|l| st[a[l]].x),
            xb: Vw::from_fn(|l| b[l].map_or(Vec3::zeros(), |k| st[k].x)),
            qa: Qw::from_fn(|l| st[a[l]].q),
            qb: Qw::from_fn(|l| b[l].map_or(nalgebra::UnitQuaternion::identity(), |k| st[k].q)),
        };
        (lanes, a, b)
    }

    /// Point `c` of each lane ([`RigidSi::prepare`]'s point rows), soft rows with `softness` at
    /// step `h` and push-out `max_push`.
    #[inline(always)]
    fn point_lanes(
        bodies: &BodyLanes,
        c: [&RigidContact; W],
        (between, against_fixed): Softness,
        h: f64,
        max_push: f64,
    ) -> PointLanes {
        let z = Fw::splat(0.0);
        let zero = Vw { x: z, y: z, z };
        let n = Vw::from_fn(|l| c[l].point.normal);
        let point = Vw::from_fn(|l| c[l].point.point);
        // A recycled contact's arms are those frozen when it was found.
        let recycled = Mw::of(std::array::from_fn(|l| c[l].arms.is_some()));
        let frozen = |i: usize| Vw::from_fn(|l| c[l].arms.map_or(Vec3::zeros(), |arms| arms[i]));
        let ra = frozen(0).select(recycled, point - bodies.xa);
        let rb = frozen(1).select(recycled, point - bodies.xb).select(bodies.with_b, zero);
        let s = Fw::from_fn(|l| c[l].point.separation);
        let row = jacobian(bodies, &ra, &rb, &n);
        // (The separation a later substep measures follows the frozen arms' ends: rebased.)
        let end_b = (bodies.xb + rb).select(bodies.with_b, point);
        let s0 = (s - n.dot(&((bodies.xa + ra) - end_b))).select(recycled, s);
        let ahead = s.gt(z);
        let fixed = bodies.ima.eq(z).or(bodies.imb.eq(z));
        let pick = |g: fn(&(f64, f64, f64)) -> f64| Fw::splat(g(&against_fixed)).select(fixed, Fw::splat(g(&between)));
        let (rate, soft_mass, soft_impulse) = (pick(|c| c.0), pick(|c| c.1), pick(|c| c.2));
        let bias = (s / Fw::splat(h)).select(ahead, (rate * s).max(Fw::splat(-max_push)));
        let mass_scale = Fw::splat(1.0).select(ahead, soft_mass);
        let impulse_scale = z.select(ahead, soft_impulse);
        let mn = inverse_lanes(coupling(bodies, &row, &row, &n, &n));
        let inv_mn = [inverse_lanes(mn * mass_scale), inverse_lanes(mn)];
        let la = bodies.qa.inverse().transform(&ra);
        let lb = bodies.qb.inverse().transform(&rb).select(bodies.with_b, zero);
        PointLanes { n, ra, rb, row, mn, s, s0, bias, mass_scale, impulse_scale, inv_mn, p0: point, la, lb }
    }

    /// The batches of the coloured sweeps built on the lanes from the frame's contacts (see
    /// this module's doc), where [`RigidSi::build_batches`] would build them from the rows: in
    /// each colour of the sort by colour but the overflow colour, every [`W`] consecutive
    /// manifolds of two or four points whose pairs are all blocks (with `paired`,
    /// `block_pairs`; without, whose points all have an effective mass), and in a colour large
    /// enough for all threads none across a chunk's end (so that a chunk's statistics are the
    /// same on one thread and on two). Each batched point is marked in `batched`, and its
    /// manifold gets its place, bodies, friction, tangents and normal; every other row is left
    /// to the caller. `warm` is the warm start's `(warm_start, radius²)`
    /// ([`RigidSi::warm_batches`], done here).
    ///
    /// The places are chosen first, one colour after the other; the batches are then built on
    /// all threads from an eighth of [`par_min`] of them (a place whose pairs are not blocks is dropped, its
    /// two manifolds left to the rows), and the manifolds' fields written last.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::pgs::rigid) fn batches_from_contacts(
        &mut self,
        scene: &Scene,
        st: &[RigidState],
        runs: &[(usize, usize)],
        color: impl Fn(usize) -> usize,
        softness: Softness,
        h: f64,
        max_push: f64,
        warm: (f64, f64),
        paired: bool,
    ) {
        let mut places = std::mem::take(&mut self.batch_places);
        places.clear();
        let mut start = 0;
        while start < runs.len() {
            let c = color(start);
            let end = (start..runs.len()).find(|&i| color(i) != c).unwrap_or(runs.len());
            let chunked = colors::large_rows(end - start);
            let mut o = start;
            while c != coloring::COLORS && o + W <= end {
                let pair: [(usize, usize); W] = std::array::from_fn(|l| runs[o + l]);
                let across = chunked && (o - start) / colors::CHUNK != (o + W - 1 - start) / colors::CHUNK;
                if across || !pair.iter().all(|&(s, e)| e - s == 2 || e - s == 4) {
                    o += 1;
                    continue;
                }
                places.push((o, pair));
                o += W;
            }
            start = end;
        }
        let mut batches = std::mem::take(&mut self.batches);
        let mut states = std::mem::take(&mut self.batch_state);
        let mut carried = std::mem::take(&mut self.batch_carried);
        let mut arms = std::mem::take(&mut self.batch_arms);
        batches.resize(places.len(), Batch::default());
        states.resize(places.len(), BatchState::default());
        carried.resize(places.len(), BatchCarried::default());
        arms.resize(places.len(), BatchArms::default());
        let mut built = std::mem::take(&mut self.batch_built);
        built.resize(places.len(), false);
        // Each place's manifolds and its points' marks, apart (the places, and their manifolds'
        // points, lie one after the other), written where it is built.
        let (mut manifolds, mut marks) = (std::mem::take(&mut self.manifolds), std::mem::take(&mut self.batched));
        {
            let mut targets: Vec<(&mut [Manifold], &mut [bool])> = Vec::with_capacity(places.len());
            let (mut ms, mut flags) = (&mut manifolds[..], &mut marks[..]);
            let (mut m_at, mut p_at) = (0, 0);
            for &(o, pair) in &places {
                let (first, last) = (pair[0].0, pair[W - 1].1);
                let (mine, rest) = std::mem::take(&mut ms)[o - m_at..].split_at_mut(W);
                let (own, others) = std::mem::take(&mut flags)[first - p_at..].split_at_mut(last - first);
                targets.push((mine, own));
                (ms, flags, m_at, p_at) = (rest, others, o + W, last);
            }
            let this: &Self = self;
            type Place<'a> = (&'a (usize, [(usize, usize); W]), &'a mut Batch);
            type Out<'a, 'm> = (
                ((&'a mut BatchCarried, &'a mut BatchArms), &'a mut bool),
                &'a mut (&'m mut [Manifold], &'m mut [bool]),
            );
            let build = |(((&(o, pair), batch), state), (((carried, arms), built), (ms, own))): (
                (Place, &mut BatchState),
                Out,
            )| {
                let lanes = (&mut *batch, state, carried, arms);
                *built = this.batch_lanes(st, o, pair, softness, (h, max_push), warm, paired, lanes);
                if !*built {
                    return;
                }
                // What the passes outside the batches read of the manifolds.
                let fr = &batch.friction;
                for (l, (m, &(s, e))) in ms.iter_mut().zip(&pair).enumerate() {
                    let first = &this.contacts[s];
                    (m.start, m.end, m.index, m.mu) = (s, e, o + l, first.friction);
                    (m.t1, m.t2, m.n) = (fr.t1.lane(l), fr.t2.lane(l), fr.n.lane(l));
                    m.body = match first.b {
                        Other::Body(k) if scene.rigid[first.a].is_fixed() => k,
                        _ => first.a,
                    };
                    m.island = m.body;
                }
                for &(s, e) in &pair {
                    own[s - pair[0].0..e - pair[0].0].iter_mut().for_each(|b| *b = true);
                }
            };
            let parts = places.par_iter().zip(batches.par_iter_mut()).zip(states.par_iter_mut());
            let outs =
                carried.par_iter_mut().zip(arms.par_iter_mut()).zip(built.par_iter_mut()).zip(targets.par_iter_mut());
            parts.zip(outs).with_min_len(par_min() / 8).for_each(build);
        }
        (self.manifolds, self.batched) = (manifolds, marks);
        // (A place not built is rare: its batch goes, the later ones move up.)
        let mut count = 0;
        self.batch_at.clear();
        for i in 0..places.len() {
            if !built[i] {
                continue;
            }
            self.batch_at.push(places[i].0);
            if count != i {
                batches.swap(count, i);
                states.swap(count, i);
                carried.swap(count, i);
                arms.swap(count, i);
            }
            self.batched_points += places[i].1.iter().map(|&(s, e)| e - s).sum::<usize>();
            count += 1;
        }
        batches.truncate(count);
        states.truncate(count);
        carried.truncate(count);
        arms.truncate(count);
        (self.batches, self.batch_state, self.batch_carried, self.batch_arms) = (batches, states, carried, arms);
        (self.batch_places, self.batch_built) = (places, built);
        self.from_contacts = true;
    }

    /// The batch of the manifolds `runs[o..o + W]` (points `pair[l].0..pair[l].1`, two or
    /// four each) written over `batch`, `state` and `carried` in place, field by field (each is
    /// a kilobyte or two: built aside, they were copied over), its points in 2 × 2 blocks with
    /// `paired`, else one after the other: `false` (and nothing written to the rows) when a
    /// pair of points is not a block, or (not `paired`) a point has no effective mass. The
    /// manifolds' fields are the caller's ([`RigidSi::batches_from_contacts`]).
    #[allow(clippy::too_many_arguments)]
    fn batch_lanes(
        &self,
        st: &[RigidState],
        o: usize,
        pair: [(usize, usize); W],
        softness: Softness,
        (h, max_push): (f64, f64),
        warm: (f64, f64),
        paired: bool,
        (batch, state, carried, arms): (&mut Batch, &mut BatchState, &mut BatchCarried, &mut BatchArms),
    ) -> bool {
        let contacts = &self.contacts;
        let first: [&RigidContact; W] = std::array::from_fn(|l| &contacts[pair[l].0]);
        let (bodies, a, b) = self.body_lanes(st, first);
        let len: [usize; W] = std::array::from_fn(|l| pair[l].1 - pair[l].0);
        let units = len.iter().map(|&n| n / 2).max().unwrap_or(0);
        let z = Fw::splat(0.0);
        let zero_v = Vw { x: z, y: z, z };
        let within = |j: usize| Mw::of(std::array::from_fn(|l| j < len[l]));
        // Each lane's points, pair by pair (a lane of two points takes its first pair again for
        // the second, as the batches repeat it: see `Batch::build`), into the batch; the sums
        // of the arms' ends and of the normals for the manifolds' centres and normals.
        let (mut centre, mut normal) = (zero_v, zero_v);
        let mut ends = [zero_v; 4];
        for u in 0..units {
            let (unit, st_u, c_u, a_u) =
                (&mut batch.unit[u], &mut state.unit[u], &mut carried.unit[u], &mut arms.unit[u]);
            for i in 0..2 {
                let j = 2 * u + i;
                let at = |l: usize| pair[l].0 + if j < len[l] { j } else { i };
                let p = Self::point_lanes(&bodies, std::array::from_fn(|l| &contacts[at(l)]), softness, h, max_push);
                ends[j] = p.ra + bodies.xa;
                centre = (centre + ends[j]).select(within(j), centre);
                normal = (normal + p.n).select(within(j), normal);
                if i == 0 {
                    (unit.np, unit.rp, unit.mn_p) = (p.n, p.row, p.mn);
                } else {
                    (unit.nq, unit.rq, unit.mn_q) = (p.n, p.row, p.mn);
                }
                (st_u.s[i], st_u.bias[i], st_u.mass_scale[i], st_u.impulse_scale[i]) =
                    (p.s, p.bias, p.mass_scale, p.impulse_scale);
                (st_u.inv_mn[0][i], st_u.inv_mn[1][i], st_u.ln[i], st_u.relax_bias[i]) =
                    (p.inv_mn[0], p.inv_mn[1], z, z);
                (c_u.s0[i], c_u.p0[i], c_u.la[i], c_u.lb[i]) = (p.s0, p.p0, p.la, p.lb);
                (a_u.ra[i], a_u.rb[i]) = (p.ra, p.rb);
            }
            batch.has[u] = std::array::from_fn(|l| len[l] > 2 * u);
            if !paired {
                // (Rows one after the other: no couplings, as `Batch::build` leaves them.)
                let massive = unit.mn_p.gt(z).and(unit.mn_q.gt(z)).flags();
                if (0..W).any(|l| len[l] > 2 * u && !massive[l]) {
                    return false;
                }
                (unit.k11, unit.k12, unit.k22) = (z, z, z);
                st_u.solve = PairSolve::default();
                continue;
            }
            // The pair's couplings and whether it is a block (`RigidSi::pair_couplings`).
            let k12 = coupling(&bodies, &unit.rp, &unit.rq, &unit.np, &unit.nq);
            let k11 = coupling(&bodies, &unit.rp, &unit.rp, &unit.np, &unit.np);
            let k22 = coupling(&bodies, &unit.rq, &unit.rq, &unit.nq, &unit.nq);
            let block =
                unit.mn_p.gt(z).and(unit.mn_q.gt(z)).and((k11 * k22 - k12 * k12).gt(Fw::splat(0.01) * k11 * k22));
            let block = block.flags();
            if (0..W).any(|l| len[l] > 2 * u && !block[l]) {
                return false;
            }
            (unit.k11, unit.k12, unit.k22) = (k11, k12, k22);
            st_u.solve = PairSolve::new(unit, Some(st_u.mass_scale));
        }
        // (The state of a pair slot no lane has, as loaded from the rows: none.)
        for u in units..2 {
            (state.unit[u], carried.unit[u], arms.unit[u]) = Default::default();
        }
        // Each lane's manifold: its friction and twist rows at the centre (`RigidSi::manifold`).
        let count = Fw::from_fn(|l| len[l] as f64);
        let centre = Vw { x: centre.x / count, y: centre.y / count, z: centre.z / count };
        let n = normalize(&normal);
        let one = Fw::splat(1.0);
        let x_axis = Vw { x: one, y: z, z };
        let y_axis = Vw { x: z, y: one, z };
        let t1 = normalize(&n.cross(&x_axis).select(n.x.abs().lt(Fw::splat(0.57)), n.cross(&y_axis)));
        let t2 = n.cross(&t1);
        let ra = centre - bodies.xa;
        let rb = (centre - bodies.xb).select(bodies.with_b, zero_v);
        let fr = &mut batch.friction;
        (fr.r1, fr.r2) = (jacobian(&bodies, &ra, &rb, &t1), jacobian(&bodies, &ra, &rb, &t2));
        let k11 = coupling(&bodies, &fr.r1, &fr.r1, &t1, &t1);
        let k12 = coupling(&bodies, &fr.r1, &fr.r2, &t1, &t2);
        let k22 = coupling(&bodies, &fr.r2, &fr.r2, &t2, &t2);
        let det = k11 * k22 - k12 * k12;
        let invertible = det.gt(Fw::splat(1e-12) * (k11 * k22).max(Fw::splat(f64::MIN_POSITIVE)));
        fr.mt = [k22 / det, -k12 / det, -k12 / det, k11 / det].map(|x| x.select(invertible, z));
        fr.twist_a = bodies.ia.apply(&n);
        fr.twist_b = bodies.ib.apply(&n).select(bodies.with_b, zero_v);
        let kt = n.dot(&fr.twist_a) + n.dot(&fr.twist_b).select(bodies.with_b, z);
        let mut radius = z;
        for (j, end) in ends.iter().enumerate().take(2 * units) {
            let d = *end - centre;
            radius = (radius + d.dot(&d).sqrt()).select(within(j), radius);
        }
        fr.radius = radius / count;
        fr.m_twist = inverse_lanes(kt);
        fr.mu = Fw::from_fn(|l| first[l].friction);
        fr.on = std::array::from_fn(|l| first[l].friction != 0.0);
        (fr.t1, fr.t2, fr.n) = (t1, t2, n);
        (state.lt1, state.lt2, state.l_twist) = (z, z, z);
        arms.centre = [ra, rb];
        // The batch's place and bodies (`Batch::build`).
        let moves = |k: usize| self.inv_m[k] != 0.0;
        (batch.o, batch.n, batch.a, batch.b, batch.units, batch.paired) = (o, W, a, b, units, paired);
        batch.manifold = std::array::from_fn(|l| o + l);
        batch.start = std::array::from_fn(|l| pair[l].0);
        batch.len = len;
        batch.ma = std::array::from_fn(|l| moves(a[l]));
        batch.mb = std::array::from_fn(|l| b[l].is_some_and(moves));
        (batch.ima, batch.imb) = (bodies.ima, bodies.imb);
        // The warm start's impulses of the last step, found by pair and then by feature or
        // nearest point (`RigidSi::warm_start`; every island is awake where batches are built
        // on the lanes), while the contacts are at hand.
        let (ws, radius2) = warm;
        for l in (0..W).filter(|_| ws != 0.0) {
            let Some((previous, friction, twist)) = self.warm.get_at(o + l, &(first[l].a, first[l].b)) else {
                continue;
            };
            for j in 0..len[l] {
                if let Some(ln) = matched_impulse(previous, &contacts[pair[l].0 + j], radius2) {
                    let slot = &mut state.unit[j / 2].ln[j % 2];
                    *slot = slot.with_lane(l, ln * ws);
                }
            }
            state.lt1 = state.lt1.with_lane(l, friction.dot(&t1.lane(l)) * ws);
            state.lt2 = state.lt2.with_lane(l, friction.dot(&t2.lane(l)) * ws);
            state.l_twist = state.l_twist.with_lane(l, twist * ws);
        }
        true
    }
}

impl RowLanes {
    /// Lane `l`'s row, whose bodies' inverse masses are `(ima, imb)`.
    fn lane(&self, l: usize, (ima, imb): (Fw, Fw)) -> JacobianRow {
        JacobianRow {
            ja: self.ja.lane(l),
            jb: self.jb.lane(l),
            ga: self.ga.lane(l),
            gb: self.gb.lane(l),
            ima: ima.lane(l),
            imb: imb.lane(l),
        }
    }
}

impl RigidSi {
    /// Writes every batch's rows whole into its points, their carried fields and its manifolds,
    /// as [`RigidSi::prepare`] would have built them and the frame's passes changed them (the
    /// numbers [`RigidSi::store_batches`] writes, and those the batches built from the
    /// contacts left unwritten): afterwards the batches may be built again from the rows.
    pub(in crate::pgs::rigid) fn store_full(&mut self) {
        self.store_batches();
        if !std::mem::take(&mut self.from_contacts) {
            return;
        }
        for ((batch, carried), arms) in self.batches.iter().zip(&self.batch_carried).zip(&self.batch_arms) {
            for l in 0..batch.n {
                for j in 0..batch.len[l] {
                    let (u, i) = (j / 2, j % 2);
                    let (unit, c, a) = (&batch.unit[u], &carried.unit[u], &arms.unit[u]);
                    let k = batch.start[l] + j;
                    let p = &mut self.points[k];
                    (p.a, p.b) = (batch.a[l], batch.b[l]);
                    p.n = if i == 0 { unit.np } else { unit.nq }.lane(l);
                    p.row = if i == 0 { unit.rp } else { unit.rq }.lane(l, (batch.ima, batch.imb));
                    p.mn = if i == 0 { unit.mn_p } else { unit.mn_q }.lane(l);
                    (p.ra, p.rb) = (a.ra[i].lane(l), a.rb[i].lane(l));
                    (p.split_bias, p.lp) = (0.0, 0.0);
                    let more = &mut self.carried[k];
                    (more.s0, more.p0, more.la, more.lb) =
                        (c.s0[i].lane(l), c.p0[i].lane(l), c.la[i].lane(l), c.lb[i].lane(l));
                    // (No batch is built on the lanes where a contact bounces.)
                    (more.e, more.vn0) = (self.contacts[k].restitution, 0.0);
                }
                let m = &mut self.manifolds[batch.manifold[l]];
                let fr = &batch.friction;
                m.paired = batch.paired;
                (m.mu, m.radius, m.m_twist) = (fr.mu.lane(l), fr.radius.lane(l), fr.m_twist.lane(l));
                (m.t1, m.t2, m.n) = (fr.t1.lane(l), fr.t2.lane(l), fr.n.lane(l));
                m.mt = fr.mt.map(|x| x.lane(l));
                m.rows_t = [fr.r1.lane(l, (batch.ima, batch.imb)), fr.r2.lane(l, (batch.ima, batch.imb))];
                (m.twist_a, m.twist_b) = (fr.twist_a.lane(l), fr.twist_b.lane(l));
                (m.ra, m.rb) = (arms.centre[0].lane(l), arms.centre[1].lane(l));
                m.pairs = [Pair::default(); 2];
                for u in (0..batch.len[l] / 2).filter(|_| batch.paired) {
                    let unit = &batch.unit[u];
                    let (k11, k12, k22) = (unit.k11.lane(l), unit.k12.lane(l), unit.k22.lane(l));
                    m.pairs[u] = Pair { k11, k12, k22, block: true };
                }
            }
        }
    }

    /// Sets the batches' impulses to zero (a later substep without warm start).
    pub(in crate::pgs::rigid) fn clear_batch_impulses(&mut self) {
        let z = Fw::splat(0.0);
        for state in self.batch_state.iter_mut() {
            for unit in state.unit.iter_mut() {
                unit.ln = [z; 2];
            }
            (state.lt1, state.lt2, state.l_twist) = (z, z, z);
        }
    }
}
