//! The steps of the Newton loop (steps 1–6 of [`super`]): gathering the active rows, the
//! active-set solve, friction, the globalised outer loop, and why a step ended unconverged.

use super::*;

impl<L: Linear> Newton<L> {
    /// Gathers the active rows at `x` into `rows` (step 1) and returns the merit `Σ gᵢ²` of the
    /// Newton residual `g = C + α̃λ` and the common violation over them.
    ///
    /// Inequality rows are looked for within `self.margin` (twice the step's largest predicted
    /// travel), so that a contact that pushed and then separated is still seen. The stopping
    /// measure is the common violation plus complementarity: a contact that pushes (`λ > 0`)
    /// must touch, `|C| ≤ tolerance`, or it would inject energy.
    fn gather(&self, scene: &Scene, x: &[Vec3], t: f64, h: f64, rows: &mut RowSet) -> (f64, f64) {
        let n = self.particles;
        gather_row_set(scene, &x[..n], t, self.margin, |_| self.margin, rows);
        if scene.has_rigid() {
            self.rigid.gather(scene, &x[n..], rows);
        }
        let current = &self.current;
        // One pass: drop the inactive contacts, and sum the merit over the rows kept.
        let (mut merit, mut worst) = (0.0, 0.0f64);
        rows.retain(|r| {
            let lambda = current.get(r.id);
            let equality = r.kind == RowKind::Equality;
            if !(equality || r.c < 0.0 || lambda > 0.0) {
                return false;
            }
            let at = r.compliance / (h * h);
            let g = r.c + at * lambda;
            merit += g * g;
            let v = if !equality && lambda > 0.0 { g.abs() } else { row_violation(r.c, at, lambda, equality) };
            worst = worst.max(v);
            true
        });
        (merit, worst)
    }

    /// The stationarity displacement `s = x − x̃ − W Jᵀλ` of the SQP methods over the scene's
    /// rows of `rows` (the first `real` of them) into `out`; returns `Σ |sᵢ|²` and `max |sᵢ|`,
    /// each block's displacement in metres ([`Newton::coordinate_scale`]). At the implicit-Euler
    /// step `s = 0`: `M(x − x̃) = Jᵀλ`.
    pub(super) fn stationarity(&self, x: &[Vec3], rows: &RowSet, real: usize, out: &mut Vec<Vec3>) -> (f64, f64) {
        out.clear();
        out.resize(x.len(), Vec3::zeros());
        for i in 0..real.min(rows.len()) {
            let r = rows.get(i);
            let lambda = self.current.get(r.id);
            if lambda != 0.0 {
                for (&p, g) in r.particles.iter().zip(r.grad) {
                    out[p as usize] += g * lambda;
                }
            }
        }
        let (mut sum, mut worst) = (0.0, 0.0f64);
        for (p, o) in out.iter_mut().enumerate() {
            *o = x[p] - self.start[p] - *o * self.w[p];
            let metres = o.norm() * self.coordinate_scale[p];
            sum += metres * metres;
            worst = worst.max(metres);
        }
        (sum, worst)
    }

