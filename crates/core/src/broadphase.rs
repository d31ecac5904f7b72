//! A uniform-grid broadphase for particle-particle contact, and its mixed-size variant for
//! rigid bodies' bounding spheres ([`sphere_pairs`]).
//!
//! Particles with a positive radius collide with each other. The grid's cell is the largest
//! contact distance (`2·r_max + margin`), so two particles can only touch if their cells are
//! neighbours. Each particle is binned once and the bins are sorted by cell `(x, y, z)`; then the
//! occupied cells are visited in that order. For a cell `c` the 27 neighbours form 9 runs of
//! the sorted bins, one per `(dx, dy)`: the cells `(cx+dx, cy+dy, cz−1 ..= cz+1)` are adjacent
//! in the order. Those runs only move forward as `c` does, so each keeps a cursor that advances
//! instead of searching (a merge, linear overall), and each cell's particles are tested against
//! the 9 runs together. The cost is linear in the particle count for bounded density, instead of
//! the quadratic all-pairs test. Pairs come out sorted `(i, j)` with `i < j`, so that
//! everything downstream is deterministic. For rigid bodies, [`sphere_pairs_kept`] keeps the
//! pairs of a search with a slack and filters them while the bodies move little: the same pairs
//! as a search, without the search.

use crate::Vec3;

/// Finds every pair `i < j` of particles with radii `> 0` whose distance is below
/// `r_i + r_j + margin`. `skip(i, j)` can exclude pairs (e.g. joined by a stick).
pub fn pairs(
    x: &[Vec3],
    radius: &[f64],
    margin: f64,
    skip: impl Fn(usize, usize) -> bool + Sync,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    pairs_into(x, radius, margin, skip, &mut out);
    out
}

