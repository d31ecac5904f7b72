//! What a batch's rows change through a frame, kept on the lanes beside the batch: each
//! point's separation, bias, mass and impulse scales, `1/(m·s)`, normal impulse and relax
//! bias, and each manifold's friction and twist impulses ([`BatchState`]); what the separations
//! at the bodies' poses read of each point ([`BatchCarried`]: its separation and point at the
//! frame's start, its arms in each body's frame); and, apart, the world arms of each point and
//! manifold centre ([`BatchArms`]), which only the end separations at the velocities and the
//! rows written whole read.
//!
//! A batch built from the rows takes these from its points and manifolds
//! ([`RigidSi::load_batches`]); one built from the contacts makes them itself (`build`).
//! Every pass of the frame then works on the lanes alone: a later substep's contact updates
//! ([`RigidSi::advance_batches`]), the warm start, the sweeps, and the end separations of the
//! stopping test and the relax pass ([`RigidSi::end_batches`]; with `relax_separation =
//! "poses"` the relax sweep measures its own at the poses and sets up the next substep's rows,
//! [`SidePoses`], [`soft_rows`]). The step's kept impulses (and
//! so the forces) take the batched points' impulses from the batches
//! ([`RigidSi::batch_impulses_into`]) and the manifolds get their friction back
//! ([`RigidSi::store_batch_friction`]); the points get their state back
//! ([`RigidSi::store_batches`]) only before a pass that reads them: the restitution and
//! position passes, a rebuild of the colours. Each lane does the scalar arithmetic of those
//! passes operation for operation, so the numbers are the same bit for bit
//! (`tests/colored.rs`).
//!
//! (Gathered from the points at every visit, these fields cost each point's cache lines in
//! every pass; the updates and end separations ran point by point on the scalar rows.)

use super::simd::{Mw, Qw};
use super::*;
use crate::pgs::rigid::warm_map::WarmPoint;

/// One pair of normal rows of each lane ([`UnitLanes`]): what changes, per point of the pair
/// `(p, q)`. (A lane without the pair holds its first pair's values, which no visit keeps.)
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PairState {
    /// Separation (m).
    pub(super) s: [Fw; 2],
    pub(super) bias: [Fw; 2],
    pub(super) mass_scale: [Fw; 2],
    pub(super) impulse_scale: [Fw; 2],
    /// `1/(mn·mass_scale)` and `1/mn` by pass ([`Point::inv_mn`]): `inv_mn[pass][point]`.
    pub(super) inv_mn: [[Fw; 2]; 2],
    pub(super) ln: [Fw; 2],
    pub(super) relax_bias: [Fw; 2],
    /// The biased pass's block solve at these mass scales ([`PairSolve`]).
    pub(super) solve: PairSolve,
}

/// What a batch's rows change through a frame (see the module).
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::pgs::rigid) struct BatchState {
    pub(super) unit: [PairState; 2],
    pub(super) lt1: Fw,
    pub(super) lt2: Fw,
    pub(super) l_twist: Fw,
    /// The largest penetration of the batch's points at the poses its last relax sweep
    /// measured them at (m; `relax_separation = "poses"`).
    pub(in crate::pgs::rigid) end_worst: f64,
}

/// What the separations at the bodies' poses read of one pair of points of each lane
/// ([`Carried`]), per point of the pair: the separation and point at the frame's start and the
/// arms in each body's frame.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PairCarried {
    pub(super) s0: [Fw; 2],
    pub(super) p0: [Vw; 2],
    pub(super) la: [Vw; 2],
    pub(super) lb: [Vw; 2],
}

/// What the separations at the bodies' poses read of a batch's points (see the module): the
/// relax sweep at the poses and a later substep's contact update.
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::pgs::rigid) struct BatchCarried {
    pub(super) unit: [PairCarried; 2],
}

/// The arms in the world's frame of one pair of points of each lane (those of [`Point`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PairArms {
    pub(super) ra: [Vw; 2],
    pub(super) rb: [Vw; 2],
}

