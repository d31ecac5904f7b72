//! Manifolds of one colour solved side by side in lanes (`lanes`, with `rigid_order =
//! "colored"` and `block_pairs`, in the colours small enough for the calling thread):
//! structure-of-arrays batches over [`W`] lanes in one 128-bit register, as Rapier's solver
//! runs its contacts in lanes.
//!
//! A batch ([`Batch`]) holds [`W`] manifolds of one colour (they share no movable body) whose
//! normals all go in block pairs ([`Visit::normal_pair`]) with two or four points. What its
//! rows keep through a frame (normals, Jacobians, couplings, effective masses, the friction and
//! twist rows) is laid out lane by lane once, when the colours are made
//! ([`RigidSi::build_batches`]); a sweep reads from the points only what changes between sweeps
//! (biases, mass scales, impulses). The bodies' velocities are read once into lanes, every
//! pair, the friction block and the twist row of every manifold are solved on the lanes, and
//! the velocities are written back once. The coloured warm start goes over the
//! same batches ([`Visit::warm_lanes`]).
//!
//! Each lane does exactly the arithmetic of the scalar visit ([`Visit::manifolds_interleaved`]),
//! operation for operation and in the same order, so the results are bit-identical (tested on
//! seven scenes and three variants, `tests/colored.rs`): lanes never fuse, reorder or
//! approximate. A body that does not move (a fixed body, or the world) takes the exactly zero
//! changes its zero inverse masses make and is never written back, as in the parallel visit's
//! copies (`colors::Local`). Any other manifold (a point alone, an odd point, a pair that is
//! not a block, a soft row without mass scale) goes through the scalar visit.
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

use std::ops::{Add, Div, Mul, Neg, Sub};

use super::colors::{Direct, Store};
use super::sweep::Visit;
use super::*;

/// The lanes of a batch: two, one 128-bit register of the baseline x86-64 target (with four,
/// the four bodies' velocities alone took 24 of its 16 registers, and the spills cost what the
/// packed arithmetic saved).
pub(super) const W: usize = 2;

/// [`W`] `f64` lanes, in one 128-bit register (`wide`'s `f64x2`: SSE2 on x86-64, NEON on
/// aarch64, an array elsewhere). (As `[f64; 2]`, the compiler packed the arithmetic but kept
/// the lanes on the stack between operations: in the warm start on the lanes, a quarter of
/// the instructions moved lanes to and from the stack.)
#[derive(Clone, Copy, Debug)]
struct Fw(Raw);

type Raw = wide::f64x2;

/// Lane flags, as all-ones or all-zeros lanes ([`Fw::ge`], [`Mw::of`]).
#[derive(Clone, Copy, Debug)]
struct Mw(Raw);

/// [`W`] lane flags, as kept in the batches.
type Mask = [bool; W];

mod raw {
    //! The lanes' operations, each the scalar operation in each lane, bit for bit.
    use super::{Raw, W};
    use wide::{CmpGe, CmpGt};

