//! Contact generation: does it grow linearly with the scene?
//!
//! `cargo bench -p solverlab-benches --bench contacts` times the uniform-grid particle broadphase
//! against the all-pairs reference on piles of 1000 and 4000 balls, and box-body contact
//! generation (broadphase on bounding spheres, then vertex-face and edge-edge tests per pair) on
//! pyramids of 55, 210 and 820 boxes, and the rigid box–box test (`rigid::collide::box_box`) on
//! 1,000 resting pairs (a box on a box, nearly level, faces touching: the separating-axis test
//! and the face clipping) and 1,000 pairs at random poses (mostly separated: the test alone).
//! The lines printed at the end give ns per particle, per body or per pair, medians of 11
//! timings taken in one run: constant across sizes means linear growth.

#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use solverlab_benches::median_seconds;
use solverlab_core::broadphase::{pairs, pairs_brute_force};
use solverlab_core::{Scene, Vec3};

/// The contact margin: boxes of the pyramid start exactly touching, so a margin (as the solvers
/// use for speculative rows) makes every resting contact count.
const MARGIN: f64 = 0.01;

fn balls(n: usize) -> Scene {
    solverlab_scenes::resolve("balls", &[format!("n={n}")]).expect("balls build")
}

fn pyramid(base: usize) -> Scene {
    solverlab_scenes::resolve("box-pyramid", &[format!("base={base}")]).expect("pyramid builds")
}

fn positions(scene: &Scene) -> (Vec<Vec3>, Vec<f64>) {
    (scene.particles.iter().map(|p| p.x).collect(), scene.particles.iter().map(|p| p.radius).collect())
}

fn broadphase(c: &mut Criterion) {
    let mut group = c.benchmark_group("broadphase_balls");
    group.sample_size(20);
    for n in [1000, 4000] {
        let (x, r) = positions(&balls(n));
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(format!("grid_{n}"), |b| b.iter(|| pairs(&x, &r, 0.0, |_, _| false)));
        group.bench_function(format!("all_pairs_{n}"), |b| b.iter(|| pairs_brute_force(&x, &r, 0.0)));
    }
    group.finish();
    for n in [1000, 4000] {
        let (x, r) = positions(&balls(n));
        let grid = median_seconds(|| drop(pairs(&x, &r, 0.0, |_, _| false)));
        let brute = median_seconds(|| drop(pairs_brute_force(&x, &r, 0.0)));
        println!(
            "broadphase, {n} balls: grid {:.1} ns per ball, all pairs {:.1} ns per ball, ratio all pairs / grid {:.1}",
            grid / n as f64 * 1e9,
            brute / n as f64 * 1e9,
            brute / grid
        );
    }
}

fn box_contacts(c: &mut Criterion) {
    let mut group = c.benchmark_group("box_contacts_pyramid");
    group.sample_size(20);
    for base in [10, 20, 40] {
        let scene = pyramid(base);
        let x: Vec<Vec3> = scene.particles.iter().map(|p| p.x).collect();
        group.throughput(Throughput::Elements(scene.bodies.len() as u64));
        group.bench_function(format!("base_{base}"), |b| {
            b.iter(|| solverlab_core::bodies::contacts(&scene.bodies, &x, MARGIN))
        });
    }
    group.finish();
    for base in [10, 20, 40] {
        let scene = pyramid(base);
        let x: Vec<Vec3> = scene.particles.iter().map(|p| p.x).collect();
        let found = solverlab_core::bodies::contacts(&scene.bodies, &x, MARGIN).len();
        let t = median_seconds(|| drop(solverlab_core::bodies::contacts(&scene.bodies, &x, MARGIN)));
        println!(
            "box contacts, pyramid of {} boxes: {found} contacts, {:.0} ns per box",
            scene.bodies.len(),
            t / scene.bodies.len() as f64 * 1e9
        );
    }
}

/// Pairs of boxes (half extents 0.5³ and 0.5 × 0.25 × 0.4): `resting`, the second on the
/// first, its centre from 3 mm below to 1 mm above touching height, each box turned by at most
/// 0.01 rad about each axis; or the first at the origin and the second within 1.25 m of it
/// along each axis, both at random orientations. A fixed linear congruential sequence: the same
/// pairs every run.
fn box_pairs(resting: bool) -> Vec<(solverlab_core::rigid::Pose, solverlab_core::rigid::Pose)> {
    use nalgebra::UnitQuaternion;
    use solverlab_core::rigid::Pose;
    let mut seed = 12345u64;
    let mut u = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
    };
    let (turn, spread) = if resting { (0.02, 0.01) } else { (6.0, 2.5) };
    (0..1000)
        .map(|_| {
            let mut turned = || UnitQuaternion::from_euler_angles(u() * turn, u() * turn, u() * turn);
            let (qa, qb) = (turned(), turned());
            let xa = Vec3::new(u(), u(), u()) * spread;
            let xb = if resting {
                Vec3::new(u() * 0.5, 0.749 + u() * 0.004, u() * 0.5)
            } else {
                Vec3::new(u(), u(), u()) * spread
            };
            (Pose { x: if resting { xa * 0.5 } else { Vec3::zeros() }, q: qa }, Pose { x: xb, q: qb })
        })
        .collect()
}

fn box_box(c: &mut Criterion) {
    let (ha, hb) = (Vec3::new(0.5, 0.5, 0.5), Vec3::new(0.5, 0.25, 0.4));
    let mut out = Vec::with_capacity(16);
    let mut run = |pairs: &[(solverlab_core::rigid::Pose, solverlab_core::rigid::Pose)]| {
        for (a, b) in pairs {
            out.clear();
            solverlab_core::rigid::collide::box_box(ha, a, hb, b, MARGIN, &mut out);
            std::hint::black_box(&out);
        }
    };
    let mut group = c.benchmark_group("box_box");
    group.sample_size(20);
    for (name, resting) in [("resting", true), ("random", false)] {
        let pairs = box_pairs(resting);
        group.throughput(Throughput::Elements(pairs.len() as u64));
        group.bench_function(name, |b| b.iter(|| run(&pairs)));
    }
    group.finish();
    for (name, resting) in [("resting", true), ("random", false)] {
        let pairs = box_pairs(resting);
        let t = median_seconds(|| run(&pairs));
        println!("box-box, {name} pairs: {:.0} ns per pair", t / pairs.len() as f64 * 1e9);
    }
}

criterion_group!(benches, broadphase, box_contacts, box_box);
criterion_main!(benches);
