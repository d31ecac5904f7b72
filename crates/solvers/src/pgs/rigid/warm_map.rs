//! The impulses a step keeps for the next step's warm start ([`super::prepare`]'s `warm_start`,
//! written in [`super::finish`]): per body pair its points' normal impulses with their feature
//! ids and positions, and its manifold's friction and twist impulses, found by pair and then
//! by feature or nearest point ([`matched_impulse`]).

use solverlab_core::broadphase::sort_by_first_index;
use solverlab_core::rigid::{Other, RigidContact};
use solverlab_core::Vec3;

/// A contact point's normal impulse kept for the next step: (feature id, world point, impulse).
pub(super) type WarmPoint = (u32, Vec3, f64);

/// The last step's normal impulse of contact `c` among its pair's `previous` points: the same
/// feature wherever it is, or else the nearest point within `√radius2` of it.
///
/// A feature id names the same corner, edge or face of the same pair from step to step (the
/// narrow phase's ids are geometric: `collide`'s `feature_ids_stable`), so that a point keeps
/// its impulse however far the pair has moved, as Rapier (by its manifolds' feature ids) and
/// Box2D v3 (by its contact ids) keep theirs. An earlier rule also asked the same feature to lie
/// within `√radius2` (2 cm) of the last point in the world, and a pair that moved more between
/// steps lost its warm start: every pair of a falling pile, and every pair whose recycled points
/// (frozen in the world where they were found) were found anew after the pair had moved. On the
/// 4,095-box pyramid, whose upper layers sink as the lower ones compress, 19 % of the points of
/// frame 9 started cold; on the 10,000 spheres 50–100 % of each frame's points from frame 9 on.
#[inline]
pub(super) fn matched_impulse(previous: &[WarmPoint], c: &RigidContact, radius2: f64) -> Option<f64> {
    let exact = previous.iter().find(|e| e.0 == c.point.feature);
    let near = || {
        let close = |e: &&WarmPoint| (e.1 - c.point.point).norm_squared() <= radius2;
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

/// Last step's impulses by body pair, the pairs sorted for lookup (filled on all threads,
/// sorted in linear time or, grouped by first body, within each body, [`WarmMap::sort`], and
/// read on all threads; a pair has one manifold, so one entry).
#[derive(Default)]
pub(super) struct WarmMap {
    pub(super) pairs: Vec<WarmPair>,
    pub(super) points: Vec<WarmPoint>,
    /// The pairs of body `a` are `pairs[first[a]..first[a + 1]]`: a lookup searches only its
    /// first body's few pairs. (With a search of all the pairs, the lookup took 5.5 % of the
    /// samples of a `perf` profile of the 10,000 spheres' Rapier benchmark, solverlab's and
    /// Rapier's runs together; with the index, 3.0 %.)
    first: Vec<usize>,
    /// [`WarmMap::sort`]'s lists, kept for their memory: the pairs being placed, and each first
    /// body's next free place.
    placed: Vec<WarmPair>,
    next: Vec<usize>,
    /// Whether `pairs` are in the order of the manifolds of the step that kept them (the
    /// sort by colour's order), unsorted: a step whose sort by colour finds the same pairs in
    /// the same order reads pair `r` of its manifold `r` ([`WarmMap::get_at`]) without a sort
    /// or a search, and any other step sorts them first ([`WarmMap::ready`]). `placement` is then
    /// each pair's place in that order by its place in the narrow phase's order (the sort by
    /// colour's `placed`), and `stamp` the sort by colour that made the order.
    by_run: bool,
    placement: Vec<u32>,
    stamp: u64,
    /// Tests: keep no pairs by manifold; and how many steps read them by manifold, and how
    /// many put them back and sorted them.
    #[cfg(test)]
    pub(super) by_run_off: bool,
    #[cfg(test)]
    pub(super) counts: (usize, usize),
}

/// Bodies per task of [`WarmMap::sort`]'s sorts within bodies.
const WARM_BODIES: usize = 256;

impl WarmMap {
    pub(super) fn clear(&mut self) {
        self.pairs.clear();
        self.points.clear();
        self.first.clear();
        self.by_run = false;
    }

    /// Takes `pairs` as they are, in the order of the step's manifolds (the sort by colour
    /// `stamp` made it from the narrow phase's order, `placement` its placement), for
    /// [`WarmMap::ready`] and [`WarmMap::get_at`]; the points are kept by contact as always.
    pub(super) fn keep_by_run(&mut self, placement: &[u32], stamp: u64) {
        self.by_run = true;
        self.placement.clear();
        self.placement.extend_from_slice(placement);
        self.stamp = stamp;
        self.first.clear();
    }

    /// Makes the map ready for this step's lookups: pairs kept in the order of the last
    /// step's manifolds stay so when this step's sort by colour (`stamp`, and `same`: whether
    /// it found the same pairs in the same order as the sort before it) found them again,
    /// `runs` manifolds; otherwise they are put back in the narrow phase's order (grouped by
    /// first body) and sorted by key ([`WarmMap::sort`]).
    pub(super) fn ready(&mut self, bodies: usize, stamp: u64, same: bool, runs: usize) {
        if !self.by_run {
            return;
        }
        if same && stamp == self.stamp + 1 && runs == self.pairs.len() {
            self.stamp = stamp;
            #[cfg(test)]
            {
                self.counts.0 += 1;
            }
            return;
        }
        #[cfg(test)]
        {
            self.counts.1 += 1;
        }
        self.by_run = false;
        let (pairs, placement) = (&self.pairs, &self.placement);
        if placement.len() == pairs.len() {
            super::fill(&mut self.placed, pairs.len(), super::par_min() / 4, |i| pairs[placement[i] as usize]);
            std::mem::swap(&mut self.pairs, &mut self.placed);
        }
        self.sort(bodies);
    }

    /// [`WarmMap::get`] for the pair `key` of this step's manifold `r`: with the pairs in the
    /// order of the manifolds ([`WarmMap::ready`]), pair `r`, which is `key`'s.
    #[inline]
    pub(super) fn get_at(&self, r: usize, key: &(usize, Other)) -> Option<(&[WarmPoint], Vec3, f64)> {
        if !self.by_run {
            return self.get(key);
        }
        let p = self.pairs.get(r).filter(|p| p.key == *key)?;
        Some((&self.points[p.points.0..p.points.1], p.friction, p.twist))
    }

    /// Sorts the pairs by key (their first body `key.0 < bodies`) and sets [`WarmMap::first`],
    /// in linear time ([`sort_by_first_index`]), where a comparison sort of the 72-byte pairs
    /// took about 8 % of the 4,095-box pyramid's solver instructions (some 16,000 pairs a frame).
    ///
    /// Pairs already grouped by first body in increasing order (as the narrow phase finds
    /// them, and `RigidSi::finish` fills them) are only sorted within each body, on all threads
    /// for many pairs: the linear sort ran on the calling thread, 0.7 % of the 4,095-box
    /// pyramid's two-thread frame.
    pub(super) fn sort(&mut self, bodies: usize) {
        use rayon::prelude::*;
        let WarmMap { pairs, first, placed, next, .. } = self;
        let min = super::par_min();
        let grouped = if pairs.len() >= min {
            pairs.par_windows(2).with_min_len(min).all(|w| w[0].key.0 <= w[1].key.0)
        } else {
            pairs.windows(2).all(|w| w[0].key.0 <= w[1].key.0)
        };
        if !grouped || pairs.last().is_some_and(|p| p.key.0 >= bodies) {
            sort_by_first_index(pairs.iter(), bodies, |p| p.key.0, |p| p.key, (first, next), placed);
            std::mem::swap(pairs, placed);
            return;
        }
        let many = pairs.len() >= min;
        let list: &[WarmPair] = pairs;
        super::fill(first, bodies + 1, min / 4, |a| list.partition_point(|p| p.key.0 < a));
        // Each body's pairs sorted by key, in tasks of whole bodies.
        let mut tasks = Vec::new();
        let (mut rest, mut at) = (&mut pairs[..], 0);
        for a in (0..bodies).step_by(WARM_BODIES) {
            let end = first[(a + WARM_BODIES).min(bodies)];
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(end - at);
            tasks.push((a, head));
            (rest, at) = (tail, end);
        }
        let first: &[usize] = first;
        let sort = |(a0, list): (usize, &mut [WarmPair])| {
            let base = first[a0];
            for a in a0..(a0 + WARM_BODIES).min(bodies) {
                let own = &mut list[first[a] - base..first[a + 1] - base];
                if own.len() > 1 {
                    own.sort_unstable_by_key(|p| p.key);
                }
            }
        };
        if many {
            tasks.into_par_iter().for_each(sort);
        } else {
            tasks.into_iter().for_each(sort);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The linear sort gives the comparison sort's order, and each pair is found by its key
    /// with its own points (pairs of 50 bodies with each other and with colliders, shuffled).
    #[test]
    fn the_linear_sort_orders_the_pairs_as_a_comparison_sort() {
        let bodies = 50;
        let mut pairs = Vec::new();
        for a in 0..bodies {
            for b in (a + 1..bodies).filter(|b| (a * 7 + b * 3) % 5 == 0) {
                pairs.push((a, Other::Body(b)));
            }
            if a % 3 == 0 {
                pairs.push((a, Other::Collider(a as u64 % 4)));
            }
        }
        // A fixed shuffle (a multiplicative step coprime with the count).
        let n = pairs.len();
        let step = (1..n).rev().find(|s| gcd(*s, n) == 1 && s * 3 > n).unwrap();
        let shuffled: Vec<_> = (0..n).map(|k| pairs[(k * step) % n]).collect();
        let mut map = numbered(&shuffled);
        let mut expected = map.pairs.clone();
        expected.sort_unstable_by_key(|p| p.key);
        map.sort(bodies);
        let keys = |ps: &[WarmPair]| ps.iter().map(|p| (p.key, p.points)).collect::<Vec<_>>();
        assert_eq!(keys(&map.pairs), keys(&expected));
        for (k, key) in shuffled.iter().enumerate() {
            let (points, friction, twist) = map.get(key).expect("every pair is found");
            assert_eq!((points.len(), points[0].2, friction.x, twist), (1, k as f64, k as f64, k as f64));
        }
        assert!(map.get(&(0, Other::Collider(99))).is_none(), "a pair never kept is not found");
    }

    /// Pairs grouped by first body but not sorted within it (colliders before bodies, as the
    /// narrow phase finds them) are sorted within each body, on two threads as on one, into
    /// the comparison sort's order, and found by key.
    #[test]
    fn grouped_pairs_are_sorted_within_their_bodies() {
        let bodies = 3_000;
        let mut pairs = Vec::new();
        for a in 0..bodies {
            if a % 4 == 0 {
                pairs.push((a, Other::Collider(11)));
                pairs.push((a, Other::Collider(8)));
            }
            for b in [a + 7, a + 2, a + 1].into_iter().filter(|b| *b < bodies && (a + b) % 3 != 0) {
                pairs.push((a, Other::Body(b)));
            }
        }
        let n = pairs.len();
        assert!(n > 4_096, "{n} pairs: the parallel path");
        let mut expected = numbered(&pairs).pairs;
        expected.sort_unstable_by_key(|p| p.key);
        let keys = |ps: &[WarmPair]| ps.iter().map(|p| (p.key, p.points)).collect::<Vec<_>>();
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut map = numbered(&pairs);
            pool.install(|| map.sort(bodies));
            assert_eq!(keys(&map.pairs), keys(&expected), "{threads} thread(s)");
            for (k, key) in pairs.iter().enumerate() {
                let (points, _, twist) = map.get(key).expect("every pair is found");
                assert_eq!((points[0].2, twist), (k as f64, k as f64));
            }
        }
    }

    /// A point keeps its feature's impulse however far its pair moved since (a pile falling 10 cm
    /// in a step); a point of a new feature takes the nearest old point's within the radius, and
    /// none beyond it.
    #[test]
    fn a_feature_keeps_its_impulse_wherever_the_pair_moved() {
        use solverlab_core::rigid::ContactPoint;
        let previous: Vec<WarmPoint> = vec![(3, Vec3::new(0.0, 1.0, 0.0), 7.0), (5, Vec3::new(0.5, 1.0, 0.0), 9.0)];
        let contact = |feature: u32, point: Vec3| RigidContact {
            a: 0,
            b: Other::Body(1),
            point: ContactPoint { point, normal: Vec3::y(), separation: 0.0, feature },
            friction: 0.5,
            restitution: 0.0,
            arms: None,
        };
        let radius2 = 0.02_f64.powi(2);
        let fallen = Vec3::new(0.0, -0.1, 0.0);
        assert_eq!(matched_impulse(&previous, &contact(3, previous[0].1 + fallen), radius2), Some(7.0));
        assert_eq!(matched_impulse(&previous, &contact(5, previous[1].1 + fallen), radius2), Some(9.0));
        let near = previous[1].1 + Vec3::new(0.01, 0.0, 0.0);
        assert_eq!(matched_impulse(&previous, &contact(8, near), radius2), Some(9.0), "the nearest within the radius");
        assert_eq!(matched_impulse(&previous, &contact(8, previous[1].1 + fallen), radius2), None, "none beyond it");
    }

    /// A map of the pairs `keys` in that order, the k-th with point k, friction `k·x̂` and
    /// twist k.
    fn numbered(keys: &[(usize, Other)]) -> WarmMap {
        let mut map = WarmMap::default();
        map.pairs = keys
            .iter()
            .enumerate()
            .map(|(k, &key)| WarmPair { key, points: (k, k + 1), friction: Vec3::x() * k as f64, twist: k as f64 })
            .collect();
        map.points = (0..keys.len()).map(|k| (k as u32, Vec3::zeros(), k as f64)).collect();
        map
    }

    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
}