/// [`pairs`] into `out` (its old contents dropped), whose memory is reused: a list kept from
/// call to call is not allocated, touched and copied anew each time.
pub fn pairs_into(
    x: &[Vec3],
    radius: &[f64],
    margin: f64,
    skip: impl Fn(usize, usize) -> bool + Sync,
    out: &mut Vec<(usize, usize)>,
) {
    use rayon::prelude::*;
    let balls: Vec<usize> = (0..x.len()).filter(|&i| radius[i] > 0.0).collect();
    let r_max = balls.iter().map(|&i| radius[i]).fold(0.0, f64::max);
    if balls.len() < 2 {
        out.clear();
        return;
    }
    let cell = 2.0 * r_max + margin.max(0.0);
    let key = |p: &Vec3| pack([coord(p.x, cell), coord(p.y, cell), coord(p.z, cell)]);
    // The occupied cells in order, `binned[first..end]` each.
    let parallel = rayon::current_num_threads() > 1 && balls.len() >= PARALLEL_BALLS;
    let mut binned: Vec<(u64, usize)>;
    if parallel {
        binned = balls.par_iter().with_min_len(PARALLEL_BALLS / 2).map(|&i| (key(&x[i]), i)).collect();
        binned.par_sort_unstable();
    } else {
        binned = balls.iter().map(|&i| (key(&x[i]), i)).collect();
        binned.sort_unstable();
    }
    let mut cells = Vec::new();
    let mut first = 0;
    while first < binned.len() {
        let c = binned[first].0;
        let end = first + binned[first..].iter().take_while(|(k, _)| *k == c).count();
        cells.push((first, end));
        first = end;
    }
    // A run of cells, its cursors starting where the first cell's runs start: each particle
    // `i`'s pairs `(i, j)`, `j > i`, found together and sorted by `j` (a few each) into `out`,
    // and each particle with pairs as `(i, start, end)` of `out` into `groups`.
    let run = |cells: &[(usize, usize)], out: &mut Vec<(usize, usize)>, groups: &mut Vec<(usize, u32, u32)>| {
        let mut cursor = [usize::MAX; 9];
        let mut runs = [(0, 0); 9];
        for &(first, end) in cells {
            let [cx, cy, cz] = unpack(binned[first].0);
            for (slot, (cursor, run)) in cursor.iter_mut().zip(runs.iter_mut()).enumerate() {
                *run = (0, 0);
                // (A neighbour outside the clamped range holds no particle.)
                let (dx, dy) = ((slot / 3) as u64, (slot % 3) as u64);
                let (nx, ny) = ((cx + dx).wrapping_sub(1), (cy + dy).wrapping_sub(1));
                if nx > COORD_MAX || ny > COORD_MAX {
                    continue;
                }
                let lo = pack([nx, ny, cz.saturating_sub(1)]);
                let hi = pack([nx, ny, (cz + 1).min(COORD_MAX)]);
                let mut at = *cursor;
                if at == usize::MAX {
                    at = binned.partition_point(|(k, _)| *k < lo);
                }
                while at < binned.len() && binned[at].0 < lo {
                    at += 1;
                }
                *cursor = at;
                let mut to = at;
                while to < binned.len() && binned[to].0 <= hi {
                    to += 1;
                }
                *run = (at, to);
            }
            for &(_, i) in &binned[first..end] {
                let start = out.len();
                for &(a, b) in &runs {
                    for &(_, j) in &binned[a..b] {
                        if j <= i {
                            continue;
                        }
                        let reach = radius[i] + radius[j] + margin;
                        if (x[i] - x[j]).norm_squared() < reach * reach && !skip(i, j) {
                            out.push((i, j));
                        }
                    }
                }
                if out.len() > start {
                    out[start..].sort_unstable_by_key(|&(_, j)| j);
                    groups.push((i, start as u32, out.len() as u32));
                }
            }
        }
    };
    // Runs of cells, on all threads or on the calling one. A pair `(i, j)` comes from the run
    // that holds `i`'s cell, all of `i`'s pairs together and in order, so the runs' groups are
    // gathered by `i` into the sorted list: no sort of the pairs (a comparison sort of the
    // 12,000 pairs of the 4,095-box pyramid was a third of the grid's time on one thread, and
    // the sorts of each run's pairs kept two threads from going faster than one).
    type Part = (Vec<(usize, usize)>, Vec<(usize, u32, u32)>);
    let parts: Vec<Part> = if parallel {
        cells
            .par_chunks(CELLS_PER_TASK)
            .map(|chunk| {
                let mut part = (Vec::new(), Vec::new());
                run(chunk, &mut part.0, &mut part.1);
                part
            })
            .collect()
    } else {
        let mut part = (Vec::new(), Vec::new());
        run(&cells, &mut part.0, &mut part.1);
        vec![part]
    };
    // Per `i`, its pairs' part and range there.
    let mut at = vec![(0u32, 0u32, 0u32); x.len()];
    for (p, (_, groups)) in parts.iter().enumerate() {
        for &(i, lo, hi) in groups {
            at[i] = (p as u32, lo, hi);
        }
    }
    let piece = |&(p, lo, hi): &(u32, u32, u32)| &parts[p as usize].0[lo as usize..hi as usize];
    if !parallel {
        out.clear();
        out.reserve(parts[0].0.len());
        for a in &at {
            out.extend_from_slice(piece(a));
        }
        return;
    }
    // The gather in tasks of `GATHER_FIRSTS` first indices, each into its own slice of the
    // list (where each task's pairs start is summed first).
    let mut starts = Vec::with_capacity(at.len().div_ceil(GATHER_FIRSTS) + 1);
    let mut total = 0;
    for (k, &(_, lo, hi)) in at.iter().enumerate() {
        if k % GATHER_FIRSTS == 0 {
            starts.push(total);
        }
        total += (hi - lo) as usize;
    }
    starts.push(total);
    // (Every place is written over below: a list kept from the last call keeps its length, so
    // that only the change in count is written here.)
    out.resize(total, (0, 0));
    let slices = consecutive_slices(out, starts.windows(2).map(|w| w[1] - w[0]));
    slices.into_par_iter().zip(at.par_chunks(GATHER_FIRSTS)).for_each(|(to, firsts)| {
        let mut k = 0;
        for a in firsts {
            let piece = piece(a);
            to[k..k + piece.len()].copy_from_slice(piece);
            k += piece.len();
        }
    });
}

