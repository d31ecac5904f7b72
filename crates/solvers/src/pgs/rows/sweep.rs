//! The sweeps over the prepared rows: one row's update ([`row_sweep`]), a sweep in any visiting
//! order ([`Rows::sweep`]) and the parallel sweep over rows stored in the coloured layout.

use solverlab_core::rng::Rng;
use solverlab_core::Vec3;

use super::{apply, jv, Item, Parts, Pass, Rows, VRow};
use crate::common::order::{block_start, Ordering};
// Sweeps over rows stored in the coloured layout run their particle blocks on every core from
// `PARALLEL_ROWS` rows on (the relaxation family's threshold).
use crate::common::PARALLEL_ROWS;

/// What the split sweeps read besides the pseudo velocities: the start-of-step positions `x0`
/// and the velocities `v` (both indexed by particle, not offset by a block's first particle),
/// and the step `h`, so that a stick's row can be evaluated at the end-of-step positions
/// `x0 + h·(v + v_p)`.
#[derive(Clone, Copy)]
pub(super) struct EndOfStep<'a> {
    pub x0: &'a [Vec3],
    pub v: &'a [Vec3],
    pub h: f64,
}

/// One row's sweep: the new accumulated impulse from the velocities `v` (the pseudo velocities
/// for `Pass::Split`) of the particles from `first` on, stored in the row and applied to `v`.
/// Returns the natural residual and the applied change (see the module docs of `pgs`); `None` for
/// a row the pass skips.
///
/// A split sweep over a `stick` also removes the stick's curvature. The linear split row
/// `J* v_p + β·C*/h = 0` (`J* = (−u*, u*)` and `C*` at the start of the step) assumes that the
/// end-of-step length is `C* + h·J*(v + v_p)`; a link that turns by `θ` in the step is longer
/// than that by about `|d|·θ²/2`, and a swinging chain's links turn by most of a radian a step at
/// the bottom of the swing. So the stick's row is the linear row plus the remainder
/// `R = C(e) − C* − h·J*(v + v_p)` at the end-of-step positions `e = x0 + h·(v + v_p)`:
/// `F = C(e) − (1 − β)·C* − h·J*·v = 0` (a stick's `β` is 1: see [`Rows::prepare`]), solved by
/// `Δλ = −m·F/h` along the end-of-step direction `u = (e_b − e_a)/|e_b − e_a|` (one Newton step
/// on the stick's end length). With converged velocity rows (`J*·v = 0`) this leaves
/// `(1 − β)·C*`, as the linear row does; it does not chase the velocity rows' own residual,
/// which their next sweeps remove (chasing it, the pseudo impulses of touching contacts lift a
/// resting box whenever a stick's correction moves a corner down).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn row_sweep(
    row: &mut VRow,
    parts: &Parts,
    v: &mut [Vec3],
    first: usize,
    w: &[f64],
    pass: Pass,
    omega: f64,
    end: Option<EndOfStep>,
) -> Option<(f64, f64)> {
    if row.m == 0.0 || (pass == Pass::Split && !row.split) {
        return None;
    }
    if pass == Pass::Split && row.stick {
        if let Some(end) = end {
            return Some(stick_split(row, parts, v, first, w, omega, end));
        }
    }
    let (lambda, bias, ms, is) = match pass {
        Pass::Biased => (row.lambda, row.bias, row.mass_scale, row.impulse_scale),
        Pass::Relax if row.compliant => (row.lambda, row.bias, row.mass_scale, row.impulse_scale),
        Pass::Relax => (row.lambda, row.relax_bias, 1.0, 0.0),
        Pass::Split => (row.split_lambda, row.split_bias, 1.0, 0.0),
    };
    let jv: f64 = parts.of(row).map(|(i, j)| j.dot(&v[i - first])).sum();
    let raw = -row.m * ms * (jv + bias) - is * lambda;
    let target = (lambda + raw).clamp(row.lo, row.hi);
    let res = (target - lambda).abs() / (row.m * ms);
    let new = (lambda + omega * (target - lambda)).clamp(row.lo, row.hi);
    let dl = new - lambda;
    if pass == Pass::Split {
        row.split_lambda = new;
    } else {
        row.lambda = new;
    }
    for (i, j) in parts.of(row) {
        v[i - first] += j * (w[i] * dl);
    }
    Some((res, dl))
}

