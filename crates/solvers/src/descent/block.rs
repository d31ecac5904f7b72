//! One row of a block-descent step (`C`, its gradient, force and energy), one particle's block
//! step on them, and the colouring of the particles for the parallel order.

use solverlab_core::Vec3;

/// A colour with at least this many particles is stepped on every core.
pub(super) const PARALLEL_PARTICLES: usize = 512;

/// Halvings of a block step before it is taken anyway (at 1/2⁷ of its length).
pub(super) const LINE_SEARCH: usize = 8;

/// What a row acts on.
#[derive(Clone, Copy, Debug)]
pub(super) enum Shape {
    /// `C = |x_b − x_a| − rest` (a stick, a min/max stick, or a pair contact).
    Stick { a: usize, b: usize, rest: f64 },
    /// `C = C⁰ + d·(x_a − x⁻_a)` from the start of the step `x⁻`: a pin axis, a contact normal
    /// or a friction direction, linear.
    Linear { a: usize, d: Vec3, c0: f64 },
}

/// One row of the step.
#[derive(Clone, Copy, Debug)]
pub(super) struct Row {
    pub(super) id: u64,
    pub(super) shape: Shape,
    /// Penalty (N/m).
    pub(super) k: f64,
    /// Multiplier (N), 0 for soft rows.
    pub(super) lambda: f64,
    /// The share of the multiplier in the force, `F = clamp(kC + sλ, fmin, fmax)`: 1, but for
    /// the compliant augmented Lagrangian `s = K/(K + ρ)` (see [`super::alm`]).
    pub(super) s: f64,
    /// Force bounds (N): `(−∞, 0]` for rows that only push, `±μ|λₙ|` for friction.
    pub(super) fmin: f64,
    pub(super) fmax: f64,
    /// Hard (augmented) rather than soft (a spring).
    pub(super) hard: bool,
    /// `α·C(x⁻)` subtracted from a hard stick's or pin's `C` (error regularisation: the error at
    /// the start of the step).
    pub(super) offset: f64,
    /// For friction rows: the index of their normal row and μ.
    pub(super) friction: Option<(usize, f64)>,
}

impl Row {
    /// `C` at `x` (with the regularisation offset; linear rows from the start of the step
    /// `base`) and its gradient with respect to particle `p`.
    pub(super) fn eval(&self, x: &[Vec3], base: &[Vec3], p: usize) -> (f64, Vec3, f64) {
        self.eval_at(x, base, p, x[p])
    }

    /// [`Row::eval`] with particle `p` at `xp` instead of `x[p]`.
    pub(super) fn eval_at(&self, x: &[Vec3], base: &[Vec3], p: usize, xp: Vec3) -> (f64, Vec3, f64) {
        let at = |q: usize| if q == p { xp } else { x[q] };
        match self.shape {
            Shape::Stick { a, b, rest } => {
                let d = at(b) - at(a);
                let len = d.norm().max(1e-12);
                let n = d / len;
                let grad = if p == b { n } else { -n };
                (len - rest - self.offset, grad, len)
            }
            Shape::Linear { a, d, c0 } => (c0 + d.dot(&(at(a) - base[a])) - self.offset, d, 0.0),
        }
    }

    /// `C` at `x`, from either end.
    pub(super) fn value(&self, x: &[Vec3], base: &[Vec3]) -> f64 {
        let p = match self.shape {
            Shape::Stick { a, .. } | Shape::Linear { a, .. } => a,
        };
        self.eval(x, base, p).0
    }

    pub(super) fn force(&self, c: f64) -> f64 {
        (self.k * c + self.s * self.lambda).clamp(self.fmin, self.fmax)
    }

    /// The row's energy at `c`, up to a constant: the integral of [`Row::force`] over `C`,
    /// `u²/(2k)` with `u = kC + sλ` inside the force bounds, continued linearly outside them.
    pub(super) fn energy(&self, c: f64) -> f64 {
        let u = self.k * c + self.s * self.lambda;
        let bound = u.clamp(self.fmin, self.fmax);
        bound * bound / (2.0 * self.k) + bound * (u - bound) / self.k
    }
}

