//! What a `simulate` folder shows without an experiment file: its overview figure
//! (`overview.svg`/`.png`) and its one-paragraph summary.
//!
//! The overview has one panel per question a first look asks, all against time in seconds:
//! the constraint violation (m, log axis: largest and RMS), the energy (J: kinetic, potential
//! and their sum), the iterations per frame (frames that ended unconverged marked by dots), and,
//! when the scene has them, the drift of stacked bodies with the deepest penetration (m), and the
//! support force (N).

use std::path::{Path, PathBuf};

use solverlab_plot::{Axis, Figure, LineStyle, Panel, Series};

use crate::results::Meta;
use crate::tables::RunStatus;
use crate::tables::TableName;

/// The stem of the overview figure in a `simulate` folder.
pub const OVERVIEW: &str = "overview";

/// `true` when `dir` holds one `simulate` run (meta.json and steps.csv, no experiment.toml).
pub fn is_single(dir: &Path) -> bool {
    dir.join("meta.json").exists()
        && dir.join(TableName::Steps.file()).exists()
        && !dir.join("experiment.toml").exists()
}

/// A simulate folder's steps.csv as named columns of numbers.
struct Steps {
    columns: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl Steps {
    fn read(dir: &Path) -> Result<Steps, String> {
        let path = dir.join(TableName::Steps.file());
        let mut r = csv::Reader::from_path(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let columns: Vec<String> =
            r.headers().map_err(|e| format!("{}: {e}", path.display()))?.iter().map(String::from).collect();
        let mut rows = Vec::new();
        for record in r.records() {
            let record = record.map_err(|e| format!("{}: {e}", path.display()))?;
            rows.push(record.iter().map(|v| v.parse().unwrap_or(f64::NAN)).collect());
        }
        Ok(Steps { columns, rows })
    }

    /// The column `name` (empty when the table does not have it).
    fn col(&self, name: &str) -> Vec<f64> {
        match self.columns.iter().position(|c| c == name) {
            Some(k) => self.rows.iter().map(|r| r[k]).collect(),
            None => Vec::new(),
        }
    }

    /// `(time, name)` pairs; `skip_first` leaves out frame 0 (the initial state).
    fn against_time(&self, name: &str, skip_first: bool) -> Vec<(f64, f64)> {
        let t = self.col("time");
        let y = self.col(name);
        t.into_iter().zip(y).skip(usize::from(skip_first)).collect()
    }
}

fn series(label: &str, points: Vec<(f64, f64)>, style: LineStyle) -> Series {
    Series { label: label.into(), points, style, ..Series::default() }
}

fn axis(label: &str, log: bool) -> Axis {
    Axis { label: label.into(), log, range: None, ..Axis::default() }
}

/// What a run's steps.csv and meta.json say in one line each: the run's name and the figures.
pub struct Overview {
    /// `scene · solver`.
    pub title: String,
    /// Frames recorded after frame 0.
    pub frames: usize,
    /// Frames whose solve stopped at its iteration cap.
    pub unconverged: usize,
    /// Largest common violation over the run (m): the `violation` column, penetration included.
    pub peak_violation: f64,
    /// The run's status in meta.json.
    pub status: RunStatus,
    /// The first frame in which a body was out of its place (steps.csv's `in_place` 0), if
    /// any: a pile that fell reads `ok` as a run and says so here.
    pub left_place: Option<u64>,
}

/// Reads the summary of the one run in `dir`.
pub fn overview(dir: &Path) -> Result<Overview, String> {
    let meta = Meta::read(dir)?;
    let run = meta.runs.first().cloned().unwrap_or_default();
    let text = |k: &str| run[k].as_str().unwrap_or_default().to_string();
    let status = RunStatus::parse(&text("status")).ok_or_else(|| {
        let words: Vec<&str> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
        format!(
            "{}: runs[0].status: `{}` is not a run status ({})",
            dir.join("meta.json").display(),
            text("status"),
            words.join(", ")
        )
    })?;
    // Read one row at a time: steps.csv has a row per frame, however many.
    let path = dir.join(TableName::Steps.file());
    let bad = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut reader = csv::Reader::from_path(&path).map_err(|e| bad(&e))?;
    let headers = reader.headers().map_err(|e| bad(&e))?.clone();
    let col = |name: &str| headers.iter().position(|c| c == name);
    // The common violation (penetration included: a contact-only scene has no equality rows,
    // and its `max_violation` is 0 whatever it does).
    let (converged, violation) = (col("converged"), col("violation").or_else(|| col("max_violation")));
    let (frame, in_place) = (col("frame"), col("in_place"));
    let (mut rows, mut unconverged, mut peak) = (0usize, 0usize, 0.0f64);
    let mut left_place = None;
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(|e| bad(&e))? {
        let value = |k: Option<usize>| k.and_then(|k| record.get(k)).and_then(|v| v.parse::<f64>().ok());
        if rows > 0 && value(converged) == Some(0.0) {
            unconverged += 1;
        }
        peak = value(violation).filter(|v| v.is_finite()).map_or(peak, |v| peak.max(v));
        if left_place.is_none() && value(in_place) == Some(0.0) {
            left_place = Some(value(frame).map_or(rows as u64, |f| f as u64));
        }
        rows += 1;
    }
    Ok(Overview {
        title: format!("{} · {}", text("scene"), text("label")),
        frames: rows.saturating_sub(1),
        unconverged,
        peak_violation: peak,
        status,
        left_place,
    })
}

/// Draws `overview.svg` and `overview.png` in the simulate folder `dir`; returns the files.
pub fn draw(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let summary = overview(dir)?;
    let steps = Steps::read(dir)?;
    let any = |name: &str| steps.col(name).iter().any(|v| v.is_finite() && *v != 0.0);
    let mut panels = vec![
        Panel {
            title: "Constraint violation".into(),
            x: axis("time (s)", false),
            y: axis("violation (m)", true),
            series: vec![
                series("largest", steps.against_time("max_violation", true), LineStyle::Line),
                series("rms", steps.against_time("rms_violation", true), LineStyle::Dashed),
            ],
        },
        Panel {
            title: "Energy".into(),
            x: axis("time (s)", false),
            y: axis("energy (J)", false),
            series: vec![
                series("kinetic", steps.against_time("kinetic_energy", false), LineStyle::Line),
                series("potential", steps.against_time("potential_energy", false), LineStyle::Line),
                series(
                    "total",
                    steps
                        .against_time("kinetic_energy", false)
                        .into_iter()
                        .zip(steps.col("potential_energy"))
                        .map(|((t, k), p)| (t, k + p))
                        .collect(),
                    LineStyle::Dashed,
                ),
            ],
        },
    ];
    let iterations = steps.against_time("iterations", true);
    let unconverged: Vec<(f64, f64)> = iterations
        .iter()
        .zip(steps.col("converged").into_iter().skip(1))
        .filter(|(_, c)| *c == 0.0)
        .map(|(p, _)| *p)
        .collect();
    panels.push(Panel {
        title: format!("Iterations per frame ({} of {} unconverged)", summary.unconverged, summary.frames),
        x: axis("time (s)", false),
        y: axis("iterations", false),
        series: vec![
            series("iterations", iterations, LineStyle::Line),
            series("unconverged", unconverged, LineStyle::Points),
        ],
    });
    if any("top_drift") || any("max_penetration") {
        panels.push(Panel {
            title: "Drift and penetration".into(),
            x: axis("time (s)", false),
            y: axis("distance (m)", false),
            series: vec![
                series("top drift", steps.against_time("top_drift", false), LineStyle::Line),
                series("body drift", steps.against_time("body_drift", false), LineStyle::Line),
                series("deepest penetration", steps.against_time("max_penetration", false), LineStyle::Dashed),
            ],
        });
    }
    if any("support_force") {
        panels.push(Panel {
            title: "Support force".into(),
            x: axis("time (s)", false),
            y: axis("force (N)", false),
            series: vec![series("", steps.against_time("support_force", true), LineStyle::Line)],
        });
    }
    let status = match summary.status {
        RunStatus::Ok => String::new(),
        other => format!(" [{other}]"),
    };
    let figure = Figure { title: format!("{}{status}", summary.title), panels, ..Figure::default() };
    solverlab_plot::write_figure(&figure, &dir.join(OVERVIEW)).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The lines printed at the end of `simulate`: frames, unconverged frames, peak violation,
/// status, the first frame a body was out of its place (if any) and where the files are.
pub fn summary_text(dir: &Path) -> Result<String, String> {
    let o = overview(dir)?;
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| !n.starts_with('.') && !n.ends_with(".tmp"))
        .collect();
    files.sort();
    let place = o.left_place.map_or(String::new(), |f| format!(", a body out of its place from frame {f}"));
    Ok(format!(
        "{}: {} frames, {} unconverged, peak violation {:.3e} m, status {}{place}\nfiles in {}: {}",
        o.title,
        o.frames,
        o.unconverged,
        o.peak_violation,
        o.status,
        dir.display(),
        files.join(", ")
    ))
}
