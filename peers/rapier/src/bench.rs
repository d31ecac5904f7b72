//! The benchmark: solverlab and Rapier on the same scenes, interleaved, several rounds.
//!
//! For every scene of [`SCENES`], each round runs, one after the other on one thread, solverlab's
//! `tgs-soft` and `soft-step` presets (through `solverlab_core::sim::Simulation`, as
//! `solverlab simulate` runs them) and Rapier in its four modes, each from the scene's start
//! for the scene's frame count. A run's time is its mean wall time per frame: for solverlab
//! the frame's `solve_seconds + integrate_seconds` (the solver, with its contact search, and the
//! shared prediction; not the metrics the simulation measures after the frame), for Rapier its
//! `PhysicsWorld::step` (broad phase, narrow phase, solver, integration; not the metrics).
//! The fastest and the median over the rounds are kept.
//!
//! Next to the times, every run is measured the same way (solverlab's `measure` of each
//! frame's state; Rapier's runs in the first round, as Rapier is deterministic on one thread):
//! whether every body stayed in place in every frame (`stood`), the largest body drift, the
//! largest penetration, the largest joint error and the final support force over the weight.
//! These say whether the two engines did the same thing, which a time ratio needs.
//!
//! A scene may carry a time budget for solverlab: a calibration run of `tgs-soft` (untimed)
//! stops once the budget is spent, and every engine then runs the frames it completed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use solverlab_core::sim::{tear, Simulation};
use solverlab_core::solver::NullObserver;
use solverlab_core::Scene;

use crate::steps::{line, num, write_files};
use crate::world::{Mode, RapierRun, Walls};

/// One benchmark scene.
#[derive(Clone, Copy, Debug)]
pub struct BenchScene {
    /// The key in the tables.
    pub key: &'static str,
    /// What it is, for the README's table.
    pub what: &'static str,
    /// The solverlab builtin.
    pub builtin: &'static str,
    /// Its `--set` parameters.
    pub sets: &'static [&'static str],
    /// Whether the builtin's balls become rigid spheres ([`crate::scenes::rigid_spheres`]).
    pub rigid_spheres: bool,
    /// Frames per run.
    pub frames: u64,
    /// solverlab's time budget for one run (s), if any: the calibration run stops there.
    pub budget: Option<f64>,
}

/// The scaling series: 10³, 10⁴ and 10⁵ rigid spheres of radius 5 cm falling into a box whose
/// width grows as the cube root of the count (the same density as the 10,000 in a 2 m box),
/// so that the time per body and frame is flat if nothing in either engine is quadratic.
pub const SCALING: [BenchScene; 3] = [
    BenchScene {
        key: "spheres-1k",
        what: "1,000 spheres of radius 5 cm into a 0.928 m box (balls n=1000 width=0.928, made rigid)",
        builtin: "balls",
        sets: &["n=1000", "width=0.928"],
        rigid_spheres: true,
        frames: 30,
        budget: Some(30.0),
    },
    BenchScene {
        key: "spheres-10k",
        what: "10,000 spheres of radius 5 cm into a 2 m box (balls n=10000 width=2, made rigid)",
        builtin: "balls",
        sets: &["n=10000", "width=2"],
        rigid_spheres: true,
        frames: 30,
        budget: Some(30.0),
    },
    BenchScene {
        key: "spheres-100k",
        what: "100,000 spheres of radius 5 cm into a 4.309 m box (balls n=100000 width=4.309, made rigid)",
        builtin: "balls",
        sets: &["n=100000", "width=4.309"],
        rigid_spheres: true,
        frames: 30,
        budget: Some(30.0),
    },
];

