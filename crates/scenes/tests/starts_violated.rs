//! Which builtins start violated (bodies overlapping, joints stretched): the energy-gain bound of
//! the blow-up check does not apply to them (`solverlab_core::sim::starts_violated`).

use solverlab_core::metrics::{measure, no_multipliers};
use solverlab_core::sim::starts_violated;
use solverlab_scenes::builtin::default_scene;
use solverlab_scenes::builtins;

#[test]
fn only_the_scenes_built_to_start_violated_do() {
    let violated: Vec<&str> = builtins()
        .iter()
        .map(|b| (b.name, default_scene(b.name)))
        .filter(|(_, scene)| {
            let state = scene.initial_state(scene.dt);
            starts_violated(&measure(scene, &state, scene.dt, &no_multipliers))
        })
        .map(|(name, _)| name)
        .collect();
    assert_eq!(violated, ["stretched-chain", "confined"]);
}
