//! The direct solver's kept sparsity pattern: a symmetric pattern over row ids that holds every
//! active system's pattern as a submatrix, so that one symbolic factorisation serves while the
//! active set changes.
//!
//! Each row id that has been active owns a slot. An active system `A` (the rows of one active
//! set, ids in row order) is scattered into the slots' pattern: its entries where its rows' slots
//! meet, and, for every slot whose row is not active now, a 1 on the diagonal and explicit zeros
//! elsewhere. The padded matrix is block diagonal up to a permutation (`A` on the active slots,
//! the identity on the others), so solving it with a right-hand side that is zero on the inactive
//! slots gives `A`'s solution on the active ones and exact zeros elsewhere. A Cholesky
//! factorisation of it does the same operations as one of `A` in the order the kept pattern's
//! ordering induces, plus products with exact zeros: the numbers are a factorisation of `A`,
//! rounded in another order.
//!
//! The pattern only grows ([`KeptPattern::fill`] reports a row or an entry it lacks, and
//! [`KeptPattern::rebuild`] makes the union of the two); at a rebuild, slots that no
//! factorisation used for `STALE_AFTER` factorisations are dropped, which bounds the padding
//! to the rows of the recent past (a resting pile's contacts, its friction rows, the rows an
//! active set releases and takes back).

use nalgebra_sparse::CsrMatrix;
use solverlab_core::rows::IdMap;

/// A slot that no factorisation used for this many factorisations leaves the pattern at its
/// next rebuild (on the 55-box pyramid a step takes about 16).
const STALE_AFTER: usize = 64;

/// The kept pattern and the padded system's values (see the module docs).
#[derive(Debug, Default)]
pub struct KeptPattern {
    /// Row id of each slot, and each id's slot.
    ids: Vec<u64>,
    slot_of: IdMap<usize>,
    /// The symmetric pattern over the slots, CSR (the same arrays are its CSC), columns sorted,
    /// every diagonal present; `diag[s]` is slot `s`'s diagonal entry.
    offsets: Vec<usize>,
    cols: Vec<usize>,
    diag: Vec<usize>,
    /// The padded matrix's values, and the padded right-hand side or solution.
    values: Vec<f64>,
    rhs: Vec<f64>,
    /// The last fill that used each slot.
    used: Vec<usize>,
    fills: usize,
    /// The slot of each row of the last filled system.
    slot: Vec<usize>,
    /// Entry of each column in the row being filled, valid where `stamp` is the row's.
    at: Vec<usize>,
    stamp: Vec<usize>,
    generation: usize,
}

impl KeptPattern {
    /// Number of slots (rows of the padded system).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there is no slot.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How many of `ids` have no slot.
    pub fn missing(&self, ids: &[u64]) -> usize {
        ids.iter().filter(|id| !self.slot_of.contains_key(id)).count()
    }

    /// The padded pattern's row offsets, column indices and values.
    pub fn csr(&self) -> (&[usize], &[usize], &[f64]) {
        (&self.offsets, &self.cols, &self.values)
    }

    /// Scatters `a` (rows `ids`) into the padded matrix; `false` (values undefined) if a row or
    /// an entry of `a` has no place in the pattern (or an id repeats, which no rebuild mends).
    pub fn fill(&mut self, ids: &[u64], a: &CsrMatrix<f64>) -> bool {
        self.slot.clear();
        for id in ids {
            match self.slot_of.get(id) {
                Some(&s) => self.slot.push(s),
                None => return false,
            }
        }
        self.fills += 1;
        let now = self.fills;
        self.values.iter_mut().for_each(|v| *v = 0.0);
        let (offsets, cols, values) = (a.row_offsets(), a.col_indices(), a.values());
        for (i, &s) in self.slot.iter().enumerate() {
            self.generation += 1;
            for e in self.offsets[s]..self.offsets[s + 1] {
                self.at[self.cols[e]] = e;
                self.stamp[self.cols[e]] = self.generation;
            }
            for k in offsets[i]..offsets[i + 1] {
                let t = self.slot[cols[k]];
                if self.stamp[t] != self.generation {
                    return false;
                }
                self.values[self.at[t]] = values[k];
            }
            if self.used[s] == now {
                return false;
            }
            self.used[s] = now;
        }
        for (s, &d) in self.diag.iter().enumerate() {
            if self.used[s] != now {
                self.values[d] = 1.0;
            }
        }
        true
    }