    #[inline(always)]
    pub(super) fn splat(x: f64) -> Raw {
        Raw::splat(x)
    }
    #[inline(always)]
    pub(super) fn from_array(a: [f64; W]) -> Raw {
        Raw::from(a)
    }
    #[inline(always)]
    pub(super) fn to_array(x: Raw) -> [f64; W] {
        x.to_array()
    }
    #[inline(always)]
    pub(super) fn add(a: Raw, b: Raw) -> Raw {
        a + b
    }
    #[inline(always)]
    pub(super) fn sub(a: Raw, b: Raw) -> Raw {
        a - b
    }
    #[inline(always)]
    pub(super) fn mul(a: Raw, b: Raw) -> Raw {
        a * b
    }
    #[inline(always)]
    pub(super) fn div(a: Raw, b: Raw) -> Raw {
        a / b
    }
    /// The sign bit flipped, as `-x`.
    #[inline(always)]
    pub(super) fn neg(a: Raw) -> Raw {
        a ^ Raw::splat(-0.0)
    }
    /// The sign bit cleared, as `f64::abs`.
    #[inline(always)]
    pub(super) fn abs(a: Raw) -> Raw {
        a & Raw::splat(f64::from_bits(u64::MAX >> 1))
    }
    /// `a ≥ b` (false with a NaN), as all-ones lanes.
    #[inline(always)]
    pub(super) fn ge(a: Raw, b: Raw) -> Raw {
        a.cmp_ge(b)
    }
    /// `a > b` (false with a NaN), as all-ones lanes.
    #[inline(always)]
    pub(super) fn gt(a: Raw, b: Raw) -> Raw {
        a.cmp_gt(b)
    }
    #[inline(always)]
    pub(super) fn and(a: Raw, b: Raw) -> Raw {
        a & b
    }
    /// `a` where `m` is all ones, else `b`.
    #[inline(always)]
    pub(super) fn select(m: Raw, a: Raw, b: Raw) -> Raw {
        m.blend(a, b)
    }
    /// The flags `m` as all-ones or all-zeros lanes.
    #[inline(always)]
    pub(super) fn mask(m: [bool; W]) -> Raw {
        Raw::from(m.map(|x| f64::from_bits(if x { u64::MAX } else { 0 })))
    }
}

impl Default for Fw {
    fn default() -> Self {
        Fw::splat(0.0)
    }
}

impl Fw {
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Fw(raw::splat(x))
    }

    /// Lane `l` is `f(l)`.
    #[inline(always)]
    fn from_fn(f: impl FnMut(usize) -> f64) -> Self {
        Fw(raw::from_array(std::array::from_fn(f)))
    }

    /// The lanes as an array.
    #[inline(always)]
    fn lanes(self) -> [f64; W] {
        raw::to_array(self.0)
    }

    /// Lane `l`.
    #[inline(always)]
    fn lane(self, l: usize) -> f64 {
        self.lanes()[l]
    }

    /// `f64::max` lane by lane (a NaN lane takes the other number, as the scalar visit).
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        let (a, b) = (self.lanes(), o.lanes());
        Fw::from_fn(|l| a[l].max(b[l]))
    }

    /// `f64::min` lane by lane.
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        let (a, b) = (self.lanes(), o.lanes());
        Fw::from_fn(|l| a[l].min(b[l]))
    }

    #[inline(always)]
    fn abs(self) -> Self {
        Fw(raw::abs(self.0))
    }

    /// `self` where `m` holds, else `other`.
    #[inline(always)]
    fn select(self, m: Mw, other: Self) -> Self {
        Fw(raw::select(m.0, self.0, other.0))
    }

    /// Lane by lane `a ≥ b`.
    #[inline(always)]
    fn ge(self, o: Self) -> Mw {
        Mw(raw::ge(self.0, o.0))
    }

    /// Lane by lane `a > b`.
    #[inline(always)]
    fn gt(self, o: Self) -> Mw {
        Mw(raw::gt(self.0, o.0))
    }
}

impl Mw {
    /// The flags `m` on the lanes.
    #[inline(always)]
    fn of(m: Mask) -> Self {
        Mw(raw::mask(m))
    }

    /// Lane by lane `a && b`.
    #[inline(always)]
    fn and(self, o: Mw) -> Mw {
        Mw(raw::and(self.0, o.0))
    }
}

macro_rules! lanewise {
    ($tr:ident, $f:ident) => {
        impl $tr for Fw {
            type Output = Fw;
            #[inline(always)]
            fn $f(self, o: Fw) -> Fw {
                Fw(raw::$f(self.0, o.0))
            }
        }
    };
}
lanewise!(Add, add);
lanewise!(Sub, sub);
lanewise!(Mul, mul);
lanewise!(Div, div);

impl Neg for Fw {
    type Output = Fw;
    #[inline(always)]
    fn neg(self) -> Fw {
        Fw(raw::neg(self.0))
    }
}

