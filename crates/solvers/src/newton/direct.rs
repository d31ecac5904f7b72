//! The exact reference: the same Newton loop as [`crate::newton::cg`], with every linear system solved by
//! faer's sparse Cholesky factorisation, iterated to a tight tolerance.
//!
//! # Algorithm
//!
//! The Gauss-Newton loop of [`crate::newton`] with `A = J W Jᵀ + diag(α/h² + ε)` assembled and
//! factored as `A = L Lᵀ` by faer (supernodal or simplicial, faer's choice, after an AMD
//! fill-reducing ordering). The symbolic factorisation is computed for a kept pattern over every
//! row of the recent past ([`crate::newton::pattern`]), in which each active system is padded
//! with identity rows, so it is computed again only when a new row or entry appears, not whenever
//! the active set changes; only the numeric factorisation is repeated.
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

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, LltRef, SymbolicCholesky};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Side};
use serde::{Deserialize, Serialize};
use solverlab_core::solver::SolveError;

use crate::newton::jacobian::{csr_mul, System};
use crate::newton::pattern::KeptPattern;
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
    /// Rigid bodies: which speculative contacts a step keeps, `fastest` or `relative`
    /// ([`crate::SpeculativeMargin`]; base 1 cm, over two steps) (default: `fastest`).
    pub speculative_margin: crate::SpeculativeMargin,
}

impl Default for DirectConfig {
    fn default() -> Self {
        Self {
            speculative_margin: crate::SpeculativeMargin::Fastest,
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
        speculative_margin: cfg.speculative_margin,
    };
    Ok(Newton::new(settings, Cholesky::default(), label))
}

/// faer's sparse `L Lᵀ` of the active system inside a kept pattern ([`KeptPattern`]), so that
/// the symbolic factorisation (the AMD ordering and the elimination tree) is computed again only
/// when a row or an entry appears that no kept pattern holds, not whenever the active set
/// changes.
///
/// A few patterns are kept ([`PATTERNS`]), each with its symbolic factorisation: a system is
/// factored in the smallest one that holds it with little padding (`fits`), so that a pass
/// over the normal rows alone is not padded with the rows a friction pass adds (on the 55-box
/// pyramid, 400 rows against 700 with the friction rows: padded, the first pass's factor held
/// three times the values). A system no kept pattern fits grows the one that it would
/// stretch least within that bound, or else starts a pattern of its own in place of the one
/// used longest ago.
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
    /// The kept patterns, and the one factored last.
    kept: Vec<Kept>,
    current: Option<usize>,
    /// Factorisations so far (the clock of [`Kept::last_used`]).
    factorizations: usize,
    symbolic_factorizations: usize,
    /// The second solve's right-hand side, `A x` for the residual, and the refinement's `Kv`,
    /// iterate and residual: kept between solves so that the Newton loop's iterations allocate
    /// none.
    t: Vec<f64>,
    q: Vec<f64>,
    kv: Vec<f64>,
    y: Vec<f64>,
    r: Vec<f64>,
}

/// At most this many kept patterns.
pub const PATTERNS: usize = 4;

/// Whether a pattern of `slots` rows pads a system of `rows` rows little enough to factor it
/// there: at most a quarter more rows, and 8.
fn fits(slots: usize, rows: usize) -> bool {
    slots <= rows + rows / 4 + 8
}

/// One kept pattern with its symbolic factorisation, `L`'s values of its last numeric
/// factorisation, and faer's workspace for the factorisation and the solves: all kept, so that
/// a factorisation allocates nothing while the pattern holds.
#[derive(Default)]
struct Kept {
    pattern: KeptPattern,
    symbolic: Option<SymbolicCholesky<usize>>,
    l: Vec<f64>,
    stack: Option<MemBuffer>,
    last_used: usize,
}