    /// The full method's curvature rows (see [`Method::Full`]), appended to `self.rows` after its
    /// `self.real_rows` scene rows. A stick's Hessian is `κ·[P −P; −P P]`
    /// ([`solverlab_core::constraint::stick_curvature`]), so its share of the Lagrangian's
    /// Hessian, `−λ∇²C`, is `Γ Σₜ eₜeₜᵀ` with `Γ = −λκ` (kg) and `eₜ = [−t; t]` for the two unit
    /// tangents `t`. With `Γ > 0` (a stick in tension, a rope held taut) that is exactly what a
    /// row with gradient `eₜ`, `C = 0` and compliance `α̃ = 1/Γ` adds to the Newton step: by the
    /// Woodbury identity, eliminating its multiplier leaves `M + Γ eₜeₜᵀ` in the `x` block. So
    /// `J W Jᵀ` over the rows and these keeps its form and its definiteness, and CG and the
    /// sparse Cholesky solve it unchanged. With `Γ < 0` (a compressed stick, a contact pushing
    /// on a curved surface) the term would make the system indefinite: it is left out, and the
    /// step is a Gauss-Newton step along those rows (linear convergence at a rate `|Γ|/m`).
    /// Rows of other kinds (pins, planes, box faces, rigid rows) are linear in the loop's
    /// coordinates or have their curvature left out likewise (see the module docs).
    pub(super) fn add_curvature_rows(&mut self, scene: &Scene, x: &[Vec3], h: f64) {
        use solverlab_core::constraint::stick_curvature;
        use solverlab_core::model::Kind;
        self.real_rows = self.rows.len();
        if self.method != Method::Full {
            return;
        }
        let mut extra = std::mem::take(&mut self.work.curvature);
        extra.clear();
        for r in self.rows.iter() {
            let RowRef::Constraint { index, axis: 0 } = decode(r.id) else { continue };
            let Some(Kind::Stick { a, b, sense, .. }) = scene.constraints.get(index).map(|c| &c.kind) else {
                continue;
            };
            let Some((kappa, n)) = stick_curvature(&x[*a], &x[*b], *sense) else { continue };
            let gamma = -self.current.get(r.id) * kappa;
            // Below a billionth of the stick's reduced mass the term changes nothing but the
            // conditioning (its compliance `1/Γ` would be enormous).
            let (wa, wb) = (self.w[*a], self.w[*b]);
            if wa + wb > 0.0 && gamma * (wa + wb) > 1e-9 {
                let (t1, t2) = tangents(&n);
                extra.push((curvature_row_id(index, 1), [*a, *b], t1, gamma));
                extra.push((curvature_row_id(index, 2), [*a, *b], t2, gamma));
            }
        }
        for &(id, particles, t, gamma) in &extra {
            let compliance = h * h / gamma;
            self.rows.push_fields(id, &particles, &[-t, t], 0.0, 0.0, RowKind::Equality, compliance, None);
        }
        self.work.curvature = extra;
        if scene.has_rigid() {
            let n = self.particles;
            self.rigid.curvature_rows(scene, &x[n..], lookup(&self.current), h, &mut self.rows);
        }
    }

    /// Solves one outer iteration's system with the active-set loop (steps 2–4); leaves `Δλ` for
    /// the rows left in `self.rows` in `self.work.dl`.
    #[allow(clippy::too_many_arguments)]
    fn solve_active_set(
        &mut self,
        ctx: &StepContext,
        state: &State,
        x: &[Vec3],
        outer: usize,
        damping: f64,
        stop: LinearStop,
        stationarity: Option<&[Vec3]>,
        observer: &mut dyn Observer,
    ) -> Result<LinearInfo, SolveError> {
        let mut work = std::mem::take(&mut self.work);
        let result = self.active_set_rounds(&mut work, ctx, state, x, outer, damping, stop, stationarity, observer);
        self.work = work;
        result
    }

