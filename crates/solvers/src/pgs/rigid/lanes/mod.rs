//! Manifolds of one colour solved side by side in lanes (`lanes`, with `rigid_order =
//! "colored"`):
//! structure-of-arrays batches over [`W`] lanes in one 128-bit register, as Rapier's solver
//! runs its contacts in lanes.
//!
//! A batch ([`Batch`]) holds [`W`] manifolds of one colour (they share no movable body) of two
//! or four points each, whose normals all go in block pairs ([`Visit::normal_pair`],
//! `block_pairs`: `tgs-soft`) or all point after point ([`Visit::normal_row`]: `soft-step`);
//! either way two points make a unit of the batch. What its
//! rows keep through a frame (normals, Jacobians, couplings, effective masses, the friction and
//! twist rows) is laid out lane by lane once a frame: straight from the contacts where no pass
//! outside the batches reads the rows ([`build`], `tgs-soft`), else from the points and
//! manifolds when the colours are made ([`RigidSi::build_batches`]). What the rows change
//! through the frame (biases, mass scales, impulses, separations) lives beside the batch
//! ([`state`]), where the substep updates and the end separations work on it too; the rows get
//! it back only when something else reads them. The bodies' velocities are read once into lanes, every
//! pair, the friction block and the twist row of every manifold are solved on the lanes, and
//! the velocities are written back once. The coloured warm start goes over the
//! same batches ([`Visit::warm_lanes`]).
//!
//! The lanes' numbers are in [`simd`], the sweep on them in [`sweep`], the warm start in
//! [`warm`]; this file lays the batches out. Ball joints go two at a time on the same lanes, in
//! every colour (small or large, on any thread), gathered from their rows at each visit, and
//! their rows are prepared two at a time ([`joints`]).
//!
//! Each lane does exactly the arithmetic of the scalar visit ([`Visit::manifolds_interleaved`]),
//! operation for operation and in the same order, so the results are bit-identical (tested on
//! seven scenes and three variants, `tests/colored.rs`): lanes never fuse, reorder or
//! approximate. A body that does not move (a fixed body, or the world) takes the exactly zero
//! changes its zero inverse masses make and is never written back, as in the parallel visit's
//! copies (`velocities::Local`). Any other manifold (a point alone, an odd point, a pair that is
//! not a block, a soft row without mass scale in a block, a point without effective mass) goes
//! through the scalar visit.
//!
//! What it buys, measured on the 55- and 210-box pyramids under `tgs-soft` (one thread, the
//! two variants alternating in blocks of 20 frames in one process): 10 % fewer instructions
//! in the solver (callgrind: 574 against 639 million over 60 frames of the 210 boxes, data reads
//! 153 against 180 million), but only about 3 % of the time per frame (ratios 0.94–1.00 and
//! 0.97–0.98 over three runs each). The sweeps of the 210-box pyramid stream rows that do not
//! fit the 512 kB second-level cache, and the lanes still read the points' changing fields
//! beside the batch; the second-level misses did not fall. Later, the lanes as a vector type
//! (`wide`'s `f64x2`, not `[f64; 2]`) and the warm start on the lanes took another 8.6 % of
//! the solver's instructions (callgrind, one thread: 1,108.3 against 1,013.2 million over 120
//! frames of the 210 boxes, 113.6 against 104.0 over 50 frames of the 55): the sweep on the
//! lanes alone ran 26 % fewer (352.9 against 261.5 million).
//!
//! The colours large enough for all threads have batches only where they are built from the
//! contacts ([`build`]), none across the end of a chunk of the parallel sweep; each chunk runs
//! its batches on the lanes on the shared velocities. Built from the rows there too, they cut
//! the 4,095-box pyramid's solver instructions by 16 % and took 40 % more time, the lanes
//! reading the points' changing fields beside batches of about 2 kB; built from the contacts,
//! where a sweep reads nothing else, they take about a tenth off its frame on one thread and,
//! with their build and updates on all threads, some 10 % on two (`docs/benchmarks.md`, "The
//! large colours on the lanes").

mod build;
mod joints;
mod simd;
mod state;
mod sweep;
mod warm;

pub(super) use joints::{builds_on_lanes, on_lanes, rebuild_ball_lanes, solve_ball_lanes};
pub(super) use state::{BatchArms, BatchCarried, BatchState, Pose, Softness};

