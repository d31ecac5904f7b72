//! The `[[figure]]`s of an experiment file: their kinds, looks and references, and their checks
//! against the experiment's tables ([`FigureSpec::validate`]).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{sweep_columns, ExperimentFile};
use crate::tables::{columns_of, TableName, FIGURE_TABLES};

/// Kinds of figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FigureKind {
    /// Line charts.
    #[default]
    Lines,
    /// Scene drawings.
    Snapshots,
    /// Performance profile.
    Profile,
    /// A dot plot: one row per series, the `x` column along the axis, a dot per table row,
    /// coloured by the `group` column; runs that did not end `ok` are open rings.
    Dots,
}

/// Where a figure's legend goes (`legend = "…"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LegendPlace {
    /// Once under the panels if they all show the same series, else in the emptiest corner.
    Auto,
    /// Inside each panel, upper left.
    UpperLeft,
    /// Inside each panel, upper right.
    UpperRight,
    /// Inside each panel, lower left.
    LowerLeft,
    /// Inside each panel, lower right.
    LowerRight,
    /// Outside each panel, to its right.
    Right,
    /// Once, under all panels.
    Below,
    /// No legend.
    None,
}

/// How a series or reference line is drawn (`line = "…"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LineKind {
    /// A solid line.
    Solid,
    /// A dashed line.
    Dashed,
    /// A dotted line.
    Dotted,
    /// Dots, no line.
    Points,
    /// A solid line with dots.
    LineAndPoints,
    /// Open rings, no line.
    Hollow,
}

/// The look of the series a `[figure.style]` key names.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesStyle {
    /// `"#rrggbb"` or a palette name (see [`colour`]).
    #[serde(alias = "color")]
    pub colour: Option<String>,
    /// Line style.
    pub line: Option<LineKind>,
}

/// A number, or a closed form in `x` (the grammar is in `expr.rs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Level {
    /// A constant.
    Number(f64),
    /// An expression.
    Expr(String),
}

/// One `[[figure.reference]]`: a horizontal line (`y = number`), a closed-form curve
/// (`y = "expression in x"`) or a vertical line (`x = number`), dashed grey unless styled.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// A vertical line at this x.
    pub x: Option<f64>,
    /// A horizontal line at this y, or a curve y(x).
    pub y: Option<Level>,
    /// Legend text (none when empty).
    #[serde(default)]
    pub label: String,
    /// Colour (default grey).
    #[serde(alias = "color")]
    pub colour: Option<String>,
    /// Line style (default dashed).
    pub line: Option<LineKind>,
}

/// The colours a figure file may name, besides `"#rrggbb"`: the palette's eight and grey.
pub const COLOUR_NAMES: [(&str, (u8, u8, u8)); 9] = [
    ("blue", solverlab_plot::PALETTE[0]),
    ("vermillion", solverlab_plot::PALETTE[1]),
    ("green", solverlab_plot::PALETTE[2]),
    ("purple", solverlab_plot::PALETTE[3]),
    ("orange", solverlab_plot::PALETTE[4]),
    ("sky", solverlab_plot::PALETTE[5]),
    ("black", solverlab_plot::PALETTE[6]),
    ("yellow", solverlab_plot::PALETTE[7]),
    ("grey", (120, 120, 120)),
];

/// Parses `"#rrggbb"` or one of [`COLOUR_NAMES`].
pub fn colour(text: &str) -> Result<(u8, u8, u8), String> {
    if let Some(&(_, c)) = COLOUR_NAMES.iter().find(|(n, _)| *n == text || (text == "gray" && *n == "grey")) {
        return Ok(c);
    }
    let hex = text.strip_prefix('#').filter(|h| h.len() == 6 && h.chars().all(|c| c.is_ascii_hexdigit()));
    match hex {
        Some(h) => {
            let byte = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).unwrap_or(0);
            Ok((byte(0), byte(2), byte(4)))
        }
        None => {
            let hint = solverlab_core::names::did_you_mean(text, COLOUR_NAMES.iter().map(|(n, _)| *n));
            let names = COLOUR_NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
            Err(format!("`{text}`{hint} is not a colour: give \"#rrggbb\" or one of {names}"))
        }
    }
}

/// How rows sharing a series and an `x` are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduce {
    /// The row with the largest frame (or the last row).
    Last,
    /// Mean.
    Mean,
    /// Median.
    Median,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
}

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Many.
    Many(Vec<String>),
}

