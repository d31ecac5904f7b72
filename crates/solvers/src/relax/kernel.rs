//! The relaxation solver's inner loops over sticks.
//!
//! [`stick_step`] is the one definition of a stick's XPBD update; every sweep uses it, so the
//! general path (pins, inequality sticks, any order) and the fast paths below give the same
//! numbers. It needs one division per stick, as a hand-written projection does.
//!
//! The fast paths run when every row of a scene is an equality stick (cloths, chains, ragdolls
//! without pins on movable particles) in natural, reversed or coloured order. Their data are
//! structure-of-arrays in visiting order ([`StickSoa`]), the multiplier is read only under XPBD
//! (monomorphised), and nothing is dispatched per row:
//!
//! * Gauss-Seidel in natural or reversed order: one pass over the arrays;
//! * coloured Gauss-Seidel: colour by colour; above [`PARALLEL_ROWS`] rows a colour's rows are
//!   grouped by the block of particles that holds both their ends, the blocks run in parallel,
//!   each on its own slices of the positions and the multipliers, and the few rows that straddle
//!   two blocks follow on one thread. No two rows of a colour share a particle, so the result is
//!   the same for any thread count, and the same as visiting the colour's rows one by one;
//! * Jacobi (averaged or mass splitting): every row's correction and multiplier from the
//!   positions at the start of the sweep, then each particle gathers its rows' corrections in row
//!   order (the order a sequential scatter adds them in), both in parallel above
//!   [`PARALLEL_ROWS`] rows; again the same for any thread count.
//!
//! The solver stores the fast path's multipliers in its visiting order (row `k` of the arrays is
//! `lambda[k]`), so that every parallel pass writes them as slices and nothing runs on one thread
//! but the straddling rows.

use rayon::prelude::*;
use solverlab_core::constraint::delta_lambda;
use solverlab_core::model::Sense;
use solverlab_core::rng::Rng;
use solverlab_core::Vec3;

use crate::common::order::{block_of, block_start, group_by_block};
use crate::common::{larger, PARALLEL_ROWS};

/// The smallest piece of a parallel pass one thread takes.
pub(super) const CHUNK: usize = 2048;

/// The particle blocks of the parallel coloured sweep: eight per thread of the pool the solver
/// is prepared in, so that idle threads find work (any number gives the same numbers; more
/// blocks leave more rows straddling two, which run on one thread).
fn parts_count() -> usize {
    8 * rayon::current_num_threads().max(1)
}

/// A stick's update from the current positions.
#[derive(Clone, Copy, Debug)]
pub(super) struct StickStep {
    /// `Δλ / ℓ · d`, with `d = x_b − x_a` and `ℓ` the current length (times −1 for an at-most
    /// stick): the correction is `Δx_a = −w_a·k·v`, `Δx_b = w_b·k·v` for stiffness factor `k`.
    pub v: Vec3,
    /// The multiplier change `Δλ` (before `k`).
    pub dl: f64,
    /// The row's residual `|Δλ|·(Σw + α̃)`, in metres of `C`.
    pub res: f64,
}

/// The XPBD update of one stick (see the module docs of `relax`): `C = ℓ − rest` (at most:
/// `rest − ℓ`), `Δλ = (−C − α̃λ)/(wsum + α̃)`, clamped to `λ + Δλ ≥ 0` for an inequality, with
/// the normal `d/ℓ` folded into one division `1/(ℓ·(wsum + α̃))`. When the particles (nearly)
/// coincide the normal is `fallback()` (a seeded random unit vector: Jakobsen's "dislocate
/// slightly").
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn stick_step(
    xa: &Vec3,
    xb: &Vec3,
    rest: f64,
    sense: Sense,
    wsum: f64,
    alpha_tilde: f64,
    lambda: f64,
    sqrt_approx: bool,
    fallback: impl FnOnce() -> Vec3,
) -> StickStep {
    let d = xb - xa;
    let dd = d.dot(&d);
    let len = if sqrt_approx { (rest * rest + dd) / (2.0 * rest) } else { dd.sqrt() };
    let (sign, c) = match sense {
        Sense::Equal | Sense::AtLeast => (1.0, len - rest),
        Sense::AtMost => (-1.0, rest - len),
    };
    let denom = wsum + alpha_tilde;
    if denom <= 0.0 {
        return StickStep { v: Vec3::zeros(), dl: 0.0, res: 0.0 };
    }
    if dd <= 1e-24 {
        let dl = delta_lambda(c, wsum, alpha_tilde, lambda, sense != Sense::Equal);
        return StickStep { v: fallback() * (sign * dl), dl, res: (dl * denom).abs() };
    }
    let numerator = -c - alpha_tilde * lambda;
    let q = 1.0 / (len * denom);
    let (dl, t) = match sense {
        Sense::Equal => (numerator * len * q, numerator * q),
        _ => {
            let dl = (lambda + numerator * len * q).max(0.0) - lambda;
            (dl, dl * denom * q)
        }
    };
    StickStep { v: d * (sign * t), dl, res: (dl * denom).abs() }
}

