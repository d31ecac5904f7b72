//! The `rigid_threads` experiment: how much a second thread buys the rigid-body presets, timed
//! as the product runs them.
//!
//! ```sh
//! cargo run --release -p solverlab-benches --bin rigid_threads [-- --rounds N] [--only KEY,…]
//! ```
//!
//! For each scene of [`SCENES`] and each solver of [`PRESETS`] (`tgs-soft` and `soft-step` in
//! the natural order, and again in the coloured one, whose large colours run on all threads;
//! both presets' own order is the coloured one, Rapier's and Box2D v3's),
//! every round runs
//! `solverlab simulate` in a child process of this binary (`--child`, the command line's own
//! `simulate` on the global pool) with `RAYON_NUM_THREADS=1` and then `=2`, one after the other.
//! A run's time is the mean over its frames after the first [`SKIP`] of `steps.csv`'s
//! `solve_seconds + integrate_seconds` (ms per frame; the same time the Rapier peer compares).
//! The median over the rounds is kept, and the speedup is the median over the rounds of each
//! round's 1-thread time over its 2-thread time (the two runs of a round back to back, so that
//! a slower spell of the shared host weighs on both; the ratio of the two medians could pair a
//! quick 1-thread round with a slow 2-thread one). Coloured sweeps give the same numbers on any number of threads, so
//! the two runs of a pair simulate the same motion (the final state hashes are compared).
//!
//! Writes `results/rigid_threads/threads.csv` (every run, with the status its `meta.json` gives:
//! `ok`, `torn` for a run in which a joint opened past half its length and that ran on, or
//! `fell` for a scene that starts at rest in which a body left its place, `meta.json`'s
//! `stood`), `table.md`
//! (the status of each scene and solver beside its times) and `meta.json`.
//!
//! ```sh
//! cargo run --release -p solverlab-benches --bin rigid_threads -- --lockstep [--rounds N] [--only KEY,…]
//! ```
//!
//! `--lockstep` pairs the two thread counts frame by frame instead: on a shared host whose speed
//! drifts from second to second, two runs one after the other meet different spells of it (on
//! one host the rounds' ratios of the 4,095-box pyramid ran from 1.55 to 1.84 within minutes).
//! For each scene and solver, two threads of this process each hold their own pool (1 and 2
//! threads), their own solver and their own `Simulation` stepped as `simulate` steps it (its
//! workers kept awake through each frame), and take turns of [`BLOCK`] frames each, so that a
//! frame on one thread and the same frame on two run within a fraction of a second of each
//! other. A frame's time is its `solve_seconds + integrate_seconds`. Each of `--rounds` rounds
//! (3 by default) steps a fresh pair of simulations through every frame; the runs are
//! deterministic, so frame `k` is the same work in every round, and the host's other work only
//! adds to its time: each frame's time on each count is its fastest over the rounds (as the
//! performance experiment keeps the fastest of its repeats). The speedup is the median over the
//! frames after the first [`SKIP`], each turn's first left out, of the frame's 1-thread time
//! over its 2-thread time; the table also gives each round's own median, computed the same way
//! from that round's times alone. Every simulation must end in the same state. Writes
//! `lockstep.csv` (every frame of every round) and `lockstep.md`, whose status is `torn` (a joint opened past
//! half its length), `fell` (a scene that starts at rest had a body leave its place: further
//! than half its smallest half extent from its start, the `in_place` of `steps.csv`) or `ok`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use solverlab_benches::product::{run_child, step_means};
use solverlab_cli::{num, parse_solver, write_atomic, CliError, Simulate};
use solverlab_solvers::Registry;

/// One scene: its key, the builtin and its parameters, the frames per run, and whether it
/// starts at rest (a pile that should stand: the lockstep then says `fell` when a body leaves
/// its place).
struct ThreadScene {
    key: &'static str,
    builtin: &'static str,
    sets: &'static [&'static str],
    frames: u64,
    at_rest: bool,
}

