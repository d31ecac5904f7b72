//! A run that blows up without producing a NaN is stopped and named (`core/src/sim.rs`).

use solverlab_core::sim::{SimError, Simulation};
use solverlab_core::NullObserver;
use solverlab_solvers::{build, RelaxConfig, SolverConfig};

/// Jacobi at ω = 1.99 on the default cloth with a 10 s step stretches its sticks thousands of
/// times their rest length in the first frame, with every coordinate finite: the run stops with
/// `BlewUp` naming the frame, the solver and the stretch; the same cloth at ω = 1 and 1/60 s runs
/// 60 frames without tripping any bound.
#[test]
fn a_blown_up_cloth_is_stopped_and_named() {
    let scene = solverlab_scenes::resolve("cloth", &[]).unwrap();
    let wild =
        SolverConfig::from(RelaxConfig { mode: solverlab_solvers::Mode::Jacobi, omega: 1.99, ..Default::default() });
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
    let tame = SolverConfig::from(RelaxConfig { mode: solverlab_solvers::Mode::Jacobi, ..Default::default() });
    let mut solver = build(&tame, "tame").unwrap();
    let mut sim = Simulation::new(&scene, solver.as_mut(), scene.dt, 1).unwrap();
    for _ in 0..60 {
        sim.step_frame(&mut NullObserver).unwrap();
    }
}

/// The energy bounds: a 1 kg ball at rest without gravity has the energy scale 1 J. Kicked to
/// 10⁴ m/s (5·10⁷ J) it trips the 10⁶ × bound in the first frame; kicked to 10 m/s (50 J) it
/// trips the energy-gain bound (the scene puts no energy in, and 50 J is more than ten scales
/// above the 0 J it started with); kicked to 4 m/s (8 J), neither.
#[test]
fn runaway_kinetic_energy_is_a_blow_up() {
    use solverlab_core::{Particle, Scene, Vec3};
    for (speed, blows) in [(1e4, true), (10.0, true), (4.0, false)] {
        let mut scene = Scene::new("ball");
        scene.gravity = Vec3::zeros();
        scene.particles.push(Particle::new(Vec3::zeros(), 1.0));
        let cfg = SolverConfig::from(RelaxConfig::default());
        let mut solver = build(&cfg, "gs").unwrap();
        let mut sim = Simulation::new(&scene, solver.as_mut(), scene.dt, 1).unwrap();
        // The kick comes after the start, so that the scale stays that of a ball at rest.
        sim.state.x_prev[0] = sim.state.x[0] - Vec3::new(speed, 0.0, 0.0) * scene.dt;
        let r = sim.step_frame(&mut NullObserver);
        assert_eq!(matches!(r, Err(SimError::BlewUp { .. })), blows, "{speed} m/s: {r:?}");
    }
}

/// A run that tears goes on, and the frame is named: the textbook sequential impulses
/// (`split_impulse = false`) stretch the swinging chain's links to 2.6 times their length; the
/// simulation returns every frame (no error), and `tear` names the frames whose largest tear is
/// above 50 %. Under the `pgs` preset (at most 12 %) it names none.
#[test]
fn a_torn_run_goes_on_and_the_tear_is_named() {
    use solverlab_core::sim::{tear, TEAR};
    use solverlab_solvers::{preset, PgsConfig};
    let scene = solverlab_scenes::resolve("chain", &[]).unwrap();
    let textbook = SolverConfig::from(PgsConfig { split_impulse: false, ..Default::default() });
    for (config, tears) in [(textbook, true), (preset("pgs").unwrap().config, false)] {
        let mut solver = build(&config, "pgs").unwrap();
        let mut sim = Simulation::new(&scene, solver.as_mut(), scene.dt, 1).unwrap();
        let mut first = None;
        for _ in 0..120 {
            let r = sim.step_frame(&mut NullObserver).unwrap();
            if let (None, Some(what)) = (first, tear(&r.metrics)) {
                assert!(r.metrics.tear > TEAR && what.contains("torn by"), "{what}");
                first = Some(r.frame);
            }
        }
        assert_eq!(first.is_some(), tears, "first torn frame {first:?}");
    }
}