/// Bits of each cell coordinate in a packed cell key ([`pack`]).
const COORD_BITS: u32 = 21;

/// The largest cell coordinate, after the offset that makes them all non-negative.
const COORD_MAX: u64 = (1 << COORD_BITS) - 1;

/// The cell coordinate of `v` for cells of `cell` metres: `⌊v / cell⌋`, clamped to the
/// [`COORD_BITS`]-bit range and offset to start at 0 (a NaN takes the cell of 0, as `as` casts it).
/// Clamping moves no two coordinates further apart, so particles within reach stay in
/// neighbouring cells; far-out particles (1e308 m) share the edge cells, where the exact test
/// sorts them out.
fn coord(v: f64, cell: f64) -> u64 {
    let half = (1_i64 << (COORD_BITS - 1)) as f64;
    let c = (v / cell).floor().clamp(-half, half - 1.0) as i64;
    (c + (1 << (COORD_BITS - 1))) as u64
}

/// A cell's key: its coordinates `(x, y, z)` packed so that the keys sort as the coordinates
/// do, x first (one integer comparison where the `[i64; 3]` keys compared three).
fn pack([x, y, z]: [u64; 3]) -> u64 {
    (x << (2 * COORD_BITS)) | (y << COORD_BITS) | z
}

/// The coordinates of a cell key ([`pack`]).
fn unpack(key: u64) -> [u64; 3] {
    [key >> (2 * COORD_BITS), (key >> COORD_BITS) & COORD_MAX, key & COORD_MAX]
}

