//! Particle-particle contact (particles with a radius), under every solver family.

use solverlab_core::sim::Simulation;
use solverlab_core::{NullObserver, Particle, Plane, Scene, Vec3};
use solverlab_solvers::{build, preset};

fn two_balls(v: f64) -> Scene {
    let mut s = Scene::new("two");
    s.gravity = Vec3::zeros();
    for (x, vx) in [(0.0, -v), (0.09, v)] {
        let mut b = Particle::new(Vec3::new(x, 0.0, 0.0), 1.0);
        b.radius = 0.05;
        b.v = Vec3::new(vx, 0.0, 0.0);
        s.add(b);
    }
    s
}

#[test]
fn overlapping_balls_are_pushed_apart_and_conserve_momentum() {
    let s = two_balls(0.0);
    for name in ["gs", "jacobi", "xpbd", "pgs", "cg", "direct"] {
        let mut solver = build(&preset(name).unwrap().config, name).unwrap();
        let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, 1).unwrap();
        for _ in 0..30 {
            let r = sim.step_frame(&mut NullObserver).unwrap();
            assert!(r.metrics.momentum.norm() < 1e-12, "{name}: momentum {}", r.metrics.momentum);
        }
        // PGS leaves its slop (5 mm) uncorrected by design, and Baumgarte closes the rest by 20 %
        // a frame; the others separate fully.
        let slop = if name == "pgs" { 0.005 } else { 0.0 };
        let d = (sim.state.x[1] - sim.state.x[0]).norm();
        assert!(d >= 0.1 - slop - 1e-4, "{name}: still overlapping, distance {d}");
    }
}

#[test]
fn separating_balls_are_never_pulled_together() {
    // Touching, overlapping slightly, and flying apart: the contact may push, never hold them.
    let s = two_balls(2.0);
    let mut free = s.clone();
    free.particles.iter_mut().for_each(|p| p.radius = 0.0);
    for name in ["gs", "pgs", "cg", "direct"] {
        let run = |scene: &Scene| {
            let mut solver = build(&preset(name).unwrap().config, name).unwrap();
            let mut sim = Simulation::new(scene, solver.as_mut(), scene.dt, 1).unwrap();
            for _ in 0..10 {
                sim.step_frame(&mut NullObserver).unwrap();
            }
            (sim.state.x[1] - sim.state.x[0]).norm()
        };
        assert!(run(&s) >= run(&free) - 1e-12, "{name}: the contact pulled");
    }
}

#[test]
fn a_pile_of_balls_settles_without_deep_overlap() {
    let s = solverlab_scenes::resolve("balls", &["n=200".into()]).unwrap();
    for name in ["gs", "pgs", "cg"] {
        let mut solver = build(&preset(name).unwrap().config, name).unwrap();
        let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, 1).unwrap();
        let mut last = None;
        for _ in 0..150 {
            last = Some(sim.step_frame(&mut NullObserver).unwrap());
        }
        let m = last.unwrap().metrics;
        assert!(m.max_penetration < 0.2 * 0.05, "{name}: overlap {} of a 5 cm ball", m.max_penetration);
        assert!(m.kinetic_energy < 0.05 * 200.0 * 9.81 * 0.05, "{name}: still moving, KE {}", m.kinetic_energy);
    }
}

/// The position-level solvers' restitution (`core::integrate::apply_restitution`): a particle
/// dropped from 1 m onto a plane with e = 0.5 bounces back to about e²·h = 0.25 m under relax
/// and the Newton solvers alike (PGS has its own test in `pgs.rs`); with e = 0 it stays down.
#[test]
fn position_solvers_bounce_a_dropped_particle_to_e_squared_of_its_height() {
    for (e, expected) in [(0.5, 0.25), (0.0, 0.0)] {
        let mut s = Scene::new("drop");
        s.add(Particle::new(Vec3::new(0.0, 1.0, 0.0), 1.0));
        s.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: 0.0, restitution: e });
        for name in ["gs", "cg", "direct"] {
            let mut solver = build(&preset(name).unwrap().config, name).unwrap();
            let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, 1).unwrap();
            let mut heights = Vec::new();
            for _ in 0..150 {
                sim.step_frame(&mut NullObserver).unwrap();
                heights.push(sim.state.x[0].y);
            }
            let touch = heights.iter().position(|&y| y < 0.02).unwrap();
            let apex = heights[touch..].iter().copied().fold(0.0, f64::max);
            assert!((apex - expected).abs() < 0.04, "{name}, e = {e}: apex {apex} m, expected {expected} m");
        }
    }
}

/// `speculative_margin` in every family with rigid bodies: two spheres moving together at
/// 3 m/s, 5 cm apart (beyond each family's base margin, within the fastest body's travel over
/// two steps), hold a speculative contact under `fastest` and none under `relative`, whose
/// rule reads their closing speed of zero, or under `fixed`, whose margin is the base alone;
/// the contact never acts, so every run moves the spheres alike.
#[test]
fn a_relative_margin_drops_the_contacts_of_bodies_moving_together() {
    use solverlab_core::rigid::{RigidBody, Shape};
    let mut s = Scene::new("together");
    s.gravity = Vec3::zeros();
    for x in [0.0, 0.15] {
        let mut b = RigidBody::new(Shape::Sphere { radius: 0.05 }, 1.0, Vec3::new(x, 1.0, 0.0));
        b.v = Vec3::new(0.0, 3.0, 0.0);
        s.rigid.push(b);
    }
    for name in ["gs", "xpbd", "cg", "direct", "pgs", "tgs-soft", "soft-step", "avbd"] {
        let p = preset(name).unwrap();
        let run = |rule: &str| {
            let config = p.config.with("speculative_margin", toml::Value::String(rule.into())).unwrap();
            let mut solver = build(&config, name).unwrap();
            let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, config.default_substeps()).unwrap();
            let mut held = 0;
            for _ in 0..5 {
                sim.step_frame(&mut NullObserver).unwrap();
                let mut out = Vec::new();
                sim.solver().rigid_contacts(&mut out);
                held += out.len();
            }
            (held, sim.state.rigid.iter().map(|b| b.x).collect::<Vec<_>>())
        };
        let ((fastest, x_fastest), (relative, x_relative)) = (run("fastest"), run("relative"));
        let (fixed, x_fixed) = run("fixed");
        assert!(fastest > 0, "{name}: the fastest body's margin holds a contact");
        assert_eq!(relative, 0, "{name}: no closing speed, no contact");
        assert_eq!(fixed, 0, "{name}: 5 cm apart, beyond the fixed margin");
        for (a, b) in x_fastest.iter().zip(&x_relative).chain(x_fastest.iter().zip(&x_fixed)) {
            assert!((a - b).norm() < 1e-12, "{name}: the spheres moved apart: {a} against {b}");
        }
    }
}
