//! Coloured rigid sweeps (`rigid_order = "colored"`): the same numbers on one thread and on two,
//! and the physics of the natural order.

use solverlab_core::hash::state_hash;
use solverlab_core::sim::Simulation;
use solverlab_core::NullObserver;
use solverlab_solvers::{build, preset, PgsConfig, PgsSolver};

/// The state hash after `frames` frames of `scene` under `cfg`, on a pool of `threads`.
fn hash_on(threads: usize, scene: &solverlab_core::Scene, cfg: &PgsConfig, frames: usize) -> u64 {
    hash_and_forces_on((threads, false), scene, cfg, frames).0
}

/// The state hash after `frames` frames of `scene` under `cfg`, on a pool of `threads`, with
/// the last step's contact forces (each with its contact and separation, as the runner reads
/// them); with `awake`, the pool's other threads spin through each frame
/// ([`Simulation::keep_workers_awake`]).
fn hash_and_forces_on(
    (threads, awake): (usize, bool),
    scene: &solverlab_core::Scene,
    cfg: &PgsConfig,
    frames: usize,
) -> (u64, Vec<solverlab_core::rigid::ContactForce>) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut solver = PgsSolver::new(cfg.clone(), "coloured").unwrap();
        let mut sim = Simulation::new(scene, &mut solver, scene.dt, cfg.substeps).unwrap();
        sim.keep_workers_awake(awake);
        for _ in 0..frames {
            sim.step_frame(&mut NullObserver).unwrap();
        }
        let hash = state_hash(&sim.state);
        drop(sim);
        let mut forces = Vec::new();
        solverlab_core::Solver::rigid_contacts(&solver, &mut forces);
        (hash, forces)
    })
}

/// Impulse preset `name` in the coloured order (that of `tgs-soft` and `soft-step`, set again
/// so that the tests keep it).
fn coloured(name: &str) -> PgsConfig {
    let p = preset(name).unwrap();
    let cfg: PgsConfig = toml::Value::Table(p.config.settings().clone()).try_into().unwrap();
    PgsConfig { rigid_order: solverlab_solvers::Order::Colored, ..cfg }
}

/// `tgs-soft` in the coloured order.
fn tgs_soft() -> PgsConfig {
    coloured("tgs-soft")
}

/// The 1,275-box pyramid (base 50) has colours of over 600 manifolds, which run on all
/// threads; the 10 × 10 joint grid's colours are small and run on the calling thread, the
/// 40 × 40 one's (3,120 joints) are large and run on all threads; the ragdolls mix joints and
/// contacts. Each gives the same state bit for bit on one thread and on two (the second thread
/// sleeping between parallel passes, or kept spinning through each frame), and the same contact
/// forces (the pyramid's 1,250 batches write their contacts' separations on all threads).
#[test]
fn coloured_sweeps_give_the_same_numbers_on_one_and_two_threads() {
    let cases = [
        ("rigid-pyramid", vec!["base=50".to_string()], 3),
        ("rigid-joint-grid", vec![], 20),
        ("rigid-joint-grid", vec!["n=40".to_string()], 3),
        ("rigid-ragdoll", vec![], 70),
    ];
    for (name, sets, frames) in cases {
        let scene = solverlab_scenes::resolve(name, &sets).unwrap();
        // Warm-started joints at Rapier's uncapped 10⁶ Hz blow the ragdolls up in the coloured
        // order (frame 28): that variant keeps Box2D v3's cap.
        let warm = PgsConfig { warm_start_joints: true, sleep_time: 0.5, cap_rigid_joint_hertz: true, ..tgs_soft() };
        for cfg in [tgs_soft(), warm] {
            let one = hash_and_forces_on((1, false), &scene, &cfg, frames);
            assert!(!one.1.is_empty() || name == "rigid-joint-grid", "{name}: contacts");
            for awake in [false, true] {
                let two = hash_and_forces_on((2, awake), &scene, &cfg, frames);
                assert_eq!(one.0, two.0, "{name}: one thread {:016x}, two {:016x} (awake: {awake})", one.0, two.0);
                assert!(one.1 == two.1, "{name}: the contact forces on one thread and on two (awake: {awake})");
            }
        }
    }
}

