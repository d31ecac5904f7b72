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
use solverlab_core::rows::Row;

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
    /// Rows touching each particle: `(row, slot)` where slot is 0 or 1 within the row.
    incidence: Vec<Vec<(u32, u8)>>,
    marker: Vec<usize>,
}

impl System {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.ids.len()
    }

    /// (Re)builds `J` from `rows`; the pattern is rebuilt only when the row ids change.
    /// Returns whether the pattern changed.
    pub fn set_jacobian(&mut self, rows: &[Row], w: &[f64], alpha_tilde: impl Fn(&Row) -> f64, eps: f64) -> bool {
        let n3 = 3 * w.len();
        let same = self.ids.len() == rows.len() && self.ids.iter().zip(rows).all(|(id, r)| *id == r.id);
        if !same || self.j.is_none() {
            self.ids = rows.iter().map(|r| r.id).collect();
            let mut offsets = Vec::with_capacity(rows.len() + 1);
            let mut cols = Vec::with_capacity(rows.len() * 6);
            offsets.push(0);
            for r in rows {
                let mut ps: Vec<usize> = r.particles[..r.n].to_vec();
                ps.sort_unstable();
                ps.dedup();
                for p in ps {
                    cols.extend([3 * p, 3 * p + 1, 3 * p + 2]);
                }
                offsets.push(cols.len());
            }
            let values = vec![0.0; cols.len()];
            self.j = Some(CsrMatrix::try_from_csr_data(rows.len(), n3, offsets, cols, values).expect("valid pattern"));
            self.incidence = vec![Vec::new(); w.len()];
            for (i, r) in rows.iter().enumerate() {
                for k in 0..r.n {
                    self.incidence[r.particles[k]].push((i as u32, k as u8));
                }
            }
            self.a = None;
        }
        let j = self.j.as_mut().expect("built above");
        let (offsets, cols, values) = j.csr_data_mut();
        for (i, r) in rows.iter().enumerate() {
            for idx in offsets[i]..offsets[i + 1] {
                let col = cols[idx];
                let (p, axis) = (col / 3, col % 3);
                values[idx] = (0..r.n).filter(|&k| r.particles[k] == p).map(|k| r.grad[k][axis]).sum();
            }
        }
        self.w3 = w.iter().flat_map(|&wi| [wi; 3]).collect();
        self.diag_shift = rows.iter().map(|r| alpha_tilde(r) + eps).collect();
        self.eps = eps;
        !same
    }

    /// The diagonal of `A`, without assembling it.
    pub fn diagonal(&self, rows: &[Row], w: &[f64]) -> Vec<f64> {
        rows.iter().zip(&self.diag_shift).map(|(r, s)| r.w_grad2(w) + s).collect()
    }

    /// Assembles `A` (pattern kept while the rows do not change).
    pub fn assemble(&mut self, rows: &[Row], w: &[f64]) {
        let m = rows.len();
        if self.a.is_none() {
            let mut offsets = Vec::with_capacity(m + 1);
            let mut cols: Vec<usize> = Vec::new();
            offsets.push(0);
            let mut neighbours: Vec<usize> = Vec::new();
            for r in rows {
                neighbours.clear();
                for k in 0..r.n {
                    neighbours.extend(self.incidence[r.particles[k]].iter().map(|&(j, _)| j as usize));
                }
                neighbours.sort_unstable();
                neighbours.dedup();
                cols.extend_from_slice(&neighbours);
                offsets.push(cols.len());
            }
            let values = vec![0.0; cols.len()];
            self.a = Some(CsrMatrix::try_from_csr_data(m, m, offsets, cols, values).expect("valid pattern"));
            self.marker = vec![usize::MAX; m];
        }
        let a = self.a.as_mut().expect("built above");
        let (offsets, cols, values) = a.csr_data_mut();
        for i in 0..m {
            for idx in offsets[i]..offsets[i + 1] {
                self.marker[cols[idx]] = idx;
                values[idx] = 0.0;
            }
            let r = &rows[i];
            for k in 0..r.n {
                let p = r.particles[k];
                if w[p] == 0.0 {
                    continue;
                }
                for &(j, slot) in &self.incidence[p] {
                    values[self.marker[j as usize]] += w[p] * r.grad[k].dot(&rows[j as usize].grad[slot as usize]);
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
/// [`crate::cg::PARALLEL_ROWS`] rows (each row's sum in the same order: the same numbers).
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
    if crate::cg::parallel(y.len()) {
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
