//! Explicit-Jacobian preconditioned conjugate gradient, warm-started from the last frame's
//! multipliers: the way past relaxation that Jakobsen names at the end of his article.
//!
//! # Algorithm
//!
//! The Gauss-Newton loop of [`crate::newton`] (explicit sparse `J`, active set for inequality
//! rows, warm start by row id), with each system `A Δλ = b`, `A = J W Jᵀ + diag(α/h² + ε)`,
//! solved by preconditioned conjugate gradient:
//!
//! 1. `r = b − A x₀`, `z = M⁻¹ r`, `p = z`;
//! 2. per iteration: `q = A p`, `a = (r·z)/(p·q)`, `x += a p`, `r −= a q`; stop when
//!    `‖r‖₂ ≤ max(η‖b‖₂, tolerance/2)` with the Newton loop's forcing term `η` (inexact Newton;
//!    see [`crate::newton`]), or at the iteration cap; else `z = M⁻¹ r`,
//!    `β = (r·z)_new/(r·z)_old`, `p = z + β p`;
//! 3. on stopping, the true residual `b − A x` is recomputed; if it misses the test (drift of
//!    the recursive residual), CG restarts from `x` while iterations remain;
//! 4. a direction with `pᵀAp ≤ 0` (breakdown: `A` is not positive definite along it, which the
//!    regularisation should prevent) stops the solve and is counted in the Newton statistics.
//!
//! No other rule stops CG: in exact arithmetic it reaches the solution in at most `m`
//! iterations (`m` rows), which is the default cap. Redundant rows (a cloth with shear sticks,
//! the plant, a braced torso) make `J W Jᵀ` singular; the regularisation keeps it definite but
//! ill-conditioned, and a linearisation whose `−C` has a part outside the range of `J` (which no
//! step can remove) leaves a slowly falling residual. The forcing term keeps CG from chasing it
//! in early outer iterations; the Newton loop's line search takes the useful part of each step.
//!
//! `A p` is either a CSR product with the assembled `A` or matrix-free as `J (W (Jᵀ p))` plus the
//! diagonal shift (`assemble = false`). Preconditioners `M`: `none`; `jacobi`, the diagonal of
//! `A`; `ic0`, incomplete Cholesky with the pattern of `A` (needs `assemble = true`; on a
//! non-positive pivot the diagonal is shifted by 10⁻³·diag(A), doubling until it factors).
//!
//! Loops per CG iteration: one product with `A` (or two with `J`), one preconditioner
//! application, three vector updates and two dot products.
//!
//! # Residual
//!
//! Each CG iteration reports the relative residual `‖b − AΔλ‖₂/‖b‖₂` of the recursion, with the
//! outer (Newton) iteration it belongs to; `residual` in `steps.csv` is the last one. When `b = 0`
//! the solution is `Δλ = 0` and the residual 0. With `violation` requested, each iteration also
//! reports the common violation at `x + W Jᵀ Δλ`. The step stops on the common violation
//! ([`crate::newton`], step 1), like every other family.
//!
//! # References
//!
//! * T. Jakobsen, "Advanced Character Physics", 2001, §8: sparse conjugate gradient with
//!   preconditioning and coherence from the previous frame.
//! * M. Macklin et al., "XPBD", 2016, §6: warm starting named as future work.
//! * Y. Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., 2003: algorithm 9.1 (PCG)
//!   and §10.3 (IC(0)).
//! * S. C. Eisenstat, H. F. Walker, "Choosing the Forcing Terms in an Inexact Newton Method",
//!   1996: how loosely each linear system may be solved.
//! * J. R. Shewchuk, "An Introduction to the Conjugate Gradient Method Without the Agonizing
//!   Pain", 1994: residual drift and restarts.

use nalgebra_sparse::CsrMatrix;
use serde::{Deserialize, Serialize};
use solverlab_core::solver::{IterationReport, Observer, SolveError};

use crate::newton::jacobian::System;
use crate::newton::{Forcing, Linear, LinearInfo, LinearStop, Method, Newton, NewtonSettings};
use crate::ConfigError;

/// The preconditioner of the conjugate gradient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preconditioner {
    /// Plain CG.
    None,
    /// Diagonal (Jacobi) scaling.
    Jacobi,
    /// Incomplete Cholesky with zero fill-in, IC(0).
    Ic0,
}

