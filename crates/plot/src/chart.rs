//! Line charts: the figure model ([`Figure`], [`Panel`], [`Axis`], [`Series`]) and
//! [`write_figure`].

use std::path::{Path, PathBuf};

use plotters::chart::SeriesAnno;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::output::Staged;
use crate::ranges::{emptiest_corner, polylines, visible, Scale, TICKS};
use crate::style::{check_size, draw_centred, ensure_font, px, series_colour, text};
use crate::{DrawResult, PlotError, PNG_SCALE};

/// Height of the band that holds the figure title, in SVG pixels.
const TITLE_BAND: u32 = 40;
/// Dash and gap lengths of [`LineStyle::Dashed`], in SVG pixels.
const DASH: (f64, f64) = (7.0, 4.0);

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
}

/// One chart of a figure: a title, two axes and any number of series.
///
/// Series are coloured from [`crate::PALETTE`] in order. A legend is drawn when there is more
/// than one series, in the corner where it hides the least data, on a semi-transparent ground.
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
        }
    }
}

impl Figure {
    /// `(rows, columns)` of the panel grid.
    fn grid(&self) -> (usize, usize) {
        let columns = self.columns.clamp(1, self.panels.len().max(1));
        (self.panels.len().div_ceil(columns), columns)
    }

    /// The series every panel shows (label and style, in order) when the figure has more than
    /// one panel and they all show the same labelled series: their legend is drawn once, in a
    /// band under the panels, where it covers no data.
    fn shared_legend(&self) -> Option<Vec<(&str, LineStyle)>> {
        fn key(p: &Panel) -> Vec<(&str, LineStyle)> {
            p.series.iter().map(|s| (s.label.as_str(), s.style)).collect()
        }
        let first = key(self.panels.first()?);
        let labelled = first.iter().filter(|(l, _)| !l.is_empty()).count();
        (self.panels.len() > 1 && labelled > 1 && self.panels.iter().all(|p| key(p) == first)).then_some(first)
    }

    /// `(entries per row, rows)` of the shared legend across `width` px.
    fn legend_layout(entries: &[(&str, LineStyle)], width: u32) -> (usize, usize) {
        let chars = entries.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0);
        let entry = LEGEND_ENTRY + 7 * u32::try_from(chars).unwrap_or(100);
        let per_row = (width.saturating_sub(24) / entry).max(1) as usize;
        (per_row, entries.len().div_ceil(per_row))
    }

    /// Height of the shared legend band (px, 0 without one).
    fn legend_band(&self) -> u32 {
        self.shared_legend().map_or(0, |entries| {
            let width = u32::try_from(self.grid().1).unwrap_or(1).saturating_mul(self.panel_width);
            let rows = Self::legend_layout(&entries, width).1;
            u32::try_from(rows).unwrap_or(100) * LEGEND_ROW + 12
        })
    }

    /// Size of the SVG in pixels: `columns × panel_width` wide and `rows × panel_height` tall,
    /// plus a 40 px band for the title if there is one and the shared legend's band if there is
    /// one. The PNG is `png_scale` times larger.
    pub fn size(&self) -> (u32, u32) {
        let (rows, columns) = self.grid();
        let band = if self.title.is_empty() { 0 } else { TITLE_BAND } + self.legend_band();
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        (
            count(columns).saturating_mul(self.panel_width),
            count(rows).saturating_mul(self.panel_height).saturating_add(band),
        )
    }
}

/// Draws `fig` and writes `<stem>.svg` and `<stem>.png` (the extensions are appended to `stem`);
/// returns the two paths, SVG first.
///
/// Fails, naming the file, if the figure has no panels, a panel is smaller than 100 × 100 px or
/// the figure larger than 10 000 px a side, an explicit axis range is invalid, or a file cannot
/// be written. On failure neither file is replaced and no temporary file remains.
pub fn write_figure(fig: &Figure, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let svg = Staged::new(stem, "svg")?;
    let png = Staged::new(stem, "png")?;
    let (w, h) = fig.size();
    svg.draw(|tmp| {
        if fig.panels.is_empty() {
            return Err("the figure has no panels".into());
        }
        check_size(fig.panel_width, fig.panel_height, (w, h))?;
        let root = SVGBackend::new(tmp, (w, h)).into_drawing_area();
        draw_figure(&root, fig, 1.0)?;
        root.present()?;
        Ok(())
    })?;
    png.draw(|tmp| {
        let scale = fig.png_scale.clamp(1, 4);
        let root = BitMapBackend::new(tmp, (w * scale, h * scale)).into_drawing_area();
        draw_figure(&root, fig, f64::from(scale))?;
        root.present()?;
        Ok(())
    })?;
    Ok(vec![svg.commit()?, png.commit()?])
}