/// [`W`] 3-vectors, one per lane.
#[derive(Clone, Copy, Debug, Default)]
struct Vw {
    x: Fw,
    y: Fw,
    z: Fw,
}

impl Vw {
    /// Lane `l` is `f(l)`.
    #[inline(always)]
    fn from_fn(mut f: impl FnMut(usize) -> Vec3) -> Self {
        let v: [Vec3; W] = std::array::from_fn(&mut f);
        Vw { x: Fw::from_fn(|l| v[l].x), y: Fw::from_fn(|l| v[l].y), z: Fw::from_fn(|l| v[l].z) }
    }

    /// Lane `l` as a vector.
    #[inline(always)]
    fn lane(&self, l: usize) -> Vec3 {
        Vec3::new(self.x.lane(l), self.y.lane(l), self.z.lane(l))
    }

    /// The dot product as nalgebra forms it for three components: `(x·x' + y·y') + z·z'`.
    #[inline(always)]
    fn dot(&self, o: &Vw) -> Fw {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    #[inline(always)]
    fn scale(&self, s: Fw) -> Vw {
        Vw { x: self.x * s, y: self.y * s, z: self.z * s }
    }

    #[inline(always)]
    fn select(self, m: Mw, other: Vw) -> Vw {
        Vw { x: self.x.select(m, other.x), y: self.y.select(m, other.y), z: self.z.select(m, other.z) }
    }
}

impl Add for Vw {
    type Output = Vw;
    #[inline(always)]
    fn add(self, o: Vw) -> Vw {
        Vw { x: self.x + o.x, y: self.y + o.y, z: self.z + o.z }
    }
}

impl Sub for Vw {
    type Output = Vw;
    #[inline(always)]
    fn sub(self, o: Vw) -> Vw {
        Vw { x: self.x - o.x, y: self.y - o.y, z: self.z - o.z }
    }
}

impl Neg for Vw {
    type Output = Vw;
    #[inline(always)]
    fn neg(self) -> Vw {
        Vw { x: -self.x, y: -self.y, z: -self.z }
    }
}

/// Field `f` of each lane's point, on the lanes. (A generic function, so always inlined: a
/// closure taking `fn(&Point) -> f64` was inlined or not depending on the build, and a build
/// that called it cost `tgs-soft` 3 % more instructions on the 55- and 210-box pyramids.)
#[inline(always)]
fn lanes_of(pt: &[&Point; W], f: impl Fn(&Point) -> f64) -> Fw {
    Fw::from_fn(|l| f(pt[l]))
}

/// A row's Jacobian on the lanes ([`JacobianRow`]).
#[derive(Clone, Copy, Debug, Default)]
struct RowLanes {
    ja: Vw,
    jb: Vw,
    ga: Vw,
    gb: Vw,
    ima: Fw,
    imb: Fw,
}

impl RowLanes {
    #[inline(always)]
    fn gather(rows: [&JacobianRow; W]) -> Self {
        RowLanes {
            ja: Vw::from_fn(|l| rows[l].ja),
            jb: Vw::from_fn(|l| rows[l].jb),
            ga: Vw::from_fn(|l| rows[l].ga),
            gb: Vw::from_fn(|l| rows[l].gb),
            ima: Fw::from_fn(|l| rows[l].ima),
            imb: Fw::from_fn(|l| rows[l].imb),
        }
    }
}

/// The bodies' velocities on the lanes.
struct Bodies {
    va: Vw,
    wa: Vw,
    vb: Vw,
    wb: Vw,
}

impl Bodies {
    /// The velocities of `batch`'s bodies (the world's are zero).
    #[inline(always)]
    fn load<S: ?Sized + Store>(vel: &Direct<S>, batch: &Batch) -> Self {
        let (a, b) = (batch.a, batch.b);
        let zero = Vec3::zeros();
        let on_a: [(Vec3, Vec3); W] = std::array::from_fn(|l| vel.st.read(a[l]));
        let on_b: [(Vec3, Vec3); W] = std::array::from_fn(|l| b[l].map_or((zero, zero), |k| vel.st.read(k)));
        Bodies {
            va: Vw::from_fn(|l| on_a[l].0),
            wa: Vw::from_fn(|l| on_a[l].1),
            vb: Vw::from_fn(|l| on_b[l].0),
            wb: Vw::from_fn(|l| on_b[l].1),
        }
    }