/// The benchmark's scenes (issue 30): the stack, the stack with a 10× heavier top, pyramids of
/// base 10, 20 and 90 (4,095 boxes, Box3D's `large_pyramid`), the chain, the joint grid (10 ×
/// 10, and 100 × 100 as Box3D's `joint_grid`) and 10,000 spheres in a box.
pub const SCENES: [BenchScene; 9] = [
    BenchScene {
        key: "stack",
        what: "10 boxes (rigid-stack)",
        builtin: "rigid-stack",
        sets: &[],
        rigid_spheres: false,
        frames: 600,
        budget: None,
    },
    BenchScene {
        key: "stack-x10",
        what: "10 boxes, top 10× heavier (rigid-stack ratio=10)",
        builtin: "rigid-stack",
        sets: &["ratio=10"],
        rigid_spheres: false,
        frames: 600,
        budget: None,
    },
    BenchScene {
        key: "pyramid-10",
        what: "55 boxes (rigid-pyramid base=10)",
        builtin: "rigid-pyramid",
        sets: &["base=10"],
        rigid_spheres: false,
        frames: 300,
        budget: None,
    },
    BenchScene {
        key: "pyramid-20",
        what: "210 boxes (rigid-pyramid base=20)",
        builtin: "rigid-pyramid",
        sets: &["base=20"],
        rigid_spheres: false,
        frames: 120,
        budget: None,
    },
    BenchScene {
        key: "pyramid-90",
        what: "4,095 boxes (rigid-pyramid base=90)",
        builtin: "rigid-pyramid",
        sets: &["base=90"],
        rigid_spheres: false,
        frames: 20,
        budget: Some(20.0),
    },
    BenchScene {
        key: "chain",
        what: "20 boxes on ball joints, released horizontally (rigid-chain)",
        builtin: "rigid-chain",
        sets: &[],
        rigid_spheres: false,
        frames: 600,
        budget: None,
    },
    BenchScene {
        key: "joint-grid",
        what: "10 × 10 spheres on 182 ball joints (rigid-joint-grid)",
        builtin: "rigid-joint-grid",
        sets: &[],
        rigid_spheres: false,
        frames: 300,
        budget: None,
    },
    BenchScene {
        key: "joint-grid-100",
        what: "100 × 100 spheres on 19,802 ball joints (rigid-joint-grid n=100, Box3D's joint_grid)",
        builtin: "rigid-joint-grid",
        sets: &["n=100"],
        rigid_spheres: false,
        frames: 30,
        budget: None,
    },
    BenchScene {
        key: "spheres-10k",
        what: "10,000 spheres of radius 5 cm falling into a 2 m box (balls n=10000 width=2, made rigid)",
        builtin: "balls",
        sets: &["n=10000", "width=2"],
        rigid_spheres: true,
        frames: 30,
        budget: Some(30.0),
    },
];

/// An engine configuration a round runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A solverlab preset.
    Solverlab(&'static str),
    /// Rapier in a mode.
    Rapier(Mode),
}

impl Engine {
    /// The engines of a round, in the order they run.
    pub const ALL: [Engine; 6] = [
        Engine::Solverlab("tgs-soft"),
        Engine::Rapier(Mode::Matched),
        Engine::Solverlab("soft-step"),
        Engine::Rapier(Mode::Box2d),
        Engine::Rapier(Mode::Defaults),
        Engine::Rapier(Mode::Sleeping),
    ];

    /// `solverlab tgs-soft`, `rapier matched`, ….
    pub fn label(self) -> String {
        match self {
            Engine::Solverlab(p) => format!("solverlab {p}"),
            Engine::Rapier(m) => format!("rapier {}", m.name()),
        }
    }
}

/// The pairs the ratio table compares: each solverlab preset against each Rapier mode. The
/// like-for-like ones (the same algorithm and parameters, as far as Rapier's reach) are
/// `tgs-soft` against `matched` and `soft-step` against `box2d`; `soft-step` against
/// `defaults` compares Box2D v3's algorithm with Rapier's own (contact recycling, friction in
/// the relax sweep only), which does less work a frame.
pub const PAIRS: [(&str, Mode); 8] = [
    ("tgs-soft", Mode::Matched),
    ("tgs-soft", Mode::Box2d),
    ("tgs-soft", Mode::Defaults),
    ("tgs-soft", Mode::Sleeping),
    ("soft-step", Mode::Matched),
    ("soft-step", Mode::Box2d),
    ("soft-step", Mode::Defaults),
    ("soft-step", Mode::Sleeping),
];

