//! The `performance` experiment: ns per constraint per iteration for every family and thread
//! count on one cloth, next to the plain loops and the machine's memory bandwidth, all measured
//! in one run (the machine is shared, so only ratios within a run compare).
//!
//! ```sh
//! cargo run --release -p solverlab-benches --bin performance [-- --rounds N]
//! cargo run --release -p solverlab-benches --bin performance -- --plot   # the figure from the CSV
//! ```
//!
//! runs every measurement once per round (default 3 rounds), keeps the fastest time of each over
//! all rounds (a burst of other work on the shared machine then spoils at most one round of a
//! measurement, not the whole run), and writes `results/performance/performance.csv` and the
//! figure `results/performance/ns_per_row.svg` (and `.png`). Columns: `scene`, `rows` (sticks),
//! `family`, `solver`, `threads`, `per` (`iteration` or `step`), `ns_per_row` (per iteration: the
//! fastest of 11 solves of 10 sweeps in each round, since on a shared machine other work only
//! adds time; PGS and CG: the marginal cost of one more iteration, a biased and a split sweep, or one more CG iteration, which leaves out gathering,
//! preparing and assembling; per step: that left-out work, the time of a one-iteration solve less
//! one iteration; for `gather_row_set`, gathering the rows once), `plain_ns` (per iteration: the
//! plain loop doing the same arithmetic, one thread, empty where there is none; per step: one
//! iteration of the same solver), `ratio` (`ns_per_row` over `plain_ns`: against the plain loop,
//! or the per-step work in iterations), `memory_floor_ns` (the time to stream the sweep's arrays
//! once at the measured bandwidth, per row) and `bandwidth_gb_s` (a large array copy, read plus
//! write).
//!
//! Product rows (`per = frame`) time the same solvers as `solverlab simulate` runs them: the
//! solver built from its TOML with the default tolerance (and again with `tolerance = 0`),
//! [`solverlab_benches::product::FRAMES`] frames of the same cloth through the command line's
//! `simulate` in a child process of this binary (`--simulate SOLVER OUT`, the global pool sized
//! by `RAYON_NUM_THREADS`), and the mean of `steps.csv`'s `solve_seconds` after the first
//! [`solverlab_benches::product::SKIP`] frames, per row and per iteration. Their `plain_ns` is
//! the kernel row of the same solver and thread count and `ratio` the product over the kernel,
//! so a stopping test or a thread pool that costs the product what the kernel does not shows as
//! a ratio above 1. They are in the table, not in the figure.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use solverlab_benches::{fastest_seconds_with, plain_gauss_seidel, plain_jacobi, PlainSticks};
use solverlab_core::rows::{gather_row_set, RowSet};
use solverlab_core::{NullObserver, Scene, State, StepContext};
use solverlab_solvers::cg::ForcingKind;
use solverlab_solvers::{build, preset, CgConfig, Order, PgsConfig, RelaxConfig, SolverConfig};

const SWEEPS: usize = 10;

/// A predicted state: one Verlet step of gravity, so that every stick has work to do.
fn predicted(scene: &Scene) -> State {
    let mut state = scene.initial_state(scene.dt);
    solverlab_core::integrate::predict(scene, &[], &mut state, scene.dt);
    state
}

/// The fastest time (s) of 11 solves of `config` from `state` (the copy of the state not timed), in
/// a pool of `threads`.
fn solve_time(scene: &Scene, state: &State, config: &SolverConfig, threads: usize) -> f64 {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool");
    pool.install(|| {
        let mut solver = build(config, "performance").expect("valid settings");
        solver.prepare(scene).expect("prepares");
        let ctx = StepContext::new(scene, scene.dt);
        fastest_seconds_with(
            || state.clone(),
            |mut st| {
                solver.solve(&ctx, &mut st, &mut NullObserver).expect("solves");
                std::hint::black_box(&st);
            },
        )
    })
}

/// Bytes read plus written by [`copy_seconds`].
const COPY_BYTES: usize = 2 * (32 << 20) * 8;

/// The fastest time (s) of 11 copies of a 256 MB array.
fn copy_seconds() -> f64 {
    let n = COPY_BYTES / 16;
    let src: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let mut dst = vec![0.0f64; n];
    fastest_seconds_with(
        || (),
        |()| {
            dst.copy_from_slice(&src);
            std::hint::black_box(&dst);
        },
    )
}