    /// Grows the pattern to hold `a` (rows `ids`) as well, dropping the slots that have gone
    /// unused for `STALE_AFTER` fills; [`KeptPattern::fill`] then succeeds.
    pub fn rebuild(&mut self, ids: &[u64], a: &CsrMatrix<f64>) {
        let recent = |s: usize| self.used[s] + STALE_AFTER > self.fills;
        let keep: Vec<usize> = (0..self.ids.len()).filter(|&s| recent(s)).collect();
        let mut new_ids: Vec<u64> = keep.iter().map(|&s| self.ids[s]).collect();
        let mut slot_of = IdMap::default();
        slot_of.extend(new_ids.iter().enumerate().map(|(s, &id)| (id, s)));
        for &id in ids {
            if let std::collections::hash_map::Entry::Vacant(e) = slot_of.entry(id) {
                e.insert(new_ids.len());
                new_ids.push(id);
            }
        }
        let mut old_to_new = vec![usize::MAX; self.ids.len()];
        for (new, &old) in keep.iter().enumerate() {
            old_to_new[old] = new;
        }
        let mut entries: Vec<(usize, usize)> = (0..new_ids.len()).map(|s| (s, s)).collect();
        for &old in &keep {
            for e in self.offsets[old]..self.offsets[old + 1] {
                let c = old_to_new[self.cols[e]];
                if c != usize::MAX {
                    entries.push((old_to_new[old], c));
                }
            }
        }
        let active: Vec<usize> = ids.iter().map(|id| slot_of[id]).collect();
        let (offsets, cols) = (a.row_offsets(), a.col_indices());
        for (i, &s) in active.iter().enumerate() {
            entries.extend(cols[offsets[i]..offsets[i + 1]].iter().map(|&j| (s, active[j])));
        }
        entries.sort_unstable();
        entries.dedup();
        let n = new_ids.len();
        let mut used = vec![0; n];
        for (&old, u) in keep.iter().zip(used.iter_mut()) {
            *u = self.used[old];
        }
        self.offsets.clear();
        self.offsets.resize(n + 1, 0);
        for &(r, _) in &entries {
            self.offsets[r + 1] += 1;
        }
        for r in 0..n {
            self.offsets[r + 1] += self.offsets[r];
        }
        self.cols.clear();
        self.cols.extend(entries.iter().map(|&(_, c)| c));
        self.diag.clear();
        self.diag.extend(entries.iter().enumerate().filter(|(_, (r, c))| r == c).map(|(e, _)| e));
        self.values.clear();
        self.values.resize(entries.len(), 0.0);
        (self.ids, self.slot_of, self.used) = (new_ids, slot_of, used);
        self.at.clear();
        self.at.resize(n, 0);
        self.stamp.clear();
        self.stamp.resize(n, 0);
    }

    /// The padded right-hand side: `v` on the slots of the last filled system, zero elsewhere.
    pub fn scatter(&mut self, v: &[f64]) -> &mut [f64] {
        self.rhs.clear();
        self.rhs.resize(self.ids.len(), 0.0);
        for (&s, &x) in self.slot.iter().zip(v) {
            self.rhs[s] = x;
        }
        &mut self.rhs
    }

    /// The last filled system's rows of the padded solution into `v`.
    pub fn gather(&self, v: &mut [f64]) {
        for (x, &s) in v.iter_mut().zip(&self.slot) {
            *x = self.rhs[s];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(n: usize, entries: &[(usize, usize, f64)]) -> CsrMatrix<f64> {
        let coo = nalgebra_sparse::CooMatrix::try_from_triplets(
            n,
            n,
            entries.iter().map(|e| e.0).collect(),
            entries.iter().map(|e| e.1).collect(),
            entries.iter().map(|e| e.2).collect(),
        )
        .unwrap();
        CsrMatrix::from(&coo)
    }

    /// A system fits once the pattern holds it; a smaller one over some of its rows fits the
    /// same pattern, with the other slots as identity rows; a new row or entry does not fit.
    #[test]
    fn the_pattern_grows_and_pads_the_rows_that_left() {
        let mut p = KeptPattern::default();
        let a = matrix(3, &[(0, 0, 4.0), (0, 2, 1.0), (2, 0, 1.0), (1, 1, 5.0), (2, 2, 6.0)]);
        assert!(!p.fill(&[10, 11, 12], &a));
        p.rebuild(&[10, 11, 12], &a);
        assert!(p.fill(&[10, 11, 12], &a));
        // Rows 12 and 10 only, in the other order.
        let b = matrix(2, &[(0, 0, 7.0), (0, 1, 2.0), (1, 0, 2.0), (1, 1, 8.0)]);
        assert!(p.fill(&[12, 10], &b));
        let (offsets, cols, values) = p.csr();
        let dense =
            |r: usize, c: usize| (offsets[r]..offsets[r + 1]).find(|&e| cols[e] == c).map_or(0.0, |e| values[e]);
        assert_eq!([dense(0, 0), dense(0, 2), dense(2, 2), dense(1, 1), dense(0, 1)], [8.0, 2.0, 7.0, 1.0, 0.0]);
        assert_eq!(p.scatter(&[3.0, 4.0]), &[4.0, 0.0, 3.0]);
        let mut out = [0.0; 2];
        p.gather(&mut out);
        assert_eq!(out, [3.0, 4.0]);
        let c = matrix(2, &[(0, 0, 1.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 1.0)]);
        assert!(!p.fill(&[10, 11], &c), "entry (10, 11) is new");
        assert!(!p.fill(&[10, 13], &matrix(2, &[(0, 0, 1.0), (1, 1, 1.0)])), "row 13 is new");
        p.rebuild(&[10, 11], &c);
        assert_eq!(p.len(), 3);
        assert!(p.fill(&[10, 11], &c) && p.fill(&[10, 11, 12], &a));
    }
}
