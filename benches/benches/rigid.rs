//! Rigid bodies under sequential impulses: the cost of a contact row against a plain loop, and
//! the 210-box pyramid against real time.
//!
//! `cargo bench -p solverlab-benches --bench rigid` prints:
//!
//! * ns per contact point per sweep of `pgs` on the resting 210-box pyramid (the marginal cost of
//!   10 more sweeps, divided by sweeps and points; the point's share of its manifold's friction
//!   and twist rows included), with the manifolds' normal rows as blocks (the default) and point
//!   by point, next to a plain hand-written loop that does the normal row of the
//!   same number of points over structure-of-arrays data (gather two bodies' velocities and
//!   inverse inertia, the relative normal speed, the clamped accumulated impulse, the scatter);
//! * the 210-box pyramid's time per frame at 4 substeps (`pgs`, 10 sweeps, and `soft-step`)
//!   against the 16.7 ms of real time a 60 Hz frame has.
//!
//! Medians of 11 timings in one run; the machine is shared, so read the ratios, not the times.

#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::Matrix3;
use solverlab_benches::median_seconds;
use solverlab_core::sim::Simulation;
use solverlab_core::{NullObserver, Scene, Vec3};
use solverlab_solvers::{PgsConfig, PgsSolver};

fn pyramid(base: usize) -> Scene {
    solverlab_scenes::resolve("rigid-pyramid", &[format!("base={base}")]).expect("pyramid builds")
}

/// A settled pyramid (60 frames) and a solver at `iterations` sweeps with no tolerance, so that it
/// runs exactly that many.
fn settled(scene: &Scene, iterations: u32, block: bool) -> (PgsSolver, solverlab_core::State) {
    let cfg = PgsConfig { iterations, tolerance: 0.0, block, ..PgsConfig::default() };
    let mut solver = PgsSolver::new(cfg, "pgs").expect("valid");
    let state = {
        let mut sim = Simulation::new(scene, &mut solver, scene.dt, 1).expect("prepares");
        for _ in 0..60 {
            sim.step_frame(&mut NullObserver).expect("steps");
        }
        sim.state.clone()
    };
    (solver, state)
}

/// One frame from `state` (a copy), returning the number of contact points of its last step.
fn frame(scene: &Scene, solver: &mut PgsSolver, state: &solverlab_core::State) -> usize {
    let mut sim = Simulation::from_state(scene, solver, state.clone(), scene.dt, 1, 60).expect("prepares");
    sim.step_frame(&mut NullObserver).expect("steps");
    let mut c = Vec::new();
    solverlab_core::Solver::rigid_contacts(sim.solver(), &mut c);
    c.len()
}

/// The plain loop: `n` normal rows between random body pairs over structure-of-arrays data.
struct Plain {
    a: Vec<usize>,
    b: Vec<usize>,
    ra: Vec<Vec3>,
    rb: Vec<Vec3>,
    n: Vec<Vec3>,
    m: Vec<f64>,
    lambda: Vec<f64>,
    v: Vec<Vec3>,
    w: Vec<Vec3>,
    inv_m: Vec<f64>,
    inv_i: Vec<Matrix3<f64>>,
}

impl Plain {
    fn new(points: usize, bodies: usize) -> Self {
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut vec = |s: f64| Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5) * s;
        let (mut a, mut b, mut ra, mut rb, mut n) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for k in 0..points {
            a.push((k / 4) % bodies);
            b.push((k / 4 + 1) % bodies);
            ra.push(vec(0.5));
            rb.push(vec(0.5));
            n.push(Vec3::y());
        }
        Self {
            a,
            b,
            ra,
            rb,
            n,
            m: vec![0.1; points],
            lambda: vec![0.0; points],
            v: (0..bodies).map(|_| vec(0.01)).collect(),
            w: (0..bodies).map(|_| vec(0.01)).collect(),
            inv_m: vec![0.1; bodies],
            inv_i: vec![Matrix3::identity() * 2.4; bodies],
        }
    }

    fn sweep(&mut self) {
        for k in 0..self.a.len() {
            let (a, b) = (self.a[k], self.b[k]);
            let (ra, rb, n) = (self.ra[k], self.rb[k], self.n[k]);
            let rel = self.v[a] + self.w[a].cross(&ra) - self.v[b] - self.w[b].cross(&rb);
            let new = (self.lambda[k] - self.m[k] * n.dot(&rel)).max(0.0);
            let p = n * (new - self.lambda[k]);
            self.lambda[k] = new;
            self.v[a] += p * self.inv_m[a];
            self.w[a] += self.inv_i[a] * ra.cross(&p);
            self.v[b] -= p * self.inv_m[b];
            self.w[b] -= self.inv_i[b] * rb.cross(&p);
        }
    }
}

fn rigid(c: &mut Criterion) {
    let scene = pyramid(20);
    let (mut s10, state) = settled(&scene, 10, true);
    let mut group = c.benchmark_group("rigid_pyramid_210");
    group.sample_size(10);
    group.bench_function("pgs_frame_10_sweeps", |b| b.iter(|| frame(&scene, &mut s10, &state)));
    group.finish();
    let points = frame(&scene, &mut s10, &state);
    let mut plain = Plain::new(points, scene.rigid.len());
    let tp = median_seconds(|| {
        for _ in 0..10 {
            plain.sweep();
        }
    }) / (10.0 * points as f64)
        * 1e9;
    for (label, block) in [("blocks", true), ("point by point", false)] {
        let (mut s10, state) = settled(&scene, 10, block);
        let (mut s20, _) = settled(&scene, 20, block);
        let t10 = median_seconds(|| {
            frame(&scene, &mut s10, &state);
        });
        let t20 = median_seconds(|| {
            frame(&scene, &mut s20, &state);
        });
        let per_point = (t20 - t10) / (10.0 * points as f64) * 1e9;
        println!(
            "rigid pyramid (210 boxes, {points} contact points): pgs ({label}) {per_point:.1} ns per point per sweep, plain normal-row loop {tp:.1} ns, ratio {:.2}",
            per_point / tp
        );
    }
    for name in ["pgs", "soft-step"] {
        let p = solverlab_solvers::preset(name).expect("preset");
        let mut solver = solverlab_solvers::build(&p.config, name).expect("builds");
        let mut sim = Simulation::new(&scene, solver.as_mut(), scene.dt, 4).expect("prepares");
        for _ in 0..60 {
            sim.step_frame(&mut NullObserver).expect("steps");
        }
        let t = median_seconds(|| {
            sim.step_frame(&mut NullObserver).expect("steps");
        });
        println!(
            "rigid pyramid (210 boxes), {name} at 4 substeps: {:.2} ms per frame, {:.2}× real time (16.7 ms)",
            t * 1e3,
            t / (1.0 / 60.0)
        );
    }
}

criterion_group!(benches, rigid);
criterion_main!(benches);
