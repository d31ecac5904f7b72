//! Line charts: the figure model ([`Figure`], [`Panel`], [`Axis`], [`Series`]) and its layout;
//! [`write_figure`] draws it (`draw.rs`).

use plotters::prelude::*;

use crate::style::{rgb, series_colour, Font};
use crate::PNG_SCALE;

mod draw;

pub use draw::write_figure;

/// Height of the band that holds the figure title, in SVG pixels.
const TITLE_BAND: u32 = 40;
/// Dash and gap lengths of [`LineStyle::Dashed`], in SVG pixels.
const DASH: (f64, f64) = (7.0, 4.0);
/// Dash and gap lengths of [`LineStyle::Dotted`], in SVG pixels.
const DOT: (f64, f64) = (2.0, 3.0);

/// Height of one row of a figure's shared legend band (px).
const LEGEND_ROW: u32 = 22;

/// Width of a shared legend entry besides its label: sample line, gaps (px).
const LEGEND_ENTRY: u32 = 30 + 24;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineStyle {
    /// A solid line through the points, 2 px wide.
    #[default]
    Line,
    /// A dashed line through the points, 2 px wide.
    Dashed,
    /// A dot at each point, no line.
    Points,
    /// A solid line with a dot at each point.
    LineAndPoints,
    /// A dotted line through the points, 2 px wide.
    Dotted,
    /// An open ring at each point, no line (e.g. a run that failed).
    Hollow,
}

impl LineStyle {
    /// The dash and gap lengths (SVG px) of a dashed or dotted line.
    fn dashes(self) -> Option<(f64, f64)> {
        match self {
            LineStyle::Dashed => Some(DASH),
            LineStyle::Dotted => Some(DOT),
            _ => None,
        }
    }

    /// Whether the style draws a line through the points.
    fn has_line(self) -> bool {
        !matches!(self, LineStyle::Points | LineStyle::Hollow)
    }
}

/// Where the legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Legend {
    /// Once under the panels when they all show the same labelled series; otherwise in each
    /// panel's corner that hides the least data, or to the right of the plot when every corner
    /// would hide some.
    #[default]
    Auto,
    /// Inside each panel, upper left.
    UpperLeft,
    /// Inside each panel, upper right.
    UpperRight,
    /// Inside each panel, lower left.
    LowerLeft,
    /// Inside each panel, lower right.
    LowerRight,
    /// To the right of each panel's plot, outside it.
    Right,
    /// Once, in a band under the panels: every labelled series of any panel.
    Below,
    /// No legend.
    None,
}

/// One data series of a line chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Legend text; a series with an empty label gets no legend entry.
    pub label: String,
    /// The data as `(x, y)` pairs, in the units of the panel's axes, drawn in the given order.
    /// Points an axis cannot show (non-finite, or non-positive on a log axis) are dropped and
    /// break the line.
    pub points: Vec<(f64, f64)>,
    /// How the series is drawn.
    pub style: LineStyle,
    /// Colour as sRGB; `None` takes the [`crate::PALETTE`] colour of the series' position in
    /// its panel.
    pub colour: Option<(u8, u8, u8)>,
}

impl Series {
    /// The colour the series is drawn in, as series number `index` of its panel.
    fn colour_at(&self, index: usize) -> RGBColor {
        self.colour.map_or_else(|| series_colour(index), rgb)
    }
}

/// One axis of a panel.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Axis {
    /// The axis title, with its unit, e.g. `"time (s)"`.
    pub label: String,
    /// Logarithmic (base 10) rather than linear.
    pub log: bool,
    /// The shown range `(low, high)` in data units; `None` fits the data: padded by 5 % on a
    /// linear axis, rounded outwards to half (or whole) decades on a log axis. An explicit range
    /// must be finite and increasing, and positive on a log axis; data outside it is clipped.
    pub range: Option<(f64, f64)>,
    /// Names for the whole numbers 0, 1, 2, …: when not empty the axis is categorical, value
    /// `k` is labelled `categories[k]` (other ticks stay unlabelled) and the automatic range is
    /// `(-0.5, n - 0.5)`. Must be linear.
    pub categories: Vec<String>,
}

/// One chart of a figure: a title, two axes and any number of series.
///
/// Series are coloured from [`crate::PALETTE`] in order unless they set their own colour. A
/// legend is drawn when there is more than one series, where [`Figure::legend`] says.
/// A panel without any point to show draws its axes and the note "no data".
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Panel {
    /// Title drawn above the chart.
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// The data, drawn in order (later series on top).
    pub series: Vec<Series>,
}