/// How tightly CG solves each outer iteration's system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForcingKind {
    /// Inexact Newton with Eisenstat-Walker forcing terms (see [`crate::newton`]).
    EisenstatWalker,
    /// Every system to the relative tolerance `cg_tolerance`.
    Fixed,
}

/// Settings of the CG solver; every field has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CgConfig {
    /// What each outer iteration solves: `projection` (the fast projection onto the
    /// constraints), `gauss_newton` (SQP with the Hessian `M`) or `full` (SQP with the sticks'
    /// geometric stiffness) (default: `full`; see [`crate::newton::Method`]).
    pub newton: Method,
    /// Outer (Gauss-Newton) iteration cap per step, at least 1 (default: 50).
    pub outer_iterations: u32,
    /// Stop the outer loop when the common violation (and, under the SQP methods, the
    /// stationarity) is at most this (m); 0 runs every outer iteration (default: 1e-7. At a
    /// micron the SQP methods' multipliers were too loose for static friction: the card house
    /// slid apart after 45 frames under `cg` while it stood at 1e-7, which also took fewer outer
    /// iterations there, 10 against 36 a frame. On the degenerate default cloth 1e-7 costs 2.6
    /// times the CG iterations of 1e-6.)
    pub tolerance: f64,
    /// `eisenstat_walker` (inexact Newton: loose early solves, tight late ones) or `fixed`
    /// (every solve to `cg_tolerance`) (default: `eisenstat_walker`).
    pub forcing: ForcingKind,
    /// Relative tolerance of each CG solve under `forcing = "fixed"`,
    /// `‖b − AΔλ‖ ≤ cg_tolerance·‖b‖` (default: 1e-8).
    pub cg_tolerance: f64,
    /// Iteration cap of each CG solve; 0 means the number of rows `m`, CG's exact-arithmetic
    /// bound (default: 0).
    pub cg_max_iterations: u32,
    /// Total CG iterations allowed per step over all outer iterations; 0 is no budget (default:
    /// 0). The convergence studies cap CG this way, like the sweeps of relax and PGS.
    pub cg_budget: u32,
    /// `none`, `jacobi` or `ic0` (default: `jacobi`).
    pub preconditioner: Preconditioner,
    /// Assemble `A = J W Jᵀ`, or apply it matrix-free (default: true).
    pub assemble: bool,
    /// Fraction in [0, 1] of the previous frame's multipliers used as the initial guess; 0 is a
    /// cold start (default: 1).
    pub warm_start: f64,
    /// Re-solves per outer iteration while inequality rows leave the active set (default: 8).
    pub active_set_iterations: u32,
    /// Diagonal regularisation `ε` relative to the mean diagonal of `J W Jᵀ`, a damping of the
    /// Gauss-Newton step that leaves its fixed point (`C + α̃λ = 0`) unchanged (default: 1e-6).
    pub regularization: f64,
    /// Rigid bodies: which speculative contacts a step keeps, `fastest` or `relative`
    /// ([`crate::SpeculativeMargin`]; base 1 cm, over two steps) (default: `fastest`).
    pub speculative_margin: crate::SpeculativeMargin,
}

impl Default for CgConfig {
    fn default() -> Self {
        Self {
            speculative_margin: crate::SpeculativeMargin::Fastest,
            newton: Method::Full,
            outer_iterations: 50,
            tolerance: 1e-7,
            forcing: ForcingKind::EisenstatWalker,
            cg_tolerance: 1e-8,
            cg_max_iterations: 0,
            cg_budget: 0,
            preconditioner: Preconditioner::Jacobi,
            assemble: true,
            warm_start: 1.0,
            active_set_iterations: 8,
            regularization: 1e-6,
        }
    }
}

/// The CG family: `kind = "cg"` and its presets.
pub fn family() -> crate::registry::Typed<CgConfig> {
    crate::registry::Typed {
        kind: "cg",
        summary: "explicit-Jacobian preconditioned CG on J W Jᵀ inside an inexact Gauss-Newton loop",
        presets: || {
            vec![
                (
                    "cg",
                    "explicit-Jacobian CG on J W Jᵀ, Jacobi preconditioner, warm-started from the last frame",
                    CgConfig::default(),
                ),
                (
                    "cg-cold",
                    "as cg, without warm start (for ablations)",
                    CgConfig { warm_start: 0.0, ..CgConfig::default() },
                ),
            ]
        },
        build: |c, label| Ok(Box::new(cg_solver(c, label)?)),
        // CG iterations summed over the step's Newton iterations: a budget.
        cap: |c, n| {
            let n = crate::registry::count_of(n);
            c.cg_budget = n;
            c.tolerance = 0.0;
            c.outer_iterations = c.outer_iterations.max(n);
        },
        substeps: |_| 1,
    }
}

