//! The Gauss-Newton loop shared by the explicit-Jacobian solvers ([`crate::cg`] and
//! [`crate::direct`]); they differ only in how they solve each linear system.
//!
//! Per step, after the shared Verlet prediction, for each outer iteration:
//!
//! 1. gather the rows at the current positions: every equality row, and every inequality row
//!    (min/max sticks, collider contacts) that is violated (`C < 0`);
//! 2. build `J` explicitly (CSR, pattern kept while the rows do not change) and, if the linear
//!    solver wants it, `A = J W Jᵀ + diag(α̃ + ε)` with `α̃ = α/h²` and the regularisation
//!    `ε = regularization × mean(diag J W Jᵀ)` (redundant rows, as in a sheared cloth, make
//!    `J W Jᵀ` singular; `ε` keeps it definite);
//! 3. solve `A Δλ = −C − α̃λ`, starting (first outer iteration only) from the previous step's
//!    multipliers times `warm_start`, matched by stable row id;
//! 4. active set: an inequality row whose accumulated `λ + Δλ` would be negative (it would pull)
//!    leaves, and the system is solved again, up to `active_set_iterations` times; after the cap
//!    any remaining negative change is clamped to zero, so contacts never pull;
//! 5. `x += W Jᵀ Δλ`, `λ += Δλ` if that lowers the merit `Σ (C + α̃λ)²` over the active rows;
//!    otherwise the step is rejected and solved again with `ε` multiplied by 100
//!    (Levenberg-Marquardt). An accepted step divides the multiplier by 10, down to 1. Redundant
//!    rows (a cloth with shear sticks) and taut lines between fixed particles (a cloth pinned at
//!    two corners) make `J W Jᵀ` nearly singular, and an undamped Gauss-Newton step then
//!    overshoots by orders of magnitude. If even `ε × 10¹²` gives no decrease the loop ends;
//! 6. stop when the Newton residual `max |C + α̃λ|` over the active rows is at most `tolerance`
//!    (for rigid rows that is `max |C|`; a compliant row settles where `C = −α̃λ`, not at 0).
//!
//! After the loop, contacts get Jakobsen's friction (tangential motion shrunk by `μ·depth`, with
//! the depth of the prediction's penetration) and restitution as in the relax solver. A contact
//! row over several particles (an embedded point, two bodies touching) shares its depth among the
//! particles with positive gradient along the normal, by their weights, and each of them is
//! slowed in the world frame; the other body is left alone. This is a one-pass approximation,
//! not Coulomb's law: a box sliding on a fixed box stops after 1.46× the Coulomb distance
//! (`tests/bodies.rs`), while the relative form the relax solver uses, applied once after the
//! solve, let a 10-box stack slide apart.

use std::collections::HashMap;

use solverlab_core::constraint::seed_friction;
use solverlab_core::rows::{gather_rows, Row, RowKind};
use solverlab_core::solver::{LinearSystem, Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::{Scene, State, Vec3};

use crate::jacobian::System;

/// What a linear solve reports back.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinearInfo {
    /// Inner iterations (CG iterations; 1 for a direct solve).
    pub iterations: usize,
    /// Final relative residual `‖b − AΔλ‖/‖b‖`.
    pub residual: f64,
    /// Whether the linear tolerance was met.
    pub converged: bool,
}

/// A linear solver for `A Δλ = b`.
pub trait Linear {
    /// Whether `A` must be assembled before [`Linear::solve`].
    fn needs_assembly(&self) -> bool;

    /// Solves `A x = b` with `x` holding the initial guess. `pattern_changed` says whether the
    /// sparsity of `A` differs from the last call. Reports its iterations to `observer` as
    /// outer iteration `outer`.
    fn solve(
        &mut self,
        sys: &mut System,
        b: &[f64],
        x: &mut [f64],
        pattern_changed: bool,
        outer: usize,
        observer: &mut dyn Observer,
    ) -> Result<LinearInfo, SolveError>;
}

/// Settings of the Newton loop, shared by the CG and direct solvers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonSettings {
    /// Maximum outer (Gauss-Newton) iterations per step.
    pub outer_iterations: usize,
    /// Stop when the Newton residual `max |C + α̃λ| ≤ tolerance` (m); 0 runs every outer iteration.
    pub tolerance: f64,
    /// Fraction of the previous step's multipliers used as the first initial guess, in [0, 1].
    pub warm_start: f64,
    /// Maximum re-solves per outer iteration while inequality rows leave the active set.
    pub active_set_iterations: usize,
    /// `ε` relative to the mean diagonal of `J W Jᵀ`.
    pub regularization: f64,
}

