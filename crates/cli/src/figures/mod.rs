//! Figures drawn from an experiment's CSVs alone (so `solverlab plot` can redraw them).
//!
//! A `[[figure]]` names a table and columns; three kinds exist:
//!
//! * `lines` (default): `y` against `x`, one panel per `y` column (times each value of `panels`),
//!   one series per distinct value of the `series` columns; `reduce` aggregates the rows that
//!   share a series and an `x` (`last`, `mean`, `median`, `max`, `min`); `fit = true` adds the
//!   log-log slope to each legend entry; `filter` keeps rows whose columns equal given values and
//!   `frames = [a, b]` keeps a frame window;
//! * `snapshots`: the scene at the frames `at`, one panel per run, sticks coloured by stretch;
//!   `animate = true` adds a GIF of every recorded frame;
//! * `profile`: the Dolan-Moré performance profile `ρ(τ)` of `metric` (lower is better) over the
//!   problems named by the `problem` columns.
//!
//! Derived columns of `steps`: `energy` (kinetic + potential, J), `energy_ratio` (`E/E₀` of the
//! run), `energy_change` (`E − E₀`, J), `step_ms` (solve + integrate, ms), `solve_ms`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use solverlab_plot::{Axis, Figure, Font, Legend, LineStyle, Panel, Series};

mod analytic;
mod profile;
mod series;
mod snapshots;

use analytic::Analytic;
use profile::profile;

pub use series::series_runs;
use series::{failed_runs, figure_series, keep, look, marked, series_columns, series_name, Table};
pub use snapshots::position_frames;
use snapshots::snapshots;

use crate::expr::Expr;
use crate::spec::{colour, ExperimentFile, FigureKind, FigureSpec, LegendPlace, Level, LineKind, OneOrMany, Reduce};
use crate::tables::TableName;

/// Axis label with unit for a column.
fn label(column: &str) -> String {
    match column {
        "frame" => "frame".into(),
        "time" => "time (s)".into(),
        "iteration" => "iteration".into(),
        "iterations" => "iterations per frame".into(),
        "mean_iterations" => "iterations per frame (mean)".into(),
        "residual" => "residual (each solver's own)".into(),
        "violation" | "final_violation" | "peak_violation" => "violation (m)".into(),
        "max_violation" => "max |C| over equality rows (m)".into(),
        "support_force" | "final_support_force" => "support force of the colliders (N)".into(),
        "force" => "force (N)".into(),
        "outer_iterations" | "mean_outer_iterations" => "outer (Newton) iterations per frame".into(),
        "unconverged_frames" => "frames above tolerance".into(),
        "rms_violation" => "RMS |C| (m)".into(),
        "max_penetration" => "max penetration (m)".into(),
        "max_stretch" | "final_max_stretch" => "max length / rest".into(),
        "tear" => "largest tear (fraction of length)".into(),
        "energy" => "energy (J)".into(),
        "slide_acceleration" => "acceleration from rest, 2Δx/t² (m/s²)".into(),
        "scene.angle" => "incline angle θ (°)".into(),
        "energy_ratio" => "E / E₀".into(),
        "energy_change" => "E − E₀ (J)".into(),
        "step_ms" | "step_ms_median" => "ms per frame".into(),
        "solve_ms" => "solve ms per frame".into(),
        "error_rms" => "RMS |x − x_ref| (m)".into(),
        "error_max" => "max |x − x_ref| (m)".into(),
        "seconds" => "solve time (s)".into(),
        "cap" => "iteration cap".into(),
        "step_ms_p25" => "ms per frame, lower quartile".into(),
        "step_ms_mean" => "ms per frame (mean)".into(),
        "step_ms_p75" => "ms per frame, upper quartile".into(),
        "constraints" => "constraints".into(),
        "solver.omega" => "relaxation factor ω".into(),
        "solver.iterations" => "iterations per step".into(),
        "substeps" => "substeps per frame".into(),
        "scene.nx" => "n (particles per side)".into(),
        "scene.links" => "links N".into(),
        "com_x" => "centre of mass x (m)".into(),
        "com_y" => "centre of mass y (m)".into(),
        "com_z" => "centre of mass z (m)".into(),
        "rms_speed" => "RMS particle speed (m/s)".into(),
        "kinetic_energy" => "kinetic energy (J)".into(),
        "potential_energy" => "potential energy (J)".into(),
        "jitter" => "jitter: settled RMS speed (m/s)".into(),
        "body_drift" | "max_body_drift" => "largest body drift (m)".into(),
        "top_drift" | "max_top_drift" => "top body drift (m)".into(),
        "stood" => "stood (1 = every body stayed in place)".into(),
        "scene.ratio" => "mass ratio".into(),
        other => other.replace('_', " "),
    }
}

