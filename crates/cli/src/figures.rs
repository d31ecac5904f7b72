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

use solverlab_plot::{Axis, Figure, LineStyle, Panel, Series, Snapshot, View};

use crate::spec::{ExperimentFile, FigureKind, FigureSpec, OneOrMany, Reduce};
use crate::tables::DERIVED_STEP_COLUMNS;

/// A CSV table with derived columns.
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn read(path: &Path) -> Result<Table, String> {
        let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let columns: Vec<String> = r.headers().map_err(|e| e.to_string())?.iter().map(str::to_string).collect();
        let rows = r
            .records()
            .map(|x| x.map(|x| x.iter().map(str::to_string).collect()))
            .collect::<Result<Vec<Vec<String>>, _>>()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Table { columns, rows })
    }

    fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    fn num(&self, row: &[String], col: usize) -> f64 {
        row[col].parse().unwrap_or(f64::NAN)
    }

    /// Adds the derived columns of the steps table.
    fn derive_steps(&mut self) {
        let (Some(ke), Some(pe), Some(run), Some(s), Some(i), Some(cx), Some(t)) = (
            self.col("kinetic_energy"),
            self.col("potential_energy"),
            self.col("run"),
            self.col("solve_seconds"),
            self.col("integrate_seconds"),
            self.col("com_x"),
            self.col("time"),
        ) else {
            return;
        };
        let mut first: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        let derived: Vec<[f64; 6]> = self
            .rows
            .iter()
            .map(|r| {
                let e = self.num(r, ke) + self.num(r, pe);
                let x = self.num(r, cx);
                let (e0, x0) = *first.entry(r[run].clone()).or_insert((e, x));
                let (solve, integrate) = (self.num(r, s), self.num(r, i));
                let time = self.num(r, t);
                let slide = if time > 0.0 { 2.0 * (x - x0) / (time * time) } else { 0.0 };
                [e, e / e0, e - e0, (solve + integrate) * 1e3, solve * 1e3, slide]
            })
            .collect();
        self.columns.extend(DERIVED_STEP_COLUMNS.map(String::from));
        for (row, d) in self.rows.iter_mut().zip(derived) {
            row.extend(d.iter().map(|x| format!("{x:?}")));
        }
    }
}

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

fn keep(table: &Table, spec: &FigureSpec, row: &[String]) -> bool {
    let filters_ok = spec.filter.iter().all(|(k, v)| {
        let want = match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        // Equal as text, or as numbers (so that `1` matches `1.0`).
        let same_number = |a: &str| matches!((a.parse::<f64>(), want.parse::<f64>()), (Ok(x), Ok(y)) if x == y);
        table.col(k).is_some_and(|c| row[c] == want || same_number(&row[c]))
    });
    let frame_ok = match (spec.frames, table.col("frame")) {
        (Some([a, b]), Some(c)) => row[c].parse::<u64>().is_ok_and(|f| f >= a && f <= b),
        _ => true,
    };
    filters_ok && frame_ok
}

/// The undamped oscillator of the `spring` scene, sampled like the data.
fn analytic_spring(file: &ExperimentFile, t_max: f64) -> Series {
    let set = file.scenes.first().map(|s| s.set.clone()).unwrap_or_default();
    let get = |k: &str, d: f64| set.get(k).and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64))).unwrap_or(d);
    let (alpha, rest, start, mass) = (get("compliance", 1e-3), get("rest", 1.0), get("start", 1.5), get("mass", 1.0));
    let omega = 1.0 / (mass * alpha).sqrt();
    let points =
        (0..=800).map(|i| t_max * i as f64 / 800.0).map(|t| (t, rest + (start - rest) * (omega * t).cos())).collect();
    Series { label: "analytic".into(), points, style: LineStyle::Dashed }
}

/// Coulomb's acceleration down an incline of θ degrees, `g·max(0, sin θ − μ cos θ)`, from 0° to
/// the largest angle plotted.
fn analytic_incline(file: &ExperimentFile, theta_max: f64) -> Series {
    let set = file.scenes.first().map(|s| s.set.clone()).unwrap_or_default();
    let mu = set.get("friction").and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64))).unwrap_or(0.5);
    let points = (0..=400)
        .map(|i| theta_max * i as f64 / 400.0)
        .map(|deg: f64| (deg, 9.81 * (deg.to_radians().sin() - mu * deg.to_radians().cos()).max(0.0)))
        .collect();
    Series { label: "Coulomb".into(), points, style: LineStyle::Dashed }
}