/// The fastest time of each measurement over all rounds so far, by name.
#[derive(Default)]
struct Fastest(BTreeMap<String, f64>);

impl Fastest {
    /// Keeps `value` for `key` when it is the fastest so far; returns `value`.
    fn record(&mut self, key: impl Into<String>, value: f64) -> f64 {
        let e = self.0.entry(key.into()).or_insert(f64::INFINITY);
        *e = e.min(value);
        value
    }

    fn get(&self, key: &str) -> f64 {
        self.0[key]
    }
}

/// What to do: measure in `Some(rounds)` rounds (`--rounds N`, default 3), or `None`: redraw the
/// figure from the CSV (`--plot`). `--simulate SOLVER OUT` is a product run's child process
/// ([`solverlab_benches::product`]): it simulates and exits.
fn mode() -> Result<Option<usize>, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(Some(3)),
        [flag] if flag == "--plot" => Ok(None),
        [flag, solver, out] if flag == "--simulate" => {
            solverlab_benches::product::simulate("cloth", &cloth_sets(), solver, Path::new(out))?;
            std::process::exit(0)
        }
        [flag, n] if flag == "--rounds" => match n.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(format!("--rounds: expected a whole number of at least 1, got `{n}`")),
        },
        _ => Err(format!("usage: performance [--rounds N | --plot]; got `{}`", args.join(" "))),
    }
}

/// The results directory.
const DIR: &str = "results/performance";

/// The cloth every row but the million-stick one runs: 256 × 256.
fn cloth_sets() -> Vec<String> {
    vec!["nx=256".into(), "ny=256".into()]
}

