//! `rapier-peer`: Rapier on solverlab's rigid scenes.
//!
//! ```text
//! rapier-peer run (--scene NAME | --scene-file PATH) [--set KEY=VALUE]… [--rigid-spheres]
//!                 [--halfspaces] [--mode matched|box2d|defaults|sleeping] [--fast-rotation]
//!                 [--frames N] [--bodies] [--out DIR]
//! rapier-peer bench [--rounds N] [--scale F] [--only KEY,…] [--scaling] [--out DIR]
//! rapier-peer threads [--rounds N] [--scale F] [--only KEY,…] [--out DIR]   (--features parallel)
//! rapier-peer modes
//! rapier-peer scene (--scene NAME | --scene-file PATH) [--set KEY=VALUE]… [--rigid-spheres]
//! ```
//!
//! `run` writes `steps.csv` (solverlab's columns, those Rapier can fill) and `meta.json` into
//! DIR (default `results/rapier_run`) and prints a summary; with `--bodies`, also `bodies.csv`
//! (solverlab's columns: every body's pose and velocity in the last frame). `bench` runs the benchmark
//! ([`rapier_peer::bench`]) and writes `ratios.csv`, `runs.csv`, `timings.csv`, `table.md` and
//! `meta.json` into DIR (default `../../results/rapier_peer`, the committed results when run
//! from `peers/rapier`). `modes` prints Rapier's parameters in each mode. `run` and `bench` run on
//! one thread (solverlab's pool is built with one thread; Rapier is built without `parallel`).
//! `threads`, in a build with `--features parallel`, times solverlab's `tgs-soft` and Rapier's
//! `matched` on pools of one and two threads ([`rapier_peer::threads`]) and writes
//! `threads.csv`, `table.md` and `meta.json` into DIR (default `../../results/rapier_threads`).
//! `scene` prints the scene a `run` would load as a solverlab scene file (with
//! `--rigid-spheres`, the balls made rigid), so that `solverlab simulate --scene FILE` runs
//! the very scene the benchmark runs.
//! `--fast-rotation` lifts Rapier's cap of π/4 of turn per frame on every body
//! (`allow_fast_rotation`), to see what the cap does; no mode sets it.

use std::path::PathBuf;
use std::process::ExitCode;

use rapier_peer::bench::{bench, SCALING, SCENES};
use rapier_peer::meta::{common, mode_json};
use rapier_peer::steps::{line, row, write_files, STEP_COLUMNS};
use rapier_peer::world::{Mode, RapierRun, Walls};

const USAGE: &str = "usage:
  rapier-peer run (--scene NAME | --scene-file PATH) [--set KEY=VALUE]... [--rigid-spheres]
                  [--halfspaces] [--mode matched|box2d|defaults|sleeping] [--fast-rotation]
                  [--frames N] [--bodies] [--out DIR]
  rapier-peer bench [--rounds N] [--scale F] [--only KEY,...] [--scaling] [--out DIR]
  rapier-peer threads [--rounds N] [--scale F] [--only KEY,...] [--out DIR]   (built with --features parallel)
  rapier-peer modes
  rapier-peer scene (--scene NAME | --scene-file PATH) [--set KEY=VALUE]... [--rigid-spheres]";

/// The command line, read by hand: a few flags, each `--flag VALUE` or a lone switch.
struct Args {
    rest: Vec<String>,
}

impl Args {
    fn value(&mut self, flag: &str) -> Result<Option<String>, String> {
        match self.rest.iter().position(|a| a == flag) {
            None => Ok(None),
            Some(i) if i + 1 < self.rest.len() => {
                let v = self.rest.remove(i + 1);
                self.rest.remove(i);
                Ok(Some(v))
            }
            Some(_) => Err(format!("{flag} needs a value")),
        }
    }

    fn values(&mut self, flag: &str) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        while let Some(v) = self.value(flag)? {
            out.push(v);
        }
        Ok(out)
    }

    fn switch(&mut self, flag: &str) -> bool {
        let before = self.rest.len();
        self.rest.retain(|a| a != flag);
        self.rest.len() != before
    }

    fn number<T: std::str::FromStr>(&mut self, flag: &str, default: T) -> Result<T, String> {
        match self.value(flag)? {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("{flag}: `{v}` is not a valid number")),
        }
    }

    fn done(self) -> Result<(), String> {
        match self.rest.first() {
            None => Ok(()),
            Some(a) => Err(format!("unexpected argument `{a}`")),
        }
    }
}