    /// The rounds of [`Newton::solve_active_set`], in the buffers `work`.
    #[allow(clippy::too_many_arguments)]
    fn active_set_rounds(
        &mut self,
        work: &mut Work,
        ctx: &StepContext,
        state: &State,
        x: &[Vec3],
        outer: usize,
        damping: f64,
        stop: LinearStop,
        stationarity: Option<&[Vec3]>,
        observer: &mut dyn Observer,
    ) -> Result<LinearInfo, SolveError> {
        let h = ctx.h;
        let alpha_tilde = |compliance: f64| compliance / (h * h);
        let mut inner = 0;
        let mut has_previous_round = false;
        // Each inner iteration is reported with the common violation at the coordinates it
        // reached when the observer asks for it; the linear solver decides when to stop.
        let report = Stopping::new(usize::MAX, None, observer.wants_violation());
        self.released.ids.clear();
        self.released.dl.clear();
        self.released.dx.clear();
        for round in 0..=self.settings.active_set_iterations {
            let diag_mean = if self.rows.is_empty() {
                1.0
            } else {
                self.rows.iter().map(|r| r.w_grad2(&self.w)).sum::<f64>() / self.rows.len() as f64
            };
            let eps = self.settings.regularization * damping * diag_mean;
            // A row that keeps its id but not its particles changes the pattern too.
            let pattern_changed =
                self.sys.set_jacobian(&self.rows, &self.w, |r: &RowView| alpha_tilde(r.compliance), eps);
            if self.linear.needs_assembly() {
                self.sys.assemble(&self.rows, &self.w);
            }
            work.lambda.clear();
            work.lambda.extend(self.rows.heads().iter().map(|r| self.current.get(r.id)));
            // The rows released so far have moved the coordinates by `released.dx`: the others'
            // `C` from there.
            let moved = |r: &RowView| match self.released.dx.is_empty() {
                true => 0.0,
                false => r.particles.iter().zip(r.grad).map(|(&i, g)| g.dot(&self.released.dx[i as usize])).sum(),
            };
            // The SQP methods: `b = −(C + α̃λ) + J s` with the stationarity `s`; the step
            // `Δx = W Jᵀ Δλ − s` then lands on `x̃ + W Jᵀ(λ + Δλ)` (see the module docs).
            let along_s = |r: &RowView| match stationarity {
                None => 0.0,
                Some(s) => r.particles.iter().zip(r.grad).map(|(&i, g)| g.dot(&s[i as usize])).sum(),
            };
            work.b.clear();
            work.b.extend(
                self.rows
                    .iter()
                    .zip(&work.lambda)
                    .map(|(r, l)| -r.c - moved(&r) - alpha_tilde(r.compliance) * l + along_s(&r)),
            );
            let sqp = stationarity.is_some();
            work.dl.clear();
            match has_previous_round {
                // A later round starts from the last round's solution on the rows that stayed.
                true => work
                    .dl
                    .extend(self.rows.heads().iter().map(|r| work.previous_round.get(&r.id).copied().unwrap_or(0.0))),
                // The SQP methods start the step from the previous step's multipliers instead
                // (they are the iterate): the change starts at zero.
                false if outer == 1 && self.settings.warm_start > 0.0 && !sqp => {
                    // The previous step's multipliers, kept only where they leave a smaller
                    // residual than a cold start (as MuJoCo does): on redundant rows the
                    // multipliers are not unique, and a warm start can carry a large part in
                    // the null space of Jᵀ that moves nothing but costs CG iterations.
                    work.guess.clear();
                    work.guess.extend(self.rows.iter().map(|r| {
                        let l = self.previous.get(r.id) * self.settings.warm_start;
                        if r.kind == RowKind::Inequality {
                            l.max(0.0)
                        } else {
                            l
                        }
                    }));
                    work.q.clear();
                    work.q.resize(work.b.len(), 0.0);
                    self.sys.apply(&work.guess, &mut work.q, &mut self.scratch);
                    let warm: f64 = work.b.iter().zip(&work.q).map(|(b, q)| (b - q).powi(2)).sum();
                    let cold: f64 = work.b.iter().map(|b| b * b).sum();
                    if warm < cold {
                        work.dl.extend_from_slice(&work.guess);
                    } else {
                        self.stats.warm_rejected = true;
                        work.dl.resize(self.rows.len(), 0.0);
                    }
                }
                false => work.dl.resize(self.rows.len(), 0.0),
            }
            work.guess.clone_from(&work.dl);
            let info = {
                let Self { linear, sys, rows, current, rigid, particles, .. } = self;
                let (sys, rows, current, rigid): (&System, &RowSet, &RowMap, &RigidRows) = (sys, rows, current, rigid);
                let n = *particles;
                work.row_of.clear();
                if report.reports_violation() {
                    work.row_of.extend(rows.iter().enumerate().map(|(i, r)| (r.id, i)));
                }
                let Work { b, dl, row_of, x: at, jt, poses, .. } = work;
                let row_of = &*row_of;
                let mut monitor = |iteration: usize, residual: f64, dl: &[f64]| {
                    let measured = report.measure(|_| {
                        at.clear();
                        at.extend_from_slice(x);
                        if let Some(s) = stationarity {
                            at.iter_mut().zip(s).for_each(|(x, s)| *x -= s);
                        }
                        sys.add_w_jt(dl, at, jt);
                        let lambda = |j: usize, axis: usize| {
                            let id = constraint_row_id(j, axis);
                            current.get(id) + row_of.get(&id).map_or(0.0, |&i| dl[i])
                        };
                        let v = violation(ctx.scene, &at[..n], state.time, h, &lambda);
                        match ctx.scene.has_rigid() {
                            true => {
                                // The relaxation family's measure on the same poses.
                                poses.clone_from(&state.rigid);
                                rigid.write_poses(&at[n..], poses);
                                v.max(rigid.xpbd.violation(ctx.scene, poses))
                            }
                            false => v,
                        }
                    });
                    report.report(observer, iteration, outer, Residuals::max(residual), measured);
                };
                linear.solve(sys, b, dl, pattern_changed, stop, &mut monitor)?
            };
            inner += info.iterations;
            self.stats.breakdowns += info.breakdown as usize;
            let total = LinearInfo { iterations: inner, ..info };
            if self.capture == Some(outer) && round == 0 && self.captured.is_none() {
                self.captured = Some(self.snapshot(&work.b, &work.guess, &work.dl, outer, damping, eps));
            }
            work.pulling.clear();
            work.pulling.extend(
                self.rows
                    .iter()
                    .zip(&work.lambda)
                    .zip(&work.dl)
                    .map(|((r, l), d)| r.kind == RowKind::Inequality && l + d < 0.0),
            );
            if !work.pulling.contains(&true) {
                if sqp {
                    let first = outer == self.first_outer;
                    let extra = self.project_multipliers(&work.lambda, &mut work.dl, &mut work.projected, first);
                    return Ok(LinearInfo { iterations: inner + extra, ..info });
                }
                return Ok(total);
            }
            if round == self.settings.active_set_iterations {
                // Cap reached: never pull.
                for ((d, l), p) in work.dl.iter_mut().zip(&work.lambda).zip(&work.pulling) {
                    if *p {
                        *d = -l;
                    }
                }
                if sqp {
                    let first = outer == self.first_outer;
                    let extra = self.project_multipliers(&work.lambda, &mut work.dl, &mut work.projected, first);
                    return Ok(LinearInfo { iterations: inner + extra, ..info });
                }
                return Ok(total);
            }
            work.previous_round.clear();
            work.previous_round.extend(self.rows.heads().iter().zip(&work.dl).map(|(r, d)| (r.id, *d)));
            has_previous_round = true;
            // A pulling row leaves. One that has separated gives back what it pushed,
            // `Δλ = −λ`, and the others are solved again from where that leaves the
            // coordinates; one that still touches keeps its push (see the module docs).
            if self.released.dx.is_empty() {
                self.released.dx.resize(x.len(), Vec3::zeros());
            }
            // Under the SQP methods every pulling row leaves (λ = 0: it is not in the KKT
            // conditions of this active set), touching or not.
            let separated = |r: &RowView| r.c > 0.0;
            let leaving =
                self.rows.iter().zip(&work.lambda).zip(&work.pulling).filter(|((r, _), p)| **p && separated(r));
            for ((r, l), _) in leaving {
                self.released.ids.push(r.id);
                self.released.dl.push(-l);
                for (&i, g) in r.particles.iter().zip(r.grad) {
                    self.released.dx[i as usize] -= g * (self.w[i as usize] * l);
                }
            }
            let mut keep = work.pulling.iter().map(|p| !p);
            self.rows.retain(|_| keep.next().expect("one flag per row"));
        }
        unreachable!("the loop returns at its last round")
    }