/// What one run did: its time per frame and its measurements.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Frames completed.
    pub frames: u64,
    /// Mean wall time per frame (ms).
    pub ms_per_frame: f64,
    /// Every body in place in every frame.
    pub stood: bool,
    /// The largest body drift over the run (m).
    pub max_drift: f64,
    /// The largest penetration over the run (m).
    pub max_penetration: f64,
    /// The largest joint error over the run (m or rad; 0 without joints).
    pub max_joint_error: f64,
    /// The support force at the last frame (N).
    pub final_support: f64,
    /// `ok`, or what went wrong and when.
    pub status: String,
}

/// The measurements of a run, frame by frame.
struct Tally {
    stats: RunStats,
    seconds: f64,
}

impl Tally {
    fn new() -> Self {
        Self { stats: RunStats { stood: true, status: "ok".into(), ..RunStats::default() }, seconds: 0.0 }
    }

    fn time(&mut self, seconds: f64) {
        self.seconds += seconds;
        self.stats.frames += 1;
    }

    fn measure(&mut self, frame: u64, m: &solverlab_core::metrics::StepMetrics, support: f64) {
        let s = &mut self.stats;
        s.stood &= m.in_place;
        s.max_drift = s.max_drift.max(m.body_drift);
        s.max_penetration = s.max_penetration.max(m.max_penetration);
        s.max_joint_error = s.max_joint_error.max(m.max_violation);
        s.final_support = support;
        if s.status == "ok" {
            if let Some(what) = tear(m) {
                s.status = format!("torn in frame {frame}: {what}");
            }
        }
    }

    fn finish(mut self) -> RunStats {
        self.stats.ms_per_frame = 1e3 * self.seconds / self.stats.frames.max(1) as f64;
        self.stats
    }
}

/// Runs solverlab's preset `preset` on `scene` for `frames` frames (or until `budget` seconds
/// of wall time have passed).
pub fn run_solverlab(scene: &Scene, preset: &str, frames: u64, budget: Option<f64>) -> Result<RunStats, String> {
    let p = solverlab_solvers::preset(preset).ok_or_else(|| format!("no solverlab preset `{preset}`"))?;
    let mut solver = p.config.build(preset).map_err(|e| e.to_string())?;
    let substeps = p.config.default_substeps();
    let mut sim =
        Simulation::new(scene, solver.as_mut(), scene.dt, substeps).map_err(|e| format!("{preset}: {e:?}"))?;
    // (As `solverlab simulate` steps its run: alone on its pool, whose other threads spin
    // through each frame when there are any.)
    sim.keep_workers_awake(true);
    let mut tally = Tally::new();
    let start = Instant::now();
    for frame in 1..=frames {
        match sim.step_frame(&mut NullObserver) {
            Ok(r) => {
                tally.time(r.solve_seconds + r.integrate_seconds);
                tally.measure(frame, &r.metrics, r.support_force);
            }
            Err(e) => {
                tally.stats.status = e.to_string();
                break;
            }
        }
        if budget.is_some_and(|b| start.elapsed().as_secs_f64() > b) {
            break;
        }
    }
    Ok(tally.finish())
}

/// Runs Rapier in `mode` on `scene` for `frames` frames; with `measure`, solverlab's metrics of
/// every frame (outside the timed step).
pub fn run_rapier(scene: &Scene, mode: Mode, frames: u64, measure: bool) -> Result<RunStats, String> {
    let mut run = RapierRun::new(scene, mode, Walls::Slabs).map_err(|e| e.to_string())?;
    let mut tally = Tally::new();
    for frame in 1..=frames {
        tally.time(run.step());
        if !run.is_finite() {
            tally.stats.status = format!("diverged (NaN or Inf) in frame {frame}");
            break;
        }
        if measure {
            tally.measure(frame, &run.metrics(), run.support_force());
        }
    }
    let mut stats = tally.finish();
    // (A run that diverged says so, measured or not.)
    if !measure && stats.status == "ok" {
        stats.status = "not measured".into();
    }
    Ok(stats)
}

