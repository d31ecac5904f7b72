//! A removed rigid body ([`solverlab_core::model::Removal`]) takes its joints with it, under
//! every family that runs rigid bodies (all but block descent) the same way: its partner is neither pulled towards the body's parking place
//! nor flung. Before, the partner of a removed link was pulled 1 km away at about 1 km/s under
//! `pgs`, and the run ended `ok`.

use solverlab_core::model::{Removal, RemovedBody};
use solverlab_core::sim::{tear, Simulation};
use solverlab_core::NullObserver;
use solverlab_solvers::{build, presets};

#[test]
fn a_removed_link_takes_its_joints_with_it_under_every_preset_rigid_chain() {
    let mut scene = solverlab_scenes::resolve("rigid-chain", &["links=6".to_string()]).unwrap();
    let last = scene.rigid.len() - 1;
    scene.removals.push(Removal { body: RemovedBody::Rigid(last), time: 0.5 });
    for p in presets().into_iter().filter(|p| p.config.kind() != "block_descent") {
        let mut solver = build(&p.config, p.name).unwrap();
        let mut sim = Simulation::new(&scene, solver.as_mut(), scene.dt, p.config.default_substeps()).unwrap();
        let mut fastest: f64 = 0.0;
        for _ in 0..90 {
            let r = sim.step_frame(&mut NullObserver).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(tear(&r.metrics).is_none(), "{}: frame {}: {:?}", p.name, r.frame, tear(&r.metrics));
            fastest = (0..last).map(|k| sim.state.rigid[k].v.norm()).fold(fastest, f64::max);
        }
        // A 6-link chain of 0.2 m links falling from horizontal moves at most √(2 g · 1.2 m) ≈ 5 m/s.
        assert!(fastest < 8.0, "{}: a link reached {fastest} m/s", p.name);
        assert!(sim.state.rigid[last - 1].x.norm() < 2.0, "{}: the partner left the chain", p.name);
    }
}