impl OneOrMany {
    pub(crate) fn list(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// One `[[figure]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// File stem.
    pub name: String,
    /// Title.
    #[serde(default)]
    pub title: String,
    /// Kind (default `lines`).
    #[serde(default)]
    pub kind: FigureKind,
    /// Table: steps, runs, trace, convergence, frozen_trace, forces (default steps); see
    /// [`FigureSpec::source`].
    #[serde(default = "steps")]
    pub table: String,
    /// x column.
    #[serde(default)]
    pub x: String,
    /// y columns, one panel each.
    pub y: Option<OneOrMany>,
    /// Series columns (default `label`).
    pub series: Option<OneOrMany>,
    /// A column whose values split panels.
    pub panels: Option<String>,
    /// Logarithmic x.
    #[serde(default)]
    pub logx: bool,
    /// Logarithmic y.
    #[serde(default)]
    pub logy: bool,
    /// Aggregation.
    pub reduce: Option<Reduce>,
    /// Log-log slope in the legend.
    #[serde(default)]
    pub fit: bool,
    /// Equality filters.
    #[serde(default)]
    pub filter: BTreeMap<String, toml::Value>,
    /// Frame window `[first, last]`.
    pub frames: Option<[u64; 2]>,
    /// Snapshot frames.
    #[serde(default)]
    pub at: Vec<u64>,
    /// Snapshot animation.
    #[serde(default)]
    pub animate: bool,
    /// Profile metric column (lower is better).
    pub metric: Option<String>,
    /// Profile problem columns (default `scene` and every sweep column not starting `solver.`).
    pub problem: Option<Vec<String>>,
    /// Panels per row (default 2).
    pub columns: Option<usize>,
    /// PNG pixels per SVG pixel, 1 to 4 (default 1; the SVG is the print version).
    pub png_scale: Option<u32>,
    /// Adds an analytic series, its constants read from the first scene as its runs resolve it
    /// (`set` applied): `incline` draws Coulomb's `a = g·max(0, sin θ − μ cos θ)` against
    /// x = `scene.angle` (degrees), with `g` the norm of the scene's gravity and μ its plane's
    /// friction; `spring` draws the undamped oscillator of the `spring` scene,
    /// `x(t) = rest + (start − rest)·cos(t/√(m·α))`, with the rest length, the starting length,
    /// the compliance α and the free particle's mass `m` of its stick.
    pub analytic: Option<String>,
    /// x axis title (default: the column's name and unit).
    pub xlabel: Option<String>,
    /// y axis title of every panel (default: each column's name and unit).
    pub ylabel: Option<String>,
    /// x range `[low, high]` (default: fitted to the data).
    pub xlim: Option<[f64; 2]>,
    /// y range `[low, high]`.
    pub ylim: Option<[f64; 2]>,
    /// Legend placement (default `auto`).
    pub legend: Option<LegendPlace>,
    /// Keeps only these series, in this order (which sets their colours); `*` matches any text.
    pub select: Option<Vec<String>>,
    /// Per-series colour and line, keyed by series name (`*` matches any text).
    #[serde(default)]
    pub style: BTreeMap<String, SeriesStyle>,
    /// Reference lines and closed-form curves.
    #[serde(default)]
    pub reference: Vec<Reference>,
    /// `dots`: the column whose values colour the dots (e.g. `substeps`).
    pub group: Option<String>,
}

fn steps() -> String {
    TableName::Steps.name().into()
}

impl FigureSpec {
    /// The table the figure draws from: `None` when `table` names no table a figure may draw
    /// from ([`FIGURE_TABLES`]), which [`FigureSpec::validate`] refuses for every kind but
    /// `snapshots` (they read positions.csv and sticks.csv).
    pub fn source(&self) -> Option<TableName> {
        TableName::figure(&self.table)
    }

