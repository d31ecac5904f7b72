//! The stopping test: the common violation after a sweep, exact, and cut short once it is
//! known to be above the tolerance.
//!
//! The rule is the one every family follows: stop when the common violation
//! ([`solverlab_core::metrics::violation`], m) is at most `tolerance`. A maximum is above a
//! bound as soon as one of its terms is, so the test visits rows until the first one above the
//! tolerance ([`RelaxSolver::violation_until`]); a step far from its tolerance, as a large cloth
//! at 10 sweeps is, pays for a few rows instead of all of them, and a step that meets it visits
//! every row, as the full violation does. The decision is the exact rule's by construction, not
//! an estimate's: only the work differs.
//!
//! On the fast path ([`super::kernel`]) the sticks' part is read from the sweep's own arrays
//! (indices, rest lengths, compliances and multipliers in visiting order, which hold exactly the
//! rows the common violation counts: the equality sticks with a movable end), with the same
//! functions as [`solverlab_core::metrics::constraint_violation`] and so the same bits, first
//! over one chunk of rows on one thread, then, when that chunk has no row above the bound, over
//! the rest in fixed chunks on every core from [`crate::common::PARALLEL_ROWS`] rows. A maximum of
//! numbers that are never NaN (a NaN row is skipped, as `f64::max` skips it) does not depend on
//! the order it is taken in, so any thread count gives the same number.

use rayon::prelude::*;
use solverlab_core::constraint::stick_value;
use solverlab_core::metrics::{constraint_violation_until, row_violation};

use super::kernel::{parallel, StickSoa, CHUNK};
use super::*;
use crate::common::larger;

impl RelaxSolver {
    /// The common violation after an iteration (see `# Residual`; m) when it is at most
    /// `bound`; otherwise a number above `bound` (the largest row violation seen by the first
    /// row above it), without visiting the rows after it. `bound = ∞` gives the common violation.
    pub(super) fn violation_until(&self, scene: &Scene, state: &State, h: f64, bound: f64) -> f64 {
        let constraints = match &self.soa {
            Some(soa) => stick_violation(soa, &state.x, &self.lambda, 1.0 / (h * h), bound),
            None => {
                let lambda = |j: usize, axis: usize| self.lambda[self.constraint_row[j] as usize + axis];
                constraint_violation_until(scene, &state.x, state.time, h, &lambda, bound)
            }
        };
        if constraints > bound {
            return constraints;
        }
        let v = constraints.max(self.contacts.penetration(scene, state, &self.w, &self.radius));
        match scene.has_rigid() && v <= bound {
            true => v.max(self.rigid.violation(scene, &state.rigid)),
            false => v,
        }
    }
}

/// The sticks' part of the common violation on the fast path's arrays `s`, with positions `x`,
/// multipliers `lambda` (in the arrays' order) and `1/h²` = `inv_h2`, cut short above `bound`
/// as [`RelaxSolver::violation_until`] is.
pub(super) fn stick_violation(s: &StickSoa, x: &[Vec3], lambda: &[f64], inv_h2: f64, bound: f64) -> f64 {
    let n = s.len();
    let probe = n.min(CHUNK);
    let first = stick_rows_violation(s, 0..probe, x, lambda, inv_h2, bound);
    if first > bound || probe == n {
        return first;
    }
    if !parallel(n) {
        return first.max(stick_rows_violation(s, probe..n, x, lambda, inv_h2, bound));
    }
    let rest = (1..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| stick_rows_violation(s, c * CHUNK..n.min((c + 1) * CHUNK), x, lambda, inv_h2, bound))
        .reduce(|| 0.0, larger);
    first.max(rest)
}

/// The largest row violation of rows `rows` of `s`, up to the first above `bound`: `|C|` of a
/// rigid stick, `|C + α̃λ|` of a compliant one (`α̃ = α/h²`), exactly as
/// [`solverlab_core::metrics::constraint_violation`] computes them. Behind a call boundary so
/// that the parallel closures call it with its arrays' no-alias marks (see [`super::kernel`]).
#[inline(never)]
fn stick_rows_violation(
    s: &StickSoa,
    rows: std::ops::Range<usize>,
    x: &[Vec3],
    lambda: &[f64],
    inv_h2: f64,
    bound: f64,
) -> f64 {
    let mut worst: f64 = 0.0;
    for k in rows {
        let c = stick_value(&x[s.a[k] as usize], &x[s.b[k] as usize], s.rest[k], Sense::Equal);
        let at = s.alpha[k] * inv_h2;
        let l = if at > 0.0 { lambda[k] } else { 0.0 };
        worst = larger(worst, row_violation(c, at, l, true));
        if worst > bound {
            break;
        }
    }
    worst
}
