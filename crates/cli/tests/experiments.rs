//! `solverlab run` and `solverlab plot`: parsing, sweep expansion, frozen-state convergence,
//! figures from CSVs, determinism, and bad experiment files.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::solverlab;

fn write_experiment(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("exp.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn run(dir: &Path, text: &str) -> (Output, PathBuf) {
    let file = write_experiment(dir, text);
    let out = dir.join("results");
    let o = solverlab(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    (o, out)
}

fn table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().iter().map(str::to_string).collect();
    (h, r.records().map(|x| x.unwrap().iter().map(str::to_string).collect()).collect())
}

const SMALL: &str = r#"
# a test experiment
name = "small"
frames = 20
trace = true

[[scene]]
name = "chain"
set = { links = 4 }

[[solver]]
label = "GS"
preset = "gs"

[[solver]]
label = "PGS"
preset = "pgs"

[sweep]
"solver.iterations" = [2, 5, 9]
"scene.length" = [0.1, 0.2]

[[figure]]
name = "violation"
x = "frame"
y = ["max_violation", "energy_ratio"]
series = ["label", "solver.iterations"]
logy = true

[[figure]]
name = "by_iterations"
table = "runs"
x = "solver.iterations"
y = "final_violation"
series = ["label", "scene.length"]
logy = true
"#;

#[test]
fn the_sweep_expands_to_the_cartesian_product_with_one_column_per_key() {
    let d = common::tmp("exp", "sweep");
    let (o, out) = run(&d, SMALL);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (h, rows) = table(&out.join("runs.csv"));
    assert_eq!(rows.len(), 2 * 3 * 2, "solvers × iterations × lengths");
    let (ic, lc) =
        (h.iter().position(|c| c == "solver.iterations").unwrap(), h.iter().position(|c| c == "scene.length").unwrap());
    let mut combos: Vec<(String, String, String)> =
        rows.iter().map(|r| (r[2].clone(), r[ic].clone(), r[lc].clone())).collect();
    combos.sort();
    combos.dedup();
    assert_eq!(combos.len(), 12);
    let (sh, steps) = table(&out.join("steps.csv"));
    assert_eq!(steps.len(), 12 * 21);
    assert!(sh.starts_with(&["run".into(), "scene".into(), "label".into(), "family".into()]));
    for f in [
        "violation.svg",
        "violation.png",
        "by_iterations.svg",
        "by_iterations.png",
        "meta.json",
        "experiment.toml",
        "trace.csv",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["runs"].as_array().unwrap().len(), 12);
    assert!(meta["runs"][0]["final_state_hash"].as_str().unwrap().len() == 16);
    assert!(
        meta["commit"].is_string() && meta["rustc"].is_string() && meta["cpu"].is_string() && meta["date"].is_string()
    );
}

/// Drops the named columns (timings) from a CSV's text.
fn without(path: &Path, drop: &[&str]) -> Vec<Vec<String>> {
    let (h, rows) = table(path);
    let keep: Vec<usize> = (0..h.len()).filter(|&i| !drop.contains(&h[i].as_str())).collect();
    rows.into_iter().map(|r| keep.iter().map(|&i| r[i].clone()).collect()).collect()
}

#[test]
fn two_runs_of_an_experiment_give_identical_csvs_apart_from_timings() {
    let (a, b) = (common::tmp("exp", "det-a"), common::tmp("exp", "det-b"));
    let text = SMALL.replace("frames = 20", "frames = 15") + "\n[convergence]\nframe = 10\n";
    let (oa, outa) = run(&a, &text);
    let (ob, outb) = run(&b, &text);
    assert!(oa.status.success() && ob.status.success(), "{}", String::from_utf8_lossy(&oa.stderr));
    let timing = [
        "solve_seconds",
        "integrate_seconds",
        "step_ms_median",
        "step_ms_p25",
        "step_ms_p75",
        "solve_ms_median",
        "step_ms_mean",
        "seconds",
    ];
    for f in ["steps.csv", "runs.csv", "trace.csv", "convergence.csv", "frozen_trace.csv"] {
        assert_eq!(without(&outa.join(f), &timing), without(&outb.join(f), &timing), "{f}");
    }
}

#[test]
fn plot_redraws_identical_figures_from_the_csvs_alone() {
    let d = common::tmp("exp", "plot");
    let (o, out) = run(&d, SMALL);
    assert!(o.status.success());
    let before = std::fs::read(out.join("violation.svg")).unwrap();
    for f in ["violation.svg", "violation.png", "by_iterations.svg", "by_iterations.png"] {
        std::fs::remove_file(out.join(f)).unwrap();
    }
    let p = solverlab(&["plot", out.to_str().unwrap()]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    assert_eq!(std::fs::read(out.join("violation.svg")).unwrap(), before);
    assert!(out.join("by_iterations.png").exists());
}

#[test]
fn frozen_state_convergence_starts_every_solver_from_the_same_state() {
    // One stick: the projection of the bob onto its circle is unique, so every position solver
    // that starts from the same frozen state must land on the direct solver's answer.
    let d = common::tmp("exp", "frozen");
    let text = r#"
name = "frozen"
frames = 30
trace = false
[convergence]
frame = 20
caps = [1, 50]
[[scene]]
name = "pendulum"
[[solver]]
label = "GS"
preset = "gs"
[[solver]]
label = "Jacobi"
preset = "jacobi"
[[solver]]
label = "CG"
preset = "cg"
[[solver]]
label = "direct"
preset = "direct"
"#;
    let (o, out) = run(&d, text);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (h, rows) = table(&out.join("convergence.csv"));
    let (cap, err, label) =
        (h.iter().position(|c| c == "cap").unwrap(), h.iter().position(|c| c == "error_max").unwrap(), 2);
    assert_eq!(rows.len(), 4 * 2);
    for r in rows.iter().filter(|r| r[cap] == "50") {
        let e: f64 = r[err].parse().unwrap();
        // A capped CG takes a single Gauss-Newton step, whose error is second order in C.
        let bound = if r[label] == "CG" { 1e-7 } else { 1e-12 };
        assert!(e < bound, "{}: error {e} to the reference from the same frozen state", r[label]);
    }
}

fn bad(text: &str, expected: &[&str]) {
    let d = common::tmp("exp", "bad");
    let (o, out) = run(&d, text);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("exp.toml"), "{e}");
    for piece in expected {
        assert!(e.contains(piece), "expected `{piece}` in `{e}`");
    }
    assert!(!out.exists(), "a bad experiment writes nothing");
}

#[test]
fn bad_experiment_files_are_rejected_before_anything_runs() {
    bad(
        &SMALL.replace("preset = \"pgs\"", "preset = \"pgz\""),
        &["solver[1] (PGS)", "unknown solver `pgz`", "did you mean `pgs`?"],
    );
    bad(
        &SMALL.replace("\"solver.iterations\"", "\"solver.iteratons\""),
        &["solver[0] (GS)", "unknown field `iteratons`", "did you mean `iterations`?"],
    );
    bad(
        &SMALL.replace("\"scene.length\" = [0.1, 0.2]", "\"scene.lenght\" = [0.1]"),
        &["scene[0]", "lenght", "unknown parameter", "did you mean `length`?"],
    );
    bad(
        &SMALL.replace("\"scene.length\" = [0.1, 0.2]", "\"scene.length\" = []"),
        &["sweep.\"scene.length\"", "empty sweep"],
    );
    bad(
        &SMALL.replace("y = \"final_violation\"", "y = \"final_violations\""),
        &["figure[1] (by_iterations)", "no column `final_violations`", "did you mean `final_violation`?"],
    );
    bad(&SMALL.replace("frames = 20", "frames = 20\nframs = 3"), &["unknown field `frams`", "did you mean `frames`?"]);
    bad(&SMALL.replace("name = \"small\"", "name = \"../../x\""), &["name: `../../x` must be a plain name"]);
    bad(&SMALL.replace("name = \"small\"", "name = \"\""), &["name: `` must be a plain name"]);
    bad(&SMALL.replace("label = \"PGS\"", "label = \"GS\""), &["solver[1]", "the label `GS` is solver[0]'s too"]);
    bad(
        &SMALL.replace("name = \"by_iterations\"", "name = \"violation\""),
        &["figure[1]", "the name `violation` is figure[0]'s too"],
    );
    bad(
        &SMALL.replace("frames = 20", "frames = 20\nwarmup = 20"),
        &["warmup: 20 must be below the frames a run has (20)"],
    );
    bad(
        &SMALL.replace("\"solver.iterations\" = [2, 5, 9]", "\"solver.iterations\" = [2, -5]"),
        &["iterations: -5 must be a whole number"],
    );
}

#[test]
fn an_interrupted_run_leaves_no_file_behind() {
    let d = common::tmp("exp", "interrupt");
    let text = r#"
name = "long"
frames = 200000
trace = false
[[scene]]
name = "cloth"
set = { nx = 16, ny = 16 }
[[solver]]
label = "GS"
preset = "gs"
"#;
    let file = write_experiment(&d, text);
    let out = d.join("results");
    let mut child = Command::new(env!("CARGO_BIN_EXE_solverlab"))
        .args(["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "Ctrl-C ends the run with status 130");
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(!out.exists(), "nothing written: {left:?}");
}

/// A run that tears is counted as `torn` in runs.csv, the run's note names it, and the figure's
/// legend marks its line: the textbook sequential impulses tear the swinging chain, `pgs` holds it.
#[test]
fn torn_runs_are_counted_and_their_lines_marked() {
    let dir = common::absent("experiments", "torn");
    std::fs::create_dir_all(&dir).unwrap();
    let (o, out) = run(
        &dir,
        r#"
name = "torn"
frames = 60
[[scene]]
name = "chain"
[[solver]]
label = "textbook"
preset = "pgs"
set = { split_impulse = false }
[[solver]]
label = "split"
preset = "pgs"
[[figure]]
name = "stretch"
x = "frame"
y = "max_stretch"
"#,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("torn"), "the note names the torn run");
    let (h, rows) = table(&out.join("runs.csv"));
    let (label, status) = (h.iter().position(|c| c == "label").unwrap(), h.iter().position(|c| c == "status").unwrap());
    let status_of = |l: &str| rows.iter().find(|r| r[label] == l).unwrap()[status].clone();
    assert_eq!((status_of("textbook").as_str(), status_of("split").as_str()), ("torn", "ok"));
    let svg = std::fs::read_to_string(out.join("stretch.svg")).unwrap();
    assert!(svg.contains("textbook [torn]") && !svg.contains("split [torn]"), "the legend marks the torn line");
}

/// The figure-spec options reach the drawing: axis titles and limits, selected series in the
/// given order, a series' own colour and line, a legend placement, reference lines and a closed
/// form, and a dot plot with its groups and rows; `plot --style paper` writes serif vector figures
/// one and two columns wide.
#[test]
fn figure_specs_set_labels_limits_series_references_and_paper_forms() {
    let d = common::tmp("exp", "figure-specs");
    let text = format!(
        "{}{}",
        SMALL,
        r##"
[[figure]]
name = "styled"
table = "runs"
x = "solver.iterations"
y = "final_violation"
series = ["label"]
filter = { "scene.length" = 0.1 }
xlabel = "sweeps per frame"
ylabel = "gap left (m)"
xlim = [1, 10]
logy = true
legend = "below"
select = ["PGS", "G*"]
style = { GS = { colour = "#123456", line = "dotted" } }
reference = [{ y = 1e-3, label = "one millimetre" }, { y = "1e-2/x^2", label = "1/n²", colour = "green" }, { x = 4 }]

[[figure]]
name = "dots"
kind = "dots"
table = "runs"
x = "final_violation"
series = ["label"]
group = "solver.iterations"
panels = "scene.length"
logx = true
reference = [{ x = 1e-3, label = "1 mm" }]
"##
    );
    let (o, out) = run(&d, &text);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let svg = std::fs::read_to_string(out.join("styled.svg")).unwrap();
    for piece in
        ["sweeps per frame", "gap left (m)", "one millimetre", "1/n²", "stroke=\"#123456\"", "stroke=\"#009E73\""]
    {
        assert!(svg.contains(piece), "styled.svg lacks {piece}");
    }
    // PGS is selected first, so it takes the first palette colour; GS keeps its own.
    assert!(svg.contains("stroke=\"#0072B2\""));
    let dots = std::fs::read_to_string(out.join("dots.svg")).unwrap();
    for piece in [">\nGS\n<", ">\nPGS\n<", "solver.iterations = 2", "solver.iterations = 9", "1 mm", "length = 0.2"] {
        assert!(dots.contains(piece), "dots.svg lacks {piece:?}");
    }

    let p = solverlab(&["plot", out.to_str().unwrap(), "--style", "paper"]);
    assert!(p.status.success(), "{}", common::stderr(&p));
    for (form, width) in [("single", 336), ("double", 672)] {
        let svg = std::fs::read_to_string(out.join(format!("paper/styled-{form}.svg"))).unwrap();
        assert!(svg.starts_with(&format!("<svg width=\"{width}\"")), "{form}: {}", &svg[..60]);
        assert!(svg.contains("font-family=\"serif\"") && svg.contains("sweeps per frame"));
        assert!(out.join(format!("paper/dots-{form}.png")).exists());
    }

    // A pattern that names no series is an error naming the figure, with a suggestion.
    let typo = text.replace("select = [\"PGS\", \"G*\"]", "select = [\"PSG\"]");
    let (o, _) = run(&common::tmp("exp", "figure-specs-typo"), &typo);
    assert!(!o.status.success());
    let e = common::stderr(&o);
    assert!(e.contains("styled") && e.contains("`PSG`") && e.contains("did you mean `PGS`?"), "{e}");
}

#[test]
fn bad_figure_specs_are_rejected_naming_the_key() {
    let with = |extra: &str| {
        SMALL.replace(
            "series = [\"label\", \"scene.length\"]",
            &format!("series = [\"label\", \"scene.length\"]\n{extra}"),
        )
    };
    bad(&with("style = { GS = { colour = \"blu\" } }"), &["style.\"GS\".colour", "did you mean `blue`?"]);
    bad(&with("reference = [{ y = \"sin(x\" }]"), &["reference[0].y", "expected `)`"]);
    bad(&with("reference = [{ x = 1, y = 2 }]"), &["reference[0]", "either x"]);
    bad(&with("xlim = [3, 1]"), &["xlim", "increasing"]);
    bad(&with("ylim = [0, 1]"), &["ylim", "positive on a log axis"]);
    bad(&with("legend = \"outside\""), &["legend", "below"]);
    bad(&with("group = \"label\""), &["group", "dots"]);
}

/// meta.json says whether the frozen-state reference converged (the yardstick of every error_*
/// column), and `run` prints a note when it did not: the chain's does; the cloth pinned at two
/// corners, whose top row is a taut line between the pins, does not.
#[test]
fn meta_json_says_whether_the_frozen_reference_converged() {
    let d = common::tmp("exp", "reference-check");
    let (o, out) = run(
        &d,
        r#"
name = "reference_check"
frames = 12
trace = false

[convergence]
frame = 10
reference = "direct"
caps = [1, 4]

[[scene]]
name = "chain"
set = { links = 4 }

[[scene]]
name = "cloth"
label = "cloth pinned at two corners"
set = { nx = 6, ny = 6 }

[[solver]]
label = "GS"
preset = "gs"
"#,
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    let chain = &meta["runs"][0]["frozen_reference"];
    assert_eq!(chain["converged"], true, "{chain}");
    assert!(chain["violation"].as_f64().unwrap() < 1e-12 && chain["iterations"].as_u64().unwrap() <= 10, "{chain}");
    let cloth = &meta["runs"][1]["frozen_reference"];
    assert_eq!(cloth["converged"], false, "{cloth}");
    assert!(cloth["note"].as_str().unwrap().contains("singular"), "{cloth}");
    let e = common::stderr(&o);
    assert!(e.contains("did not meet its tolerance in runs 1 (cloth pinned at two corners)"), "{e}");
}

/// One writer per folder: while a live process holds the lock of an `--out`, a second run into
/// it stops at once with exit 2 naming the holder and writes nothing; a lock left by a process
/// that no longer runs is taken over with a note, and the finished run removes it.
#[test]
fn a_locked_output_folder_is_refused_and_a_stale_lock_taken_over() {
    let d = common::tmp("exp", "lock");
    let file = write_experiment(&d, SMALL);
    let out = d.join("results");
    let lock = d.join(".results.solverlab-lock");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    // This test process is alive: the lock is held.
    std::fs::write(&lock, format!("{host} {}\n", std::process::id())).unwrap();
    let o = solverlab(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    let e = common::stderr(&o);
    assert!(e.contains(&format!("is being written by process {} on {host}", std::process::id())), "{e}");
    assert!(!out.join("runs.csv").exists(), "a refused run wrote results");
    assert!(lock.exists(), "the holder's lock was removed");
    // A process id that no longer runs (above Linux's largest): taken over.
    std::fs::write(&lock, format!("{host} 4194305\n")).unwrap();
    let o = solverlab(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("no longer runs; taking it over"));
    assert!(out.join("runs.csv").exists() && !lock.exists());
}

/// Results replace their folder whole: re-using an `--out` for another experiment leaves none of
/// the earlier one's tables or figures; a folder that holds other files is refused.
#[test]
fn a_results_folder_is_replaced_whole() {
    let d = common::tmp("exp", "replace");
    let out = d.join("results");
    let with_forces = SMALL.replace("trace = true", "trace = true\nforces_every = 5");
    let (o, _) = run(&d, &with_forces);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(out.join("forces.csv").exists() && out.join("by_iterations.svg").exists());
    let plain = SMALL.replace("trace = true", "trace = false").replace("name = \"by_iterations\"", "name = \"again\"");
    let (o, _) = run(&d, &plain);
    assert!(o.status.success(), "{}", common::stderr(&o));
    for gone in ["forces.csv", "by_iterations.svg", "by_iterations.png"] {
        assert!(!out.join(gone).exists(), "{gone} of the earlier result is still there");
    }
    assert!(out.join("again.svg").exists() && out.join("runs.csv").exists());
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("staging") || n.contains(".old-") || n.ends_with("solverlab-lock"))
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");

    let foreign = d.join("notes");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("thesis.tex"), "keep me").unwrap();
    let file = write_experiment(&d, SMALL);
    let o = solverlab(&["run", file.to_str().unwrap(), "--out", foreign.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("is not a solverlab results folder"));
    assert_eq!(std::fs::read_to_string(foreign.join("thesis.tex")).unwrap(), "keep me");
}

/// An absurd `--jobs` runs at most four runs per core, with a note, instead of starting a
/// million threads.
#[test]
fn jobs_are_capped_at_four_per_core() {
    let d = common::tmp("exp", "jobs");
    let file = write_experiment(&d, SMALL);
    let out = d.join("results");
    let o = solverlab(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--jobs", "1000000"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("note: 1000000 jobs on"), "{}", common::stderr(&o));
    assert!(out.join("runs.csv").exists());
}