/// The scenes: the Rapier benchmark's pyramid of base 90 (4,095 boxes), its joint grid (100
/// spheres on 182 ball joints) and the grid of Box3D's `joint_grid` (100 × 100 spheres on
/// 19,802 ball joints), and the pyramid of base 20 between them.
const SCENES: [ThreadScene; 4] = [
    ThreadScene { key: "pyramid-90", builtin: "rigid-pyramid", sets: &["base=90"], frames: 30, at_rest: true },
    ThreadScene { key: "pyramid-20", builtin: "rigid-pyramid", sets: &["base=20"], frames: 120, at_rest: true },
    ThreadScene { key: "joint-grid", builtin: "rigid-joint-grid", sets: &[], frames: 300, at_rest: false },
    ThreadScene { key: "joint-grid-100", builtin: "rigid-joint-grid", sets: &["n=100"], frames: 30, at_rest: false },
];

/// The solvers timed: `tgs-soft` and `soft-step` in the natural order (the contact search,
/// the rows and the integration run on all threads, the sweeps on one) and in the coloured order
/// (the large colours' sweeps on all threads too), each order named.
const PRESETS: [&str; 4] = [
    "{ preset = \"tgs-soft\", rigid_order = \"natural\" }",
    "{ preset = \"tgs-soft\", rigid_order = \"colored\" }",
    "{ preset = \"soft-step\", rigid_order = \"natural\" }",
    "{ preset = \"soft-step\", rigid_order = \"colored\" }",
];

/// A solver's short name in the tables: the preset and its order.
fn label(solver: &str) -> String {
    let quoted: Vec<&str> = solver.split('"').collect();
    match (quoted.get(1), quoted.get(3)) {
        (Some(preset), Some(order)) => {
            format!("{preset} {}", if *order == "colored" { "coloured" } else { "natural" })
        }
        _ => solver.to_string(),
    }
}

/// Frames left out at the start of a run's mean (first touches of memory, the pool's first
/// waking).
const SKIP: u64 = 3;

/// What to do, from the command line.
enum Mode {
    /// Measure: rounds, and the scene keys (all when empty).
    Measure(usize, Vec<String>),
    /// A child run: scene key, preset, output folder.
    Child(String, String, PathBuf),
    /// The frame-by-frame pairing (`--lockstep`): rounds, and the scene keys (all when empty).
    Lockstep(usize, Vec<String>),
}

fn mode() -> Result<Mode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || format!("usage: rigid_threads [--lockstep] [--rounds N] [--only KEY,…]; got `{}`", args.join(" "));
    if args.first().map(String::as_str) == Some("--child") {
        return match &args[1..] {
            [scene, preset, out] => Ok(Mode::Child(scene.clone(), preset.clone(), PathBuf::from(out))),
            _ => Err(usage()),
        };
    }
    let (mut rounds, mut only, mut lockstep) = (3usize, Vec::new(), false);
    let mut it = args.iter().peekable();
    while let Some(flag) = it.next() {
        if flag == "--lockstep" {
            lockstep = true;
            continue;
        }
        match (flag.as_str(), it.next()) {
            ("--rounds", Some(n)) => {
                rounds = n
                    .parse()
                    .ok()
                    .filter(|&n: &usize| n >= 1)
                    .ok_or_else(|| format!("--rounds: expected a whole number of at least 1, got `{n}`"))?
            }
            ("--only", Some(keys)) => {
                for k in keys.split(',') {
                    if !SCENES.iter().any(|s| s.key == k) {
                        let all: Vec<&str> = SCENES.iter().map(|s| s.key).collect();
                        return Err(format!("--only: no scene `{k}` (scenes: {})", all.join(", ")));
                    }
                    only.push(k.to_string());
                }
            }
            _ => return Err(usage()),
        }
    }
    Ok(if lockstep { Mode::Lockstep(rounds, only) } else { Mode::Measure(rounds, only) })
}

fn scene(key: &str) -> Result<&'static ThreadScene, String> {
    SCENES.iter().find(|s| s.key == key).ok_or_else(|| format!("no scene `{key}`"))
}

/// The child: the command line's `simulate`, no positions, no figures.
fn child(key: &str, preset: &str, out: &Path) -> Result<(), String> {
    // As the `solverlab` command does first: this thread works in the pool.
    solverlab_cli::join_thread_pool();
    let s = scene(key)?;
    let args = Simulate {
        scene: s.builtin.into(),
        sets: s.sets.iter().map(|x| x.to_string()).collect(),
        solver: preset.into(),
        frames: s.frames,
        dt: None,
        substeps: None,
        out: out.to_path_buf(),
        positions_every: 0,
        violation: false,
    };
    match solverlab_cli::simulate(&Registry::builtin(), &args) {
        Ok(_) => Ok(()),
        // A torn joint grid still ran every frame: its rows are kept and timed.
        Err(CliError::Diverged(e)) if e.contains("tore") => Ok(()),
        Err(CliError::Diverged(e) | CliError::Input(e) | CliError::Io(e) | CliError::Interrupted(e)) => Err(e),
    }
}

