//! The exact reference: the same Newton loop as [`crate::newton::cg`], with every linear system solved by
//! faer's sparse Cholesky factorisation, iterated to a tight tolerance.
//!
//! # Algorithm
//!
//! The Gauss-Newton loop of [`crate::newton`] with `A = J W Jᵀ + diag(α/h² + ε)` assembled and
//! factored as `A = L Lᵀ` by faer (supernodal or simplicial, faer's choice, after an AMD
//! fill-reducing ordering). The symbolic factorisation is computed once per sparsity pattern and
//! reused while the set of rows does not change; only the numeric factorisation is repeated.
//! Outer iterations continue until `max |C| ≤ tolerance` (default 10⁻¹² m) or the cap
//! (default 50). It is the ground truth: the convergence experiments measure each iterative
//! solver's `‖x − x_ref‖` against it from the same state.
//!
//! # Residual
//!
//! Per outer iteration one report: the relative residual `‖b − AΔλ‖₂/‖b‖₂` of the direct solve
//! (rounding only, about 10⁻¹⁵ for a well-conditioned `A`).
//!
//! # References
//!
//! * S. Chen et al., faer (sparse Cholesky, `faer::sparse::linalg::solvers::Llt`).
//! * T. A. Davis, "Direct Methods for Sparse Linear Systems", SIAM 2006: symbolic and numeric
//!   factorisation, AMD ordering.
//! * A. Witkin, "Constrained Dynamics" (SIGGRAPH course notes, 1997): the system `J W Jᵀ λ = −C`.

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{MatMut, Side};
use serde::{Deserialize, Serialize};
use solverlab_core::solver::SolveError;

use crate::newton::jacobian::{csr_mul, System};
use crate::newton::{Forcing, Linear, LinearInfo, LinearStop, Method, Newton, NewtonSettings};
use crate::ConfigError;

/// Settings of the direct solver; every field has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DirectConfig {
    /// What each outer iteration solves: `projection`, `gauss_newton` or `full` (default:
    /// `full`, the implicit-Euler step with quadratic convergence; see
    /// [`crate::newton::Method`]).
    pub newton: Method,
    /// Outer (Gauss-Newton) iteration cap per step (default: 50).
    pub outer_iterations: u32,
    /// Stop when the Newton residual `max |C + α̃λ| ≤ tolerance` (m) (default: 1e-12).
    pub tolerance: f64,
    /// Re-solves per outer iteration while inequality rows leave the active set (default: 16).
    pub active_set_iterations: u32,
    /// Diagonal regularisation `ε` relative to the mean diagonal of `J W Jᵀ`; it damps the step
    /// without moving the fixed point, and keeps redundant systems factorable (default: 1e-9).
    pub regularization: f64,
}

impl Default for DirectConfig {
    fn default() -> Self {
        Self {
            newton: Method::Full,
            outer_iterations: 50,
            tolerance: 1e-12,
            active_set_iterations: 16,
            regularization: 1e-9,
        }
    }
}

/// The direct family: `kind = "direct"` and its preset.
pub fn family() -> crate::registry::Typed<DirectConfig> {
    crate::registry::Typed {
        kind: "direct",
        summary: "Gauss-Newton with exact sparse Cholesky solves (faer): the reference",
        presets: || {
            vec![(
                "direct",
                "sparse Cholesky (faer) Newton iterations to max |C| ≤ 1e-12: the exact reference",
                DirectConfig::default(),
            )]
        },
        build: |c, label| Ok(Box::new(direct_solver(c, label)?)),
        // The reference ignores caps: its error is the yardstick.
        cap: |_, _| {},
        substeps: |_| 1,
    }
}

impl crate::registry::Settings for DirectConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        DirectConfig::validate(self)
    }
}

impl DirectConfig {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        use crate::common::check::{count, non_negative, within};
        count("outer_iterations", self.outer_iterations, 1)?;
        count("active_set_iterations", self.active_set_iterations, 0)?;
        non_negative("tolerance", self.tolerance, "m")?;
        within("regularization", self.regularization, (0.0, 1.0), (true, false))
    }
}