/// A solver made of the Newton loop and a linear solver.
pub struct Newton<L: Linear> {
    settings: NewtonSettings,
    linear: L,
    label: String,
    w: Vec<f64>,
    rows: Vec<Row>,
    sys: System,
    /// Multipliers of the previous step, by row id.
    previous: HashMap<u64, f64>,
    /// Multipliers accumulated in this step, by row id.
    current: HashMap<u64, f64>,
    predicted: Vec<Vec3>,
    capture: bool,
    captured: Option<LinearSystem>,
    last_pattern: Vec<u64>,
}

impl<L: Linear> Newton<L> {
    /// A solver from settings and a linear solver.
    pub fn new(settings: NewtonSettings, linear: L, label: impl Into<String>) -> Self {
        Self {
            settings,
            linear,
            label: label.into(),
            w: Vec::new(),
            rows: Vec::new(),
            sys: System::default(),
            previous: HashMap::new(),
            current: HashMap::new(),
            predicted: Vec::new(),
            capture: false,
            captured: None,
            last_pattern: Vec::new(),
        }
    }

    /// The multipliers of the last step, by row id (N·s²).
    pub fn multipliers(&self) -> &HashMap<u64, f64> {
        &self.previous
    }

    /// Solves one outer iteration's system with the active-set loop; returns `Δλ` for the rows
    /// left in `self.rows` and the linear info.
    fn solve_active_set(
        &mut self,
        h: f64,
        outer: usize,
        damping: f64,
        observer: &mut dyn Observer,
    ) -> Result<(Vec<f64>, LinearInfo, usize), SolveError> {
        let mut inner = 0;
        for round in 0..=self.settings.active_set_iterations {
            let diag_mean = if self.rows.is_empty() {
                1.0
            } else {
                self.rows.iter().map(|r| r.w_grad2(&self.w)).sum::<f64>() / self.rows.len() as f64
            };
            let eps = self.settings.regularization * damping * diag_mean;
            let alpha_tilde = |r: &Row| r.compliance / (h * h);
            self.sys.set_jacobian(&self.rows, &self.w, alpha_tilde, eps);
            let pattern_changed = self.sys.ids != self.last_pattern;
            if pattern_changed {
                self.last_pattern = self.sys.ids.clone();
            }
            if self.linear.needs_assembly() {
                self.sys.assemble(&self.rows, &self.w);
            }
            let lambda: Vec<f64> = self.rows.iter().map(|r| self.current.get(&r.id).copied().unwrap_or(0.0)).collect();
            let b: Vec<f64> = self.rows.iter().zip(&lambda).map(|(r, l)| -r.c - alpha_tilde(r) * l).collect();
            let mut dl: Vec<f64> = if outer == 1 && self.settings.warm_start > 0.0 {
                self.rows
                    .iter()
                    .map(|r| {
                        let l = self.previous.get(&r.id).copied().unwrap_or(0.0) * self.settings.warm_start;
                        if r.kind == RowKind::Inequality {
                            l.max(0.0)
                        } else {
                            l
                        }
                    })
                    .collect()
            } else {
                vec![0.0; self.rows.len()]
            };
            let guess = dl.clone();
            let info = self.linear.solve(&mut self.sys, &b, &mut dl, pattern_changed, outer, observer)?;
            inner += info.iterations;
            let total = LinearInfo { iterations: inner, ..info };
            if self.capture && outer == 1 && round == 0 {
                self.captured = Some(self.snapshot(&b, &guess, &dl));
            }
            let pulling: Vec<bool> = self
                .rows
                .iter()
                .zip(&lambda)
                .zip(&dl)
                .map(|((r, l), d)| r.kind == RowKind::Inequality && l + d < 0.0)
                .collect();
            if !pulling.contains(&true) {
                return Ok((dl, total, round));
            }
            if round == self.settings.active_set_iterations {
                // Cap reached: never pull.
                for ((d, l), p) in dl.iter_mut().zip(&lambda).zip(&pulling) {
                    if *p {
                        *d = -l;
                    }
                }
                return Ok((dl, total, round));
            }
            let mut keep = pulling.iter().map(|p| !p);
            self.rows.retain(|_| keep.next().expect("one flag per row"));
        }
        unreachable!("the loop returns at its last round")
    }

    /// Gathers the active rows at `x` into `rows` and returns the merit `Σ gᵢ²` and `max |gᵢ|`
    /// of the Newton residual `g = C + α̃λ` (equalities, and inequalities with `C < 0` or a
    /// positive multiplier so far; those keep `g = C` clamped at 0 from above).
    fn gather(&self, scene: &Scene, x: &[Vec3], t: f64, h: f64, rows: &mut Vec<Row>) -> (f64, f64) {
        gather_rows(scene, x, t, 0.0, |_| 0.0, rows);
        rows.retain(|r| r.kind == RowKind::Equality || r.c < 0.0);
        let (mut merit, mut worst) = (0.0, 0.0f64);
        for r in rows.iter() {
            let lambda = self.current.get(&r.id).copied().unwrap_or(0.0);
            let g = r.c + r.compliance / (h * h) * lambda;
            merit += g * g;
            worst = worst.max(g.abs());
        }
        (merit, worst)
    }