/// One run in a child process on `threads` threads: ms per frame, the final state hash and the
/// run's status from its `meta.json` (`ok`, or `torn` for a run that tore and ran on; `fell`
/// for a scene that starts at rest whose `stood` is false).
fn run(key: &str, preset: &str, threads: usize, dir: &Path) -> Result<(f64, String, String), String> {
    let out = dir.join(format!("{key}-{}-{threads}", label(preset).replace(' ', "-")));
    let name = label(preset);
    run_child(&["--child", key, preset], &out, threads).map_err(|e| format!("{key} under {name}: {e}"))?;
    let means = step_means(&out, &["solve_seconds", "integrate_seconds"], SKIP);
    let meta = std::fs::read_to_string(out.join("meta.json")).map_err(|e| format!("{key} under {name}: {e}"));
    let _ = std::fs::remove_dir_all(&out);
    let (means, meta) = (means?, meta?);
    let field = |name: &str| {
        let key = format!("\"{name}\"");
        meta.split(key.as_str()).nth(1).and_then(|rest| rest.split('"').nth(1)).unwrap_or("").to_string()
    };
    // (A pile that should stand and fell is `ok` as a run; `meta.json`'s `stood` says it fell.)
    let fell = scene(key)?.at_rest && meta.contains("\"stood\": false");
    let status = if fell && field("status") == "ok" { "fell".to_string() } else { field("status") };
    Ok(((means[0] + means[1]) * 1e3, field("final_state_hash"), status))
}

/// The checkout's commit, for the metadata.
fn head_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Today's date, for the metadata.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| (d.as_secs() / 86_400) as i64)
        .unwrap_or(0);
    solverlab_cli::date(days)
}

fn median(xs: &[f64]) -> f64 {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

/// Frames a simulation of [`lockstep`] steps in a turn: the first of each is left out of the
/// speedup, since it starts on caches that hold the other simulation (on the 4,095-box pyramid,
/// whose rows take some 20 MB, turns of one frame each made two threads only 1.3 times as fast
/// as one).
const BLOCK: u64 = 5;

/// What a stepping thread of [`lockstep`] is told.
enum Turn {
    /// Step one frame and send back [`Answer::Frame`].
    Frame,
    /// Send back [`Answer::Done`] and stop.
    Done,
}

/// What a stepping thread of [`lockstep`] answers.
enum Answer {
    /// It is ready to step.
    Ready,
    /// A frame's `solve_seconds + integrate_seconds` (ms), whether it tore (as `simulate`
    /// judges a tear: the run goes on and ends `torn`), and whether every body was in its place
    /// (`StepMetrics::in_place`).
    Frame(f64, bool, bool),
    /// The final state hash.
    Done(u64),
}

/// A stepping thread's ends: where its turns go, and where its answers come back.
type Stepper = (std::sync::mpsc::Sender<Turn>, std::sync::mpsc::Receiver<Result<Answer, String>>);

/// A thread that owns a pool of `threads` threads (itself one of them), a solver and a
/// `Simulation` of scene `s` under `preset`, and steps a frame at each [`Turn::Frame`].
fn stepper(s: &'static ThreadScene, preset: &'static str, threads: usize) -> Result<Stepper, String> {
    let (turn_tx, turn_rx) = std::sync::mpsc::channel::<Turn>();
    let (out_tx, out_rx) = std::sync::mpsc::channel::<Result<Answer, String>>();
    std::thread::spawn(move || {
        let send = |r: Result<Answer, String>| {
            let _ = out_tx.send(r);
        };
        let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).use_current_thread().build() {
            Ok(p) => p,
            Err(e) => return send(Err(format!("a pool of {threads} threads: {e}"))),
        };
        debug_assert_eq!(pool.current_num_threads(), threads);
        let made = (|| {
            let sets: Vec<String> = s.sets.iter().map(|x| x.to_string()).collect();
            let scene = solverlab_scenes::resolve(s.builtin, &sets).map_err(|e| e.to_string())?;
            // (The solver as `simulate`'s `--solver` reads it.)
            let (_, config) = parse_solver(preset, &Registry::builtin()).map_err(|e| e.message().to_string())?;
            Ok::<_, String>((scene, config))
        })();
        let (scene, config) = match made {
            Ok(m) => m,
            Err(e) => return send(Err(format!("{} under {}: {e}", s.key, label(preset)))),
        };
        let mut solver = match config.build(&label(preset)) {
            Ok(b) => b,
            Err(e) => return send(Err(e.to_string())),
        };
        let substeps = config.default_substeps();
        let mut sim = match solverlab_core::sim::Simulation::new(&scene, solver.as_mut(), scene.dt, substeps) {
            Ok(sim) => sim,
            Err(e) => return send(Err(e.to_string())),
        };
        // (As `simulate` runs alone: the pool's other threads held through each frame.)
        sim.keep_workers_awake(true);
        send(Ok(Answer::Ready));
        while let Ok(turn) = turn_rx.recv() {
            match turn {
                Turn::Frame => {
                    // (This thread is one of the pool's, `use_current_thread`: its work runs there.)
                    let r = sim.step_frame(&mut solverlab_core::NullObserver);
                    // (A torn joint grid runs on, as in `simulate`: a tear is no error here.)
                    send(
                        r.map(|r| {
                            let ms = (r.solve_seconds + r.integrate_seconds) * 1e3;
                            Answer::Frame(ms, sim.tear(&r.metrics).is_some(), r.metrics.in_place)
                        })
                        .map_err(|e| e.to_string()),
                    );
                }
                Turn::Done => return send(Ok(Answer::Done(solverlab_core::hash::state_hash(&sim.state)))),
            }
        }
    });
    match out_rx.recv().map_err(|e| e.to_string())?? {
        Answer::Ready => Ok((turn_tx, out_rx)),
        _ => Err("a stepping thread answered out of turn".into()),
    }
}

