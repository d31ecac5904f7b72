//! Scale-out: `run --list-runs`, `run --shard I/N`, `merge` and `run --resume`. Shards run as
//! separate processes and merge into exactly the tables of the whole run; a run killed midway
//! and resumed equals one that was never interrupted; bad shards and folders are refused with
//! exit 2 and nothing overwritten.

use std::collections::BTreeSet;
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{s, solverlab, stderr};

/// Columns that hold wall-clock times: the only ones allowed to differ between two runs.
const TIMING: [&str; 8] = [
    "solve_seconds",
    "integrate_seconds",
    "step_ms_median",
    "step_ms_p25",
    "step_ms_p75",
    "solve_ms_median",
    "step_ms_mean",
    "seconds",
];

/// Every CSV of `a` and `b`: the same files, the same headers, the same rows apart from the
/// timing columns. Returns how many rows were compared.
fn same_tables(a: &Path, b: &Path) -> usize {
    let names = |d: &Path| -> BTreeSet<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".csv"))
            .collect()
    };
    assert_eq!(names(a), names(b), "the same tables");
    let mut rows = 0;
    for name in names(a) {
        let read = |d: &Path| {
            let mut r = csv::Reader::from_path(d.join(&name)).unwrap();
            let h: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
            let body: Vec<Vec<String>> = r.records().map(|x| x.unwrap().iter().map(str::to_string).collect()).collect();
            (h, body)
        };
        let ((ha, ra), (hb, rb)) = (read(a), read(b));
        assert_eq!(ha, hb, "{name}: columns");
        assert_eq!(ra.len(), rb.len(), "{name}: rows");
        let keep: Vec<usize> = (0..ha.len()).filter(|&i| !TIMING.contains(&ha[i].as_str())).collect();
        for (k, (x, y)) in ra.iter().zip(&rb).enumerate() {
            let (x, y): (Vec<&String>, Vec<&String>) =
                (keep.iter().map(|&i| &x[i]).collect(), keep.iter().map(|&i| &y[i]).collect());
            assert_eq!(x, y, "{name}: row {k}");
        }
        rows += ra.len();
    }
    rows
}

fn hashes(d: &Path) -> Vec<String> {
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("meta.json")).unwrap()).unwrap();
    meta["runs"].as_array().unwrap().iter().map(|r| r["final_state_hash"].as_str().unwrap().to_string()).collect()
}

/// Eight runs over a particle chain and a rigid stack, with positions, bodies, contacts, forces,
/// a frozen-state study and a snapshot figure: every table a run writes.
const SWEEP: &str = r#"
name = "sharded"
frames = 12
forces_every = 4

[convergence]
frame = 6
caps = [1, 4]

[[scene]]
name = "chain"
set = { links = 4 }

[[scene]]
name = "rigid-stack"
set = { boxes = 2 }

[[solver]]
label = "GS"
preset = "gs"

[[solver]]
label = "PGS"
preset = "pgs"

[sweep]
"solver.iterations" = [3, 8]

[[figure]]
name = "violation"
x = "frame"
y = "violation"
series = ["label", "solver.iterations"]
logy = true

[[figure]]
name = "snap"
kind = "snapshots"
at = [0, 12]
"#;

