//! The impulses a step keeps for the next step's warm start ([`super::prepare`]'s `warm_start`,
//! written in [`super::finish`]): per body pair its points' normal impulses with their feature
//! ids and positions, and its manifold's friction and twist impulses, found by pair and then
//! by feature or nearest point ([`matched_impulse`]).

use solverlab_core::rigid::{Other, RigidContact};
use solverlab_core::Vec3;

/// A contact point's normal impulse kept for the next step: (feature id, world point, impulse).
pub(super) type WarmPoint = (u32, Vec3, f64);

/// The last step's normal impulse of contact `c` among its pair's `previous` points: the same
/// feature within `√radius2` of it, or else the nearest within that distance.
#[inline]
pub(super) fn matched_impulse(previous: &[WarmPoint], c: &RigidContact, radius2: f64) -> Option<f64> {
    let close = |e: &&WarmPoint| (e.1 - c.point.point).norm_squared() <= radius2;
    let exact = previous.iter().filter(close).find(|e| e.0 == c.point.feature);
    let near = || {
        previous
            .iter()
            .filter(close)
            .min_by(|x, y| (x.1 - c.point.point).norm_squared().total_cmp(&(y.1 - c.point.point).norm_squared()))
    };
    exact.or_else(near).map(|e| e.2)
}

/// One body pair's impulses kept for the next step: its points'
/// `WarmMap::points[points.0..points.1]`, in the order of the step's contacts, and the
/// manifold's friction impulse (a world vector) and twist impulse.
#[derive(Clone, Copy, Debug)]
pub(super) struct WarmPair {
    pub(super) key: (usize, Other),
    pub(super) points: (usize, usize),
    pub(super) friction: Vec3,
    pub(super) twist: f64,
}

/// Last step's impulses by body pair, the pairs sorted for lookup (built and read on all
/// threads; a pair has one manifold, so one entry).
#[derive(Default)]
pub(super) struct WarmMap {
    pub(super) pairs: Vec<WarmPair>,
    pub(super) points: Vec<WarmPoint>,
    /// The pairs of body `a` are `pairs[first[a]..first[a + 1]]`: a lookup searches only its
    /// first body's few pairs. (With a search of all the pairs, the lookup took 5.5 % of the
    /// samples of a `perf` profile of the 10,000 spheres' Rapier benchmark, solverlab's and
    /// Rapier's runs together; with the index, 3.0 %.)
    first: Vec<usize>,
}

impl WarmMap {
    pub(super) fn clear(&mut self) {
        self.pairs.clear();
        self.points.clear();
        self.first.clear();
    }

    /// Sets [`WarmMap::first`] for `bodies` bodies, the pairs sorted.
    pub(super) fn index(&mut self, bodies: usize) {
        self.first.clear();
        self.first.resize(bodies + 1, 0);
        for p in &self.pairs {
            self.first[p.key.0 + 1] += 1;
        }
        for a in 0..bodies {
            self.first[a + 1] += self.first[a];
        }
    }

    /// The pair `key`'s impulses: its points and its friction and twist.
    #[inline]
    pub(super) fn get(&self, key: &(usize, Other)) -> Option<(&[WarmPoint], Vec3, f64)> {
        let (lo, hi) = (*self.first.get(key.0)?, *self.first.get(key.0 + 1)?);
        let i = lo + self.pairs[lo..hi].binary_search_by(|p| p.key.cmp(key)).ok()?;
        let p = &self.pairs[i];
        Some((&self.points[p.points.0..p.points.1], p.friction, p.twist))
    }
}
