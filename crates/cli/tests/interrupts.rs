//! Ctrl-C and SIGTERM in every command, and what a `kill -9` leaves: a signalled command stops
//! at its next frame, solve, run, table or figure with exit status 130 and leaves no temporary
//! behind; a second signal stops a frame that takes minutes at once; the next command into a
//! folder sweeps what a killed one left.

#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{s, stderr};

/// Sends `signal` (`-INT`, `-TERM`, `-KILL`) to `child`.
fn signal(child: &Child, signal: &str) {
    let sent = Command::new("kill").args([signal, &child.id().to_string()]).status().expect("kill runs");
    assert!(sent.success());
}

/// Waits (at most two minutes) until `ready` holds, or fails saying `what`.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(120), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `solverlab ARGS` with progress lines after every unit of work, its stderr lines sent
/// to the returned channel as they come.
fn start(args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_solverlab"))
        .args(args)
        .env("SOLVERLAB_PROGRESS_SECONDS", "0")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("starts");
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// Reads stderr lines until one contains `needle`; returns the lines read.
fn until(rx: &mpsc::Receiver<String>, needle: &str) -> Vec<String> {
    let mut lines = Vec::new();
    loop {
        let line = rx.recv_timeout(Duration::from_secs(120)).unwrap_or_else(|_| panic!("no `{needle}` in {lines:?}"));
        let found = line.contains(needle);
        lines.push(line);
        if found {
            return lines;
        }
    }
}

/// Waits (at most two minutes) for `child` to end; its exit code and the rest of its stderr.
fn finish(mut child: Child, rx: &mpsc::Receiver<String>) -> (Option<i32>, String) {
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the command did not stop");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut rest = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(5)) {
        rest.push(line);
    }
    (status.code(), rest.join("\n"))
}

/// Everything beside and inside `out` that a command writing it may leave behind: its staging
/// and set-aside folders, its lock, and hidden temporary files.
fn leftovers(out: &Path) -> Vec<String> {
    let name = out.file_name().unwrap().to_string_lossy().into_owned();
    let mut left: Vec<String> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!(".{name}.")))
        .collect();
    if let Ok(entries) = std::fs::read_dir(out) {
        left.extend(
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.') && n.contains(".tmp")),
        );
    }
    left
}

/// Every file of a folder with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

/// The staging folder of a command with process id `pid` writing `out`.
fn staging(out: &Path, pid: u32) -> PathBuf {
    out.with_file_name(format!(".{}.staging-{pid}", out.file_name().unwrap().to_string_lossy()))
}