impl crate::registry::Settings for CgConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        CgConfig::validate(self)
    }
}

impl CgConfig {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        use crate::common::check::{count, non_negative, within};
        count("outer_iterations", self.outer_iterations, 1)?;
        count("cg_max_iterations", self.cg_max_iterations, 0)?;
        count("cg_budget", self.cg_budget, 0)?;
        count("active_set_iterations", self.active_set_iterations, 0)?;
        within("cg_tolerance", self.cg_tolerance, (0.0, 1.0), (false, false))?;
        non_negative("tolerance", self.tolerance, "m")?;
        within("warm_start", self.warm_start, (0.0, 1.0), (true, true))?;
        within("regularization", self.regularization, (0.0, 1.0), (true, false))?;
        if self.preconditioner == Preconditioner::Ic0 && !self.assemble {
            return Err(ConfigError::new("preconditioner", "ic0 needs the assembled matrix: set assemble = true"));
        }
        Ok(())
    }

    fn settings(&self) -> NewtonSettings {
        NewtonSettings {
            method: self.newton,
            outer_iterations: self.outer_iterations as usize,
            tolerance: self.tolerance,
            warm_start: self.warm_start,
            active_set_iterations: self.active_set_iterations as usize,
            regularization: self.regularization,
            forcing: match self.forcing {
                ForcingKind::EisenstatWalker => Forcing::EisenstatWalker,
                ForcingKind::Fixed => Forcing::Fixed(self.cg_tolerance),
            },
            inner_budget: self.cg_budget as usize,
            speculative_margin: self.speculative_margin,
        }
    }
}

/// The CG solver: the Newton loop with [`Pcg`].
pub type CgSolver = Newton<Pcg>;

/// Builds a CG solver from validated settings.
pub fn cg_solver(cfg: &CgConfig, label: &str) -> Result<CgSolver, ConfigError> {
    cfg.validate()?;
    let pcg = Pcg {
        tolerance: cfg.cg_tolerance,
        max_iterations: cfg.cg_max_iterations as usize,
        preconditioner: cfg.preconditioner,
        assemble: cfg.assemble,
        ic: None,
        scratch: Vec::new(),
        passes: 0,
        buffers: Buffers::default(),
    };
    Ok(Newton::new(cfg.settings(), pcg, label))
}

/// The relative tolerance of the solve that takes the null-space part out of the warm start
/// ([`Linear::project_range`]): the multipliers' range part then moves positions by this
/// fraction of what they apply, which the next outer iteration corrects.
const PROJECTION_TOLERANCE: f64 = 1e-8;

/// Warm-started passes per projection of the warm start ([`Linear::project_range`]).
const PROJECTION_PERIOD: usize = 16;

/// Preconditioned conjugate gradient on a [`System`].
pub struct Pcg {
    /// Relative tolerance of [`Pcg::solve_csr`] (the Newton loop passes its own).
    tolerance: f64,
    /// Iteration cap; 0 is the number of rows.
    max_iterations: usize,
    preconditioner: Preconditioner,
    assemble: bool,
    ic: Option<Ic0>,
    scratch: Vec<f64>,
    /// Warm-started SQP passes so far (see [`Linear::project_range`]).
    passes: usize,
    /// The solve's vectors, kept between solves so that the Newton loop's iterations allocate
    /// none (see [`Pcg::iterate`]).
    buffers: Buffers,
}

/// PCG's vectors: the preconditioner's diagonal, the residual `r`, `z = M⁻¹r`, `q = Ap`, the
/// direction `p`, and [`Linear::project_range`]'s `Kv` and solution.
#[derive(Default)]
struct Buffers {
    diag: Vec<f64>,
    r: Vec<f64>,
    z: Vec<f64>,
    q: Vec<f64>,
    p: Vec<f64>,
    kv: Vec<f64>,
    y: Vec<f64>,
}

/// `v` cleared and refilled with `n` zeros (its allocation kept).
fn zeroed(v: &mut Vec<f64>, n: usize) {
    v.clear();
    v.resize(n, 0.0);
}