/// The running residual after a row's: [`larger`] (one `maxsd`) takes the coloured sweep from
/// 8.0 to 7.4 ns per row on the 256² cloth, but slows the XPBD sweeps, which keep `f64::max`
/// (natural order 13.4 against 16.0 ns, coloured 9.0 against 11.7; measured in one run, cause
/// not pinned down). Both give the same bits.
#[inline(always)]
fn keep<const XPBD: bool>(r: f64, res: f64) -> f64 {
    if XPBD {
        r.max(res)
    } else {
        larger(r, res)
    }
}

/// The dislocation direction of stick row `row` in step `step` when its particles coincide.
pub(super) fn dislocation(seed: u64, row: u32, step: u64) -> Vec3 {
    Rng::new(seed ^ (u64::from(row) << 24) ^ step.rotate_left(48)).unit_vector()
}

/// Equality sticks as arrays in visiting order.
#[derive(Clone, Debug, Default)]
pub(super) struct StickSoa {
    pub a: Vec<u32>,
    pub b: Vec<u32>,
    pub rest: Vec<f64>,
    /// Compliance α (m/N).
    pub alpha: Vec<f64>,
    /// The row's multiplier row in scene order, which seeds the dislocation of coinciding
    /// particles. Its multiplier is `lambda[k]`: the solver stores the fast path's multipliers
    /// in visiting order.
    pub row: Vec<u32>,
    /// `α/h²` of the current step (XPBD only).
    pub at: Vec<f64>,
    /// `w_a + w_b` (mass splitting: `n_a w_a + n_b w_b`).
    pub wsum: Vec<f64>,
    /// Colour boundaries: colour `c` is `colors[c]..colors[c + 1]` (one colour for a sequential
    /// order).
    pub colors: Vec<usize>,
    /// Coloured order: within each colour, the rows are grouped by the block of particles (equal
    /// index ranges, [`parts_count`] of them) holding both their ends, blocks in order, then the rows that
    /// straddle two blocks. `parts[c]` holds the row offsets of the blocks and, last, where the
    /// straddling rows start.
    pub parts: Vec<Vec<usize>>,
    /// Jacobi gather: the rows touching each particle in row order, as `2k` (end a) or `2k + 1`
    /// (end b), in CSR form.
    pub adjacency: (Vec<usize>, Vec<u32>),
    /// Averaged Jacobi: each particle's factor `ω/nᵢ` and each row's multiplier share
    /// `ω/max(n_a, n_b)` (mass splitting: `ω` both).
    pub fac: Vec<f64>,
    pub share: Vec<f64>,
}

impl StickSoa {
    pub fn len(&self) -> usize {
        self.rest.len()
    }