fn reduce(values: &mut [f64], how: Reduce) -> f64 {
    values.sort_by(f64::total_cmp);
    match how {
        Reduce::Last => *values.last().unwrap_or(&f64::NAN),
        Reduce::Mean => values.iter().sum::<f64>() / values.len() as f64,
        Reduce::Median => values[values.len() / 2],
        Reduce::Max => *values.last().unwrap_or(&f64::NAN),
        Reduce::Min => *values.first().unwrap_or(&f64::NAN),
    }
}

/// Least-squares slope of log y against log x.
fn loglog_slope(points: &[(f64, f64)]) -> Option<f64> {
    let p: Vec<(f64, f64)> =
        points.iter().filter(|(x, y)| *x > 0.0 && *y > 0.0).map(|(x, y)| (x.ln(), y.ln())).collect();
    if p.len() < 2 {
        return None;
    }
    let n = p.len() as f64;
    let (mx, my) = (p.iter().map(|q| q.0).sum::<f64>() / n, p.iter().map(|q| q.1).sum::<f64>() / n);
    let sxx: f64 = p.iter().map(|q| (q.0 - mx).powi(2)).sum();
    let sxy: f64 = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The plot crate's line style for a figure file's `line`.
fn line_style(kind: LineKind) -> LineStyle {
    match kind {
        LineKind::Solid => LineStyle::Line,
        LineKind::Dashed => LineStyle::Dashed,
        LineKind::Dotted => LineStyle::Dotted,
        LineKind::Points => LineStyle::Points,
        LineKind::LineAndPoints => LineStyle::LineAndPoints,
        LineKind::Hollow => LineStyle::Hollow,
    }
}

/// The smallest and largest of `values` an axis can show (positive on a log axis).
fn span(values: impl Iterator<Item = f64>, log: bool) -> Option<(f64, f64)> {
    values.filter(|v| v.is_finite() && (!log || *v > 0.0)).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// The `[[figure.reference]]` lines of a panel whose axes show `x` and `y` (the limits if set,
/// else the data's span): horizontal and vertical lines across the span, closed forms sampled at
/// 400 points (evenly in log x on a log axis). Dashed grey unless styled; an axis without a span
/// draws none of its lines.
fn references(spec: &FigureSpec, x: Option<(f64, f64)>, y: Option<(f64, f64)>) -> Vec<Series> {
    let x = spec.xlim.map(|[a, b]| (a, b)).or(x);
    let y = spec.ylim.map(|[a, b]| (a, b)).or(y);
    let mut out = Vec::new();
    for r in &spec.reference {
        let points = match (r.x, &r.y, x, y) {
            (Some(at), _, _, Some((lo, hi))) => vec![(at, lo), (at, hi)],
            (None, Some(Level::Number(at)), Some((lo, hi)), _) => vec![(lo, *at), (hi, *at)],
            (None, Some(Level::Expr(text)), Some((lo, hi)), _) => match Expr::parse(text) {
                Ok(e) => (0..=400)
                    .map(|k| {
                        let t = f64::from(k) / 400.0;
                        let x = if spec.logx { lo * (hi / lo).powf(t) } else { lo + t * (hi - lo) };
                        (x, e.eval(x))
                    })
                    .collect(),
                Err(_) => continue,
            },
            _ => continue,
        };
        out.push(Series {
            label: r.label.clone(),
            points,
            style: r.line.map_or(LineStyle::Dashed, line_style),
            colour: Some(r.colour.as_deref().and_then(|c| colour(c).ok()).unwrap_or((120, 120, 120))),
        });
    }
    out
}

/// The figure files `spec` writes, SVG first: `NAME.svg`, or one `NAME-frameF.svg` per snapshot
/// frame.
pub fn svg_files(spec: &FigureSpec) -> Vec<String> {
    match spec.kind {
        FigureKind::Snapshots => spec.at.iter().map(|f| format!("{}-frame{f}.svg", spec.name)).collect(),
        _ => vec![format!("{}.svg", spec.name)],
    }
}

/// The axis of `column` as `spec` sets it: its title (`xlabel`/`ylabel`, else the column's name
/// and unit), log scale and limits.
fn axis(column: &str, title: Option<&String>, log: bool, lim: Option<[f64; 2]>) -> Axis {
    Axis {
        label: title.cloned().unwrap_or_else(|| label(column)),
        log,
        range: lim.map(|[a, b]| (a, b)),
        ..Axis::default()
    }
}

/// The plot crate's legend placement for a figure file's `legend`.
fn legend(place: Option<LegendPlace>) -> Legend {
    match place.unwrap_or(LegendPlace::Auto) {
        LegendPlace::Auto => Legend::Auto,
        LegendPlace::UpperLeft => Legend::UpperLeft,
        LegendPlace::UpperRight => Legend::UpperRight,
        LegendPlace::LowerLeft => Legend::LowerLeft,
        LegendPlace::LowerRight => Legend::LowerRight,
        LegendPlace::Right => Legend::Right,
        LegendPlace::Below => Legend::Below,
        LegendPlace::None => Legend::None,
    }
}

/// The values of the `panels` column in sorted order (one `None` without it).
fn panel_values(spec: &FigureSpec, table: &Table) -> Vec<Option<String>> {
    match spec.panels.as_deref().and_then(|p| table.col(p)) {
        Some(pc) => table.rows.iter().map(|r| r[pc].clone()).collect::<BTreeSet<_>>().into_iter().map(Some).collect(),
        None => vec![None],
    }
}

/// The title of the panel of `value`: the value itself for the `scene` and `label` columns,
/// else `column = value`.
fn panel_title(spec: &FigureSpec, value: &str) -> String {
    match spec.panels.as_deref().unwrap_or_default() {
        "scene" | "label" => value.to_string(),
        column => format!("{} = {value}", label(column)),
    }
}

/// Whether `row` belongs to the panel of `value` (every row without panels).
fn in_panel(spec: &FigureSpec, table: &Table, row: &[String], value: &Option<String>) -> bool {
    match (value, spec.panels.as_deref().and_then(|p| table.col(p))) {
        (Some(v), Some(pc)) => &row[pc] == v,
        _ => true,
    }
}

fn lines(
    spec: &FigureSpec,
    table: &Table,
    file: &ExperimentFile,
    failed: &BTreeMap<usize, String>,
) -> Result<Figure, String> {
    let ys = spec.y.as_ref().map(OneOrMany::list).unwrap_or_default();
    let series_cols = series_columns(spec);
    let names = figure_series(spec, table)?;
    let xc = table.col(&spec.x).expect("validated");
    let sc: Vec<usize> = series_cols.iter().filter_map(|c| table.col(c)).collect();
    let frame_col = table.col("frame");
    let run_col = table.col("run");
    let analytic = spec.analytic.as_deref().map(|kind| Analytic::of(kind, file)).transpose()?;
    let mut panels = Vec::new();
    for pv in &panel_values(spec, table) {
        for y in &ys {
            let yc = table.col(y).expect("validated");
            // series name → (x, y, frame) of its rows, and its runs.
            let mut groups: BTreeMap<&str, Vec<(f64, f64, f64)>> = BTreeMap::new();
            let mut runs: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
            for row in table.rows.iter().filter(|r| keep(table, spec, r) && in_panel(spec, table, r, pv)) {
                let name = series_name(row, &sc, &series_cols);
                let Some(name) = names.iter().find(|n| **n == name).map(String::as_str) else { continue };
                let frame = frame_col.map_or(0.0, |c| table.num(row, c));
                if let Some(run) = run_col.and_then(|c| row[c].parse().ok()) {
                    runs.entry(name).or_default().insert(run);
                }
                groups.entry(name).or_default().push((table.num(row, xc), table.num(row, yc), frame));
            }
            let t_max = groups.values().flatten().map(|p| p.0).fold(0.0, f64::max);
            let mut series: Vec<Series> = Vec::new();
            for (index, name) in names.iter().enumerate() {
                let Some(raw) = groups.get(name.as_str()) else { continue };
                let points: Vec<(f64, f64)> = match spec.reduce {
                    None => raw.iter().map(|p| (p.0, p.1)).collect(),
                    Some(how) => {
                        let mut by_x: BTreeMap<u64, (f64, Vec<f64>, f64, f64)> = BTreeMap::new();
                        for &(x, y, frame) in raw {
                            let e = by_x.entry(x.to_bits() ^ (1 << 63)).or_insert((
                                x,
                                Vec::new(),
                                f64::NEG_INFINITY,
                                f64::NAN,
                            ));
                            e.1.push(y);
                            if frame >= e.2 {
                                (e.2, e.3) = (frame, y);
                            }
                        }
                        let mut pts: Vec<(f64, f64)> = by_x
                            .into_values()
                            .map(|(x, mut ys, _, last)| {
                                (x, if how == Reduce::Last { last } else { reduce(&mut ys, how) })
                            })
                            .collect();
                        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                        pts
                    }
                };
                let runs = runs.remove(name.as_str()).unwrap_or_default();
                let marked_name = marked(name.clone(), &runs, failed);
                let label = match (spec.fit, loglog_slope(&points)) {
                    (true, Some(s)) => format!("{marked_name} (slope {s:.2})"),
                    _ => marked_name,
                };
                // Colours repeat after the palette's eight; the repeats are dashed.
                let default = if index >= solverlab_plot::PALETTE.len() {
                    LineStyle::Dashed
                } else if spec.reduce.is_some() || points.len() < 12 {
                    LineStyle::LineAndPoints
                } else {
                    LineStyle::Line
                };
                let (colour, line) = look(spec, name);
                let colour = colour.or(Some(solverlab_plot::PALETTE[index % solverlab_plot::PALETTE.len()]));
                series.push(Series { label, points, style: line.unwrap_or(default), colour });
            }
            series.extend(analytic.map(|a| a.series(t_max)));
            let all = || series.iter().flat_map(|s| s.points.iter());
            let (xs, ysp) = (span(all().map(|p| p.0), spec.logx), span(all().map(|p| p.1), spec.logy));
            series.extend(references(spec, xs, ysp));
            // The y column is on the axis: the title names it only when a figure has several.
            let title = match (pv, ys.len()) {
                (Some(v), 1) => panel_title(spec, v),
                (Some(v), _) => format!("{} — {}", label(y), panel_title(spec, v)),
                (None, _) => label(y),
            };
            panels.push(Panel {
                title,
                x: axis(&spec.x, spec.xlabel.as_ref(), spec.logx, spec.xlim),
                y: axis(y, spec.ylabel.as_ref(), spec.logy, spec.ylim),
                series,
            });
        }
    }
    let columns = spec.columns.unwrap_or(2).min(panels.len()).max(1);
    // A lone panel gets the width of two, so that a figure title fits above it.
    let panel_width = if columns == 1 { 800 } else { Figure::default().panel_width };
    Ok(Figure {
        title: spec.title.clone(),
        columns,
        panels,
        panel_width,
        png_scale: spec.png_scale.unwrap_or(solverlab_plot::PNG_SCALE),
        legend: legend(spec.legend),
        ..Figure::default()
    })
}

/// A dot plot: one row per series (first at the top), the `x` column along the axis, a dot for
/// each kept row of the table, coloured by its `group` value (offset a little up or down per
/// group so that equal values stay visible); runs that did not end `ok` are open rings, and a
/// legend entry says so.
fn dots(spec: &FigureSpec, table: &Table, failed: &BTreeMap<usize, String>) -> Result<Figure, String> {
    let series_cols = series_columns(spec);
    let names = figure_series(spec, table)?;
    let sc: Vec<usize> = series_cols.iter().filter_map(|c| table.col(c)).collect();
    let xc = table.col(&spec.x).expect("validated");
    let gc = spec.group.as_deref().and_then(|g| table.col(g));
    let (run_col, status_col) = (table.col("run"), table.col("status"));
    let kept: Vec<&Vec<String>> = table.rows.iter().filter(|r| keep(table, spec, r)).collect();
    // Group values in numeric order when they are all numbers, else in order of appearance.
    let mut groups: Vec<String> = Vec::new();
    for row in &kept {
        let g = gc.map(|c| row[c].clone()).unwrap_or_default();
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    if groups.iter().all(|g| g.parse::<f64>().is_ok()) {
        groups.sort_by(|a, b| a.parse::<f64>().unwrap_or(0.0).total_cmp(&b.parse::<f64>().unwrap_or(0.0)));
    }
    let failed_row = |row: &[String]| match (status_col, run_col) {
        (Some(c), _) => row[c] != crate::tables::RunStatus::Ok.as_str(),
        (None, Some(c)) => row[c].parse().is_ok_and(|r: usize| failed.contains_key(&r)),
        _ => false,
    };
    let any_failed = kept.iter().any(|r| failed_row(r));
    let n = names.len();
    let step = (0.6 / groups.len() as f64).min(0.2);
    let mut panels = Vec::new();
    for pv in &panel_values(spec, table) {
        let mut series = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            let offset = (g as f64 - (groups.len() as f64 - 1.0) / 2.0) * step;
            let (mut ok, mut bad) = (Vec::new(), Vec::new());
            for row in kept.iter().filter(|r| in_panel(spec, table, r, pv)) {
                if gc.is_some_and(|c| &row[c] != group) {
                    continue;
                }
                let name = series_name(row, &sc, &series_cols);
                let Some(k) = names.iter().position(|m| *m == name) else { continue };
                let point = (table.num(row, xc), (n - 1 - k) as f64 - offset);
                if failed_row(row) {
                    bad.push(point);
                } else {
                    ok.push(point);
                }
            }
            let colour = Some(solverlab_plot::PALETTE[g % solverlab_plot::PALETTE.len()]);
            let label = match &spec.group {
                Some(column) => format!("{column} = {group}"),
                None => String::new(),
            };
            series.push(Series { label, points: ok, style: LineStyle::Points, colour });
            series.push(Series { label: String::new(), points: bad, style: LineStyle::Hollow, colour });
        }
        if any_failed {
            let label = "open ring: torn or diverged".to_string();
            series.push(Series { label, points: Vec::new(), style: LineStyle::Hollow, colour: Some((0, 0, 0)) });
        }
        let xs = span(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), spec.logx);
        series.extend(references(spec, xs, Some((-0.5, n as f64 - 0.5))));
        let title = pv.as_deref().map(|v| panel_title(spec, v)).unwrap_or_default();
        let rows = Axis {
            label: spec.ylabel.clone().unwrap_or_default(),
            categories: names.iter().rev().cloned().collect(),
            ..Axis::default()
        };
        panels.push(Panel { title, x: axis(&spec.x, spec.xlabel.as_ref(), spec.logx, spec.xlim), y: rows, series });
    }
    let columns = spec.columns.unwrap_or(2).min(panels.len()).max(1);
    Ok(Figure {
        title: spec.title.clone(),
        columns,
        panels,
        panel_width: if columns == 1 { 800 } else { Figure::default().panel_width },
        panel_height: (22 * u32::try_from(n).unwrap_or(100) + 130).max(Figure::default().panel_height),
        png_scale: spec.png_scale.unwrap_or(solverlab_plot::PNG_SCALE),
        legend: legend(spec.legend),
        ..Figure::default()
    })
}

/// How `solverlab plot` (and `run`, in the screen style) lays out the figures of a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Style {
    /// `NAME.svg` and `NAME.png` in the folder, sized for a screen (480 × 360 px panels, sans
    /// serif): what `run` draws.
    #[default]
    Screen,
    /// For a paper, in `paper/`: `NAME-single.svg` 3.5 in (336 px) wide for one column of a
    /// two-column page, `NAME-double.svg` 7 in (672 px) for the full width, serif text with
    /// tick labels of about 6.5 pt and axis titles of about 7.5 pt at that size, no figure title
    /// (the caption says it), and a PNG of each at 3× for a preview. Snapshot figures are left
    /// out.
    Paper,
}