/// The product rows' solvers: a name, the kernel row it is set against, and its settings (the
/// kernel row's preset as a TOML table, with its default tolerance).
const PRODUCT: [(&str, &str, &str); 4] = [
    ("gs (coloured)", "gs (coloured)", r#"kind = "relax", order = "colored", iterations = 10"#),
    ("jacobi", "jacobi", r#"kind = "relax", mode = "jacobi", omega = 1.5, iterations = 10"#),
    ("xpbd", "xpbd", r#"kind = "relax", xpbd = true, iterations = 10"#),
    ("pgs (coloured)", "pgs 30 Colored", r#"kind = "pgs", order = "colored", iterations = 10"#),
];

/// Redraws the figure from `performance.csv` alone.
fn replot() -> Result<(), String> {
    let path = Path::new(DIR).join("performance.csv");
    let bad = |what: String| format!("{}: {what}", path.display());
    let mut reader = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
    let (mut out, mut plain_gs, mut plain_jac, mut floor, mut gbs) = (Vec::new(), None, None, 0.0, 0.0);
    for (line, record) in reader.records().enumerate() {
        let record = record.map_err(|e| bad(e.to_string()))?;
        let field = |name: &str, k: usize| record.get(k).ok_or_else(|| bad(format!("row {}: no `{name}`", line + 2)));
        let number = |name: &str, k: usize| -> Result<f64, String> {
            let text = field(name, k)?;
            text.parse::<f64>().map_err(|_| bad(format!("row {}: `{name}` is `{text}`, not a number", line + 2)))
        };
        let (solver, threads) = (field("solver", 3)?.to_string(), number("threads", 4)? as usize);
        let plain = match field("plain_ns", 7)? {
            "" => None,
            _ => Some(number("plain_ns", 7)?),
        };
        match (solver.as_str(), threads) {
            ("gs (natural)", 1) => plain_gs = plain,
            ("jacobi", 1) => plain_jac = plain,
            _ => {}
        }
        (floor, gbs) = (number("memory_floor_ns", 9)?, number("bandwidth_gb_s", 10)?);
        out.push(Row {
            scene: field("scene", 0)?.to_string(),
            rows: number("rows", 1)? as usize,
            family: field("family", 2)?.to_string(),
            solver,
            threads,
            ns: number("ns_per_row", 6)?,
            plain,
            per_step: field("per", 5)? == "step",
            product: field("per", 5)? == "frame",
        });
    }
    let missing = || bad("no plain-loop times for `gs (natural)` and `jacobi` on one thread".into());
    let (plain_gs, plain_jac) = (plain_gs.ok_or_else(missing)?, plain_jac.ok_or_else(missing)?);
    let rows = out.first().map(|r| r.rows).ok_or_else(|| bad("no rows".into()))?;
    let written = draw(&out, rows, plain_gs, plain_jac, floor, gbs)?;
    eprintln!("redrew {written} figure files from {}", path.display());
    Ok(())
}

/// Draws `ns_per_row` (SVG and PNG): ns per row per iteration against threads, one series per
/// solver of the `rows`-row cloth, with the plain loops and the memory floor as flat lines.
/// Returns the number of files written.
fn draw(out: &[Row], rows: usize, plain_gs: f64, plain_jac: f64, floor: f64, gbs: f64) -> Result<usize, String> {
    use solverlab_plot::{Axis, Figure, LineStyle, Panel, Series};
    let mut series: Vec<Series> = Vec::new();
    // The cloth's solvers (the million-stick cloth is in the table only), then the flat
    // reference lines, dashed. Colours repeat after the palette's eight: a repeated solver is
    // dashed, and the reference lines take colours of solvers drawn with points.
    let solvers = out.iter().filter(|r| r.threads == 1 && !r.per_step && !r.product && r.rows == rows);
    for (index, r) in solvers.enumerate() {
        let points = out.iter().filter(|q| q.solver == r.solver).map(|q| (q.threads as f64, q.ns)).collect();
        let style = if index >= solverlab_plot::PALETTE.len() { LineStyle::Dashed } else { LineStyle::LineAndPoints };
        series.push(Series { label: r.solver.clone(), points, style, ..Series::default() });
    }
    for (label, v) in [("plain Gauss-Seidel loop", plain_gs), ("plain Jacobi loop", plain_jac), ("memory floor", floor)]
    {
        series.push(Series {
            label: label.into(),
            points: vec![(1.0, v), (2.0, v)],
            style: LineStyle::Dashed,
            ..Series::default()
        });
    }
    let figure = Figure {
        title: format!("ns per row per iteration, cloth 256×256 ({rows} sticks), {gbs:.1} GB/s copy bandwidth"),
        panels: vec![Panel {
            title: "every family, one and two threads".into(),
            x: Axis { label: "threads".into(), log: false, range: Some((0.8, 2.2)), ..Axis::default() },
            y: Axis { label: "ns per row per iteration".into(), log: true, range: None, ..Axis::default() },
            series,
        }],
        columns: 1,
        panel_width: 800,
        ..Figure::default()
    };
    let written =
        solverlab_plot::write_figure(&figure, &Path::new(DIR).join("ns_per_row")).map_err(|e| e.to_string())?;
    Ok(written.len())
}

/// A CSV field, quoted when it holds a comma or a quote.
fn quoted(field: &str) -> String {
    match field.contains([',', '"']) {
        true => format!("\"{}\"", field.replace('"', "\"\"")),
        false => field.to_string(),
    }
}

struct Row {
    scene: String,
    rows: usize,
    family: String,
    solver: String,
    threads: usize,
    ns: f64,
    plain: Option<f64>,
    /// Whether `ns` is per step (the work done once a step) rather than per iteration; `plain` is
    /// then one iteration of the same solver, so that the ratio counts iterations.
    per_step: bool,
    /// Whether `ns` was measured through `simulate` (per row per iteration, from the mean
    /// `solve_seconds` of a frame); `plain` is then the kernel row of the same solver.
    product: bool,
}

fn main() -> Result<(), String> {
    let Some(rounds) = mode()? else { return replot() };
    let scene = solverlab_scenes::resolve("cloth", &cloth_sets()).map_err(|e| e.to_string())?;
    let state = predicted(&scene);
    let sticks = PlainSticks::from_scene(&scene);
    let rows = sticks.len();
    let per = |seconds: f64, sweeps: usize| seconds * 1e9 / (rows * sweeps) as f64;
    let scene_name = "cloth 256×256".to_string();
    let plain0: Vec<[f64; 3]> = state.x.iter().map(|v| [v.x, v.y, v.z]).collect();
    let colored = sticks.colored();
    let plain_time = |f: &mut dyn FnMut(&mut Vec<[f64; 3]>)| {
        fastest_seconds_with(
            || plain0.clone(),
            |mut x| {
                for _ in 0..SWEEPS {
                    f(&mut x);
                }
                std::hint::black_box(&x);
            },
        )
    };
    let (mut dx, mut count) = (vec![[0.0; 3]; plain0.len()], vec![0u32; plain0.len()]);
    // A preset's capped form: exactly SWEEPS sweeps, tolerance off.
    let relax = |name: &str| -> RelaxConfig {
        preset(name).expect("a preset").config.capped(SWEEPS as u64).typed().expect("a relaxation preset")
    };
    let relax_cases: [(&str, RelaxConfig, &str); 6] = [
        ("gs (natural)", relax("gs"), "plain gs"),
        ("gs (coloured)", RelaxConfig { order: Order::Colored, ..relax("gs") }, "plain coloured"),
        ("xpbd", relax("xpbd"), "plain gs"),
        ("jacobi", relax("jacobi"), "plain jacobi"),
        ("jacobi-split", relax("jacobi-split"), "plain jacobi"),
        ("jacobi-cheb", relax("jacobi-cheb"), "plain jacobi"),
    ];
    let pgs = |k: u32, order: Order| {
        SolverConfig::from(PgsConfig { iterations: k, order, tolerance: 0.0, ..PgsConfig::default() })
    };
    // CG: one Newton step of exactly k CG iterations.
    let cg = |k: u32| {
        SolverConfig::from(CgConfig {
            outer_iterations: 1,
            tolerance: 0.0,
            forcing: ForcingKind::Fixed,
            cg_tolerance: 1e-300,
            cg_max_iterations: k,
            cg_budget: k,
            warm_start: 0.0,
            ..CgConfig::default()
        })
    };
    // A cloth of about a million sticks: coloured Gauss-Seidel, 10 sweeps a frame.
    let big = solverlab_scenes::resolve("cloth", &["nx=708".into(), "ny=708".into(), "shear=false".into()])
        .map_err(|e| e.to_string())?;
    let big_state = predicted(&big);
    let big_rows = big.constraints.len();
    let big_cfg = SolverConfig::from(RelaxConfig { order: Order::Colored, ..relax("gs") });

    // The product runs' folders.
    let work = std::env::temp_dir().join(format!("solverlab-performance-{}", std::process::id()));
    // Every measurement once a round; what each prints is this round's time.
    let mut fastest = Fastest::default();
    let mut set = RowSet::default();
    for round in 1..=rounds {
        eprintln!("round {round} of {rounds} (ns per row per iteration)");
        let plain_gs = per(fastest.record("plain gs", plain_time(&mut |x| plain_gauss_seidel(x, &sticks))), SWEEPS);
        let plain_colored =
            per(fastest.record("plain coloured", plain_time(&mut |x| plain_gauss_seidel(x, &colored))), SWEEPS);
        let plain_jac = per(
            fastest.record("plain jacobi", plain_time(&mut |x| plain_jacobi(x, &sticks, 1.5, &mut dx, &mut count))),
            SWEEPS,
        );
        eprintln!("  plain loops: Gauss-Seidel {plain_gs:.2}, coloured {plain_colored:.2}, Jacobi {plain_jac:.2}");
        for threads in [1, 2] {
            for (name, cfg, _) in &relax_cases {
                let t = solve_time(&scene, &state, &SolverConfig::from(cfg.clone()), threads);
                let ns = per(fastest.record(format!("{name}/{threads}"), t), SWEEPS);
                eprintln!("  {name}, {threads} thread(s): {ns:.2}");
            }
            for order in [Order::Natural, Order::Colored] {
                let t1 = fastest
                    .record(format!("pgs 1 {order:?}/{threads}"), solve_time(&scene, &state, &pgs(1, order), threads));
                let t30 = fastest.record(
                    format!("pgs 30 {order:?}/{threads}"),
                    solve_time(&scene, &state, &pgs(30, order), threads),
                );
                eprintln!("  pgs ({order:?}), {threads} thread(s): {:.2} per iteration", per((t30 - t1) / 29.0, 1));
            }
            let t1 = fastest.record(format!("cg 1/{threads}"), solve_time(&scene, &state, &cg(1), threads));
            let t101 = fastest.record(format!("cg 101/{threads}"), solve_time(&scene, &state, &cg(101), threads));
            eprintln!("  cg, {threads} thread(s): {:.2} per CG iteration", per((t101 - t1) / 100.0, 1));
            let gather = fastest_seconds_with(
                || (),
                |()| {
                    gather_row_set(&scene, &state.x, state.time, 0.0, |_| 0.0, &mut set);
                    std::hint::black_box(&set);
                },
            );
            eprintln!(
                "  gather_row_set, {threads} thread(s): {:.2}",
                per(fastest.record(format!("gather/{threads}"), gather), 1)
            );
        }
        for threads in [1, 2] {
            let t = fastest.record(format!("big/{threads}"), solve_time(&big, &big_state, &big_cfg, threads));
            eprintln!("  gs (coloured) on {big_rows} sticks, {threads} thread(s): {:.1} ms per frame", t * 1e3);
        }
        // The product rows, interleaved with the kernel rows: one child process per solver,
        // tolerance and thread count in each round.
        for threads in [1, 2] {
            for (name, _, settings) in PRODUCT {
                for (tol, extra) in [("default", ""), ("0", ", tolerance = 0")] {
                    let p = solverlab_benches::product::measure(&format!("{{ {settings}{extra} }}"), threads, &work)?;
                    let ns = fastest.record(
                        format!("product {name} {tol}/{threads}"),
                        p.solve_seconds * 1e9 / (rows as f64 * p.iterations),
                    );
                    eprintln!(
                        "  {name} through simulate, tolerance {tol}, {threads} thread(s): {ns:.2} ({:.1} ms a frame, {:.1} iterations)",
                        p.solve_seconds * 1e3,
                        p.iterations
                    );
                }
            }
        }
        let copy = fastest.record("copy", copy_seconds());
        eprintln!("  bandwidth {:.1} GB/s", COPY_BYTES as f64 / copy / 1e9);
    }

    // The table, from the fastest of every measurement.
    let mut out = Vec::new();
    let row = |family: &str, solver: &str, threads, ns, plain, per_step| Row {
        scene: scene_name.clone(),
        rows,
        family: family.into(),
        solver: solver.into(),
        threads,
        ns,
        plain,
        per_step,
        product: false,
    };
    let plain_gs = per(fastest.get("plain gs"), SWEEPS);
    let plain_jac = per(fastest.get("plain jacobi"), SWEEPS);
    eprintln!("fastest of {rounds} round(s):");
    for threads in [1, 2] {
        for (name, _, plain) in &relax_cases {
            let ns = per(fastest.get(&format!("{name}/{threads}")), SWEEPS);
            let plain = per(fastest.get(plain), SWEEPS);
            eprintln!("{name}, {threads} thread(s): {ns:.2} ns, {:.2} × the plain loop", ns / plain);
            out.push(row("relax", name, threads, ns, Some(plain), false));
        }
        // PGS: the marginal cost of one iteration (a biased and a split sweep), (t(30) − t(1)) / 29,
        // in the natural order and coloured (parallel on two threads); and the work done once a
        // step (gather, prepare, warm start, integrate), t(1) less one iteration, in iterations.
        for order in [Order::Natural, Order::Colored] {
            let t1 = fastest.get(&format!("pgs 1 {order:?}/{threads}"));
            let iteration = (fastest.get(&format!("pgs 30 {order:?}/{threads}")) - t1) / 29.0;
            let ns = per(iteration, 1);
            let (solver, step_solver) = match order {
                Order::Colored => ("pgs (coloured; one iteration)", "pgs (coloured) per-step work"),
                _ => ("pgs (one iteration)", "pgs per-step work (gather, prepare, warm start, integrate)"),
            };
            let step = per(t1 - iteration, 1);
            eprintln!("{solver}, {threads} thread(s): {ns:.2} ns; per step {step:.2} ns = {:.2} iterations", step / ns);
            out.push(row("pgs", solver, threads, ns, None, false));
            out.push(row("pgs", step_solver, threads, step, Some(ns), true));
        }
        // CG: the marginal cost of one CG iteration in one Newton step, (t(101) − t(1)) / 100, and
        // the work done once a Newton step (gather, Jacobian, preconditioner, positions), t(1)
        // less one CG iteration.
        let t1 = fastest.get(&format!("cg 1/{threads}"));
        let iteration = (fastest.get(&format!("cg 101/{threads}")) - t1) / 100.0;
        let ns = per(iteration, 1);
        let step = per(t1 - iteration, 1);
        eprintln!("cg, {threads} thread(s): {ns:.2} ns; per Newton step {step:.2} ns = {:.1} CG iterations", step / ns);
        out.push(row("cg", "cg (one CG iteration)", threads, ns, None, false));
        out.push(row("cg", "cg per-Newton-step work (gather, J, preconditioner)", threads, step, Some(ns), true));
        // Gathering the rows into the compact store, which the Newton loop does at every outer
        // iteration and line-search trial and PGS once a step (sequential; in CG iterations).
        let g = per(fastest.get(&format!("gather/{threads}")), 1);
        eprintln!("gather_row_set, {threads} thread(s): {g:.2} ns = {:.2} CG iterations", g / ns);
        out.push(row("cg", "gather_row_set (the rows, in the Newton loop and PGS)", threads, g, Some(ns), true));
    }
    for threads in [1, 2] {
        let t = fastest.get(&format!("big/{threads}"));
        eprintln!("gs (coloured) on {big_rows} sticks, {threads} thread(s): {:.1} ms per frame", t * 1e3);
        out.push(Row {
            scene: "cloth 708×708".into(),
            rows: big_rows,
            family: "relax".into(),
            solver: "gs (coloured; 10⁶ sticks)".into(),
            threads,
            ns: t * 1e9 / (big_rows * SWEEPS) as f64,
            plain: None,
            per_step: false,
            product: false,
        });
    }

    let _ = std::fs::remove_dir_all(&work);
    // The product rows against their kernel rows (PGS: the marginal cost of one iteration, so
    // its ratio also holds the per-step work).
    for (name, kernel, _) in PRODUCT {
        let ns = |tol: &str, threads: usize| fastest.get(&format!("product {name} {tol}/{threads}"));
        for threads in [1, 2] {
            let plain = match kernel {
                "pgs 30 Colored" => {
                    let t1 = fastest.get(&format!("pgs 1 Colored/{threads}"));
                    per((fastest.get(&format!("pgs 30 Colored/{threads}")) - t1) / 29.0, 1)
                }
                _ => per(fastest.get(&format!("{kernel}/{threads}")), SWEEPS),
            };
            for (tol, label) in [("default", "default tolerance"), ("0", "tolerance 0")] {
                let family = if kernel.starts_with("pgs") { "pgs" } else { "relax" };
                let mut r =
                    row(family, &format!("{name} via simulate, {label}"), threads, ns(tol, threads), None, false);
                (r.plain, r.product) = (Some(plain), true);
                out.push(r);
            }
            eprintln!(
                "{name} through simulate, {threads} thread(s): {:.2} ns ({:.2} × the kernel), tolerance 0 {:.2} ns; \
                 default tolerance / tolerance 0 = {:.2}",
                ns("default", threads),
                ns("default", threads) / plain,
                ns("0", threads),
                ns("default", threads) / ns("0", threads)
            );
        }
        eprintln!(
            "{name} through simulate: 2 threads against 1, {:.2}× (default tolerance), {:.2}× (tolerance 0)",
            ns("default", 1) / ns("default", 2),
            ns("0", 1) / ns("0", 2)
        );
    }

    let gbs = COPY_BYTES as f64 / fastest.get("copy") / 1e9;
    // One sweep streams the positions (read and written) and each row's data (two u32 indices,
    // the rest length, the inverse-mass sum, the multiplier row and the multiplier).
    let bytes = (scene.particles.len() * 24 * 2 + rows * (4 + 4 + 8 + 8 + 4 + 8 * 2)) as f64;
    let floor = bytes / (gbs * 1e9) * 1e9 / rows as f64;
    eprintln!("bandwidth {gbs:.1} GB/s; memory floor {floor:.2} ns per row per sweep");

    let dir = Path::new(DIR);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut csv =
        String::from("scene,rows,family,solver,threads,per,ns_per_row,plain_ns,ratio,memory_floor_ns,bandwidth_gb_s\n");
    for r in &out {
        let (plain, ratio) = match r.plain {
            Some(p) => (format!("{p:?}"), format!("{:?}", r.ns / p)),
            None => (String::new(), String::new()),
        };
        csv += &format!(
            "{},{},{},{},{},{},{:?},{plain},{ratio},{floor:?},{gbs:?}\n",
            quoted(&r.scene),
            r.rows,
            r.family,
            quoted(&r.solver),
            r.threads,
            if r.product {
                "frame"
            } else if r.per_step {
                "step"
            } else {
                "iteration"
            },
            r.ns
        );
    }
    let tmp = dir.join(".performance.csv.tmp");
    let mut f = std::fs::File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    f.write_all(csv.as_bytes()).and_then(|_| f.sync_all()).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join("performance.csv")).map_err(|e| format!("{}: {e}", dir.display()))?;

    let written = draw(&out, rows, plain_gs, plain_jac, floor, gbs)?;
    eprintln!("wrote {} and {written} figure files", dir.join("performance.csv").display());
    Ok(())
}
