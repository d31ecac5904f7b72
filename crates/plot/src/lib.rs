//! Paper figures for solverlab, drawn with [plotters] and an embedded font.
//!
//! Three entry points, each writing finished files next to a caller-chosen *stem* (a path without
//! extension; the extension is appended, so `out/fig.v2` gives `out/fig.v2.svg`):
//!
//! - [`write_figure`] draws a grid of line-chart [`Panel`]s (linear or logarithmic axes, a legend
//!   whenever a panel has more than one [`Series`]) and writes `<stem>.svg` and `<stem>.png`.
//! - [`write_snapshots`] draws a row of 3-D particle scenes ([`Snapshot`]s, e.g. one per solver)
//!   in a fixed orthographic [`View`], sticks coloured by `length / rest` on a common colour scale
//!   with a colour bar, and writes `<stem>.svg` and `<stem>.png`.
//! - [`write_animation`] draws one such row per frame into an animated `<stem>.gif`, with bounds
//!   fixed over the whole animation so nothing jumps.
//!
//! # Conventions
//!
//! - Sizes are in SVG pixels. The PNG is the same picture at [`PNG_SCALE`] times the resolution
//!   (fonts and line widths scale with it); the GIF is drawn at the SVG size.
//! - Series are coloured in order from [`PALETTE`] (Okabe–Ito, safe for colour-blind readers), so
//!   a solver keeps its colour across figures when the series are always given in the same order.
//! - Values that an axis cannot show (non-finite anywhere, non-positive on a log axis) are
//!   silently dropped; lines break where a point was dropped. A panel left without data shows its
//!   axes and the note "no data".
//! - Output is deterministic: the same input gives byte-identical files.
//! - Files are drawn into a temporary file in the target directory and renamed into place, so a
//!   failed call leaves neither a half-written file nor a temporary, and keeps an existing file.
//! - Text uses the embedded DejaVu Sans, or DejaVu Serif for [`Font::Serif`] (see
//!   `assets/DejaVu-LICENSE.txt`); no system font library is needed. SVG text names the generic
//!   family (`sans-serif` or `serif`).
//!
//! # Example
//!
//! ```no_run
//! use solverlab_plot::{write_figure, Axis, Figure, Panel, Series};
//!
//! let residual = Series { label: "Gauss-Seidel".into(), points: vec![(1.0, 1e-1), (10.0, 1e-4)], ..Default::default() };
//! let panel = Panel {
//!     title: "Convergence".into(),
//!     x: Axis { label: "iteration".into(), log: true, ..Default::default() },
//!     y: Axis { label: "residual (m)".into(), log: true, ..Default::default() },
//!     series: vec![residual],
//! };
//! let fig = Figure { title: "Cloth, 120 frames".into(), panels: vec![panel], columns: 1, ..Default::default() };
//! let files = write_figure(&fig, std::path::Path::new("results/convergence"))?;
//! assert_eq!(files.len(), 2);
//! # Ok::<(), solverlab_plot::PlotError>(())
//! ```

mod chart;
mod output;
mod ranges;
mod snapshot;
mod style;

pub use chart::{write_figure, Axis, Figure, Legend, LineStyle, Panel, Series};
pub use snapshot::{write_animation, write_snapshots, Snapshot, View};
pub use style::{stretch_colour, Font, PALETTE};

use std::fmt;

/// How many PNG pixels one SVG pixel becomes by default: 1, so that committed results stay small
/// (the SVG is the print version; a chart that needs a sharper PNG sets [`Figure::png_scale`]).
pub const PNG_SCALE: u32 = 1;

/// Why a figure could not be written. The message names the file concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotError(pub String);

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlotError {}

/// Result of the drawing code, before the error is tied to a file name.
type DrawResult<T = ()> = Result<T, Box<dyn std::error::Error>>;