/// A figure: a title above a grid of panels, filled row by row.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Title drawn above all panels; an empty title leaves out the title band.
    pub title: String,
    /// The panels, in reading order.
    pub panels: Vec<Panel>,
    /// Panels per row, clamped to `1..=panels.len()`. Default 2.
    pub columns: usize,
    /// Width of one panel in SVG pixels, at least 100. Default 480.
    pub panel_width: u32,
    /// Height of one panel in SVG pixels, at least 100. Default 360.
    pub panel_height: u32,
    /// PNG pixels per SVG pixel, 1 to 4. Default [`PNG_SCALE`] (1).
    pub png_scale: u32,
    /// Where the legend goes. Default [`Legend::Auto`].
    pub legend: Legend,
    /// Multiplies every font size (and the room kept for tick labels and titles), 0.5 to 2.
    /// Default 1: 12 px tick labels, 14 px axis titles, 16 px panel titles, 20 px figure title.
    pub text_scale: f64,
    /// Typeface. Default [`Font::Sans`].
    pub font: Font,
    /// Width of series lines in SVG pixels, 0.25 to 8; dots have 1.5 times this radius. Default 2.
    pub line_width: f64,
}

impl Default for Figure {
    fn default() -> Self {
        Self {
            title: String::new(),
            panels: Vec::new(),
            columns: 2,
            panel_width: 480,
            panel_height: 360,
            png_scale: PNG_SCALE,
            legend: Legend::Auto,
            text_scale: 1.0,
            font: Font::Sans,
            line_width: 2.0,
        }
    }
}

/// One legend entry: label, style and colour.
type Entry<'a> = (&'a str, LineStyle, RGBColor);

/// The labelled series of `panel` as legend entries, in order.
fn entries(panel: &Panel) -> Vec<Entry<'_>> {
    panel
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.label.is_empty())
        .map(|(i, s)| (s.label.as_str(), s.style, s.colour_at(i)))
        .collect()
}

impl Figure {
    /// `(rows, columns)` of the panel grid.
    fn grid(&self) -> (usize, usize) {
        let columns = self.columns.clamp(1, self.panels.len().max(1));
        (self.panels.len().div_ceil(columns), columns)
    }

    /// The legend drawn once, in a band under the panels where it covers no data: with
    /// [`Legend::Below`], every labelled series of any panel (each label once, first panel
    /// first); with [`Legend::Auto`], when the figure has more than one panel and they all show
    /// the same labelled series (label, style and colour), more than one of them.
    fn shared_legend(&self) -> Option<Vec<Entry<'_>>> {
        match self.legend {
            Legend::Below => {
                let mut all: Vec<Entry> = Vec::new();
                for entry in self.panels.iter().flat_map(entries) {
                    if !all.iter().any(|e| e.0 == entry.0) {
                        all.push(entry);
                    }
                }
                (!all.is_empty()).then_some(all)
            }
            Legend::Auto => {
                let first = entries(self.panels.first()?);
                let same = self.panels.iter().all(|p| entries(p) == first);
                (self.panels.len() > 1 && first.len() > 1 && same).then_some(first)
            }
            _ => None,
        }
    }

    /// `(entries per row, rows, entry width)` of the shared legend across `width` px.
    fn legend_layout(&self, entries: &[Entry], width: u32) -> (usize, usize, f64) {
        let chars = entries.iter().map(|e| e.0.chars().count()).max().unwrap_or(0) as f64;
        let entry = f64::from(LEGEND_ENTRY) + 7.0 * self.text_scale * chars;
        let per_row = ((f64::from(width.saturating_sub(24)) / entry).floor() as usize).max(1);
        (per_row, entries.len().div_ceil(per_row), entry)
    }

    /// Height of one row of the shared legend (px).
    fn legend_row(&self) -> f64 {
        f64::from(LEGEND_ROW) * self.text_scale.max(0.7)
    }

    /// Height of the shared legend band (px, 0 without one).
    fn legend_band(&self) -> u32 {
        self.shared_legend().map_or(0, |entries| {
            let width = u32::try_from(self.grid().1).unwrap_or(1).saturating_mul(self.panel_width);
            let rows = self.legend_layout(&entries, width).1;
            (rows as f64 * self.legend_row()).ceil() as u32 + 12
        })
    }

    /// Height of the title band (px, 0 without a title).
    fn title_band(&self) -> u32 {
        if self.title.is_empty() {
            0
        } else {
            (f64::from(TITLE_BAND) * self.text_scale).round() as u32
        }
    }

    /// Size of the SVG in pixels: `columns × panel_width` wide and `rows × panel_height` tall,
    /// plus a 40 px band for the title if there is one and the shared legend's band if there is
    /// one. The PNG is `png_scale` times larger.
    pub fn size(&self) -> (u32, u32) {
        let (rows, columns) = self.grid();
        let band = self.title_band() + self.legend_band();
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        (
            count(columns).saturating_mul(self.panel_width),
            count(rows).saturating_mul(self.panel_height).saturating_add(band),
        )
    }
}