use simd::{Fw, Mask, Vw};

use super::sweep::Visit;
use super::velocities::{Direct, Store};
use super::*;

/// The lanes of a batch: two, one 128-bit register of the baseline x86-64 target (with four,
/// the four bodies' velocities alone took 24 of its 16 registers, and the spills cost what the
/// packed arithmetic saved).
pub(super) const W: usize = 2;

/// A row's Jacobian on the lanes ([`JacobianRow`]), without its inverse masses: every row of a
/// lane has its bodies' (kept once, [`Batch::ima`]).
#[derive(Clone, Copy, Debug, Default)]
struct RowLanes {
    ja: Vw,
    jb: Vw,
    ga: Vw,
    gb: Vw,
}

impl RowLanes {
    #[inline(always)]
    fn gather(rows: [&JacobianRow; W]) -> Self {
        RowLanes {
            ja: Vw::from_fn(|l| rows[l].ja),
            jb: Vw::from_fn(|l| rows[l].jb),
            ga: Vw::from_fn(|l| rows[l].ga),
            gb: Vw::from_fn(|l| rows[l].gb),
        }
    }
}

/// One pair of normal rows of each lane's manifold ([`Visit::normal_pair`]): what it keeps
/// through the frame.
#[derive(Clone, Copy, Debug, Default)]
struct UnitLanes {
    np: Vw,
    nq: Vw,
    rp: RowLanes,
    rq: RowLanes,
    k11: Fw,
    k12: Fw,
    k22: Fw,
    mn_p: Fw,
    mn_q: Fw,
}

/// The 2 × 2 block solve's coefficients of one pair of normal rows in one pass
/// ([`Visit::normal_pair`]): the diagonal over the mass scales `K'ᵢᵢ = Kᵢᵢ/sᵢ`, `det K'` and its
/// inverse, and `sᵢ·mᵢ`: the biased pass's prepared where the mass scales are set (each
/// substep), its sweeps then solving without a division (the arithmetic of the sweep's, moved
/// out of it); the relax pass's, with the scales at 1, formed as the sweep visits the pair (one
/// division a pair, where keeping them streamed 192 more bytes a batch past every pass).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PairSolve {
    kp: [Fw; 2],
    det: Fw,
    inv_det: Fw,
    scaled: [Fw; 2],
}

impl PairSolve {
    /// The coefficients of `unit`'s pair with mass scales `s` (in a relax pass, 1).
    #[inline(always)]
    fn new(unit: &UnitLanes, s: Option<[Fw; 2]>) -> Self {
        // (The relax pass's mass scales are 1: `k/1` is `k` exactly, without the divisions.)
        let (kp, s) = match s {
            Some(s) => ([unit.k11 / s[0], unit.k22 / s[1]], s),
            None => ([unit.k11, unit.k22], [Fw::splat(1.0); 2]),
        };
        let det = kp[0] * kp[1] - unit.k12 * unit.k12;
        PairSolve { kp, det, inv_det: Fw::splat(1.0) / det, scaled: [s[0] * unit.mn_p, s[1] * unit.mn_q] }
    }
}

/// The friction and twist rows of each lane's manifold ([`Visit::friction_rows`]): what they
/// keep through the frame.
#[derive(Clone, Copy, Debug, Default)]
struct FrictionLanes {
    /// Where the manifold has friction (`μ ≠ 0`).
    on: Mask,
    t1: Vw,
    t2: Vw,
    r1: RowLanes,
    r2: RowLanes,
    mt: [Fw; 4],
    mu: Fw,
    radius: Fw,
    m_twist: Fw,
    n: Vw,
    twist_a: Vw,
    twist_b: Vw,
}

/// [`W`] manifolds of one colour, `order[o..o + W]`, laid out lane by lane (see the module).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Batch {
    /// The batch's first place in `order`, and how many manifolds it holds.
    o: usize,
    n: usize,
    /// Each lane's manifold (its index in `RigidSi::manifolds`) and its first point.
    manifold: [usize; W],
    start: [usize; W],
    /// Each lane's points (2 or 4).
    len: [usize; W],
    /// Each lane's bodies, whether each moves, and their inverse masses (1/kg; the world's
    /// zero), those of every row of the lane.
    a: [usize; W],
    b: [Option<usize>; W],
    ma: Mask,
    mb: Mask,
    ima: Fw,
    imb: Fw,
    /// Whether the manifolds' points go in 2 × 2 blocks ([`Visit::normal_pair`], `block_pairs`)
    /// or one after the other ([`Visit::normal_row`]); either way two points make a unit.
    paired: bool,
    /// Units per manifold: the most of any lane (1 or 2), and per unit the lanes that have it
    /// (a lane without unit `u` repeats its unit 0 and changes nothing).
    units: usize,
    has: [Mask; 2],
    unit: [UnitLanes; 2],
    friction: FrictionLanes,
}