    /// Builds the arrays from `(a, b, rest, alpha, row)` in visiting order, with colour
    /// boundaries `colors`, over `n` particles with inverse masses `w` (scaled by `split`), for
    /// relaxation factor `omega`.
    pub fn new(
        sticks: &[(u32, u32, f64, f64, u32)],
        colors: Vec<usize>,
        w: &[f64],
        split: Option<&[f64]>,
        n: usize,
        omega: f64,
    ) -> Self {
        let mut s = StickSoa { colors, ..Default::default() };
        for &(a, b, rest, alpha, row) in sticks {
            s.a.push(a);
            s.b.push(b);
            s.rest.push(rest);
            s.alpha.push(alpha);
            s.row.push(row);
            let (a, b) = (a as usize, b as usize);
            s.wsum.push(match split {
                Some(n) => w[a] * n[a] + w[b] * n[b],
                None => w[a] + w[b],
            });
        }
        s.at = vec![0.0; s.len()];
        if s.colors.len() > 2 {
            s.group_by_block(n);
        }
        let mut count = vec![0usize; n + 1];
        for k in 0..s.len() {
            count[s.a[k] as usize + 1] += 1;
            count[s.b[k] as usize + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let mut next = count.clone();
        let mut ends = vec![0u32; count[n]];
        for k in 0..s.len() {
            for (p, end) in [(s.a[k] as usize, 0), (s.b[k] as usize, 1)] {
                ends[next[p]] = 2 * k as u32 + end;
                next[p] += 1;
            }
        }
        let degree = |i: usize| (count[i + 1] - count[i]) as f64;
        s.fac = (0..n).map(|i| if split.is_some() { omega } else { omega / degree(i).max(1.0) }).collect();
        s.share = (0..s.len())
            .map(|k| match split {
                Some(_) => omega,
                None => omega / degree(s.a[k] as usize).max(degree(s.b[k] as usize)).max(1.0),
            })
            .collect();
        s.adjacency = (count, ends);
        s
    }

    /// Reorders each colour's rows by particle block (see [`StickSoa::parts`]): rows of one
    /// colour are independent, so any order within a colour gives the same numbers.
    fn group_by_block(&mut self, n: usize) {
        let parts = parts_count();
        let mut order: Vec<usize> = Vec::with_capacity(self.len());
        for c in 0..self.colors.len() - 1 {
            let rows = self.colors[c]..self.colors[c + 1];
            let mut in_colour: Vec<usize> = rows.clone().collect();
            let block = |&k: &usize| block_of(&[self.a[k] as usize, self.b[k] as usize], parts, n);
            self.parts.push(group_by_block(&mut in_colour, parts, rows.start, block));
            order.extend(in_colour);
        }
        let pick = |v: &Vec<u32>| order.iter().map(|&k| v[k]).collect::<Vec<u32>>();
        let pickf = |v: &Vec<f64>| order.iter().map(|&k| v[k]).collect::<Vec<f64>>();
        (self.a, self.b, self.row) = (pick(&self.a), pick(&self.b), pick(&self.row));
        (self.rest, self.alpha, self.wsum) = (pickf(&self.rest), pickf(&self.alpha), pickf(&self.wsum));
    }

    /// Whether a sweep runs a pass on every core: Jacobi (`jacobi`) from [`PARALLEL_ROWS`] rows,
    /// coloured Gauss-Seidel when a colour has that many.
    pub fn parallel(&self, jacobi: bool) -> bool {
        match jacobi {
            true => parallel(self.len()),
            false => !self.parts.is_empty() && self.colors.windows(2).any(|c| parallel(c[1] - c[0])),
        }
    }

    /// Sets `α/h²` for a step of `h` (XPBD).
    pub fn set_step(&mut self, h: f64) {
        for (at, alpha) in self.at.iter_mut().zip(&self.alpha) {
            *at = alpha / (h * h);
        }
    }
}

/// What a fast sweep needs besides the arrays.
pub(super) struct Sweep<'a> {
    pub w: &'a [f64],
    pub lambda: &'a mut [f64],
    /// Stiffness factor `k` (Gauss-Seidel: `k·ω`).
    pub scale: f64,
    pub sqrt_approx: bool,
    /// Seed and step of the dislocation of coinciding particles.
    pub seed: u64,
    pub step: u64,
}

/// The numbers a row update reads besides its own (a [`Sweep`] without the multipliers),
/// passed by value to the row loops.
#[derive(Clone, Copy)]
struct RowParams<'a> {
    w: &'a [f64],
    scale: f64,
    sqrt_approx: bool,
    seed: u64,
    step: u64,
}

impl<'a> Sweep<'a> {
    fn params(&self) -> RowParams<'a> {
        RowParams { w: self.w, scale: self.scale, sqrt_approx: self.sqrt_approx, seed: self.seed, step: self.step }
    }
}

