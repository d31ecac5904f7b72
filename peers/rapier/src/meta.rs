//! `meta.json` of a run or a benchmark: Rapier's version, the modes' parameters, the machine,
//! solverlab's commit.

use serde_json::{json, Value};

use crate::bench::{SceneResult, PAIRS};
use crate::world::Mode;

/// The Rapier release this crate is built against (checked against `Cargo.lock` by a test).
pub const RAPIER_VERSION: &str = "0.36.1";

/// Rapier's parameters in `mode` at `dt`, as a JSON object.
pub fn mode_json(mode: Mode, dt: f64) -> Value {
    let p = mode.parameters(dt);
    let j = mode.joint_softness();
    json!({
        "mode": mode.name(),
        "summary": mode.summary(),
        "dt": p.dt,
        "num_solver_iterations (substeps)": p.num_solver_iterations,
        "num_internal_pgs_iterations (biased sweeps)": p.num_internal_pgs_iterations,
        "num_internal_stabilization_iterations (relax sweeps)": p.num_internal_stabilization_iterations,
        "contact_hz": p.contact_softness.natural_frequency,
        "contact_damping_ratio": p.contact_softness.damping_ratio,
        "static_contact_hz": p.static_contact_softness.natural_frequency,
        "static_contact_damping_ratio": p.static_contact_softness.damping_ratio,
        "joint_hz": j.natural_frequency,
        "joint_damping_ratio": j.damping_ratio,
        "max_corrective_velocity": p.max_corrective_velocity(),
        "prediction_distance": p.prediction_distance(),
        "allowed_linear_error": p.allowed_linear_error(),
        "warmstart_coefficient": p.warmstart_coefficient,
        "warmstart_joints": p.warmstart_joints,
        "friction_in_bias_pass": p.friction_in_bias_pass,
        "friction_model": format!("{:?}", p.friction_model),
        "contact_recycling": p.contact_recycling,
        "max_ccd_substeps": p.max_ccd_substeps,
        "sleeping": mode.sleeps(),
    })
}

fn command(args: &[&str]) -> Option<String> {
    let o = std::process::Command::new(args[0]).args(&args[1..]).output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The CPU's model name, from `/proc/cpuinfo`.
pub fn cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default()
}

/// The machine, the versions and the date.
pub fn common() -> Value {
    let days =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0);
    json!({
        "rapier3d-f64": RAPIER_VERSION,
        "rapier_features": if cfg!(feature = "parallel") {
            "default (dim3, f64, std, block-solver) and parallel"
        } else {
            "default (dim3, f64, std, block-solver); not parallel: one thread"
        },
        "solverlab_commit": command(&["git", "-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"]).unwrap_or_default(),
        "solverlab_threads": 1,
        "cpu": cpu(),
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "date": date(days as i64),
        "command": std::env::args().collect::<Vec<_>>().join(" "),
    })
}

/// The civil date (UTC) `days` after 1970-01-01, as solverlab writes it.
pub use solverlab_cli::date;

/// The benchmark's `meta.json`.
pub fn bench_meta(results: &[SceneResult], rounds: usize, frames_scale: f64, seconds: f64) -> String {
    // Every benchmark scene steps at solverlab's default 60 Hz (each scene's own dt is below).
    let dt = 1.0 / 60.0;
    let scenes: Vec<Value> = results
        .iter()
        .map(|r| {
            json!({
                "scene": r.bench.key,
                "what": r.bench.what,
                "builtin": r.bench.builtin,
                "sets": r.bench.sets,
                "rigid_spheres": r.bench.rigid_spheres,
                "bodies": r.bodies,
                "joints": r.joints,
                "frames_asked": r.bench.frames,
                "frames_run": r.frames,
                "dt": r.dt,
                "solverlab_budget_s": r.bench.budget,
            })
        })
        .collect();
    let mut meta = common();
    let extra = json!({
        "what": "solverlab (tgs-soft, soft-step) and Rapier (matched, box2d, defaults, sleeping) interleaved on the same scenes, \
                 one thread; ms per frame: solverlab's solve + integrate seconds, Rapier's PhysicsWorld::step",
        "rounds": rounds,
        "frames_scale": frames_scale,
        "seconds": seconds,
        "pairs": PAIRS.iter().map(|(p, m)| format!("{p} / {}", m.name())).collect::<Vec<_>>(),
        "modes": Mode::ALL.iter().map(|&m| mode_json(m, dt)).collect::<Vec<_>>(),
        "scenes": scenes,
    });
    if let (Value::Object(a), Value::Object(b)) = (&mut meta, extra) {
        a.extend(b);
    }
    serde_json::to_string_pretty(&meta).expect("JSON") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_the_locked_one() {
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")).expect("Cargo.lock");
        assert!(lock.contains(&format!("name = \"rapier3d-f64\"\nversion = \"{RAPIER_VERSION}\"")), "Cargo.lock");
    }

    #[test]
    fn dates() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(19_723), "2024-01-01");
        assert_eq!(date(11_016), "2000-02-29");
    }
}
