//! Multipliers by row id, the rows an active set released, where a pass starts, and the
//! forcing terms: the Newton loop's bookkeeping.

use solverlab_core::rigid::RigidState;
use solverlab_core::rows::IdMap;
use solverlab_core::Vec3;

use super::Forcing;

/// The loop's buffers, kept in the solver between outer iterations and steps so that the loop
/// allocates nothing while it iterates (each is cleared and refilled where it is used).
#[derive(Default)]
pub(super) struct Work {
    /// The active set's round: the rows' multipliers at its start, the right-hand side `b`, the
    /// solution `Δλ` (the result of `Newton::solve_active_set`), its initial
    /// guess (kept for a captured system), `A·guess`, and which rows pull.
    pub(super) lambda: Vec<f64>,
    pub(super) b: Vec<f64>,
    pub(super) dl: Vec<f64>,
    pub(super) guess: Vec<f64>,
    pub(super) q: Vec<f64>,
    pub(super) pulling: Vec<bool>,
    /// The last round's solution by row id, the start of the next round's.
    pub(super) previous_round: IdMap<f64>,
    /// The monitor's violation: each row's index by id, the coordinates after the inner
    /// iteration, `Jᵀλ`, and the rigid poses there.
    pub(super) row_of: IdMap<usize>,
    pub(super) x: Vec<Vec3>,
    pub(super) jt: Vec<f64>,
    pub(super) poses: Vec<RigidState>,
    /// The new multipliers projected on the range of `J W Jᵀ`.
    pub(super) projected: Vec<f64>,
    /// The outer loop: the committed multipliers of a line search, its trial coordinates, the
    /// step `Δx`, and the full method's curvature rows before they join the row set.
    pub(super) committed: RowMap,
    pub(super) trial_x: Vec<Vec3>,
    pub(super) dx: Vec<Vec3>,
    pub(super) curvature: Vec<(u64, [usize; 2], Vec3, f64)>,
}
/// The rows an outer iteration's active set released, what they give back, and where that moves
/// the coordinates.
#[derive(Default)]
pub(super) struct Released {
    pub(super) ids: Vec<u64>,
    pub(super) dl: Vec<f64>,
    pub(super) dx: Vec<Vec3>,
}

/// Where a pass of the Newton loop starts its multipliers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Start {
    /// At zero (the projection: it accumulates the changes of this pass).
    Zero,
    /// At the given fraction of `previous` (the SQP methods: the warm start, or the first
    /// pass's multipliers for the friction pass).
    Previous(f64),
    /// Where they are (a projection that finishes an SQP pass).
    Keep,
}

/// A row's multiplier in `map` by id (0 for a row that is not there).
pub(super) fn lookup(map: &RowMap) -> impl Fn(u64) -> f64 + '_ {
    |id| map.get(id)
}

/// Multipliers by row id, 0 for a row that has none: the first row of each scene constraint
/// (id `index << 2`, the only row of a stick) in a vector indexed by constraint, and every other
/// row (a pin's other axes, contacts, rigid rows) in a hash map. A large cloth looks its rows up
/// several times an outer iteration; in a hash map alone each lookup cost about 15 ns on the
/// 256² cloth, half of gathering the row.
#[derive(Debug, Default)]
pub(super) struct RowMap {
    dense: Vec<f64>,
    sparse: IdMap<f64>,
}

impl RowMap {
    /// Forgets every multiplier, keeping the first rows of `constraints` constraints in the
    /// vector.
    pub(super) fn reset(&mut self, constraints: usize) {
        self.dense.clear();
        self.dense.resize(constraints, 0.0);
        self.sparse.clear();
    }

    /// The slot of row `id` in the vector, if it has one.
    fn slot(&self, id: u64) -> Option<usize> {
        (id & 3 == 0 && (id >> 2) < self.dense.len() as u64).then_some((id >> 2) as usize)
    }

    pub(super) fn get(&self, id: u64) -> f64 {
        match self.slot(id) {
            Some(k) => self.dense[k],
            None => self.sparse.get(&id).copied().unwrap_or(0.0),
        }
    }

    /// Adds `d` to the multiplier of row `id`.
    pub(super) fn add(&mut self, id: u64, d: f64) {
        match self.slot(id) {
            Some(k) => self.dense[k] += d,
            None => *self.sparse.entry(id).or_insert(0.0) += d,
        }
    }

    /// Every multiplier that was set, with its id (the vector's first, zeros included).
    pub(super) fn iter(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        let dense = self.dense.iter().enumerate().map(|(k, &l)| ((k as u64) << 2, l));
        dense.chain(self.sparse.iter().map(|(&id, &l)| (id, l)))
    }
}

impl Clone for RowMap {
    fn clone(&self) -> Self {
        RowMap { dense: self.dense.clone(), sparse: self.sparse.clone() }
    }

    /// Reuses the vector and the table.
    fn clone_from(&mut self, source: &Self) {
        self.dense.clone_from(&source.dense);
        self.sparse.clone_from(&source.sparse);
    }
}

/// The forcing term for outer iteration with Newton residual norm `f`, given the previous
/// iteration's norm and forcing term.
pub(super) fn forcing_term(forcing: Forcing, f: f64, previous: Option<(f64, f64)>) -> f64 {
    match forcing {
        Forcing::Fixed(t) => t,
        Forcing::EisenstatWalker => {
            const GAMMA: f64 = 0.9;
            const ETA_MAX: f64 = 0.9;
            let eta = match previous {
                None => 0.5,
                Some((f_prev, eta_prev)) => {
                    let eta = GAMMA * (f / f_prev).powi(2);
                    let guard = GAMMA * eta_prev * eta_prev;
                    if guard > 0.1 {
                        eta.max(guard)
                    } else {
                        eta
                    }
                }
            };
            eta.min(ETA_MAX)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RowMap;
    use solverlab_core::rows::{constraint_row_id, contact_row_id};

    /// The split map reads like one map by id: sticks' rows in the vector, a pin's other axes,
    /// contacts and constraints beyond the vector in the table, everything else 0.
    #[test]
    fn row_map_reads_like_one_map_by_id() {
        let mut m = RowMap::default();
        m.reset(3);
        let ids = [
            constraint_row_id(0, 0),
            constraint_row_id(2, 0),
            constraint_row_id(2, 1),
            constraint_row_id(7, 0),
            contact_row_id(5, solverlab_core::constraint::ColliderRef::Plane(0), 0),
        ];
        for (k, &id) in ids.iter().enumerate() {
            m.add(id, k as f64 + 0.5);
            m.add(id, 1.0);
        }
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(m.get(id), k as f64 + 1.5, "row {id:x}");
        }
        assert_eq!(m.get(constraint_row_id(1, 0)), 0.0);
        assert_eq!(m.get(constraint_row_id(1, 2)), 0.0);
        let mut set: Vec<(u64, f64)> = m.iter().filter(|e| e.1 != 0.0).collect();
        set.sort_unstable_by_key(|e| e.0);
        let mut expected: Vec<(u64, f64)> = ids.iter().enumerate().map(|(k, &id)| (id, k as f64 + 1.5)).collect();
        expected.sort_unstable_by_key(|e| e.0);
        assert_eq!(set, expected);
        let mut copy = RowMap::default();
        copy.clone_from(&m);
        assert!(ids.iter().all(|&id| copy.get(id) == m.get(id)));
        m.reset(3);
        assert!(ids.iter().all(|&id| m.get(id) == 0.0));
    }
}