/// A block of the parallel coloured sweep: its first particle, its positions, its rows'
/// multipliers and its rows.
type Block<'a> = (usize, &'a mut [Vec3], &'a mut [f64], std::ops::Range<usize>);

/// Whether a pass over `rows` rows runs on every core.
pub(super) fn parallel(rows: usize) -> bool {
    rows >= PARALLEL_ROWS && rayon::current_num_threads() > 1
}

/// Gauss-Seidel over rows `range` of `s`, one after the other; returns the residual.
fn gauss_seidel_rows<const XPBD: bool>(
    s: &StickSoa,
    range: std::ops::Range<usize>,
    x: &mut [Vec3],
    sw: &mut Sweep,
) -> f64 {
    let p = sw.params();
    gauss_seidel_kernel::<XPBD>(s, range.clone(), x, 0, &mut sw.lambda[range], p)
}

/// Gauss-Seidel over rows `rows` of `s`, one after the other, on the positions `x` of the
/// particles from `first` on and the rows' multipliers `lambda`; returns the residual.
#[inline(always)]
fn gauss_seidel_kernel<const XPBD: bool>(
    s: &StickSoa,
    rows: std::ops::Range<usize>,
    x: &mut [Vec3],
    first: usize,
    lambda: &mut [f64],
    p: RowParams,
) -> f64 {
    let RowParams { w, scale, sqrt_approx, seed, step } = p;
    let mut residual: f64 = 0.0;
    for (k, l) in rows.zip(lambda.iter_mut()) {
        let (a, b) = (s.a[k] as usize, s.b[k] as usize);
        let (at, lk) = if XPBD { (s.at[k], *l) } else { (0.0, 0.0) };
        let st =
            stick_step(&x[a - first], &x[b - first], s.rest[k], Sense::Equal, s.wsum[k], at, lk, sqrt_approx, || {
                dislocation(seed, s.row[k], step)
            });
        residual = keep::<XPBD>(residual, st.res);
        *l += st.dl * scale;
        x[a - first] -= st.v * (w[a] * scale);
        x[b - first] += st.v * (w[b] * scale);
    }
    residual
}

/// [`gauss_seidel_kernel`] behind a call boundary, for the parallel pass's blocks. Inlined into
/// the pass's closure, the loop would read the arrays through the closure's captured references,
/// which carry no no-alias marks, and reload every array pointer at each row; as a function's
/// arguments they keep them (measured on the 256² cloth, the parallel pass on one thread: 12.7
/// ns per row inlined, 10.4 here, 9.3 for the sequential loop).
#[inline(never)]
fn gauss_seidel_block<const XPBD: bool>(
    s: &StickSoa,
    rows: std::ops::Range<usize>,
    x: &mut [Vec3],
    first: usize,
    lambda: &mut [f64],
    p: RowParams,
) -> f64 {
    gauss_seidel_kernel::<XPBD>(s, rows, x, first, lambda, p)
}

/// One Gauss-Seidel pass over `s` in its order, colour by colour; returns the residual. A colour
/// of at least [`PARALLEL_ROWS`] rows runs its particle blocks on every core, each block on its
/// own slices of the positions and of the multipliers, then the rows that straddle two blocks:
/// the same numbers as one row after the other, since no two rows of a colour share a particle.
pub(super) fn gauss_seidel<const XPBD: bool>(s: &StickSoa, x: &mut [Vec3], sw: &mut Sweep) -> f64 {
    let p = sw.params();
    if s.parts.is_empty() {
        return gauss_seidel_rows::<XPBD>(s, 0..s.len(), x, sw);
    }
    let mut residual: f64 = 0.0;
    for c in 0..s.colors.len() - 1 {
        let range = s.colors[c]..s.colors[c + 1];
        if !parallel(range.len()) {
            residual = residual.max(gauss_seidel_rows::<XPBD>(s, range, x, sw));
            continue;
        }
        // The blocks in parallel, each on its own slices; then the rows that straddle two
        // blocks. Every row reads and writes only its own particles and multiplier.
        let parts = &s.parts[c];
        let (n, count) = (x.len(), parts.len() - 1);
        let mut blocks: Vec<Block> = Vec::with_capacity(count);
        let (mut xs, mut ls) = (&mut x[..], &mut sw.lambda[parts[0]..parts[count]]);
        for j in 0..count {
            let first = block_start(j, count, n);
            let (head, tail) = xs.split_at_mut(block_start(j + 1, count, n) - first);
            let (lhead, ltail) = ls.split_at_mut(parts[j + 1] - parts[j]);
            blocks.push((first, head, lhead, parts[j]..parts[j + 1]));
            (xs, ls) = (tail, ltail);
        }
        let r = blocks
            .into_par_iter()
            .map(|(first, xs, lambda, rows)| gauss_seidel_block::<XPBD>(s, rows, xs, first, lambda, p))
            .reduce(|| 0.0, larger);
        residual = residual.max(r);
        residual = residual.max(gauss_seidel_rows::<XPBD>(s, parts[count]..range.end, x, sw));
    }
    residual
}