impl Kept {
    /// The symbolic factorisation of the pattern (after a rebuild).
    fn analyse(&mut self) -> Result<(), SolveError> {
        let failed = |what: String| SolveError::new("direct", what);
        let par = faer::get_global_parallelism();
        let n = self.pattern.len();
        let (offsets, cols, _) = self.pattern.csr();
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, offsets, None, cols);
        let symbolic = factorize_symbolic_cholesky(pattern, Side::Lower, Default::default(), Default::default())
            .map_err(|e| failed(format!("symbolic factorisation failed: {e:?}")))?;
        let need = symbolic
            .factorize_numeric_llt_scratch::<f64>(par, Default::default())
            .or(symbolic.solve_in_place_scratch::<f64>(1, par));
        self.stack = Some(MemBuffer::try_new(need).map_err(|e| failed(format!("workspace: {e:?}")))?);
        zeroed(&mut self.l, symbolic.len_val());
        self.symbolic = Some(symbolic);
        Ok(())
    }

    /// The numeric factorisation of the padded matrix last filled.
    fn factor(&mut self) -> Result<(), SolveError> {
        let n = self.pattern.len();
        let (offsets, cols, values) = self.pattern.csr();
        let mat = SparseColMatRef::new(SymbolicSparseColMatRef::new_checked(n, n, offsets, None, cols), values);
        let (Some(symbolic), Some(stack)) = (&self.symbolic, &mut self.stack) else {
            return Err(SolveError::new("direct", "no symbolic factorisation"));
        };
        self.l.iter_mut().for_each(|v| *v = 0.0);
        symbolic
            .factorize_numeric_llt::<f64>(
                &mut self.l,
                mat,
                Side::Lower,
                Default::default(),
                faer::get_global_parallelism(),
                MemStack::new(stack),
                Default::default(),
            )
            .map_err(|e| {
                SolveError::new("direct", format!("J W Jᵀ is not positive definite ({e:?}); raise `regularization`"))
            })?;
        Ok(())
    }

    /// `v ← A⁻¹ v` with the last factorisation (`v` over the last filled system's rows).
    fn solve_in_place(&mut self, v: &mut [f64]) {
        let Self { pattern, symbolic, l, stack, .. } = self;
        let (Some(symbolic), Some(stack)) = (symbolic.as_ref(), stack.as_mut()) else { return };
        let n = pattern.len();
        let rhs = pattern.scatter(v);
        LltRef::new(symbolic, l).solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(rhs, n, 1),
            faer::get_global_parallelism(),
            MemStack::new(stack),
        );
        pattern.gather(v);
    }
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

    /// Factors the symmetric CSR matrix `a` over the rows `ids` (its arrays read as CSC) and
    /// solves `a x = b`; with `eps > 0` (the regularisation included in `a`), the result is
    /// filtered to `x = y − ε a⁻¹ y`, `y = a⁻¹ b` (see [`Cholesky`]).
    pub fn factor_and_solve(
        &mut self,
        a: &nalgebra_sparse::CsrMatrix<f64>,
        ids: &[u64],
        b: &[f64],
        eps: f64,
        x: &mut [f64],
    ) -> Result<(), SolveError> {
        self.factor(a, ids)?;
        x.copy_from_slice(b);
        self.solve_in_place(x);
        if eps > 0.0 {
            let mut t = std::mem::take(&mut self.t);
            t.clear();
            t.extend_from_slice(x);
            self.solve_in_place(&mut t);
            for (xi, ti) in x.iter_mut().zip(t.iter()) {
                *xi -= eps * ti;
            }
            self.t = t;
        }
        Ok(())
    }

    /// The numeric factorisation of `a` (rows `ids`) in a kept pattern: the smallest that holds
    /// it and `fits`, else one grown or started for it (with a symbolic factorisation).
    fn factor(&mut self, a: &nalgebra_sparse::CsrMatrix<f64>, ids: &[u64]) -> Result<(), SolveError> {
        self.current = None;
        let m = ids.len();
        let mut order: Vec<usize> = (0..self.kept.len()).collect();
        order.sort_by_key(|&k| self.kept[k].pattern.len());
        let held = order.iter().copied().find(|&k| {
            let kept = &mut self.kept[k];
            kept.symbolic.is_some() && fits(kept.pattern.len(), m) && kept.pattern.fill(ids, a)
        });
        let k = match held {
            Some(k) => k,
            None => {
                let grown = order
                    .iter()
                    .map(|&k| (self.kept[k].pattern.len() + self.kept[k].pattern.missing(ids), k))
                    .filter(|&(slots, _)| fits(slots, m))
                    .min();
                let k = match grown {
                    Some((_, k)) => k,
                    None if self.kept.len() < PATTERNS => {
                        self.kept.push(Kept::default());
                        self.kept.len() - 1
                    }
                    None => {
                        let oldest = (0..self.kept.len()).min_by_key(|&k| self.kept[k].last_used).expect("kept");
                        self.kept[oldest] = Kept::default();
                        oldest
                    }
                };
                let kept = &mut self.kept[k];
                kept.pattern.rebuild(ids, a);
                if !kept.pattern.fill(ids, a) {
                    return Err(SolveError::new("direct", "a row id repeats in the system"));
                }
                kept.analyse()?;
                self.symbolic_factorizations += 1;
                k
            }
        };
        self.factorizations += 1;
        self.kept[k].last_used = self.factorizations;
        self.kept[k].factor()?;
        self.current = Some(k);
        Ok(())
    }

    /// `v ← A⁻¹ v` with the last factorisation (`v` over the last factored system's rows).
    fn solve_in_place(&mut self, v: &mut [f64]) {
        if let Some(k) = self.current {
            self.kept[k].solve_in_place(v);
        }
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
        let a = sys.a.as_ref().filter(|_| self.current.is_some())?;
        let n = v.len();
        let eps = sys.eps;
        let k_times = |y: &[f64], out: &mut [f64]| {
            csr_mul(a, y, out);
            out.iter_mut().zip(y).for_each(|(o, y)| *o -= eps * y);
        };
        let (mut kv, mut y, mut r) =
            (std::mem::take(&mut self.kv), std::mem::take(&mut self.y), std::mem::take(&mut self.r));
        zeroed(&mut kv, n);
        k_times(v, &mut kv);
        zeroed(&mut y, n);
        zeroed(&mut r, n);
        for _ in 0..PROJECTION_SOLVES {
            k_times(&y, &mut r);
            r.iter_mut().zip(kv.iter()).for_each(|(r, kv)| *r = kv - *r);
            self.solve_in_place(&mut r);
            y.iter_mut().zip(r.iter()).for_each(|(y, r)| *y += r);
        }
        let finite = y.iter().all(|v| v.is_finite());
        if finite {
            v.copy_from_slice(&y);
        }
        (self.kv, self.y, self.r) = (kv, y, r);
        finite.then_some(0)
    }

    fn solve(
        &mut self,
        sys: &System,
        b: &[f64],
        x: &mut [f64],
        _pattern_changed: bool,
        _stop: LinearStop,
        monitor: &mut dyn FnMut(usize, f64, &[f64]),
    ) -> Result<LinearInfo, SolveError> {
        let a = sys.a.as_ref().expect("assembled");
        self.factor_and_solve(a, &sys.ids, b, sys.eps, x)?;
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