/// The split sweep of a stick (see [`row_sweep`]); `vp` are the pseudo velocities from particle
/// `first` on. The residual is `|F|/h` (m/s).
#[inline(always)]
fn stick_split(
    row: &mut VRow,
    parts: &Parts,
    vp: &mut [Vec3],
    first: usize,
    w: &[f64],
    omega: f64,
    end: EndOfStep,
) -> (f64, f64) {
    let slot = row.start as usize;
    let (a, b) = (parts.p[slot] as usize, parts.p[slot + 1] as usize);
    let u0 = parts.j[slot + 1];
    let at = |i: usize, vp: &[Vec3]| end.x0[i] + (end.v[i] + vp[i - first]) * end.h;
    let d = at(b, vp) - at(a, vp);
    let len = d.norm();
    // Coinciding ends: keep the start-of-step direction.
    let u = if len > 0.0 { d / len } else { u0 };
    // F/h = (|e_b − e_a| − |x0_b − x0_a|)/h + β·C*/h − J*·v, the rest length cancelling.
    let f = (len - (end.x0[b] - end.x0[a]).norm()) / end.h + row.split_bias - u0.dot(&(end.v[b] - end.v[a]));
    let target = -row.m * f;
    let dl = omega * target;
    row.split_lambda += dl;
    vp[a - first] -= u * (w[a] * dl);
    vp[b - first] += u * (w[b] * dl);
    (f.abs(), dl)
}

/// A sweep's statistics: (max, sum of squares, count, Σ Δλ²) of the residuals.
type Stats = (f64, f64, usize, f64);

/// `a` then `b`.
fn merge(a: Stats, b: Stats) -> Stats {
    (a.0.max(b.0), a.1 + b.1, a.2 + b.2, a.3 + b.3)
}

/// The particle blocks of the coloured layout, the same for any thread count.
pub(in crate::pgs) const BLOCKS: usize = 16;

/// Adds one row's residual and impulse change to `s`.
fn add(s: Stats, res: f64, dl: f64) -> Stats {
    (s.0.max(res), s.1 + res * res, s.2 + 1, s.3 + dl * dl)
}

impl Rows {
    /// One sweep of `pass` in `ordering` with SOR factor `omega`; `x0` are the start-of-step
    /// positions (read by the split sweeps over sticks). The contacts' tangent pairs are solved
    /// only with `friction` (`friction_pass`). Returns (max, sum of squares, count, Σ Δλ²) of the
    /// residuals.
    #[allow(clippy::too_many_arguments)]
    pub fn sweep(
        &mut self,
        pass: Pass,
        friction: bool,
        w: &[f64],
        x0: &[Vec3],
        omega: f64,
        ordering: &mut Ordering,
        rng: &mut Rng,
    ) -> (f64, f64, usize, f64) {
        if self.in_layout {
            return self.block_sweep(pass, w, x0, omega);
        }
        let (mut max, mut sum2, mut count, mut dl2) = (0.0f64, 0.0, 0usize, 0.0);
        for order in ordering.passes(rng) {
            for &it in order {
                match self.items[it] {
                    Item::Single(r) => {
                        let (target, end) = match pass {
                            Pass::Split => (&mut self.vp, Some(EndOfStep { x0, v: &self.v, h: self.h })),
                            _ => (&mut self.v, None),
                        };
                        let Some((res, dl)) =
                            row_sweep(&mut self.vrows[r], &self.parts, target, 0, w, pass, omega, end)
                        else {
                            continue;
                        };
                        max = max.max(res);
                        sum2 += res * res;
                        count += 1;
                        dl2 += dl * dl;
                    }
                    Item::Friction { .. } if pass == Pass::Split || !friction => {}
                    Item::Friction { t1, normal, mu } => {
                        let limit = mu * self.vrows[normal].lambda;
                        let (a, b) = (self.vrows[t1], self.vrows[t1 + 1]);
                        let old = [a.lambda, b.lambda];
                        let raw =
                            [old[0] - a.m * jv(&self.v, &self.parts, &a), old[1] - b.m * jv(&self.v, &self.parts, &b)];
                        let clamp = |l: [f64; 2]| {
                            let norm = (l[0] * l[0] + l[1] * l[1]).sqrt();
                            if norm > limit {
                                let s = if norm > 0.0 { limit / norm } else { 0.0 };
                                [l[0] * s, l[1] * s]
                            } else {
                                l
                            }
                        };
                        let target = clamp(raw);
                        let res = ((target[0] - old[0]).powi(2) + (target[1] - old[1]).powi(2)).sqrt() / a.m;
                        let new = clamp([old[0] + omega * (target[0] - old[0]), old[1] + omega * (target[1] - old[1])]);
                        for (k, r) in [t1, t1 + 1].into_iter().enumerate() {
                            let dl = new[k] - old[k];
                            self.vrows[r].lambda = new[k];
                            apply(&mut self.v, w, &self.parts, &self.vrows[r], dl);
                            dl2 += dl * dl;
                        }
                        max = max.max(res);
                        sum2 += res * res;
                        count += 1;
                    }
                }
            }
        }
        (max, sum2, count, dl2)
    }
}