/// The fastest and the median of `xs`.
pub fn fastest_median(xs: &[f64]) -> (f64, f64) {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let median = if n % 2 == 1 { s[n / 2] } else { 0.5 * (s[n / 2 - 1] + s[n / 2]) };
    (s[0], median)
}

/// One scene's results: per engine, the times of every round and the measured run.
pub struct SceneResult {
    /// The scene.
    pub bench: BenchScene,
    /// Rigid bodies.
    pub bodies: usize,
    /// Joints.
    pub joints: usize,
    /// The weight of the movable bodies (N).
    pub weight: f64,
    /// Frames per run.
    pub frames: u64,
    /// The scene's frame step (s).
    pub dt: f64,
    /// The factor the frame counts were scaled by.
    pub frames_scale: f64,
    /// Per engine of [`Engine::ALL`]: the ms per frame of each round, and the first round's
    /// measurements.
    pub runs: Vec<(Engine, Vec<f64>, RunStats)>,
}

impl SceneResult {
    fn of(&self, e: Engine) -> &(Engine, Vec<f64>, RunStats) {
        self.runs.iter().find(|r| r.0 == e).expect("every engine runs")
    }
}

/// Scene `b` and the frames its runs take: its frame count times `frames_scale`, or with a
/// budget, the frames a calibration run of `tgs-soft` (untimed, on the calling thread's pool)
/// completes within it.
pub fn bench_scene_frames(b: &BenchScene, frames_scale: f64) -> Result<(Scene, u64), String> {
    let sets: Vec<String> = b.sets.iter().map(|s| s.to_string()).collect();
    let scene = crate::scenes::load(b.builtin, &sets, b.rigid_spheres)?;
    let mut frames = ((b.frames as f64 * frames_scale).round() as u64).max(2);
    if let Some(budget) = b.budget {
        let t0 = Instant::now();
        let cal = run_solverlab(&scene, "tgs-soft", frames, Some(budget))?;
        eprintln!(
            "  {}: calibration of solverlab tgs-soft: {} of {frames} frames in {:.1} s (budget {budget} s)",
            b.key,
            cal.frames,
            t0.elapsed().as_secs_f64()
        );
        frames = cal.frames.clamp(2, frames);
    }
    Ok((scene, frames))
}

/// Runs one scene: calibration (with a budget), then `rounds` interleaved rounds.
pub fn bench_scene(b: &BenchScene, rounds: usize, frames_scale: f64) -> Result<SceneResult, String> {
    let (scene, frames) = bench_scene_frames(b, frames_scale)?;
    let mut runs: Vec<(Engine, Vec<f64>, RunStats)> =
        Engine::ALL.iter().map(|&e| (e, Vec::new(), RunStats::default())).collect();
    for round in 0..rounds {
        for (engine, times, stats) in runs.iter_mut() {
            let s = match *engine {
                Engine::Solverlab(p) => run_solverlab(&scene, p, frames, None)?,
                Engine::Rapier(m) => run_rapier(&scene, m, frames, round == 0)?,
            };
            eprintln!(
                "  {} round {}: {:<19} {:>10.4} ms/frame over {} frames",
                b.key,
                round + 1,
                engine.label(),
                s.ms_per_frame,
                s.frames
            );
            times.push(s.ms_per_frame);
            if round == 0 {
                *stats = s;
            }
        }
    }
    let weight = scene.rigid.iter().filter(|r| !r.is_fixed()).map(|r| r.mass()).sum::<f64>() * scene.gravity.norm();
    Ok(SceneResult {
        bench: *b,
        bodies: scene.rigid.len(),
        joints: scene.joints.len(),
        weight,
        frames,
        dt: scene.dt,
        frames_scale,
        runs,
    })
}