/// A small earlier result in `out`, to be left exactly as it was.
fn earlier_result(out: &Path) -> Vec<(String, Vec<u8>)> {
    let o = common::solverlab(&["simulate", "--scene", "chain", "--frames", "3", "--no-figures", "--out", s(out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    snapshot(out)
}

/// Ctrl-C (SIGINT) or SIGTERM in the middle of `simulate` stops it at the next frame with exit
/// 130; the earlier result in its folder stays exactly as it was, and no staging folder,
/// temporary file or lock is left.
#[test]
fn an_interrupted_simulate_leaves_no_temporary_file() {
    for sig in ["-INT", "-TERM"] {
        let out = common::absent("interrupts", &format!("simulate{sig}"));
        let before = earlier_result(&out);
        let (child, rx) = start(&[
            "simulate",
            "--scene",
            "cloth",
            "--set",
            "nx=60",
            "--set",
            "ny=60",
            "--frames",
            "1000000",
            "--out",
            s(&out),
        ]);
        // Under way: its tables are being written in its staging folder.
        let tmp = staging(&out, child.id()).join(".steps.csv.tmp");
        wait_for("the staging folder", || tmp.exists());
        until(&rx, "frames");
        signal(&child, sig);
        let (code, e) = finish(child, &rx);
        assert_eq!(code, Some(130), "{sig}: {e}");
        assert!(e.contains("interrupted"), "{e}");
        assert_eq!(snapshot(&out), before, "{sig}: the earlier result is as it was");
        assert!(leftovers(&out).is_empty(), "{sig}: left {:?}", leftovers(&out));
    }
}

/// A single frame cannot be cut short, so a second signal stops a frame that would take many
/// minutes at once: exit 130, the staging folder and the lock removed.
#[test]
fn a_second_signal_stops_a_long_frame_at_once() {
    let out = common::absent("interrupts", "long-frame");
    let before = earlier_result(&out);
    let (child, rx) = start(&[
        "simulate",
        "--scene",
        "cloth",
        "--set",
        "nx=20",
        "--set",
        "ny=20",
        "--solver",
        "{ kind = \"relax\", iterations = 4000000000, tolerance = 0.0 }",
        "--frames",
        "3",
        "--out",
        s(&out),
    ]);
    let tmp = staging(&out, child.id()).join(".steps.csv.tmp");
    wait_for("the staging folder", || tmp.exists());
    signal(&child, "-INT");
    until(&rx, "stopping at the next frame");
    signal(&child, "-TERM");
    let (code, e) = finish(child, &rx);
    assert_eq!(code, Some(130), "{e}");
    assert!(e.contains("stopped at once"), "{e}");
    assert_eq!(snapshot(&out), before, "the earlier result is as it was");
    assert!(leftovers(&out).is_empty(), "left {:?}", leftovers(&out));
}

/// `run` stops between two solves of its frozen-state study (one study is many solves), exits
/// 130, and writes nothing: no results folder, no scratch folder, no lock.
#[test]
fn run_stops_inside_the_frozen_state_study() {
    for sig in ["-INT", "-TERM"] {
        let d = common::tmp("interrupts", &format!("study{sig}"));
        let caps = vec!["3000"; 60].join(", ");
        let file = d.join("study.toml");
        std::fs::write(
            &file,
            format!(
                "name = \"study\"\nframes = 3\ntrace = false\n[convergence]\nframe = 2\ncaps = [{caps}]\n\
                 [[scene]]\nname = \"cloth\"\nset = {{ nx = 20, ny = 20 }}\n\
                 [[solver]]\nlabel = \"GS\"\npreset = \"gs\"\nset = {{ tolerance = 0.0 }}\n"
            ),
        )
        .unwrap();
        let out = d.join("results");
        let (child, rx) = start(&["run", s(&file), "--out", s(&out), "--jobs", "1"]);
        // Three frames, then the study's solves: wait for the second solve.
        until(&rx, "5/64 frames and study solves");
        signal(&child, sig);
        let (code, e) = finish(child, &rx);
        assert_eq!(code, Some(130), "{sig}: {e}");
        assert!(e.contains("interrupted; nothing was written"), "{e}");
        assert!(!e.contains("64/64"), "{sig}: the study went on to its end: {e}");
        assert!(!out.exists(), "{sig}: nothing written");
        assert!(leftovers(&out).is_empty(), "{sig}: left {:?}", leftovers(&out));
    }
}

/// `report` on a large positions table stops on Ctrl-C or SIGTERM while reading it, exits 130
/// (it used to exit 0), and writes nothing: no page, no temporary, no lock.
#[test]
fn an_interrupted_report_exits_130_and_writes_nothing() {
    let d = common::tmp("interrupts", "report");
    let dir = d.join("big");
    common::generated_folder(&dir, 3000, 500);
    for sig in ["-INT", "-TERM"] {
        let out = d.join(format!("page{sig}"));
        let (child, rx) = start(&["report", s(&dir), "--out", s(&out)]);
        until(&rx, "MB read");
        signal(&child, sig);
        let (code, e) = finish(child, &rx);
        assert_eq!(code, Some(130), "{sig}: {e}");
        assert!(e.contains("interrupted"), "{e}");
        assert!(!out.join("report.html").exists(), "{sig}: a page was written");
        assert!(leftovers(&out).is_empty(), "{sig}: left {:?}", leftovers(&out));
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A `kill -9` runs no handler: it leaves the lock, the staging folder and its temporary
/// files. The next command into the folder takes the lock over, removes them with a note, and
/// finishes; the earlier result was never touched.
#[test]
fn what_a_kill_9_leaves_is_swept_by_the_next_command() {
    let out = common::absent("interrupts", "kill9");
    let before = earlier_result(&out);
    let (child, rx) = start(&[
        "simulate",
        "--scene",
        "cloth",
        "--set",
        "nx=40",
        "--set",
        "ny=40",
        "--frames",
        "1000000",
        "--out",
        s(&out),
    ]);
    let stage = staging(&out, child.id());
    wait_for("the staging folder", || stage.join(".steps.csv.tmp").exists());
    signal(&child, "-KILL");
    let (code, _) = finish(child, &rx);
    assert_eq!(code, None, "killed by the signal");
    assert!(stage.exists(), "kill -9 leaves the staging folder");
    let lock = format!(".{}.solverlab-lock", out.file_name().unwrap().to_string_lossy());
    assert!(out.with_file_name(lock).exists(), "and the lock");
    assert_eq!(snapshot(&out), before, "the earlier result is as it was");

    let o = common::solverlab(&["simulate", "--scene", "chain", "--frames", "3", "--no-figures", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("which no longer runs; taking it over"), "{e}");
    assert!(e.contains("removed 1 temporary left by an earlier writer"), "{e}");
    assert!(leftovers(&out).is_empty(), "left {:?}", leftovers(&out));
}
