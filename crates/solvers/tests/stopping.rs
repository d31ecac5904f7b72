//! The stopping rule is the common violation's, whichever way a solver tests it: a step whose
//! violation first falls to at most the tolerance after sweep `k` stops at `k`, both when an
//! observer asks for the violation (computed in full) and when none does (the test that stops at
//! the first row above the tolerance), with the same state, on one thread and on two.

use solverlab_core::hash::state_hash;
use solverlab_core::{IterationReport, Observer, Scene, Solver, State, StepContext};
use solverlab_solvers::{preset, SolverConfig};

/// Records each iteration's reported violation; asks for it when `wants`.
struct Record {
    wants: bool,
    violations: Vec<Option<f64>>,
}

impl Observer for Record {
    fn wants_violation(&self) -> bool {
        self.wants
    }
    fn iteration(&mut self, r: &IterationReport) {
        self.violations.push(r.violation);
    }
}

fn scene(name: &str, sets: &[&str]) -> Scene {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    solverlab_scenes::resolve(name, &sets).unwrap()
}

/// A step to solve: `frames` frames of `config` from rest, then one prediction.
fn predicted(scene: &Scene, config: &SolverConfig, frames: u64) -> State {
    let mut solver = config.build("prime").unwrap();
    let mut sim = solverlab_core::sim::Simulation::new(scene, solver.as_mut(), scene.dt, 1).unwrap();
    for _ in 0..frames {
        sim.step_frame(&mut solverlab_core::NullObserver).unwrap();
    }
    let mut state = sim.state.clone();
    let pins = solverlab_core::integrate::kinematic_pins(scene);
    solverlab_core::integrate::predict(scene, &pins, &mut state, scene.dt);
    state
}

/// Solves `state` with `config` and `observer`; returns the state, the iterations and whether it
/// converged.
fn solve(scene: &Scene, config: &SolverConfig, state: &State, observer: &mut dyn Observer) -> (State, usize, bool) {
    let mut solver: Box<dyn Solver> = config.build("test").unwrap();
    solver.prepare(scene).unwrap();
    let mut st = state.clone();
    let info = solver.solve(&StepContext::new(scene, scene.dt), &mut st, observer).unwrap();
    (st, info.iterations, info.converged)
}

fn with_tolerance(config: &SolverConfig, cap: u64, tolerance: f64) -> SolverConfig {
    config.capped(cap).with("tolerance", toml::Value::Float(tolerance)).unwrap()
}

/// The rule: the first sweep whose violation is at most `tolerance`, else the cap.
fn rule(violations: &[f64], tolerance: f64) -> (usize, bool) {
    match violations.iter().position(|&v| v <= tolerance) {
        Some(k) => (k + 1, true),
        None => (violations.len(), false),
    }
}

/// Checks `config` on `scene` at `cap` sweeps: the tolerance set to the violation of a sweep
/// `k` that is a new minimum (so the rule stops at `k`), and to the next number below it.
fn stops_where_the_rule_does(what: &str, scene: &Scene, config: &SolverConfig, cap: u64) {
    let state = predicted(scene, config, 3);
    let mut full = Record { wants: true, violations: Vec::new() };
    let (_, n, _) = solve(scene, &config.capped(cap), &state, &mut full);
    assert_eq!(n, cap as usize, "{what}: tolerance 0 runs every sweep");
    let v: Vec<f64> = full.violations.iter().map(|v| v.expect("asked for")).collect();
    // The last sweep (from the second on) whose violation is below every earlier one.
    let k = (1..v.len()).rev().find(|&j| v[..j].iter().all(|&e| v[j] < e)).expect("a new minimum") + 1;
    for tolerance in [v[k - 1], f64::from_bits(v[k - 1].to_bits() - 1)] {
        let (want_n, want_converged) = rule(&v, tolerance);
        let capped = solve(scene, &config.capped(want_n as u64), &state, &mut solverlab_core::NullObserver).0;
        let cfg = with_tolerance(config, cap, tolerance);
        // In pools of one and two threads, and from outside any pool (the global one).
        for threads in [Some(1), Some(2), None] {
            let pool = threads.map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap());
            for wants in [false, true] {
                let mut observer = Record { wants, violations: Vec::new() };
                let (st, n, converged) = match &pool {
                    Some(pool) => pool.install(|| solve(scene, &cfg, &state, &mut observer)),
                    None => solve(scene, &cfg, &state, &mut observer),
                };
                let how = format!("{what}, tolerance {tolerance:e}, threads {threads:?}, violation asked: {wants}");
                assert_eq!((n, converged), (want_n, want_converged), "{how}: violations {v:?}");
                assert_eq!(state_hash(&st), state_hash(&capped), "{how}: the state of {want_n} sweeps");
                match wants {
                    true => assert_eq!(observer.violations, full.violations[..n], "{how}: the same violations"),
                    false => assert!(observer.violations.iter().all(Option::is_none), "{how}: none reported"),
                }
            }
        }
    }
}

fn relax(name: &str, settings: &[(&str, &str)]) -> SolverConfig {
    let mut config = preset(name).unwrap().config;
    for (key, value) in settings {
        config = config.with(key, toml::Value::String(value.to_string())).unwrap();
    }
    config
}

#[test]
fn relaxation_fast_paths_stop_at_the_sweep_the_rule_names() {
    // 70 × 70 with shear sticks: 19 182 rows, above the parallel threshold of the full test.
    let cloth = scene("cloth", &["nx=70", "ny=70"]);
    assert!(cloth.constraints.len() >= solverlab_solvers::PARALLEL_ROWS);
    stops_where_the_rule_does("coloured gs", &cloth, &relax("gs", &[("order", "colored")]), 40);
    stops_where_the_rule_does("jacobi", &cloth, &relax("jacobi", &[]), 40);
    let compliant = scene("cloth", &["nx=70", "ny=70", "compliance=1e-6"]);
    stops_where_the_rule_does("xpbd, compliant cloth", &compliant, &relax("xpbd", &[]), 40);
}

#[test]
fn relaxation_general_path_stops_at_the_sweep_the_rule_names() {
    // A shuffled order takes the general sweep and the scene's rows; a stick in a box adds the
    // colliders' penetration.
    let cloth = scene("cloth", &["nx=24", "ny=24"]);
    stops_where_the_rule_does("shuffled gs", &cloth, &relax("gs", &[("order", "shuffled")]), 30);
    stops_where_the_rule_does("stick in a box", &scene("stick-in-box", &[]), &relax("jacobi", &[]), 30);
}

#[test]
fn pgs_and_block_descent_stop_at_the_sweep_the_rule_names() {
    let cloth = scene("cloth", &["nx=24", "ny=24"]);
    stops_where_the_rule_does("pgs", &cloth, &preset("pgs").unwrap().config, 30);
    stops_where_the_rule_does("avbd", &scene("cloth", &["nx=12", "ny=12"]), &preset("avbd").unwrap().config, 30);
}

/// Rigid bodies: the joints' term stops at the first joint above the tolerance when the
/// violation is not reported, and the rule still stops at the same sweep with the same state.
#[test]
fn rigid_pgs_stops_at_the_sweep_the_rule_names() {
    let pgs = preset("pgs").unwrap().config;
    stops_where_the_rule_does("pgs, rigid chain", &scene("rigid-chain", &[]), &pgs, 20);
    stops_where_the_rule_does("pgs, rigid joint grid", &scene("rigid-joint-grid", &["n=4"]), &pgs, 20);
    stops_where_the_rule_does("pgs, rigid pyramid", &scene("rigid-pyramid", &["base=4"]), &pgs, 20);
}
