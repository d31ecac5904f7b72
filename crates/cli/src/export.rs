//! `solverlab export-system`: the linearised system of one frame, in Matrix Market.
//!
//! A solver with an explicit system (`cg`, `cg-cold`, `direct`) keeps a copy of the system it
//! solved in outer (Newton) iteration `K` (`--outer`, default 1) of the frame's last substep, as
//! first posed: before any Levenberg-Marquardt retry or active-set re-solve. Its regularisation
//! `ε` (part of `shift`) and the damping multiplier in force are written to `system.json`; in the
//! first outer iteration of a step the damping is 1, so `ε` is the solver's `regularization`
//! times the mean diagonal of `J W Jᵀ`:
//!
//! ```text
//! (J W Jᵀ + diag(shift)) Δλ = rhs,     λ ≥ 0 on inequality rows
//! ```
//!
//! Files (Matrix Market, readable by SciPy `scipy.io.mmread`, MATLAB `mmread`, Julia
//! `MatrixMarket.jl`): `J.mtx` (m × 3n, coordinate), `A.mtx` (m × m, coordinate symmetric, lower
//! triangle), and as m × 1 (or 3n × 1) arrays `w.mtx` (inverse mass per column, 1/kg),
//! `shift.mtx` (`α/h² + ε`, 1/kg), `rhs.mtx` (`−C − α̃λ`, m), `inequality.mtx` (1 where
//! `λ ≥ 0`, 0 where free), `lambda_prev.mtx` (the warm start: the previous frame's multipliers
//! times the warm-start factor, kg·m), `solution.mtx` (the `Δλ` solverlab found). `system.json`
//! describes them.

use std::fmt::Write as _;

use nalgebra_sparse::{CooMatrix, CsrMatrix};
use serde::Serialize;
use solverlab_core::sim::Simulation;
use solverlab_core::{LinearSystem, NullObserver};

use crate::output::write_atomic;
use crate::simulate::RunSpec;
use crate::CliError;

fn coordinate(m: &CsrMatrix<f64>, symmetric: bool) -> String {
    let entries: Vec<(usize, usize, f64)> =
        m.triplet_iter().filter(|(i, j, _)| !symmetric || j <= i).map(|(i, j, v)| (i, j, *v)).collect();
    let kind = if symmetric { "symmetric" } else { "general" };
    let mut s = format!("%%MatrixMarket matrix coordinate real {kind}\n% written by solverlab\n");
    let _ = writeln!(s, "{} {} {}", m.nrows(), m.ncols(), entries.len());
    for (i, j, v) in entries {
        let _ = writeln!(s, "{} {} {v:e}", i + 1, j + 1);
    }
    s
}

fn array(values: &[f64]) -> String {
    let mut s = format!("%%MatrixMarket matrix array real general\n% written by solverlab\n{} 1\n", values.len());
    for v in values {
        let _ = writeln!(s, "{v:e}");
    }
    s
}

/// `J` and `A = J W Jᵀ + diag(shift)` of a captured system.
pub fn matrices(sys: &LinearSystem) -> (CsrMatrix<f64>, CsrMatrix<f64>) {
    let m = sys.ids.len();
    let mut coo = CooMatrix::new(m, sys.columns);
    let mut coo_w = CooMatrix::new(m, sys.columns);
    for &(i, c, v) in &sys.jacobian {
        coo.push(i, c, v);
        coo_w.push(i, c, v * sys.inverse_mass[c]);
    }
    let j = CsrMatrix::from(&coo);
    let jw = CsrMatrix::from(&coo_w);
    let mut a = &jw * &j.transpose();
    let mut shift = CooMatrix::new(m, m);
    for (i, s) in sys.diagonal_shift.iter().enumerate() {
        shift.push(i, i, *s);
    }
    a = &a + &CsrMatrix::from(&shift);
    (j, a)
}

#[derive(Serialize)]
struct Description<'a> {
    equation: &'static str,
    scene: &'a str,
    solver: &'a str,
    frame: u64,
    step_seconds: f64,
    rows: usize,
    columns: usize,
    particles: usize,
    row_ids: &'a [u64],
    outer_iteration: usize,
    regularization_epsilon: f64,
    damping: f64,
    files: [(&'static str, &'static str); 9],
    commit: &'static str,
}

