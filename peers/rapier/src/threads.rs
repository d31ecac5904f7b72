//! Two threads against one, for solverlab and for Rapier (built with its `parallel` feature):
//! what a second core buys each engine on the same scene.
//!
//! For every scene each round runs, one after the other, solverlab's `tgs-soft` (its coloured
//! order, whose large colours go to all threads) and Rapier in its `matched` mode, each once in
//! a pool of one thread and once in a pool of two (`rayon::ThreadPool::install`: solverlab's
//! passes and Rapier's staged solver both take the size of the pool they run in). A run's time
//! is its mean wall time per frame, measured as [`crate::bench`] measures it; the median over
//! the rounds is kept, and a speedup is the median over the rounds of each round's one-thread
//! time over its two-thread time for the same engine (the two runs of a round back to back, so
//! that a slower spell of the shared host weighs on both).
//!
//! Rapier 0.36's staged solver colours the contacts and the joints and hands each large
//! colour's SIMD batches to persistent workers between spin barriers; the joints of colours
//! too small to share, and joints without a SIMD form, go to its first worker alone
//! (`staged_island_solver`). The 10 × 10 joint grid's colours are all small; the 100 × 100
//! grid's (Box3D's `joint_grid`) are large, in both engines.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::bench::{bench_scene_frames, fastest_median, run_rapier, run_solverlab, BenchScene, SCENES};
use crate::steps::{line, num, write_files};
use crate::world::Mode;

/// The scenes the threads table runs by default: the two (the pyramid of base 90 and
/// the joint grid, at the benchmark's 10 × 10 and at Box3D's 100 × 100), and the pyramid of
/// base 20 between them.
pub const DEFAULT_KEYS: [&str; 4] = ["pyramid-20", "pyramid-90", "joint-grid", "joint-grid-100"];

/// An engine of the threads table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadEngine {
    /// solverlab's `tgs-soft` preset.
    Solverlab,
    /// Rapier in its `matched` mode.
    Rapier,
}

impl ThreadEngine {
    /// The engines in the order each round runs them.
    pub const ALL: [ThreadEngine; 2] = [ThreadEngine::Solverlab, ThreadEngine::Rapier];

    /// `solverlab tgs-soft` or `rapier matched`.
    pub fn label(self) -> &'static str {
        match self {
            ThreadEngine::Solverlab => "solverlab tgs-soft",
            ThreadEngine::Rapier => "rapier matched",
        }
    }
}

/// One scene's times: per engine and thread count (1, 2), the ms per frame of every round.
pub struct ThreadResult {
    /// The scene.
    pub bench: BenchScene,
    /// Rigid bodies.
    pub bodies: usize,
    /// Joints.
    pub joints: usize,
    /// Frames per run.
    pub frames: u64,
    /// `(engine, threads, ms per frame of each round)`.
    pub times: Vec<(ThreadEngine, usize, Vec<f64>)>,
}

impl ThreadResult {
    fn rounds(&self, e: ThreadEngine, threads: usize) -> &[f64] {
        &self.times.iter().find(|t| t.0 == e && t.1 == threads).expect("every engine runs").2
    }

    fn median(&self, e: ThreadEngine, threads: usize) -> f64 {
        fastest_median(self.rounds(e, threads)).1
    }

    /// The median over the rounds of each round's one-thread time over its two-thread time.
    fn speedup(&self, e: ThreadEngine) -> f64 {
        let paired: Vec<f64> = self.rounds(e, 1).iter().zip(self.rounds(e, 2)).map(|(a, b)| a / b).collect();
        fastest_median(&paired).1
    }
}

/// The thread counts compared.
pub const THREADS: [usize; 2] = [1, 2];

/// Runs one scene: `rounds` rounds, each engine on one thread then on two.
pub fn threads_scene(b: &BenchScene, rounds: usize, frames_scale: f64) -> Result<ThreadResult, String> {
    let (scene, frames) = bench_scene_frames(b, frames_scale)?;
    let pools: Vec<rayon::ThreadPool> = THREADS
        .iter()
        .map(|&n| rayon::ThreadPoolBuilder::new().num_threads(n).build().map_err(|e| format!("a pool of {n}: {e}")))
        .collect::<Result<_, _>>()?;
    let mut times: Vec<(ThreadEngine, usize, Vec<f64>)> =
        ThreadEngine::ALL.iter().flat_map(|&e| THREADS.iter().map(move |&n| (e, n, Vec::new()))).collect();
    for round in 0..rounds {
        for (engine, threads, t) in times.iter_mut() {
            let pool = &pools[THREADS.iter().position(|n| n == threads).expect("a listed count")];
            let s = pool.install(|| match engine {
                ThreadEngine::Solverlab => run_solverlab(&scene, "tgs-soft", frames, None),
                ThreadEngine::Rapier => run_rapier(&scene, Mode::Matched, frames, false),
            })?;
            if s.frames < frames {
                return Err(format!(
                    "{} {}: {} on {threads} threads stopped: {}",
                    b.key,
                    engine.label(),
                    s.frames,
                    s.status
                ));
            }
            eprintln!(
                "  {} round {}: {:<19} {} thread(s) {:>10.4} ms/frame over {} frames",
                b.key,
                round + 1,
                engine.label(),
                threads,
                s.ms_per_frame,
                s.frames
            );
            t.push(s.ms_per_frame);
        }
    }
    Ok(ThreadResult { bench: *b, bodies: scene.rigid.len(), joints: scene.joints.len(), frames, times })
}