/// Systems of at least this many rows run CG's products and vector updates on every core
/// (rayon). Their dot products are then summed in fixed chunks of `DOT_CHUNK` (in parallel,
/// the chunks' sums in order), so the numbers are the same for any thread count; smaller systems
/// sum in one pass on one core.
pub const PARALLEL_ROWS: usize = 65_536;

/// The chunk of a large system's dot products.
const DOT_CHUNK: usize = 4096;

/// Whether a system of `n` rows is large enough for every core.
pub(crate) fn parallel(n: usize) -> bool {
    n >= PARALLEL_ROWS && rayon::current_num_threads() > 1
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    use rayon::prelude::*;
    if a.len() < PARALLEL_ROWS {
        return a.iter().zip(b).map(|(x, y)| x * y).sum();
    }
    let partial = |(a, b): (&[f64], &[f64])| -> f64 { a.iter().zip(b).map(|(x, y)| x * y).sum() };
    let sums: Vec<f64> = if parallel(a.len()) {
        a.par_chunks(DOT_CHUNK).zip(b.par_chunks(DOT_CHUNK)).map(partial).collect()
    } else {
        a.chunks(DOT_CHUNK).zip(b.chunks(DOT_CHUNK)).map(partial).collect()
    };
    sums.iter().sum()
}

/// `out[i] = f(out[i], a[i], b[i])` for every `i`, on every core for a large system (the same
/// numbers either way).
fn update(out: &mut [f64], a: &[f64], b: &[f64], f: impl Fn(f64, f64, f64) -> f64 + Sync + Send) {
    use rayon::prelude::*;
    if parallel(out.len()) {
        out.par_iter_mut().zip(a).zip(b).with_min_len(4096).for_each(|((o, a), b)| *o = f(*o, *a, *b));
    } else {
        out.iter_mut().zip(a).zip(b).for_each(|((o, a), b)| *o = f(*o, *a, *b));
    }
}

impl Pcg {
    /// A standalone PCG with the given relative tolerance, cap (0: the number of rows) and
    /// preconditioner (for tests and benchmarks on arbitrary SPD matrices).
    pub fn new(tolerance: f64, max_iterations: usize, preconditioner: Preconditioner) -> Self {
        Self {
            tolerance,
            max_iterations,
            preconditioner,
            assemble: true,
            ic: None,
            scratch: Vec::new(),
            passes: 0,
            buffers: Buffers::default(),
        }
    }

    /// Solves `a x = b` for an SPD CSR matrix to `‖b − ax‖ ≤ tolerance·‖b‖`, `x` holding the
    /// initial guess; each iteration is reported to `observer`.
    pub fn solve_csr(
        &mut self,
        a: &CsrMatrix<f64>,
        b: &[f64],
        x: &mut [f64],
        observer: &mut dyn Observer,
    ) -> LinearInfo {
        let mut diag = std::mem::take(&mut self.buffers.diag);
        diag.clear();
        diag.extend((0..a.nrows()).map(|i| a.get_entry(i, i).map_or(0.0, |e| e.into_value())));
        if self.preconditioner == Preconditioner::Ic0 {
            self.ic = Some(Ic0::new(a));
        }
        let mut apply = |p: &[f64], q: &mut [f64]| crate::newton::jacobian::csr_mul(a, p, q);
        let stop = LinearStop { relative: self.tolerance, absolute: 0.0, max_iterations: 0 };
        let mut monitor = |iteration: usize, residual: f64, _: &[f64]| {
            observer.iteration(&IterationReport { iteration, outer: 1, residual, ..Default::default() })
        };
        let info = self.iterate(&mut apply, &diag, b, x, stop, &mut monitor);
        self.buffers.diag = diag;
        info
    }

