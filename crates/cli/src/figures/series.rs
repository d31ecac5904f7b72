//! The rows a figure draws and the series they make: the tables read from the CSVs (with the
//! derived columns of `steps`), the filters, each row's series name, the order, selection and
//! look of the series, and, for the report, the runs behind each series.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use solverlab_plot::LineStyle;

use super::line_style;
use crate::spec::{colour, FigureKind, FigureSpec, OneOrMany};
use crate::tables::RunStatus;
use crate::tables::{TableName, DERIVED_STEP_COLUMNS};

/// A CSV table with derived columns.
pub(super) struct Table {
    pub(super) columns: Vec<String>,
    pub(super) rows: Vec<Vec<String>>,
}

impl Table {
    pub(super) fn read(path: &Path) -> Result<Table, String> {
        let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let columns: Vec<String> = r.headers().map_err(|e| e.to_string())?.iter().map(str::to_string).collect();
        let rows = r
            .records()
            .map(|x| x.map(|x| x.iter().map(str::to_string).collect()))
            .collect::<Result<Vec<Vec<String>>, _>>()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Table { columns, rows })
    }

    pub(super) fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    pub(super) fn num(&self, row: &[String], col: usize) -> f64 {
        row[col].parse().unwrap_or(f64::NAN)
    }

    /// Adds the derived columns of the steps table.
    pub(super) fn derive_steps(&mut self) {
        let Some(mut derive) = Derive::new(&self.columns) else { return };
        self.columns.extend(DERIVED_STEP_COLUMNS.map(String::from));
        for row in &mut self.rows {
            let d = derive.row(row);
            row.extend(d.iter().map(|x| format!("{x:?}")));
        }
    }
}

/// The derived columns of the steps table ([`DERIVED_STEP_COLUMNS`]), one row at a time: each
/// run's first row gives its `E₀` and starting position.
struct Derive {
    at: [usize; 7],
    first: BTreeMap<String, (f64, f64)>,
}

impl Derive {
    /// `None` unless `columns` are the steps table's.
    fn new(columns: &[String]) -> Option<Derive> {
        let col = |name: &str| columns.iter().position(|c| c == name);
        let names =
            ["kinetic_energy", "potential_energy", "run", "solve_seconds", "integrate_seconds", "com_x", "time"];
        let mut at = [0; 7];
        for (k, name) in names.iter().enumerate() {
            at[k] = col(name)?;
        }
        Some(Derive { at, first: BTreeMap::new() })
    }

    fn row(&mut self, r: &[String]) -> [f64; 6] {
        let num = |k: usize| r[self.at[k]].parse::<f64>().unwrap_or(f64::NAN);
        let e = num(0) + num(1);
        let x = num(5);
        let (e0, x0) = *self.first.entry(r[self.at[2]].clone()).or_insert((e, x));
        let (solve, integrate) = (num(3), num(4));
        let time = num(6);
        let slide = if time > 0.0 { 2.0 * (x - x0) / (time * time) } else { 0.0 };
        [e, e / e0, e - e0, (solve + integrate) * 1e3, solve * 1e3, slide]
    }
}