/// The rows of the parallel Jacobi pass from `first` on: each row's correction into `out` and its
/// multiplier update in `lambda`, from the positions `x`; returns the largest residual. Behind a
/// call boundary, like [`gauss_seidel_block`], so that the loop keeps its arrays' no-alias marks.
#[inline(never)]
fn jacobi_rows<const XPBD: bool>(
    s: &StickSoa,
    first: usize,
    out: &mut [Vec3],
    lambda: &mut [f64],
    x: &[Vec3],
    p: RowParams,
) -> f64 {
    let RowParams { scale, sqrt_approx, seed, step, .. } = p;
    let mut residual: f64 = 0.0;
    for (k, (out, l)) in (first..).zip(out.iter_mut().zip(lambda.iter_mut())) {
        let (a, b) = (s.a[k] as usize, s.b[k] as usize);
        let (at, lk) = if XPBD { (s.at[k], *l) } else { (0.0, 0.0) };
        let st = stick_step(&x[a], &x[b], s.rest[k], Sense::Equal, s.wsum[k], at, lk, sqrt_approx, || {
            dislocation(seed, s.row[k], step)
        });
        *out = st.v;
        *l += st.dl * scale * s.share[k];
        residual = larger(residual, st.res);
    }
    residual
}

/// The particles of the parallel Jacobi pass from `first` on: each one's corrections `buf`,
/// gathered in row order, times `fac`.
#[inline(never)]
fn jacobi_gather(s: &StickSoa, first: usize, x: &mut [Vec3], buf: &[Vec3], w: &[f64], scale: f64) {
    let (start, ends) = (&s.adjacency.0, &s.adjacency.1);
    for (i, x) in (first..).zip(x.iter_mut()) {
        let mut d = Vec3::zeros();
        for &e in &ends[start[i]..start[i + 1]] {
            let v = buf[(e / 2) as usize];
            match e % 2 {
                0 => d -= v * (w[i] * scale),
                _ => d += v * (w[i] * scale),
            }
        }
        if start[i + 1] > start[i] {
            *x += d * s.fac[i];
        }
    }
}

/// One Jacobi pass over `s`: every row from the positions at the start of the sweep, each
/// particle's corrections summed in row order, then `x_i += Σ·fac_i` and `λ += Δλ·share`
/// (averaged: `ω/nᵢ` and `ω/max(n_a, n_b)`; mass splitting: `ω`). One core scatters the sums as
/// it goes; at least [`PARALLEL_ROWS`] rows compute the rows on every core and gather each
/// particle's sum in the same row order, so both give the same numbers. Returns the residual.
pub(super) fn jacobi<const XPBD: bool>(
    s: &StickSoa,
    x: &mut [Vec3],
    sw: &mut Sweep,
    dx: &mut [Vec3],
    buf: &mut Vec<Vec3>,
) -> f64 {
    let n = s.len();
    let p = sw.params();
    let RowParams { scale, sqrt_approx, seed, step, .. } = p;
    if !parallel(n) {
        dx.iter_mut().for_each(|d| *d = Vec3::zeros());
        let mut residual: f64 = 0.0;
        for k in 0..n {
            let (a, b) = (s.a[k] as usize, s.b[k] as usize);
            let (at, l) = if XPBD { (s.at[k], sw.lambda[k]) } else { (0.0, 0.0) };
            let st = stick_step(&x[a], &x[b], s.rest[k], Sense::Equal, s.wsum[k], at, l, sqrt_approx, || {
                dislocation(seed, s.row[k], step)
            });
            residual = keep::<XPBD>(residual, st.res);
            dx[a] -= st.v * (sw.w[a] * scale);
            dx[b] += st.v * (sw.w[b] * scale);
            // λ is read only by its own row, so it may change during the sweep.
            sw.lambda[k] += st.dl * scale * s.share[k];
        }
        let start = &s.adjacency.0;
        for (i, (x, d)) in x.iter_mut().zip(dx.iter()).enumerate() {
            if start[i + 1] > start[i] {
                *x += d * s.fac[i];
            }
        }
        return residual;
    }
    buf.resize(n, Vec3::zeros());
    let x_now: &[Vec3] = x;
    // λ is read and written only by its own row, so each row updates it where it stands.
    let residual = buf[..n]
        .par_chunks_mut(CHUNK)
        .zip(sw.lambda[..n].par_chunks_mut(CHUNK))
        .enumerate()
        .map(|(c, (out, l))| jacobi_rows::<XPBD>(s, c * CHUNK, out, l, x_now, p))
        .reduce(|| 0.0, larger);
    let (w, buf) = (sw.w, &*buf);
    x.par_chunks_mut(CHUNK).enumerate().for_each(|(c, x)| jacobi_gather(s, c * CHUNK, x, buf, w, scale));
    residual
}