/// The world arms of a batch's points, read by the end separations at the velocities
/// ([`RigidSi::end_batches`]), and of its manifolds' centres, read only when the rows are
/// written whole again ([`RigidSi::store_full`]): apart from [`BatchCarried`], which the relax
/// sweep at the poses streams (together, 480 of their 1,120 bytes a batch went past it
/// unread).
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::pgs::rigid) struct BatchArms {
    pub(super) unit: [PairArms; 2],
    pub(super) centre: [Vw; 2],
}

/// The soft rows' coefficients of one step `(bias rate, mass scale, impulse scale)`, between
/// movable bodies and against a fixed body or the world ([`soft`]).
pub(in crate::pgs::rigid) type Softness = ((f64, f64, f64), (f64, f64, f64));

/// `1/k`, or 0 for `k ≤ 0`, lane by lane ([`inverse`]; the effective masses of
/// [`JacobianRow::effective_mass`]).
#[inline(always)]
pub(super) fn inverse_lanes(k: Fw) -> Fw {
    let z = Fw::splat(0.0);
    (Fw::splat(1.0) / k).select(k.gt(z), z)
}

impl Batch {
    /// The index of lane `l`'s point `j` (0 or 1) of pair `u` (its first pair's when it has no
    /// pair `u`).
    #[inline(always)]
    fn point(&self, l: usize, u: usize, j: usize) -> usize {
        self.start[l] + if self.has[u][l] { 2 * u } else { 0 } + j
    }

    /// Lane `l`'s manifold has pair `u`.
    #[inline(always)]
    fn holds(&self, l: usize, u: usize) -> bool {
        l < self.n && self.has[u][l]
    }
}

impl BatchState {
    /// The state of `batch`'s rows from their points and manifolds.
    fn load(batch: &Batch, points: &[Point], manifolds: &[Manifold]) -> Self {
        let mut out = BatchState::default();
        for u in 0..batch.units {
            let st = &mut out.unit[u];
            for j in 0..2 {
                let p = |l: usize| &points[batch.point(l, u, j)];
                st.s[j] = Fw::from_fn(|l| p(l).s);
                st.bias[j] = Fw::from_fn(|l| p(l).bias);
                st.mass_scale[j] = Fw::from_fn(|l| p(l).mass_scale);
                st.impulse_scale[j] = Fw::from_fn(|l| p(l).impulse_scale);
                st.inv_mn[0][j] = Fw::from_fn(|l| p(l).inv_mn[0]);
                st.inv_mn[1][j] = Fw::from_fn(|l| p(l).inv_mn[1]);
                st.ln[j] = Fw::from_fn(|l| p(l).ln);
                st.relax_bias[j] = Fw::from_fn(|l| p(l).relax_bias);
            }
            if batch.paired {
                st.solve = PairSolve::new(&batch.unit[u], Some(st.mass_scale));
            }
        }
        out.load_impulses_of_manifolds(batch, manifolds);
        out
    }

    /// The manifolds' friction and twist impulses.
    fn load_impulses_of_manifolds(&mut self, batch: &Batch, manifolds: &[Manifold]) {
        let m = |l: usize| &manifolds[batch.manifold[l]];
        self.lt1 = Fw::from_fn(|l| m(l).lt1);
        self.lt2 = Fw::from_fn(|l| m(l).lt2);
        self.l_twist = Fw::from_fn(|l| m(l).l_twist);
    }

    /// Writes the state back to `batch`'s points and manifolds.
    fn store(&self, batch: &Batch, points: &mut [Point], manifolds: &mut [Manifold]) {
        for u in 0..batch.units {
            let st = &self.unit[u];
            for l in (0..W).filter(|&l| batch.holds(l, u)) {
                for j in 0..2 {
                    let p = &mut points[batch.point(l, u, j)];
                    p.s = st.s[j].lane(l);
                    p.bias = st.bias[j].lane(l);
                    p.mass_scale = st.mass_scale[j].lane(l);
                    p.impulse_scale = st.impulse_scale[j].lane(l);
                    p.inv_mn = [st.inv_mn[0][j].lane(l), st.inv_mn[1][j].lane(l)];
                    p.ln = st.ln[j].lane(l);
                    p.relax_bias = st.relax_bias[j].lane(l);
                }
            }
        }
        for l in 0..batch.n {
            let m = &mut manifolds[batch.manifold[l]];
            (m.lt1, m.lt2, m.l_twist) = (self.lt1.lane(l), self.lt2.lane(l), self.l_twist.lane(l));
        }
    }
}

