//! Axis arithmetic for line charts: which values an axis can show, automatic ranges, clipping of
//! lines to the axis ranges, tick labels, and where a legend hides the least data.

use plotters::chart::SeriesLabelPosition;

use crate::chart::Axis;

/// How many tick labels an axis asks plotters for, at most.
pub(crate) const TICKS: usize = 6;

/// Fraction of the data span added on each side of an automatic linear range.
const LINEAR_PAD: f64 = 0.05;
/// Decades added on each side of the data before an automatic log range is rounded outwards.
const LOG_MARGIN: f64 = 0.05;

/// Whether an axis can show `v` at all: finite, and positive on a log axis.
pub(crate) fn visible(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// An axis resolved for drawing: its kind and its range in data units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scale {
    pub(crate) log: bool,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
}

impl Scale {
    /// The axis' explicit range if it has one (checked), else a range fitted to `values`, which
    /// must all be [`visible`] on this axis.
    pub(crate) fn resolve(axis: &Axis, values: impl IntoIterator<Item = f64>) -> Result<Self, String> {
        let log = axis.log;
        if log && !axis.categories.is_empty() {
            return Err(format!("axis '{}': a categorical axis cannot be logarithmic", axis.label));
        }
        let (lo, hi) = if let Some((lo, hi)) = axis.range {
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(format!("axis '{}': range ({lo}, {hi}) must be finite and increasing", axis.label));
            }
            if log && lo <= 0.0 {
                return Err(format!("axis '{}': range ({lo}, {hi}) must be positive on a log axis", axis.label));
            }
            (lo, hi)
        } else if !axis.categories.is_empty() {
            (-0.5, axis.categories.len() as f64 - 0.5)
        } else {
            let bounds = values.into_iter().fold(None, |acc: Option<(f64, f64)>, v| match acc {
                None => Some((v, v)),
                Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
            });
            match (bounds, log) {
                (None, false) => (0.0, 1.0),
                (None, true) => (1.0, 10.0),
                (Some((lo, hi)), false) => pad_linear(lo, hi),
                (Some((lo, hi)), true) => pad_log(lo, hi),
            }
        };
        if !(hi - lo).is_finite() {
            return Err(format!("axis '{}': the range ({lo}, {hi}) is too wide to draw", axis.label));
        }
        Ok(Self { log, lo, hi })
    }

    /// Whether `v` is visible on this axis and inside its range.
    pub(crate) fn contains(&self, v: f64) -> bool {
        visible(v, self.log) && self.lo <= v && v <= self.hi
    }

    /// `v` in the axis' linear space: `log10(v)` on a log axis.
    fn linear(&self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }

    /// The inverse of [`Scale::linear`].
    fn value_at(&self, t: f64) -> f64 {
        if self.log {
            10f64.powf(t)
        } else {
            t
        }
    }

    /// Position of `v` along the axis, 0 at the start of the range and 1 at its end.
    pub(crate) fn unit(&self, v: f64) -> f64 {
        let (lo, hi) = (self.linear(self.lo), self.linear(self.hi));
        (self.linear(v) - lo) / (hi - lo)
    }

    /// The text of a tick label at `v`: `10ⁿ` on a log axis; on a linear axis a fixed number of
    /// decimals suited to the tick spacing, or scientific notation for very large or small values.
    pub(crate) fn tick_label(&self, v: f64) -> String {
        if self.log {
            let e = v.log10();
            if (e - e.round()).abs() < 1e-6 {
                format!("10{}", superscript(e.round() as i64))
            } else {
                format!("{v:e}")
            }
        } else {
            // plotters spaces ticks by 1, 2 or 5 × 10ᵏ, at least this far apart.
            let step_exp = ((self.hi - self.lo) / TICKS as f64).log10().floor();
            let v = if v.abs() < 10f64.powf(step_exp - 6.0) { 0.0 } else { v };
            let magnitude = self.lo.abs().max(self.hi.abs());
            if (1e-3..1e5).contains(&magnitude) {
                let decimals = (-step_exp).max(0.0) as usize;
                format!("{v:.decimals$}")
            } else {
                let digits = (magnitude.log10().floor() - step_exp).max(0.0) as usize;
                format!("{v:.digits$e}")
            }
        }
    }
}