/// `dst = src`, on every core from [`PARALLEL_ROWS`] elements (Chebyshev's copies of the
/// positions and multipliers at each sweep).
pub(super) fn copy_into<T: Copy + Send + Sync + Default>(dst: &mut Vec<T>, src: &[T]) {
    if !parallel(src.len()) {
        dst.clear();
        dst.extend_from_slice(src);
        return;
    }
    dst.resize(src.len(), T::default());
    dst.par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// `Σ |x − old|²` over the movable particles (`w > 0`), summed in fixed chunks in order, so that
/// any thread count gives the same number.
pub(super) fn change_norm2(x: &[Vec3], old: &[Vec3], w: &[f64]) -> f64 {
    let part = |(x, (old, w)): (&[Vec3], (&[Vec3], &[f64]))| -> f64 {
        x.iter().zip(old).zip(w).filter(|(_, w)| **w > 0.0).map(|((x, old), _)| (x - old).norm_squared()).sum()
    };
    if !parallel(x.len()) {
        return x.chunks(CHUNK).zip(old.chunks(CHUNK).zip(w.chunks(CHUNK))).map(part).sum();
    }
    let parts: Vec<f64> = x.par_chunks(CHUNK).zip(old.par_chunks(CHUNK).zip(w.par_chunks(CHUNK))).map(part).collect();
    parts.iter().sum()
}

/// Chebyshev's step `x = old + (x − old)·weight` for the movable particles (`w > 0`) and for every
/// multiplier, on every core for large systems (elementwise: the same numbers either way).
pub(super) fn extrapolate(x: &mut [Vec3], old_x: &[Vec3], w: &[f64], lambda: &mut [f64], old_l: &[f64], weight: f64) {
    if !parallel(x.len().max(lambda.len())) {
        extrapolate_positions(x, old_x, w, weight);
        extrapolate_multipliers(lambda, old_l, weight);
        return;
    }
    x.par_chunks_mut(CHUNK)
        .zip(old_x.par_chunks(CHUNK))
        .zip(w.par_chunks(CHUNK))
        .for_each(|((x, old), w)| extrapolate_positions(x, old, w, weight));
    lambda
        .par_chunks_mut(CHUNK)
        .zip(old_l.par_chunks(CHUNK))
        .for_each(|(l, old)| extrapolate_multipliers(l, old, weight));
}

#[inline(never)]
fn extrapolate_positions(x: &mut [Vec3], old: &[Vec3], w: &[f64], weight: f64) {
    for ((x, old), w) in x.iter_mut().zip(old).zip(w) {
        if *w > 0.0 {
            *x = old + (*x - old) * weight;
        }
    }
}

#[inline(never)]
fn extrapolate_multipliers(lambda: &mut [f64], old: &[f64], weight: f64) {
    for (l, old) in lambda.iter_mut().zip(old) {
        *l = old + (*l - old) * weight;
    }
}
