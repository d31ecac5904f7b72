//! The rigid passes on all threads: how many items a parallel task takes ([`par_min`]), a
//! list filled on all threads or on the calling one ([`fill`]), and the manifolds visited apart
//! with their points ([`with_points`], [`for_each_with_points`]).

use super::{Manifold, Point};
use rayon::prelude::*;

/// The fewest items (points, bodies) a parallel task of the rigid passes takes: smaller scenes
/// run on the calling thread, and so does everything on one thread (handing a pass to a pool of
/// one costs more than small passes do). Every such pass writes each item on its own or takes a
/// maximum, so its numbers do not depend on the number of threads.
pub(in crate::pgs) fn par_min() -> usize {
    if rayon::current_num_threads() > 1 {
        4096
    } else {
        usize::MAX / 8
    }
}

/// Fills `out` with `f(0), f(1), …, f(len − 1)`, on all threads from `min` items on and on the
/// calling thread below (the same list either way). Below `min` it skips the parallel
/// collection's bookkeeping, which cost about 100 instructions an item on one thread.
pub(in crate::pgs) fn fill<U: Send>(out: &mut Vec<U>, len: usize, min: usize, f: impl Fn(usize) -> U + Sync + Send) {
    if len < min {
        out.clear();
        out.extend((0..len).map(f));
    } else {
        (0..len).into_par_iter().with_min_len(min).map(f).collect_into_vec(out);
    }
}

/// Each manifold with its points, `points[m.start..m.end]` (the manifolds' point ranges follow
/// one another), for passes that visit the manifolds apart (on several threads).
pub(super) fn with_points<'a>(
    manifolds: &'a mut [Manifold],
    mut points: &'a mut [Point],
) -> Vec<(&'a mut Manifold, &'a mut [Point])> {
    let mut out = Vec::with_capacity(manifolds.len());
    let mut at = 0;
    for m in manifolds.iter_mut() {
        let (_, tail) = std::mem::take(&mut points).split_at_mut(m.start - at);
        let (own, tail) = tail.split_at_mut(m.end - m.start);
        (points, at) = (tail, m.end);
        out.push((m, own));
    }
    out
}

/// Calls `f` on each manifold with its points, as [`with_points`] pairs them, on all threads
/// (the lists halved down to `min` manifolds, each half from its own `rayon::join`) and without
/// a list of the pairs: a step in steady state allocates nothing here. `at` is the index of
/// `points[0]`.
pub(super) fn for_each_with_points<F>(manifolds: &mut [Manifold], points: &mut [Point], at: usize, min: usize, f: &F)
where
    F: Fn(&mut Manifold, &mut [Point]) + Sync,
{
    if manifolds.len() <= min.max(1) {
        let (mut points, mut at) = (points, at);
        for m in manifolds.iter_mut() {
            let (_, tail) = std::mem::take(&mut points).split_at_mut(m.start - at);
            let (own, tail) = tail.split_at_mut(m.end - m.start);
            (points, at) = (tail, m.end);
            f(m, own);
        }
        return;
    }
    let mid = manifolds.len() / 2;
    let split = manifolds[mid].start - at;
    let (left, right) = manifolds.split_at_mut(mid);
    let (before, after) = points.split_at_mut(split);
    rayon::join(
        || for_each_with_points(left, before, at, min, f),
        || for_each_with_points(right, after, at + split, min, f),
    );
}