/// `items`, each with a first index `first(item) < n`, sorted into `out` by `key` (whose order
/// must put smaller first indices first; ties keep no order): counted by first index, placed,
/// and each first index's few sorted by `key`. Linear in the items and `n`, where a comparison
/// sort is `n log n` and moves every item many times. Afterwards `start[i]..start[i + 1]` is
/// first index `i`'s run of `out`; `start` and `next` are working lists, kept by the caller for
/// their memory, as `out` is.
pub fn sort_by_first_index<'a, T: Copy + 'a, K: Ord>(
    items: impl Iterator<Item = &'a T> + Clone,
    n: usize,
    first: impl Fn(&T) -> usize,
    key: impl Fn(&T) -> K,
    (start, next): (&mut Vec<usize>, &mut Vec<usize>),
    out: &mut Vec<T>,
) {
    start.clear();
    start.resize(n + 1, 0);
    for item in items.clone() {
        start[first(item) + 1] += 1;
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    next.clear();
    next.extend_from_slice(&start[..n]);
    // (Every place is written over below.)
    out.clear();
    out.extend(items.clone().copied());
    for item in items {
        let i = first(item);
        out[next[i]] = *item;
        next[i] += 1;
    }
    for k in 0..n {
        if start[k + 1] - start[k] > 1 {
            out[start[k]..start[k + 1]].sort_unstable_by_key(&key);
        }
    }
}

/// `list` cut into consecutive slices of the given `lengths` (in order, from its start), for
/// tasks that each fill their own slice.
pub(crate) fn consecutive_slices<T>(list: &mut [T], lengths: impl IntoIterator<Item = usize>) -> Vec<&mut [T]> {
    let mut rest = list;
    lengths
        .into_iter()
        .map(|n| {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
            rest = tail;
            head
        })
        .collect()
}

/// The fewest particles [`pairs`] works on all threads for (fewer cost more to hand out).
const PARALLEL_BALLS: usize = 1024;

/// Occupied cells per parallel task of [`pairs`].
const CELLS_PER_TASK: usize = 128;

/// First indices per task of [`pairs`]' parallel gather.
const GATHER_FIRSTS: usize = 1024;

/// Finds every pair `i < j` of spheres (centre `x`, radius `radius > 0`) with
/// `|x_i − x_j| ≤ r_i + r_j + margin`, sorted, for any spread of sizes: the bounding spheres
/// of rigid bodies, where one large body (a floor slab, a heavy box) would make the uniform
/// grid's cell as large as itself. Spheres up to four times the median radius go into the grid
/// of [`pairs`] (its cell sized by the largest of them); each larger sphere is tested against
/// every other. The cost is `O(n log n + n·L)` for `L` large spheres, against the `n²/2` of
/// the all-pairs loop; the pairs are exactly the all-pairs loop's (`tests` below). Up to
/// [`ALL_PAIRS_BODIES`] spheres the all-pairs loop itself is cheaper, and runs instead.
pub fn sphere_pairs(x: &[Vec3], radius: &[f64], margin: f64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    sphere_pairs_into(x, radius, margin, &mut out);
    out
}

/// [`sphere_pairs`] into `out` (cleared first), whose memory is reused (the grid's path, above
/// [`ALL_PAIRS_BODIES`], still builds its own lists each call).
pub fn sphere_pairs_into(x: &[Vec3], radius: &[f64], margin: f64, out: &mut Vec<(usize, usize)>) {
    if x.len() <= ALL_PAIRS_BODIES {
        out.clear();
        all_pairs(x, radius, margin, out);
    } else {
        sphere_pairs_grid_into(x, radius, margin, out);
    }
}

/// The pairs of [`sphere_pairs_kept`] kept from call to call, with what they were found at.
#[derive(Clone, Debug, Default)]
pub struct KeptPairs {
    /// The centres and radii the pairs were found at.
    x: Vec<Vec3>,
    radius: Vec<f64>,
    /// The margin they were found with: the call's margin and the slack (m).
    reach: f64,
    /// Every pair within that margin, sorted.
    pairs: Vec<(usize, usize)>,
    /// How many calls searched, and how many filtered the kept pairs (for the tests).
    searches: usize,
    reuses: usize,
    /// The calls in a row that searched (bodies on the move).
    misses: usize,
}

impl KeptPairs {
    /// How many calls searched anew and how many reused the kept pairs.
    pub fn counts(&self) -> (usize, usize) {
        (self.searches, self.reuses)
    }
}

/// [`sphere_pairs_into`] with the pairs kept from call to call, as a broadphase with loose
/// bounds keeps them (Rapier's keeps its tree's boxes enlarged and updates a pair only when a
/// box leaves its enlarged one): a search finds the pairs within the margin plus a slack of a
/// quarter of the median radius, and keeps them with the centres and radii it saw. A later call
/// whose radii are those and whose centres have each moved at most `d`, with
/// `margin + 2·d` inside the kept margin (a pair that touches now was within it then), takes
/// the kept pairs that pass the exact test `|x_i − x_j| ≤ r_i + r_j + margin` instead of
/// searching: the same pairs, in the same order, as [`sphere_pairs_into`] (the kept list is a
/// sorted superset, tested as each path tests). Otherwise it searches again. (On the 210-box
/// pyramid the search was a third of the narrow phase's instructions; at rest it runs once.)
pub fn sphere_pairs_kept(x: &[Vec3], radius: &[f64], margin: f64, kept: &mut KeptPairs, out: &mut Vec<(usize, usize)>) {
    let finite = margin.is_finite() && margin >= 0.0 && radius.iter().all(|r| r.is_finite());
    if x.len() < 2 || !finite {
        sphere_pairs_into(x, radius, margin, out);
        return;
    }
    use rayon::prelude::*;
    // (On all threads for many bodies: on one, the check and the filter were a serial part of
    // the 4,095-box pyramid's two-thread frame, where the search they replace ran on both.)
    let parallel = rayon::current_num_threads() > 1 && x.len() >= PARALLEL_BALLS;
    let moved = || {
        let d2 = |(a, b): (&Vec3, &Vec3)| (a - b).norm_squared();
        let d2 = if parallel {
            x.par_iter().zip(&kept.x).with_min_len(PARALLEL_BALLS).map(d2).reduce(|| 0.0, f64::max)
        } else {
            x.iter().zip(&kept.x).map(d2).fold(0.0, f64::max)
        };
        d2.sqrt()
    };
    let r_max = radius.iter().copied().fold(0.0, f64::max);
    let fits = |d: f64| {
        let need = margin + 2.0 * d;
        need.is_finite() && need + 1e-9 * (kept.reach + 2.0 * r_max) < kept.reach
    };
    if kept.x.len() == x.len() && kept.radius == radius && fits(moved()) {
        kept.reuses += 1;
        kept.misses = 0;
    } else {
        // Bodies on the move outrun the slack: while calls search one after the other, they
        // search at the margin itself and keep nothing, but for every eighth, which tries the
        // slack again.
        kept.misses += 1;
        kept.searches += 1;
        kept.x.clear();
        if kept.misses % 8 != 1 {
            sphere_pairs_into(x, radius, margin, out);
            return;
        }
        let mut sorted = radius.to_vec();
        let mid = sorted.len() / 2;
        let median = *sorted.select_nth_unstable_by(mid, f64::total_cmp).1;
        kept.reach = margin + 0.25 * median.max(0.0);
        sphere_pairs_into(x, radius, kept.reach, &mut kept.pairs);
        kept.x.extend_from_slice(x);
        kept.radius.clear();
        kept.radius.extend_from_slice(radius);
    }
    let touch = |&(i, j): &(usize, usize)| {
        let reach = radius[i] + radius[j] + margin;
        (x[i] - x[j]).norm_squared() <= reach * reach
    };
    if parallel {
        // Each task's pieces filtered into its own list, then copied into place on all threads
        // (the same order; a parallel extension of the filter gathered its pieces on the calling
        // thread and took longer on two threads than on one).
        let parts: Vec<Vec<(usize, usize)>> =
            kept.pairs.par_chunks(PARALLEL_BALLS).map(|c| c.iter().copied().filter(touch).collect()).collect();
        // (Every place is written over below.)
        out.resize(parts.iter().map(Vec::len).sum(), (0, 0));
        let slices = consecutive_slices(out, parts.iter().map(Vec::len));
        slices.into_par_iter().zip(&parts).for_each(|(to, from)| to.copy_from_slice(from));
    } else {
        out.clear();
        out.extend(kept.pairs.iter().copied().filter(touch));
    }
}

/// The most spheres [`sphere_pairs`] tests pair by pair: below this the grid's sort and cell
/// runs cost more than the `n²/2` distance tests (spheres on a lattice, instructions a call:
/// 39,000 against 7,700 at 21 spheres, 216,000 against 126,000 at 100; even near 190).
pub const ALL_PAIRS_BODIES: usize = 128;

/// [`sphere_pairs`] on the grid at any count (the tests compare it with the all-pairs loop).
pub fn sphere_pairs_grid(x: &[Vec3], radius: &[f64], margin: f64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    sphere_pairs_grid_into(x, radius, margin, &mut out);
    out
}

/// [`sphere_pairs_grid`] into `out` (its old contents dropped), whose memory is reused.
fn sphere_pairs_grid_into(x: &[Vec3], radius: &[f64], margin: f64, out: &mut Vec<(usize, usize)>) {
    let n = x.len();
    if n < 2 {
        out.clear();
        return;
    }
    // (The median by selection, not a sort of all the radii.)
    let mut sorted: Vec<f64> = radius.to_vec();
    let limit = 4.0 * *sorted.select_nth_unstable_by(n / 2, f64::total_cmp).1;
    let large: Vec<usize> = (0..n).filter(|&i| radius[i] > limit || radius[i].is_nan()).collect();
    let small_radius: Vec<f64> = (0..n).map(|i| if radius[i] <= limit { radius[i] } else { 0.0 }).collect();
    // The grid keeps pairs strictly below its reach; a slightly wider reach, then the exact
    // test, keeps the pairs that touch it exactly (as the all-pairs loop does).
    let wide = margin.max(0.0) * (1.0 + 1e-9) + 1e-12 * limit.max(f64::MIN_POSITIVE);
    let touch = |i: usize, j: usize| {
        let reach = radius[i] + radius[j] + margin;
        (x[i] - x[j]).norm_squared() <= reach * reach
    };
    // (The exact test as `pairs`' filter: the same pairs as filtering its list, on all threads.)
    pairs_into(x, &small_radius, wide, |i, j| !touch(i, j), out);
    for &l in &large {
        for k in 0..n {
            // A pair of two large spheres is found once, from the lower index.
            if k != l && !(large.binary_search(&k).is_ok() && k < l) && touch(l, k) {
                out.push((l.min(k), l.max(k)));
            }
        }
    }
    if !large.is_empty() {
        out.sort_unstable();
    }
}

/// The all-pairs loop of [`sphere_pairs`] (its path for few spheres, and its reference in the
/// tests): `|x_i − x_j| ≤ r_i + r_j + margin`.
pub fn sphere_pairs_brute_force(x: &[Vec3], radius: &[f64], margin: f64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    all_pairs(x, radius, margin, &mut out);
    out
}

/// [`sphere_pairs_brute_force`] appended to `out`.
fn all_pairs(x: &[Vec3], radius: &[f64], margin: f64, out: &mut Vec<(usize, usize)>) {
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let reach = radius[i] + radius[j] + margin;
            if (x[i] - x[j]).norm_squared() <= reach * reach {
                out.push((i, j));
            }
        }
    }
}