impl Batch {
    /// Whether the manifolds `ms` (points in `points`) make a batch (see the module): two or
    /// four points each, all in blocks or all one after the other, every pair a block or every
    /// point with an effective mass (a row without one reports no residual).
    fn qualify(ms: &[&Manifold], points: &[Point]) -> bool {
        let qualifies = |m: &Manifold| {
            let len = m.end - m.start;
            (len == 2 || len == 4)
                && m.paired == ms[0].paired
                && if m.paired {
                    (0..len / 2).all(|u| m.pairs[u].block)
                } else {
                    points[m.start..m.end].iter().all(|p| p.mn > 0.0)
                }
        };
        ms.len() == W && ms.iter().all(|m| qualifies(m))
    }

    /// Writes the batch of the manifolds `ms` (the [`W`] from `order[o]`, which
    /// [`Batch::qualify`]) over `self`, in place (a batch is 2,048 bytes; built and then
    /// moved, it was cleared and copied). A pair slot beyond `units` keeps what it held: no
    /// visit reads it.
    fn build(&mut self, ms: &[&Manifold], points: &[Point], inv_m: &[f64], o: usize) {
        let n = ms.len();
        self.manifold = std::array::from_fn(|l| ms[l].index);
        self.start = std::array::from_fn(|l| ms[l].start);
        self.len = std::array::from_fn(|l| ms[l].end - ms[l].start);
        debug_assert!(Batch::qualify(ms, points), "a batch of qualifying manifolds");
        let lane = |l: usize| ms[l];
        let first: [&Point; W] = std::array::from_fn(|l| &points[lane(l).start]);
        let a: [usize; W] = std::array::from_fn(|l| first[l].a);
        let b: [Option<usize>; W] = std::array::from_fn(|l| first[l].b);
        let moves = |k: usize| inv_m[k] != 0.0;
        let units = ms.iter().map(|m| (m.end - m.start) / 2).max().unwrap_or(0);
        let batch = self;
        (batch.o, batch.n, batch.a, batch.b, batch.units) = (o, n, a, b, units);
        batch.paired = ms[0].paired;
        batch.ma = std::array::from_fn(|l| moves(a[l]));
        batch.mb = std::array::from_fn(|l| b[l].is_some_and(moves));
        (batch.ima, batch.imb) = (Fw::from_fn(|l| first[l].row.ima), Fw::from_fn(|l| first[l].row.imb));
        for u in 0..units {
            let has: Mask = std::array::from_fn(|l| lane(l).end - lane(l).start > 2 * u);
            let k = |l: usize| lane(l).start + if has[l] { 2 * u } else { 0 };
            let p: [&Point; W] = std::array::from_fn(|l| &points[k(l)]);
            let q: [&Point; W] = std::array::from_fn(|l| &points[k(l) + 1]);
            // (Points one after the other have no couplings: zero, whatever their manifolds'
            // unused pairs hold.)
            let pair: [Pair; W] = std::array::from_fn(|l| {
                if batch.paired {
                    lane(l).pairs[if has[l] { u } else { 0 }]
                } else {
                    Pair::default()
                }
            });
            batch.has[u] = has;
            batch.unit[u] = UnitLanes {
                np: Vw::from_fn(|l| p[l].n),
                nq: Vw::from_fn(|l| q[l].n),
                rp: RowLanes::gather(std::array::from_fn(|l| &p[l].row)),
                rq: RowLanes::gather(std::array::from_fn(|l| &q[l].row)),
                k11: Fw::from_fn(|l| pair[l].k11),
                k12: Fw::from_fn(|l| pair[l].k12),
                k22: Fw::from_fn(|l| pair[l].k22),
                mn_p: Fw::from_fn(|l| p[l].mn),
                mn_q: Fw::from_fn(|l| q[l].mn),
            };
        }
        let m: [&Manifold; W] = std::array::from_fn(lane);
        let f = |g: fn(&Manifold) -> f64| Fw::from_fn(|l| g(m[l]));
        batch.friction = FrictionLanes {
            on: std::array::from_fn(|l| m[l].mu != 0.0),
            t1: Vw::from_fn(|l| m[l].t1),
            t2: Vw::from_fn(|l| m[l].t2),
            r1: RowLanes::gather(std::array::from_fn(|l| &m[l].rows_t[0])),
            r2: RowLanes::gather(std::array::from_fn(|l| &m[l].rows_t[1])),
            mt: std::array::from_fn(|i| Fw::from_fn(|l| m[l].mt[i])),
            mu: f(|m| m.mu),
            radius: f(|m| m.radius),
            m_twist: f(|m| m.m_twist),
            n: Vw::from_fn(|l| m[l].n),
            twist_a: Vw::from_fn(|l| m[l].twist_a),
            twist_b: Vw::from_fn(|l| m[l].twist_b),
        };
    }