pub(super) fn keep(table: &Table, spec: &FigureSpec, row: &[String]) -> bool {
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

/// The legend name of `row`'s series: the first series column's value, then `column = value`
/// for each further one (a sweep column a series does not have, empty, stays out of its name).
pub(super) fn series_name(row: &[String], sc: &[usize], series_cols: &[String]) -> String {
    sc.iter()
        .enumerate()
        .filter(|&(k, &c)| k == 0 || !row[c].is_empty())
        .map(|(k, &c)| if k == 0 { row[c].clone() } else { format!("{} = {}", series_cols[k], row[c]) })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each run's status from `runs.csv` in `dir`, for the runs that did not end `ok` (empty when
/// there is no runs.csv).
pub(super) fn failed_runs(dir: &Path) -> BTreeMap<usize, String> {
    let Ok(runs) = Table::read(&dir.join(TableName::Runs.file())) else { return BTreeMap::new() };
    let (Some(rc), Some(sc)) = (runs.col("run"), runs.col("status")) else { return BTreeMap::new() };
    runs.rows
        .iter()
        .filter(|r| r[sc] != RunStatus::Ok.as_str())
        .filter_map(|r| r[rc].parse().ok().map(|run| (run, r[sc].clone())))
        .collect()
}

/// A series' legend name, marked with the status of any of its runs that did not end `ok`
/// (`spring [torn]`): a torn or diverged run's line is drawn, and says so.
pub(super) fn marked(name: String, runs: &BTreeSet<usize>, failed: &BTreeMap<usize, String>) -> String {
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

/// The series of figure `spec` drawn from the CSVs in `dir`, in the order and colours the figure
/// gives them (see [`figure_series`]; for a `dots` figure, its rows). Snapshot figures have no
/// series. The table is read one row at a time: the report calls this on tables of any size.
pub fn series_runs(spec: &FigureSpec, dir: &Path) -> Result<Vec<SeriesRuns>, String> {
    if spec.kind == FigureKind::Snapshots {
        return Ok(Vec::new());
    }
    let table = spec.source().ok_or_else(|| format!("figure {}: no table `{}`", spec.name, spec.table))?;
    let path = dir.join(table.file());
    let bad = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut reader = csv::Reader::from_path(&path).map_err(|e| bad(&e))?;
    let mut head =
        Table { columns: reader.headers().map_err(|e| bad(&e))?.iter().map(String::from).collect(), rows: Vec::new() };
    let mut derive = if table == TableName::Steps { Derive::new(&head.columns) } else { None };
    if derive.is_some() {
        head.columns.extend(DERIVED_STEP_COLUMNS.map(String::from));
    }
    let series_cols = series_columns(spec);
    let sc: Vec<usize> = series_cols.iter().filter_map(|c| head.col(c)).collect();
    let (Some(rc), false) = (head.col("run"), sc.is_empty()) else { return Ok(Vec::new()) };
    // Every series name of the kept rows in order of first appearance, with its runs.
    let mut all: Vec<String> = Vec::new();
    let mut runs_of: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let mut record = csv::StringRecord::new();
    let mut row: Vec<String> = Vec::new();
    let mut read: u64 = 0;
    while reader.read_record(&mut record).map_err(|e| bad(&e))? {
        read += 1;
        if read.is_multiple_of(65_536) && crate::interrupt::interrupted() {
            return Err(bad(&"interrupted while reading"));
        }
        row.clear();
        row.extend(record.iter().map(String::from));
        if let Some(d) = derive.as_mut() {
            let values = d.row(&row);
            row.extend(values.iter().map(|x| format!("{x:?}")));
        }
        if !keep(&head, spec, &row) {
            continue;
        }
        let name = series_name(&row, &sc, &series_cols);
        let run = row[rc].parse().unwrap_or(usize::MAX);
        match runs_of.get_mut(&name) {
            Some(set) => {
                set.insert(run);
            }
            None => {
                all.push(name.clone());
                runs_of.insert(name, BTreeSet::from([run]));
            }
        }
    }
    let names = choose_series(spec, all)?;
    let failed = failed_runs(dir);
    Ok(names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let runs = runs_of.remove(name.as_str()).unwrap_or_default();
            let colour = look(spec, name).0.unwrap_or(solverlab_plot::PALETTE[index % solverlab_plot::PALETTE.len()]);
            SeriesRuns { name: marked(name.clone(), &runs, &failed), colour, runs }
        })
        .collect())
}

/// The columns that name a figure's series (default `label`; a profile always uses `label`).
pub(super) fn series_columns(spec: &FigureSpec) -> Vec<String> {
    match spec.kind {
        FigureKind::Profile => vec!["label".into()],
        _ => spec.series.as_ref().map(OneOrMany::list).unwrap_or_else(|| vec!["label".into()]),
    }
}

/// Whether `name` matches `pattern`, in which `*` stands for any text.
pub(super) fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else { return pattern == name };
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The series of a figure, in the order they are numbered and coloured: every series name of
/// the rows the figure keeps, in order of first appearance, or, with `select`, the selected
/// ones in the order of its patterns. A `select` pattern or a `style` key that names no series
/// is an error listing the names.
pub(super) fn figure_series(spec: &FigureSpec, table: &Table) -> Result<Vec<String>, String> {
    let series_cols = series_columns(spec);
    let sc: Vec<usize> = series_cols.iter().filter_map(|c| table.col(c)).collect();
    let mut all: Vec<String> = Vec::new();
    for row in table.rows.iter().filter(|r| keep(table, spec, r)) {
        let name = series_name(row, &sc, &series_cols);
        if !all.contains(&name) {
            all.push(name);
        }
    }
    choose_series(spec, all)
}

/// [`figure_series`] from the series names `all` of the kept rows, in order of first appearance.
fn choose_series(spec: &FigureSpec, all: Vec<String>) -> Result<Vec<String>, String> {
    let unknown = |key: &str, pattern: &str| {
        let hint = solverlab_core::names::did_you_mean(pattern, all.iter().map(String::as_str));
        format!("{key}: `{pattern}`{hint} names no series of the figure (series: {})", all.join(", "))
    };
    for pattern in spec.style.keys() {
        if !all.iter().any(|n| glob(pattern, n)) {
            return Err(unknown("style", pattern));
        }
    }
    let Some(select) = &spec.select else { return Ok(all) };
    let mut chosen: Vec<String> = Vec::new();
    for pattern in select {
        let matches: Vec<&String> = all.iter().filter(|n| glob(pattern, n)).collect();
        if matches.is_empty() {
            return Err(unknown("select", pattern));
        }
        for name in matches {
            if !chosen.contains(name) {
                chosen.push(name.clone());
            }
        }
    }
    Ok(chosen)
}

/// The colour and line `style` gives series `name`: the key equal to it, else the first
/// pattern (in key order) that matches it.
pub(super) fn look(spec: &FigureSpec, name: &str) -> (Option<(u8, u8, u8)>, Option<LineStyle>) {
    let found = spec.style.get(name).or_else(|| spec.style.iter().find(|(k, _)| glob(k, name)).map(|(_, v)| v));
    match found {
        Some(look) => (look.colour.as_deref().and_then(|c| colour(c).ok()), look.line.map(line_style)),
        None => (None, None),
    }
}
