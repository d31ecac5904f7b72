//! Snapshot figures: the scene drawn at chosen frames from positions.csv, one panel per run,
//! and the frames whose positions a run records for them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use solverlab_plot::{Snapshot, View};

use super::{keep, Table};
use crate::spec::{ExperimentFile, FigureKind, FigureSpec};
use crate::tables::TableName;

pub(super) fn snapshots(spec: &FigureSpec, dir: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let pos = Table::read(&dir.join(TableName::Positions.file()))?;
    let sticks = Table::read(&dir.join(TableName::Sticks.file()))?;
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
