//! Coloured sweeps of the rigid rows (`rigid_order = "colored"`): the joints and manifolds of each
//! island group coloured so that no two of one colour share a movable body, and the sweeps run
//! colour by colour, the rows of a colour on all threads at once.
//!
//! The colours are made in [`super::coloring`]. Colouring is greedy, the joints among themselves, then the manifolds among themselves, each in
//! its order: a row takes the lowest of 64 colours that neither of its movable bodies has yet (a
//! fixed body or the world takes no colour, as in Box2D v3's constraint graph); a row that finds
//! none goes to an overflow colour visited after the others, one row after the other. A sweep
//! visits the joints' colours, then the manifolds' (joints before contacts, as the natural order
//! and Rapier do: with joints and contacts sharing colours, the last contacts of a sweep were no
//! longer all contacts, and the three falling ragdolls of `rigid-ragdoll` sank 5.5–7.4 cm
//! instead of 3 cm). Within a colour each row reads and writes only its own
//! bodies' velocities, so the colour's rows can run in any order, or at once, and give the same
//! numbers. A colour of at least [`PARALLEL_ROWS`] rows runs on all threads, in chunks of
//! [`CHUNK`] rows whose statistics are summed chunk by chunk, on one thread as on several; a
//! smaller one runs on the calling thread. A pass with a large colour runs on velocities the
//! threads share ([`SharedVel`]), each row's bodies loaded and stored back by the thread that
//! visits it, so that nothing of a large colour is left for the calling thread alone. Which colours run in parallel depends on their sizes
//! alone, so a coloured sweep's every number is the same on any number of threads
//! (`tests/colored.rs`).

use super::lanes::on_lanes;
use super::lanes::{Batch, BatchCarried, BatchState};
use super::sweep::{joint_stats, AtPoses, Visit, LANES};
use super::velocities::{BodyVel, Direct, InPlace, Local, Shared, SharedVel, Store};
use super::*;
use crate::pgs::joints::Velocities;

/// The most bodies a pass on the calling thread works on in their own states
/// ([`RigidState`]), without the compact copy of their velocities ([`BodyVel`]) in and out:
/// 4,096 states take 480 kB, inside a second-level cache (the 210-box pyramid's copies were
/// 3.6 % of its frame's samples; with 2,048 here, the 4,095-box pyramid's one-thread frame took
/// 2–5 % longer on an Intel host with 2 MB of it a core, alternated 8 times each way). The copy
/// pays where the states outgrow the cache, the 10,000 spheres' 1.2 MB.
const DIRECT_BODIES: usize = 4096;

/// Rows per parallel task of a coloured sweep, and the unit its statistics are summed in.
pub(super) const CHUNK: usize = 32;

/// The fewest rows a colour runs on all threads with: a smaller colour runs on the calling
/// thread, where it costs less than handing it out (the pool wakes in some 10 µs here; a row
/// costs some 0.1–0.3 µs).
const PARALLEL_ROWS: usize = 512;

/// One colour of a group: `order[m.0..m.1]` and `joint_order[j.0..j.1]`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ColorSpan {
    pub(super) m: (usize, usize),
    pub(super) j: (usize, usize),
    /// The overflow colour: its rows may share bodies, so they go one after the other.
    pub(super) overflow: bool,
    /// Its manifolds' batches, `RigidSi::batches[batches.0..batches.1]` ([`super::lanes`]).
    pub(super) batches: (usize, usize),
    /// Its manifolds lie one after the other in memory (`order[m.0..m.1]` consecutive), as the
    /// sort by colour lays them out when every manifold is awake: found once when the colours
    /// are made, where each coloured pass looked through the order again.
    pub(super) contiguous: bool,
}

/// Whether a colour is large: its rows run on all threads, and their statistics are summed
/// in chunks of [`CHUNK`] rows (on one thread too).
pub(super) fn large(span: &ColorSpan) -> bool {
    !span.overflow && large_rows(span.j.1 - span.j.0 + span.m.1 - span.m.0)
}

/// Whether a colour (not the overflow colour) of `rows` rows is large ([`large`]).
pub(super) fn large_rows(rows: usize) -> bool {
    rows >= PARALLEL_ROWS
}

