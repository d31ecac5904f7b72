//! One iteration (contacts, the sweep, the rigid rows, Chebyshev), the generic sweeps
//! (Gauss-Seidel, Jacobi and mass splitting, with pins), the Chebyshev weights, and the fast
//! path's arrays ([`super::kernel`]).

use super::*;

/// The Chebyshev acceleration's state over one step (see the module docs of `relax`).
pub(super) struct Chebyshev {
    /// Whether the step extrapolates at all (`chebyshev_rho > 0`, a Jacobi mode).
    pub on: bool,
    /// Whether `ρ` is measured in the step (`chebyshev_estimate`).
    pub estimate: bool,
    /// The last weight `ω_k`.
    pub weight: f64,
    /// The estimate of `ρ`.
    pub rho: f64,
    /// The last sweep's change (m).
    pub last_change: f64,
    /// Whether the extrapolation is still on in this step.
    pub accelerate: bool,
}

impl Chebyshev {
    /// The state at the start of a step under `cfg`.
    pub fn new(cfg: &RelaxConfig) -> Self {
        Self {
            on: cfg.chebyshev_rho > 0.0 && cfg.mode != Mode::GaussSeidel,
            estimate: cfg.chebyshev_estimate,
            weight: 1.0,
            rho: if cfg.chebyshev_estimate { 0.0 } else { cfg.chebyshev_rho },
            last_change: 0.0,
            accelerate: true,
        }
    }
}

impl RelaxSolver {
    /// Iteration `it` of a step (1-based): the contacts, the constraints' sweep with stiffness
    /// `k` (Jacobi) or `k·ω` (Gauss-Seidel, `scale`), the rigid bodies' rows, and Chebyshev's
    /// estimate and extrapolation. Returns the residual (see `# Residual`).
    pub(super) fn iterate(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        it: usize,
        (k, scale): (f64, f64),
        cheb: &mut Chebyshev,
    ) -> f64 {
        if cheb.on {
            kernel::copy_into(&mut self.cheb_cur.0, &state.x);
            kernel::copy_into(&mut self.cheb_cur.1, &self.lambda);
        }
        let mut residual = self.contacts.project(ctx.scene, state, &self.w, &self.radius);
        residual = residual.max(match (self.cfg.mode, self.soa.take()) {
            (mode, Some(soa)) => {
                let mut sweep = kernel::Sweep {
                    w: &self.w,
                    lambda: &mut self.lambda,
                    scale: if mode == Mode::GaussSeidel { scale } else { k },
                    sqrt_approx: self.cfg.sqrt_approx,
                    seed: self.cfg.seed,
                    step: state.step,
                };
                let (x, buf, dx) = (&mut state.x, &mut self.buf, &mut self.dx);
                let r = match (mode, self.cfg.xpbd) {
                    (Mode::GaussSeidel, true) => kernel::gauss_seidel::<true>(&soa, x, &mut sweep),
                    (Mode::GaussSeidel, false) => kernel::gauss_seidel::<false>(&soa, x, &mut sweep),
                    (_, true) => kernel::jacobi::<true>(&soa, x, &mut sweep, dx, buf),
                    (_, false) => kernel::jacobi::<false>(&soa, x, &mut sweep, dx, buf),
                };
                self.soa = Some(soa);
                r
            }
            (Mode::GaussSeidel, None) => {
                let mut ordering = std::mem::take(&mut self.ordering);
                let mut r = 0.0f64;
                for pass in ordering.passes(&mut self.rng) {
                    r = r.max(self.gauss_seidel_sweep(state, pass, ctx.h, scale));
                }
                self.ordering = ordering;
                r
            }
            (_, None) => self.jacobi_sweep(state, ctx.h, k),
        });
        if ctx.scene.has_rigid() {
            let update = match self.cfg.mode {
                Mode::GaussSeidel => Update::GaussSeidel,
                _ => Update::Jacobi,
            };
            residual = residual.max(self.rigid.sweep(ctx.scene, &mut state.rigid, update, scale, ctx.h));
        }
        if cheb.on && cheb.estimate {
            let change = kernel::change_norm2(&state.x, &self.cheb_cur.0, &self.w).sqrt();
            let delay = self.chebyshev_delay();
            if it < delay && it > 1 && cheb.last_change > 0.0 {
                // A sweep that changed more than the one before is not contracting yet
                // (contacts switching on): no extrapolation from it.
                let ratio = change / cheb.last_change;
                cheb.rho = if ratio < 1.0 { ratio.min(self.cfg.chebyshev_rho) } else { 0.0 };
            } else if it > delay && change > cheb.last_change {
                cheb.accelerate = false;
            }
            cheb.last_change = change;
        }
        if cheb.on && cheb.accelerate {
            // x_{k+1} = ω (x̂ − x_{k−1}) + x_{k−1} for the particles and their multipliers.
            cheb.weight = self.chebyshev_weight(cheb.rho, it, cheb.weight);
            if cheb.weight != 1.0 {
                let (old_x, old_l) = (&self.cheb_prev.0, &self.cheb_prev.1);
                kernel::extrapolate(&mut state.x, old_x, &self.w, &mut self.lambda, old_l, cheb.weight);
            }
            std::mem::swap(&mut self.cheb_prev, &mut self.cheb_cur);
        }
        residual
    }