/// One round of [`lockstep`]: fresh simulations of `s` under `preset` on 1 and 2 threads,
/// stepped in turns of [`BLOCK`] frames (which goes first alternates, so that neither always
/// follows the other); each frame's two times (ms), and the final state, which both must share.
/// Sets `torn` and `fell` when a frame of either tore or had a body leave its place.
fn lockstep_round(
    s: &'static ThreadScene,
    preset: &'static str,
    (torn, fell): (&mut bool, &mut bool),
) -> Result<(Vec<(f64, f64)>, u64), String> {
    let name = label(preset);
    let one = stepper(s, preset, 1)?;
    let two = stepper(s, preset, 2)?;
    let ask = |(tx, rx): &Stepper, turn: Turn| {
        tx.send(turn).map_err(|e| e.to_string())?;
        rx.recv().map_err(|e| e.to_string())?
    };
    let mut step = |who: &Stepper| match ask(who, Turn::Frame)? {
        Answer::Frame(ms, tore, in_place) => {
            *torn |= tore;
            *fell |= s.at_rest && !in_place;
            Ok(ms)
        }
        _ => Err(format!("{} under {name}: a stepping thread answered out of turn", s.key)),
    };
    let mut frames = Vec::new();
    while (frames.len() as u64) < s.frames {
        let n = BLOCK.min(s.frames - frames.len() as u64);
        let mut block = |who: &Stepper| (0..n).map(|_| step(who)).collect::<Result<Vec<f64>, String>>();
        let (a, b) = if (frames.len() as u64 / BLOCK).is_multiple_of(2) {
            let a = block(&one)?;
            (a, block(&two)?)
        } else {
            let b = block(&two)?;
            (block(&one)?, b)
        };
        frames.extend(a.into_iter().zip(b));
    }
    match (ask(&one, Turn::Done)?, ask(&two, Turn::Done)?) {
        (Answer::Done(a), Answer::Done(b)) if a == b => Ok((frames, a)),
        (Answer::Done(_), Answer::Done(_)) => {
            Err(format!("{} under {name}: 1 and 2 threads ended in different states", s.key))
        }
        _ => Err(format!("{} under {name}: a stepping thread answered out of turn", s.key)),
    }
}