    fn snapshot(&self, b: &[f64], guess: &[f64], solution: &[f64]) -> LinearSystem {
        let j = self.sys.j.as_ref().expect("jacobian set");
        LinearSystem {
            ids: self.sys.ids.clone(),
            inequality: self.rows.iter().map(|r| r.kind == RowKind::Inequality).collect(),
            columns: j.ncols(),
            jacobian: j.triplet_iter().map(|(i, c, v)| (i, c, *v)).collect(),
            inverse_mass: self.sys.w3.clone(),
            diagonal_shift: self.sys.diag_shift.clone(),
            rhs: b.to_vec(),
            warm_start: guess.to_vec(),
            solution: solution.to_vec(),
        }
    }
}

impl<L: Linear> Solver for Newton<L> {
    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, scene: &Scene) -> Result<(), SolveError> {
        self.w = scene.inverse_masses();
        self.previous.clear();
        self.sys = System::default();
        self.last_pattern.clear();
        Ok(())
    }

    fn solve(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
    ) -> Result<SolveInfo, SolveError> {
        let scene = ctx.scene;
        let h = ctx.h;
        if self.w.len() != scene.particles.len() {
            self.prepare(scene)?;
        }
        self.current.clear();
        let restitution = solverlab_core::integrate::has_restitution(scene);
        if restitution {
            self.predicted.clone_from(&state.x);
        }
        let mut rows = std::mem::take(&mut self.rows);
        let (mut merit, mut worst) = self.gather(scene, &state.x, state.time, h, &mut rows);
        self.rows = rows;
        // Contacts of the prediction, for friction: (particle, normal, depth, μ). An embedded
        // point's depth is shared among its particles by their weights.
        let contacts: Vec<(usize, Vec3, f64, f64)> = self
            .rows
            .iter()
            .filter_map(|r| r.contact.filter(|c| c.friction > 0.0).map(|c| (r, c)))
            .flat_map(|(r, c)| {
                (0..r.n).map(move |k| (r.particles[k], c.normal, -r.c * r.grad[k].dot(&c.normal).max(0.0), c.friction))
            })
            .collect();
        let mut info = SolveInfo::default();
        let mut trial_rows = Vec::new();
        let mut trial_x = state.x.clone();
        let mut damping = 1.0;
        for outer in 1..=self.settings.outer_iterations {
            if worst <= self.settings.tolerance || self.rows.is_empty() {
                info.converged = true;
                break;
            }
            // Levenberg-Marquardt: a step that does not lower the merit Σ (C + α̃λ)² is
            // rejected and solved again with 100× the damping; an accepted step divides it by 10.
            let committed = std::mem::take(&mut self.current);
            let accepted = loop {
                self.current = committed.clone();
                let (dl, linear, _) = self.solve_active_set(h, outer, damping, observer)?;
                info.iterations += linear.iterations;
                info.residual = linear.residual;
                let mut dx = vec![Vec3::zeros(); state.x.len()];
                self.sys.add_w_jt(&dl, &mut dx);
                for (r, d) in self.rows.iter().zip(&dl) {
                    *self.current.entry(r.id).or_insert(0.0) += d;
                }
                for ((xt, x), d) in trial_x.iter_mut().zip(&state.x).zip(&dx) {
                    *xt = x + d;
                }
                let (m, w) = self.gather(scene, &trial_x, state.time, h, &mut trial_rows);
                if m < merit {
                    (merit, worst) = (m, w);
                    damping = (damping / 10.0).max(1.0);
                    break true;
                }
                damping *= 100.0;
                if damping > 1e12 {
                    break false;
                }
            };
            if !accepted {
                self.current = committed;
                break;
            }
            state.x.clone_from(&trial_x);
            std::mem::swap(&mut self.rows, &mut trial_rows);
        }
        if worst <= self.settings.tolerance {
            info.converged = true;
        }
        for (i, n, depth, mu) in contacts {
            state.x_prev[i] = seed_friction(&state.x[i], &state.x_prev[i], &n, depth, mu);
        }
        if restitution {
            solverlab_core::integrate::apply_restitution(scene, &self.predicted, state, h);
        }
        std::mem::swap(&mut self.previous, &mut self.current);
        Ok(info)
    }

    fn capture_system(&mut self, on: bool) -> bool {
        self.capture = on;
        true
    }

    fn captured_system(&self) -> Option<&LinearSystem> {
        self.captured.as_ref()
    }
}