/// The paper forms of `figure` (see [`Style::Paper`]): `(suffix, figure)` for the single and the
/// double column.
fn paper_forms(figure: &Figure, kind: FigureKind) -> Vec<(&'static str, Figure)> {
    let ratio = f64::from(figure.panel_height) / f64::from(figure.panel_width.max(1));
    let panels = figure.panels.len().max(1);
    // One column holds two panels side by side at most (a dot plot, or two panels, one).
    let single = if kind == FigureKind::Dots || panels <= 2 { 1 } else { 2 };
    [("single", 336u32, single), ("double", 672, 4)]
        .into_iter()
        .map(|(suffix, width, most)| {
            let columns = figure.columns.clamp(1, most).min(panels);
            let panel_width = width / u32::try_from(columns).unwrap_or(1);
            let form = Figure {
                title: String::new(),
                columns,
                panel_width,
                panel_height: ((f64::from(panel_width) * ratio.max(0.85)).round() as u32).max(150),
                line_width: 1.0,
                png_scale: 3,
                // One legend under the panels, which are too small to hold one each.
                legend: if figure.legend == Legend::Auto { Legend::Below } else { figure.legend },
                text_scale: 0.9,
                font: Font::Serif,
                ..figure.clone()
            };
            (suffix, form)
        })
        .collect()
}