    /// The batch's first place in `order` and how many manifolds it holds.
    pub(super) fn span(&self) -> (usize, usize) {
        (self.o, self.n)
    }
}

impl RigidSi {
    /// The batches of the coloured sweeps (see the module), colour by colour: in each colour
    /// small enough for the calling thread, every [`W`] consecutive manifolds that qualify, in
    /// the order the sweeps visit them. Each colour records its batches' range, each batched
    /// point is marked ([`Point::batched`]), and the batches take their rows' state from the
    /// points and manifolds ([`RigidSi::load_batches`]). Without `lanes` or `block_pairs`,
    /// with `block` or split rows, or when a pass on all threads would visit the colours
    /// through the rows rather than the batches (a large colour whose manifolds do not lie one
    /// after the other, [`colors`]), none.
    pub(super) fn build_batches(&mut self, cfg: &PgsConfig) {
        if self.from_contacts {
            // Built on the lanes with the contacts, colour by colour in the sweeps' order (the
            // order of the sort by colour): each colour takes the batches inside it.
            let mut k = 0;
            for span in self.colors.iter_mut() {
                let first = k;
                while self.batch_at.get(k).is_some_and(|&o| span.m.0 <= o && o < span.m.1) {
                    k += 1;
                }
                span.batches = (first, k);
            }
            debug_assert_eq!(k, self.batches.len(), "every batch inside a colour");
            debug_assert!(self.batch_at.iter().zip(&self.batches).all(|(&o, b)| o == b.o), "each batch's place");
            return;
        }
        // (The last build's batches are written over in place, and the list cut to the count.)
        let mut batches = std::mem::take(&mut self.batches);
        let mut count = 0;
        let split = cfg.split_impulse && cfg.feedback == Feedback::Baumgarte;
        let by_rows = rayon::current_num_threads() > 1 && self.colors.iter().any(|c| colors::large(c) && !c.contiguous);
        let wanted = cfg.lanes && !cfg.block && !split && !by_rows;
        for span in self.colors.iter_mut() {
            let first = count;
            if wanted && !span.overflow && !colors::large(span) {
                let (mut o, end) = span.m;
                while o + W <= end {
                    let ms: [&Manifold; W] = std::array::from_fn(|l| &self.manifolds[self.order[o + l]]);
                    if !Batch::qualify(&ms, &self.points) {
                        o += 1;
                        continue;
                    }
                    if count == batches.len() {
                        batches.push(Batch::default());
                    }
                    batches[count].build(&ms, &self.points, &self.inv_m, o);
                    count += 1;
                    o += W;
                }
            }
            span.batches = (first, count);
        }
        batches.truncate(count);
        self.batch_at.clear();
        self.batch_at.extend(batches.iter().map(|b| b.o));
        self.batched.clear();
        self.batched.resize(self.points.len(), false);
        self.batched_points = 0;
        for batch in &batches {
            for l in 0..batch.n {
                let m = &self.manifolds[batch.manifold[l]];
                self.batched[m.start..m.end].iter_mut().for_each(|b| *b = true);
                self.batched_points += m.end - m.start;
            }
        }
        self.batches = batches;
        self.load_batches();
    }
}