impl BatchCarried {
    /// What `batch`'s points carry through the frame.
    fn load(batch: &Batch, carried: &[Carried]) -> Self {
        let mut out = BatchCarried::default();
        for u in 0..batch.units {
            let c = &mut out.unit[u];
            for j in 0..2 {
                let k = |l: usize| batch.point(l, u, j);
                c.s0[j] = Fw::from_fn(|l| carried[k(l)].s0);
                c.p0[j] = Vw::from_fn(|l| carried[k(l)].p0);
                c.la[j] = Vw::from_fn(|l| carried[k(l)].la);
                c.lb[j] = Vw::from_fn(|l| carried[k(l)].lb);
            }
        }
        out
    }
}

impl BatchArms {
    /// The world arms of `batch`'s points and manifolds' centres.
    fn load(batch: &Batch, points: &[Point], manifolds: &[Manifold]) -> Self {
        let mut out = BatchArms::default();
        let m = |l: usize| &manifolds[batch.manifold[l]];
        out.centre = [Vw::from_fn(|l| m(l).ra), Vw::from_fn(|l| m(l).rb)];
        for u in 0..batch.units {
            let c = &mut out.unit[u];
            for j in 0..2 {
                let k = |l: usize| batch.point(l, u, j);
                c.ra[j] = Vw::from_fn(|l| points[k(l)].ra);
                c.rb[j] = Vw::from_fn(|l| points[k(l)].rb);
            }
        }
        out
    }
}

/// A body's position and orientation.
pub(in crate::pgs::rigid) type Pose = (Vec3, nalgebra::UnitQuaternion<f64>);

/// The positions and orientations of the bodies on both sides of a batch's lanes (the world's
/// at the origin, unturned), and the lanes that have a body `b`.
pub(super) struct SidePoses {
    xa: Vw,
    qa: Qw,
    xb: Vw,
    qb: Qw,
    with_b: Mw,
}

impl SidePoses {
    /// The poses of `batch`'s bodies, body `k`'s being `pose(k)`.
    #[inline(always)]
    pub(super) fn of(pose: impl Fn(usize) -> Pose, batch: &Batch) -> Self {
        let side = |a_side: bool| {
            let body = |l: usize| if a_side { Some(batch.a[l]) } else { batch.b[l] };
            let x = Vw::from_fn(|l| body(l).map_or(Vec3::zeros(), |k| pose(k).0));
            let q = Qw::from_fn(|l| body(l).map_or(nalgebra::UnitQuaternion::identity(), |k| pose(k).1));
            (x, q)
        };
        let ((xa, qa), (xb, qb)) = (side(true), side(false));
        SidePoses { xa, qa, xb, qb, with_b: Mw::of(std::array::from_fn(|l| batch.b[l].is_some())) }
    }

    /// The separations of pair slot `unit` (carrying `c`) at these poses: each point's
    /// separation at the frame's start moved on by how far the bodies carried its two ends,
    /// `s = s₀ + n·(Δp_a − Δp_b)` ([`RigidSi::advance`]'s, lane by lane).
    #[inline(always)]
    pub(super) fn separations(&self, unit: &UnitLanes, c: &PairCarried) -> [Fw; 2] {
        let z = Fw::splat(0.0);
        let zero = Vw { x: z, y: z, z };
        // (Written out point by point: through `std::array::from_fn` the closure was not
        // inlined, a call per point of the relax sweep, 0.8 % of the 4,095-box pyramid's run.)
        #[inline(always)]
        fn one(poses: &SidePoses, n: &Vw, c: &PairCarried, j: usize, zero: Vw) -> Fw {
            let moved_a = (poses.xa + poses.qa.transform(&c.la[j])) - c.p0[j];
            let moved_b = ((poses.xb + poses.qb.transform(&c.lb[j])) - c.p0[j]).select(poses.with_b, zero);
            c.s0[j] + n.dot(&(moved_a - moved_b))
        }
        [one(self, &unit.np, c, 0, zero), one(self, &unit.nq, c, 1, zero)]
    }
}