    /// The three rows of pin `pin` (starting at multiplier `row`): `C_k = x_k − goal_k`, `∇C = e_k`.
    /// Returns `w·Δλ·scale` per axis and the residual, and stores `Δλ·scale`. Under mass
    /// splitting the particle's inverse mass in the denominator is multiplied by its row count.
    pub(super) fn pin_rows(&mut self, x: &Vec3, pin: u32, row: u32, time: f64, h: f64, scale: f64) -> (Vec3, f64) {
        let PinData { a, target, velocity, alpha } = self.pins[pin as usize];
        let row = row as usize;
        let at = self.alpha_tilde(alpha, h);
        let goal = target + velocity * time;
        let mut dx = Vec3::zeros();
        let mut residual: f64 = 0.0;
        let w = match self.cfg.mode {
            Mode::MassSplitting => self.w[a] * self.split[a],
            _ => self.w[a],
        };
        for k in 0..3 {
            let lambda = if self.cfg.xpbd { self.lambda[row + k] } else { 0.0 };
            let dl = delta_lambda(x[k] - goal[k], w, at, lambda, false);
            residual = residual.max((dl * (w + at)).abs());
            self.dl[row + k] = dl * scale;
            dx[k] = self.w[a] * dl * scale;
        }
        (dx, residual)
    }

    /// One Gauss-Seidel sweep over the items in `order`; returns the residual.
    pub(super) fn gauss_seidel_sweep(&mut self, state: &mut State, order: &[usize], h: f64, scale: f64) -> f64 {
        let mut residual: f64 = 0.0;
        let time = state.time;
        for &j in order {
            let item = self.items[j];
            match item {
                Item::Stick { a, b, alpha, row, .. } => {
                    let (a, b) = (a as usize, b as usize);
                    if self.w[a] + self.w[b] == 0.0 {
                        continue;
                    }
                    let at = self.alpha_tilde(alpha, h);
                    let st = self.stick_delta(&state.x, &item, at, state.step);
                    residual = residual.max(st.res);
                    self.lambda[row as usize] += st.dl * scale;
                    state.x[a] -= st.v * (self.w[a] * scale);
                    state.x[b] += st.v * (self.w[b] * scale);
                }
                Item::Pin { pin, row } => {
                    let a = self.pins[pin as usize].a;
                    let (dx, res) = self.pin_rows(&state.x[a], pin, row, time, h, scale);
                    residual = residual.max(res);
                    for k in 0..3 {
                        self.lambda[row as usize + k] += self.dl[row as usize + k];
                    }
                    state.x[a] += dx;
                }
            }
        }
        residual
    }

    /// One Jacobi sweep with stiffness `scale`, averaged or with mass splitting (the rows'
    /// denominators follow the mode, [`RelaxSolver::stick_delta`]): every row from the positions
    /// at the start of the sweep, its corrections summed per particle, then averaged,
    /// `x += ω·Σ/nᵢ` and `λ += ω·Δλ/max(n_a, n_b)` (`nᵢ`: rows that acted on particle `i`), or
    /// under mass splitting `x += ω·Σ` and `λ += ω·Δλ`. Returns the residual.
    pub(super) fn jacobi_sweep(&mut self, state: &mut State, h: f64, scale: f64) -> f64 {
        let mut residual: f64 = 0.0;
        let time = state.time;
        self.dx.iter_mut().for_each(|d| *d = Vec3::zeros());
        self.count.iter_mut().for_each(|c| *c = 0);
        for j in 0..self.items.len() {
            let item = self.items[j];
            match item {
                Item::Stick { a, b, alpha, row, sense, .. } => {
                    let (a, b) = (a as usize, b as usize);
                    self.dl[row as usize] = 0.0;
                    if self.w[a] + self.w[b] == 0.0 {
                        continue;
                    }
                    let at = self.alpha_tilde(alpha, h);
                    let st = self.stick_delta(&state.x, &item, at, state.step);
                    if st.dl == 0.0 && sense != Sense::Equal {
                        continue;
                    }
                    residual = residual.max(st.res);
                    self.dl[row as usize] = st.dl * scale;
                    self.dx[a] -= st.v * (self.w[a] * scale);
                    self.dx[b] += st.v * (self.w[b] * scale);
                    self.count[a] += 1;
                    self.count[b] += 1;
                }
                Item::Pin { pin, row } => {
                    let a = self.pins[pin as usize].a;
                    let (dx, res) = self.pin_rows(&state.x[a], pin, row, time, h, scale);
                    residual = residual.max(res);
                    self.dx[a] += dx;
                    self.count[a] += 1;
                }
            }
        }
        let omega = self.cfg.omega;
        let split = self.cfg.mode == Mode::MassSplitting;
        for i in 0..state.x.len() {
            if self.count[i] > 0 {
                state.x[i] += self.dx[i] * if split { omega } else { omega / self.count[i] as f64 };
            }
        }
        for item in &self.items {
            let [a, b] = self.particles_of(item);
            let share = if split { omega } else { omega / self.count[a].max(self.count[b]).max(1) as f64 };
            let (row, rows) = match *item {
                Item::Stick { row, .. } => (row as usize, 1),
                Item::Pin { row, .. } => (row as usize, 3),
            };
            for r in row..row + rows {
                self.lambda[r] += self.dl[r] * share;
            }
        }
        residual
    }