/// Runs to `frame` and writes the system of its outer iteration `outer` into `spec.out` (staged
/// beside it and swapped in whole).
pub fn run(spec: &RunSpec, frame: u64, outer: usize) -> Result<(), CliError> {
    let mut solver =
        solverlab_solvers::build(&spec.solver, &spec.label).map_err(|e| CliError::Input(format!("--solver: {e}")))?;
    if outer == 0 {
        return Err(CliError::Input("--outer: outer iterations count from 1".into()));
    }
    if !solver.capture_system(None) {
        return Err(CliError::Input(format!(
            "--solver {}: export-system needs a solver that builds an explicit system (cg, cg-cold, direct, or kind = \"cg\" / \"direct\")",
            spec.label
        )));
    }
    if frame == 0 {
        return Err(CliError::Input("--frame: frames count from 1".into()));
    }
    let scene = &spec.scene;
    let mut sim =
        Simulation::new(scene, solver.as_mut(), scene.dt, spec.substeps).map_err(|e| CliError::Input(e.to_string()))?;
    let h = sim.h();
    for _ in 1..frame {
        if crate::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(CliError::Interrupted(format!(
                "interrupted after {} frames; nothing was written",
                sim.frame()
            )));
        }
        sim.step_frame(&mut NullObserver).map_err(|e| CliError::Diverged(e.to_string()))?;
    }
    sim.solver_mut().capture_system(Some(outer));
    sim.step_frame(&mut NullObserver).map_err(|e| CliError::Diverged(e.to_string()))?;
    let Some(sys) = sim.solver().captured_system() else {
        return Err(CliError::Input(format!(
            "--outer {outer}: frame {frame} solved no system in outer iteration {outer} (it has no active rows, or it met \
             its tolerance in fewer outer iterations)"
        )));
    };
    let (j, a) = matrices(sys);
    // Written into a staging folder beside --out and swapped in whole.
    let staging = crate::output::sibling(&spec.out, "staging");
    let _ = std::fs::remove_dir_all(&staging);
    let _registered = crate::interrupt::Temporary::dir(&staging);
    let out = &staging;
    std::fs::create_dir_all(out).map_err(|e| CliError::Io(format!("{}: {e}", out.display())))?;
    let write = |name: &str, text: String| {
        write_atomic(&out.join(name), &text).map_err(|e| {
            let _ = std::fs::remove_dir_all(out);
            CliError::Io(e.to_string())
        })
    };
    write("J.mtx", coordinate(&j, false))?;
    write("A.mtx", coordinate(&a, true))?;
    write("w.mtx", array(&sys.inverse_mass))?;
    write("shift.mtx", array(&sys.diagonal_shift))?;
    write("rhs.mtx", array(&sys.rhs))?;
    write("inequality.mtx", array(&sys.inequality.iter().map(|&b| if b { 1.0 } else { 0.0 }).collect::<Vec<_>>()))?;
    write("lambda_prev.mtx", array(&sys.warm_start))?;
    write("solution.mtx", array(&sys.solution))?;
    let description = Description {
        equation: "(J diag(w) J^T + diag(shift)) dlambda = rhs; dlambda >= 0 where inequality = 1 (accumulated over Newton iterations); positions move by diag(w) J^T dlambda",
        scene: &scene.name,
        solver: &spec.label,
        frame,
        step_seconds: h,
        rows: sys.ids.len(),
        columns: sys.columns,
        particles: sys.columns / 3,
        row_ids: &sys.ids,
        outer_iteration: sys.outer,
        regularization_epsilon: sys.regularization,
        damping: sys.damping,
        files: [
            ("J.mtx", "constraint Jacobian, rows x 3*particles (m per m)"),
            ("A.mtx", "J W J^T + diag(shift), symmetric, lower triangle stored (1/kg)"),
            ("w.mtx", "inverse mass per column of J (1/kg)"),
            ("shift.mtx", "compliance alpha/h^2 plus regularisation_epsilon per row (1/kg)"),
            ("rhs.mtx", "-C - alpha/h^2 lambda per row, lambda accumulated in earlier outer iterations (m)"),
            ("inequality.mtx", "1 where the multiplier must stay >= 0, 0 for equality rows"),
            ("lambda_prev.mtx", "initial guess: outer iteration 1, previous frame's multipliers times the warm-start factor; later, 0 (kg m)"),
            ("solution.mtx", "the dlambda solverlab's solver found (kg m)"),
            ("system.json", "this description"),
        ],
        commit: env!("SOLVERLAB_COMMIT"),
    };
    write("system.json", serde_json::to_string_pretty(&description).expect("serialises") + "\n")?;
    crate::assemble::swap_in(&staging, &spec.out)
}
