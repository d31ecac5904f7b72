//! Pinned results: the final state hash of a few short runs, one per family and kind of scene.
//! Any change to the numbers a solver produces (an edit to a row, an order, a default) changes
//! a hash here, so it shows up as a failing test instead of silently moving the committed
//! results.
//!
//! When a change is meant to move the numbers: run the changed case with
//! `solverlab simulate --scene SCENE --solver PRESET --frames N --positions-every 0`, put the
//! printed `final state hash` below, re-run the affected experiments (their `meta.json` hashes
//! move too), and say so in the commit message.

use solverlab_core::hash::state_hash;
use solverlab_core::sim::Simulation;
use solverlab_core::NullObserver;
use solverlab_solvers::{build, preset};

#[test]
fn pinned_runs_give_the_pinned_state_hashes() {
    let cases = [
        ("pendulum", "gs", 60, 0xb80ac9e44c37f303_u64),
        ("cloth", "xpbd", 30, 0xbab80a2f8f9c8eee),
        ("chain", "cg", 20, 0xcbc084e6a8bc01fa),
        ("rigid-chain", "direct", 30, 0x7e51065d9655885b),
        ("box-stack", "pgs", 20, 0x2dd86381f944db28),
        ("rigid-stack", "pgs", 30, 0xe97dbf7720350037),
        ("rigid-stack", "xpbd", 30, 0x0f18837f216cb3ec),
        ("rigid-ragdoll", "soft-step", 30, 0x765a8930bed35922),
        ("rigid-pyramid", "tgs-soft", 60, 0x0ab720329862be7e),
        ("rigid-pyramid", "soft-step", 60, 0x72ebe552c0c70947),
        // The relaxation family against every kind of collider: box faces, planes, blocks
        // (stairs), embedded points, particle pairs and box bodies.
        ("particles-in-box", "gs", 120, 0xddfc09f76ad782ca),
        ("stick-in-box", "gs", 120, 0x987db664a526d79d),
        ("ragdoll", "jacobi", 120, 0x396296cb76ea3ad4),
        ("ragdoll-stairs", "gs", 200, 0xf7d3f4d89cae3c58),
        ("embedded-box", "gs", 120, 0x202636c91bb063ea),
        ("tetrahedron", "sor", 120, 0x89861efe5836a0d9),
        ("balls", "xpbd", 120, 0xc1e47283d4cab5bf),
        ("incline", "gs", 120, 0xa09d945a1cd8d6e5),
        ("box-stack", "gs", 60, 0xcc5e84baf49df43f),
    ];
    let mut wrong = Vec::new();
    for (scene, solver, frames, expected) in cases {
        let s = solverlab_scenes::resolve(scene, &[]).unwrap();
        let p = preset(solver).unwrap();
        let mut solver_box = build(&p.config, solver).unwrap();
        let mut sim = Simulation::new(&s, solver_box.as_mut(), s.dt, p.config.default_substeps()).unwrap();
        for _ in 0..frames {
            sim.step_frame(&mut NullObserver).unwrap();
        }
        let hash = state_hash(&sim.state);
        if hash != expected {
            wrong.push(format!("{scene} under {solver}, {frames} frames: {hash:016x}, pinned {expected:016x}"));
        }
    }
    assert!(wrong.is_empty(), "the numbers moved (see the module docs):\n{}", wrong.join("\n"));
}