    /// The Chebyshev weight of iteration `it` (1-based) given the previous one (Wang 2015, eq. 12):
    /// 1 before the delay `S`, `2/(2 − ρ²)` at `S`, then `4/(4 − ρ²ω_{k−1})`.
    pub(super) fn chebyshev_weight(&self, rho: f64, it: usize, previous: f64) -> f64 {
        let delay = self.chebyshev_delay();
        if rho == 0.0 || self.cfg.mode == Mode::GaussSeidel || it < delay {
            1.0
        } else if it == delay {
            2.0 / (2.0 - rho * rho)
        } else {
            4.0 / (4.0 - rho * rho * previous)
        }
    }

    /// The fast path's arrays ([`kernel`]): when every row is an equality stick and the order is
    /// natural, reversed or coloured (Jacobi: any), the sticks that can move, in visiting order.
    pub(super) fn fast_arrays(&self, pairs: &[[usize; 2]], n: usize) -> Option<kernel::StickSoa> {
        let all_equal_sticks = self.items.iter().all(|i| matches!(i, Item::Stick { sense: Sense::Equal, .. }));
        let jacobi = self.cfg.mode != Mode::GaussSeidel;
        if !all_equal_sticks || !(jacobi || matches!(self.cfg.order, Order::Natural | Order::Reversed | Order::Colored))
        {
            return None;
        }
        let mut order: Vec<usize> = (0..self.items.len()).collect();
        let mut colors = vec![0, 0];
        if !jacobi && self.cfg.order == Order::Reversed {
            order.reverse();
        }
        let color_of = (!jacobi && self.cfg.order == Order::Colored).then(|| greedy_coloring(pairs, n));
        if let Some(c) = &color_of {
            order.sort_by_key(|&j| c[j]); // stable: scene order within a colour, as `Ordering`
        }
        let sticks: Vec<(u32, u32, f64, f64, u32)> = order
            .iter()
            .filter_map(|&j| match self.items[j] {
                Item::Stick { a, b, rest, alpha, row, .. } if self.w[a as usize] + self.w[b as usize] != 0.0 => {
                    Some((a, b, rest, alpha, row))
                }
                _ => None,
            })
            .collect();
        if let Some(c) = &color_of {
            let movable = order.iter().filter(|&&j| {
                let [a, b] = pairs[j];
                self.w[a] + self.w[b] != 0.0
            });
            let mut counts = vec![0usize; c.iter().max().map_or(0, |m| m + 1)];
            for &j in movable {
                counts[c[j]] += 1;
            }
            colors = std::iter::once(0)
                .chain(counts.iter().scan(0, |acc, k| {
                    *acc += k;
                    Some(*acc)
                }))
                .collect();
        } else {
            colors[1] = sticks.len();
        }
        let split = (self.cfg.mode == Mode::MassSplitting).then_some(self.split.as_slice());
        Some(kernel::StickSoa::new(&sticks, colors, &self.w, split, n, self.cfg.omega))
    }

    /// The first extrapolated sweep: `chebyshev_delay`, and with `chebyshev_estimate` at least a
    /// sixteenth of the step's sweeps, so that a long solve measures `ρ` on the slow modes that
    /// dominate it (the first few sweeps mostly see the fast ones, which decay at once).
    pub(super) fn chebyshev_delay(&self) -> usize {
        let delay = self.cfg.chebyshev_delay as usize;
        match self.cfg.chebyshev_estimate {
            true => delay.max(self.cfg.iterations as usize / 16),
            false => delay,
        }
    }
}