/// Pads `[lo, hi]` by [`LINEAR_PAD`] of its width on each side; a zero-width range is widened by
/// 5 % of its value, or by 1 around zero.
fn pad_linear(lo: f64, hi: f64) -> (f64, f64) {
    let width = hi - lo;
    let pad = if width > 0.0 {
        LINEAR_PAD * width
    } else if lo != 0.0 {
        LINEAR_PAD * lo.abs()
    } else {
        1.0
    };
    let padded = (lo - pad, hi + pad);
    if padded.0.is_finite() && padded.1.is_finite() && padded.0 < padded.1 {
        padded
    } else {
        (lo, hi)
    }
}

/// Widens positive `[lo, hi]` by [`LOG_MARGIN`] decades and rounds outwards to half decades, or
/// to whole decades if that would span less than one decade.
fn pad_log(lo: f64, hi: f64) -> (f64, f64) {
    let (a, b) = (lo.log10() - LOG_MARGIN, hi.log10() + LOG_MARGIN);
    let (mut a, mut b) = ((2.0 * a).floor() / 2.0, (2.0 * b).ceil() / 2.0);
    if b - a < 1.0 {
        (a, b) = (a.floor(), b.ceil().max(a.floor() + 1.0));
    }
    (10f64.powf(a), 10f64.powf(b))
}

/// `n` in Unicode superscript digits, e.g. `-3` → `⁻³`.
fn superscript(n: i64) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    n.to_string().chars().map(|c| c.to_digit(10).map_or('⁻', |d| DIGITS[d as usize])).collect()
}

/// The polylines that draw `points` on axes `x` and `y`: runs of consecutive points, broken where
/// a point cannot be shown, clipped to the axis ranges (in the axes' linear space, so that
/// a clipped straight segment stays straight on a log axis). Runs shorter than two points vanish.
pub(crate) fn polylines(points: &[(f64, f64)], x: &Scale, y: &Scale) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    let mut flush = |run: &mut Vec<(f64, f64)>| {
        if run.len() >= 2 {
            out.push(std::mem::take(run));
        }
        run.clear();
    };
    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let shown = visible(a.0, x.log) && visible(a.1, y.log) && visible(b.0, x.log) && visible(b.1, y.log);
        let clipped = if shown { clip_segment(a, b, x, y) } else { None };
        match clipped {
            Some(clip) => {
                if !clip.starts_at_a || run.is_empty() {
                    flush(&mut run);
                    run.push(clip.start);
                }
                run.push(clip.end);
                if !clip.ends_at_b {
                    flush(&mut run);
                }
            }
            None => flush(&mut run),
        }
    }
    flush(&mut run);
    out
}

/// The part of a segment inside the axis ranges.
struct Clipped {
    start: (f64, f64),
    end: (f64, f64),
    starts_at_a: bool,
    ends_at_b: bool,
}

