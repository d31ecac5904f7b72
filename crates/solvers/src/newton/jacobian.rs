//! The explicit Jacobian `J` and the system matrix `A = J W Jᵀ + diag(α̃ + ε)`, in CSR, with the
//! sparsity pattern kept while the set of rows does not change.
//!
//! ```text
//! J      m × 3n      row i holds ∇C_i: three entries per particle of the row
//! W      3n          inverse masses, each repeated for x, y, z
//! A_ij = Σ_k w_k ∇_k C_i · ∇_k C_j     over the particles k shared by rows i and j
//!        + (α̃_i + ε)·δ_ij              compliance α/h² and the regularisation ε
//! ```
//!
//! `A` is symmetric; its CSR arrays are also its CSC arrays, which is how the direct solver hands
//! it to faer without a copy of the pattern logic.

use nalgebra_sparse::CsrMatrix;
use solverlab_core::rows::{RowSet, RowView};

/// The linearised system of one Newton iteration.
#[derive(Clone, Debug, Default)]
pub struct System {
    /// Row ids, in row order (the key for pattern reuse and warm starting).
    pub ids: Vec<u64>,
    /// `J` (m × 3n).
    pub j: Option<CsrMatrix<f64>>,
    /// `W` as a 3n vector.
    pub w3: Vec<f64>,
    /// `α̃ + ε` per row.
    pub diag_shift: Vec<f64>,
    /// The regularisation `ε` included in `diag_shift` (1/kg).
    pub eps: f64,
    /// `A` (m × m), when assembled.
    pub a: Option<CsrMatrix<f64>>,
    /// The rows' particles when the pattern was built (a row id keeps its pattern only while
    /// it keeps its particles: a rigid body that falls asleep leaves its rows).
    pattern_particles: Vec<u32>,
    /// Rows touching each particle, in CSR form: particle `p`'s are
    /// `incidence[incidence_start[p]..incidence_start[p + 1]]`, in row order, each as
    /// `(row, its slot in the rows' gradient array)`.
    incidence_start: Vec<usize>,
    incidence: Vec<(u32, u32)>,
    marker: Vec<usize>,
}

