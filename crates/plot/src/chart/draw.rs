//! Drawing a [`Figure`]: the files, the grid of panels with the title and the shared legend, each
//! panel's chart (axes, ticks, series, marks, reference lines) and its legend entries.

use std::path::{Path, PathBuf};

use plotters::chart::{SeriesAnno, SeriesLabelPosition};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::*;
use crate::output::Staged;
use crate::ranges::{emptiest_corner, polylines, visible, Scale, TICKS};
use crate::style::{check_size, draw_centred, ensure_font, px, Pen};
use crate::{DrawResult, PlotError};

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
