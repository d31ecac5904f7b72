//! The `solverlab` command as a user meets it: outputs, exit codes, bad input.

mod common;

use std::path::Path;
use std::process::Command;

use common::{solverlab, stderr};

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    r.records().map(|x| x.unwrap().iter().map(str::to_string).collect()).collect()
}

#[test]
fn simulate_writes_the_four_files_with_the_documented_columns() {
    let out = common::absent("cli", "ok");
    let o = solverlab(&[
        "simulate",
        "--scene",
        "chain",
        "--set",
        "links=5",
        "--solver",
        "gs",
        "--frames",
        "10",
        "--substeps",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--violation",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let header = |f: &str| std::fs::read_to_string(out.join(f)).unwrap().lines().next().unwrap().to_string();
    assert!(header("steps.csv").starts_with("frame,time,iterations,outer_iterations,residual,converged,violation,max_violation,rms_violation,max_penetration,max_stretch,tear,kinetic_energy,potential_energy"));
    assert!(header("steps.csv").contains("support_force"));
    assert_eq!(header("forces.csv"), "frame,kind,a,b,force,torque");
    assert!(header("steps.csv").contains("solve_seconds"));
    assert_eq!(header("trace.csv"), "frame,substep,outer,iteration,residual,residual_rms,delta_lambda,violation");
    assert_eq!(header("positions.csv"), "frame,particle,x,y,z");
    assert_eq!(csv_rows(&out.join("steps.csv")).len(), 11, "frame 0 and 10 frames");
    assert_eq!(csv_rows(&out.join("trace.csv")).len(), 10 * 2 * 10, "frames × substeps × iterations");
    assert_eq!(csv_rows(&out.join("positions.csv")).len(), 11 * 6);
    let trace = csv_rows(&out.join("trace.csv"));
    assert!(trace.iter().all(|r| !r[7].is_empty()), "--violation fills the violation column");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["runs"].as_array().unwrap().len(), 1, "simulate is a one-run experiment");
    let run = &meta["runs"][0];
    assert_eq!(run["status"], "ok");
    assert_eq!(run["frames_completed"], 10);
    assert_eq!(run["solver"]["kind"], "relax");
    // The resolved scene is in scene.toml, with its hash in meta.json.
    assert_eq!(run["scene_file"]["file"], "scene.toml");
    assert_eq!(run["scene_file"]["particles"], 6);
    let scene: toml::Table = toml::from_str(&std::fs::read_to_string(out.join("scene.toml")).unwrap()).unwrap();
    assert_eq!(scene["particle"].as_array().unwrap().len(), 6);
    assert_eq!(run["final_state_hash"].as_str().unwrap().len(), 16);
    assert!(meta["commit"].is_string() && meta["rustc"].is_string() && meta["cpu"].is_string());
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

/// meta.json stays small whatever the scene: the resolved scene of a 120 × 120 cloth goes to
/// scene.toml, meta.json keeps its name, hash and sizes.
#[test]
fn meta_json_stays_small_for_a_large_scene() {
    let out = common::absent("cli", "meta-size");
    let o = solverlab(&[
        "simulate",
        "--scene",
        "cloth",
        "--set",
        "nx=120",
        "--set",
        "ny=120",
        "--frames",
        "1",
        "--positions-every",
        "0",
        "--no-figures",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success() || o.status.code() == Some(1), "{}", stderr(&o));
    let (meta, scene) = (out.join("meta.json"), out.join("scene.toml"));
    let (meta_bytes, scene_bytes) = (std::fs::metadata(&meta).unwrap().len(), std::fs::metadata(&scene).unwrap().len());
    assert!(meta_bytes < 4_000, "meta.json is {meta_bytes} bytes");
    assert!(scene_bytes > 1_000_000, "scene.toml holds the scene: {scene_bytes} bytes");
}

#[test]
fn the_same_run_twice_gives_identical_positions_and_hash() {
    let (a, b) = (common::absent("cli", "det-a"), common::absent("cli", "det-b"));
    for d in [&a, &b] {
        let o = solverlab(&[
            "simulate",
            "--scene",
            "cloth",
            "--set",
            "nx=6",
            "--set",
            "ny=6",
            "--solver",
            "{ kind = \"relax\", order = \"shuffled\", seed = 3 }",
            "--frames",
            "30",
            "--out",
            d.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(a.join("positions.csv")).unwrap(), std::fs::read(b.join("positions.csv")).unwrap());
    let hash = |d: &Path| {
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(d.join("meta.json")).unwrap()).unwrap()
            ["runs"][0]["final_state_hash"]
            .clone()
    };
    assert_eq!(hash(&a), hash(&b));
}

/// An inline table that starts from a preset is labelled by the preset and the settings it
/// changes, not by the family's kind (`pgs`), in the summary and in `meta.json`.
#[test]
fn an_inline_preset_table_is_labelled_by_its_preset() {
    for (solver, label) in [
        ("{ preset = \"soft-step\", max_frame_turn = 0.5 }", "soft-step+max_frame_turn"),
        ("{ preset = \"tgs-soft\" }", "tgs-soft"),
        ("{ kind = \"pgs\", iterations = 4 }", "pgs"),
    ] {
        let out = common::absent("cli", "inline-label");
        let args = ["simulate", "--scene", "rigid-stack", "--solver", solver, "--frames", "2", "--out"];
        let o = solverlab(&[&args[..], &[out.to_str().unwrap()]].concat());
        assert!(o.status.success(), "{solver}: {}", stderr(&o));
        let summary = String::from_utf8_lossy(&o.stdout).to_string() + &stderr(&o);
        assert!(summary.contains(&format!("rigid-stack · {label}:")), "{solver}: `{summary}`");
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["runs"][0]["label"], label, "{solver}");
    }
}

fn assert_bad_input(args: &[&str], expected: &[&str]) {
    let out = common::absent("cli", "bad");
    let mut full: Vec<&str> = args.to_vec();
    let out_s = out.to_str().unwrap().to_string();
    full.extend(["--out", &out_s]);
    let o = solverlab(&full);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    let e = stderr(&o);
    for piece in expected {
        assert!(e.contains(piece), "{args:?}: expected `{piece}` in `{e}`");
    }
    assert!(!out.exists(), "{args:?}: bad input must write nothing");
}

#[test]
fn bad_input_is_named_exits_2_and_writes_nothing() {
    let sim = |extra: &[&'static str]| -> Vec<&'static str> { [&["simulate", "--frames", "5"], extra].concat() };
    assert_bad_input(&sim(&["--scene", "nosuch"]), &["scene `nosuch`", "not a builtin"]);
    assert_bad_input(&sim(&["--scene", "cloth", "--set", "nx=-3"]), &["builtin cloth", "nx", "whole number"]);
    assert_bad_input(
        &sim(&["--scene", "cloth", "--set", "colour=3"]),
        &["builtin cloth", "colour", "unknown parameter"],
    );
    assert_bad_input(&sim(&["--scene", "chain", "--set", "mass=-1"]), &["builtin chain", "mass", "must be positive"]);
    assert_bad_input(&sim(&["--scene", "chain", "--set", "damping=1.5"]), &["damping", "outside [0, 1)"]);
    assert_bad_input(&sim(&["--scene", "chain", "--solver", "nosuch"]), &["--solver", "unknown preset `nosuch`"]);
    assert_bad_input(
        &sim(&["--scene", "chain", "--solver", "{ kind = \"relax\", omega = 2.5 }"]),
        &["--solver", "omega", "outside (0, 2)"],
    );
    // Counts are unsigned: a negative or fractional one is refused by name, zero by its minimum.
    assert_bad_input(
        &sim(&["--scene", "chain", "--solver", "{ kind = \"relax\", iterations = -1 }"]),
        &["--solver", "iterations: -1 must be a whole number"],
    );
    assert_bad_input(
        &sim(&["--scene", "chain", "--solver", "{ kind = \"pgs\", substeps = 2.5 }"]),
        &["--solver", "substeps: 2.5 must be a whole number"],
    );
    assert_bad_input(
        &sim(&["--scene", "chain", "--solver", "{ kind = \"relax\", iterations = 0 }"]),
        &["--solver", "iterations: 0 must be at least 1"],
    );
    assert_bad_input(
        &sim(&["--scene", "chain", "--solver", "{ kind = \"relax\", omgea = 1.2 }"]),
        &["--solver", "unknown field `omgea`"],
    );
    assert_bad_input(&sim(&["--scene", "chain", "--dt=-0.1"]), &["--dt"]);
    assert_bad_input(&sim(&["--scene", "missing-file.toml"]), &["missing-file.toml", "cannot read"]);
    // Negative and zero numbers given to numeric flags get a range message, not clap's
    // "unexpected argument".
    assert_bad_input(&["simulate", "--scene", "chain", "--frames", "-3"], &["--frames", "-3 must be at least 1"]);
    assert_bad_input(&["simulate", "--scene", "chain", "--dt", "-1"], &["--dt", "-1 must be a positive number"]);
    assert_bad_input(&["simulate", "--scene", "chain", "--substeps", "0"], &["--substeps", "0 must be at least 1"]);
    assert_bad_input(&sim(&["--scene", "chain", "--positions-every", "-1"]), &["--positions-every", "at least 0"]);
    assert_bad_input(
        &sim(&["--scene", "chain", "--solver", "{ kind = \"relax\", mode = \"gauss seidel\" }"]),
        &["unknown variant `gauss seidel`", "`gauss-seidel`", "`jacobi`", "did you mean `gauss-seidel`?"],
    );
}

/// A near-miss name gets "did you mean …" wherever names are typed: scenes, presets, `--set`
/// keys, solver fields and kinds; a far one gets only the list.
#[test]
fn near_misses_get_a_suggestion() {
    let sim = |extra: &[&'static str]| -> Vec<&'static str> { [&["simulate", "--frames", "5"], extra].concat() };
    assert_bad_input(&sim(&["--scene", "clth"]), &["scene `clth`", "did you mean `cloth`?", "builtins:"]);
    assert_bad_input(&sim(&["--scene", "chain", "--solver", "PGS"]), &["unknown preset `PGS`", "did you mean `pgs`?"]);
    assert_bad_input(&sim(&["--scene", "cloth", "--set", "nxx=8"]), &["nxx", "did you mean `nx`?"]);
    assert_bad_input(
        &sim(&["--scene", "chain", "--solver", "{ kind = \"relax\", omgea = 1.2 }"]),
        &["unknown field `omgea`", "did you mean `omega`?"],
    );
    assert_bad_input(&sim(&["--scene", "chain", "--solver", "{ kind = \"relx\" }"]), &["did you mean `relax`?"]);
    assert_bad_input(&sim(&["--scene", "ragdolll"]), &["did you mean `ragdoll`?"]);
    let o = solverlab(&["scene", "export", "zzzzzz"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a builtin") && !stderr(&o).contains("did you mean"), "{}", stderr(&o));
}

/// `--set nx 8` is explained as the key=value form (not clap's "unexpected argument").
#[test]
fn a_set_without_equals_is_explained() {
    assert_bad_input(
        &["simulate", "--scene", "cloth", "--frames", "2", "--set", "nx", "8"],
        &["--set `nx`", "key=value", "`--set nx=8`"],
    );
}

/// An `--out` no folder can be made in is bad input (exit 2) naming the folder, before any work.
#[test]
fn an_unwritable_output_folder_is_named() {
    let dir = common::absent("cli", "unwritable");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let out = file.join("results");
    let o = solverlab(&["simulate", "--scene", "chain", "--frames", "2", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--out") && stderr(&o).contains("plain-file"), "{}", stderr(&o));
}

/// An `--out` that names an existing file is bad input (exit 2, the project's message), and the
/// file is left as it was.
#[test]
fn an_output_path_that_is_a_file_is_refused() {
    let dir = common::absent("cli", "outfile");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("results.txt");
    std::fs::write(&file, "keep me").unwrap();
    for args in [
        vec!["simulate", "--scene", "chain", "--frames", "2", "--out", file.to_str().unwrap()],
        vec![
            "run",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/quickstart.toml"),
            "--out",
            file.to_str().unwrap(),
        ],
    ] {
        let o = solverlab(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("exists and is not a directory"), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    }
}

/// The spellings papers use are accepted: `gauss-seidel` for the mode, `red-black` for the
/// coloured order, and they run exactly as the canonical names do.
#[test]
fn spelled_out_names_are_aliases() {
    let run = |solver: &str, name: &str| {
        let out = common::absent("cli", name);
        let o = solverlab(&[
            "simulate",
            "--scene",
            "chain",
            "--frames",
            "5",
            "--solver",
            solver,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{solver}: {}", stderr(&o));
        std::fs::read_to_string(out.join("positions.csv")).unwrap()
    };
    let spelled = run("{ kind = \"relax\", mode = \"gauss-seidel\", order = \"red-black\" }", "alias_a");
    let canonical = run("{ kind = \"relax\", mode = \"gauss_seidel\", order = \"colored\" }", "alias_b");
    assert_eq!(spelled, canonical);
}

/// A run that blows up without a NaN (Jacobi at ω = 1.99 on a cloth with 10 s steps) exits 1,
/// names the frame, the solver and the quantity, and keeps the rows before it.
#[test]
fn a_blown_up_run_exits_1_and_names_the_quantity() {
    let out = common::absent("cli", "blowup");
    let o = solverlab(&[
        "simulate",
        "--scene",
        "cloth",
        "--solver",
        "{ kind = \"relax\", mode = \"jacobi\", omega = 1.99 }",
        "--dt",
        "10",
        "--frames",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("blew up in frame 1") && e.contains("`relax`") && e.contains("stretched"), "{e}");
    assert_eq!(csv_rows(&out.join("steps.csv")).len(), 1, "frame 0's row is kept");
}

/// A run that tears (textbook sequential impulses stretch the swinging chain's links to 2.6 times
/// their length) runs to its last frame, exits 1 naming the frame, the solver and the tear, and
/// ends with the status `torn` in meta.json; the `pgs` preset holds the same chain and exits 0.
#[test]
fn a_torn_run_exits_1_names_the_tear_and_keeps_every_frame() {
    let out = common::absent("cli", "torn");
    let o = solverlab(&[
        "simulate",
        "--scene",
        "chain",
        "--solver",
        "{ kind = \"pgs\", split_impulse = false }",
        "--frames",
        "60",
        "--out",
        out.to_str().unwrap(),
        "--positions-every",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("tore in frame") && e.contains("`pgs`") && e.contains("torn by"), "{e}");
    assert_eq!(csv_rows(&out.join("steps.csv")).len(), 61, "every frame's row is kept");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["runs"][0]["status"], "torn");
    let held = common::absent("cli", "held");
    let o = solverlab(&[
        "simulate",
        "--scene",
        "chain",
        "--solver",
        "pgs",
        "--frames",
        "60",
        "--out",
        held.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_malformed_scene_file_is_named_with_its_field() {
    let dir = common::absent("cli", "file");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(&file, "name = \"x\"\n[[particle]]\nx = [0.0, 0.0, 0.0]\n[[particle]]\nx = [1.0, 0.0, 0.0]\n[[constraint]]\ntype = \"distance\"\na = 0\nb = 5\n").unwrap();
    assert_bad_input(
        &["simulate", "--scene", file.to_str().unwrap()],
        &["bad.toml", "constraint[0].b", "out of range"],
    );
}

#[test]
fn a_diverging_run_exits_1_names_frame_and_solver_and_keeps_the_rows() {
    let out = common::absent("cli", "diverge");
    // Chebyshev-accelerated Jacobi with ρ = 0.99 from the first sweep blows up on a 30-link
    // chain (its energy rises tenfold in frame 48).
    let o = solverlab(&[
        "simulate",
        "--scene",
        "chain",
        "--set",
        "links=30",
        "--solver",
        "{ kind = \"relax\", mode = \"jacobi\", chebyshev_rho = 0.99, chebyshev_delay = 1 }",
        "--frames",
        "100",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("blew up in frame 48") && e.contains("`relax`"), "{e}");
    let steps = csv_rows(&out.join("steps.csv"));
    assert!(!steps.is_empty() && steps.len() < 101, "rows up to the divergence are kept: {}", steps.len());
    assert!(steps.iter().all(|r| r.iter().all(|f| !f.contains("NaN"))), "no NaN row is written");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["runs"][0]["status"], "diverged");
    assert_eq!(meta["runs"][0]["frames_completed"].as_u64().unwrap() as usize + 1, steps.len());
}

#[test]
fn every_builtin_exports_to_a_file_that_simulates_like_the_builtin() {
    let dir = common::absent("cli", "export");
    std::fs::create_dir_all(&dir).unwrap();
    for name in [
        "particles-in-box",
        "stick-in-box",
        "cloth",
        "plant",
        "chain",
        "pendulum",
        "tetrahedron",
        "ragdoll",
        "spring",
        "ragdoll-stairs",
        "embedded-box",
        "warm-start-energy",
    ] {
        let o = solverlab(&["scene", "export", name]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, &o.stdout).unwrap();
        let run = |scene: &str, out: &Path| {
            let o = solverlab(&[
                "simulate",
                "--scene",
                scene,
                "--frames",
                "20",
                "--out",
                out.to_str().unwrap(),
                "--positions-every",
                "0",
            ]);
            // (The default cloth tears under ten Gauss-Seidel sweeps: exit 1, every row kept.)
            let meta: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
            let torn = meta["runs"][0]["status"] == "torn";
            assert!(o.status.success() || (torn && o.status.code() == Some(1)), "{scene}: {}", stderr(&o));
            meta["runs"][0]["final_state_hash"].clone()
        };
        assert_eq!(
            run(name, &dir.join(format!("{name}-b"))),
            run(file.to_str().unwrap(), &dir.join(format!("{name}-f"))),
            "{name}"
        );
    }
}

#[test]
fn lists_name_every_scene_and_preset() {
    let scenes = String::from_utf8(solverlab(&["scene", "list"]).stdout).unwrap();
    for name in ["particles-in-box", "cloth", "ragdoll", "spring"] {
        assert!(scenes.contains(name));
    }
    let solvers = String::from_utf8(solverlab(&["solver", "list"]).stdout).unwrap();
    for name in ["gs", "jacobi", "sor", "xpbd"] {
        assert!(solvers.lines().any(|l| l.starts_with(name)), "{name}");
    }
}

#[test]
fn a_direct_solve_that_cannot_reach_its_tolerance_says_why_in_meta_json() {
    // The default cloth has shear sticks: more rows than degrees of freedom.
    let out = common::absent("cli", "direct-notes");
    let o = solverlab(&[
        "simulate",
        "--scene",
        "cloth",
        "--solver",
        "direct",
        "--frames",
        "2",
        "--positions-every",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["runs"][0]["unconverged_frames"], 2);
    let note = meta["runs"][0]["notes"][0]["note"].as_str().unwrap();
    assert!(note.contains("outnumber the movable degrees of freedom"), "{note}");
}

#[test]
fn export_system_refuses_a_solver_without_an_explicit_system() {
    assert_bad_input(
        &["export-system", "--scene", "chain", "--solver", "gs", "--frame", "2"],
        &["--solver gs", "explicit system"],
    );
}

#[test]
fn simulate_writes_body_centres_and_orientations_for_box_scenes() {
    let out = common::absent("cli", "bodies");
    let o = solverlab(&[
        "simulate",
        "--scene",
        "box-stack",
        "--set",
        "boxes=3",
        "--solver",
        "direct",
        "--frames",
        "4",
        "--positions-every",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = csv_rows(&out.join("bodies.csv"));
    assert_eq!(rows.len(), 3 * 3, "frames 0, 2 and 4 × three boxes");
    let f = |r: &Vec<String>, k: usize| r[k].parse::<f64>().unwrap();
    for (k, r) in rows.iter().take(3).enumerate() {
        // Frame 0: centres where the scene put them (edge 0.5 m), orientation the identity.
        assert!((f(r, 3) - (0.25 + 0.5 * k as f64)).abs() < 1e-12, "{r:?}");
        assert!((f(r, 5) - 1.0).abs() < 1e-15 && f(r, 6) == 0.0 && f(r, 7) == 0.0 && f(r, 8) == 0.0, "{r:?}");
    }
    for r in &rows {
        let norm = (5..9).map(|k| f(r, k).powi(2)).sum::<f64>();
        assert!((norm - 1.0).abs() < 1e-12, "a unit quaternion: {r:?}");
    }
    let steps = csv_rows(&out.join("steps.csv"));
    let header = std::fs::read_to_string(out.join("steps.csv")).unwrap().lines().next().unwrap().to_string();
    let col = header.split(',').position(|c| c == "in_place").unwrap();
    assert!(steps.iter().all(|r| r[col] == "1"), "a resting three-box stack stays in place for 4 frames");
    // Scenes without bodies get no bodies.csv.
    let out2 = common::absent("cli", "no-bodies");
    let o = solverlab(&["simulate", "--scene", "chain", "--frames", "2", "--out", out2.to_str().unwrap()]);
    assert!(o.status.success() && !out2.join("bodies.csv").exists());
}

/// Without a terminal, progress is a plain line every few seconds (here every frame, through
/// `SOLVERLAB_PROGRESS_SECONDS=0`), and a closing line with the total.
#[test]
fn progress_without_a_terminal_is_a_line_at_a_time() {
    let out = common::absent("cli", "progress");
    let o = Command::new(env!("CARGO_BIN_EXE_solverlab"))
        .args(["simulate", "--scene", "chain", "--frames", "4", "--no-figures", "--out", out.to_str().unwrap()])
        .env("SOLVERLAB_PROGRESS_SECONDS", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    for k in 1..=4 {
        assert!(e.contains(&format!("chain · gs: {k}/4 frames, ")), "line for frame {k} in `{e}`");
    }
    assert!(e.contains("chain · gs: 4 frames in "), "{e}");
    let o =
        solverlab(&["simulate", "--scene", "chain", "--frames", "4", "--no-figures", "--out", out.to_str().unwrap()]);
    assert!(!stderr(&o).contains("1/4 frames"), "the default prints nothing for a short run: {}", stderr(&o));
}

/// Finite but absurd magnitudes are refused naming the right field: gravity, a particle's speed
/// and position, a rigid body's mass and size, a fixed body that moves, and a NaN joint limit.
#[test]
fn absurd_magnitudes_are_refused_naming_the_field() {
    assert_bad_input(&["simulate", "--scene", "pendulum", "--set", "gravity=[0, -1e300, 0]"], &["gravity", "beyond"]);
    let dir = common::absent("cli", "magnitudes");
    std::fs::create_dir_all(&dir).unwrap();
    let rigid = |body: &str| {
        format!("name = \"m\"\n[[plane]]\nnormal = [0.0, 1.0, 0.0]\noffset = 0.0\n[[rigid]]\nshape = \"box\"\n{body}\n")
    };
    let cases = [
        (
            "speed",
            "name = \"m\"\n[[particle]]\nx = [0.0, 0.0, 0.0]\nv = [1e155, 0.0, 0.0]\nmass = 1.0\n",
            "particle[0].v",
        ),
        ("far", "name = \"m\"\n[[particle]]\nx = [1e300, 0.0, 0.0]\nmass = 1.0\n", "particle[0].x"),
        ("light", &rigid("half_extents = [0.25, 0.25, 0.25]\nmass = 1e-320\nx = [0.0, 0.25, 0.0]"), "rigid[0].mass"),
        (
            "tiny",
            &rigid("half_extents = [1e-9, 0.25, 0.25]\nmass = 1.0\nx = [0.0, 0.25, 0.0]"),
            "rigid[0].half_extents",
        ),
        ("huge", &rigid("half_extents = [1e9, 0.25, 0.25]\nmass = 1.0\nx = [0.0, 0.25, 0.0]"), "rigid[0].half_extents"),
        (
            "moving",
            &rigid("half_extents = [0.25, 0.25, 0.25]\nfixed = true\nv = [1.0, 0.0, 0.0]\nx = [0.0, 0.25, 0.0]"),
            "rigid[0].v",
        ),
    ];
    for (name, text, field) in cases {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, text).unwrap();
        assert_bad_input(&["simulate", "--scene", file.to_str().unwrap()], &[&format!("{name}.toml"), field]);
    }
    // A NaN lower limit of a ragdoll's hinge is named `lower` (it used to be blamed on `upper`).
    let export = solverlab(&["scene", "export", "rigid-ragdoll"]);
    assert!(export.status.success());
    let text = String::from_utf8(export.stdout).unwrap().replacen("lower = -0.5", "lower = nan", 1);
    let file = dir.join("limit.toml");
    std::fs::write(&file, text).unwrap();
    assert_bad_input(&["simulate", "--scene", file.to_str().unwrap()], &["limit.toml", "].lower"]);
}

/// A run whose bodies fall is `ok` as a run and says so: `simulate`'s summary names the first
/// frame a body was out of its place and `meta.json`'s `stood` is false; a stack that stands
/// says neither.
#[test]
fn a_pile_that_falls_says_so_and_one_that_stands_does_not() {
    for (scene, stands) in [("rigid-stack", true), ("rigid-ragdoll", false)] {
        let out = common::absent("cli", "stood");
        let args = ["simulate", "--scene", scene, "--solver", "tgs-soft", "--frames", "10", "--out"];
        let o = solverlab(&[&args[..], &[out.to_str().unwrap()]].concat());
        assert!(o.status.success(), "{scene}: {}", stderr(&o));
        let summary = String::from_utf8_lossy(&o.stdout).to_string() + &stderr(&o);
        assert!(summary.contains("status ok"), "{scene}: `{summary}`");
        assert_eq!(!summary.contains("a body out of its place from frame"), stands, "{scene}: `{summary}`");
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["runs"][0]["stood"], stands, "{scene}");
    }
}
