//! A full disk: a write that fails halfway leaves the earlier result exactly as it was and
//! exits 1 naming the file. The disk is simulated by `SOLVERLAB_FAIL_AFTER_BYTES` (read only by
//! builds with debug assertions, as the tests' are): every result file fails once that many
//! bytes have been written in all, or, with `SOLVERLAB_FAIL_PATHS`, of the files whose path holds
//! the given text.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{s, stderr};

/// Runs `solverlab ARGS` with a disk that fills after `bytes` bytes (of the files whose path
/// holds `paths`, if given).
fn on_a_small_disk(args: &[&str], bytes: u64, paths: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_solverlab"));
    c.args(args).env("SOLVERLAB_FAIL_AFTER_BYTES", bytes.to_string());
    if let Some(p) = paths {
        c.env("SOLVERLAB_FAIL_PATHS", p);
    }
    c.output().expect("runs")
}

/// Every file under `dir` (but the scratch folder of an unfinished run) with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".partial") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push((p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// What a writer of `out` may leave beside it: staging and set-aside folders, its lock.
fn beside(out: &Path) -> Vec<String> {
    let name = out.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!(".{name}.")))
        .collect()
}

const EXPERIMENT: &str = r#"
name = "disk"
frames = 20
forces_every = 5

[[scene]]
name = "chain"
set = { links = 6 }

[[solver]]
label = "GS"
preset = "gs"

[[solver]]
label = "PGS"
preset = "pgs"

[[figure]]
name = "violation"
x = "frame"
y = "violation"
"#;

#[test]
fn a_full_disk_leaves_the_earlier_result_as_it_was() {
    let d = common::tmp("full-disk", "all");

    // simulate: the disk fills while the run's tables are written.
    let sim = d.join("sim");
    let args = ["simulate", "--scene", "chain", "--frames", "30", "--no-figures", "--out", s(&sim)];
    assert!(common::solverlab(&args).status.success());
    let before = snapshot(&sim);
    let o = on_a_small_disk(&args, 3000, None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("no space left on device") && e.contains(".csv"), "names the file: {e}");
    assert!(e.contains(&format!(".{}.staging-", sim.file_name().unwrap().to_string_lossy())), "{e}");
    assert_eq!(snapshot(&sim), before, "the earlier result is as it was");
    assert!(beside(&sim).is_empty(), "left {:?}", beside(&sim));

    // run: the disk fills in the first run's part; nothing finished, so nothing is kept.
    let file = d.join("exp.toml");
    std::fs::write(&file, EXPERIMENT).unwrap();
    let out = d.join("out");
    let args = ["run", s(&file), "--out", s(&out), "--jobs", "1"];
    assert!(common::solverlab(&args).status.success());
    let before = snapshot(&out);
    let o = on_a_small_disk(&args, 2000, None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("no space left on device") && e.contains(".partial/run-000000/"), "names the file: {e}");
    assert!(e.contains("nothing was written"), "{e}");
    assert_eq!(snapshot(&out), before, "the earlier result is as it was");
    assert!(!out.join(".partial").exists() && beside(&out).is_empty(), "left {:?}", beside(&out));

    // run: the disk fills while the folder is assembled (every run finished): the earlier
    // result is as it was, the finished runs are kept for --resume, which then completes.
    let o = on_a_small_disk(&args, 500, Some("staging"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("no space left on device") && e.contains(".staging-"), "names the file: {e}");
    assert!(e.contains("2 of 2 runs are finished and kept in") && e.contains("--resume"), "{e}");
    assert_eq!(snapshot(&out), before, "the earlier result is as it was");
    assert!(beside(&out).is_empty(), "left {:?}", beside(&out));
    let o = common::solverlab(&["run", s(&file), "--out", s(&out), "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resuming: 2 of 2 runs already finished"), "{}", stderr(&o));
    assert!(!out.join(".partial").exists());

    // merge: the disk fills while the shards are assembled.
    let (one, two, merged) = (d.join("one"), d.join("two"), d.join("merged"));
    for (shard, dir) in [("1/2", &one), ("2/2", &two)] {
        assert!(common::solverlab(&["run", s(&file), "--shard", shard, "--out", s(dir)]).status.success());
    }
    let args = ["merge", s(&one), s(&two), "--out", s(&merged)];
    assert!(common::solverlab(&args).status.success());
    let before = snapshot(&merged);
    let o = on_a_small_disk(&args, 1000, None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no space left on device"), "{}", stderr(&o));
    assert_eq!(snapshot(&merged), before, "the earlier result is as it was");
    assert!(beside(&merged).is_empty(), "left {:?}", beside(&merged));
    let _ = std::fs::remove_dir_all(&d);
}