/// The soft rows' coefficients `(bias rate, mass scale, impulse scale)` of each lane of
/// `batch`: against a fixed body or the world the second of `softness` (`static_contact_hertz`,
/// as in `prepare`).
#[inline(always)]
pub(super) fn soft_coefficients(batch: &Batch, (between, against_fixed): Softness) -> (Fw, Fw, Fw) {
    let fixed: Mask = std::array::from_fn(|l| !(batch.ma[l] && batch.mb[l]));
    let coefficient =
        |g: fn(&(f64, f64, f64)) -> f64| Fw::from_fn(|l| if fixed[l] { g(&against_fixed) } else { g(&between) });
    (coefficient(|c| c.0), coefficient(|c| c.1), coefficient(|c| c.2))
}

/// Pair slot `u` of `batch` (its state `s`, set up at the frame's start or at an earlier
/// substep) set up for a biased pass at separations `sep`: the separations, the bias (`s/h`
/// ahead of contact, else the soft rate's, pushing at most `−push`), the mass and impulse
/// scales, and, where a mass scale changed, `1/(m·s)` and the block's solve (which depend on
/// the frame's rows and the mass scales alone: the same numbers, without their divisions when
/// no point crossed into or out of contact), with the coefficients of [`soft_coefficients`]
/// and `hw` the step.
#[inline(always)]
pub(super) fn soft_rows(
    batch: &Batch,
    u: usize,
    s: &mut PairState,
    sep: [Fw; 2],
    (rate, soft_mass, soft_impulse): (Fw, Fw, Fw),
    (hw, push): (Fw, Fw),
) {
    let (z, one) = (Fw::splat(0.0), Fw::splat(1.0));
    let unit = &batch.unit[u];
    let mut changed = false;
    for (j, sep) in sep.into_iter().enumerate() {
        let ahead = sep.gt(z);
        s.s[j] = sep;
        s.bias[j] = (sep / hw).select(ahead, (rate * sep).max(push));
        let scale = one.select(ahead, soft_mass);
        s.impulse_scale[j] = z.select(ahead, soft_impulse);
        if scale.eq(s.mass_scale[j]).flags().iter().all(|&same| same) {
            continue;
        }
        changed = true;
        s.mass_scale[j] = scale;
        // (The rows' effective masses are the frame's: only the mass scale changed. A scale of
        // 1, `1/(mn·1)`, is the unscaled `1/mn`.)
        let mn = if j == 0 { unit.mn_p } else { unit.mn_q };
        let unit_scale = scale.eq(one);
        s.inv_mn[0][j] = s.inv_mn[1][j].select(unit_scale, inverse_lanes(mn * scale));
    }
    if batch.paired && changed {
        s.solve = PairSolve::new(unit, Some(s.mass_scale));
    }
}

/// `write` over the batches built from the contacts' runs and their states, with the items
/// (points, contacts or manifolds, by index) they write: on all threads in pieces of
/// consecutive batches, each piece given its own items `items[start..end]` (with `start`, the
/// index of its first; the batches' items follow one another, `span` giving each batch's
/// range), the pieces found from their first and last batches only; else (few batches, or
/// batches built otherwise, `follow` false) all on the calling thread.
fn for_batch_pieces<T: Send>(
    (batches, states): (&[Batch], &[BatchState]),
    items: &mut [T],
    follow: bool,
    span: impl Fn(&Batch) -> (usize, usize),
    write: impl Fn(&[Batch], &[BatchState], &mut [T], usize) + Sync,
) {
    let step = (par_min() / 8).max(1);
    if batches.len() <= step || !follow {
        write(batches, states, items, 0);
        return;
    }
    let mut pieces = Vec::with_capacity(batches.len() / step + 1);
    let (mut rest, mut at) = (items, 0);
    for (bs, ss) in batches.chunks(step).zip(states.chunks(step)) {
        let (start, end) = (span(&bs[0]).0, span(&bs[bs.len() - 1]).1);
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - at);
        let (own, tail) = tail.split_at_mut(end - start);
        pieces.push((bs, ss, own, start));
        (rest, at) = (tail, end);
    }
    pieces.into_par_iter().for_each(|(bs, ss, own, start)| write(bs, ss, own, start));
}