impl Rows {
    /// One sweep over rows stored in the coloured layout: colour by colour, the particle blocks
    /// on every core (each on its own slices of the rows and of the velocities: a block's rows
    /// touch only its particles), then the rows that straddle two blocks on one. The rows are
    /// visited in the order they are stored, as the one-by-one sweep does, and the statistics
    /// are summed block by block in block order, so every number is the same for any thread
    /// count.
    fn block_sweep(&mut self, pass: Pass, w: &[f64], x0: &[Vec3], omega: f64) -> Stats {
        use rayon::prelude::*;
        let layout = std::mem::take(&mut self.layout);
        let parallel = self.vrows.len() >= PARALLEL_ROWS && rayon::current_num_threads() > 1;
        let (v, end) = match pass {
            Pass::Split => (&mut self.vp, Some(EndOfStep { x0, v: &self.v, h: self.h })),
            _ => (&mut self.v, None),
        };
        let pj = &self.parts;
        let n = v.len();
        let mut stats: Stats = (0.0, 0.0, 0, 0.0);
        let mut block_stats: Vec<Stats> = Vec::with_capacity(BLOCKS);
        for parts in &layout {
            let mut blocks: Vec<(usize, &mut [Vec3], &mut [VRow])> = Vec::with_capacity(BLOCKS);
            let (mut vs, mut rs) = (&mut v[..], &mut self.vrows[parts[0]..parts[BLOCKS]]);
            for j in 0..BLOCKS {
                let first = block_start(j, BLOCKS, n);
                let (vhead, vtail) = vs.split_at_mut(block_start(j + 1, BLOCKS, n) - first);
                let (rhead, rtail) = rs.split_at_mut(parts[j + 1] - parts[j]);
                blocks.push((first, vhead, rhead));
                (vs, rs) = (vtail, rtail);
            }
            let one = |(first, v, rows): (usize, &mut [Vec3], &mut [VRow])| {
                let mut s: Stats = (0.0, 0.0, 0, 0.0);
                for row in rows {
                    if let Some((res, dl)) = row_sweep(row, pj, v, first, w, pass, omega, end) {
                        s = add(s, res, dl);
                    }
                }
                s
            };
            if parallel {
                blocks.into_par_iter().map(one).collect_into_vec(&mut block_stats);
            } else {
                block_stats.clear();
                block_stats.extend(blocks.into_iter().map(one));
            }
            stats = block_stats.iter().fold(stats, |a, b| merge(a, *b));
            let mut straddling: Stats = (0.0, 0.0, 0, 0.0);
            for row in &mut self.vrows[parts[BLOCKS]..parts[BLOCKS + 1]] {
                if let Some((res, dl)) = row_sweep(row, pj, v, 0, w, pass, omega, end) {
                    straddling = add(straddling, res, dl);
                }
            }
            stats = merge(stats, straddling);
        }
        self.layout = layout;
        stats
    }
}