    /// Under the SQP methods, with a linear solver that can ([`Linear::project_range`]): the
    /// new multipliers `λ + Δλ` without their part in the null space of `J W Jᵀ` (redundant
    /// rows: a cloth's shear sticks, a braced ragdoll). That part moves nothing, but it is a
    /// self-stress whose geometric stiffness enters the full method's Hessian: carried from
    /// the warm start it made the Hessian wrong and Newton linear (the 12 × 12 cloth with shear
    /// sticks pinned along its top edge took 17–50 outer iterations a frame and tore). The
    /// multipliers then are the minimum-norm ones, a choice that is continuous in `x`. `v`
    /// holds them (a buffer).
    fn project_multipliers(&mut self, lambda: &[f64], dl: &mut [f64], v: &mut Vec<f64>, first: bool) -> usize {
        v.clear();
        v.extend(lambda.iter().zip(dl.iter()).map(|(l, d)| l + d));
        match self.linear.project_range(&self.sys, v, first) {
            Some(iterations) => {
                dl.iter_mut().zip(v.iter()).zip(lambda).for_each(|((d, v), l)| *d = v - l);
                iterations
            }
            None => 0,
        }
    }

    /// Step 6: Coulomb friction on the prediction, for every contact in `self.contacts`,
    /// limited by its normal multiplier.
    pub(super) fn apply_friction(&mut self, state: &mut State) {
        self.friction.clear();
        for (r, lambda_n) in &self.contacts {
            let Some(info) = r.contact else { continue };
            let coeffs: Vec<f64> = (0..r.n).map(|k| r.grad[k].dot(&info.normal)).collect();
            let (x, x_start) = (&mut state.x, &state.x_prev);
            let particles = &r.particles[..r.n];
            let lt = coulomb_friction(
                x,
                x_start,
                &self.w,
                particles,
                &coeffs,
                &info.normal,
                *lambda_n,
                info.friction,
                Vec3::zeros(),
            );
            self.friction.insert(r.id, (info.normal, lt));
        }
    }