    /// PCG proper, in the vectors of [`Buffers`].
    fn iterate(
        &mut self,
        apply: &mut dyn FnMut(&[f64], &mut [f64]),
        diag: &[f64],
        b: &[f64],
        x: &mut [f64],
        stop: LinearStop,
        monitor: &mut dyn FnMut(usize, f64, &[f64]),
    ) -> LinearInfo {
        let n = b.len();
        let b_norm = dot(b, b).sqrt();
        if b_norm == 0.0 {
            x.iter_mut().for_each(|v| *v = 0.0);
            return LinearInfo { iterations: 0, residual: 0.0, converged: true, breakdown: false };
        }
        let target = (stop.relative * b_norm).max(stop.absolute);
        let own = if self.max_iterations == 0 { n } else { self.max_iterations };
        let cap = if stop.max_iterations > 0 { own.min(stop.max_iterations) } else { own };
        let precondition = |ic: &Option<Ic0>, r: &[f64], z: &mut [f64]| match (self.preconditioner, ic) {
            (Preconditioner::None, _) => z.copy_from_slice(r),
            (Preconditioner::Jacobi, _) | (Preconditioner::Ic0, None) => {
                update(z, r, diag, |_, r, d| if d > 0.0 { r / d } else { r })
            }
            (Preconditioner::Ic0, Some(ic)) => ic.apply(r, z),
        };
        let mut buffers = std::mem::take(&mut self.buffers);
        let Buffers { r, z, q, p, .. } = &mut buffers;
        zeroed(r, n);
        zeroed(z, n);
        zeroed(q, n);
        let mut iterations = 0;
        let mut breakdown = false;
        let mut r_norm;
        loop {
            // (Re)start from the true residual.
            apply(x, q);
            update(r, b, q, |_, b, q| b - q);
            r_norm = dot(r, r).sqrt();
            if r_norm <= target || iterations >= cap || breakdown {
                break;
            }
            precondition(&self.ic, r, z);
            p.clone_from(z);
            let mut rz = dot(r, z);
            while iterations < cap {
                apply(p, q);
                let pq = dot(p, q);
                if pq <= 0.0 || !pq.is_finite() {
                    breakdown = true;
                    break;
                }
                let a = rz / pq;
                update(x, p, p, |x, p, _| x + a * p);
                update(r, q, q, |r, q, _| r - a * q);
                iterations += 1;
                r_norm = dot(r, r).sqrt();
                monitor(iterations, r_norm / b_norm, x);
                if r_norm <= target {
                    break;
                }
                precondition(&self.ic, r, z);
                let rz_new = dot(r, z);
                let beta = rz_new / rz;
                rz = rz_new;
                update(p, z, z, |p, z, _| z + beta * p);
            }
        }
        self.buffers = buffers;
        LinearInfo { iterations, residual: r_norm / b_norm, converged: r_norm <= target, breakdown }
    }
}

impl Linear for Pcg {
    fn needs_assembly(&self) -> bool {
        self.assemble
    }

    /// Only the warm start (`first`), and only every `PROJECTION_PERIOD`th pass: CG solves
    /// `A y = K v`, `K = A − εI`, from `y = 0`. Its iterates stay in the Krylov space of `Kv`,
    /// inside the range of `K`, and converge to `A⁻¹Kv`, the range part of `v` scaled by
    /// `σ/(σ + ε)` on each eigenvalue `σ`. Each later solve of a pass starts from zero and stays
    /// in that range by the same argument; what a warm start carries into the null space is
    /// what the rows turned since the last projection, a little per step, so a projection
    /// every few steps bounds it at a fraction of the cost of one each step (on the
    /// quickstart's cloth, which has no null space, one each step took 21 CG iterations a
    /// frame, as many as the warm start saved).
    fn project_range(&mut self, sys: &System, v: &mut [f64], first: bool) -> Option<usize> {
        if !first || v.iter().all(|&l| l == 0.0) {
            return None;
        }
        self.passes += 1;
        if self.passes % PROJECTION_PERIOD != 1 {
            return None;
        }
        let (mut kv, mut y) = (std::mem::take(&mut self.buffers.kv), std::mem::take(&mut self.buffers.y));
        zeroed(&mut kv, v.len());
        let mut scratch = std::mem::take(&mut self.scratch);
        sys.apply(v, &mut kv, &mut scratch);
        self.scratch = scratch;
        kv.iter_mut().zip(v.iter()).for_each(|(k, v)| *k -= sys.eps * v);
        zeroed(&mut y, v.len());
        let stop = LinearStop { relative: PROJECTION_TOLERANCE, absolute: 0.0, max_iterations: 0 };
        let info = self.solve(sys, &kv, &mut y, false, stop, &mut |_, _, _| {});
        if info.is_ok() {
            v.copy_from_slice(&y);
        }
        (self.buffers.kv, self.buffers.y) = (kv, y);
        Some(info.ok()?.iterations)
    }