/// Columns of `ratios.csv`: one row per scene and pair of [`PAIRS`]. Times in ms per frame
/// (fastest and median over the rounds); `ratio` is solverlab's median over Rapier's (above 1:
/// solverlab is slower), `ratio_fastest` the same of the fastest; then each side's first-round
/// measurements: `stood` (1 if every body stayed in place in every frame), the largest body
/// drift and penetration (m), the largest joint error (m or rad), the final support force
/// divided by the weight, and the status.
pub const RATIO_COLUMNS: [&str; 23] = [
    "scene",
    "bodies",
    "joints",
    "frames",
    "rounds",
    "solverlab_preset",
    "rapier_mode",
    "solverlab_fastest_ms",
    "solverlab_median_ms",
    "rapier_fastest_ms",
    "rapier_median_ms",
    "ratio",
    "ratio_fastest",
    "solverlab_stood",
    "rapier_stood",
    "solverlab_max_drift",
    "rapier_max_drift",
    "solverlab_max_penetration",
    "rapier_max_penetration",
    "solverlab_max_joint_error",
    "rapier_max_joint_error",
    "solverlab_support_over_weight",
    "rapier_support_over_weight",
];

/// Columns of `timings.csv`: one row per scene, engine and round (ms per frame).
pub const TIMING_COLUMNS: [&str; 4] = ["scene", "engine", "round", "ms_per_frame"];

/// Columns of `runs.csv`: one row per scene and engine, the first round's measurements.
pub const RUN_COLUMNS: [&str; 12] = [
    "scene",
    "engine",
    "frames",
    "fastest_ms",
    "median_ms",
    "stood",
    "max_drift",
    "max_penetration",
    "max_joint_error",
    "final_support_force",
    "weight",
    "status",
];

fn clean(s: &str) -> String {
    s.replace([',', '"', '\n'], ";")
}

/// The three tables' text.
pub fn tables(results: &[SceneResult], rounds: usize) -> (String, String, String) {
    let mut ratios = line(&RATIO_COLUMNS.map(String::from));
    let mut timings = line(&TIMING_COLUMNS.map(String::from));
    let mut runs = line(&RUN_COLUMNS.map(String::from));
    for r in results {
        for (engine, times, s) in &r.runs {
            for (k, t) in times.iter().enumerate() {
                timings += &line(&[r.bench.key.into(), engine.label(), (k + 1).to_string(), num(*t)]);
            }
            let (fast, med) = fastest_median(times);
            runs += &line(&[
                r.bench.key.into(),
                engine.label(),
                s.frames.to_string(),
                num(fast),
                num(med),
                (s.stood as u8).to_string(),
                num(s.max_drift),
                num(s.max_penetration),
                num(s.max_joint_error),
                num(s.final_support),
                num(r.weight),
                clean(&s.status),
            ]);
        }
        for (preset, mode) in PAIRS {
            let (_, st, ss) = r.of(Engine::Solverlab(preset));
            let (_, rt, rs) = r.of(Engine::Rapier(mode));
            let (sf, sm) = fastest_median(st);
            let (rf, rm) = fastest_median(rt);
            let support = |x: f64| if r.weight > 0.0 { num(x / r.weight) } else { String::new() };
            ratios += &line(&[
                r.bench.key.into(),
                r.bodies.to_string(),
                r.joints.to_string(),
                r.frames.to_string(),
                rounds.to_string(),
                preset.into(),
                mode.name().into(),
                num(sf),
                num(sm),
                num(rf),
                num(rm),
                num(sm / rm),
                num(sf / rf),
                (ss.stood as u8).to_string(),
                (rs.stood as u8).to_string(),
                num(ss.max_drift),
                num(rs.max_drift),
                num(ss.max_penetration),
                num(rs.max_penetration),
                num(ss.max_joint_error),
                num(rs.max_joint_error),
                support(ss.final_support),
                support(rs.final_support),
            ]);
        }
    }
    (ratios, timings, runs)
}

