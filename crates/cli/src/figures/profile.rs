//! The performance profile figure (Dolan and Moré, 2002): for each solver, the share of the
//! problems on which its metric is within a factor τ of the best solver's.

use std::collections::BTreeMap;

use solverlab_plot::{Axis, Figure, LineStyle, Panel, Series};

use super::{keep, label, legend, Table};
use crate::spec::{ExperimentFile, FigureSpec};

/// Dolan-Moré: `ρ_s(τ)` = share of problems on which solver s is within a factor τ of the best.
pub(super) fn profile(spec: &FigureSpec, table: &Table, file: &ExperimentFile) -> Result<Figure, String> {
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
        let ok = status.is_none_or(|c| row[c] == crate::tables::RunStatus::Ok.as_str());
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
            Series { label: s.clone(), points, style: LineStyle::Line, ..Series::default() }
        })
        .collect();
    let panel = Panel {
        title: format!(
            "performance profile of {} over {} problems",
            label(spec.metric.as_deref().unwrap_or("")),
            values.len()
        ),
        x: Axis {
            label: spec.xlabel.clone().unwrap_or_else(|| "τ (within a factor τ of the best)".into()),
            log: true,
            range: Some((1.0, tau_max)),
            ..Axis::default()
        },
        y: Axis {
            label: spec.ylabel.clone().unwrap_or_else(|| "ρ(τ): share of problems".into()),
            log: false,
            range: Some((0.0, 1.05)),
            ..Axis::default()
        },
        series,
    };
    Ok(Figure {
        title: spec.title.clone(),
        panels: vec![panel],
        columns: 1,
        panel_width: 800,
        png_scale: spec.png_scale.unwrap_or(solverlab_plot::PNG_SCALE),
        legend: legend(spec.legend),
        ..Figure::default()
    })
}
