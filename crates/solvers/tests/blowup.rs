//! A run that blows up without producing a NaN is stopped and named (`core/src/sim.rs`).

use solverlab_core::sim::{SimError, Simulation};
use solverlab_core::NullObserver;
use solverlab_solvers::{build, RelaxConfig, SolverConfig};

/// Jacobi at ω = 1.99 on the default cloth with a 10 s step stretches its sticks thousands of
/// times their rest length in the first frame, with every coordinate finite: the run stops with
/// `BlewUp` naming the frame, the solver and the stretch; the same cloth at ω = 1 and 1/60 s runs
/// 60 frames without tripping either bound.
#[test]
fn a_blown_up_cloth_is_stopped_and_named() {
    let scene = solverlab_scenes::resolve("cloth", &[]).unwrap();
    let wild =
        SolverConfig::Relax(RelaxConfig { mode: solverlab_solvers::Mode::Jacobi, omega: 1.99, ..Default::default() });
    let mut solver = build(&wild, "wild").unwrap();
    let mut sim = Simulation::new(&scene, solver.as_mut(), 10.0, 1).unwrap();
    let mut outcome = Ok(());
    for _ in 0..20 {
        if let Err(e) = sim.step_frame(&mut NullObserver) {
            outcome = Err(e);
            break;
        }
    }
    match outcome {
        Err(SimError::BlewUp { frame, solver, quantity }) => {
            assert_eq!((frame, solver.as_str()), (1, "wild"));
            assert!(quantity.contains("stretched") && quantity.contains("100"), "{quantity}");
            assert_eq!(sim.frame(), 0, "the blown-up frame does not count as completed");
        }
        other => panic!("expected a blow-up, got {other:?}"),
    }
    let tame = SolverConfig::Relax(RelaxConfig { mode: solverlab_solvers::Mode::Jacobi, ..Default::default() });
    let mut solver = build(&tame, "tame").unwrap();
    let mut sim = Simulation::new(&scene, solver.as_mut(), scene.dt, 1).unwrap();
    for _ in 0..60 {
        sim.step_frame(&mut NullObserver).unwrap();
    }
}

/// The energy bound: a 1 kg ball at rest without gravity has the energy scale 1 J; kicked to
/// 10⁴ m/s (5·10⁷ J) it trips the 10⁶ × bound in the first frame, kicked to 10 m/s (50 J) not.
#[test]
fn runaway_kinetic_energy_is_a_blow_up() {
    use solverlab_core::{Particle, Scene, Vec3};
    for (speed, blows) in [(1e4, true), (10.0, false)] {
        let mut scene = Scene::new("ball");
        scene.gravity = Vec3::zeros();
        scene.particles.push(Particle::new(Vec3::zeros(), 1.0));
        let cfg = SolverConfig::Relax(RelaxConfig::default());
        let mut solver = build(&cfg, "gs").unwrap();
        let mut sim = Simulation::new(&scene, solver.as_mut(), scene.dt, 1).unwrap();
        // The kick comes after the start, so that the scale stays that of a ball at rest.
        sim.state.x_prev[0] = sim.state.x[0] - Vec3::new(speed, 0.0, 0.0) * scene.dt;
        let r = sim.step_frame(&mut NullObserver);
        assert_eq!(matches!(r, Err(SimError::BlewUp { .. })), blows, "{speed} m/s: {r:?}");
    }
}