/// Draws the whole figure on `root`, with every length multiplied by `s`.
fn draw_figure<DB>(root: &DrawingArea<DB, Shift>, fig: &Figure, s: f64) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    ensure_font()?;
    root.fill(&WHITE)?;
    let body = if fig.title.is_empty() {
        root.clone()
    } else {
        let (band, body) = root.split_vertically(px(f64::from(TITLE_BAND), s));
        draw_centred(&band, &fig.title, text(20.0 * s))?;
        body
    };
    let shared = fig.shared_legend();
    let band = px(f64::from(fig.legend_band()), s);
    let (panels, legend) = match band {
        0 => (body, None),
        _ => {
            let height = body.dim_in_pixel().1;
            let (panels, legend) = body.split_vertically(height.saturating_sub(band));
            (panels, Some(legend))
        }
    };
    for (i, (panel, cell)) in fig.panels.iter().zip(panels.split_evenly(fig.grid())).enumerate() {
        draw_panel(&cell, panel, s, shared.is_none())
            .map_err(|e| format!("panel {} ('{}'): {e}", i + 1, panel.title))?;
    }
    if let (Some(entries), Some(area)) = (shared, legend) {
        let width = u32::try_from(fig.grid().1).unwrap_or(1).saturating_mul(fig.panel_width);
        let (per_row, _) = Figure::legend_layout(&entries, width);
        let chars = entries.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0) as f64;
        let entry = (f64::from(LEGEND_ENTRY) + 7.0 * chars) * s;
        for (k, (label, style)) in entries.iter().enumerate().filter(|(_, (l, _))| !l.is_empty()) {
            let x = (12.0 * s + entry * (k % per_row) as f64) as i32;
            let y = (6.0 * s + f64::from(LEGEND_ROW) * s * ((k / per_row) as f64 + 0.5)) as i32;
            draw_sample(&area, *style, series_colour(k), (x, y), label, s)?;
        }
    }
    Ok(())
}

/// A legend entry at `(x, y)` (the left end of its sample line, at mid-height): the series'
/// line, dashes or dot in `colour`, then its label.
fn draw_sample<DB>(
    area: &DrawingArea<DB, Shift>,
    style: LineStyle,
    colour: RGBColor,
    (x, y): (i32, i32),
    label: &str,
    s: f64,
) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let width = i32::try_from(px(24.0, s)).unwrap_or(24);
    let (radius, dash, gap) = (px(3.0, s), px(DASH.0, s), px(DASH.1, s));
    let (line, dot) = (colour.stroke_width(px(2.0, s)), colour.filled());
    let ends = vec![(x, y), (x + width, y)];
    match style {
        LineStyle::Line => area.draw(&PathElement::new(ends, line))?,
        LineStyle::Dashed => area.draw(&DashedPathElement::new(ends, dash, gap, line))?,
        LineStyle::Points => area.draw(&Circle::new((x + width / 2, y), radius, dot))?,
        LineStyle::LineAndPoints => {
            area.draw(&PathElement::new(ends, line))?;
            area.draw(&Circle::new((x + width / 2, y), radius, dot))?
        }
    }
    let anchor = plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Left,
        plotters::style::text_anchor::VPos::Center,
    );
    area.draw_text(label, &text(12.0 * s).pos(anchor), (x + width + (6.0 * s) as i32, y))?;
    Ok(())
}

/// What one series leaves to draw once its points are fitted to the axes.
struct Trace {
    /// Clipped polylines, for the line styles.
    lines: Vec<Vec<(f64, f64)>>,
    /// Points inside both ranges, for the dot styles.
    dots: Vec<(f64, f64)>,
}

/// A panel's resolved axes and traces.
struct Prepared {
    x: Scale,
    y: Scale,
    traces: Vec<Trace>,
}