/// A batch's points, `start[0]..` its last lane's end (they follow one another when built from
/// the contacts' runs).
fn point_span(b: &Batch) -> (usize, usize) {
    (b.start[0], b.start[b.n - 1] + b.len[b.n - 1])
}

impl RigidSi {
    /// Hands each batch its rows' state and carried fields from its points and manifolds
    /// (see this module's doc); the batches were just built.
    pub(in crate::pgs::rigid) fn load_batches(&mut self) {
        let (points, manifolds, carried) = (&self.points, &self.manifolds, &self.carried);
        let batches = &self.batches;
        fill(&mut self.batch_state, batches.len(), par_min() / 4, |k| BatchState::load(&batches[k], points, manifolds));
        fill(&mut self.batch_carried, batches.len(), par_min() / 4, |k| BatchCarried::load(&batches[k], carried));
        fill(&mut self.batch_arms, batches.len(), par_min() / 4, |k| BatchArms::load(&batches[k], points, manifolds));
    }

    /// The first substep's warm start of the batched manifolds ([`RigidSi::warm_start`]): each
    /// point's impulse of the last step, found by pair and feature or nearest point within
    /// `radius2` (squared), and each manifold's friction and twist impulses projected on its
    /// tangents, times `warm_start` (a sleeping island keeps them as they were, unscaled).
    pub(in crate::pgs::rigid) fn warm_batches(&mut self, warm_start: f64, radius2: f64) {
        let (contacts, warm, awake, manifolds) = (&self.contacts, &self.warm, &self.awake, &self.manifolds);
        for (batch, state) in self.batches.iter().zip(self.batch_state.iter_mut()) {
            for l in 0..batch.n {
                let m = &manifolds[batch.manifold[l]];
                let ws = if m.island != usize::MAX && awake[m.island] { warm_start } else { 1.0 };
                if ws == 0.0 {
                    continue;
                }
                let c = &contacts[m.start];
                let Some((previous, friction, twist)) = warm.get_at(batch.manifold[l], &(c.a, c.b)) else { continue };
                for j in 0..batch.len[l] {
                    if let Some(ln) = matched_impulse(previous, &contacts[m.start + j], radius2) {
                        let slot = &mut state.unit[j / 2].ln[j % 2];
                        *slot = slot.with_lane(l, ln * ws);
                    }
                }
                state.lt1 = state.lt1.with_lane(l, friction.dot(&m.t1) * ws);
                state.lt2 = state.lt2.with_lane(l, friction.dot(&m.t2) * ws);
                state.l_twist = state.l_twist.with_lane(l, twist * ws);
            }
        }
    }

    /// The batches' friction and twist impulses back in their manifolds, for the next step's
    /// warm start and the forces.
    pub(in crate::pgs::rigid) fn store_batch_friction(&mut self) {
        // Each batch's manifolds in `manifolds`, whose index 0 is manifold `at`.
        let write = |batches: &[Batch], states: &[BatchState], manifolds: &mut [Manifold], at: usize| {
            for (batch, state) in batches.iter().zip(states) {
                for l in 0..batch.n {
                    let m = &mut manifolds[batch.manifold[l] - at];
                    (m.lt1, m.lt2, m.l_twist) = (state.lt1.lane(l), state.lt2.lane(l), state.l_twist.lane(l));
                }
            }
        };
        // On all threads, in pieces of consecutive batches, where each batch's manifolds follow
        // one another and the batches' follow theirs (the batches built from the contacts'
        // runs); else on the calling thread. (0.7 % of the 4,095-box pyramid's two-thread
        // frame on the calling thread.)
        let (batches, states) = (&self.batches[..], &self.batch_state[..]);
        let consecutive = || {
            let own = |b: &Batch| (0..b.n).all(|l| b.manifold[l] == b.manifold[0] + l);
            batches.iter().all(own) && batches.windows(2).all(|w| w[0].manifold[0] + w[0].n <= w[1].manifold[0])
        };
        let follow = self.from_contacts;
        debug_assert!(!follow || consecutive(), "the batches built from the contacts follow one another");
        let span = |b: &Batch| (b.manifold[0], b.manifold[0] + b.n);
        for_batch_pieces((batches, states), &mut self.manifolds, follow, span, write);
    }