    /// Steps 1–5 from the coordinates `x` (the particles', then the rigid bodies'), outer
    /// iterations counted from `first_outer`; returns the stopping measure at the end (with the
    /// SQP methods, the larger of the violation and the stationarity). The SQP methods start
    /// from `initial` times the multipliers in `self.previous` (the warm start, or the first
    /// pass's multipliers for the friction pass).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn newton_loop(
        &mut self,
        ctx: &StepContext,
        state: &State,
        x: &mut Vec<Vec3>,
        observer: &mut dyn Observer,
        info: &mut SolveInfo,
        method: Method,
        outers: std::ops::RangeInclusive<usize>,
        start: Start,
    ) -> Result<f64, SolveError> {
        let scene = ctx.scene;
        let h = ctx.h;
        let sqp = method.is_sqp();
        self.method = method;
        self.first_outer = *outers.start();
        match start {
            Start::Keep => {}
            Start::Zero => self.current.reset(self.dense_rows),
            Start::Previous(scale) => {
                self.current.reset(self.dense_rows);
                for (id, l) in self.previous.iter() {
                    if l != 0.0 && scale > 0.0 {
                        self.current.add(id, l * scale);
                    }
                }
            }
        }
        if sqp {
            self.start.clone_from(x);
        }
        let mut rows = std::mem::take(&mut self.rows);
        let (mut merit, mut worst) = self.gather(scene, x, state.time, h, &mut rows);
        if matches!(start, Start::Previous(_)) {
            // Only the rows gathered now keep their multipliers: a contact that moved out of
            // reach, or a row of a body that left, would otherwise carry its last push into
            // the forces of every later step.
            let mut kept = RowMap::default();
            kept.reset(self.dense_rows);
            for r in rows.heads() {
                let l = self.current.get(r.id);
                if l != 0.0 {
                    kept.add(r.id, l);
                }
            }
            self.current = kept;
        }
        let mut stat = 0.0;
        if sqp {
            let mut s = std::mem::take(&mut self.stationarity);
            let (sum, max) = self.stationarity(x, &rows, rows.len(), &mut s);
            (merit, stat) = (merit + sum, max);
            self.stationarity = s;
        }
        self.rows = rows;
        self.real_rows = self.rows.len();
        let tolerance = self.settings.tolerance;
        let mut trial_rows = std::mem::take(&mut self.trial_rows);
        let mut trial_x = std::mem::take(&mut self.work.trial_x);
        trial_x.clone_from(x);
        let mut dx = std::mem::take(&mut self.work.dx);
        dx.clear();
        dx.resize(x.len(), Vec3::zeros());
        let mut damping = 1.0;
        let mut last: Option<(f64, f64)> = None;
        for outer in outers {
            if (worst <= tolerance && stat <= tolerance) || self.rows.is_empty() {
                break;
            }
            let f = merit.sqrt();
            let eta = forcing_term(self.settings.forcing, f, last);
            last = Some((f, eta));
            let budget = self.settings.inner_budget;
            if budget > 0 && info.iterations >= budget {
                break;
            }
            let max_iterations = if budget > 0 { budget - info.iterations } else { 0 };
            let stop = LinearStop { relative: eta, absolute: 0.5 * tolerance, max_iterations };
            self.stats.outer = outer;
            self.add_curvature_rows(scene, x, h);
            // Globalisation: backtracking along the Newton direction (an inexact solve with
            // η < 1 still gives a descent direction for the merit); if even a step of 1/64 does
            // not lower the merit, Levenberg-Marquardt: solve again with 100× the damping. An
            // accepted full step divides the damping by 10. The merit is `Σ (C + α̃λ)²` over
            // the active rows, plus `Σ |s|²` under the SQP methods.
            let mut committed = std::mem::take(&mut self.work.committed);
            std::mem::swap(&mut committed, &mut self.current);
            let stationarity = std::mem::take(&mut self.stationarity);
            let accepted = 'solve: loop {
                self.current.clone_from(&committed);
                let s = sqp.then_some(&stationarity[..]);
                let linear = self.solve_active_set(ctx, state, x, outer, damping, stop, s, observer)?;
                info.iterations += linear.iterations;
                info.residual = linear.residual;
                dx.iter_mut().for_each(|d| *d = Vec3::zeros());
                self.sys.add_w_jt(&self.work.dl, &mut dx, &mut self.scratch);
                if !self.released.dx.is_empty() {
                    dx.iter_mut().zip(&self.released.dx).for_each(|(d, r)| *d += r);
                }
                if sqp {
                    dx.iter_mut().zip(&stationarity).for_each(|(d, s)| *d -= s);
                }
                // A rigid body turns at most `MAX_TURN` per outer iteration (a trust region
                // on the rotations; see `RigidRows::step_limit`).
                let first = match scene.has_rigid() {
                    true => self.rigid.step_limit(&dx[self.particles..]),
                    false => 1.0,
                };
                let mut step = first;
                while step >= first / 64.0 {
                    self.current.clone_from(&committed);
                    for (r, d) in self.rows.heads().iter().zip(&self.work.dl) {
                        if !is_curvature_id(r.id) {
                            self.current.add(r.id, step * d);
                        }
                    }
                    for (&id, d) in self.released.ids.iter().zip(&self.released.dl) {
                        self.current.add(id, step * d);
                    }
                    for ((xt, x), d) in trial_x.iter_mut().zip(x.iter()).zip(&dx) {
                        *xt = x + d * step;
                    }
                    let (mut m, w) = self.gather(scene, &trial_x, state.time, h, &mut trial_rows);
                    let mut st = 0.0;
                    if sqp {
                        let mut ts = std::mem::take(&mut self.trial_stationarity);
                        let (sum, max) = self.stationarity(&trial_x, &trial_rows, trial_rows.len(), &mut ts);
                        (m, st) = (m + sum, max);
                        self.trial_stationarity = ts;
                    }
                    if m < merit {
                        (merit, worst, stat) = (m, w, st);
                        if step == first {
                            damping = (damping / 10.0).max(1.0);
                        }
                        break 'solve true;
                    }
                    self.stats.rejected += 1;
                    step /= 2.0;
                }
                damping *= 100.0;
                if damping > 1e12 {
                    break false;
                }
            };
            self.stationarity = stationarity;
            if !accepted {
                std::mem::swap(&mut self.current, &mut committed);
                self.work.committed = committed;
                self.stats.stalled = true;
                break;
            }
            self.work.committed = committed;
            x.clone_from(&trial_x);
            std::mem::swap(&mut self.rows, &mut trial_rows);
            std::mem::swap(&mut self.stationarity, &mut self.trial_stationarity);
            self.real_rows = self.rows.len();
        }
        self.rows.truncate(self.real_rows);
        self.trial_rows = trial_rows;
        (self.work.trial_x, self.work.dx) = (trial_x, dx);
        self.stats.stationarity = stat;
        Ok(if sqp { worst.max(stat) } else { worst })
    }

    /// Why a step ended above its tolerance (see [`SolveInfo::note`]).
    pub(super) fn diagnose(&self) -> &'static str {
        // The movable particles the rows touch, counted without sorting (this runs after every
        // step that ends above its tolerance).
        let mut seen = vec![false; self.w.len()];
        let mut movable = 0usize;
        for i in self.rows.all_particles().iter().map(|&i| i as usize) {
            if self.w[i] > 0.0 && !seen[i] {
                seen[i] = true;
                movable += 1;
            }
        }
        if self.rows.len() > 3 * movable {
            "the active rows outnumber the movable degrees of freedom: J W Jᵀ is singular (redundant \
             constraints) and Gauss-Newton converges only linearly"
        } else if self.stats.stalled {
            "no step lowered the merit, even with the largest damping (a singular or degenerate \
             linearisation, such as a taut line between fixed particles)"
        } else {
            "the outer-iteration cap was reached"
        }
    }

    fn snapshot(
        &self,
        b: &[f64],
        guess: &[f64],
        solution: &[f64],
        outer: usize,
        damping: f64,
        eps: f64,
    ) -> LinearSystem {
        let j = self.sys.j.as_ref().expect("jacobian set");
        LinearSystem {
            ids: self.sys.ids.clone(),
            inequality: self.rows.heads().iter().map(|r| r.kind == RowKind::Inequality).collect(),
            columns: j.ncols(),
            jacobian: j.triplet_iter().map(|(i, c, v)| (i, c, *v)).collect(),
            inverse_mass: self.sys.w3.clone(),
            diagonal_shift: self.sys.diag_shift.clone(),
            rhs: b.to_vec(),
            warm_start: guess.to_vec(),
            solution: solution.to_vec(),
            outer,
            regularization: eps,
            damping,
        }
    }
}