impl Prepared {
    fn new(panel: &Panel) -> Result<Self, String> {
        let shown = |&(x, y): &(f64, f64)| visible(x, panel.x.log) && visible(y, panel.y.log);
        let all = || panel.series.iter().flat_map(|s| s.points.iter().copied()).filter(shown);
        let x = Scale::resolve(&panel.x, all().map(|p| p.0))?;
        let y = Scale::resolve(&panel.y, all().map(|p| p.1))?;
        let traces = panel
            .series
            .iter()
            .map(|s| Trace {
                lines: polylines(&s.points, &x, &y),
                dots: s.points.iter().copied().filter(|&(a, b)| x.contains(a) && y.contains(b)).collect(),
            })
            .collect();
        Ok(Self { x, y, traces })
    }

    /// Positions in the unit square of the plot that the data covers: every dot, and points
    /// along every line segment.
    fn coverage(&self) -> Vec<(f64, f64)> {
        let unit = |(a, b): (f64, f64)| (self.x.unit(a), self.y.unit(b));
        let mut out = Vec::new();
        for trace in &self.traces {
            out.extend(trace.dots.iter().copied().map(unit));
            // Samples every 1 % of the plot along each segment, so that a steep or long line
            // counts where it runs, not only at its ends.
            for segment in trace.lines.iter().flat_map(|line| line.windows(2)) {
                let (p, q) = (unit(segment[0]), unit(segment[1]));
                let steps = (((q.0 - p.0).abs().max((q.1 - p.1).abs()) * 100.0).ceil() as usize).clamp(1, 200);
                out.extend((0..=steps).map(|k| {
                    let t = k as f64 / steps as f64;
                    (p.0 + t * (q.0 - p.0), p.1 + t * (q.1 - p.1))
                }));
            }
        }
        out
    }
}

/// Draws one panel in `cell`, choosing the coordinate types for its axes.
fn draw_panel<DB>(cell: &DrawingArea<DB, Shift>, panel: &Panel, s: f64, legend: bool) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let prep = Prepared::new(panel)?;
    let (x, y) = (prep.x.lo..prep.x.hi, prep.y.lo..prep.y.hi);
    match (panel.x.log, panel.y.log) {
        (false, false) => draw_chart(cell, panel, &prep, x, y, s, legend),
        (true, false) => draw_chart(cell, panel, &prep, x.log_scale(), y, s, legend),
        (false, true) => draw_chart(cell, panel, &prep, x, y.log_scale(), s, legend),
        (true, true) => draw_chart(cell, panel, &prep, x.log_scale(), y.log_scale(), s, legend),
    }
}

