//! Solver kernels against plain hand-written loops.
//!
//! `cargo bench -p solverlab-benches` reports, per group, time per sweep with a throughput of
//! one element per constraint and iteration, so criterion's `elem/s` is the inverse of the ns per
//! constraint per iteration. The `ratio` lines printed at the end time solver and reference in
//! alternation within one run, which is what to compare on a shared machine. The linear algebra of
//! the explicit-Jacobian solvers (assembly, CG, faer's Cholesky, SpMV) is in `linear.rs`.

#![allow(missing_docs)] // criterion_group! generates undocumented items

use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use solverlab_benches::{fastest_seconds_with, plain_gauss_seidel, plain_jacobi, PlainSticks};
use solverlab_core::{NullObserver, Scene, Solver, State, StepContext};
use solverlab_solvers::{Mode, Order, PgsConfig, PgsSolver, RelaxConfig, RelaxSolver};

const ITERATIONS: usize = 10;

fn cloth(n: usize) -> Scene {
    solverlab_scenes::resolve("cloth", &[format!("nx={n}"), format!("ny={n}")]).expect("cloth builds")
}

/// A predicted state: one Verlet step of gravity, so that every stick has work to do.
fn predicted(scene: &Scene) -> State {
    let mut state = scene.initial_state(scene.dt);
    solverlab_core::integrate::predict(scene, &[], &mut state, scene.dt);
    state
}

/// A relaxation solver running exactly `ITERATIONS` sweeps (tolerance 0: no violation pass, as
/// in the plain loops).
fn relax(scene: &Scene, mode: Mode) -> RelaxSolver {
    let omega = if mode == Mode::Jacobi { 1.5 } else { 1.0 };
    let cfg = RelaxConfig { mode, omega, iterations: ITERATIONS as u32, tolerance: 0.0, ..Default::default() };
    let mut s = RelaxSolver::new(cfg, "bench").unwrap();
    s.prepare(scene).unwrap();
    s
}