/// The direct solver: the Newton loop with [`Cholesky`].
pub type DirectSolver = Newton<Cholesky>;

/// Builds a direct solver from validated settings.
pub fn direct_solver(cfg: &DirectConfig, label: &str) -> Result<DirectSolver, ConfigError> {
    cfg.validate()?;
    let settings = NewtonSettings {
        method: cfg.newton,
        outer_iterations: cfg.outer_iterations as usize,
        tolerance: cfg.tolerance,
        // The SQP methods start each step from the last step's multipliers: the iterate, not
        // a guess for the linear solve (which is exact here); the projection starts from zero.
        warm_start: if cfg.newton.is_sqp() { 1.0 } else { 0.0 },
        active_set_iterations: cfg.active_set_iterations as usize,
        regularization: cfg.regularization,
        forcing: Forcing::Fixed(0.0),
        inner_budget: 0,
    };
    Ok(Newton::new(settings, Cholesky::default(), label))
}

/// faer's sparse `L Lᵀ`, with the symbolic factorisation kept per pattern.
///
/// Rank deficiency is handled deliberately. Redundant rows (a cloth with shear sticks) make
/// `K = J W Jᵀ + diag(α̃)` singular; `A = K + εI` is not, but the part `b_N` of `b` in the null
/// space of `K` (which no step can remove: it moves nothing) comes back as `b_N/ε`, a multiplier
/// 10⁹ times too large that would poison the forces and the next solves. The solve therefore
/// returns `Δλ = A⁻¹ K A⁻¹ b = y − ε A⁻¹ y` with `y = A⁻¹ b`: one more pair of triangular solves
/// with the same factor. On the range of `K` (eigenvalue `σ`) this scales `y` by `σ/(σ + ε)`,
/// 1 to within `ε/σ`; on its null space it gives 0, so `Δλ` is the minimum-norm solution of the
/// consistent part and `W Jᵀ Δλ`, the step, is unchanged.
#[derive(Default)]
pub struct Cholesky {
    symbolic: Option<SymbolicLlt<usize>>,
    /// The last numeric factorisation, kept for [`Linear::project_range`].
    factor: Option<Llt<usize, f64>>,
    factorizations: usize,
    symbolic_factorizations: usize,
    /// The second solve's right-hand side, `A x` for the residual, and the refinement's `Kv`,
    /// iterate and residual: kept between solves so that the Newton loop's iterations allocate
    /// none but the numeric factorisation's.
    t: Vec<f64>,
    q: Vec<f64>,
    kv: Vec<f64>,
    y: Vec<f64>,
    r: Vec<f64>,
}

/// `v` cleared and refilled with `n` zeros (its allocation kept).
fn zeroed(v: &mut Vec<f64>, n: usize) {
    v.clear();
    v.resize(n, 0.0);
}

impl Cholesky {
    /// (numeric, symbolic) factorisations performed so far.
    pub fn counts(&self) -> (usize, usize) {
        (self.factorizations, self.symbolic_factorizations)
    }

    /// Factors the symmetric CSR matrix `a` (its arrays read as CSC) and solves `a x = b`; with
    /// `eps > 0` (the regularisation included in `a`), the result is filtered to
    /// `x = y − ε a⁻¹ y`, `y = a⁻¹ b` (see [`Cholesky`]).
    pub fn factor_and_solve(
        &mut self,
        a: &nalgebra_sparse::CsrMatrix<f64>,
        new_pattern: bool,
        b: &[f64],
        eps: f64,
        x: &mut [f64],
    ) -> Result<(), SolveError> {
        let n = a.nrows();
        let symbolic = SymbolicSparseColMatRef::new_checked(n, n, a.row_offsets(), None, a.col_indices());
        let mat = SparseColMatRef::new(symbolic, a.values());
        if new_pattern || self.symbolic.is_none() {
            self.symbolic = Some(
                SymbolicLlt::try_new(symbolic, Side::Lower)
                    .map_err(|e| SolveError::new("direct", format!("symbolic factorisation failed: {e:?}")))?,
            );
            self.symbolic_factorizations += 1;
        }
        let llt =
            Llt::try_new_with_symbolic(self.symbolic.clone().expect("set above"), mat, Side::Lower).map_err(|e| {
                SolveError::new("direct", format!("J W Jᵀ is not positive definite ({e:?}); raise `regularization`"))
            })?;
        self.factorizations += 1;
        x.copy_from_slice(b);
        llt.solve_in_place(MatMut::from_column_major_slice_mut(x, n, 1));
        if eps > 0.0 {
            let t = &mut self.t;
            t.clear();
            t.extend_from_slice(x);
            llt.solve_in_place(MatMut::from_column_major_slice_mut(t, n, 1));
            for (xi, ti) in x.iter_mut().zip(t.iter()) {
                *xi -= eps * ti;
            }
        }
        self.factor = Some(llt);
        Ok(())
    }
}