    /// Writes the velocities of `batch`'s bodies that move back.
    #[inline(always)]
    fn store<S: ?Sized + Store>(&self, vel: &mut Direct<S>, batch: &Batch) {
        for l in 0..batch.n {
            if batch.ma[l] {
                vel.st.write(batch.a[l], self.va.lane(l), self.wa.lane(l));
            }
            if let (true, Some(k)) = (batch.mb[l], batch.b[l]) {
                vel.st.write(k, self.vb.lane(l), self.wb.lane(l));
            }
        }
    }

    /// The row's speed `J·v` along `d` (as [`super::sweep::row_speed`]:
    /// `d·(v_a − v_b) + J_a·ω_a − J_b·ω_b`).
    #[inline(always)]
    fn speed(&self, d: &Vw, row: &RowLanes) -> Fw {
        d.dot(&(self.va - self.vb)) + row.ja.dot(&self.wa) - row.jb.dot(&self.wb)
    }

    /// [`super::sweep::push`] on the lanes: `v_a += imp·ima`, `ω_a += dwa`, `v_b += −(imp·imb)`,
    /// `ω_b += −dwb`; with `only`, in its lanes alone. (A body that does not move takes the
    /// exactly zero changes its zero inverse masses make and is never written back, as in the
    /// parallel visit's copies, `colors::Local`.)
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
    /// Each lane's bodies, and whether each moves.
    a: [usize; W],
    b: [Option<usize>; W],
    ma: Mask,
    mb: Mask,
    /// Pairs per manifold: the most of any lane (1 or 2), and per pair the lanes that have it
    /// (a lane without pair `u` repeats its pair 0 and changes nothing).
    units: usize,
    has: [Mask; 2],
    unit: [UnitLanes; 2],
    friction: FrictionLanes,
}

impl Batch {
    /// Whether the manifolds `ms` make a batch (see the module).
    fn qualify(ms: &[&Manifold]) -> bool {
        let qualifies = |m: &Manifold| {
            let len = m.end - m.start;
            m.paired && (len == 2 || len == 4) && (0..len / 2).all(|u| m.pairs[u].block)
        };
        ms.len() == W && ms.iter().all(|m| qualifies(m))
    }

