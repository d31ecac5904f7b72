//! A NaN that reaches a solver ends the run as a divergence naming the frame and the solver,
//! under every preset, on particles and on rigid bodies: no solver panics on it.

use solverlab_core::sim::{SimError, Simulation};
use solverlab_core::{NullObserver, Vec3};
use solverlab_solvers::{build, presets};

#[test]
fn a_nan_velocity_is_a_divergence_under_every_preset_never_a_panic() {
    let nan = Vec3::new(f64::NAN, 0.0, 0.0);
    for scene_name in ["rigid-stack", "rigid-chain", "rigid-ragdoll", "chain", "box-stack", "ragdoll"] {
        let scene = solverlab_scenes::resolve(scene_name, &[]).unwrap();
        for p in presets() {
            if p.config.kind() == "block_descent" && (scene.has_rigid() || !scene.bodies.is_empty()) {
                continue; // refused in prepare (every_scene.rs checks the message)
            }
            let mut solver = build(&p.config, p.name).unwrap();
            let mut sim = Simulation::new(&scene, solver.as_mut(), scene.dt, p.config.default_substeps()).unwrap();
            for _ in 0..3 {
                sim.step_frame(&mut NullObserver).unwrap();
            }
            match sim.state.rigid.first_mut() {
                Some(body) => body.v = nan,
                None => sim.state.x_prev[1] = sim.state.x[1] - nan,
            }
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.step_frame(&mut NullObserver)));
            match outcome {
                Ok(Err(SimError::Diverged { frame: 4, solver, .. })) => assert_eq!(solver, p.name),
                Ok(other) => panic!("{scene_name} under {}: {other:?}", p.name),
                Err(_) => panic!("{scene_name} under {} panicked on a NaN", p.name),
            }
        }
    }
}