/// The legend name of `row`'s series: the first series column's value, then `column = value`
/// for each further one (a sweep column a series does not have, empty, stays out of its name).
fn series_name(row: &[String], sc: &[usize], series_cols: &[String]) -> String {
    sc.iter()
        .enumerate()
        .filter(|&(k, &c)| k == 0 || !row[c].is_empty())
        .map(|(k, &c)| if k == 0 { row[c].clone() } else { format!("{} = {}", series_cols[k], row[c]) })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each run's status from `runs.csv` in `dir`, for the runs that did not end `ok` (empty when
/// there is no runs.csv).
fn failed_runs(dir: &Path) -> BTreeMap<usize, String> {
    let Ok(runs) = Table::read(&dir.join("runs.csv")) else { return BTreeMap::new() };
    let (Some(rc), Some(sc)) = (runs.col("run"), runs.col("status")) else { return BTreeMap::new() };
    runs.rows
        .iter()
        .filter(|r| r[sc] != "ok")
        .filter_map(|r| r[rc].parse().ok().map(|run| (run, r[sc].clone())))
        .collect()
}

/// A series' legend name, marked with the status of any of its runs that did not end `ok`
/// (`spring [torn]`): a torn or diverged run's line is drawn, and says so.
fn marked(name: String, runs: &BTreeSet<usize>, failed: &BTreeMap<usize, String>) -> String {
    let statuses: BTreeSet<&str> = runs.iter().filter_map(|r| failed.get(r)).map(String::as_str).collect();
    match statuses.is_empty() {
        true => name,
        false => format!("{name} [{}]", statuses.into_iter().collect::<Vec<_>>().join(", ")),
    }
}

/// One series of a drawn figure, for the report: its legend name, its colour and the runs whose
/// rows it draws.
pub struct SeriesRuns {
    /// Legend name (without a fitted slope).
    pub name: String,
    /// Colour as sRGB.
    pub colour: (u8, u8, u8),
    /// Run indices.
    pub runs: BTreeSet<usize>,
}

/// The series of figure `spec` drawn from the CSVs in `dir`, numbered as `lines` and `profile`
/// colour them: in order of first appearance in each panel, the palette's colour by number. A
/// colour that stands for different series in different panels lists the first panel's name and
/// the runs of all. Snapshot figures have no series.
pub fn series_runs(spec: &FigureSpec, dir: &Path) -> Result<Vec<SeriesRuns>, String> {
    if spec.kind == FigureKind::Snapshots {
        return Ok(Vec::new());
    }
    let mut table = Table::read(&dir.join(format!("{}.csv", spec.table)))?;
    if spec.table == "steps" {
        table.derive_steps();
    }
    let series_cols: Vec<String> = match spec.kind {
        FigureKind::Profile => vec!["label".into()],
        _ => spec.series.as_ref().map(OneOrMany::list).unwrap_or_else(|| vec!["label".into()]),
    };
    let sc: Vec<usize> = series_cols.iter().filter_map(|c| table.col(c)).collect();
    let (Some(rc), false) = (table.col("run"), sc.is_empty()) else { return Ok(Vec::new()) };
    let pc = spec.panels.as_deref().and_then(|p| table.col(p)).filter(|_| spec.kind == FigureKind::Lines);
    let mut panels: BTreeMap<String, Vec<(String, BTreeSet<usize>)>> = BTreeMap::new();
    for row in table.rows.iter().filter(|r| keep(&table, spec, r)) {
        let panel = panels.entry(pc.map(|c| row[c].clone()).unwrap_or_default()).or_default();
        let name = series_name(row, &sc, &series_cols);
        let run = row[rc].parse().unwrap_or(usize::MAX);
        match panel.iter_mut().find(|(n, _)| *n == name) {
            Some((_, runs)) => {
                runs.insert(run);
            }
            None => panel.push((name, BTreeSet::from([run]))),
        }
    }
    let failed = failed_runs(dir);
    let mut out: Vec<SeriesRuns> = Vec::new();
    for panel in panels.into_values() {
        for (index, (name, runs)) in panel.into_iter().enumerate() {
            let name = marked(name, &runs, &failed);
            match out.get_mut(index) {
                Some(s) => s.runs.extend(runs),
                None => out.push(SeriesRuns {
                    name,
                    colour: solverlab_plot::PALETTE[index % solverlab_plot::PALETTE.len()],
                    runs,
                }),
            }
        }
    }
    Ok(out)
}

/// The figure files `spec` writes, SVG first: `NAME.svg`, or one `NAME-frameF.svg` per snapshot
/// frame.
pub fn svg_files(spec: &FigureSpec) -> Vec<String> {
    match spec.kind {
        FigureKind::Snapshots => spec.at.iter().map(|f| format!("{}-frame{f}.svg", spec.name)).collect(),
        _ => vec![format!("{}.svg", spec.name)],
    }
}

fn lines(spec: &FigureSpec, table: &Table, file: &ExperimentFile, failed: &BTreeMap<usize, String>) -> Figure {
    let ys = spec.y.as_ref().map(OneOrMany::list).unwrap_or_default();
    let series_cols = spec.series.as_ref().map(OneOrMany::list).unwrap_or_else(|| vec!["label".into()]);
    let xc = table.col(&spec.x).expect("validated");
    let sc: Vec<usize> = series_cols.iter().filter_map(|c| table.col(c)).collect();
    let frame_col = table.col("frame");
    let run_col = table.col("run");
    let panel_values: Vec<Option<String>> = match spec.panels.as_deref().and_then(|p| table.col(p)) {
        Some(pc) => table.rows.iter().map(|r| r[pc].clone()).collect::<BTreeSet<_>>().into_iter().map(Some).collect(),
        None => vec![None],
    };
    let mut panels = Vec::new();
    for pv in &panel_values {
        for y in &ys {
            let yc = table.col(y).expect("validated");
            // series name → (x → values), in first-appearance order.
            let mut order: Vec<String> = Vec::new();
            let mut groups: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
            let mut runs: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
            for row in &table.rows {
                if !keep(table, spec, row) {
                    continue;
                }
                if let (Some(pv), Some(pc)) = (pv, spec.panels.as_deref().and_then(|p| table.col(p))) {
                    if &row[pc] != pv {
                        continue;
                    }
                }
                let name = series_name(row, &sc, &series_cols);
                if !groups.contains_key(&name) {
                    order.push(name.clone());
                }
                let frame = frame_col.map_or(0.0, |c| table.num(row, c));
                if let Some(run) = run_col.and_then(|c| row[c].parse().ok()) {
                    runs.entry(name.clone()).or_default().insert(run);
                }
                groups.entry(name).or_default().push((table.num(row, xc), table.num(row, yc), frame));
            }
            let t_max = groups.values().flatten().map(|p| p.0).fold(0.0, f64::max);
            let mut series: Vec<Series> = order
                .into_iter()
                .enumerate()
                .map(|(index, name)| {
                    let raw = &groups[&name];
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
                    let runs = runs.remove(&name).unwrap_or_default();
                    let name = marked(name, &runs, failed);
                    let label = match (spec.fit, loglog_slope(&points)) {
                        (true, Some(s)) => format!("{name} (slope {s:.2})"),
                        _ => name,
                    };
                    // Colours repeat after the palette's eight; the repeats are dashed.
                    let style = if index >= solverlab_plot::PALETTE.len() {
                        LineStyle::Dashed
                    } else if spec.reduce.is_some() || points.len() < 12 {
                        LineStyle::LineAndPoints
                    } else {
                        LineStyle::Line
                    };
                    Series { label, points, style }
                })
                .collect();
            match spec.analytic.as_deref() {
                Some("spring") => series.push(analytic_spring(file, t_max)),
                Some("incline") => series.push(analytic_incline(file, t_max)),
                _ => {}
            }
            let title = match pv {
                Some(v) => format!("{} — {} = {v}", label(y), label(spec.panels.as_deref().unwrap_or_default())),
                None => label(y),
            };
            panels.push(Panel {
                title,
                x: Axis { label: label(&spec.x), log: spec.logx, range: None },
                y: Axis { label: label(y), log: spec.logy, range: None },
                series,
            });
        }
    }
    let columns = spec.columns.unwrap_or(2).min(panels.len()).max(1);
    // A lone panel gets the width of two, so that a figure title fits above it.
    let panel_width = if columns == 1 { 800 } else { Figure::default().panel_width };
    Figure {
        title: spec.title.clone(),
        columns,
        panels,
        panel_width,
        png_scale: spec.png_scale.unwrap_or(solverlab_plot::PNG_SCALE),
        ..Figure::default()
    }
}

/// Dolan-Moré: `ρ_s(τ)` = share of problems on which solver s is within a factor τ of the best.
fn profile(spec: &FigureSpec, table: &Table, file: &ExperimentFile) -> Figure {
    let metric = table.col(spec.metric.as_deref().expect("validated")).expect("validated");
    let default_problem: Vec<String> = std::iter::once("scene".to_string())
        .chain(crate::spec::sweep_columns(file).into_iter().filter(|k| !k.starts_with("solver.")))
        .collect();
    let pcols: Vec<usize> =
        spec.problem.clone().unwrap_or(default_problem).iter().filter_map(|c| table.col(c)).collect();
    let scol = table.col("label").expect("always present");
    let status = table.col("status");
    let mut values: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut solvers: Vec<String> = Vec::new();
    for row in table.rows.iter().filter(|r| keep(table, spec, r)) {
        let problem = pcols.iter().map(|&c| row[c].clone()).collect::<Vec<_>>().join(" / ");
        let ok = status.is_none_or(|c| row[c] == "ok");
        let v = table.num(row, metric);
        let v = if ok && v.is_finite() && v > 0.0 { v } else { f64::INFINITY };
        if !solvers.contains(&row[scol]) {
            solvers.push(row[scol].clone());
        }
        values.entry(problem).or_default().insert(row[scol].clone(), v);
    }
    let ratios: BTreeMap<&String, Vec<f64>> = solvers
        .iter()
        .map(|s| {
            let r = values
                .values()
                .map(|by| {
                    let best = by.values().copied().fold(f64::INFINITY, f64::min);
                    by.get(s).map_or(f64::INFINITY, |v| v / best)
                })
                .collect();
            (s, r)
        })
        .collect();
    let finite_max = ratios.values().flatten().copied().filter(|r| r.is_finite()).fold(1.0, f64::max);
    let tau_max = (finite_max * 1.5).max(2.0);
    let n = values.len().max(1) as f64;
    let series = solvers
        .iter()
        .map(|s| {
            let mut r = ratios[s].clone();
            r.sort_by(f64::total_cmp);
            let mut points = vec![(1.0, 0.0)];
            let mut count = 0.0;
            for v in r.iter().filter(|v| v.is_finite()) {
                points.push((*v, count / n));
                count += 1.0;
                points.push((*v, count / n));
            }
            points.push((tau_max, count / n));
            Series { label: s.clone(), points, style: LineStyle::Line }
        })
        .collect();
    let panel = Panel {
        title: format!(
            "performance profile of {} over {} problems",
            label(spec.metric.as_deref().unwrap_or("")),
            values.len()
        ),
        x: Axis { label: "τ (within a factor τ of the best)".into(), log: true, range: Some((1.0, tau_max)) },
        y: Axis { label: "ρ(τ): share of problems".into(), log: false, range: Some((0.0, 1.05)) },
        series,
    };
    Figure {
        title: spec.title.clone(),
        panels: vec![panel],
        columns: 1,
        panel_width: 800,
        png_scale: spec.png_scale.unwrap_or(solverlab_plot::PNG_SCALE),
        ..Figure::default()
    }
}

fn snapshots(spec: &FigureSpec, dir: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let pos = Table::read(&dir.join("positions.csv"))?;
    let sticks = Table::read(&dir.join("sticks.csv"))?;
    let (rc, fc, pc) = (pos.col("run").unwrap(), pos.col("frame").unwrap(), pos.col("particle").unwrap());
    let (xc, yc, zc, lc) =
        (pos.col("x").unwrap(), pos.col("y").unwrap(), pos.col("z").unwrap(), pos.col("label").unwrap());
    /// Positions of one run by frame, with the run's label.
    type Recorded = (String, BTreeMap<u64, Vec<[f64; 3]>>);
    let mut runs: BTreeMap<usize, Recorded> = BTreeMap::new();
    for row in pos.rows.iter().filter(|r| keep(&pos, spec, r)) {
        let run: usize = row[rc].parse().unwrap_or(0);
        let frame: u64 = row[fc].parse().unwrap_or(0);
        let p: usize = row[pc].parse().unwrap_or(0);
        let entry = runs.entry(run).or_insert_with(|| (row[lc].clone(), BTreeMap::new()));
        let v = entry.1.entry(frame).or_default();
        if v.len() <= p {
            v.resize(p + 1, [0.0; 3]);
        }
        v[p] = [pos.num(row, xc), pos.num(row, yc), pos.num(row, zc)];
    }
    let mut topo: BTreeMap<usize, Vec<(usize, usize, f64)>> = BTreeMap::new();
    // Limits (`at_least`, `at_most`) bound a distance rather than hold a length: not drawn.
    let sense = sticks.col("sense");
    for row in sticks.rows.iter().filter(|r| sense.is_none_or(|k| r[k] == "equal")) {
        topo.entry(row[0].parse().unwrap_or(0)).or_default().push((
            row[1].parse().unwrap_or(0),
            row[2].parse().unwrap_or(0),
            row[3].parse().unwrap_or(1.0),
        ));
    }
    let panels_at = |frame: u64| -> Vec<Snapshot> {
        runs.iter()
            .filter_map(|(run, (name, frames))| {
                let x = frames.get(&frame)?;
                let sticks = topo
                    .get(run)
                    .map(|t| {
                        t.iter()
                            .filter(|(a, b, _)| *a < x.len() && *b < x.len())
                            .map(|&(a, b, rest)| {
                                let d = ((x[a][0] - x[b][0]).powi(2)
                                    + (x[a][1] - x[b][1]).powi(2)
                                    + (x[a][2] - x[b][2]).powi(2))
                                .sqrt();
                                (a, b, d / rest)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Some(Snapshot { title: format!("{name} · frame {frame}"), points: x.clone(), sticks })
            })
            .collect()
    };
    // Panels of 240 px keep a row of four readable and the committed PNGs small.
    let view = View { panel_width: 240, panel_height: 240, ..View::default() };
    let mut written = Vec::new();
    for &frame in &spec.at {
        let panels = panels_at(frame);
        if panels.is_empty() {
            return Err(format!("no positions recorded at frame {frame}"));
        }
        written.extend(
            solverlab_plot::write_snapshots(&panels, &view, &out.join(format!("{}-frame{frame}", spec.name)))
                .map_err(|e| e.to_string())?,
        );
    }
    if spec.animate {
        let frames: BTreeSet<u64> = runs.values().flat_map(|(_, f)| f.keys().copied()).collect();
        let all: Vec<Vec<Snapshot>> = frames.into_iter().map(panels_at).filter(|p| !p.is_empty()).collect();
        written
            .push(solverlab_plot::write_animation(&all, &view, 50, &out.join(&spec.name)).map_err(|e| e.to_string())?);
    }
    Ok(written)
}

/// The frames whose positions are recorded: those the snapshot figures need, and every
/// `positions_every`-th.
pub fn position_frames(file: &ExperimentFile) -> Vec<u64> {
    let mut frames = BTreeSet::new();
    if let Some(n) = file.positions_every {
        frames.extend((0..=file.frames).step_by(n.max(1) as usize));
    }
    for f in file.figures.iter().filter(|f| f.kind == FigureKind::Snapshots) {
        frames.extend(f.at.iter().copied());
        if f.animate {
            let step = (file.frames / 12).max(1);
            frames.extend((0..=file.frames).step_by(step as usize));
        }
    }
    frames.into_iter().collect()
}

/// Draws every figure of `file` from the CSVs in `dir`; returns the files written.
pub fn draw_all(file: &ExperimentFile, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    let failed = failed_runs(dir);
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    for spec in &file.figures {
        if crate::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(format!(
                "interrupted after {} figure files; each figure is written whole, so those are complete and the \
                 others are as they were",
                written.len()
            ));
        }
        if spec.kind == FigureKind::Snapshots {
            written.extend(snapshots(spec, dir, dir)?);
            continue;
        }
        if !tables.contains_key(&spec.table) {
            let mut t = Table::read(&dir.join(format!("{}.csv", spec.table)))?;
            if spec.table == "steps" {
                t.derive_steps();
            }
            tables.insert(spec.table.clone(), t);
        }
        let table = &tables[&spec.table];
        let figure = match spec.kind {
            FigureKind::Profile => profile(spec, table, file),
            _ => lines(spec, table, file, &failed),
        };
        written.extend(
            solverlab_plot::write_figure(&figure, &dir.join(&spec.name)).map_err(|e| format!("{}: {e}", spec.name))?,
        );
    }
    Ok(written)
}