/// Draws every figure of `file` from the CSVs in `dir` in `style`; returns the files written.
pub fn draw_all(file: &ExperimentFile, dir: &Path, style: Style) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    let failed = failed_runs(dir);
    let mut tables: BTreeMap<TableName, Table> = BTreeMap::new();
    let paper = dir.join("paper");
    if style == Style::Paper {
        std::fs::create_dir_all(&paper).map_err(|e| format!("cannot create {}: {e}", paper.display()))?;
    }
    for spec in &file.figures {
        if crate::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(format!(
                "interrupted after {} figure files; each figure is written whole, so those are complete and the \
                 others are as they were",
                written.len()
            ));
        }
        if spec.kind == FigureKind::Snapshots {
            if style == Style::Screen {
                written.extend(snapshots(spec, dir, dir)?);
            }
            continue;
        }
        let source = spec.source().ok_or_else(|| format!("figure {}: no table `{}`", spec.name, spec.table))?;
        let table = match tables.entry(source) {
            std::collections::btree_map::Entry::Occupied(read) => read.into_mut(),
            std::collections::btree_map::Entry::Vacant(slot) => {
                let mut t = Table::read(&dir.join(source.file()))?;
                if source == TableName::Steps {
                    t.derive_steps();
                }
                slot.insert(t)
            }
        };
        let table = &*table;
        let figure = match spec.kind {
            FigureKind::Profile => profile(spec, table, file),
            FigureKind::Dots => dots(spec, table, &failed),
            _ => lines(spec, table, file, &failed),
        }
        .map_err(|e| format!("figure {}: {e}", spec.name))?;
        let forms = match style {
            Style::Screen => vec![(dir.join(&spec.name), figure)],
            Style::Paper => paper_forms(&figure, spec.kind)
                .into_iter()
                .map(|(suffix, f)| (paper.join(format!("{}-{suffix}", spec.name)), f))
                .collect(),
        };
        for (stem, figure) in forms {
            written.extend(solverlab_plot::write_figure(&figure, &stem).map_err(|e| format!("{}: {e}", spec.name))?);
        }
    }
    Ok(written)
}