/// Draws axes, series, the "no data" note and the legend of one panel.
/// `legend = false` leaves the legend to the figure's shared band.
#[allow(clippy::too_many_arguments)]
fn draw_chart<DB, X, Y>(
    cell: &DrawingArea<DB, Shift>,
    panel: &Panel,
    prep: &Prepared,
    x: X,
    y: Y,
    s: f64,
    legend: bool,
) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    // The legend: in the corner where it covers the least data, or, when it would cover data in
    // every corner, in a column to the right of the plot. Its footprint: a row of 12 px text
    // per entry (17 px with spacing), about 7 px per character plus the 30 px sample line.
    let labelled: Vec<usize> = (0..panel.series.len()).filter(|&i| !panel.series[i].label.is_empty()).collect();
    let legend = legend && panel.series.len() > 1 && !labelled.is_empty();
    let chars = labelled.iter().map(|&i| panel.series[i].label.chars().count()).max().unwrap_or(0) as f64;
    let legend_px =
        (f64::from(px(48.0, s)) + 7.0 * s * chars, f64::from(px(16.0, s)) + 17.0 * s * labelled.len() as f64);
    let (cw, ch) = cell.dim_in_pixel();
    let caption = if panel.title.is_empty() { 0.0 } else { 24.0 * s };
    let plot_px = (f64::from(cw) - 96.0 * s, f64::from(ch) - 68.0 * s - caption);
    let (corner, covered) =
        emptiest_corner(prep.coverage(), (legend_px.0 / plot_px.0.max(1.0), legend_px.1 / plot_px.1.max(1.0)));
    let outside = legend && covered > 0 && f64::from(cw) > 2.5 * legend_px.0;
    let mut builder = ChartBuilder::on(cell);
    builder.margin(px(12.0, s)).x_label_area_size(px(44.0, s)).y_label_area_size(px(72.0, s));
    if outside {
        builder.margin_right(px(12.0, s) + legend_px.0 as u32);
    }
    if !panel.title.is_empty() {
        builder.caption(&panel.title, text(16.0 * s));
    }
    let mut chart = builder.build_cartesian_2d(x, y)?;

    let x_label = |v: &f64| prep.x.tick_label(*v);
    let y_label = |v: &f64| prep.y.tick_label(*v);
    chart
        .configure_mesh()
        .x_labels(TICKS)
        .y_labels(TICKS)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .x_desc(panel.x.label.as_str())
        .y_desc(panel.y.label.as_str())
        .label_style(text(12.0 * s))
        .axis_desc_style(text(14.0 * s))
        .axis_style(BLACK.stroke_width(px(1.0, s)))
        .bold_line_style(BLACK.mix(0.12).stroke_width(px(1.0, s)))
        .light_line_style(TRANSPARENT)
        .set_all_tick_mark_size(px(4.0, s))
        .draw()?;

    for (i, (series, trace)) in panel.series.iter().zip(&prep.traces).enumerate() {
        let colour = series_colour(i);
        let line = colour.stroke_width(px(2.0, s));
        let dot = colour.filled();
        let (radius, dash, gap) = (px(3.0, s), px(DASH.0, s), px(DASH.1, s));
        let lines = || trace.lines.iter().map(|l| PathElement::new(l.clone(), line));
        let dots = || trace.dots.iter().map(|&p| Circle::new(p, radius, dot));
        let anno = match series.style {
            LineStyle::Line => chart.draw_series(lines())?,
            LineStyle::Dashed => {
                chart.draw_series(trace.lines.iter().flat_map(|l| DashedLineSeries::new(l.clone(), dash, gap, line)))?
            }
            LineStyle::Points => chart.draw_series(dots())?,
            LineStyle::LineAndPoints => {
                chart.draw_series(lines())?;
                chart.draw_series(dots())?
            }
        };
        if !series.label.is_empty() {
            legend_entry(anno.label(series.label.as_str()), series.style, line, dot, radius, s);
        }
    }

    if prep.traces.iter().all(|t| t.dots.is_empty()) {
        draw_centred(&chart.plotting_area().strip_coord_spec(), "no data", text(14.0 * s).color(&BLACK.mix(0.6)))?;
    }
    if outside {
        let x0 = (f64::from(cw) - legend_px.0) as i32;
        for (row, &i) in labelled.iter().enumerate() {
            let y = (12.0 * s + caption + 17.0 * s * (row as f64 + 0.5)) as i32;
            draw_sample(cell, panel.series[i].style, series_colour(i), (x0, y), &panel.series[i].label, s)?;
        }
    } else if legend {
        chart
            .configure_series_labels()
            .position(corner)
            .margin(px(8.0, s))
            .legend_area_size(px(30.0, s))
            .label_font(text(12.0 * s))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()?;
    }
    Ok(())
}

/// Gives `anno` a legend picture of a series drawn with `style`.
fn legend_entry<'a, DB: DrawingBackend + 'a>(
    anno: &mut SeriesAnno<'a, DB>,
    style: LineStyle,
    line: ShapeStyle,
    dot: ShapeStyle,
    radius: u32,
    s: f64,
) {
    let width = i32::try_from(px(24.0, s)).unwrap_or(24);
    let (dash, gap) = (px(DASH.0, s), px(DASH.1, s));
    match style {
        LineStyle::Line => anno.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + width, y)], line)),
        LineStyle::Dashed => {
            anno.legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + width, y)], dash, gap, line))
        }
        LineStyle::Points => anno.legend(move |(x, y)| Circle::new((x + width / 2, y), radius, dot)),
        LineStyle::LineAndPoints => anno.legend(move |(x, y)| {
            EmptyElement::at((x, y))
                + PathElement::new(vec![(0, 0), (width, 0)], line)
                + Circle::new((width / 2, 0), radius, dot)
        }),
    };
}