/// `--lockstep` (see the crate docs): the two thread counts stepped in turns, frame by frame,
/// in `rounds` fresh pairs of simulations.
fn lockstep(rounds: usize, only: &[String]) -> Result<(), String> {
    let t0 = Instant::now();
    let mut rows = String::from("scene,solver,round,frame,ms_1_thread,ms_2_threads\n");
    let mut table = String::from(
        "| scene | solver | frames | rounds | status | 1 thread | 2 threads | speedup | frames' speedups (quartiles) | rounds' speedups | final state hash |\n|---|---|---:|---:|---|---:|---:|---:|---|---|---|\n",
    );
    for s in chosen(only) {
        for preset in PRESETS.iter().filter(|p| p.contains("colored")) {
            let name = label(preset);
            let (mut torn, mut fell) = (false, false);
            // Per round, each frame's (1-thread, 2-thread) time; and the final state.
            let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
            let mut hash = None;
            for round in 1..=rounds {
                let (frames, end) = lockstep_round(s, preset, (&mut torn, &mut fell))?;
                if hash.is_some_and(|h| h != end) {
                    return Err(format!("{} under {name}: round {round} ended in another state than round 1", s.key));
                }
                hash = Some(end);
                for (k, (a, b)) in frames.iter().enumerate() {
                    rows += &format!("{},{name},{round},{},{},{}\n", s.key, k + 1, num(*a), num(*b));
                }
                runs.push(frames);
            }
            // The frames that count: after the first `SKIP`, and not a turn's first (it finds
            // the caches holding the other simulation).
            let counted = |k: usize| k as u64 >= SKIP && !(k as u64).is_multiple_of(BLOCK);
            let speedups = |pairs: &[(f64, f64)]| -> Vec<f64> {
                pairs.iter().enumerate().filter(|(k, _)| counted(*k)).map(|(_, (a, b))| a / b).collect()
            };
            // Each frame's fastest time over the rounds, for each count: the same work each
            // round (the runs are deterministic), and the host's other work only adds time.
            let fastest: Vec<(f64, f64)> = (0..runs[0].len())
                .map(|k| runs.iter().fold((f64::INFINITY, f64::INFINITY), |(a, b), r| (a.min(r[k].0), b.min(r[k].1))))
                .collect();
            let ratios = speedups(&fastest);
            let (ones, twos): (Vec<f64>, Vec<f64>) =
                fastest.iter().enumerate().filter(|(k, _)| counted(*k)).map(|(_, p)| *p).unzip();
            let mut sorted = ratios.clone();
            sorted.sort_by(f64::total_cmp);
            let q = |f: f64| sorted.get(((sorted.len() - 1) as f64 * f).round() as usize).copied().unwrap_or(f64::NAN);
            let by_round: Vec<String> = runs.iter().map(|r| format!("{:.2}", median(&speedups(r)))).collect();
            let line = format!(
                "| {} | {name} | {} | {rounds} | {} | {:.3} ms | {:.3} ms | **{:.2}×** | {:.2}, {:.2}, {:.2} | {} | {:016x} |\n",
                s.key,
                s.frames,
                if torn {
                    "torn"
                } else if fell {
                    "fell"
                } else {
                    "ok"
                },
                median(&ones),
                median(&twos),
                median(&ratios),
                q(0.25),
                q(0.5),
                q(0.75),
                by_round.join(", "),
                hash.unwrap_or(0),
            );
            eprint!("{line}");
            table += &line;
        }
    }
    let fields = [
        ("block_frames", BLOCK.to_string()),
        ("skip_frames", SKIP.to_string()),
        ("rounds", rounds.to_string()),
        ("speedup", format!("\"median over the frames after the first {SKIP}, each block's first left out, of the frame's fastest 1-thread time over the rounds over its fastest 2-thread time (solve_seconds + integrate_seconds)\"")),
    ];
    let command =
        format!("cargo run --release -p solverlab-benches --bin rigid_threads -- --lockstep --rounds {rounds}");
    save(
        &[("lockstep.csv", &rows), ("lockstep.md", &table)],
        ("lockstep.json", "rigid_threads --lockstep", &command),
        &fields,
        t0,
    )?;
    print!("{table}");
    Ok(())
}

/// The scenes of `only` (every scene when it is empty).
fn chosen(only: &[String]) -> Vec<&'static ThreadScene> {
    SCENES.iter().filter(|s| only.is_empty() || only.iter().any(|k| k == s.key)).collect()
}

