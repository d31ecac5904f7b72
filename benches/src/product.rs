//! The product's speed: a solve timed as `solverlab simulate` times it, next to the kernel rows
//! of the performance experiment, so that the two cannot drift apart unseen.
//!
//! [`measure`] runs the calling executable again as a child process with `--simulate SOLVER OUT`
//! and `RAYON_NUM_THREADS` set, and the child calls [`simulate`]: the command line's own
//! `simulate` ([`solverlab_cli::simulate`]), which parses the solver's TOML, runs the frames
//! through the runner and `solverlab_core::sim` on the main thread with the global thread pool,
//! and writes `steps.csv`. The parent reads the `solve_seconds` column (the wall time inside
//! `Solver::solve`, as the simulation measures it) and the iterations of each frame.

use std::path::{Path, PathBuf};

use solverlab_cli::{CliError, Simulate};
use solverlab_solvers::Registry;

/// Frames a product run simulates: 12 (the 256² cloth at 10 sweeps a frame tears in frame 16).
pub const FRAMES: u64 = 12;

/// Frames left out at the start of a run's mean: 3 (the first frames also pay for first
/// touches of memory and the first waking of the pool's threads).
pub const SKIP: u64 = 3;

/// The child's part: `simulate` of `solver` (a TOML inline table or a preset name) on the builtin
/// scene `scene` with `sets`, `FRAMES` frames, no positions and no figures, into `out`.
pub fn simulate(scene: &str, sets: &[String], solver: &str, out: &Path) -> Result<(), String> {
    // As the `solverlab` command does first: this thread works in the pool.
    solverlab_cli::join_thread_pool();
    let args = Simulate {
        scene: scene.into(),
        sets: sets.to_vec(),
        solver: solver.into(),
        frames: FRAMES,
        dt: None,
        substeps: None,
        out: out.to_path_buf(),
        positions_every: 0,
        violation: false,
    };
    match solverlab_cli::simulate(&Registry::builtin(), &args) {
        Ok(_) => Ok(()),
        Err(CliError::Diverged(e)) => Err(format!("the product run diverged or tore: {e}")),
        Err(CliError::Input(e) | CliError::Io(e) | CliError::Interrupted(e)) => Err(e),
    }
}

/// What a product run measured: the mean over frames `SKIP + 1..=FRAMES` of `solve_seconds`
/// (s) and of the iterations.
#[derive(Clone, Copy, Debug)]
pub struct Product {
    /// Mean wall time inside `Solver::solve` per frame (s).
    pub solve_seconds: f64,
    /// Mean iterations per frame.
    pub iterations: f64,
}

/// Runs `solver` through `simulate` in a child process of this executable (which must hand
/// `--simulate SOLVER OUT` to [`simulate`]) on `threads` threads, in a folder under `dir`, and
/// reads its `steps.csv`.
pub fn measure(solver: &str, threads: usize, dir: &Path) -> Result<Product, String> {
    let out: PathBuf = dir.join(format!("run-{threads}"));
    run_child(&["--simulate", solver], &out, threads).map_err(|e| format!("the product run of {solver}: {e}"))?;
    let means = step_means(&out, &["solve_seconds", "iterations"], SKIP);
    let _ = std::fs::remove_dir_all(&out);
    let means = means?;
    Ok(Product { solve_seconds: means[0], iterations: means[1] })
}

/// Runs this executable again with `args` and then `out`, on a global pool of `threads`
/// (`RAYON_NUM_THREADS`), into the folder `out` (emptied first).
pub fn run_child(args: &[&str], out: &Path, threads: usize) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("this executable: {e}"))?;
    let _ = std::fs::remove_dir_all(out);
    let o = std::process::Command::new(exe)
        .args(args)
        .arg(out)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .map_err(|e| e.to_string())?;
    match o.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&o.stderr).into_owned()),
    }
}

/// The means of `columns` of `dir/steps.csv` over the frames after the first `skip`.
pub fn step_means(dir: &Path, columns: &[&str], skip: u64) -> Result<Vec<f64>, String> {
    let path = dir.join("steps.csv");
    let bad = |what: String| format!("{}: {what}", path.display());
    let mut reader = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
    let headers = reader.headers().map_err(|e| bad(e.to_string()))?.clone();
    let column = |name: &str| headers.iter().position(|c| c == name).ok_or_else(|| bad(format!("no `{name}`")));
    let frame = column("frame")?;
    let wanted = columns.iter().map(|c| column(c)).collect::<Result<Vec<_>, _>>()?;
    let (mut sums, mut count) = (vec![0.0; wanted.len()], 0usize);
    for record in reader.records() {
        let record = record.map_err(|e| bad(e.to_string()))?;
        let number = |k: usize| record[k].parse::<f64>().map_err(|_| bad(format!("`{}` is not a number", &record[k])));
        if number(frame)? > skip as f64 {
            for (sum, &k) in sums.iter_mut().zip(&wanted) {
                *sum += number(k)?;
            }
            count += 1;
        }
    }
    match count {
        0 => Err(bad("no frames after the warm-up".into())),
        n => Ok(sums.into_iter().map(|s| s / n as f64).collect()),
    }
}
