//! Line charts: the figure model ([`Figure`], [`Panel`], [`Axis`], [`Series`]) and
//! [`write_figure`].

use std::path::{Path, PathBuf};

use plotters::chart::SeriesAnno;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::output::Staged;
use plotters::chart::SeriesLabelPosition;

use crate::ranges::{emptiest_corner, polylines, visible, Scale, TICKS};
use crate::style::{check_size, draw_centred, ensure_font, px, rgb, series_colour, Font, Pen};
use crate::{DrawResult, PlotError, PNG_SCALE};

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

/// Draws `fig` and writes `<stem>.svg` and `<stem>.png` (the extensions are appended to `stem`);
/// returns the two paths, SVG first.
///
/// Fails, naming the file, if the figure has no panels, a panel is smaller than 100 × 100 px or
/// the figure larger than 10 000 px a side, the text scale is outside 0.5 to 2, an explicit
/// axis range is invalid, a categorical axis is logarithmic, or a file cannot be written. On failure neither file is replaced and no temporary file remains.
pub fn write_figure(fig: &Figure, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let svg = Staged::new(stem, "svg")?;
    let png = Staged::new(stem, "png")?;
    let (w, h) = fig.size();
    svg.draw(|tmp| {
        if fig.panels.is_empty() {
            return Err("the figure has no panels".into());
        }
        check_size(fig.panel_width, fig.panel_height, (w, h))?;
        if !(0.5..=2.0).contains(&fig.text_scale) {
            return Err(format!("the text scale {} is not between 0.5 and 2", fig.text_scale).into());
        }
        if !(0.25..=8.0).contains(&fig.line_width) {
            return Err(format!("the line width {} px is not between 0.25 and 8", fig.line_width).into());
        }
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
    let pen = Pen { s, text: fig.text_scale, font: fig.font, line: fig.line_width };
    let body = if fig.title.is_empty() {
        root.clone()
    } else {
        let (band, body) = root.split_vertically(px(f64::from(fig.title_band()), s));
        draw_centred(&band, &fig.title, pen.text(20.0))?;
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
    let place = if shared.is_some() { Legend::None } else { fig.legend };
    for (i, (panel, cell)) in fig.panels.iter().zip(panels.split_evenly(fig.grid())).enumerate() {
        draw_panel(&cell, panel, pen, place).map_err(|e| format!("panel {} ('{}'): {e}", i + 1, panel.title))?;
    }
    if let (Some(entries), Some(area)) = (shared, legend) {
        let width = u32::try_from(fig.grid().1).unwrap_or(1).saturating_mul(fig.panel_width);
        let (per_row, _, entry) = fig.legend_layout(&entries, width);
        for (k, &(label, style, colour)) in entries.iter().enumerate() {
            let x = (s * (12.0 + entry * (k % per_row) as f64)) as i32;
            let y = (s * (6.0 + fig.legend_row() * ((k / per_row) as f64 + 0.5))) as i32;
            draw_sample(&area, style, colour, (x, y), label, pen)?;
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
    pen: Pen,
) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let width = i32::try_from(pen.px(24.0)).unwrap_or(24);
    let marks = Marks::new(colour, pen);
    let ends = vec![(x, y), (x + width, y)];
    match style.dashes() {
        Some((dash, gap)) => area.draw(&DashedPathElement::new(ends, pen.px(dash), pen.px(gap), marks.line))?,
        None if style.has_line() => area.draw(&PathElement::new(ends, marks.line))?,
        None => {}
    }
    match style {
        LineStyle::Points | LineStyle::LineAndPoints => area.draw(&marks.dot((x + width / 2, y)))?,
        LineStyle::Hollow => area.draw(&marks.ring((x + width / 2, y)))?,
        _ => {}
    }
    let anchor = plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Left,
        plotters::style::text_anchor::VPos::Center,
    );
    area.draw_text(label, &pen.text(12.0).pos(anchor), (x + width + (6.0 * pen.s) as i32, y))?;
    Ok(())
}

/// The strokes of one series colour: a line of the figure's width `w`, a filled dot of radius
/// 1.5 `w`, an open ring of radius 2 `w`.
#[derive(Clone, Copy)]
struct Marks {
    line: ShapeStyle,
    fill: ShapeStyle,
    edge: ShapeStyle,
    radius: u32,
}

impl Marks {
    fn new(colour: RGBColor, pen: Pen) -> Self {
        Self {
            line: colour.stroke_width(pen.px(pen.line).max(1)),
            fill: colour.filled(),
            edge: colour.stroke_width(pen.px(0.75 * pen.line).max(1)),
            radius: pen.px(1.5 * pen.line).max(1),
        }
    }

    fn dot<C>(&self, at: C) -> Circle<C, u32> {
        Circle::new(at, self.radius, self.fill)
    }

    fn ring<C>(&self, at: C) -> Circle<C, u32> {
        Circle::new(at, self.radius + self.radius.div_ceil(3), self.edge)
    }
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
fn draw_panel<DB>(cell: &DrawingArea<DB, Shift>, panel: &Panel, pen: Pen, legend: Legend) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let prep = Prepared::new(panel)?;
    let (x, y) = (prep.x.lo..prep.x.hi, prep.y.lo..prep.y.hi);
    match (panel.x.log, panel.y.log) {
        (false, false) => draw_chart(cell, panel, &prep, x, y, pen, legend),
        (true, false) => draw_chart(cell, panel, &prep, x.log_scale(), y, pen, legend),
        (false, true) => draw_chart(cell, panel, &prep, x, y.log_scale(), pen, legend),
        (true, true) => draw_chart(cell, panel, &prep, x.log_scale(), y.log_scale(), pen, legend),
    }
}

/// The tick label at `v` on `axis`: its category name at a whole number of a categorical axis
/// (nothing between), else the scale's number.
fn tick(axis: &Axis, scale: &Scale, v: f64) -> String {
    if axis.categories.is_empty() {
        return scale.tick_label(v);
    }
    let k = v.round();
    match (k >= 0.0 && (v - k).abs() < 1e-6).then(|| axis.categories.get(k as usize)).flatten() {
        Some(name) => name.clone(),
        None => String::new(),
    }
}

/// How many ticks plotters is asked for on `axis`: enough on a categorical axis for a tick at
/// every whole number.
fn tick_count(axis: &Axis) -> usize {
    match axis.categories.len() {
        0 => TICKS,
        n => 2 * n + 2,
    }
}

/// Draws axes, series, the "no data" note and the legend of one panel.
/// `legend` is [`Legend::None`] when the figure draws a shared legend.
#[allow(clippy::too_many_arguments)]
fn draw_chart<DB, X, Y>(
    cell: &DrawingArea<DB, Shift>,
    panel: &Panel,
    prep: &Prepared,
    x: X,
    y: Y,
    pen: Pen,
    place: Legend,
) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let s = pen.s;
    // The legend's footprint: a row of 12 px text per entry (17 px with spacing), about 7 px per
    // character plus the 30 px sample line.
    let labelled: Vec<usize> = (0..panel.series.len()).filter(|&i| !panel.series[i].label.is_empty()).collect();
    let legend = place != Legend::None && panel.series.len() > 1 && !labelled.is_empty();
    let chars = labelled.iter().map(|&i| panel.series[i].label.chars().count()).max().unwrap_or(0) as f64;
    let row = 17.0 * s * pen.text;
    let legend_px =
        (f64::from(px(48.0, s)) + 7.0 * s * pen.text * chars, f64::from(px(16.0, s)) + row * labelled.len() as f64);
    let (cw, ch) = cell.dim_in_pixel();
    let caption = if panel.title.is_empty() { 0.0 } else { 24.0 * s * pen.text };
    // Room for the y tick labels: 72 px, or the longest category name.
    let y_labels = match panel.y.categories.iter().map(|c| c.chars().count()).max() {
        Some(n) => (n as f64 * 7.0 + 16.0).max(40.0),
        None => 72.0,
    };
    let plot_px = (f64::from(cw) - (24.0 + y_labels * pen.text) * s, f64::from(ch) - 68.0 * s * pen.text - caption);
    let (auto_corner, covered) =
        emptiest_corner(prep.coverage(), (legend_px.0 / plot_px.0.max(1.0), legend_px.1 / plot_px.1.max(1.0)));
    let (corner, outside) = match place {
        Legend::UpperLeft => (SeriesLabelPosition::UpperLeft, false),
        Legend::UpperRight => (SeriesLabelPosition::UpperRight, false),
        Legend::LowerLeft => (SeriesLabelPosition::LowerLeft, false),
        Legend::LowerRight => (SeriesLabelPosition::LowerRight, false),
        Legend::Right => (auto_corner, legend),
        _ => (auto_corner, legend && covered > 0 && f64::from(cw) > 2.5 * legend_px.0),
    };
    let mut builder = ChartBuilder::on(cell);
    builder.margin(pen.tpx(12.0)).x_label_area_size(pen.tpx(44.0)).y_label_area_size(pen.tpx(y_labels));
    if outside {
        builder.margin_right(pen.tpx(12.0) + legend_px.0 as u32);
    }
    if !panel.title.is_empty() {
        builder.caption(&panel.title, pen.text(16.0));
    }
    let mut chart = builder.build_cartesian_2d(x, y)?;

    let x_label = |v: &f64| tick(&panel.x, &prep.x, *v);
    let y_label = |v: &f64| tick(&panel.y, &prep.y, *v);
    chart
        .configure_mesh()
        .x_labels(tick_count(&panel.x))
        .y_labels(tick_count(&panel.y))
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .x_desc(panel.x.label.as_str())
        .y_desc(panel.y.label.as_str())
        .label_style(pen.text(12.0))
        .axis_desc_style(pen.text(14.0))
        .axis_style(BLACK.stroke_width(px(1.0, s)))
        .bold_line_style(BLACK.mix(0.12).stroke_width(px(1.0, s)))
        .light_line_style(TRANSPARENT)
        .set_all_tick_mark_size(px(4.0, s))
        .draw()?;

    for (i, (series, trace)) in panel.series.iter().zip(&prep.traces).enumerate() {
        let marks = Marks::new(series.colour_at(i), pen);
        let lines = || trace.lines.iter().map(|l| PathElement::new(l.clone(), marks.line));
        let anno = match series.style {
            LineStyle::Line => chart.draw_series(lines())?,
            LineStyle::Dashed | LineStyle::Dotted => {
                let (dash, gap) = series.style.dashes().unwrap_or(DASH);
                let (dash, gap) = (px(dash, s), px(gap, s));
                chart.draw_series(
                    trace.lines.iter().flat_map(|l| DashedLineSeries::new(l.clone(), dash, gap, marks.line)),
                )?
            }
            LineStyle::Points => chart.draw_series(trace.dots.iter().map(|&p| marks.dot(p)))?,
            LineStyle::Hollow => chart.draw_series(trace.dots.iter().map(|&p| marks.ring(p)))?,
            LineStyle::LineAndPoints => {
                chart.draw_series(lines())?;
                chart.draw_series(trace.dots.iter().map(|&p| marks.dot(p)))?
            }
        };
        if !series.label.is_empty() {
            legend_entry(anno.label(series.label.as_str()), series.style, marks, s);
        }
    }

    if prep.traces.iter().all(|t| t.dots.is_empty()) {
        draw_centred(&chart.plotting_area().strip_coord_spec(), "no data", pen.text(14.0).color(&BLACK.mix(0.6)))?;
    }
    if outside {
        let x0 = (f64::from(cw) - legend_px.0) as i32;
        for (k, &i) in labelled.iter().enumerate() {
            let y = (12.0 * s + caption + row * (k as f64 + 0.5)) as i32;
            let series = &panel.series[i];
            draw_sample(cell, series.style, series.colour_at(i), (x0, y), &series.label, pen)?;
        }
    } else if legend {
        chart
            .configure_series_labels()
            .position(corner)
            .margin(px(8.0, s))
            .legend_area_size(px(30.0, s))
            .label_font(pen.text(12.0))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()?;
    }
    Ok(())
}

/// Gives `anno` a legend picture of a series drawn with `style`.
fn legend_entry<'a, DB: DrawingBackend + 'a>(anno: &mut SeriesAnno<'a, DB>, style: LineStyle, marks: Marks, s: f64) {
    let width = i32::try_from(px(24.0, s)).unwrap_or(24);
    let line = marks.line;
    match style {
        LineStyle::Line => anno.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + width, y)], line)),
        LineStyle::Dashed | LineStyle::Dotted => {
            let (dash, gap) = style.dashes().unwrap_or(DASH);
            let (dash, gap) = (px(dash, s), px(gap, s));
            anno.legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + width, y)], dash, gap, line))
        }
        LineStyle::Points => anno.legend(move |(x, y)| marks.dot((x + width / 2, y))),
        LineStyle::Hollow => anno.legend(move |(x, y)| marks.ring((x + width / 2, y))),
        LineStyle::LineAndPoints => anno.legend(move |(x, y)| {
            EmptyElement::at((x, y)) + PathElement::new(vec![(0, 0), (width, 0)], line) + marks.dot((width / 2, 0))
        }),
    };
}