/// How many manifolds from `order[o]` (before `end`, in one colour) a sweep visits together
/// in a colour that is not large: up to [`LANES`], while each has at most four points (a box
/// on a plane can hold eight), and at least one.
pub(super) fn lanes_at(order: &[usize], manifolds: &[Manifold], o: usize, end: usize) -> usize {
    let next = &order[o..o + LANES.min(end - o)];
    next.iter().take_while(|&&i| manifolds[i].end - manifolds[i].start <= 4).count().max(1)
}

/// A row of a coloured pass with its two bodies' velocities, copied in from the shared
/// velocities when its chunk runs and written back right after ([`Local::load`],
/// [`Local::store`]).
struct Task<'a> {
    row: Row<'a>,
    local: Local,
}

enum Row<'a> {
    Joint(&'a mut JointRows),
    Manifold(&'a mut Manifold, &'a mut [Point]),
}

/// What a coloured pass does to one row.
#[derive(Clone, Copy)]
pub(super) enum ColorPass<'a> {
    /// A sweep ([`Visit::joint`], [`Visit::manifold`]).
    Sweep(Visit<'a>),
    /// The warm start of a carried substep ([`Visit::warm_manifold`]; joints are left alone).
    Warm(Visit<'a>, f64),
    /// The joints' warm start ([`JointRows::apply_warm`]; manifolds are left alone).
    WarmJoints(Visit<'a>),
}

/// Which [`ColorPass`] a coloured pass makes.
#[derive(Clone, Copy)]
enum Kind {
    Sweep,
    /// The manifolds' warm start times the scale.
    Warm(f64),
    WarmJoints,
}

impl<'a> ColorPass<'a> {
    /// The pass of `kind` with `visit`.
    fn new(visit: Visit<'a>, kind: Kind) -> Self {
        match kind {
            Kind::Sweep => ColorPass::Sweep(visit),
            Kind::Warm(scale) => ColorPass::Warm(visit, scale),
            Kind::WarmJoints => ColorPass::WarmJoints(visit),
        }
    }

    /// This pass on one task, its statistics added to `acc`.
    fn run(&self, task: &mut Task, acc: &mut SweepStats) {
        let pair = &mut task.local;
        match (self, &mut task.row) {
            (ColorPass::Sweep(visit), Row::Joint(rows)) => visit.joint(pair, rows, acc),
            (ColorPass::Sweep(visit), Row::Manifold(m, points)) => visit.manifold(pair, m, points, acc),
            (ColorPass::Warm(..), Row::Joint(_)) | (ColorPass::WarmJoints(_), Row::Manifold(..)) => {}
            (ColorPass::Warm(visit, scale), Row::Manifold(m, points)) => visit.warm_manifold(pair, m, points, *scale),
            (ColorPass::WarmJoints(visit), Row::Joint(rows)) => rows.apply_warm(pair, visit.inv_m, visit.inv_i),
        }
    }
}

/// One chunk of a large colour in a parallel pass: its first place in `order`, its manifolds
/// and their points, and its batches and their states.
type Chunk<'a> =
    (usize, (&'a mut [Manifold], &'a mut [Point]), (&'a [Batch], &'a mut [BatchState], &'a [BatchCarried]));

/// Adds one chunk's statistics to `acc`.
fn add(acc: &mut SweepStats, s: SweepStats) {
    *acc = (acc.0.max(s.0), acc.1 + s.1, acc.2 + s.2, acc.3 + s.3);
}

impl RigidSi {
    /// A sweep of coloured group `g` (see [`RigidSi::sweep`] and the module docs).
    pub(super) fn colored_sweep(
        &mut self,
        g: usize,
        st: &mut [RigidState],
        omega: f64,
        pass: Pass,
        friction: bool,
    ) -> SweepStats {
        self.colored_pass(Some(g), st, (omega, pass, friction), Kind::Sweep)
    }

    /// The warm start of a carried substep, colour by colour (see [`Visit::warm_manifold`]).
    pub(super) fn colored_warm(&mut self, st: &mut [RigidState], scale: f64) {
        self.colored_pass(None, st, (1.0, Pass::Biased, false), Kind::Warm(scale));
    }

    /// The joints' warm start ([`JointRows::apply_warm`]), colour by colour.
    pub(super) fn colored_warm_joints(&mut self, st: &mut [RigidState]) {
        self.colored_pass(None, st, (1.0, Pass::Biased, false), Kind::WarmJoints);
    }

    /// A sweep (or a warm start, by `kind`) over every row of group `g` (every
    /// group with `None`), colour by colour, on a copy of the velocities written back at the
    /// end: the compact copy when every colour runs on the calling thread
    /// ([`RigidSi::calling_thread_rows`]), the shared one when a large colour runs on all
    /// threads ([`RigidSi::all_threads_rows`]).
    fn colored_pass(
        &mut self,
        g: Option<usize>,
        st: &mut [RigidState],
        settings: (f64, Pass, bool),
        kind: Kind,
    ) -> SweepStats {
        let spans = match g {
            Some(g) => self.groups[g].colors,
            None => (0, self.colors.len()),
        };
        let min = par_min();
        if rayon::current_num_threads() == 1 || !self.colors[spans.0..spans.1].iter().any(large) {
            if st.len() <= DIRECT_BODIES {
                return self.calling_thread_rows(spans, st, settings, kind);
            }
            let mut compact = std::mem::take(&mut self.compact);
            fill(&mut compact, st.len(), min, |k| BodyVel { v: st[k].v, w: st[k].w });
            let acc = self.calling_thread_rows(spans, compact.as_mut_slice(), settings, kind);
            st.par_iter_mut().zip(compact.par_iter()).with_min_len(min).for_each(|(s, c)| (s.v, s.w) = (c.v, c.w));
            self.compact = compact;
            return acc;
        }
        // (The bodies' copies in and out on all threads from a quarter of the rows' threshold,
        // as the other passes over bodies: the 4,095-box pyramid's, one short of it, ran on
        // the calling thread twice a pass.)
        let bodies = min / 4;
        let mut shared = std::mem::take(&mut self.shared);
        fill(&mut shared, st.len(), bodies, |k| SharedVel::new(st[k].v, st[k].w));
        let acc = self.all_threads_rows(spans, &mut shared, settings, kind);
        st.par_iter_mut().zip(shared.par_iter()).with_min_len(bodies).for_each(|(s, c)| (s.v, s.w) = c.get());
        self.shared = shared;
        acc
    }

    /// [`RigidSi::colored_pass`]'s colours `colors[spans.0..spans.1]` on the calling thread,
    /// on the compact velocities `st`: the rows straight on the bodies, a large colour's
    /// statistics summed in the chunks of the parallel visit (the same numbers as on all
    /// threads).
    fn calling_thread_rows<S: ?Sized + Store>(
        &mut self,
        spans: (usize, usize),
        st: &mut S,
        (omega, pass, friction): (f64, Pass, bool),
        kind: Kind,
    ) -> SweepStats {
        let mut visit = Visit::new((&self.inv_m, &self.inv_i), omega, pass, friction, self.cone, &self.couplings);
        visit.joint_lanes = self.lanes;
        visit.at_poses = AtPoses::in_pass(pass, &self.poses, self.relax_at_poses);
        let what = ColorPass::new(visit, kind);
        let mut acc = (0.0_f64, 0.0, 0usize, 0.0);
        let mut vel = Direct { st, inv_m: &self.inv_m };
        for span in &self.colors[spans.0..spans.1] {
            let rows = (&mut self.joints[..], &mut self.manifolds[..], &mut self.points[..]);
            let (b0, b1) = span.batches;
            let batches = (&self.batches[b0..b1], &mut self.batch_state[b0..b1], &self.batch_carried[b0..b1]);
            direct_span(span, &self.order, batches, rows, &mut vel, what, &mut acc, large(span));
        }
        acc
    }

    /// [`RigidSi::colored_pass`]'s colours `colors[spans.0..spans.1]` on the shared
    /// velocities `st`: the large colours' rows on all threads, in chunks of [`CHUNK`] rows
    /// whose statistics are summed chunk by chunk; the others on the calling thread.
    fn all_threads_rows(
        &mut self,
        spans: (usize, usize),
        st: &mut [SharedVel],
        (omega, pass, friction): (f64, Pass, bool),
        kind: Kind,
    ) -> SweepStats {
        let mut visit = Visit::new((&self.inv_m, &self.inv_i), omega, pass, friction, self.cone, &self.couplings);
        visit.joint_lanes = self.lanes;
        visit.at_poses = AtPoses::in_pass(pass, &self.poses, self.relax_at_poses);
        let what = ColorPass::new(visit, kind);
        let spans = &self.colors[spans.0..spans.1];
        let inv_m = &self.inv_m;
        let mut acc = (0.0_f64, 0.0, 0usize, 0.0);
        // A colour holds joints or manifolds, not both. The joints' rows lie in the sweeps'
        // order (`joints[o]` for `joint_order[o]`), so a joint colour is a slice of them; the
        // manifolds of each large colour lie one after the other in memory (the contacts were
        // sorted by colour, `sort_contacts_by_color`), so such a colour is a slice of the
        // manifolds and one of the points. Either is cut into chunks.
        if spans.iter().filter(|s| large(s)).all(|s| s.contiguous) {
            for span in spans {
                if !large(span) {
                    let mut vel = Direct { st: &mut *st, inv_m };
                    let rows = (&mut self.joints[..], &mut self.manifolds[..], &mut self.points[..]);
                    let (b0, b1) = span.batches;
                    let batches = (&self.batches[b0..b1], &mut self.batch_state[b0..b1], &self.batch_carried[b0..b1]);
                    direct_span(span, &self.order, batches, rows, &mut vel, what, &mut acc, false);
                    continue;
                }
                debug_assert!(span.j.0 == span.j.1 || span.m.0 == span.m.1, "a colour of joints and manifolds");
                if span.j.0 < span.j.1 {
                    // (The warm start of a carried substep leaves the joints alone.)
                    if let ColorPass::Warm(..) = what {
                        continue;
                    }
                    let shared: &[SharedVel] = st;
                    // One chunk: each joint on its bodies' velocities copied in and stored back.
                    // One chunk, on the shared velocities in place.
                    let chunk = |rows: &mut [JointRows]| {
                        let mut stats = (0.0_f64, 0.0, 0usize, 0.0);
                        let mut vel = InPlace { vel: shared, inv_m };
                        joints_in_turn(&mut vel, rows, what, true, |s| {
                            if let Some(s) = s {
                                joint_stats(&mut stats, s);
                            }
                        });
                        stats
                    };
                    let joints = &mut self.joints[span.j.0..span.j.1];
                    let parts: Vec<SweepStats> = joints.par_chunks_mut(CHUNK).map(chunk).collect();
                    for s in parts {
                        add(&mut acc, s);
                    }
                    continue;
                }
                if let ColorPass::WarmJoints(_) = what {
                    continue;
                }
                let (i0, i1) = (self.order[span.m.0], self.order[span.m.1 - 1] + 1);
                let manifolds = &mut self.manifolds[i0..i1];
                let (p0, p1) = (manifolds[0].start, manifolds[manifolds.len() - 1].end);
                let (b0, b1) = span.batches;
                let mut rest = (manifolds, &mut self.points[p0..p1]);
                let mut lanes = (&self.batches[b0..b1], &mut self.batch_state[b0..b1], &self.batch_carried[b0..b1]);
                let mut at = &self.batch_at[b0..b1];
                let mut chunks = Vec::with_capacity((i1 - i0).div_ceil(CHUNK));
                let mut o = span.m.0;
                while !rest.0.is_empty() {
                    let n = CHUNK.min(rest.0.len());
                    let (mh, mt) = std::mem::take(&mut rest.0).split_at_mut(n);
                    let (ph, pt) = std::mem::take(&mut rest.1).split_at_mut(mh[mh.len() - 1].end - mh[0].start);
                    // (A chunk's batches: those whose place is among its manifolds.)
                    let k = at.iter().take_while(|&&b| b < o + n).count();
                    at = &at[k..];
                    let (bh, bt) = lanes.0.split_at(k);
                    let (sh, stail) = std::mem::take(&mut lanes.1).split_at_mut(k);
                    let (ch, ctail) = lanes.2.split_at(k);
                    chunks.push((o, (mh, ph), (bh, sh, ch)));
                    (rest, lanes) = ((mt, pt), (bt, stail, ctail));
                    o += n;
                }
                let shared: &[SharedVel] = st;
                let chunk = |c: Chunk| large_chunk(what, shared, inv_m, c);
                let parts: Vec<SweepStats> = chunks.into_par_iter().map(chunk).collect();
                for s in parts {
                    add(&mut acc, s);
                }
            }
            return acc;
        }
        // Every row with its rows' data, colour after colour. (No batches are built for this
        // path: `RigidSi::build_batches`.)
        debug_assert!(self.batches.is_empty(), "the rows visited without their batches");
        let mut joints: Vec<Option<&mut JointRows>> = self.joints.iter_mut().map(Some).collect();
        let mut manifolds: Vec<Option<(&mut Manifold, &mut [Point])>> =
            with_points(&mut self.manifolds, &mut self.points).into_iter().map(Some).collect();
        let mut tasks: Vec<Task> = Vec::new();
        let mut bounds = Vec::with_capacity(spans.len());
        for span in spans {
            let start = tasks.len();
            for rows in &mut joints[span.j.0..span.j.1] {
                let rows = rows.take().expect("a joint is visited once per sweep");
                let (a, b) = rows.bodies();
                tasks.push(Task { local: Local::between(a, b), row: Row::Joint(rows) });
            }
            for &i in &self.order[span.m.0..span.m.1] {
                let (m, points) = manifolds[i].take().expect("a manifold is visited once per sweep");
                let (a, b) = (points[0].a, points[0].b);
                tasks.push(Task { local: Local::between(a, b), row: Row::Manifold(m, points) });
            }
            bounds.push((start, tasks.len(), span.overflow));
        }
        let shared: &[SharedVel] = st;
        // A chunk of rows, each on its bodies' velocities copied in and stored back: the
        // statistics in row order, and the chunks' in chunk order, so that the sums are the
        // same on any number of threads.
        let chunk = |rows: &mut [Task]| {
            let mut stats = (0.0_f64, 0.0, 0usize, 0.0);
            for task in rows {
                task.local.load(shared);
                what.run(task, &mut stats);
                task.local.store(shared, inv_m);
            }
            stats
        };
        for (start, end, overflow) in bounds {
            let colour = &mut tasks[start..end];
            if overflow {
                // Rows that may share bodies: one after the other, each on the velocities the
                // one before stored.
                for task in colour {
                    task.local.load(shared);
                    what.run(task, &mut acc);
                    task.local.store(shared, inv_m);
                }
                continue;
            }
            if colour.len() >= PARALLEL_ROWS {
                let parts: Vec<SweepStats> = colour.par_chunks_mut(CHUNK).map(chunk).collect();
                for s in parts {
                    add(&mut acc, s);
                }
            } else {
                for rows in colour.chunks_mut(CHUNK) {
                    add(&mut acc, chunk(rows));
                }
            }
        }
        acc
    }
}

/// `what` over the joints `js` of one colour, one after the other on `vel`, and with `pairs` (a
/// colour whose joints share no movable body) two ball joints at a time on the lanes
/// ([`Visit::joints_lanes`]); each joint's statistics (a sweep's; none in a warm start) go to
/// `each`, in the joints' order.
fn joints_in_turn<V: Velocities + ?Sized>(
    vel: &mut V,
    js: &mut [JointRows],
    what: ColorPass,
    pairs: bool,
    mut each: impl FnMut(Option<(f64, f64)>),
) {
    let mut o = 0;
    while o < js.len() {
        if let (ColorPass::Sweep(visit), true, Some([j0, j1])) = (what, pairs, js.get_mut(o..o + 2)) {
            if visit.joint_lanes && on_lanes(j0) && on_lanes(j1) {
                for s in visit.joints_lanes(vel, [j0, j1]) {
                    each(Some(s));
                }
                o += 2;
                continue;
            }
        }
        let joint = &mut js[o];
        match what {
            ColorPass::Sweep(visit) => each(Some(visit.joint_visit(vel, joint))),
            ColorPass::WarmJoints(visit) => {
                joint.apply_warm(vel, visit.inv_m, visit.inv_i);
                each(None);
            }
            ColorPass::Warm(..) => each(None),
        }
        o += 1;
    }
}

/// `what` over the rows of `span` (joints, then manifolds), one after the other on `vel`; with
/// `chunked`, the statistics summed in chunks of [`CHUNK`] rows as the parallel visit sums them.
#[allow(clippy::too_many_arguments)]
fn direct_span<S: ?Sized + Store>(
    span: &ColorSpan,
    order: &[usize],
    (batches, states, carried): (&[Batch], &mut [BatchState], &[BatchCarried]),
    (joints, manifolds, points): (&mut [JointRows], &mut [Manifold], &mut [Point]),
    vel: &mut Direct<S>,
    what: ColorPass,
    acc: &mut SweepStats,
    chunked: bool,
) {
    let mut part = (0.0_f64, 0.0, 0usize, 0.0);
    let mut rows = 0;
    let flush = |part: &mut SweepStats, acc: &mut SweepStats| {
        add(acc, *part);
        *part = (0.0, 0.0, 0, 0.0);
    };
    // (The overflow colour's joints may share bodies: one at a time.)
    joints_in_turn(vel, &mut joints[span.j.0..span.j.1], what, !span.overflow, |s| {
        if let Some(s) = s {
            joint_stats(if chunked { &mut part } else { &mut *acc }, s);
        }
        rows += 1;
        if chunked && rows % CHUNK == 0 {
            flush(&mut part, acc);
        }
    });
    if let ColorPass::WarmJoints(_) = what {
        return;
    }
    let mut o = span.m.0;
    let mut batches = batches.iter().zip(states.iter_mut().zip(carried)).peekable();
    while o < span.m.1 {
        // A colour's manifolds share no movable body: a sweep visits a batch's two on the
        // lanes, in any colour. Manifolds outside the batches go up to `LANES` together only in
        // colours smaller than `PARALLEL_ROWS` (those not summed in chunks): on the 4,095-box
        // pyramid's large colours, interleaving cost 13 % on one thread instead of saving time
        // (their rows do not stay in cache).
        let sweep = matches!(what, ColorPass::Sweep(visit) if !span.overflow && !visit.block());
        // The next batch laid out for this colour's manifolds (`super::lanes`), and how many
        // manifolds come before it.
        while batches.peek().is_some_and(|(b, _)| b.span().0 < o) {
            batches.next();
        }
        let before = batches.peek().map_or(usize::MAX, |(b, _)| b.span().0 - o);
        let stats = if chunked { &mut part } else { &mut *acc };
        if let (true, 0, Some((batch, (state, carried)))) = (sweep, before, batches.peek_mut()) {
            let ColorPass::Sweep(visit) = what else { unreachable!("batches only in sweeps") };
            debug_assert_eq!(batch.span().1, 2, "batches of two");
            if !visit.manifolds_lanes(vel, batch, (&mut **state, *carried), stats) {
                // (A soft row without mass scale goes interleaved, on the rows, which hand
                // their state over and take it back: the same numbers.)
                RigidSi::store_batch(batch, state, points, manifolds);
                with_lanes((&mut *manifolds, &mut *points), [order[o], order[o + 1]], |ms, ps| {
                    visit.manifolds_interleaved(vel, ms, ps, stats);
                });
                RigidSi::reload_batch(batch, state, points, manifolds);
            }
            batches.next();
        } else if let (ColorPass::Warm(visit, scale), false, 0, Some((batch, (state, _)))) =
            (what, span.overflow, before, batches.peek_mut())
        {
            visit.warm_lanes(vel, batch, state, scale);
            batches.next();
        } else {
            let lanes = if sweep && !chunked { lanes_at(order, manifolds, o, span.m.1).min(before).max(1) } else { 1 };
            visit_rows(order, o, lanes, (&mut *manifolds, &mut *points), vel, what, stats);
            count(lanes, chunked, &mut rows, &mut part, acc);
            o += lanes;
            continue;
        }
        // (A batch never lies across a chunk's end: `RigidSi::batches_from_contacts`.)
        count(2, chunked, &mut rows, &mut part, acc);
        o += 2;
    }
    if chunked && rows % CHUNK != 0 {
        flush(&mut part, acc);
    }
}

/// One chunk of a large colour on one thread of [`RigidSi::all_threads_rows`]: a batch's
/// manifolds on the lanes, on the shared velocities in place; each other manifold on its
/// bodies' velocities copied in and stored back. Its statistics in row order.
///
/// (A function of its own, never inlined into the pool's task. Inlined there, on the 4,095-box
/// pyramid, the biased sweeps' large colours took 1.62 times as long as the same rows through
/// [`direct_span`] and the relax sweeps' 1.41 times, both on one thread in one process; out of
/// line, 1.1–1.3 and 1.2–1.4 times. Two threads then ran those sweeps 1.8–1.9 times as fast as
/// one, where they had run 1.2–1.5 times.)
#[inline(never)]
fn large_chunk(what: ColorPass, shared: &[SharedVel], inv_m: &[f64], (o, (ms, ps), (bs, ss, cs)): Chunk) -> SweepStats {
    let mut stats = (0.0_f64, 0.0, 0usize, 0.0);
    let first = ms[0].start;
    let mut batches = bs.iter().zip(ss.iter_mut().zip(cs)).peekable();
    let mut j = 0;
    while j < ms.len() {
        if let Some((batch, (state, carried))) = batches.next_if(|(b, _)| b.span().0 == o + j) {
            let mut store = Shared(shared);
            let mut vel = Direct { st: &mut store, inv_m };
            match what {
                ColorPass::Sweep(visit) => {
                    // (Batches in a large colour are built from the contacts, whose soft rows
                    // always have a mass scale.)
                    let done = visit.manifolds_lanes(&mut vel, batch, (state, carried), &mut stats);
                    assert!(done, "a batch of a large colour has soft rows with mass scales");
                }
                ColorPass::Warm(visit, scale) => visit.warm_lanes(&mut vel, batch, state, scale),
                ColorPass::WarmJoints(_) => unreachable!("the joints' warm start skips the manifolds"),
            }
            j += 2;
            continue;
        }
        let m = &mut ms[j];
        let points = &mut ps[m.start - first..m.end - first];
        let mut vel = Local::between(points[0].a, points[0].b);
        vel.load(shared);
        match what {
            ColorPass::Sweep(visit) => visit.manifold(&mut vel, m, points, &mut stats),
            ColorPass::Warm(visit, scale) => visit.warm_manifold(&mut vel, m, points, scale),
            ColorPass::WarmJoints(_) => unreachable!("the joints' warm start skips the manifolds"),
        }
        vel.store(shared, inv_m);
        j += 1;
    }
    stats
}

/// Counts `n` more rows of a colour: with `chunked`, the statistics `part` of each full chunk
/// of [`CHUNK`] rows added to `acc`.
fn count(n: usize, chunked: bool, rows: &mut usize, part: &mut SweepStats, acc: &mut SweepStats) {
    for _ in 0..n {
        *rows += 1;
        if chunked && (*rows).is_multiple_of(CHUNK) {
            add(acc, *part);
            *part = (0.0, 0.0, 0, 0.0);
        }
    }
}

/// A sweep or warm start of the `lanes` manifolds from `order[o]`, together (a sweep only)
/// or the one alone, on `vel`.
fn visit_rows<S: ?Sized + Store>(
    order: &[usize],
    o: usize,
    lanes: usize,
    (manifolds, points): (&mut [Manifold], &mut [Point]),
    vel: &mut Direct<S>,
    what: ColorPass,
    stats: &mut SweepStats,
) {
    if lanes > 1 {
        let ColorPass::Sweep(visit) = what else { unreachable!("lanes only in sweeps") };
        let rows = (manifolds, points);
        let go = |ms: &mut [&mut Manifold], ps: &mut [&mut [Point]]| visit.manifolds_interleaved(vel, ms, ps, stats);
        match lanes {
            2 => with_lanes(rows, [order[o], order[o + 1]], go),
            3 => with_lanes(rows, [order[o], order[o + 1], order[o + 2]], go),
            _ => with_lanes(rows, [order[o], order[o + 1], order[o + 2], order[o + 3]], go),
        }
    } else {
        let m = &mut manifolds[order[o]];
        let points = &mut points[m.start..m.end];
        match what {
            ColorPass::Sweep(visit) => visit.manifold(vel, m, points, stats),
            ColorPass::Warm(visit, scale) => visit.warm_manifold(vel, m, points, scale),
            ColorPass::WarmJoints(_) => unreachable!("the joints' warm start skips the manifolds"),
        }
    }
}

/// `f` on the distinct manifolds `idx` and their points (`&mut` of each at once).
fn with_lanes<const N: usize, R>(
    (manifolds, points): (&mut [Manifold], &mut [Point]),
    idx: [usize; N],
    f: impl FnOnce(&mut [&mut Manifold], &mut [&mut [Point]]) -> R,
) -> R {
    let mut ms = manifolds.get_disjoint_mut(idx).expect("a colour holds each manifold once");
    let ranges = ms.each_ref().map(|m| m.start..m.end);
    let mut ps = points.get_disjoint_mut(ranges).expect("manifolds hold disjoint points");
    f(&mut ms, &mut ps)
}
