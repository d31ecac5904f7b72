//! Plain hand-written reference kernels for the benchmarks.
//!
//! Each kernel does the same arithmetic as a solver sweep over plain arrays, with no framework
//! around it: no enum dispatch, no observer, no multipliers. The benchmarks report the solver's
//! cost next to these, so the framework's overhead shows as a ratio that is stable on a noisy
//! machine even when absolute times are not.
//!
//! [`product`] times a solve as `solverlab simulate` does, for the performance experiment's
//! product rows.

pub mod product;

/// A cloth's sticks as flat arrays.
#[derive(Clone, Debug)]
pub struct PlainSticks {
    /// First particle of each stick.
    pub a: Vec<u32>,
    /// Second particle of each stick.
    pub b: Vec<u32>,
    /// Rest lengths (m).
    pub rest: Vec<f64>,
    /// Inverse masses per particle.
    pub w: Vec<f64>,
}

impl PlainSticks {
    /// The equality sticks of a scene.
    pub fn from_scene(scene: &solverlab_core::Scene) -> Self {
        let mut s = PlainSticks { a: Vec::new(), b: Vec::new(), rest: Vec::new(), w: scene.inverse_masses() };
        for c in &scene.constraints {
            if let solverlab_core::Kind::Stick { a, b, rest, .. } = c.kind {
                s.a.push(a as u32);
                s.b.push(b as u32);
                s.rest.push(rest);
            }
        }
        s
    }

    /// The same sticks in coloured order (greedy colouring, scene order within a colour), as the
    /// relaxation solver visits them with `order = "colored"`.
    pub fn colored(&self) -> Self {
        let pairs: Vec<[usize; 2]> = self.a.iter().zip(&self.b).map(|(&a, &b)| [a as usize, b as usize]).collect();
        let colors = solverlab_solvers::order::greedy_coloring(&pairs, self.w.len());
        let mut idx: Vec<usize> = (0..self.len()).collect();
        idx.sort_by_key(|&j| colors[j]);
        PlainSticks {
            a: idx.iter().map(|&j| self.a[j]).collect(),
            b: idx.iter().map(|&j| self.b[j]).collect(),
            rest: idx.iter().map(|&j| self.rest[j]).collect(),
            w: self.w.clone(),
        }
    }

    /// Number of sticks.
    pub fn len(&self) -> usize {
        self.rest.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }
}

/// One Gauss-Seidel sweep of mass-weighted stick projections, in place.
pub fn plain_gauss_seidel(x: &mut [[f64; 3]], s: &PlainSticks) {
    for j in 0..s.rest.len() {
        let (a, b) = (s.a[j] as usize, s.b[j] as usize);
        let (wa, wb) = (s.w[a], s.w[b]);
        let wsum = wa + wb;
        if wsum == 0.0 {
            continue;
        }
        let d = [x[b][0] - x[a][0], x[b][1] - x[a][1], x[b][2] - x[a][2]];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let f = (len - s.rest[j]) / (len * wsum);
        for k in 0..3 {
            x[a][k] += wa * f * d[k];
            x[b][k] -= wb * f * d[k];
        }
    }
}

/// One Jacobi sweep: corrections summed per particle, then applied as `ω·Σ/n`.
pub fn plain_jacobi(x: &mut [[f64; 3]], s: &PlainSticks, omega: f64, dx: &mut [[f64; 3]], count: &mut [u32]) {
    dx.iter_mut().for_each(|d| *d = [0.0; 3]);
    count.iter_mut().for_each(|c| *c = 0);
    for j in 0..s.rest.len() {
        let (a, b) = (s.a[j] as usize, s.b[j] as usize);
        let (wa, wb) = (s.w[a], s.w[b]);
        let wsum = wa + wb;
        if wsum == 0.0 {
            continue;
        }
        let d = [x[b][0] - x[a][0], x[b][1] - x[a][1], x[b][2] - x[a][2]];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let f = (len - s.rest[j]) / (len * wsum);
        for k in 0..3 {
            dx[a][k] += wa * f * d[k];
            dx[b][k] -= wb * f * d[k];
        }
        count[a] += 1;
        count[b] += 1;
    }
    for i in 0..x.len() {
        if count[i] > 0 {
            let s = omega / count[i] as f64;
            for k in 0..3 {
                x[i][k] += dx[i][k] * s;
            }
        }
    }
}

