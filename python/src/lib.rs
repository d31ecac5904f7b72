//! The Rust half of the `solverlab` Python package (`solverlab._solverlab`): thin calls into the
//! command line's library face, so that Python runs exactly the code `solverlab` runs and writes
//! the same folders. The Python half (`pysrc/solverlab/__init__.py`) turns folders into pandas
//! tables and errors into Python exceptions.
//!
//! Errors: bad input raises `ValueError` with the command line's message (it names the file or
//! the field); a run that diverged or tore raises `_Diverged` after its rows are written (the
//! Python half re-raises it as `solverlab.DivergedError` with the rows); a file that cannot be
//! written raises `OSError`; Ctrl-C raises `KeyboardInterrupt`.
//!
//! Long calls (`simulate`, `run`, `report`) run on a worker thread while the calling thread
//! releases the GIL, waking every 50 ms to let Python see a signal: Ctrl-C sets the command
//! line's interrupt flag, which every run in the process checks at its next frame (so it stops
//! the runs of every thread), waits for the worker to stop, and clears the flag again.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use solverlab_cli::{CliError, Registry, Simulate, Style, INTERRUPTED};
use solverlab_scenes::file::SceneFile;
use solverlab_scenes::params::Value;

create_exception!(_solverlab, _Diverged, PyRuntimeError, "A run diverged or tore; its rows were written.");

/// The Python exception for a command-line error.
fn py_err(e: CliError) -> PyErr {
    match e {
        CliError::Input(m) => PyValueError::new_err(m),
        CliError::Diverged(m) => _Diverged::new_err(m),
        CliError::Io(m) => PyOSError::new_err(m),
        CliError::Interrupted(m) => pyo3::exceptions::PyKeyboardInterrupt::new_err(m),
    }
}

/// Runs `work` on a worker thread with the GIL released, polling for signals every 50 ms; on a
/// signal (Ctrl-C) stops the work through the interrupt flag and returns the signal's exception.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, CliError> + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    let mut rx = rx;
    loop {
        // The receiver is not `Sync`: it moves into the GIL-free closure and back.
        let (received, back) = py.detach(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
        rx = back;
        match received {
            Ok(result) => {
                let _ = worker.join();
                return result.map_err(py_err);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = worker.join();
                return Err(PyRuntimeError::new_err("the solverlab worker thread stopped without a result"));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(signal) = py.check_signals() {
                    INTERRUPTED.store(true, Ordering::Relaxed);
                    py.detach(move || {
                        let _ = rx.recv();
                    });
                    let _ = worker.join();
                    INTERRUPTED.store(false, Ordering::Relaxed);
                    return Err(signal);
                }
            }
        }
    }
}