/// The velocities of the bodies on one side of `batch`'s lanes: body `a`'s with `a_side`,
/// else body `b`'s (the world's are zero).
#[inline(always)]
fn load_side<S: ?Sized + Store>(vel: &Direct<S>, batch: &Batch, a_side: bool) -> (Vw, Vw) {
    let zero = Vec3::zeros();
    let read: [(Vec3, Vec3); W] = std::array::from_fn(|l| match (a_side, batch.b[l]) {
        (true, _) => vel.st.read(batch.a[l]),
        (false, Some(k)) => vel.st.read(k),
        (false, None) => (zero, zero),
    });
    (Vw::from_fn(|l| read[l].0), Vw::from_fn(|l| read[l].1))
}

/// Writes back the velocities `v`, `w` of the bodies on one side of `batch`'s lanes
/// ([`load_side`]) that move.
#[inline(always)]
fn store_side<S: ?Sized + Store>(vel: &mut Direct<S>, batch: &Batch, a_side: bool, (v, w): (Vw, Vw)) {
    for l in 0..batch.n {
        match (a_side, batch.b[l]) {
            (true, _) if batch.ma[l] => vel.st.write(batch.a[l], v.lane(l), w.lane(l)),
            (false, Some(k)) if batch.mb[l] => vel.st.write(k, v.lane(l), w.lane(l)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With `tgs-soft` (points in block pairs) and `soft-step` (one after the other), the
    /// batches hold most of the pyramid's manifolds (so that the test of equal numbers with and
    /// without lanes, `tests/colored.rs`, compares the lanes), each batch lies inside its colour
    /// at the place it names, and none is built with `lanes = false`.
    #[test]
    fn lanes_are_used() {
        let scene = solverlab_scenes::resolve("rigid-pyramid", &["base=12".to_string()]).unwrap();
        for (preset, lanes) in [("tgs-soft", true), ("tgs-soft", false), ("soft-step", true), ("soft-step", false)] {
            let cfg = crate::pgs::config::preset_config(preset);
            let paired = cfg.block_pairs;
            let cfg = PgsConfig { lanes, ..cfg };
            let mut st = scene.initial_state(scene.dt).rigid;
            let mut si = RigidSi::default();
            si.prepare(&scene, &mut st, &cfg, scene.dt / 4.0, 0.0, 4);
            let batched = si.batches.len() * W;
            if !lanes {
                assert_eq!(batched, 0, "no batches without lanes");
                continue;
            }
            assert!(si.manifolds.len() > 100, "the pyramid touches");
            assert!(batched * 10 >= si.manifolds.len() * 8, "{batched} of {} manifolds batched", si.manifolds.len());
            assert!(si.from_contacts, "{preset}'s batches built on the lanes from the contacts");
            assert!(si.batches.iter().all(|b| b.paired == paired), "{preset}: pairs as blocks or one after the other");
            // (The batched points' rows written whole, for the check of their bodies.)
            si.store_full();
            for span in &si.colors {
                for batch in &si.batches[span.batches.0..span.batches.1] {
                    let (o, n) = batch.span();
                    assert!(n == W && span.m.0 <= o && o + n <= span.m.1, "a batch inside its colour");
                    for l in 0..n {
                        let m = &si.manifolds[si.order[o + l]];
                        assert_eq!(si.points[m.start].a, batch.a[l], "lane {l}'s body");
                    }
                }
            }
        }
    }

    /// In a colour large enough for all threads, the batches built from the contacts hold most
    /// manifolds too, and none lies across the end of a chunk of the parallel sweep (whose
    /// statistics are summed chunk by chunk).
    #[test]
    fn lanes_in_large_colours_stay_inside_chunks() {
        // 700 bodies resting apart on the floor, each with one manifold against it: one colour.
        // A sphere (one point) every seventh place shifts the boxes' (four points) pairs off the
        // chunks' pairs.
        let mut text =
            String::from("name = \"row\"\ngravity = [0.0, -9.81, 0.0]\n[[plane]]\nnormal = [0.0, 1.0, 0.0]\n");
        for k in 0..700 {
            let x = format!("x = [{}, {}, {}]", (k % 30) as f64 * 1.5, 0.25, (k / 30) as f64 * 1.5);
            let shape = if k % 7 == 3 {
                "shape = \"sphere\"\nradius = 0.25"
            } else {
                "shape = \"box\"\nhalf_extents = [0.25, 0.25, 0.25]"
            };
            text += &format!("[[rigid]]\n{shape}\nmass = 1.0\n{x}\n");
        }
        let scene = solverlab_scenes::file::parse(&text, "row").unwrap();
        let cfg = crate::pgs::config::preset_config("tgs-soft");
        let mut st = scene.initial_state(scene.dt).rigid;
        let mut si = RigidSi::default();
        si.prepare(&scene, &mut st, &cfg, scene.dt / 4.0, 0.0, 4);
        assert!(si.from_contacts, "built on the lanes from the contacts");
        let large: Vec<&colors::ColorSpan> = si.colors.iter().filter(|c| colors::large(c)).collect();
        assert!(!large.is_empty(), "the row of bodies makes a large colour");
        for span in large {
            let batches = &si.batches[span.batches.0..span.batches.1];
            let manifolds = span.m.1 - span.m.0;
            assert!(batches.len() * W * 10 >= manifolds * 7, "{} of {manifolds} manifolds batched", batches.len() * W);
            for batch in batches {
                let (o, n) = batch.span();
                let chunk = |i: usize| (i - span.m.0) / colors::CHUNK;
                assert_eq!(chunk(o), chunk(o + n - 1), "the batch at {o} inside one chunk");
            }
        }
    }

    /// The batches built on the lanes from the contacts, their state and carried fields, and
    /// their points, carried fields and manifolds once written whole ([`RigidSi::store_full`]),
    /// are those built from the rows ([`Batch::build`], [`RigidSi::load_batches`]) bit for bit:
    /// on the pyramid (four-point manifolds against each other and the floor) and the card house
    /// (two-point manifolds), each at a settled state whose pairs the step before found (so
    /// that the recycled contacts' frozen arms are built too), and with SOR and the pyramid cone.
    #[test]
    fn full_rows_from_lanes_are_the_rows() {
        let cases = [("rigid-pyramid", vec!["base=8".to_string()], 30), ("rigid-card-house", vec![], 30)];
        let tgs_soft = crate::pgs::config::preset_config("tgs-soft");
        // (And points one after the other: `soft-step`, and `tgs-soft` without block pairs.)
        let configs = [
            ("tgs-soft", tgs_soft.clone()),
            ("soft-step", crate::pgs::config::preset_config("soft-step")),
            ("tgs-soft, block_pairs = false", PgsConfig { block_pairs: false, ..tgs_soft }),
        ];
        for ((scene_name, sets, frames), (preset, cfg)) in
            cases.iter().flat_map(|c| configs.iter().map(move |p| (c, p)))
        {
            let (name, frames) = (format!("{scene_name}, {preset}"), *frames);
            let scene = solverlab_scenes::resolve(scene_name, sets).unwrap();
            let mut solver = crate::PgsSolver::new(cfg.clone(), "tgs-soft").unwrap();
            let mut sim = solverlab_core::sim::Simulation::new(&scene, &mut solver, scene.dt, 4).unwrap();
            let mut states = Vec::new();
            for _ in 0..frames {
                sim.step_frame(&mut solverlab_core::NullObserver).unwrap();
                states.push(sim.state.rigid.clone());
            }
            let h = scene.dt / 4.0;
            let rows = |on_lanes: bool| {
                let mut si = RigidSi { lane_build_off: !on_lanes, ..RigidSi::default() };
                let (mut before, mut now) = (states[frames - 2].clone(), states[frames - 1].clone());
                si.prepare(&scene, &mut before, cfg, h, 0.0, 4);
                si.prepare(&scene, &mut now, cfg, h, 0.0, 4);
                assert_eq!(si.from_contacts, on_lanes, "{name}: built on the lanes");
                assert!(si.batches.len() > 4, "{name}: batches");
                let lanes = format!("{:?} {:?} {:?} {:?}", si.batches, si.batch_state, si.batch_carried, si.batch_arms);
                si.store_full();
                let rows = format!("{:?} {:?} {:?} {:?}", si.points, si.carried, si.manifolds, si.batched);
                (lanes, rows, format!("{now:?}"))
            };
            let (lanes, from_rows) = (rows(true), rows(false));
            assert!(lanes.0 == from_rows.0, "{name}: the batches");
            assert!(lanes.1 == from_rows.1, "{name}: the rows");
            assert!(lanes.2 == from_rows.2, "{name}: the warm start's velocities");
        }
    }
}
