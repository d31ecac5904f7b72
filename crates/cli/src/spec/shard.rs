//! The split of an experiment's runs into shards for a cluster (`run --shard I/N`): balanced
//! by estimated cost, the same split in every process.

use super::{Experiment, RunConfig};

/// Parses `--shard I/N`: the I-th (1-based) of N shards.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let form = || format!("{s}: give I/N, the I-th of N shards, with 1 ≤ I ≤ N (for example 2/8)");
    let (i, n) = s.split_once('/').ok_or_else(form)?;
    let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| form())?, n.trim().parse().map_err(|_| form())?);
    if n == 0 || i == 0 || i > n {
        return Err(form());
    }
    Ok((i, n))
}

/// A run's estimated cost, for balancing shards: frames × substeps × (particles, plus
/// constraints, plus 6 per rigid body, plus 1). Iteration counts and contact counts are left out, so it balances
/// sweeps over size, frames and substeps well and sweeps over iterations only roughly.
fn cost(run: &RunConfig) -> u128 {
    let size = run.scene.particles.len() + run.scene.constraints.len() + 6 * run.scene.rigid.len() + 1;
    u128::from(run.frames) * u128::from(run.substeps) * size as u128
}

/// The runs of shard `i` of `n` (1-based), ascending. Shards are disjoint and cover every run;
/// they are balanced by estimated cost ([`cost`]): runs are dealt, most expensive first, to the
/// shard with the least cost so far (ties to the lower index), so every process computes the
/// same split.
pub fn shard_runs(exp: &Experiment, i: usize, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..exp.runs.len()).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(cost(&exp.runs[k])), k));
    let mut load = vec![0u128; n];
    let mut mine = Vec::new();
    for k in order {
        let s = (0..n).min_by_key(|&s| (load[s], s)).expect("n ≥ 1");
        load[s] += cost(&exp.runs[k]);
        if s + 1 == i {
            mine.push(k);
        }
    }
    mine.sort_unstable();
    mine
}