/// The scene of `run` and `scene`: a builtin's name (`--scene`) or a file (`--scene-file`),
/// exactly one of them.
fn scene_arg(a: &mut Args) -> Result<String, String> {
    match (a.value("--scene")?, a.value("--scene-file")?) {
        (Some(n), None) => Ok(n),
        (None, Some(f)) if std::path::Path::new(&f).exists() => Ok(f),
        (None, Some(f)) => Err(format!("--scene-file {f}: no such file")),
        _ => Err("give one of --scene NAME or --scene-file PATH".into()),
    }
}

/// `scene`: the scene `run` would load, printed as a solverlab scene file.
fn export(mut a: Args) -> Result<(), String> {
    let name = scene_arg(&mut a)?;
    let sets = a.values("--set")?;
    let rigid_spheres = a.switch("--rigid-spheres");
    a.done()?;
    let scene = rapier_peer::scenes::load(&name, &sets, rigid_spheres)?;
    let how = if rigid_spheres { " --rigid-spheres" } else { "" };
    let with: String = sets.iter().map(|x| format!(" {x}")).collect();
    println!("# {name}{with}{how}, exported by rapier-peer");
    print!("{}", solverlab_scenes::file::SceneFile::from_scene(&scene).to_toml());
    Ok(())
}

fn run(mut a: Args) -> Result<(), String> {
    let name = scene_arg(&mut a)?;
    let sets = a.values("--set")?;
    let rigid_spheres = a.switch("--rigid-spheres");
    let walls = if a.switch("--halfspaces") { Walls::HalfSpaces } else { Walls::Slabs };
    let fast_rotation = a.switch("--fast-rotation");
    let mode = match a.value("--mode")? {
        None => Mode::Matched,
        Some(m) => {
            Mode::parse(&m).ok_or_else(|| format!("--mode: `{m}` is not matched, box2d, defaults or sleeping"))?
        }
    };
    let frames: u64 = a.number("--frames", 120)?;
    let bodies = a.switch("--bodies");
    let out = PathBuf::from(a.value("--out")?.unwrap_or_else(|| "results/rapier_run".into()));
    a.done()?;
    if frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    let scene = rapier_peer::scenes::load(&name, &sets, rigid_spheres)?;
    let mut world = RapierRun::with_rotation(&scene, mode, walls, fast_rotation).map_err(|e| e.to_string())?;
    let mut csv = line(&STEP_COLUMNS.map(String::from));
    let (mut stood, mut drift, mut pen, mut joint, mut seconds) = (true, 0.0_f64, 0.0_f64, 0.0_f64, 0.0);
    let mut support = 0.0;
    let mut status = "ok".to_string();
    let mut done = 0;
    for frame in 1..=frames {
        let s = world.step();
        seconds += s;
        if !world.is_finite() {
            status = format!("diverged (NaN or Inf) in frame {frame}");
            break;
        }
        let m = world.metrics();
        support = world.support_force();
        csv += &line(&row(frame, world.time(), &m, support, s));
        (stood, drift, pen, joint) =
            (stood && m.in_place, drift.max(m.body_drift), pen.max(m.max_penetration), joint.max(m.max_violation));
        done = frame;
    }
    let mut meta = common();
    if let serde_json::Value::Object(o) = &mut meta {
        o.insert("scene".into(), name.clone().into());
        o.insert("sets".into(), sets.clone().into());
        o.insert("rigid_spheres".into(), rigid_spheres.into());
        o.insert("fast_rotation".into(), fast_rotation.into());
        o.insert("rigid_bodies".into(), scene.rigid.len().into());
        o.insert("joints".into(), scene.joints.len().into());
        o.insert("frames".into(), done.into());
        o.insert("status".into(), status.clone().into());
        o.insert("rapier".into(), mode_json(mode, scene.dt));
        o.insert("notes".into(), world.notes.clone().into());
        o.insert(
            "columns".into(),
            "solverlab's steps.csv columns; iterations, outer_iterations, residual and converged left empty; \
             solve_seconds is the whole Rapier step, integrate_seconds 0; metrics by solverlab's measure of Rapier's state"
                .into(),
        );
    }
    let text = serde_json::to_string_pretty(&meta).expect("JSON") + "\n";
    let mut files = vec![("steps.csv", csv), ("meta.json", text)];
    if bodies {
        let rows = solverlab_cli::body_rows(&scene, done, &[], &world.state().rigid);
        let table = std::iter::once(solverlab_cli::BODY_COLUMNS.map(String::from).to_vec()).chain(rows);
        files.push(("bodies.csv", table.map(|r| line(&r)).collect()));
    }
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    write_files(&out, &files)?;
    println!(
        "rapier {} ({}) on {name}: {done} frames, {status}; {:.4} ms per frame; stood {}, max drift {:.4} m, \
         max penetration {:.5} m, max joint error {:.2e}, final support force {:.1} N",
        rapier_peer::meta::RAPIER_VERSION,
        mode.name(),
        1e3 * seconds / done.max(1) as f64,
        stood as u8,
        drift,
        pen,
        joint,
        support
    );
    for n in &world.notes {
        println!("note: {n}");
    }
    let names: Vec<&str> = files.iter().map(|f| f.0).collect();
    println!("wrote {} in {}", names.join(", "), out.display());
    Ok(())
}

