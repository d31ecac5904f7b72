//! Records the git commit and the compiler version, for `meta.json`.

use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = run("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    // Dirty: a tracked file edited anywhere, or a new file among the sources (an untracked
    // file elsewhere, such as a result, is not part of the build).
    let tracked = run("git", &["status", "--porcelain", "--untracked-files=no"]);
    let new_sources = run(
        "git",
        &["status", "--porcelain", "--untracked-files=all", "--", ":/crates", ":/benches", ":/peers", ":/Cargo.toml"],
    );
    let dirty = [tracked, new_sources].into_iter().flatten().any(|s| !s.is_empty());
    println!("cargo:rustc-env=SOLVERLAB_COMMIT={commit}{}", if dirty { "-dirty" } else { "" });
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    println!("cargo:rustc-env=SOLVERLAB_RUSTC={}", run(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into()));
    // The workspace's sources: an edit that is not yet staged makes the build dirty, and without
    // this the script would keep the clean commit it found before the edit.
    for dir in ["../../crates", "../../benches", "../../Cargo.toml", "../../Cargo.lock"] {
        if std::path::Path::new(dir).exists() {
            println!("cargo:rerun-if-changed={dir}");
        }
    }
    // Git's own paths: in a linked work tree (`git worktree`) `.git` is a file and HEAD and the
    // index live in the main repository's `.git/worktrees/NAME/`; a commit rewrites the index.
    for name in ["HEAD", "index"] {
        let path = run("git", &["rev-parse", "--git-path", name]).unwrap_or_else(|| format!("../../.git/{name}"));
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
