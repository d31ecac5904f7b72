//! The experiment format's own tests: the committed files' timing rule and their fuzzing.

use super::*;

/// A committed experiment that draws a timing column (`seconds`, `step_ms_*`) or a
/// performance profile runs one run at a time (`jobs = 1`), so that its runs do not slow each
/// other.
#[test]
fn timing_experiments_run_one_run_at_a_time() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let timed = |c: &str| c == "seconds" || c.starts_with("step_ms");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut timing = 0;
    for file in files.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")) {
        let exp = Experiment::load(file, &Registry::builtin()).unwrap();
        let draws_time = exp.file.figures.iter().any(|f| {
            f.kind == FigureKind::Profile
                || timed(&f.x)
                || f.y.as_ref().is_some_and(|y| y.list().iter().any(|c| timed(c)))
        });
        if draws_time {
            timing += 1;
            assert_eq!(exp.file.jobs, Some(1), "{}: a timing experiment sets jobs = 1", file.display());
        }
    }
    assert!(timing >= 6, "found {timing} timing experiments");
}

/// The experiment format's half of the fuzz test (the scene format's is
/// `crates/solvers/tests/fuzz.rs`): every committed experiment file, mutated 100 times
/// (seeded; deleted, duplicated and retyped keys, NaN, infinities, huge and negative
/// numbers), loads as a valid experiment or is refused with an error naming the file, and
/// never panics.
#[test]
fn mutated_experiment_files_load_or_are_refused_and_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let dir = std::env::temp_dir().join(format!("solverlab-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = solverlab_core::rng::Rng::new(20261123);
    let (mut loaded, mut refused) = (0, 0);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for file in files.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")) {
        let text = std::fs::read_to_string(file).unwrap();
        for m in 0..100 {
            let mutant = solverlab_scenes::mutate::mutate(&text, &mut rng);
            let path = dir.join("mutant.toml");
            std::fs::write(&path, &mutant).unwrap();
            match std::panic::catch_unwind(|| Experiment::load(&path, &Registry::builtin())) {
                Ok(Ok(_)) => loaded += 1,
                Ok(Err(CliError::Input(e))) => {
                    assert!(e.contains("mutant.toml"), "{}: the error names the file: {e}", file.display());
                    refused += 1;
                }
                Ok(Err(e)) => panic!("{}, mutant {m}: not an input error: {e:?}", file.display()),
                Err(_) => panic!("{}, mutant {m}: loading panicked on\n{mutant}", file.display()),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(loaded > 0 && refused > 0, "{loaded} loaded, {refused} refused");
}