    /// Checks names, tables and columns against the experiment.
    pub fn validate(&self, file: &ExperimentFile) -> Result<(), String> {
        super::plain_name(&self.name).map_err(|p| format!("name: {p}: it is the figure files' stem"))?;
        if let Some(p) = &self.panels {
            if matches!(self.kind, FigureKind::Snapshots | FigureKind::Profile) {
                return Err("panels: only `lines` and `dots` figures are split into panels".into());
            }
            // A panel per value of a column that is constant within a run: a run column or a
            // sweep column (a per-frame column such as `frame` would draw a panel per row).
            let by_run: Vec<String> =
                crate::tables::RUN_COLUMNS.iter().map(|c| c.to_string()).chain(sweep_columns(file)).collect();
            if !by_run.contains(p) {
                let hint = solverlab_core::names::did_you_mean(p, by_run.iter().map(String::as_str));
                return Err(format!(
                    "panels: `{p}`{hint} is not a column that names runs; panels split the runs by one of {}",
                    by_run.join(", ")
                ));
            }
        }
        if let Some(k) = self.png_scale.filter(|k| !(1..=4).contains(k)) {
            return Err(format!("png_scale: {k} must be 1, 2, 3 or 4"));
        }
        for (key, lim, log) in [("xlim", self.xlim, self.logx), ("ylim", self.ylim, self.logy)] {
            if let Some([lo, hi]) = lim {
                if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                    return Err(format!("{key}: [{lo}, {hi}] must be finite and increasing"));
                }
                if log && lo <= 0.0 {
                    return Err(format!("{key}: [{lo}, {hi}] must be positive on a log axis"));
                }
            }
        }
        for (name, look) in &self.style {
            if let Some(c) = &look.colour {
                colour(c).map_err(|e| format!("style.\"{name}\".colour: {e}"))?;
            }
        }
        for (k, r) in self.reference.iter().enumerate() {
            let at = format!("reference[{k}]");
            match (&r.x, &r.y) {
                (Some(x), None) if x.is_finite() => {}
                (None, Some(Level::Number(y))) if y.is_finite() => {}
                (None, Some(Level::Expr(e))) => {
                    crate::expr::Expr::parse(e).map_err(|m| format!("{at}.y: {m}"))?;
                }
                (Some(_), Some(_)) | (None, None) => {
                    return Err(format!(
                        "{at}: give either x = number (a vertical line) or y = number or \"expression in x\""
                    ));
                }
                _ => return Err(format!("{at}: the position must be a finite number")),
            }
            if let Some(c) = &r.colour {
                colour(c).map_err(|e| format!("{at}.colour: {e}"))?;
            }
        }
        if self.select.as_ref().is_some_and(Vec::is_empty) {
            return Err("select: name at least one series (or leave select out)".into());
        }
        if self.group.is_some() && self.kind != FigureKind::Dots {
            return Err("group: only a `dots` figure colours by a group column".into());
        }
        match self.kind {
            FigureKind::Snapshots => {
                if self.at.is_empty() {
                    return Err("at: a snapshot figure needs frames, e.g. at = [0, 60]".into());
                }
                if let Some(f) = self.at.iter().find(|&&f| f > file.frames) {
                    return Err(format!("at: frame {f} is past the last frame {}", file.frames));
                }
                return Ok(());
            }
            FigureKind::Profile => {
                let metric = self.metric.as_deref().ok_or("metric: a profile needs a metric column")?;
                let cols = columns_of(self.source(), &sweep_columns(file));
                if self.source().is_none() || !cols.iter().any(|c| c == metric) {
                    let hint = solverlab_core::names::did_you_mean(metric, cols.iter().map(String::as_str));
                    return Err(format!("metric: no column `{metric}` in table `{}`{hint}", self.table));
                }
                return Ok(());
            }
            FigureKind::Lines | FigureKind::Dots => {}
        }
        if self.source().is_none() {
            let names = FIGURE_TABLES.map(TableName::name);
            let hint = solverlab_core::names::did_you_mean(&self.table, names.iter().copied());
            return Err(format!("table: `{}`{hint} is not one of {}", self.table, names.join(", ")));
        }
        let cols = columns_of(self.source(), &sweep_columns(file));
        let has = |c: &str| cols.iter().any(|x| x == c);
        let hint = |c: &str| solverlab_core::names::did_you_mean(c, cols.iter().map(String::as_str));
        if !has(&self.x) {
            return Err(format!(
                "x: no column `{}`{} in table `{}` (columns: {})",
                self.x,
                hint(&self.x),
                self.table,
                cols.join(", ")
            ));
        }
        let ys = self.y.as_ref().map(OneOrMany::list).unwrap_or_default();
        if self.kind == FigureKind::Dots && !ys.is_empty() {
            return Err(
                "y: a `dots` figure draws its x column along the axis and one row per series; leave y out".into()
            );
        }
        if ys.is_empty() && self.kind != FigureKind::Dots {
            return Err("y: at least one column is needed".into());
        }
        if let Some(a) = &self.analytic {
            let known = (a == "spring" && self.x == "time") || (a == "incline" && self.x == "scene.angle");
            if !known {
                return Err(
                    "analytic: \"spring\" against x = \"time\" and \"incline\" against x = \"scene.angle\" are known"
                        .into(),
                );
            }
        }
        for c in ys
            .iter()
            .chain(self.series.as_ref().map(OneOrMany::list).unwrap_or_default().iter())
            .chain(self.filter.keys())
            .chain(self.group.iter())
            .chain(self.panels.iter())
        {
            if !has(c) {
                return Err(format!(
                    "no column `{c}`{} in table `{}` (columns: {})",
                    hint(c),
                    self.table,
                    cols.join(", ")
                ));
            }
        }
        Ok(())
    }
}
