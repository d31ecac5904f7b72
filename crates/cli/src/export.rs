//! `solverlab export-system`: the linearised system of one frame, in Matrix Market.
//!
//! A solver with an explicit system (`cg`, `cg-cold`, `direct`) keeps a copy of the system it
//! solved in the first Newton iteration of the frame's last substep:
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
    files: [(&'static str, &'static str); 9],
    commit: &'static str,
}

/// Runs to `frame` and writes its system into `spec.out`.
pub fn run(spec: &RunSpec, frame: u64) -> Result<(), CliError> {
    let mut solver =
        solverlab_solvers::build(&spec.solver, &spec.label).map_err(|e| CliError::Input(format!("--solver: {e}")))?;
    if !solver.capture_system(false) {
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
        sim.step_frame(&mut NullObserver).map_err(|e| CliError::Diverged(e.to_string()))?;
    }
    sim.solver_mut().capture_system(true);
    sim.step_frame(&mut NullObserver).map_err(|e| CliError::Diverged(e.to_string()))?;
    let Some(sys) = sim.solver().captured_system() else {
        return Err(CliError::Input(format!(
            "frame {frame} has no active constraint rows: there is no system to export"
        )));
    };
    let (j, a) = matrices(sys);
    let out = &spec.out;
    std::fs::create_dir_all(out).map_err(|e| CliError::Io(format!("{}: {e}", out.display())))?;
    let write = |name: &str, text: String| {
        write_atomic(&out.join(name), &text).map_err(|e| CliError::Io(format!("{}: {e}", out.join(name).display())))
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
        files: [
            ("J.mtx", "constraint Jacobian, rows x 3*particles (m per m)"),
            ("A.mtx", "J W J^T + diag(shift), symmetric, lower triangle stored (1/kg)"),
            ("w.mtx", "inverse mass per column of J (1/kg)"),
            ("shift.mtx", "compliance alpha/h^2 plus regularisation per row (1/kg)"),
            ("rhs.mtx", "-C - alpha/h^2 lambda per row (m)"),
            ("inequality.mtx", "1 where the multiplier must stay >= 0, 0 for equality rows"),
            ("lambda_prev.mtx", "warm start: previous frame's multipliers times the warm-start factor (kg m)"),
            ("solution.mtx", "the dlambda solverlab's solver found (kg m)"),
            ("system.json", "this description"),
        ],
        commit: env!("SOLVERLAB_COMMIT"),
    };
    write("system.json", serde_json::to_string_pretty(&description).expect("serialises") + "\n")?;
    Ok(())
}