/// The builtin scenes as JSON: `[{name, summary, source, params: [{name, default, doc}]}]`.
#[pyfunction]
fn scenes() -> String {
    let list: Vec<serde_json::Value> = solverlab_scenes::builtins()
        .iter()
        .map(|b| {
            let params: Vec<serde_json::Value> = (b.params)()
                .iter()
                .map(|p| {
                    let default = match &p.default {
                        Value::Num(x) => serde_json::json!(x),
                        Value::Bool(b) => serde_json::json!(b),
                        Value::Str(s) => serde_json::json!(s),
                        Value::Vec3(v) => serde_json::json!(v),
                    };
                    serde_json::json!({ "name": p.name, "default": default, "doc": p.doc })
                })
                .collect();
            serde_json::json!({ "name": b.name, "summary": b.summary, "source": b.source, "params": params })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// The solver families and presets as JSON: `{families: [{kind, summary}], presets: [{name,
/// summary, settings}]}`, as `solverlab solver list` prints them.
#[pyfunction]
fn solvers() -> String {
    let registry = Registry::builtin();
    let families: Vec<serde_json::Value> =
        registry.families().iter().map(|f| serde_json::json!({ "kind": f.kind(), "summary": f.summary() })).collect();
    let presets: Vec<serde_json::Value> = registry
        .presets()
        .iter()
        .map(|p| serde_json::json!({ "name": p.name, "summary": p.summary, "settings": p.config.to_table() }))
        .collect();
    serde_json::json!({ "families": families, "presets": presets }).to_string()
}

/// A builtin (with `key=value` overrides) or a scene file, resolved and written as a scene file.
#[pyfunction]
fn scene_toml(name: &str, sets: Vec<String>) -> PyResult<String> {
    let scene = solverlab_scenes::resolve(name, &sets).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(SceneFile::from_scene(&scene).to_toml())
}

/// JSON text as TOML: a document (`inline = false`, for a scene) or an inline table (for a
/// solver's settings).
#[pyfunction]
fn toml_from_json(json: &str, inline: bool) -> PyResult<String> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let value = toml::Value::try_from(value).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let toml::Value::Table(table) = value else {
        return Err(PyValueError::new_err("expected a dict"));
    };
    if inline {
        Ok(toml::Value::Table(table).to_string())
    } else {
        toml::to_string(&table).map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// `solverlab simulate`: writes the run's folder `out`; returns the final state hash.
#[pyfunction]
#[pyo3(signature = (scene, sets, solver, frames, dt, substeps, out, positions_every, violation))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    scene: String,
    sets: Vec<String>,
    solver: String,
    frames: u64,
    dt: Option<f64>,
    substeps: Option<u32>,
    out: PathBuf,
    positions_every: u64,
    violation: bool,
) -> PyResult<String> {
    if frames == 0 {
        return Err(PyValueError::new_err("frames: must be at least 1"));
    }
    if substeps == Some(0) {
        return Err(PyValueError::new_err("substeps: must be at least 1"));
    }
    let args = Simulate { scene, sets, solver, frames, dt, substeps, out, positions_every, violation };
    interruptible(py, move || solverlab_cli::simulate(&Registry::builtin(), &args))
}

/// `solverlab plot DIR`: redraws a folder's figures; returns the files written.
#[pyfunction]
fn plot(py: Python<'_>, dir: PathBuf, paper: bool) -> PyResult<Vec<PathBuf>> {
    let style = if paper { Style::Paper } else { Style::Screen };
    interruptible(py, move || solverlab_cli::plot(&dir, style))
}

/// `solverlab run EXPERIMENT`: runs an experiment file; returns its results folder.
#[pyfunction]
#[pyo3(signature = (experiment, out, jobs, resume))]
fn run(
    py: Python<'_>,
    experiment: PathBuf,
    out: Option<PathBuf>,
    jobs: Option<usize>,
    resume: bool,
) -> PyResult<PathBuf> {
    if jobs == Some(0) {
        return Err(PyValueError::new_err("jobs: must be at least 1"));
    }
    interruptible(py, move || solverlab_cli::run_experiment(&Registry::builtin(), &experiment, out, None, resume, jobs))
}

/// `solverlab report DIR --out OUT --max-mb MB`: returns the size of `OUT/report.html` in bytes.
#[pyfunction]
fn report(py: Python<'_>, dir: PathBuf, out: PathBuf, max_mb: f64) -> PyResult<u64> {
    if !(max_mb.is_finite() && max_mb > 0.0) {
        return Err(PyValueError::new_err(format!("max_mb: {max_mb} must be a positive number")));
    }
    interruptible(py, move || solverlab_cli::report(&dir, &out, max_mb))
}

/// The module `solverlab._solverlab`.
#[pymodule]
fn _solverlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("_Diverged", m.py().get_type::<_Diverged>())?;
    m.add_function(wrap_pyfunction!(scenes, m)?)?;
    m.add_function(wrap_pyfunction!(solvers, m)?)?;
    m.add_function(wrap_pyfunction!(scene_toml, m)?)?;
    m.add_function(wrap_pyfunction!(toml_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(plot, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