/// The all-pairs reference, for tests.
pub fn pairs_brute_force(x: &[Vec3], radius: &[f64], margin: f64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            if radius[i] > 0.0 && radius[j] > 0.0 {
                let reach = radius[i] + radius[j] + margin;
                if (x[i] - x[j]).norm_squared() < reach * reach {
                    out.push((i, j));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Property: on random scenes (sizes, densities, radii, some zero radii, negative
    /// coordinates) the grid finds exactly the brute-force pairs.
    #[test]
    fn the_grid_finds_the_same_pairs_as_brute_force_on_random_scenes() {
        let mut rng = Rng::new(99);
        for case in 0..200 {
            let n = 1 + rng.below(300);
            let extent = 0.2 + 5.0 * rng.next_f64();
            let r_max = 0.01 + 0.3 * rng.next_f64();
            let x: Vec<Vec3> = (0..n)
                .map(|_| Vec3::new(rng.next_f64() - 0.5, rng.next_f64() - 0.5, rng.next_f64() - 0.5) * extent)
                .collect();
            let radius: Vec<f64> =
                (0..n).map(|_| if rng.next_f64() < 0.1 { 0.0 } else { r_max * (0.2 + 0.8 * rng.next_f64()) }).collect();
            let margin = 0.05 * rng.next_f64();
            assert_eq!(pairs(&x, &radius, margin, |_, _| false), pairs_brute_force(&x, &radius, margin), "case {case}");
        }
    }

    /// The kept pairs give exactly the pairs of a search, in order, at every call of a random
    /// walk (bodies of mixed sizes, some drifting, the margin changing from call to call, a
    /// jump that must search again), and they are reused between searches.
    #[test]
    fn kept_pairs_are_the_pairs_of_a_search_at_every_call() {
        let mut rng = Rng::new(17);
        // (1,500 spheres on two threads: the check and the filter in parallel tasks.)
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for (n, calls) in [(40, 200), (300, 200), (1_500, 60)] {
            let mut x: Vec<Vec3> = (0..n)
                .map(|_| Vec3::new(rng.next_f64() - 0.5, rng.next_f64() - 0.5, rng.next_f64() - 0.5) * 3.0)
                .collect();
            let radius: Vec<f64> = (0..n).map(|k| if k % 50 == 7 { 1.5 } else { 0.1 + 0.1 * rng.next_f64() }).collect();
            let (mut kept, mut out) = (KeptPairs::default(), Vec::new());
            for call in 0..calls {
                for p in x.iter_mut() {
                    *p += Vec3::new(rng.next_f64() - 0.5, rng.next_f64() - 0.5, rng.next_f64() - 0.5) * 0.004;
                }
                if call == calls / 2 {
                    x[3].x += 0.5;
                }
                let margin = 0.01 + 0.02 * rng.next_f64();
                pool.install(|| sphere_pairs_kept(&x, &radius, margin, &mut kept, &mut out));
                assert_eq!(out, sphere_pairs(&x, &radius, margin), "{n} spheres, call {call}");
            }
            let (searches, reuses) = kept.counts();
            assert!(searches >= 2 && reuses > calls * 3 / 4, "{n} spheres: {searches} searches, {reuses} reuses");
        }
    }

    /// On two threads, above `PARALLEL_BALLS` (the runs of cells in parallel tasks, their
    /// pieces gathered by first index): the brute-force pairs, in order, for particles and for
    /// bounding spheres of mixed sizes, with a skip rule too.
    #[test]
    fn the_parallel_grid_finds_the_brute_force_pairs_in_order() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let mut rng = Rng::new(5);
        for case in 0..3 {
            let n = 2_000 + 700 * case;
            let x: Vec<Vec3> = (0..n)
                .map(|_| Vec3::new(rng.next_f64() - 0.5, rng.next_f64() - 0.5, rng.next_f64() - 0.5) * 1.6)
                .collect();
            let radius: Vec<f64> =
                (0..n).map(|_| if rng.next_f64() < 0.002 { 0.5 } else { 0.03 + 0.04 * rng.next_f64() }).collect();
            let small: Vec<f64> = radius.iter().map(|&r| r.min(0.07)).collect();
            let skip = |i: usize, j: usize| (i + j).is_multiple_of(7);
            let (found, spheres) =
                pool.install(|| (pairs(&x, &small, 0.01, skip), sphere_pairs_grid(&x, &radius, 0.01)));
            let mut expected = pairs_brute_force(&x, &small, 0.01);
            expected.retain(|&(i, j)| !skip(i, j));
            assert!(expected.len() > n, "case {case}: {} pairs", expected.len());
            assert_eq!(found, expected, "case {case}");
            assert_eq!(spheres, sphere_pairs_brute_force(&x, &radius, 0.01), "case {case}");
        }
    }

    /// A list kept from call to call (`pairs_into`, `sphere_pairs_into`) holds exactly the
    /// pairs of a fresh one, whether it held more pairs, fewer or none before: on one thread and
    /// on two (where the gather writes over a list that keeps its length).
    #[test]
    fn a_kept_list_gets_the_pairs_of_a_fresh_one() {
        let mut rng = Rng::new(23);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let (mut kept, mut kept_spheres) = (Vec::new(), Vec::new());
            // (Dense, sparse, dense again: the list grows, shrinks and grows.)
            for (call, spread) in [1.2, 4.0, 1.0, 6.0].into_iter().enumerate() {
                let n = 1_500;
                let x: Vec<Vec3> = (0..n)
                    .map(|_| Vec3::new(rng.next_f64() - 0.5, rng.next_f64() - 0.5, rng.next_f64() - 0.5) * spread)
                    .collect();
                let radius: Vec<f64> =
                    (0..n).map(|k| if k == 11 { 0.6 } else { 0.03 + 0.03 * rng.next_f64() }).collect();
                pool.install(|| {
                    pairs_into(&x, &radius, 0.01, |_, _| false, &mut kept);
                    sphere_pairs_into(&x, &radius, 0.01, &mut kept_spheres);
                });
                assert_eq!(kept, pairs_brute_force(&x, &radius, 0.01), "{threads} thread(s), call {call}");
                assert_eq!(
                    kept_spheres,
                    sphere_pairs_brute_force(&x, &radius, 0.01),
                    "{threads} thread(s), call {call}"
                );
                assert!(!kept.is_empty(), "call {call}: no pairs to compare");
            }
        }
    }

    /// Property: bounding spheres of mixed sizes (a few up to 100 times the others, as a slab
    /// or a heavy box among small bodies; some exactly touching) give exactly the all-pairs
    /// loop's pairs.
    #[test]
    fn mixed_sizes_give_the_all_pairs_loops_pairs() {
        let mut rng = Rng::new(7);
        for case in 0..200 {
            let n = 1 + rng.below(200);
            let extent = 0.5 + 5.0 * rng.next_f64();
            let x: Vec<Vec3> = (0..n)
                .map(|_| Vec3::new(rng.next_f64() - 0.5, rng.next_f64() - 0.5, rng.next_f64() - 0.5) * extent)
                .collect();
            let radius: Vec<f64> = (0..n)
                .map(|_| {
                    let r = 0.02 + 0.1 * rng.next_f64();
                    if rng.next_f64() < 0.05 {
                        r * (5.0 + 95.0 * rng.next_f64())
                    } else {
                        r
                    }
                })
                .collect();
            let margin = if case % 3 == 0 { 0.0 } else { 0.05 * rng.next_f64() };
            let all = sphere_pairs_brute_force(&x, &radius, margin);
            assert_eq!(sphere_pairs_grid(&x, &radius, margin), all, "case {case}");
            assert_eq!(sphere_pairs(&x, &radius, margin), all, "case {case}");
        }
        // Exactly touching spheres count, as in the all-pairs loop.
        let x = vec![Vec3::zeros(), Vec3::new(0.5, 0.0, 0.0), Vec3::new(0.0, 10.0, 0.0)];
        let r = vec![0.25, 0.25, 9.75];
        assert_eq!(sphere_pairs(&x, &r, 0.0), vec![(0, 1), (0, 2)]);
        assert_eq!(sphere_pairs_grid(&x, &r, 0.0), vec![(0, 1), (0, 2)]);
        assert_eq!(sphere_pairs_brute_force(&x, &r, 0.0), vec![(0, 1), (0, 2)]);
    }

    /// Particles at the ends of the f64 range (found by the fuzz test): no overflow, no pair
    /// twice, and the same pairs as the all-pairs test.
    #[test]
    fn far_out_particles_do_not_overflow_the_grid() {
        let x = vec![
            Vec3::new(-1e308, 0.0, 0.0),
            Vec3::new(-1e308, 0.0, 0.0),
            Vec3::new(1e308, 1e308, -1e308),
            Vec3::new(1e308, 1e308, -1e308),
            Vec3::zeros(),
        ];
        let r = vec![0.05; x.len()];
        assert_eq!(pairs(&x, &r, 0.01, |_, _| false), pairs_brute_force(&x, &r, 0.01));
        assert_eq!(pairs(&x, &r, 0.01, |_, _| false), vec![(0, 1), (2, 3)]);
    }

    /// Particles on both sides of the edge of the cells' clamped range (2²⁰ cells from the
    /// origin on each axis), and on the edge itself: the grid finds exactly the brute-force pairs,
    /// each once.
    #[test]
    fn pairs_across_the_clamped_edge_are_found() {
        let (r, margin) = (0.05, 0.01);
        let cell = 2.0 * r + margin;
        let edge = cell * (1u64 << (COORD_BITS - 1)) as f64;
        let mut x = Vec::new();
        for side in [-1.0, 1.0] {
            for k in -6..=6 {
                let along = side * edge + 0.04 * f64::from(k);
                x.push(Vec3::new(along, 0.0, 0.0));
                x.push(Vec3::new(0.0, along, 0.03 * f64::from(k)));
                x.push(Vec3::new(along, along, along));
            }
        }
        let radius = vec![r; x.len()];
        let grid = pairs(&x, &radius, margin, |_, _| false);
        assert_eq!(grid, pairs_brute_force(&x, &radius, margin));
        assert!(grid.len() > 3 * 12, "the particles touch along each line ({} pairs)", grid.len());
    }

    #[test]
    fn skipped_pairs_are_left_out() {
        let x = vec![Vec3::zeros(), Vec3::new(0.1, 0.0, 0.0), Vec3::new(0.19, 0.0, 0.0)];
        let r = vec![0.1; 3];
        assert_eq!(pairs(&x, &r, 0.0, |_, _| false), vec![(0, 1), (0, 2), (1, 2)]);
        assert_eq!(pairs(&x, &r, 0.0, |i, j| (i, j) == (0, 1)), vec![(0, 2), (1, 2)]);
    }
}
