//! The documentation cites only what the repository has: every relative link and every file path
//! written in backticks in the README, ARCHITECTURE.md, the user guide (`docs/`), the experiment
//! files and the crates' doc comments names a file or folder that exists, and no text points to
//! notes kept outside the repository.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Files under `dir` (recursively) whose name ends with one of `exts`, skipping build output.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') && name != "results" {
                files(&p, exts, out);
            }
        } else if exts.iter().any(|x| name.ends_with(x)) {
            out.push(p);
        }
    }
}

/// The documents to check, with the text to check in each (doc comments only for Rust).
fn documents() -> Vec<(PathBuf, String)> {
    let r = root();
    let mut paths = vec![r.join("README.md"), r.join("ARCHITECTURE.md")];
    files(&r.join("docs"), &[".md"], &mut paths);
    files(&r.join("experiments"), &[".toml"], &mut paths);
    files(&r.join("crates"), &[".rs"], &mut paths);
    files(&r.join("benches"), &[".rs"], &mut paths);
    files(&r.join("examples"), &[".rs", ".md", ".toml"], &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let text = if p.extension().is_some_and(|e| e == "rs") {
                text.lines()
                    .map(str::trim_start)
                    .filter(|l| l.starts_with("//!") || l.starts_with("///"))
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                text
            };
            (p, text)
        })
        .collect()
}

/// Whether a path written in a document names something the repository has: relative to the
/// root, or for `src/…` and `tests/…`, in some crate (or peer).
fn exists(path: &str) -> bool {
    let r = root();
    let path = path.trim_end_matches('/');
    if r.join(path).exists() {
        return true;
    }
    let mut crates: Vec<PathBuf> = std::fs::read_dir(r.join("crates")).unwrap().flatten().map(|e| e.path()).collect();
    // The peers (each a crate with its own workspace, `peers/NAME`).
    crates.extend(std::fs::read_dir(r.join("peers")).into_iter().flatten().flatten().map(|e| e.path()));
    crates.iter().chain([r.join("benches")].iter()).any(|c| c.join(path).exists())
}

/// A backtick span that is a repository path: a known top folder, no spaces or wildcards, and a
/// file extension or a trailing slash.
fn repo_path(span: &str) -> Option<&str> {
    const TOPS: [&str; 9] =
        ["crates/", "experiments/", "docs/", "benches/", "examples/", "tests/", "src/", "results/", "peers/"];
    let looks = TOPS.iter().any(|t| span.starts_with(t))
        && !span.contains([' ', '*', '<', '>', '{', '…', '$'])
        && !span.contains("NAME")
        && (span.ends_with('/') || span.rsplit('/').next().is_some_and(|f| f.contains('.')));
    looks.then_some(span)
}

#[test]
fn no_document_points_outside_the_repository() {
    let mut found = Vec::new();
    for (path, text) in documents() {
        // The names of the notes kept outside the repository, assembled so that this file does
        // not itself name them.
        let notes = [["reference", ".md"], ["shared", "/"], ["seeds", "/"], ["style", ".md"]].map(|p| p.concat());
        for needle in &notes {
            if text.contains(needle) {
                found.push(format!("{}: `{needle}`", path.display()));
            }
        }
    }
    assert!(found.is_empty(), "documents cite notes that are not in the repository: {found:#?}");
}

#[test]
fn every_cited_file_exists() {
    let mut missing = Vec::new();
    for (path, text) in documents() {
        let dir = path.parent().unwrap();
        // Markdown links: ](target), relative to the document.
        for part in text.split("](").skip(1) {
            let Some(target) = part.split(')').next() else { continue };
            let target = target.split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !dir.join(target).exists() {
                missing.push(format!("{}: link {target}", path.display()));
            }
        }
        for span in text.split('`').skip(1).step_by(2) {
            if let Some(p) = repo_path(span) {
                if !exists(p) {
                    missing.push(format!("{}: `{p}`", path.display()));
                }
            }
        }
    }
    assert!(missing.is_empty(), "documents cite files the repository does not have: {missing:#?}");
}

/// The check itself: a made-up path is caught, a real one passes.
#[test]
fn the_path_check_tells_real_from_made_up() {
    assert!(exists("crates/cli/src/lib.rs") && exists("tests/docs.rs") && exists("experiments/"));
    assert!(exists("peers/rapier/src/world.rs") && repo_path("peers/rapier/Cargo.toml").is_some());
    assert!(!exists("crates/solvers/src/no_such_file.rs"));
    assert_eq!(repo_path("crates/solvers/src/rigid_rows.rs"), Some("crates/solvers/src/rigid_rows.rs"));
    assert_eq!(repo_path("results/NAME/"), None);
    assert_eq!(repo_path("solverlab run experiments/quickstart.toml"), None);
}
