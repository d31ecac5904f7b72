//! A permanent, seeded fuzz test of the scene format: valid scene files (the exports of small
//! builtins of every kind) are mutated line by line, by deleting, duplicating and retyping keys
//! and by injecting NaN, infinities, huge, zero and negative numbers, and every mutant must
//! either load as a valid scene or be refused with an error; a valid mutant must simulate a few
//! frames under a relaxation and an impulse preset without a panic (an error, a divergence or a
//! blow-up is a fine outcome). Seeded, so a failure reproduces; `MUTANTS` per scene keeps it
//! to a few seconds.

use solverlab_core::rng::Rng;
use solverlab_core::sim::Simulation;
use solverlab_core::NullObserver;
use solverlab_scenes::file::{parse, SceneFile};
use solverlab_scenes::mutate::mutate;
use solverlab_solvers::{build, preset};

const MUTANTS: usize = 400;

/// Small versions of builtins that cover particles, sticks, pins, colliders, box bodies,
/// removals, rigid bodies of every shape and joints.
const SCENES: [(&str, &[&str]); 8] = [
    ("pendulum", &[]),
    ("cloth", &["nx=4", "ny=4"]),
    ("balls", &["n=6"]),
    ("warm-start-energy", &[]),
    ("rigid-warm-start-energy", &[]),
    ("rigid-ragdoll", &["count=1"]),
    ("rigid-bridge", &["planks=3"]),
    ("hinge", &[]),
];

#[test]
fn mutated_scene_files_load_or_are_refused_and_never_panic() {
    let mut rng = Rng::new(20261123);
    let (mut loaded, mut refused) = (0, 0);
    for (name, sets) in SCENES {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let scene = solverlab_scenes::resolve(name, &sets).unwrap();
        let text = SceneFile::from_scene(&scene).to_toml();
        for m in 0..MUTANTS {
            let mutant = mutate(&text, &mut rng);
            let outcome = std::panic::catch_unwind(|| parse(&mutant, "mutant.toml"));
            let Ok(result) = outcome else {
                panic!("{name}, mutant {m}: loading panicked on\n{mutant}");
            };
            let Ok(scene) = result else {
                refused += 1;
                continue;
            };
            loaded += 1;
            // The Newton family on the rigid scenes only (its particle rows are the oldest code,
            // and a mutated cloth under `direct` costs seconds a frame in a debug build).
            for solver in ["gs", "pgs", "direct"].into_iter().filter(|s| *s != "direct" || scene.has_rigid()) {
                let ran = std::panic::catch_unwind(|| {
                    let p = preset(solver).unwrap();
                    let mut s = build(&p.config, solver).unwrap();
                    if let Ok(mut sim) = Simulation::new(&scene, s.as_mut(), scene.dt, 1) {
                        for _ in 0..3 {
                            if sim.step_frame(&mut NullObserver).is_err() {
                                break;
                            }
                        }
                    }
                });
                assert!(ran.is_ok(), "{name}, mutant {m}: simulating under {solver} panicked on\n{mutant}");
            }
        }
    }
    eprintln!("{loaded} mutants loaded, {refused} refused");
    assert!(loaded > 0 && refused > 0, "the mutations should produce both outcomes");
}