    /// Writes the batch of the manifolds `ms` (the [`W`] from `order[o]`, which
    /// [`Batch::qualify`]) over `self`, in place (a batch is about a kilobyte; built and then
    /// moved, it was cleared and copied). A pair slot beyond `units` keeps what it held: no
    /// visit reads it.
    fn build(&mut self, ms: &[&Manifold], points: &[Point], inv_m: &[f64], o: usize) {
        let n = ms.len();
        debug_assert!(Batch::qualify(ms), "a batch of qualifying manifolds");
        let lane = |l: usize| ms[l];
        let first: [&Point; W] = std::array::from_fn(|l| &points[lane(l).start]);
        let a: [usize; W] = std::array::from_fn(|l| first[l].a);
        let b: [Option<usize>; W] = std::array::from_fn(|l| first[l].b);
        let moves = |k: usize| inv_m[k] != 0.0;
        let units = ms.iter().map(|m| (m.end - m.start) / 2).max().unwrap_or(0);
        let batch = self;
        (batch.o, batch.n, batch.a, batch.b, batch.units) = (o, n, a, b, units);
        batch.ma = std::array::from_fn(|l| moves(a[l]));
        batch.mb = std::array::from_fn(|l| b[l].is_some_and(moves));
        for u in 0..units {
            let has: Mask = std::array::from_fn(|l| lane(l).end - lane(l).start > 2 * u);
            let k = |l: usize| lane(l).start + if has[l] { 2 * u } else { 0 };
            let p: [&Point; W] = std::array::from_fn(|l| &points[k(l)]);
            let q: [&Point; W] = std::array::from_fn(|l| &points[k(l) + 1]);
            let pair: [Pair; W] = std::array::from_fn(|l| lane(l).pairs[if has[l] { u } else { 0 }]);
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
    /// the order the sweeps visit them. Each colour records its batches' range. Without
    /// `lanes` or `block_pairs`, or with `block`, none.
    pub(super) fn build_batches(&mut self, cfg: &PgsConfig) {
        // (The last build's batches are written over in place, and the list cut to the count.)
        let mut batches = std::mem::take(&mut self.batches);
        let mut count = 0;
        let wanted = cfg.lanes && cfg.block_pairs && !cfg.block;
        for span in self.colors.iter_mut() {
            let first = count;
            if wanted && !span.overflow && !colors::large(span) {
                let (mut o, end) = span.m;
                while o + W <= end {
                    let ms: [&Manifold; W] = std::array::from_fn(|l| &self.manifolds[self.order[o + l]]);
                    if !Batch::qualify(&ms) {
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
        self.batches = batches;
    }
}

impl Visit<'_> {
    /// [`Visit::manifolds_interleaved`] on the lanes of `batch`, whose manifolds are `ms` with
    /// their points `points`: `true` when done, `false` (nothing touched) when a soft row has
    /// no mass scale in this pass.
    pub(super) fn manifolds_lanes<S: ?Sized + Store>(
        &self,
        vel: &mut Direct<S>,
        batch: &Batch,
        ms: &mut [&mut Manifold],
        points: &mut [&mut [Point]],
        acc: &mut SweepStats,
    ) -> bool {
        let n = batch.n;
        debug_assert_eq!(ms.len(), n, "a batch's manifolds");
        let pass = usize::from(self.pass != Pass::Biased);
        if pass == 0 && !points[..n].iter().all(|p| p.iter().all(|x| x.mass_scale > 0.0)) {
            return false;
        }
        let mut bodies = Bodies::load(vel, batch);
        let (omega, inv_omega) = (Fw::splat(self.omega), Fw::splat(self.inv_omega));
        let mut total = Fw::splat(0.0);
        // Per lane and point: the squared impulse change and the residual.
        let mut d2 = [[0.0; 4]; W];
        let mut res = [[0.0; 4]; W];
        for u in 0..batch.units {
            let has = batch.has[u];
            let k = |l: usize| if has[l] { 2 * u } else { 0 };
            let UnitLanes { np, nq, rp, rq, k11, k12, k22, mn_p, mn_q } = &batch.unit[u];
            let (k11, k12, k22) = (*k11, *k12, *k22);
            let p: [&Point; W] = std::array::from_fn(|l| &points[l][k(l)]);
            let q: [&Point; W] = std::array::from_fn(|l| &points[l][k(l) + 1]);
            let (bias_p, s_p, bias_q, s_q) = if pass == 0 {
                (
                    lanes_of(&p, |x| x.bias),
                    lanes_of(&p, |x| x.mass_scale),
                    lanes_of(&q, |x| x.bias),
                    lanes_of(&q, |x| x.mass_scale),
                )
            } else {
                (lanes_of(&p, |x| x.relax_bias), Fw::splat(1.0), lanes_of(&q, |x| x.relax_bias), Fw::splat(1.0))
            };
            let (lp, lq) = (lanes_of(&p, |x| x.ln), lanes_of(&q, |x| x.ln));
            let (inv_mn_p, inv_mn_q) = (Fw::from_fn(|l| p[l].inv_mn[pass]), Fw::from_fn(|l| q[l].inv_mn[pass]));
            // (The arithmetic of `Visit::normal_pair`, lane by lane.)
            let vp = bodies.speed(np, rp) + bias_p;
            let vq = bodies.speed(nq, rq) + bias_q;
            let (kp11, kp22) = (k11 / s_p, k22 / s_q);
            let det = kp11 * kp22 - k12 * k12;
            let inv_det = Fw::splat(1.0) / det;
            let b1 = vp - k11 * lp - k12 * lq;
            let b2 = vq - k12 * lp - k22 * lq;
            let both = ((k12 * b2 - kp22 * b1) * inv_det, (k12 * b1 - kp11 * b2) * inv_det);
            let (one, two) = (-b1 * (s_p * *mn_p), -b2 * (s_q * *mn_q));
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
            bodies.push(imp, (rp.ima, rp.imb), dwa, dwb, (!every).then_some(has));
            let (r_p, r_q) = (dp.abs() * inv_omega * inv_mn_p, dq.abs() * inv_omega * inv_mn_q);
            for l in 0..n {
                if has[l] {
                    let pts = &mut points[l];
                    (pts[2 * u].ln, pts[2 * u + 1].ln) = (x.lane(l), y.lane(l));
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
        let rows = self.friction_lanes(&mut bodies, &batch.friction, ms, n, total);
        // Write the velocities back, then the statistics in the scalar visit's order.
        bodies.store(vel, batch);
        if !self.counted() {
            return true;
        }
        let (max, sum2, count, dl2) = (&mut acc.0, &mut acc.1, &mut acc.2, &mut acc.3);
        for l in 0..n {
            for k in 0..points[l].len() {
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

    /// [`Visit::warm_manifold`] on the lanes of `batch` (manifolds `ms`, points `points`): each
    /// point's impulse times `scale`, point after point, then the friction and twist impulses
    /// times `scale`, each pushed through the rows' `M⁻¹Jᵀ` as the scalar warm start pushes
    /// them, operation for operation. The impulses are scaled first; then body `a`'s velocities
    /// take their changes, then body `b`'s. (No change depends on a velocity, so each body
    /// takes the same additions in the same order as in the scalar warm start; one body's six
    /// lanes at a time fit the registers, where the two bodies' twelve spilled: 86 million
    /// instructions over 120 frames of the 210-box pyramid, no fewer than the scalar visit.)
    pub(super) fn warm_lanes<S: ?Sized + Store>(
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
            let lp = Fw::from_fn(|l| points[l][k(l)].ln) * s;
            let lq = Fw::from_fn(|l| points[l][k(l) + 1].ln) * s;
            for l in 0..n {
                if has[l] {
                    (points[l][2 * u].ln, points[l][2 * u + 1].ln) = (lp.lane(l), lq.lane(l));
                }
            }
            *pair = ([lp, lq], (!has.iter().all(|&h| h)).then(|| Mw::of(has)));
        }
        let d1 = Fw::from_fn(|l| ms[l].lt1) * s;
        let d2 = Fw::from_fn(|l| ms[l].lt2) * s;
        let d = Fw::from_fn(|l| ms[l].l_twist) * s;
        for (l, m) in ms.iter_mut().enumerate() {
            (m.lt1, m.lt2, m.l_twist) = (d1.lane(l), d2.lane(l), d.lane(l));
        }
        let fr = &batch.friction;
        let z = Fw::splat(0.0);
        let nothing = Vw { x: z, y: z, z };
        for side_a in [true, false] {
            let zero = Vec3::zeros();
            let read: [(Vec3, Vec3); W] = std::array::from_fn(|l| match (side_a, batch.b[l]) {
                (true, _) => vel.st.read(batch.a[l]),
                (false, Some(k)) => vel.st.read(k),
                (false, None) => (zero, zero),
            });
            let mut v = Vw::from_fn(|l| read[l].0);
            let mut w = Vw::from_fn(|l| read[l].1);
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
            for l in 0..n {
                match (side_a, batch.b[l]) {
                    (true, _) if batch.ma[l] => vel.st.write(batch.a[l], v.lane(l), w.lane(l)),
                    (false, Some(k)) if batch.mb[l] => vel.st.write(k, v.lane(l), w.lane(l)),
                    _ => {}
                }
            }
        }
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
        ms: &mut [&mut Manifold],
        n: usize,
        total: Fw,
    ) -> [(f64, f64); W] {
        let mut out = [(0.0, 0.0); W];
        if !self.friction || !fr.on.iter().any(|&x| x) {
            return out;
        }
        let only = (!fr.on.iter().all(|&x| x)).then_some(fr.on);
        let omega = Fw::splat(self.omega);
        let (v1, v2) = (bodies.speed(&fr.t1, &fr.r1), bodies.speed(&fr.t2, &fr.r2));
        let (o1, o2) = (Fw::from_fn(|l| ms[l].lt1), Fw::from_fn(|l| ms[l].lt2));
        let mt = &fr.mt;
        let mut l1 = o1 - omega * (mt[0] * v1 + mt[1] * v2);
        let mut l2 = o2 - omega * (mt[2] * v1 + mt[3] * v2);
        let limit = fr.mu * total;
        match self.cone {
            FrictionCone::Disk => {
                let len = (l1 * l1 + l2 * l2).lanes();
                let (mut a1, mut a2, limit) = (l1.lanes(), l2.lanes(), limit.lanes());
                for l in 0..W {
                    let len = len[l].sqrt();
                    if len > limit[l] {
                        (a1[l], a2[l]) = (a1[l] * limit[l] / len, a2[l] * limit[l] / len);
                    }
                }
                (l1, l2) = (Fw::from_fn(|l| a1[l]), Fw::from_fn(|l| a2[l]));
            }
            FrictionCone::Pyramid => (l1, l2) = (l1.max(-limit).min(limit), l2.max(-limit).min(limit)),
        }
        let (d1, d2) = (l1 - o1, l2 - o2);
        let tangent = d1 * d1 + d2 * d2;
        let imp = fr.t1.scale(d1) + fr.t2.scale(d2);
        let dwa = fr.r1.ga.scale(d1) + fr.r2.ga.scale(d2);
        let dwb = fr.r1.gb.scale(d1) + fr.r2.gb.scale(d2);
        bodies.push(imp, (fr.r1.ima, fr.r1.imb), dwa, dwb, only);
        // Twist: the relative spin about the normal, clamped to μ·radius·Σλₙ.
        let spin = bodies.wa - bodies.wb;
        let old = Fw::from_fn(|l| ms[l].l_twist);
        let limit = fr.mu * fr.radius * total;
        let new = (old - omega * fr.m_twist * fr.n.dot(&spin)).max(-limit).min(limit);
        let d = new - old;
        let twist = d * d;
        let z = Fw::splat(0.0);
        let nothing = Vw { x: z, y: z, z };
        bodies.push(nothing, (z, z), fr.twist_a.scale(d), fr.twist_b.scale(d), only);
        for l in 0..n {
            if fr.on[l] {
                let m = &mut ms[l];
                (m.lt1, m.lt2, m.l_twist) = (l1.lane(l), l2.lane(l), new.lane(l));
                out[l] = (tangent.lane(l), twist.lane(l));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With `tgs-soft`, the batches hold most of the pyramid's manifolds (so that the test of
    /// equal numbers with and without lanes, `tests/colored.rs`, compares the lanes), each batch
    /// lies inside its colour at the place it names, and none is built with `lanes = false`.
    #[test]
    fn lanes_are_used() {
        let scene = solverlab_scenes::resolve("rigid-pyramid", &["base=12".to_string()]).unwrap();
        let settings = crate::preset("tgs-soft").unwrap().config.settings().clone();
        let cfg: PgsConfig = toml::Value::Table(settings).try_into().unwrap();
        for lanes in [true, false] {
            let cfg = PgsConfig { lanes, ..cfg.clone() };
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
}
