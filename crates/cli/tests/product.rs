//! `simulate` computes what the performance experiment's kernel rows time: the same final state
//! as the kernel path (the solver built from its settings, prepared once, solving each step's
//! prediction with no observer, as `benches/src/bin/performance.rs` does), on one thread and on
//! two, with the tolerance off and with the default tolerance when no step meets it. Only
//! results are compared, never times.

mod common;

use common::{s, stderr};
use solverlab_core::hash::{hex, state_hash};
use solverlab_core::integrate::{kinematic_pins, predict};
use solverlab_core::{NullObserver, Scene, StepContext};
use solverlab_solvers::{Registry, SolverConfig};

const FRAMES: u64 = 3;

fn config(inline: &str) -> SolverConfig {
    let t: toml::Table = toml::from_str(&format!("s = {inline}")).unwrap();
    Registry::builtin().parse(t["s"].as_table().unwrap()).unwrap()
}

/// The final state's hash on the kernel path.
fn kernel(scene: &Scene, config: &SolverConfig) -> String {
    let mut solver = config.build("kernel").unwrap();
    solver.prepare(scene).unwrap();
    let substeps = config.default_substeps();
    let h = scene.dt / substeps as f64;
    let mut state = scene.initial_state(h);
    let pins = kinematic_pins(scene);
    for _ in 0..FRAMES * substeps as u64 {
        predict(scene, &pins, &mut state, h);
        solver.solve(&StepContext::new(scene, h), &mut state, &mut NullObserver).unwrap();
    }
    hex(state_hash(&state))
}

/// `simulate` of `solver` on the cloth `sets` with `threads` threads: the final state's hash and
/// whether any frame converged.
fn simulate(sets: &[&str], solver: &str, threads: &str, name: &str) -> (String, bool) {
    let out = common::absent("product", name);
    let mut args = vec!["simulate", "--scene", "cloth"];
    for set in sets {
        args.extend(["--set", set]);
    }
    let frames = FRAMES.to_string();
    args.extend(["--solver", solver, "--frames", &frames, "--positions-every", "0", "--no-figures", "--out", s(&out)]);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_solverlab"))
        .args(&args)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap();
    assert!(o.status.success(), "{solver}: {}", stderr(&o));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    let mut steps = csv::Reader::from_path(out.join("steps.csv")).unwrap();
    let column = steps.headers().unwrap().iter().position(|c| c == "converged").unwrap();
    let converged = steps.records().skip(1).any(|r| &r.unwrap()[column] == "1");
    let _ = std::fs::remove_dir_all(&out);
    (meta["runs"][0]["final_state_hash"].as_str().unwrap().to_string(), converged)
}

#[test]
fn simulate_solves_what_the_kernel_path_times() {
    // 158 802 sticks in 8 colours of about 20 000: every parallel pass runs on two threads.
    let sets = ["nx=200", "ny=200"];
    let scene = solverlab_scenes::resolve("cloth", &sets.map(String::from)).unwrap();
    for (name, settings) in [
        ("gs-coloured", r#"kind = "relax", mode = "gauss_seidel", order = "colored", iterations = 10"#),
        ("jacobi", r#"kind = "relax", mode = "jacobi", omega = 1.5, iterations = 10"#),
        ("xpbd", r#"kind = "relax", xpbd = true, iterations = 10"#),
        ("pgs-coloured", r#"kind = "pgs", order = "colored", iterations = 10"#),
    ] {
        let off = format!("{{ {settings}, tolerance = 0 }}");
        let want = kernel(&scene, &config(&off));
        for threads in ["1", "2"] {
            let (hash, _) = simulate(&sets, &off, threads, &format!("{name}-{threads}-off"));
            assert_eq!(hash, want, "{name}, {threads} thread(s), tolerance 0: simulate against the kernel path");
            // The default tolerance is not met at 10 sweeps on this cloth: the stopping test
            // changes nothing.
            let (hash, converged) =
                simulate(&sets, &format!("{{ {settings} }}"), threads, &format!("{name}-{threads}"));
            assert!(!converged, "{name}: no step meets the default tolerance");
            assert_eq!(hash, want, "{name}, {threads} thread(s), default tolerance");
        }
    }
}