fn sweeps(c: &mut Criterion) {
    let scene = cloth(128);
    let sticks = PlainSticks::from_scene(&scene);
    let state = predicted(&scene);
    let ctx = StepContext::new(&scene, scene.dt);
    let mut group = c.benchmark_group("relax_cloth128");
    group.throughput(Throughput::Elements((sticks.len() * ITERATIONS) as u64));
    group.sample_size(20);
    for (name, mode) in [("gauss_seidel", Mode::GaussSeidel), ("jacobi", Mode::Jacobi)] {
        let mut solver = relax(&scene, mode);
        group.bench_function(format!("solver_{name}"), |b| {
            b.iter_batched_ref(
                || state.clone(),
                |st| solver.solve(&ctx, st, &mut NullObserver).unwrap(),
                BatchSize::LargeInput,
            )
        });
    }
    let plain: Vec<[f64; 3]> = state.x.iter().map(|v| [v.x, v.y, v.z]).collect();
    group.bench_function("plain_gauss_seidel", |b| {
        b.iter_batched_ref(
            || plain.clone(),
            |x| {
                for _ in 0..ITERATIONS {
                    plain_gauss_seidel(x, &sticks)
                }
            },
            BatchSize::LargeInput,
        )
    });
    let (mut dx, mut count) = (vec![[0.0; 3]; plain.len()], vec![0u32; plain.len()]);
    group.bench_function("plain_jacobi", |b| {
        b.iter_batched_ref(
            || plain.clone(),
            |x| {
                for _ in 0..ITERATIONS {
                    plain_jacobi(x, &sticks, 1.5, &mut dx, &mut count)
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
    print_ratios(&scene, &sticks, &state);
}

/// A plain reference sweep over positions, with Jacobi's scratch.
type PlainSweep<'a> = dyn Fn(&mut Vec<[f64; 3]>, &mut Vec<[f64; 3]>, &mut Vec<u32>) + Sync + 'a;

/// The median of `v`.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times solver and reference in alternation (median of 15 rounds each) and prints the ratios:
/// each relaxation mode against the plain loop that does its arithmetic (coloured Gauss-Seidel
/// against the plain loop over the same coloured order), all on one thread; then coloured
/// Gauss-Seidel and Jacobi on two threads against one, on a 256 × 256 cloth.
fn print_ratios(scene: &Scene, sticks: &PlainSticks, state: &State) {
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let per = (sticks.len() * ITERATIONS) as f64;
    let colored = sticks.colored();
    let plain0: Vec<[f64; 3]> = state.x.iter().map(|v| [v.x, v.y, v.z]).collect();
    let cases: [(&str, RelaxConfig, &PlainSweep); 3] = [
        ("Gauss-Seidel (natural order)", RelaxConfig::default(), &|x, _, _| plain_gauss_seidel(x, sticks)),
        ("Gauss-Seidel (coloured order)", RelaxConfig { order: Order::Colored, ..Default::default() }, &|x, _, _| {
            plain_gauss_seidel(x, &colored)
        }),
        (
            "Jacobi (averaged, ω = 1.5)",
            RelaxConfig { mode: Mode::Jacobi, omega: 1.5, ..Default::default() },
            &|x, dx, c| plain_jacobi(x, sticks, 1.5, dx, c),
        ),
    ];
    for (name, cfg, plain) in cases {
        let cfg = RelaxConfig { iterations: ITERATIONS as u32, tolerance: 0.0, ..cfg };
        let mut solver = RelaxSolver::new(cfg, "bench").unwrap();
        solver.prepare(scene).unwrap();
        let ctx = StepContext::new(scene, scene.dt);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let (mut dx, mut count) = (vec![[0.0; 3]; plain0.len()], vec![0u32; plain0.len()]);
        one_thread.install(|| {
            for _ in 0..15 {
                let mut st = state.clone();
                let t = Instant::now();
                solver.solve(&ctx, &mut st, &mut NullObserver).unwrap();
                a.push(t.elapsed().as_secs_f64() * 1e9 / per);
                let mut x = plain0.clone();
                let t = Instant::now();
                for _ in 0..ITERATIONS {
                    plain(&mut x, &mut dx, &mut count);
                }
                b.push(t.elapsed().as_secs_f64() * 1e9 / per);
                std::hint::black_box((&st, &x));
            }
        });
        let (s, p) = (median(a), median(b));
        println!(
            "ratio relax {name} on cloth 128×128 ({} sticks), one thread: solver {s:.2} ns, plain loop {p:.2} ns per constraint per iteration, ratio {:.2}",
            sticks.len(),
            s / p
        );
    }
    let big = cloth(256);
    let big_state = predicted(&big);
    let ctx = StepContext::new(&big, big.dt);
    for (name, cfg) in [
        ("coloured Gauss-Seidel", RelaxConfig { order: Order::Colored, ..Default::default() }),
        ("Jacobi", RelaxConfig { mode: Mode::Jacobi, omega: 1.5, ..Default::default() }),
    ] {
        let cfg = RelaxConfig { iterations: ITERATIONS as u32, tolerance: 0.0, ..cfg };
        let mut solver = RelaxSolver::new(cfg, "bench").unwrap();
        solver.prepare(&big).unwrap();
        let rows = big.constraints.len() as f64 * ITERATIONS as f64;
        let mut time = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            median(
                (0..11)
                    .map(|_| {
                        let mut st = big_state.clone();
                        pool.install(|| {
                            let t = Instant::now();
                            solver.solve(&ctx, &mut st, &mut NullObserver).unwrap();
                            t.elapsed().as_secs_f64() * 1e9 / rows
                        })
                    })
                    .collect(),
            )
        };
        let (t1, t2) = (time(1), time(2));
        println!(
            "threads relax {name} on cloth 256×256 ({} sticks): 1 thread {t1:.2} ns, 2 threads {t2:.2} ns per constraint per iteration, speed-up {:.2}",
            big.constraints.len(),
            t1 / t2
        );
    }
}

fn pgs_solver(scene: &Scene, iterations: usize) -> PgsSolver {
    // Tolerance 0: exactly `iterations` sweeps, and no violation computed between them.
    let cfg = PgsConfig { iterations: iterations as u32, tolerance: 0.0, ..Default::default() };
    let mut s = PgsSolver::new(cfg, "bench").unwrap();
    s.prepare(scene).unwrap();
    s
}

fn chain(links: usize) -> Scene {
    solverlab_scenes::resolve("chain", &[format!("links={links}"), "start=vertical".into()]).expect("chain builds")
}

/// PGS on the 128×128 cloth and a 1000-link chain: whole steps of 10 iterations in criterion,
/// then the marginal cost of one iteration per row, `(t(30 it) − t(1 it)) / (29 · rows)`, which
/// leaves out gathering and preparing the rows, and that left-out work in iterations (as the
/// performance experiment measures them).
fn pgs(c: &mut Criterion) {
    let mut group = c.benchmark_group("pgs_step_10_iterations");
    group.sample_size(20);
    for (name, scene) in [("cloth128", cloth(128)), ("chain1000", chain(1000))] {
        let state = predicted(&scene);
        let rows = scene.constraints.len();
        group.throughput(Throughput::Elements((rows * ITERATIONS) as u64));
        let mut solver = pgs_solver(&scene, ITERATIONS);
        let ctx = StepContext::new(&scene, scene.dt);
        group.bench_function(name, |b| {
            b.iter_batched_ref(
                || state.clone(),
                |st| solver.solve(&ctx, st, &mut NullObserver).unwrap(),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
    for (name, scene) in [("cloth 128×128", cloth(128)), ("chain of 1000", chain(1000))] {
        let state = predicted(&scene);
        let ctx = StepContext::new(&scene, scene.dt);
        // The fastest of 11 solves (other work on a shared machine only adds time), one and 30
        // iterations taken in turn three times: one iteration is the marginal cost
        // (t(30) − t(1)) / 29, the work done once a step t(1) less one iteration.
        let mut solvers = [pgs_solver(&scene, 1), pgs_solver(&scene, 30)];
        let mut fastest = [f64::INFINITY; 2];
        for _ in 0..3 {
            for (solver, best) in solvers.iter_mut().zip(&mut fastest) {
                let t = fastest_seconds_with(
                    || state.clone(),
                    |mut st| {
                        solver.solve(&ctx, &mut st, &mut NullObserver).unwrap();
                        std::hint::black_box(&st);
                    },
                );
                *best = best.min(t);
            }
        }
        let [t1, t30] = fastest;
        let rows = scene.constraints.len() as f64;
        let iteration = (t30 - t1) / 29.0;
        let step = t1 - iteration;
        println!(
            "pgs on {name} ({rows} rows): one iteration (a biased and a split sweep) {:.2} ns per row; gather + prepare + warm start + integrate {:.3} ms = {:.2} iterations",
            iteration / rows * 1e9,
            step * 1e3,
            step / iteration
        );
    }
}

criterion_group!(benches, sweeps, pgs);
criterion_main!(benches);
