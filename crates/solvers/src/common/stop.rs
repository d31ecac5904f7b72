//! The stopping test and the report of each iteration: the one every family's loop calls.
//!
//! Every family stops a step on the same rule: after an iteration, the common violation
//! ([`solverlab_core::metrics::violation`], m) at most the tolerance, or the iteration cap. The
//! family supplies the violation as a function of a bound, `until(bound)`, which returns the
//! violation when it is at most `bound` and otherwise any number above `bound`, having stopped
//! at the first row above it ([`solverlab_core::metrics::violation_until`]); the test asks for
//! the full number (`bound = ∞`) only when the observer wants it reported, so that a step far
//! from its tolerance pays for a few rows. The decision is the exact rule's either way.
//!
//! A loop reads:
//!
//! ```text
//! let stop = Stopping::new(cap, tolerance, observer.wants_violation());
//! for it in stop.iterations() {
//!     … one iteration …
//!     let measured = stop.measure(|bound| violation_until(…, bound));
//!     if stop.report(observer, it, 1, Residuals::max(residual), measured) {
//!         info.converged = measured.met;
//!         break;
//!     }
//! }
//! ```
//!
//! [`Stopping::measure`] runs wherever the iteration runs (a pool worker for the parallel ones,
//! `common::on_worker`); [`Stopping::report`] on the caller's thread, with the observer.

use solverlab_core::solver::{IterationReport, Observer};

/// A step's stopping rule: its iteration cap, its tolerance and whether the violation is
/// reported.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stopping {
    cap: usize,
    /// The tolerance on the common violation (m); `None` never stops on it (the relaxation and
    /// impulse families' `tolerance = 0`, the Newton family's inner iterations).
    tolerance: Option<f64>,
    /// Whether each iteration's violation is computed in full and reported.
    report_violation: bool,
}

/// What the test found after one iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Measured {
    /// The common violation (m), when it is reported.
    pub(crate) violation: Option<f64>,
    /// Whether the step meets its tolerance (and so stops, converged).
    pub(crate) met: bool,
}

/// A family's own numbers of one iteration ([`IterationReport`]'s `residual`, `residual_rms`
/// and `delta_lambda`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Residuals {
    pub(crate) residual: f64,
    pub(crate) residual_rms: Option<f64>,
    pub(crate) delta_lambda: Option<f64>,
}

impl Residuals {
    /// The largest per-row residual alone.
    pub(crate) fn max(residual: f64) -> Self {
        Self { residual, ..Self::default() }
    }
}

impl Stopping {
    /// At most `cap` iterations, stopping once the violation is at most `tolerance`, the
    /// violation computed in full and reported when `report_violation` (usually
    /// [`Observer::wants_violation`]).
    pub(crate) fn new(cap: usize, tolerance: Option<f64>, report_violation: bool) -> Self {
        Self { cap, tolerance, report_violation }
    }

    /// Whether each iteration's violation is computed in full and reported.
    pub(crate) fn reports_violation(&self) -> bool {
        self.report_violation
    }

    /// The iterations, `1..=cap`.
    pub(crate) fn iterations(&self) -> std::ops::RangeInclusive<usize> {
        1..=self.cap
    }

    /// The most iterations a step makes.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// The test after an iteration: the violation `until(∞)` when it is reported, and whether it
    /// is at most the tolerance (`until(tolerance)` when it is not reported, which may stop at
    /// the first row above the tolerance).
    pub(crate) fn measure(&self, mut until: impl FnMut(f64) -> f64) -> Measured {
        let violation = self.report_violation.then(|| until(f64::INFINITY));
        let met = self.tolerance.is_some_and(|t| violation.unwrap_or_else(|| until(t)) <= t);
        Measured { violation, met }
    }

    /// Reports iteration `it` (1-based, of outer iteration `outer`) to `observer`, with the
    /// family's `own` residuals and the `measured` violation, and says whether the loop stops
    /// after it: the tolerance met, or the cap reached.
    pub(crate) fn report(
        &self,
        observer: &mut dyn Observer,
        it: usize,
        outer: usize,
        own: Residuals,
        measured: Measured,
    ) -> bool {
        observer.iteration(&IterationReport {
            iteration: it,
            outer,
            residual: own.residual,
            residual_rms: own.residual_rms,
            delta_lambda: own.delta_lambda,
            violation: measured.violation,
        });
        measured.met || it >= self.cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Seen(Vec<IterationReport>);

    impl Observer for Seen {
        fn iteration(&mut self, r: &IterationReport) {
            self.0.push(*r);
        }
    }

    /// The full violation only when reported, the cut-short one otherwise; no tolerance never
    /// meets; the cap stops without meeting.
    #[test]
    fn measures_reports_and_stops() {
        let asked = std::cell::RefCell::new(Vec::new());
        let until = |bound: f64| {
            asked.borrow_mut().push(bound);
            0.5
        };
        let quiet = Stopping::new(3, Some(1.0), false);
        assert_eq!(quiet.measure(until), Measured { violation: None, met: true });
        assert_eq!(*asked.borrow(), [1.0]);
        let loud = Stopping::new(3, Some(0.1), true);
        assert_eq!(loud.measure(until), Measured { violation: Some(0.5), met: false });
        assert_eq!(*asked.borrow(), [1.0, f64::INFINITY]);
        let off = Stopping::new(3, None, false);
        assert_eq!(off.measure(until), Measured { violation: None, met: false });
        assert_eq!(asked.borrow().len(), 2, "no tolerance asks for nothing");
        let mut seen = Seen(Vec::new());
        let going = Measured { violation: Some(0.5), met: false };
        assert!(!loud.report(&mut seen, 1, 1, Residuals::max(2.0), going));
        assert!(loud.report(&mut seen, 3, 1, Residuals::max(2.0), going), "the cap stops");
        assert!(loud.report(&mut seen, 2, 1, Residuals::max(2.0), Measured { met: true, ..going }));
        assert_eq!(
            seen.0[0],
            IterationReport { iteration: 1, outer: 1, residual: 2.0, violation: Some(0.5), ..Default::default() }
        );
        assert_eq!(loud.iterations(), 1..=3);
    }
}