/// Particle `i`'s block step from `x`: the 3 × 3 Newton step on its energy (inertia `m = 1/(wh²)`
/// around its target `yi`, and the rows in `touching`), backtracked until its energy does not
/// rise. Returns its new position and how far it moved.
pub(super) fn block_step(
    rows: &[Row],
    touching: &[usize],
    x: &[Vec3],
    base: &[Vec3],
    yi: Vec3,
    m: f64,
    i: usize,
) -> (Vec3, f64) {
    let mut hess = nalgebra::Matrix3::identity() * m;
    let mut f = (x[i] - yi) * m;
    // The particle's own energy at the start of its step, for the line search.
    let mut before = 0.5 * m * (x[i] - yi).norm_squared();
    for &r in touching {
        let row = &rows[r];
        let (c, grad, len) = row.eval(x, base, i);
        before += row.energy(c);
        let force = row.force(c);
        f += grad * force;
        // The penalty's curvature only while the force is inside its bounds: a saturated
        // friction row (sliding) or a separated contact has none.
        let u = row.k * c + row.s * row.lambda;
        if u > row.fmin && u < row.fmax {
            hess += grad * grad.transpose() * row.k;
        }
        if let Shape::Stick { .. } = row.shape {
            if row.hard {
                let lumped = Vec3::new(
                    (1.0 - grad.x * grad.x).max(0.0).sqrt(),
                    (1.0 - grad.y * grad.y).max(0.0).sqrt(),
                    (1.0 - grad.z * grad.z).max(0.0).sqrt(),
                ) * (force.abs() / len);
                hess += nalgebra::Matrix3::from_diagonal(&lumped);
            } else if force > 0.0 {
                hess += (nalgebra::Matrix3::identity() - grad * grad.transpose()) * (force / len);
            }
        }
    }
    let step = hess.cholesky().map(|ch| ch.solve(&f)).unwrap_or(f / m);
    // Backtracking on the particle's own energy: the projected Hessian makes the step a
    // descent direction, but a full step can overshoot a stiff row.
    let energy = |xp: Vec3| -> f64 {
        0.5 * m * (xp - yi).norm_squared()
            + touching.iter().map(|&r| rows[r].energy(rows[r].eval_at(x, base, i, xp).0)).sum::<f64>()
    };
    let mut scale = 1.0;
    let mut to = x[i] - step;
    for _ in 0..LINE_SEARCH {
        to = x[i] - step * scale;
        if energy(to) <= before {
            break;
        }
        scale *= 0.5;
    }
    (to, (step * scale).norm())
}

/// Colours of the movable particles such that no two of a colour share a row (greedy, in index
/// order): the order of `order = "colored"`.
pub(super) fn colour_particles(n: usize, w: &[f64], rows: &[Row]) -> Vec<Vec<usize>> {
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); n];
    for row in rows {
        if let Shape::Stick { a, b, .. } = row.shape {
            if w[a] > 0.0 && w[b] > 0.0 {
                neighbours[a].push(b);
                neighbours[b].push(a);
            }
        }
    }
    let mut colour = vec![usize::MAX; n];
    let mut colours: Vec<Vec<usize>> = Vec::new();
    let mut taken: Vec<bool> = Vec::new();
    for i in (0..n).filter(|&i| w[i] > 0.0) {
        taken.clear();
        taken.resize(colours.len() + 1, false);
        for &j in &neighbours[i] {
            if colour[j] != usize::MAX {
                taken[colour[j]] = true;
            }
        }
        let c = taken.iter().position(|t| !t).unwrap_or(colours.len());
        if c == colours.len() {
            colours.push(Vec::new());
        }
        colour[i] = c;
        colours[c].push(i);
    }
    colours
}