/// Writes `files` (name and text) into `results/rigid_threads/`, each atomically, then the
/// metadata `meta` (file name, experiment, command): the date, the commit, the cores, the
/// seconds since `t0` and `fields` (each value already JSON).
fn save(
    files: &[(&str, &str)],
    meta: (&str, &str, &str),
    fields: &[(&str, String)],
    t0: Instant,
) -> Result<(), String> {
    let out = Path::new("results/rigid_threads");
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let write = |name: &str, text: &str| write_atomic(&out.join(name), text).map_err(|e| format!("{name}: {e}"));
    for (name, text) in files {
        write(name, text)?;
    }
    let (file, experiment, command) = meta;
    let mut json = format!(
        "{{\n  \"experiment\": \"{experiment}\",\n  \"command\": \"{command}\",\n  \"date\": \"{}\",\n  \"commit\": \"{}\",\n",
        today(),
        head_commit()
    );
    for (key, value) in fields {
        json += &format!("  \"{key}\": {value},\n");
    }
    json += &format!(
        "  \"cores\": {},\n  \"seconds\": {:.1}\n}}\n",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        t0.elapsed().as_secs_f64()
    );
    write(file, &json)?;
    let names: Vec<&str> = files.iter().map(|f| f.0).chain([file]).collect();
    eprintln!("wrote {} in {}", names.join(", "), out.display());
    Ok(())
}

fn main() -> Result<(), String> {
    let (rounds, only) = match mode()? {
        Mode::Child(key, preset, out) => return child(&key, &preset, &out),
        Mode::Lockstep(rounds, only) => return lockstep(rounds, &only),
        Mode::Measure(rounds, only) => (rounds, only),
    };
    let t0 = Instant::now();
    let scenes = chosen(&only);
    let work = std::env::temp_dir().join(format!("solverlab-rigid-threads-{}", std::process::id()));
    let mut times: BTreeMap<(&str, &str, usize), Vec<f64>> = BTreeMap::new();
    let mut status: BTreeMap<(&str, &str), String> = BTreeMap::new();
    let mut rows = String::from("scene,solver,threads,round,ms_per_frame,state_hash,status\n");
    for round in 1..=rounds {
        eprintln!("round {round} of {rounds}");
        for s in &scenes {
            for preset in PRESETS {
                let mut hashes = Vec::new();
                for threads in [1, 2] {
                    let (ms, hash, how) = run(s.key, preset, threads, &work)?;
                    eprintln!("  {} under {}, {threads} thread(s): {ms:.3} ms per frame, {how}", s.key, label(preset));
                    times.entry((s.key, preset, threads)).or_default().push(ms);
                    rows += &format!("{},{},{threads},{round},{},{hash},{how}\n", s.key, label(preset), num(ms));
                    status.insert((s.key, preset), how);
                    hashes.push(hash);
                }
                if hashes[0] != hashes[1] {
                    let name = label(preset);
                    return Err(format!("{} under {name}: 1 and 2 threads ended in different states", s.key));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    let mut table = String::from(
        "| scene | solver | frames | status | 1 thread | 2 threads | speedup |\n|---|---|---:|---|---:|---:|---:|\n",
    );
    for s in &scenes {
        for preset in PRESETS {
            let (ones, twos) = (&times[&(s.key, preset, 1)], &times[&(s.key, preset, 2)]);
            let (one, two) = (median(ones), median(twos));
            let paired: Vec<f64> = ones.iter().zip(twos).map(|(a, b)| a / b).collect();
            table += &format!(
                "| {} | {} | {} | {} | {one:.3} ms | {two:.3} ms | **{:.2}×** |\n",
                s.key,
                label(preset),
                s.frames,
                status[&(s.key, preset)],
                median(&paired)
            );
        }
    }
    let fields = [
        ("rounds", rounds.to_string()),
        ("skip_frames", SKIP.to_string()),
        ("time", "\"mean solve_seconds + integrate_seconds per frame after the first frames, median over rounds; each run a `simulate` child process with RAYON_NUM_THREADS=1 or 2\"".to_string()),
        ("speedup", "\"median over rounds of the round's 1-thread time over its 2-thread time\"".to_string()),
    ];
    let command = format!("cargo run --release -p solverlab-benches --bin rigid_threads -- --rounds {rounds}");
    save(&[("threads.csv", &rows), ("table.md", &table)], ("meta.json", "rigid_threads", &command), &fields, t0)?;
    print!("{table}");
    Ok(())
}
