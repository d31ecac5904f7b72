//! The catalogue of hostile inputs in `tests/hostile/`, each run through the `solverlab`
//! binary as a user would: scene files with `simulate` (`hostile/scenes/`), experiment files
//! with `run` (`hostile/experiments/`, run from `hostile/` so that their scene paths such as
//! `assets/chain.toml` resolve), and tampered shard folders with `merge` (`hostile/shards/CASE/`,
//! each shard a sub-folder, `expected.toml` beside them).
//!
//! A file states what it expects on its first line, `# expect: exit 2, "rigid[0].mass"` (one or
//! more fragments of stderr), or an empty one in `NAME.expect` beside it; a shard case in
//! `expected.toml` (`exit`, `stderr`, and `order`
//! when the shards are given in another order or more than once). The test checks the exit
//! status, that stderr holds every fragment, and that a command that failed wrote nothing: its
//! `--out` folder does not exist. Frame counts are small, so the whole catalogue runs in
//! seconds.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::s;

/// The catalogue's folder.
fn catalogue() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile")
}

/// The expected exit status and stderr fragments on a file's first line (or, for a file that
/// cannot hold one, such as an empty file, the first line of `NAME.expect` beside it).
fn expectation(path: &Path) -> (i32, Vec<String>) {
    let sidecar = path.with_extension("expect");
    let bytes = std::fs::read(if sidecar.exists() { &sidecar } else { path }).unwrap();
    let first = String::from_utf8_lossy(&bytes).lines().next().unwrap_or_default().to_string();
    let rest =
        first.strip_prefix("# expect: exit ").unwrap_or_else(|| panic!("{}: no `# expect:` line", path.display()));
    let (code, fragments) = rest.split_once(',').unwrap_or((rest, ""));
    let fragments: Vec<String> = serde_json::from_str(&format!("[{fragments}]"))
        .unwrap_or_else(|e| panic!("{}: the fragments are not JSON strings: {e}", path.display()));
    (code.trim().parse().unwrap(), fragments)
}

/// The `.toml` files of a folder, by name.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    found.sort();
    found
}

/// Runs one case; returns what was wrong with it, if anything.
fn check(case: &str, mut command: Command, out: &Path, exit: i32, fragments: &[String]) -> Option<String> {
    let o = command.output().expect("runs");
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    let mut wrong = Vec::new();
    if o.status.code() != Some(exit) {
        wrong.push(format!("exit {:?}, expected {exit}", o.status.code()));
    }
    for f in fragments.iter().filter(|f| !e.contains(f.as_str())) {
        wrong.push(format!("no `{f}` in stderr"));
    }
    if exit != 0 && out.exists() {
        wrong.push(format!("it failed but wrote {}", out.display()));
    }
    if exit == 0 && !out.exists() {
        wrong.push("it succeeded but wrote nothing".into());
    }
    let _ = std::fs::remove_dir_all(out);
    (!wrong.is_empty())
        .then(|| format!("{case}: {}\n    stderr: {}", wrong.join("; "), e.trim().replace('\n', "\n    ")))
}

#[test]
fn every_hostile_input_is_refused_as_its_file_says() {
    let root = catalogue();
    let tmp = common::tmp("hostile", "out");
    let out = tmp.join("out");
    let mut failures = Vec::new();
    let mut cases = 0;
    let command = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_solverlab"));
        c.current_dir(&root);
        c
    };
    for file in files(&root.join("scenes")) {
        let (exit, fragments) = expectation(&file);
        let mut c = command();
        c.args(["simulate", "--scene", s(&file), "--frames", "3", "--positions-every", "0", "--no-figures"]);
        c.args(["--out", s(&out)]);
        failures.extend(check(
            &format!("scenes/{}", file.file_name().unwrap().to_string_lossy()),
            c,
            &out,
            exit,
            &fragments,
        ));
        cases += 1;
    }
    for file in files(&root.join("experiments")) {
        let (exit, fragments) = expectation(&file);
        let mut c = command();
        c.args(["run", s(&file), "--out", s(&out), "--jobs", "1"]);
        let name = format!("experiments/{}", file.file_name().unwrap().to_string_lossy());
        failures.extend(check(&name, c, &out, exit, &fragments));
        cases += 1;
    }
    let mut shard_cases: Vec<PathBuf> =
        std::fs::read_dir(root.join("shards")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    shard_cases.sort();
    for case in shard_cases {
        let expected: toml::Table = toml::from_str(&std::fs::read_to_string(case.join("expected.toml")).unwrap())
            .unwrap_or_else(|e| panic!("{}/expected.toml: {e}", case.display()));
        let exit = expected["exit"].as_integer().unwrap() as i32;
        let fragments: Vec<String> =
            expected["stderr"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect();
        let shards: Vec<PathBuf> = match expected.get("order").and_then(|o| o.as_array()) {
            Some(order) => order.iter().map(|n| case.join(n.as_str().unwrap())).collect(),
            None => {
                let mut d: Vec<PathBuf> =
                    std::fs::read_dir(&case).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
                d.sort();
                d
            }
        };
        let mut c = command();
        c.arg("merge").args(&shards).args(["--out", s(&out)]);
        let name = format!("shards/{}", case.file_name().unwrap().to_string_lossy());
        failures.extend(check(&name, c, &out, exit, &fragments));
        cases += 1;
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(cases >= 80, "the catalogue holds {cases} cases");
    assert!(failures.is_empty(), "{} of {cases} cases went otherwise:\n{}", failures.len(), failures.join("\n"));
}