    /// The batched points' normal impulses into the kept impulses `warm` (by contact, as
    /// [`RigidSi::finish`] fills them), where the forces read them too; the batched points' own
    /// stay stale (their cache lines untouched).
    pub(in crate::pgs::rigid) fn batch_impulses_into(&self, warm: &mut [WarmPoint]) {
        // Each batch's points into `warm`, whose index 0 is point `at`.
        let write = |batches: &[Batch], states: &[BatchState], warm: &mut [WarmPoint], at: usize| {
            for (batch, state) in batches.iter().zip(states) {
                for u in 0..batch.units {
                    for l in (0..W).filter(|&l| batch.holds(l, u)) {
                        for j in 0..2 {
                            warm[batch.point(l, u, j) - at].2 = state.unit[u].ln[j].lane(l);
                        }
                    }
                }
            }
        };
        // On all threads, in pieces of consecutive batches, where the batches' points follow
        // one another (the batches built from the contacts' runs), each piece writing its own
        // points; else on the calling thread. (On the calling thread, 1.6 % of
        // the 4,095-box pyramid's two-thread frame.)
        let (batches, states) = (&self.batches[..], &self.batch_state[..]);
        let consecutive = || {
            let lanes_follow = |b: &Batch| (1..b.n).all(|l| b.start[l] == b.start[l - 1] + b.len[l - 1]);
            batches.iter().all(lanes_follow) && batches.windows(2).all(|w| point_span(&w[0]).1 <= point_span(&w[1]).0)
        };
        // (The batches built from the contacts' runs are so by construction; checking cost a
        // serial pass over the batches.)
        let follow = self.from_contacts;
        debug_assert!(!follow || consecutive(), "the batches built from the contacts follow one another");
        for_batch_pieces((batches, states), warm, follow, point_span, write);
    }

    /// Whether every point is batched (the passes over the points alone then have nothing to
    /// do).
    pub(in crate::pgs::rigid) fn all_batched(&self) -> bool {
        self.batched_points == self.points.len()
    }

    /// Writes each batch's state back to its points and manifolds (see this module's doc).
    pub(in crate::pgs::rigid) fn store_batches(&mut self) {
        for (batch, state) in self.batches.iter().zip(&self.batch_state) {
            state.store(batch, &mut self.points, &mut self.manifolds);
        }
    }

    /// Writes one batch's state back to its points and manifolds.
    pub(in crate::pgs::rigid) fn store_batch(
        batch: &Batch,
        state: &BatchState,
        points: &mut [Point],
        manifolds: &mut [Manifold],
    ) {
        state.store(batch, points, manifolds);
    }

    /// Reads one batch's state again from its points and manifolds.
    pub(in crate::pgs::rigid) fn reload_batch(
        batch: &Batch,
        state: &mut BatchState,
        points: &[Point],
        manifolds: &[Manifold],
    ) {
        *state = BatchState::load(batch, points, manifolds);
    }