impl System {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.ids.len()
    }

    /// (Re)builds `J` from `rows`; the pattern is rebuilt only when the row ids or their
    /// particles change. Returns whether the pattern changed.
    pub fn set_jacobian(&mut self, rows: &RowSet, w: &[f64], alpha_tilde: impl Fn(&RowView) -> f64, eps: f64) -> bool {
        let n3 = 3 * w.len();
        let same = self.ids.len() == rows.len()
            && self.ids.iter().zip(rows.heads()).all(|(id, r)| *id == r.id)
            && self.pattern_particles == rows.all_particles();
        let rebuilt = !same || self.j.is_none();
        if rebuilt {
            self.ids = rows.heads().iter().map(|r| r.id).collect();
            self.pattern_particles = rows.all_particles().to_vec();
            let mut offsets = Vec::with_capacity(rows.len() + 1);
            let mut cols = Vec::with_capacity(rows.len() * 6);
            offsets.push(0);
            let mut ps: Vec<usize> = Vec::new();
            for r in rows.iter() {
                ps.clear();
                ps.extend(r.particles.iter().map(|&p| p as usize));
                ps.sort_unstable();
                ps.dedup();
                for &p in &ps {
                    cols.extend([3 * p, 3 * p + 1, 3 * p + 2]);
                }
                offsets.push(cols.len());
            }
            let values = vec![0.0; cols.len()];
            self.j = Some(CsrMatrix::try_from_csr_data(rows.len(), n3, offsets, cols, values).expect("valid pattern"));
            let mut start = vec![0usize; w.len() + 1];
            for &p in rows.all_particles() {
                start[p as usize + 1] += 1;
            }
            for p in 0..w.len() {
                start[p + 1] += start[p];
            }
            let mut next = start.clone();
            self.incidence = vec![(0, 0); rows.all_particles().len()];
            for i in 0..rows.len() {
                for f in rows.slots(i) {
                    let p = rows.all_particles()[f] as usize;
                    self.incidence[next[p]] = (i as u32, f as u32);
                    next[p] += 1;
                }
            }
            self.incidence_start = start;
            self.a = None;
        }
        let j = self.j.as_mut().expect("built above");
        let (offsets, cols, values) = j.csr_data_mut();
        for (i, r) in rows.iter().enumerate() {
            for idx in offsets[i]..offsets[i + 1] {
                let col = cols[idx];
                let (p, axis) = (col / 3, col % 3);
                values[idx] =
                    r.particles.iter().zip(r.grad).filter(|(&q, _)| q as usize == p).map(|(_, g)| g[axis]).sum();
            }
        }
        self.w3.clear();
        self.w3.extend(w.iter().flat_map(|&wi| [wi; 3]));
        self.diag_shift.clear();
        self.diag_shift.extend(rows.iter().map(|r| alpha_tilde(&r) + eps));
        self.eps = eps;
        rebuilt
    }

    /// The diagonal of `A`, without assembling it.
    pub fn diagonal(&self, rows: &RowSet, w: &[f64]) -> Vec<f64> {
        rows.iter().zip(&self.diag_shift).map(|(r, s)| r.w_grad2(w) + s).collect()
    }

    /// Assembles `A` (pattern kept while the rows do not change) for the `rows` last given to
    /// [`System::set_jacobian`]. Each row's products run over its particles in row order and,
    /// for each, the rows touching that particle in row order; they read the rows' compact
    /// gradient array ([`RowSet`]), which a cloth's rows fit in far better than whole rows.
    pub fn assemble(&mut self, rows: &RowSet, w: &[f64]) {
        let m = rows.len();
        if self.a.is_none() {
            // Row `i`'s neighbours are the rows sharing a particle with it, each marked once
            // (in no order). `A` is symmetric, so listing every row `i`, in order, under each of
            // its neighbours gives each row its neighbours sorted, without a sort: a count pass
            // for the offsets, then a fill pass.
            let (starts, incidence) = (&self.incidence_start, &self.incidence);
            let neighbours = |i: usize, marker: &mut [usize], f: &mut dyn FnMut(usize)| {
                for &p in rows.get(i).particles {
                    let p = p as usize;
                    for &(j, _) in &incidence[starts[p]..starts[p + 1]] {
                        let j = j as usize;
                        if marker[j] != i {
                            marker[j] = i;
                            f(j);
                        }
                    }
                }
            };
            self.marker.clear();
            self.marker.resize(m, usize::MAX);
            let mut offsets = vec![0usize; m + 1];
            for i in 0..m {
                neighbours(i, &mut self.marker, &mut |j| offsets[j + 1] += 1);
            }
            for i in 0..m {
                offsets[i + 1] += offsets[i];
            }
            let mut next = offsets.clone();
            let mut cols = vec![0usize; offsets[m]];
            self.marker.iter_mut().for_each(|k| *k = usize::MAX);
            for i in 0..m {
                neighbours(i, &mut self.marker, &mut |j| {
                    cols[next[j]] = i;
                    next[j] += 1;
                });
            }
            let values = vec![0.0; cols.len()];
            self.a = Some(CsrMatrix::try_from_csr_data(m, m, offsets, cols, values).expect("valid pattern"));
        }
        let a = self.a.as_mut().expect("built above");
        let (offsets, cols, values) = a.csr_data_mut();
        let (particles, grads) = (rows.all_particles(), rows.all_grads());
        for i in 0..m {
            for idx in offsets[i]..offsets[i + 1] {
                self.marker[cols[idx]] = idx;
                values[idx] = 0.0;
            }
            for f in rows.slots(i) {
                let p = particles[f] as usize;
                if w[p] == 0.0 {
                    continue;
                }
                let g = grads[f];
                for &(j, fj) in &self.incidence[self.incidence_start[p]..self.incidence_start[p + 1]] {
                    values[self.marker[j as usize]] += w[p] * g.dot(&grads[fj as usize]);
                }
            }
            values[self.marker[i]] += self.diag_shift[i];
        }
    }

    /// `y = A x`, assembled (CSR product) or matrix-free (`J (W (Jᵀ x))` plus the shift);
    /// `scratch` holds the matrix-free intermediate (3n).
    pub fn apply(&self, x: &[f64], y: &mut [f64], scratch: &mut Vec<f64>) {
        if let Some(a) = &self.a {
            csr_mul(a, x, y);
            return;
        }
        let j = self.j.as_ref().expect("jacobian set");
        scratch.clear();
        scratch.resize(j.ncols(), 0.0);
        jt_mul(j, x, scratch);
        for (ti, wi) in scratch.iter_mut().zip(&self.w3) {
            *ti *= wi;
        }
        csr_mul(j, scratch, y);
        for ((yi, xi), s) in y.iter_mut().zip(x).zip(&self.diag_shift) {
            *yi += s * xi;
        }
    }

    /// `Δx = W Jᵀ λ` as per-particle vectors added to `dx`; `scratch` holds `Jᵀ λ` (3n).
    pub fn add_w_jt(&self, lambda: &[f64], dx: &mut [solverlab_core::Vec3], scratch: &mut Vec<f64>) {
        let j = self.j.as_ref().expect("jacobian set");
        scratch.clear();
        scratch.resize(j.ncols(), 0.0);
        jt_mul(j, lambda, scratch);
        for (p, d) in dx.iter_mut().enumerate() {
            for k in 0..3 {
                d[k] += self.w3[3 * p + k] * scratch[3 * p + k];
            }
        }
    }
}