/// The README's table: per scene, solverlab's `tgs-soft` and `soft-step` and Rapier's four
/// modes (median ms per frame), and the ratios (solverlab over Rapier) of `tgs-soft` to
/// `matched`, and of `soft-step` to `box2d`, to `defaults` and to `sleeping`.
pub fn markdown(results: &[SceneResult]) -> String {
    let mut s = String::from(
        "| scene | bodies | frames | solverlab tgs-soft | Rapier matched | ratio | solverlab soft-step | Rapier box2d | \
         ratio | Rapier defaults | ratio | Rapier sleeping | ratio |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in results {
        let med = |e: Engine| fastest_median(&r.of(e).1).1;
        let (tgs, soft) = (med(Engine::Solverlab("tgs-soft")), med(Engine::Solverlab("soft-step")));
        let (m, b, d, z) = (
            med(Engine::Rapier(Mode::Matched)),
            med(Engine::Rapier(Mode::Box2d)),
            med(Engine::Rapier(Mode::Defaults)),
            med(Engine::Rapier(Mode::Sleeping)),
        );
        let asked = (r.bench.frames as f64 * r.frames_scale).round() as u64;
        let frames = if r.frames < asked { format!("{} of {asked} (budget)", r.frames) } else { r.frames.to_string() };
        s += &format!(
            "| {} | {} | {} | {} | {} | **{:.1}×** | {} | {} | **{:.1}×** | {} | {:.1}× | {} | {:.1}× |\n",
            r.bench.key,
            r.bodies,
            frames,
            ms(tgs),
            ms(m),
            tgs / m,
            ms(soft),
            ms(b),
            soft / b,
            ms(d),
            soft / d,
            ms(z),
            soft / z
        );
    }
    s
}

fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0} ms")
    } else if x >= 1.0 {
        format!("{x:.2} ms")
    } else {
        format!("{x:.3} ms")
    }
}

/// Runs the benchmark on `scenes` and writes `ratios.csv`, `runs.csv`, `timings.csv`,
/// `table.md` and `meta.json` into `out`, each atomically.
pub fn bench(scenes: &[BenchScene], rounds: usize, frames_scale: f64, out: &Path) -> Result<PathBuf, String> {
    let t0 = Instant::now();
    let mut results = Vec::new();
    for b in scenes {
        eprintln!("{}: {}", b.key, b.what);
        results.push(bench_scene(b, rounds, frames_scale)?);
    }
    let (ratios, timings, runs) = tables(&results, rounds);
    let meta = crate::meta::bench_meta(&results, rounds, frames_scale, t0.elapsed().as_secs_f64());
    let table = markdown(&results);
    let files = [
        ("ratios.csv", &ratios[..]),
        ("runs.csv", &runs),
        ("timings.csv", &timings),
        ("table.md", &table),
        ("meta.json", &meta),
    ];
    write_files(out, &files)?;
    Ok(out.join("ratios.csv"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fastest_and_median() {
        assert_eq!(fastest_median(&[3.0, 1.0, 2.0]), (1.0, 2.0));
        assert_eq!(fastest_median(&[4.0, 1.0, 2.0, 3.0]), (1.0, 2.5));
    }

    /// Every scene resolves, and a short bench of the stack writes one row per pair.
    #[test]
    fn a_short_bench() {
        for b in &SCENES {
            let sets: Vec<String> = b.sets.iter().map(|s| s.to_string()).collect();
            if b.rigid_spheres {
                continue; // 10,000 spheres: resolved by the benchmark itself
            }
            let scene = crate::scenes::load(b.builtin, &sets, b.rigid_spheres).expect(b.key);
            assert!(!scene.rigid.is_empty(), "{}", b.key);
        }
        let r = bench_scene(&SCENES[0], 2, 0.02).expect("the stack");
        let (ratios, timings, runs) = tables(&[r], 2);
        assert_eq!(ratios.lines().count(), 1 + PAIRS.len());
        assert_eq!(timings.lines().count(), 1 + 2 * Engine::ALL.len());
        assert_eq!(runs.lines().count(), 1 + Engine::ALL.len());
        assert!(ratios.lines().all(|l| l.split(',').count() == RATIO_COLUMNS.len()));
    }
}