#[test]
fn three_shard_processes_merge_into_the_tables_of_the_whole_run() {
    let d = common::tmp("shards", "merge");
    let file = d.join("sweep.toml");
    std::fs::write(&file, SWEEP).unwrap();

    let o = solverlab(&["run", s(&file), "--list-runs"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listed = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(listed.lines().count(), 8, "one line per run:\n{listed}");
    assert!(listed.lines().next().unwrap().starts_with("0\tchain\tGS\tsolver.iterations=3"), "{listed}");
    assert!(!d.join("results").exists(), "--list-runs runs nothing");

    let whole = d.join("whole");
    let o = solverlab(&["run", s(&file), "--out", s(&whole)]);
    assert!(o.status.success(), "{}", stderr(&o));

    // Three shards at once, as three processes.
    let shard_dirs: Vec<PathBuf> = (1..=3).map(|i| d.join(format!("shard{i}"))).collect();
    let children: Vec<_> = shard_dirs
        .iter()
        .enumerate()
        .map(|(k, dir)| {
            Command::new(env!("CARGO_BIN_EXE_solverlab"))
                .args(["run", s(&file), "--shard", &format!("{}/3", k + 1), "--out", s(dir)])
                .output()
                .unwrap()
        })
        .collect::<Vec<_>>();
    let mut seen = BTreeSet::new();
    for (o, dir) in children.iter().zip(&shard_dirs) {
        assert!(o.status.success(), "{}", stderr(o));
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let runs: Vec<u64> = meta["shard"]["runs"].as_array().unwrap().iter().map(|r| r.as_u64().unwrap()).collect();
        assert!(!runs.is_empty() && runs.len() <= 4, "balanced: {runs:?}");
        for r in runs {
            assert!(seen.insert(r), "run {r} is in two shards");
        }
        assert!(!dir.join("violation.svg").exists(), "a shard draws no figures");
    }
    assert_eq!(seen, (0..8).collect(), "the shards cover every run");

    let merged = d.join("merged");
    let mut args = vec!["merge"];
    // Shards may come in any order.
    args.extend(shard_dirs.iter().rev().map(|p| s(p)));
    args.extend(["--out", s(&merged)]);
    let o = solverlab(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = same_tables(&whole, &merged);
    assert!(rows > 500, "compared {rows} rows");
    for table in ["bodies.csv", "contacts.csv", "forces.csv", "convergence.csv", "positions.csv"] {
        assert!(merged.join(table).exists(), "{table} is merged");
    }
    assert_eq!(hashes(&whole), hashes(&merged));
    for fig in ["violation.svg", "snap-frame12.svg"] {
        assert!(merged.join(fig).exists(), "merge draws {fig}");
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("meta.json")).unwrap()).unwrap();
    assert!(meta.get("shard").is_none(), "the merged folder is a whole run's");
    assert_eq!(std::fs::read(merged.join("experiment.toml")).unwrap(), SWEEP.as_bytes());

    // Refusals: exit 2, a message, and the output folder untouched.
    let refused = |args: &[&str], expected: &str| {
        let out = d.join("refused");
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--out", s(&out)]);
        let o = solverlab(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{args:?}: expected `{expected}` in {}", stderr(&o));
        assert!(!out.exists(), "{args:?}: nothing written");
    };
    let (a, b, c) = (s(&shard_dirs[0]), s(&shard_dirs[1]), s(&shard_dirs[2]));
    refused(&["merge", a, b], "missing shard 3/3");
    refused(&["merge", a, b, c, a], "given twice");
    refused(&["merge", a, b, s(&whole)], "not a shard");
    // A shard of another experiment file, and one of another shard count.
    let other = d.join("other.toml");
    std::fs::write(&other, SWEEP.replace("forces_every = 4", "forces_every = 3")).unwrap();
    let stranger = d.join("stranger");
    assert!(solverlab(&["run", s(&other), "--shard", "3/3", "--out", s(&stranger)]).status.success());
    refused(&["merge", a, b, s(&stranger)], "different experiment files");
    let half = d.join("half");
    assert!(solverlab(&["run", s(&file), "--shard", "2/2", "--out", s(&half)]).status.success());
    refused(&["merge", a, b, s(&half)], "different shard counts");
    for bad in ["0/3", "4/3", "x/y", "1/0", "3"] {
        refused(&["run", s(&file), "--shard", bad], "I/N");
    }
    // A shard changed after it finished: each run's record keeps its tables' row counts and
    // content hashes, and merge refuses a table cut to its header, deleted or edited.
    let copy = |name: &str| {
        let to = d.join(name);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(&shard_dirs[0]).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
        to
    };
    let cut = copy("cut");
    let steps = std::fs::read_to_string(cut.join("steps.csv")).unwrap();
    std::fs::write(cut.join("steps.csv"), format!("{}\n", steps.lines().next().unwrap())).unwrap();
    refused(&["merge", s(&cut), b, c], "steps.csv holds 0 rows of it where its record says");
    let gone = copy("gone");
    std::fs::remove_file(gone.join("trace.csv")).unwrap();
    refused(&["merge", s(&gone), b, c], "trace.csv is missing");
    let edited = copy("edited");
    let runs = std::fs::read_to_string(edited.join("runs.csv")).unwrap();
    std::fs::write(edited.join("runs.csv"), runs.replacen(",ok,", ",OK,", 1)).unwrap();
    refused(&["merge", s(&edited), b, c], "runs.csv: its rows differ from those it wrote");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_run_killed_midway_and_resumed_equals_an_uninterrupted_run() {
    let d = common::tmp("shards", "resume");
    // Three short runs, then a long one; one run at a time, so the kill lands in the last.
    let text = r#"
name = "resumable"
frames = 10
trace = false
record_every = 1000
jobs = 1

[[scene]]
name = "chain"
set = { links = 4 }

[[solver]]
label = "GS"
preset = "gs"

[sweep]
frames = [8, 9, 10, 400000]
"#;
    let file = d.join("exp.toml");
    std::fs::write(&file, text).unwrap();
    let out = d.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_solverlab"))
        .args(["run", s(&file), "--out", s(&out)])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let partial = out.join(".partial");
    let finished = || (0..3).filter(|k| partial.join(format!("run-{k:06}/run.json")).exists()).count();
    let start = std::time::Instant::now();
    while finished() < 3 {
        assert!(start.elapsed().as_secs() < 120, "the first three runs finish");
        assert!(child.try_wait().unwrap().is_none(), "the long run is still running");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A killed node: no chance to clean up.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!out.join("meta.json").exists() && !out.join("steps.csv").exists(), "nothing assembled");

    // Without --resume the unfinished run is not thrown away.
    let o = solverlab(&["run", s(&file), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));
    assert_eq!(finished(), 3, "the finished runs are kept");
    // Nor is it continued with another experiment file.
    let other = d.join("other.toml");
    std::fs::write(&other, text.replace("frames = 10\n", "frames = 11\n")).unwrap();
    let o = solverlab(&["run", s(&other), "--resume", "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("different experiment file"), "{}", stderr(&o));
    assert_eq!(finished(), 3, "the finished runs are kept");

    // Resume the rest, and compare with a run that was never interrupted.
    let o = solverlab(&["run", s(&file), "--resume", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("3 of 4 runs already finished"), "{}", stderr(&o));
    assert!(!partial.exists(), "the scratch folder is gone once the tables are assembled");
    let whole = d.join("whole");
    let o = solverlab(&["run", s(&file), "--out", s(&whole)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(same_tables(&whole, &out) > 400);
    assert_eq!(hashes(&whole), hashes(&out));

    // Resuming a finished folder does nothing and changes nothing.
    let before = std::fs::read(out.join("steps.csv")).unwrap();
    let o = solverlab(&["run", s(&file), "--resume", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(out.join("steps.csv")).unwrap(), before);
    let _ = std::fs::remove_dir_all(&d);
}

/// A scene given as a file is recorded with its content hash in each run's record (and in a
/// `simulate` folder's meta.json). `merge` refuses shards that read it with different contents,
/// and `--resume` refuses to keep finished runs (in a finished folder or in the parts of an
/// interrupted run) whose scene file changed since: exit 2, naming the folder, the run and the
/// file, and nothing changed.
#[test]
fn a_scene_file_edited_between_shards_or_before_a_resume_is_refused() {
    let d = common::tmp("shards", "scene-file");
    let scene = d.join("chain.toml");
    let export = solverlab(&["scene", "export", "chain", "--set", "links=3"]);
    assert!(export.status.success());
    std::fs::write(&scene, &export.stdout).unwrap();
    let edit = |what: &str| {
        let mut text = std::fs::read_to_string(&scene).unwrap();
        text.push_str(&format!("# {what}\n"));
        std::fs::write(&scene, text).unwrap();
    };
    let meta = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap()
    };

    let sim = d.join("sim");
    let o = solverlab(&["simulate", "--scene", s(&scene), "--frames", "2", "--no-figures", "--out", s(&sim)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let source = &meta(&sim)["runs"][0]["scene_source"];
    assert_eq!(source["file"], s(&scene));
    assert_eq!(source["hash"].as_str().unwrap().len(), 16);

    let file = d.join("exp.toml");
    let text = format!(
        "name = \"edited\"\nframes = 4\ntrace = false\njobs = 1\n[[scene]]\nname = \"{}\"\nlabel = \"chain\"\n\
         [[solver]]\nlabel = \"GS\"\npreset = \"gs\"\n[[solver]]\nlabel = \"PGS\"\npreset = \"pgs\"\n",
        s(&scene)
    );
    std::fs::write(&file, &text).unwrap();
    let (one, two) = (d.join("one"), d.join("two"));
    assert!(solverlab(&["run", s(&file), "--shard", "1/2", "--out", s(&one)]).status.success());
    assert_eq!(meta(&one)["runs"][0]["scene_source"], *source, "the run's record keeps the file and its hash");
    edit("edited between the shards");
    assert!(solverlab(&["run", s(&file), "--shard", "2/2", "--out", s(&two)]).status.success());
    let merged = d.join("merged");
    let o = solverlab(&["merge", s(&one), s(&two), "--out", s(&merged)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("run 1 in {}", s(&two))) && e.contains(s(&one)), "{e}");
    assert!(e.contains(&format!("read the scene file {}", s(&scene))) && e.contains("changed between shards"), "{e}");
    assert!(!merged.exists(), "nothing written");

    // A finished folder, then the file edited before a --resume.
    let out = d.join("out");
    assert!(solverlab(&["run", s(&file), "--out", s(&out)]).status.success());
    let before = std::fs::read(out.join("steps.csv")).unwrap();
    edit("edited before the resume");
    let o = solverlab(&["run", s(&file), "--resume", "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("--resume: run 0 in {}", s(&out))) && e.contains(s(&scene)), "{e}");
    assert!(e.contains("has changed since"), "{e}");
    assert_eq!(std::fs::read(out.join("steps.csv")).unwrap(), before, "nothing changed");

    // The parts of an interrupted run: the first run finishes, the second is interrupted.
    let long = d.join("long.toml");
    std::fs::write(&long, text.replace("name = \"edited\"", "name = \"long\"") + "[sweep]\nframes = [4, 400000]\n")
        .unwrap();
    let parted = d.join("parted");
    let part = stopped_after_the_first_run(&long, &parted);
    edit("edited while the run was stopped");
    let o = solverlab(&["run", s(&long), "--resume", "--out", s(&parted)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("--resume: run 0 in {}", s(&part))) && e.contains(s(&scene)), "{e}");
    assert!(part.join("run.json").exists(), "the finished part is kept");
    let _ = std::fs::remove_dir_all(&d);
}

/// Starts `run FILE --out OUT` (its first run short, its second long, one at a time), waits for
/// the first run's part to finish and stops the run with SIGINT; returns the finished part.
fn stopped_after_the_first_run(file: &Path, out: &Path) -> PathBuf {
    let child = Command::new(env!("CARGO_BIN_EXE_solverlab"))
        .args(["run", s(file), "--out", s(out)])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let part = out.join(".partial/run-000000");
    let start = std::time::Instant::now();
    while !part.join("run.json").exists() {
        assert!(start.elapsed().as_secs() < 120, "the first run finishes");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    part
}

/// A short run, then a long one, one at a time.
const SHORT_THEN_LONG: &str = r#"
name = "short_then_long"
frames = 10
trace = false
jobs = 1

[[scene]]
name = "chain"
set = { links = 4 }

[[solver]]
label = "GS"
preset = "gs"

[sweep]
frames = [5, 400000]
"#;

/// `--resume` checks the runs it keeps before it runs the rest: a part whose trace.csv was
/// deleted, or a finished folder whose steps.csv was edited, is refused at once with exit 2
/// naming the folder, the run and the table, and nothing is changed.
#[test]
fn a_tampered_part_or_folder_is_refused_before_resuming() {
    let d = common::tmp("shards", "tampered-resume");
    let file = d.join("exp.toml");
    std::fs::write(&file, SHORT_THEN_LONG).unwrap();
    let out = d.join("out");
    let part = stopped_after_the_first_run(&file, &out);
    std::fs::remove_file(part.join("trace.csv")).unwrap();
    let o = solverlab(&["run", s(&file), "--resume", "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("run 0 in {}: trace.csv is missing", s(&part))), "{e}");
    assert!(e.contains("run again with --resume to redo it"), "{e}");
    assert!(part.join("run.json").exists(), "nothing was changed");

    let short = d.join("short.toml");
    std::fs::write(&short, SHORT_THEN_LONG.replace("400000", "6")).unwrap();
    let done = d.join("done");
    assert!(solverlab(&["run", s(&short), "--out", s(&done)]).status.success());
    let steps = std::fs::read_to_string(done.join("steps.csv")).unwrap();
    std::fs::write(done.join("steps.csv"), steps.replacen(",5,", ",6,", 1)).unwrap();
    let o = solverlab(&["run", s(&short), "--resume", "--out", s(&done)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("steps.csv: its rows differ from those it wrote"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// Two array tasks given one `--out`, both with `--resume`: while the first runs, the second
/// stops at once with exit 2 naming the first's process and host, and changes nothing.
#[test]
fn a_second_resume_into_the_same_folder_is_refused_naming_the_holder() {
    let d = common::tmp("shards", "two-resumes");
    let file = d.join("exp.toml");
    std::fs::write(&file, SHORT_THEN_LONG).unwrap();
    let out = d.join("out");
    let mut first = Command::new(env!("CARGO_BIN_EXE_solverlab"))
        .args(["run", s(&file), "--resume", "--out", s(&out)])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let part = out.join(".partial/run-000000/run.json");
    let start = std::time::Instant::now();
    while !part.exists() {
        assert!(start.elapsed().as_secs() < 120, "the first run finishes");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = solverlab(&["run", s(&file), "--resume", "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("{} is being written by process {}", s(&out), first.id())), "{e}");
    assert!(part.exists(), "the first task's work is untouched");
    assert!(first.try_wait().unwrap().is_none(), "the first task goes on");
    assert!(Command::new("kill").args(["-INT", &first.id().to_string()]).status().unwrap().success());
    assert_eq!(first.wait().unwrap().code(), Some(130));
    let _ = std::fs::remove_dir_all(&d);
}