/// `y = M x` for a CSR matrix: one pass over the nonzeros, by rows on every core from
/// [`crate::newton::cg::PARALLEL_ROWS`] rows (each row's sum in the same order: the same numbers).
pub fn csr_mul(m: &CsrMatrix<f64>, x: &[f64], y: &mut [f64]) {
    use rayon::prelude::*;
    let (offsets, cols, values) = (m.row_offsets(), m.col_indices(), m.values());
    let row = |(i, yi): (usize, &mut f64)| {
        let mut s = 0.0;
        for idx in offsets[i]..offsets[i + 1] {
            s += values[idx] * x[cols[idx]];
        }
        *yi = s;
    };
    if crate::newton::cg::parallel(y.len()) {
        y.par_iter_mut().enumerate().with_min_len(4096).for_each(row);
    } else {
        y.iter_mut().enumerate().for_each(row);
    }
}

/// `t += Mᵀ x` for a CSR matrix (a scatter).
pub fn jt_mul(m: &CsrMatrix<f64>, x: &[f64], t: &mut [f64]) {
    let (offsets, cols, values) = (m.row_offsets(), m.col_indices(), m.values());
    for (i, xi) in x.iter().enumerate() {
        for idx in offsets[i]..offsets[i + 1] {
            t[cols[idx]] += values[idx] * xi;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solverlab_core::rows::{gather_row_set, RowKind};
    use solverlab_core::Vec3;

    /// The assembled `A` equals `J W Jᵀ + diag(α̃ + ε)` formed densely from the rows, on a
    /// perturbed cloth with pins (one-particle rows next to sticks).
    #[test]
    fn assembled_matrix_is_j_w_jt_plus_the_shift() {
        let scene = solverlab_scenes::resolve("cloth", &["nx=5".into(), "ny=4".into()]).unwrap();
        let mut x: Vec<Vec3> = scene.particles.iter().map(|p| p.x).collect();
        let mut rng = solverlab_core::rng::Rng::new(3);
        x.iter_mut().for_each(|v| *v += rng.unit_vector() * 0.02);
        let mut rows = RowSet::default();
        gather_row_set(&scene, &x, 0.0, 0.0, |_| 0.0, &mut rows);
        let w = scene.inverse_masses();
        let mut sys = System::default();
        sys.set_jacobian(&rows, &w, |r| 0.5 + r.id as f64 * 1e-3, 0.25);
        sys.assemble(&rows, &w);
        let (m, n3) = (rows.len(), 3 * w.len());
        let mut j = vec![0.0; m * n3];
        for (i, r) in rows.iter().enumerate() {
            for (&p, g) in r.particles.iter().zip(r.grad) {
                for axis in 0..3 {
                    j[i * n3 + 3 * p as usize + axis] += g[axis];
                }
            }
        }
        let a = sys.a.as_ref().unwrap();
        let mut worst = 0.0f64;
        for i in 0..m {
            for k in 0..m {
                let mut expected: f64 = (0..n3).map(|c| j[i * n3 + c] * w[c / 3] * j[k * n3 + c]).sum();
                if i == k {
                    expected += 0.5 + rows.get(i).id as f64 * 1e-3 + 0.25;
                }
                let got = a.get_entry(i, k).map_or(0.0, |e| e.into_value());
                worst = worst.max((got - expected).abs());
            }
        }
        assert!(m > 20 && worst < 1e-12, "{m} rows, worst entry error {worst:e}");
    }

    /// A row that keeps its id but changes its particles (a rigid body falling asleep leaves
    /// the rows it was in) gets a new pattern, and `J` holds its new gradient.
    #[test]
    fn a_row_that_changes_its_particles_changes_the_pattern() {
        let w = vec![1.0; 3];
        let row = |p: usize| {
            let mut rows = RowSet::default();
            rows.push_fields(7, &[0, p], &[-Vec3::x(), Vec3::x()], 0.1, 0.0, RowKind::Equality, 0.0, None);
            rows
        };
        let mut sys = System::default();
        assert!(sys.set_jacobian(&row(1), &w, |_| 0.0, 0.0));
        assert!(!sys.set_jacobian(&row(1), &w, |_| 0.0, 0.0), "same rows, same pattern");
        assert!(sys.set_jacobian(&row(2), &w, |_| 0.0, 0.0), "same id, other particles");
        let j = sys.j.as_ref().unwrap();
        assert_eq!(j.get_entry(0, 6).unwrap().into_value(), 1.0, "particle 2, x");
        assert_eq!(j.get_entry(0, 3).map_or(0.0, |e| e.into_value()), 0.0, "particle 1 is gone");
    }
}