    fn solve(
        &mut self,
        sys: &System,
        b: &[f64],
        x: &mut [f64],
        _pattern_changed: bool,
        stop: LinearStop,
        monitor: &mut dyn FnMut(usize, f64, &[f64]),
    ) -> Result<LinearInfo, SolveError> {
        let mut diag = std::mem::take(&mut self.buffers.diag);
        diag.clear();
        match &sys.a {
            Some(a) => diag.extend((0..a.nrows()).map(|i| a.get_entry(i, i).map_or(0.0, |e| e.into_value()))),
            None => {
                let j = sys.j.as_ref().expect("jacobian set");
                let (offsets, values) = (j.row_offsets(), j.values());
                let cols = j.col_indices();
                diag.extend((0..j.nrows()).map(|i| {
                    (offsets[i]..offsets[i + 1]).map(|k| values[k] * values[k] * sys.w3[cols[k]]).sum::<f64>()
                        + sys.diag_shift[i]
                }));
            }
        }
        if self.preconditioner == Preconditioner::Ic0 {
            self.ic = Some(Ic0::new(sys.a.as_ref().expect("assembled")));
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut apply = |p: &[f64], q: &mut [f64]| sys.apply(p, q, &mut scratch);
        let info = self.iterate(&mut apply, &diag, b, x, stop, monitor);
        self.scratch = scratch;
        self.buffers.diag = diag;
        if x.iter().any(|v| !v.is_finite()) {
            return Err(SolveError::new(
                "cg",
                format!("the solution is not finite (relative residual {})", info.residual),
            ));
        }
        Ok(info)
    }
}

/// IC(0): `L Lᵀ ≈ A` with `L` on the lower pattern of `A`.
struct Ic0 {
    offsets: Vec<usize>,
    cols: Vec<usize>,
    values: Vec<f64>,
}

impl Ic0 {
    fn new(a: &CsrMatrix<f64>) -> Self {
        let mut shift = 0.0;
        loop {
            if let Some(ic) = Self::try_factor(a, shift) {
                return ic;
            }
            shift = if shift == 0.0 { 1e-3 } else { shift * 2.0 };
        }
    }

    fn try_factor(a: &CsrMatrix<f64>, shift: f64) -> Option<Self> {
        let m = a.nrows();
        let (ao, ac, av) = (a.row_offsets(), a.col_indices(), a.values());
        let mut offsets = vec![0];
        let mut cols = Vec::new();
        let mut values = Vec::new();
        for i in 0..m {
            for k in ao[i]..ao[i + 1] {
                if ac[k] <= i {
                    cols.push(ac[k]);
                    values.push(if ac[k] == i { av[k] * (1.0 + shift) } else { av[k] });
                }
            }
            offsets.push(cols.len());
        }
        for i in 0..m {
            let (start, end) = (offsets[i], offsets[i + 1]);
            for k in start..end {
                let j = cols[k];
                // s = A_ij − Σ_{l < j} L_il L_jl over the shared pattern.
                let (mut p, mut q) = (start, offsets[j]);
                let mut s = values[k];
                while p < k && q < offsets[j + 1] && cols[q] < j {
                    match cols[p].cmp(&cols[q]) {
                        std::cmp::Ordering::Less => p += 1,
                        std::cmp::Ordering::Greater => q += 1,
                        std::cmp::Ordering::Equal => {
                            s -= values[p] * values[q];
                            p += 1;
                            q += 1;
                        }
                    }
                }
                if j < i {
                    values[k] = s / values[offsets[j + 1] - 1];
                } else {
                    if s <= 0.0 || !s.is_finite() {
                        return None;
                    }
                    values[k] = s.sqrt();
                }
            }
        }
        Some(Self { offsets, cols, values })
    }

    /// `z = (L Lᵀ)⁻¹ r`.
    fn apply(&self, r: &[f64], z: &mut [f64]) {
        let m = r.len();
        for i in 0..m {
            let (start, end) = (self.offsets[i], self.offsets[i + 1]);
            let mut s = r[i];
            for k in start..end - 1 {
                s -= self.values[k] * z[self.cols[k]];
            }
            z[i] = s / self.values[end - 1];
        }
        for i in (0..m).rev() {
            let (start, end) = (self.offsets[i], self.offsets[i + 1]);
            z[i] /= self.values[end - 1];
            let zi = z[i];
            for k in start..end - 1 {
                z[self.cols[k]] -= self.values[k] * zi;
            }
        }
    }
}