/// Columns of `threads.csv`: one row per scene, engine, thread count and round (ms per frame).
pub const THREAD_COLUMNS: [&str; 5] = ["scene", "engine", "threads", "round", "ms_per_frame"];

/// `threads.csv` and the README's table: per scene and engine, the median ms per frame on one
/// and two threads and the speedup.
pub fn thread_tables(results: &[ThreadResult]) -> (String, String) {
    let mut csv = line(&THREAD_COLUMNS.map(String::from));
    let mut md = String::from(
        "| scene | bodies | joints | frames | solverlab tgs-soft, 1 thread | 2 threads | speedup | Rapier matched, 1 \
         thread | 2 threads | speedup |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in results {
        for (e, n, ts) in &r.times {
            for (k, t) in ts.iter().enumerate() {
                csv += &line(&[r.bench.key.into(), e.label().into(), n.to_string(), (k + 1).to_string(), num(*t)]);
            }
        }
        let cells = |e: ThreadEngine| {
            let (one, two) = (r.median(e, 1), r.median(e, 2));
            format!("{one:.3} ms | {two:.3} ms | **{:.2}×**", r.speedup(e))
        };
        md += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.bench.key,
            r.bodies,
            r.joints,
            r.frames,
            cells(ThreadEngine::Solverlab),
            cells(ThreadEngine::Rapier)
        );
    }
    (csv, md)
}

/// Runs the threads table on `keys` (of [`SCENES`]) and writes `threads.csv`, `table.md` and
/// `meta.json` into `out`, each atomically.
pub fn threads(keys: &[&str], rounds: usize, frames_scale: f64, out: &Path) -> Result<PathBuf, String> {
    if !cfg!(feature = "parallel") {
        return Err("`threads` needs Rapier's parallel solver: build with `--features parallel`".into());
    }
    let t0 = Instant::now();
    let mut results = Vec::new();
    for key in keys {
        let b = SCENES.iter().find(|s| s.key == *key).ok_or_else(|| {
            let all: Vec<&str> = SCENES.iter().map(|s| s.key).collect();
            format!("--only: no scene `{key}` (scenes: {})", all.join(", "))
        })?;
        eprintln!("{}: {}", b.key, b.what);
        results.push(threads_scene(b, rounds, frames_scale)?);
    }
    let (csv, md) = thread_tables(&results);
    let mut meta = crate::meta::common();
    if let serde_json::Value::Object(o) = &mut meta {
        o.insert(
            "what".into(),
            "solverlab tgs-soft and Rapier matched (built with `parallel`), each in rayon pools of one and two \
             threads, interleaved; ms per frame as in the bench; speedup = median on one thread / median on two"
                .into(),
        );
        o.insert("solverlab_threads".into(), "1 and 2".into());
        o.insert("rounds".into(), rounds.into());
        o.insert("frames_scale".into(), frames_scale.into());
        o.insert("seconds".into(), t0.elapsed().as_secs_f64().into());
        o.insert("rapier".into(), crate::meta::mode_json(Mode::Matched, 1.0 / 60.0));
        let scenes: Vec<serde_json::Value> = results
            .iter()
            .map(|r| {
                serde_json::json!({
                    "scene": r.bench.key, "what": r.bench.what, "builtin": r.bench.builtin, "sets": r.bench.sets,
                    "bodies": r.bodies, "joints": r.joints, "frames_run": r.frames,
                })
            })
            .collect();
        o.insert("scenes".into(), scenes.into());
    }
    let meta = serde_json::to_string_pretty(&meta).expect("JSON") + "\n";
    write_files(out, &[("threads.csv", &csv), ("table.md", &md), ("meta.json", &meta)])?;
    Ok(out.join("threads.csv"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's times are medians over the rounds and its speedup the median of each
    /// round's ratio (here 1.00, where the medians' ratio is 1.50), and `threads.csv` holds one
    /// row per engine, thread count and round.
    #[test]
    fn speedups_are_medians_of_each_rounds_ratio() {
        let times = vec![
            (ThreadEngine::Solverlab, 1, vec![4.0, 2.0, 3.0]),
            (ThreadEngine::Solverlab, 2, vec![1.0, 2.0, 3.0]),
            (ThreadEngine::Rapier, 1, vec![1.0, 1.0, 1.0]),
            (ThreadEngine::Rapier, 2, vec![0.8, 0.8, 0.8]),
        ];
        let r = ThreadResult { bench: SCENES[6], bodies: 100, joints: 182, frames: 300, times };
        let (csv, md) = thread_tables(&[r]);
        assert_eq!(csv.lines().count(), 1 + 4 * 3);
        let row = md.lines().nth(2).expect("a row");
        assert!(row.starts_with("| joint-grid | 100 | 182 | 300 | 3.000 ms | 2.000 ms | **1.00×**"), "{row}");
        assert!(row.ends_with("| 1.000 ms | 0.800 ms | **1.25×** |"), "{row}");
    }

    /// Without Rapier's parallel feature the command says how to build it.
    #[cfg(not(feature = "parallel"))]
    #[test]
    fn without_parallel_the_command_names_the_feature() {
        let e = threads(&["joint-grid"], 1, 0.01, Path::new("/nonexistent")).unwrap_err();
        assert!(e.contains("--features parallel"), "{e}");
    }
}