/// Refinement solves of [`Linear::project_range`]: each multiplies the error on an eigenvalue
/// `σ` of `K` by `ε/(σ + ε)`.
const PROJECTION_SOLVES: usize = 3;

impl Linear for Cholesky {
    fn needs_assembly(&self) -> bool {
        true
    }

    /// `v ← K⁺K v` with `K = A − εI`, by refinement with the last factor of `A`:
    /// `y₀ = 0`, `yₖ₊₁ = yₖ + A⁻¹(Kv − Kyₖ)`. Every iterate lies in the range of `K` (it is
    /// built from `A⁻¹` of vectors in that range), and on an eigenvalue `σ` the error falls by
    /// `ε/(σ + ε)` per solve, so after `PROJECTION_SOLVES` solves `y` is the range part of `v`
    /// to rounding, except along eigenvalues not far above `ε`, which count as null.
    fn project_range(&mut self, sys: &System, v: &mut [f64], _first: bool) -> Option<usize> {
        let (Some(llt), Some(a)) = (&self.factor, &sys.a) else { return None };
        let n = v.len();
        let eps = sys.eps;
        let k_times = |y: &[f64], out: &mut [f64]| {
            csr_mul(a, y, out);
            out.iter_mut().zip(y).for_each(|(o, y)| *o -= eps * y);
        };
        let (kv, y, r) = (&mut self.kv, &mut self.y, &mut self.r);
        zeroed(kv, n);
        k_times(v, kv);
        zeroed(y, n);
        zeroed(r, n);
        for _ in 0..PROJECTION_SOLVES {
            k_times(y, r);
            r.iter_mut().zip(kv.iter()).for_each(|(r, kv)| *r = kv - *r);
            llt.solve_in_place(MatMut::from_column_major_slice_mut(r, n, 1));
            y.iter_mut().zip(r.iter()).for_each(|(y, r)| *y += r);
        }
        if y.iter().any(|v| !v.is_finite()) {
            return None;
        }
        v.copy_from_slice(y);
        Some(0)
    }

    fn solve(
        &mut self,
        sys: &System,
        b: &[f64],
        x: &mut [f64],
        pattern_changed: bool,
        _stop: LinearStop,
        monitor: &mut dyn FnMut(usize, f64, &[f64]),
    ) -> Result<LinearInfo, SolveError> {
        let a = sys.a.as_ref().expect("assembled");
        self.factor_and_solve(a, pattern_changed, b, sys.eps, x)?;
        let q = &mut self.q;
        zeroed(q, b.len());
        csr_mul(a, x, q);
        let b_norm = b.iter().map(|v| v * v).sum::<f64>().sqrt();
        let r = b.iter().zip(q.iter()).map(|(bi, qi)| (bi - qi).powi(2)).sum::<f64>().sqrt();
        let residual = if b_norm > 0.0 { r / b_norm } else { 0.0 };
        monitor(1, residual, x);
        if x.iter().any(|v| !v.is_finite()) {
            return Err(SolveError::new("direct", "the solution is not finite"));
        }
        Ok(LinearInfo { iterations: 1, residual, converged: true, breakdown: false })
    }
}