fn run_bench(mut a: Args) -> Result<(), String> {
    let rounds: usize = a.number("--rounds", 5)?;
    let scale: f64 = a.number("--scale", 1.0)?;
    let only = a.value("--only")?;
    let scaling = a.switch("--scaling");
    let out = PathBuf::from(a.value("--out")?.unwrap_or_else(|| "../../results/rapier_peer".into()));
    a.done()?;
    if rounds == 0 || !(scale > 0.0 && scale.is_finite()) {
        return Err("--rounds must be at least 1 and --scale positive".into());
    }
    let list: &[_] = if scaling { &SCALING } else { &SCENES };
    let scenes: Vec<_> = match &only {
        None => list.to_vec(),
        Some(keys) => {
            let keys: Vec<&str> = keys.split(',').collect();
            if let Some(k) = keys.iter().find(|k| !list.iter().any(|s| s.key == **k)) {
                let all: Vec<&str> = list.iter().map(|s| s.key).collect();
                return Err(format!("--only: no scene `{k}` (scenes: {})", all.join(", ")));
            }
            list.iter().filter(|s| keys.contains(&s.key)).copied().collect()
        }
    };
    let path = bench(&scenes, rounds, scale, &out)?;
    print!("{}", std::fs::read_to_string(out.join("table.md")).unwrap_or_default());
    println!("wrote {}", path.display());
    Ok(())
}

fn run_threads(mut a: Args) -> Result<(), String> {
    let rounds: usize = a.number("--rounds", 3)?;
    let scale: f64 = a.number("--scale", 1.0)?;
    let only = a.value("--only")?;
    let out = PathBuf::from(a.value("--out")?.unwrap_or_else(|| "../../results/rapier_threads".into()));
    a.done()?;
    if rounds == 0 || !(scale > 0.0 && scale.is_finite()) {
        return Err("--rounds must be at least 1 and --scale positive".into());
    }
    let keys: Vec<&str> = match &only {
        None => rapier_peer::threads::DEFAULT_KEYS.to_vec(),
        Some(k) => k.split(',').collect(),
    };
    let path = rapier_peer::threads::threads(&keys, rounds, scale, &out)?;
    print!("{}", std::fs::read_to_string(out.join("table.md")).unwrap_or_default());
    println!("wrote {}", path.display());
    Ok(())
}

fn main() -> ExitCode {
    // One thread for solverlab's passes (Rapier is built without its parallel feature; `threads`
    // builds its own pools).
    if let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(1).build_global() {
        eprintln!("rapier-peer: the one-thread pool: {e}");
        return ExitCode::from(1);
    }
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() || argv[0] == "--help" || argv[0] == "-h" {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let command = argv.remove(0);
    let args = Args { rest: argv };
    let result = match command.as_str() {
        "run" => run(args),
        "scene" => export(args),
        "bench" => run_bench(args),
        "threads" => run_threads(args),
        "modes" => args.done().map(|()| {
            for m in Mode::ALL {
                println!("{}", serde_json::to_string_pretty(&mode_json(m, 1.0 / 60.0)).expect("JSON"));
            }
        }),
        other => Err(format!("no command `{other}`\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rapier-peer: {e}");
            ExitCode::from(2)
        }
    }
}