    /// [`RigidSi::advance`]'s contact update on the batches' lanes: each point's separation
    /// `s = s₀ + n·(Δp_a − Δp_b)` moved on by how far the bodies carried its two ends, its
    /// bias, mass and impulse scales from it (soft rows: `softness`, against a fixed body or the
    /// world the second), and `1/(m·s)` (unless the last relax sweep at the poses set them up
    /// already); with `last` (the frame's last substep), each contact's separation too.
    pub(in crate::pgs::rigid) fn advance_batches(
        &mut self,
        st: &[RigidState],
        h: f64,
        softness: Softness,
        max_push: f64,
        last: bool,
    ) {
        let (hw, push) = (Fw::splat(h), Fw::splat(-max_push));
        // (A relax sweep at the poses set them up already: `relax_separation = "poses"`.)
        if !std::mem::take(&mut self.batches_ahead) {
            let rows = self.batches.par_iter().zip(self.batch_state.par_iter_mut()).zip(self.batch_carried.par_iter());
            rows.with_min_len(par_min() / 4).for_each(|((batch, state), carried)| {
                let sides = SidePoses::of(|k| (st[k].x, st[k].q), batch);
                let coefficients = soft_coefficients(batch, softness);
                for u in 0..batch.units {
                    let sep = sides.separations(&batch.unit[u], &carried.unit[u]);
                    soft_rows(batch, u, &mut state.unit[u], sep, coefficients, (hw, push));
                }
            });
        }
        if last {
            self.batch_separations();
        }
    }

    /// Each batched contact's separation from its batch's state (the frame's last substep):
    /// on all threads, in pieces of consecutive batches, where the batches' points follow one
    /// another (the batches built from the contacts' runs), each piece's contacts split apart
    /// first; else on the calling thread. (The pieces are found from their first and last
    /// batches: a check and a split of every batch on the calling thread were 0.7 % of the
    /// 4,095-box pyramid's two-thread frame.)
    fn batch_separations(&mut self) {
        let write = |batches: &[Batch], states: &[BatchState], contacts: &mut [RigidContact], first: usize| {
            for (batch, state) in batches.iter().zip(states) {
                for u in 0..batch.units {
                    for j in 0..2 {
                        let sep = state.unit[u].s[j];
                        for l in (0..W).filter(|&l| batch.holds(l, u)) {
                            contacts[batch.point(l, u, j) - first].point.separation = sep.lane(l);
                        }
                    }
                }
            }
        };
        let (batches, states) = (&self.batches[..], &self.batch_state[..]);
        for_batch_pieces((batches, states), &mut self.contacts, self.from_contacts, point_span, write);
    }

    /// The separation each batched point reaches at the end of the step at the current
    /// velocities ([`RigidSi::end_separation`], without pseudo velocities: no batches are built
    /// with split rows), kept as its relax pass's bias `max(s_end/h, 0)`; the largest `−s_end`
    /// (0 with none).
    pub(in crate::pgs::rigid) fn end_batches(&mut self, st: &[RigidState], h: f64) -> f64 {
        debug_assert!(!self.pseudo, "no batches with split rows");
        let hw = Fw::splat(h);
        let z = Fw::splat(0.0);
        let rows = self.batches.par_iter().zip(self.batch_state.par_iter_mut()).zip(self.batch_arms.par_iter());
        // (The largest of maxima: the same number in any grouping.)
        let each = |((batch, state), arms): ((&Batch, &mut BatchState), &BatchArms)| {
            let mut worst = 0.0_f64;
            let side = |a_side: bool| {
                let body = |l: usize| if a_side { Some(batch.a[l]) } else { batch.b[l] };
                let v = Vw::from_fn(|l| body(l).map_or(Vec3::zeros(), |k| st[k].v));
                let w = Vw::from_fn(|l| body(l).map_or(Vec3::zeros(), |k| st[k].w));
                (v, w)
            };
            let ((va, wa), (vb, wb)) = (side(true), side(false));
            for u in 0..batch.units {
                let (c, s, unit) = (&arms.unit[u], &mut state.unit[u], &batch.unit[u]);
                for j in 0..2 {
                    let n = if j == 0 { &unit.np } else { &unit.nq };
                    // (The world's zero velocities add an exact zero: the scalar visit's
                    // relative velocity, which leaves them out.)
                    let rel = (va + wa.cross(&c.ra[j])) - (vb + wb.cross(&c.rb[j]));
                    let end = s.s[j] + hw * n.dot(&rel);
                    s.relax_bias[j] = (end / hw).max(z);
                    let end = end.lanes();
                    for l in (0..W).filter(|&l| batch.holds(l, u)) {
                        worst = worst.max(-end[l]);
                    }
                }
            }
            worst
        };
        rows.with_min_len(par_min() / 4).map(each).reduce(|| 0.0, f64::max)
    }
}