/// Liang–Barsky clipping of the segment `a`–`b` to the rectangle of the two axis ranges.
fn clip_segment(a: (f64, f64), b: (f64, f64), x: &Scale, y: &Scale) -> Option<Clipped> {
    let (ax, ay) = (x.linear(a.0), y.linear(a.1));
    let (dx, dy) = (x.linear(b.0) - ax, y.linear(b.1) - ay);
    let (x0, x1) = (x.linear(x.lo), x.linear(x.hi));
    let (y0, y1) = (y.linear(y.lo), y.linear(y.hi));
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else if p < 0.0 {
            t0 = t0.max(q / p);
        } else {
            t1 = t1.min(q / p);
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| (x.value_at(ax + t * dx), y.value_at(ay + t * dy));
    Some(Clipped {
        start: if t0 == 0.0 { a } else { at(t0) },
        end: if t1 == 1.0 { b } else { at(t1) },
        starts_at_a: t0 == 0.0,
        ends_at_b: t1 == 1.0,
    })
}

/// The legend corner with the fewest of `samples` (positions in the unit square of the plot,
/// see [`Scale::unit`]) under the legend, a box `size = (width, height)` in the same units in
/// that corner, and how many samples it would cover; ties prefer upper right, upper left, lower
/// right, lower left.
pub(crate) fn emptiest_corner(
    samples: impl IntoIterator<Item = (f64, f64)>,
    size: (f64, f64),
) -> (SeriesLabelPosition, usize) {
    let (w, h) = (size.0.clamp(0.05, 1.0), size.1.clamp(0.05, 1.0));
    let mut counts = [0usize; 4];
    for (u, v) in samples {
        let (right, left, top, bottom) = (u >= 1.0 - w, u <= w, v >= 1.0 - h, v <= h);
        counts[0] += usize::from(right && top);
        counts[1] += usize::from(left && top);
        counts[2] += usize::from(right && bottom);
        counts[3] += usize::from(left && bottom);
    }
    let best = (0..4).min_by_key(|&i| counts[i]).unwrap_or(0);
    let corner = match best {
        1 => SeriesLabelPosition::UpperLeft,
        2 => SeriesLabelPosition::LowerRight,
        3 => SeriesLabelPosition::LowerLeft,
        _ => SeriesLabelPosition::UpperRight,
    };
    (corner, counts[best])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(log: bool, range: Option<(f64, f64)>) -> Axis {
        Axis { label: "a".into(), log, range, ..Axis::default() }
    }

    #[test]
    fn linear_ranges_are_padded_and_never_empty() {
        let s = Scale::resolve(&axis(false, None), [0.0, 10.0]).unwrap();
        assert!((s.lo + 0.5).abs() < 1e-12 && (s.hi - 10.5).abs() < 1e-12, "{s:?}");
        let s = Scale::resolve(&axis(false, None), [3.0, 3.0]).unwrap();
        assert!(s.lo < 3.0 && s.hi > 3.0, "{s:?}");
        let s = Scale::resolve(&axis(false, None), [0.0]).unwrap();
        assert_eq!((s.lo, s.hi), (-1.0, 1.0));
        let s = Scale::resolve(&axis(false, None), []).unwrap();
        assert_eq!((s.lo, s.hi), (0.0, 1.0));
    }

    #[test]
    fn log_ranges_round_to_half_or_whole_decades() {
        let s = Scale::resolve(&axis(true, None), [1e-3, 1e3]).unwrap();
        assert!((s.lo.log10() + 3.5).abs() < 1e-9 && (s.hi.log10() - 3.5).abs() < 1e-9, "{s:?}");
        let s = Scale::resolve(&axis(true, None), [2e-3, 5e2]).unwrap();
        assert!((s.lo.log10() + 3.0).abs() < 1e-9 && (s.hi.log10() - 3.0).abs() < 1e-9, "{s:?}");
        let s = Scale::resolve(&axis(true, None), [5.0, 5.0]).unwrap();
        assert_eq!((s.lo, s.hi), (1.0, 10.0));
    }

    #[test]
    fn explicit_ranges_are_checked() {
        assert!(Scale::resolve(&axis(true, Some((0.0, 1.0))), []).is_err());
        assert!(Scale::resolve(&axis(false, Some((1.0, 1.0))), []).is_err());
        assert!(Scale::resolve(&axis(false, Some((0.0, f64::NAN))), []).is_err());
        assert_eq!(Scale::resolve(&axis(false, Some((-1.0, 1.0))), [5.0]).unwrap().hi, 1.0);
        assert!(Scale::resolve(&axis(false, None), [-1e308, 1e308]).is_err());
        assert!(Scale::resolve(&axis(false, Some((-1e308, 1e308))), []).is_err());
    }

    #[test]
    fn categorical_axes_span_their_names_and_are_linear() {
        let names = Axis { categories: vec!["a".into(), "b".into(), "c".into()], ..axis(false, None) };
        let s = Scale::resolve(&names, [100.0]).unwrap();
        assert_eq!((s.lo, s.hi), (-0.5, 2.5));
        assert!(Scale::resolve(&Axis { log: true, ..names }, []).is_err());
    }

    #[test]
    fn tick_labels() {
        let log = Scale { log: true, lo: 1e-4, hi: 1e2 };
        assert_eq!(log.tick_label(1e-3), "10⁻³");
        assert_eq!(log.tick_label(1.0), "10⁰");
        assert_eq!(log.tick_label(100.0), "10²");
        let lin = Scale { log: false, lo: 0.0, hi: 1.0 };
        assert_eq!(lin.tick_label(0.4), "0.4");
        let lin = Scale { log: false, lo: 0.0, hi: 300.0 };
        assert_eq!(lin.tick_label(100.0), "100");
        let tiny = Scale { log: false, lo: 0.0, hi: 3e-7 };
        assert_eq!(tiny.tick_label(1e-7), "1.0e-7");
        assert_eq!(tiny.tick_label(1e-22), "0.0e0");
    }

    #[test]
    fn polylines_break_at_dropped_points_and_clip() {
        let x = Scale { log: false, lo: 0.0, hi: 10.0 };
        let y = Scale { log: true, lo: 1e-3, hi: 1e3 };
        let pts = [(1.0, 1.0), (2.0, 10.0), (3.0, 0.0), (4.0, 10.0), (5.0, f64::NAN), (6.0, 1.0), (7.0, 2.0)];
        assert_eq!(polylines(&pts, &x, &y), vec![vec![(1.0, 1.0), (2.0, 10.0)], vec![(6.0, 1.0), (7.0, 2.0)]]);

        let y = Scale { log: false, lo: 0.0, hi: 1.0 };
        let lines = polylines(&[(0.0, 0.5), (2.0, 2.5), (4.0, 0.5), (6.0, 0.5)], &x, &y);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], vec![(0.0, 0.5), (0.5, 1.0)]);
        assert_eq!(lines[1], vec![(3.5, 1.0), (4.0, 0.5), (6.0, 0.5)]);
        assert!(polylines(&[(20.0, 0.5), (30.0, 0.5)], &x, &y).is_empty());
    }

    #[test]
    fn legend_avoids_the_data() {
        let upper_right = [(0.9, 0.9), (0.8, 0.95)];
        assert_eq!(emptiest_corner(upper_right, (0.45, 0.45)).0, SeriesLabelPosition::UpperLeft);
        assert_eq!(emptiest_corner([], (0.45, 0.45)).0, SeriesLabelPosition::UpperRight);
        let everywhere_but_lower_left = [(0.9, 0.9), (0.1, 0.9), (0.9, 0.1)];
        assert_eq!(emptiest_corner(everywhere_but_lower_left, (0.45, 0.45)).0, SeriesLabelPosition::LowerLeft);
        // A tall legend (eight entries: 70 % of the height) sees a curve along the top right
        // that a small one would not: it goes to the lower left, which that curve leaves free.
        let top_right_curve: Vec<(f64, f64)> = (0..20).map(|k| (0.5 + 0.025 * f64::from(k), 0.35)).collect();
        assert_eq!(emptiest_corner(top_right_curve.clone(), (0.3, 0.2)).0, SeriesLabelPosition::UpperRight);
        assert_ne!(emptiest_corner(top_right_curve, (0.3, 0.7)).0, SeriesLabelPosition::UpperRight);
    }
}