/// The coloured order is a different Gauss-Seidel order, not different physics, on contacts: on
/// the 210-box pyramid `tgs-soft`'s largest penetration is at most a third over the natural
/// order's (measured over 60 frames: 3.5 against 3.2 mm), and on the three falling ragdolls at
/// most twice it: with their joints capped at 120 Hz and bodies turned by the fourth-order drift
/// (`rotation = "rk4"`), 2.5 against 1.4 cm over 90 frames; with the preset's own joints and
/// rotation (Rapier's uncapped 10⁶ Hz, `rotation = "explicit"`), 3.0 against 2.6 cm (the same
/// over 300 frames; Rapier 0.36, which visits its rows in the coloured order, 7.3 cm). The
/// falling ragdolls' largest penetration is sensitive to any change of the order, the rotation
/// or the warm start: before points kept their warm start by feature wherever their pair had
/// moved (`warm_map::matched_impulse`), the preset's coloured ragdolls sank 5.5 cm against 1.9
/// natural. Every run here keeps each pair within the fastest body's travel
/// (`speculative_margin = "fastest"`): under the preset's fixed 2 cm margin the falling
/// ragdolls' contacts are caught a frame late in either order, and their largest penetration
/// over 300 frames is that of one late catch (6.9 cm coloured, 10.7 natural).
#[test]
fn the_coloured_order_keeps_the_natural_order_s_penetration() {
    let worst = |scene: &solverlab_core::Scene, order: &str, capped: bool, frames: usize| {
        let mut table = preset("tgs-soft").unwrap().config.to_table();
        table.insert("rigid_order".into(), toml::Value::String(order.into()));
        table.insert("cap_rigid_joint_hertz".into(), toml::Value::Boolean(capped));
        table.insert("speculative_margin".into(), toml::Value::String("fastest".into()));
        if capped {
            table.insert("rotation".into(), toml::Value::String("rk4".into()));
        }
        let cfg = solverlab_solvers::Registry::builtin().parse(&table).unwrap();
        let mut solver = build(&cfg, "tgs-soft").unwrap();
        let mut sim = Simulation::new(scene, solver.as_mut(), scene.dt, cfg.default_substeps()).unwrap();
        (0..frames).map(|_| sim.step_frame(&mut NullObserver).unwrap().metrics.max_penetration).fold(0.0, f64::max)
    };
    let cases = [("rigid-pyramid", vec!["base=20".to_string()], false, 60), ("rigid-ragdoll", vec![], true, 90)];
    for (name, sets, capped, frames) in cases {
        let scene = solverlab_scenes::resolve(name, &sets).unwrap();
        let (natural, colored) = (worst(&scene, "natural", capped, frames), worst(&scene, "colored", capped, frames));
        let bound = if name == "rigid-pyramid" { 4.0 / 3.0 } else { 2.0 };
        assert!(colored <= natural * bound, "{name}: coloured {colored:.4} m against natural {natural:.4} m");
    }
    let scene = solverlab_scenes::resolve("rigid-ragdoll", &[]).unwrap();
    let (natural, colored) = (worst(&scene, "natural", false, 90), worst(&scene, "colored", false, 90));
    assert!(colored <= 2.0 * natural, "uncapped joints: coloured {colored:.4} m against natural {natural:.4} m");
}

/// Without sleeping, the coloured order skips the search for islands (every movable body is
/// awake, in one group); with a sleep time no run reaches, the islands are found every step and
/// decide nothing either: both move every body the same, bit for bit (the state hash differs:
/// it holds each body's rest time, which only the second counts).
#[test]
fn skipping_the_islands_changes_no_number() {
    let scene = solverlab_scenes::resolve("rigid-pyramid", &["base=10".to_string()]).unwrap();
    let run = |cfg: PgsConfig| {
        let mut solver = PgsSolver::new(cfg.clone(), "coloured").unwrap();
        let mut sim = Simulation::new(&scene, &mut solver, scene.dt, cfg.substeps).unwrap();
        for _ in 0..30 {
            sim.step_frame(&mut NullObserver).unwrap();
        }
        sim.state.rigid.iter().map(|b| (b.x, b.q, b.v, b.w)).collect::<Vec<_>>()
    };
    let (skipped, found) = (run(tgs_soft()), run(PgsConfig { sleep_time: 1e9, ..tgs_soft() }));
    assert!(skipped.iter().any(|b| b.2.norm() > 0.0), "the pyramid moved");
    assert_eq!(skipped, found);
}

/// The batches of the coloured sweeps (`lanes`, `pgs::rigid::lanes`) and the ball joints two at
/// a time give the same numbers bit for bit as the manifolds and joints visited one by one: on
/// the pyramid (four-point manifolds), without friction, on the ramp (manifolds with and without
/// friction side by side), the card house and the arch (manifolds of two and four points), the
/// ragdolls (ball, revolute and limited joints beside capsules), the chain and the joint grids
/// (ball joints; the 40 × 40 grid's colours are large, chunked on the calling thread, and run
/// on two threads in `coloured_sweeps_give_the_same_numbers_on_one_and_two_threads`); with SOR,
/// the pyramid cone and friction in both passes too. (`lanes_are_used` in the solver's unit
/// tests checks that the batches hold most of the pyramid's manifolds.)
#[test]
fn lanes_give_the_same_numbers_as_the_scalar_visits() {
    let cases: [(&str, &[&str], usize); 11] = [
        ("rigid-pyramid", &["base=12"], 60),
        ("rigid-pyramid", &["base=50"], 3),
        ("rigid-pyramid", &["base=8", "friction=0"], 60),
        ("rigid-ramp", &[], 60),
        ("rigid-card-house", &[], 60),
        ("rigid-arch", &[], 60),
        ("rigid-ragdoll", &[], 70),
        ("rigid-stack", &["boxes=6"], 60),
        ("rigid-chain", &[], 60),
        ("rigid-joint-grid", &[], 30),
        ("rigid-joint-grid", &["n=40"], 3),
    ];
    let variants = [
        tgs_soft(),
        PgsConfig { omega: 1.3, ..tgs_soft() },
        PgsConfig {
            friction_cone: solverlab_solvers::FrictionCone::Pyramid,
            friction_pass: solverlab_solvers::FrictionPass::Both,
            ..tgs_soft()
        },
        // Points one after the other: built from the rows (`soft-step`, friction in both
        // passes) and from the contacts (`tgs-soft` without block pairs, contacts recycled).
        coloured("soft-step"),
        PgsConfig { block_pairs: false, ..tgs_soft() },
    ];
    for (name, sets, frames) in cases {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let scene = solverlab_scenes::resolve(name, &sets).unwrap();
        for (v, cfg) in variants.iter().enumerate() {
            assert!(cfg.lanes, "lanes are on by default");
            let scalar = PgsConfig { lanes: false, ..cfg.clone() };
            let (on, off) = (hash_on(1, &scene, cfg, frames), hash_on(1, &scene, &scalar, frames));
            assert_eq!(on, off, "{name} {sets:?}, variant {v}: lanes {on:016x}, one by one {off:016x}");
        }
    }
}