/// The median wall time of 11 calls of `f` (s): the timing the summary lines of the benchmarks
/// print, taken in one run so that their ratios are comparable on a shared machine.
pub fn median_seconds(mut f: impl FnMut()) -> f64 {
    median_seconds_with(|| (), |()| f())
}

/// The median wall time (s) of 11 calls of `f`, each on a fresh input from `setup`, which is not
/// timed (for example a copy of the state a solve overwrites).
pub fn median_seconds_with<T>(setup: impl FnMut() -> T, f: impl FnMut(T)) -> f64 {
    let samples = seconds_with(setup, f);
    samples[samples.len() / 2]
}

/// The shortest wall time (s) of 11 calls of `f`, each on a fresh input from `setup` (not timed).
/// On a shared machine other work only ever adds time, so the fastest call is the steadiest
/// estimate of what the code costs.
pub fn fastest_seconds_with<T>(setup: impl FnMut() -> T, f: impl FnMut(T)) -> f64 {
    seconds_with(setup, f)[0]
}

/// The wall times (s) of 11 calls of `f` on fresh inputs from `setup`, sorted.
fn seconds_with<T>(mut setup: impl FnMut() -> T, mut f: impl FnMut(T)) -> Vec<f64> {
    let mut samples: Vec<f64> = (0..11)
        .map(|_| {
            let input = setup();
            let t = std::time::Instant::now();
            f(input);
            t.elapsed().as_secs_f64()
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples
}

#[cfg(test)]
mod tests {
    use super::*;
    use solverlab_core::{NullObserver, Solver, StepContext};
    use solverlab_solvers::{Mode, RelaxConfig, RelaxSolver};

    /// The reference loops do the solver's arithmetic: after three sweeps from the same perturbed
    /// cloth, positions agree to rounding.
    #[test]
    fn plain_loops_match_the_relax_solver() {
        let scene = solverlab_scenes::resolve("cloth", &["nx=12".into(), "ny=9".into()]).unwrap();
        let sticks = PlainSticks::from_scene(&scene);
        let mut state = scene.initial_state(0.01);
        let mut rng = solverlab_core::rng::Rng::new(5);
        for (x, p) in state.x.iter_mut().zip(&scene.particles) {
            if p.w > 0.0 {
                *x += rng.unit_vector() * 0.01;
            }
        }
        for (mode, omega) in [(Mode::GaussSeidel, 1.0), (Mode::Jacobi, 1.5)] {
            let mut plain: Vec<[f64; 3]> = state.x.iter().map(|v| [v.x, v.y, v.z]).collect();
            let (mut dx, mut count) = (vec![[0.0; 3]; plain.len()], vec![0; plain.len()]);
            for _ in 0..3 {
                match mode {
                    Mode::GaussSeidel => plain_gauss_seidel(&mut plain, &sticks),
                    _ => plain_jacobi(&mut plain, &sticks, omega, &mut dx, &mut count),
                }
            }
            let mut solver =
                RelaxSolver::new(RelaxConfig { mode, omega, iterations: 3, ..Default::default() }, "t").unwrap();
            solver.prepare(&scene).unwrap();
            let mut st = state.clone();
            solver.solve(&StepContext::new(&scene, 0.01), &mut st, &mut NullObserver).unwrap();
            let worst =
                st.x.iter()
                    .zip(&plain)
                    .map(|(a, b)| (a.x - b[0]).abs().max((a.y - b[1]).abs()).max((a.z - b[2]).abs()))
                    .fold(0.0, f64::max);
            assert!(worst < 1e-12, "{mode:?}: {worst}");
            assert!(st.x != state.x, "the sweeps moved something");
        }
    }
}
