//! Making the colours of the coloured sweeps (`rigid_order = "colored"`, see [`super::colors`]):
//! the contacts sorted by colour when the rows are prepared, so that a colour's rows lie
//! together in memory, and each group's joints and manifolds coloured greedily when the islands
//! are built.

use super::colors::ColorSpan;
use super::*;

mod take;
#[cfg(test)]
mod tests;

use take::{color_in_order, recolor_keeping, take_color};

/// Colours before the overflow colour.
pub(super) const COLORS: usize = 64;

/// Puts the contacts of each colour together (contacts of one pair stay together, in order),
/// colouring the pairs as [`RigidSi::color_groups`] will, so that the
/// rows built from them lie in memory in the order the coloured sweeps visit them: a colour's
/// rows scattered over the whole list cost the sweeps about twice their time on the 4,095-box
/// pyramid (cache misses). [`RigidSi::color_groups`] then finds the same colours again.
///
/// The contacts are the concatenation of `parts` (as the narrow phase leaves them,
/// [`solverlab_core::rigid::rigid_contacts_parts`]; one pair's contacts lie in one part), and
/// are gathered from there into `out` in the new order (its old contents dropped), with no
/// copy of the joined list in between.
///
/// Returns the manifolds' runs `(start, end)` in the new order (what `pair_runs` finds on the
/// sorted list). With `diagonals` (`block_pairs`), each run of three or four points is ordered
/// as `pair_diagonals` orders it, in the same copy: the farthest point from the first comes
/// second (found on all threads for many contacts).
///
/// The lists it works in are kept in `keep` (and the runs returned are its `runs`), so that a
/// step allocates nothing here. `pair_runs`, if given, are the parts' pairs' runs as the narrow
/// phase recorded them ([`solverlab_core::rigid::PairRun`]); else the parts are scanned for
/// them.
#[allow(clippy::too_many_arguments)]
pub(super) fn sort_contacts_by_color<'k>(
    scene: &Scene,
    parts: &[Vec<RigidContact>],
    pair_runs: Option<&[Vec<solverlab_core::rigid::PairRun>]>,
    out: &mut Vec<RigidContact>,
    keep: &'k mut SortScratch,
    diagonals: bool,
    rule: StaticColors,
) -> &'k [(usize, usize)] {
    keep.calls += 1;
    let SortScratch {
        used,
        segments,
        runs,
        found,
        run_colors,
        runs_given,
        placed,
        sorted_fresh,
        same,
        keep_colors,
        kept,
        ..
    } = keep;
    // Each part's pairs' runs, the parts on all threads when there are several (the scan
    // reads every contact; on one thread it was 1.3 % of the 4,095-box pyramid's two-thread
    // frame), then their colours in order.
    found.resize_with(parts.len().max(found.len()), Vec::new);
    let body = |b: Other| match b {
        Other::Body(k) => Some(k),
        Other::Collider(_) => None,
    };
    let scan = |(part, (contacts, runs)): (usize, (&Vec<RigidContact>, &mut Vec<Run>))| {
        runs.clear();
        if let Some(given) = pair_runs {
            runs.extend(given[part].iter().map(|r| Run {
                a: r.a,
                b: body(r.b),
                seg: Segment { color: 0, part: part as u32, start: r.start, end: r.end },
            }));
            return;
        }
        let mut start = 0;
        while start < contacts.len() {
            let (a, b) = (contacts[start].a, contacts[start].b);
            let end =
                (start..contacts.len()).find(|&k| (contacts[k].a, contacts[k].b) != (a, b)).unwrap_or(contacts.len());
            runs.push(Run { a, b: body(b), seg: Segment { color: 0, part: part as u32, start, end } });
            start = end;
        }
    };
    let found = &mut found[..parts.len()];
    if parts.len() > 1 {
        parts.par_iter().zip(found.par_iter_mut()).enumerate().for_each(scan);
    } else {
        parts.iter().zip(found.iter_mut()).enumerate().for_each(scan);
    }
    // The runs coloured in order (the greedy colouring runs on the calling thread; a step whose
    // runs join the last one's pairs in the same order takes its colours again, which the
    // colouring would find: in a resting pile, every step), then placed colour by colour,
    // each colour's in that order (a counting sort: stable, as the comparison sort it replaced
    // was).
    let count: usize = found.iter().map(Vec::len).sum();
    let given = || found.iter().flatten().map(|run| (run.a, run.b));
    *same = runs_given.len() == count && given().eq(runs_given.iter().copied());
    if !*same {
        used.clear();
        used.resize(scene.rigid.len(), 0);
        if *keep_colors {
            recolor_keeping(scene, rule, used, runs_given, run_colors, given(), kept);
        } else {
            run_colors.clear();
            run_colors.extend(found.iter().flatten().map(|run| take_color(scene, used, run.a, run.b, rule) as u8));
        }
        runs_given.clear();
        runs_given.extend(given());
    }
    let mut next = [0usize; COLORS + 2];
    for &c in run_colors.iter() {
        next[c as usize + 1] += 1;
    }
    for c in 0..=COLORS {
        next[c + 1] += next[c];
    }
    segments.clear();
    segments.resize(run_colors.len(), Segment::default());
    placed.clear();
    for (run, &c) in found.iter().flatten().zip(run_colors.iter()) {
        segments[next[c as usize]] = Segment { color: c as usize, ..run.seg };
        placed.push(next[c as usize] as u32);
        next[c as usize] += 1;
    }
    // Per run, the point that comes second: with `diagonals`, the farthest from the first.
    let second = |seg: &Segment| {
        let (s, e) = (seg.start, seg.end);
        if diagonals && (3..=4).contains(&(e - s)) {
            super::prepare::farthest(&parts[seg.part as usize][s..e])
        } else {
            1
        }
    };
    // Each run's place in the sorted list, then the copy run by run (one copy of a run's
    // contacts, not one call a contact), its second point found and swapped in as the run is
    // copied (found in a pass of its own, each run was read twice: 0.9 % of the 4,095-box
    // pyramid's run); on all threads, in pieces of whole runs, for many contacts.
    runs.clear();
    let mut total = 0;
    for seg in segments.iter() {
        runs.push((total, total + seg.end - seg.start));
        total += seg.end - seg.start;
    }
    match parts.iter().find_map(|p| p.first()) {
        Some(&any) => out.resize(total, any),
        None => out.clear(),
    }
    let copy = |(segs, dest): (&[Segment], &mut [RigidContact])| {
        let mut at = 0;
        for seg in segs {
            let (n, far) = (seg.end - seg.start, second(seg));
            let (run, from) = (&mut dest[at..at + n], &parts[seg.part as usize][seg.start..seg.end]);
            run.copy_from_slice(from);
            // (The second and the farthest point trade places, read from the source: two
            // copies, where a swap in place made three.)
            if far < n && far != 1 {
                (run[1], run[far]) = (from[far], from[1]);
            }
            at += n;
        }
    };
    if total < par_min() {
        copy((&segments[..], &mut out[..]));
    } else {
        let mut pieces = Vec::with_capacity(2 * total / par_min() + 1);
        let (mut rest, mut k) = (&mut out[..], 0);
        while k < segments.len() {
            let (first, mut n) = (k, 0);
            while k < segments.len() && n < par_min() / 4 {
                n += segments[k].end - segments[k].start;
                k += 1;
            }
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
            pieces.push((&segments[first..k], head));
            rest = tail;
        }
        pieces.into_par_iter().for_each(copy);
    }
    // The segments hold the manifolds' colours, for `RigidSi::color_groups`.
    *sorted_fresh = true;
    runs
}

/// One pair's run of contacts as [`sort_contacts_by_color`] scans a part: its bodies and its
/// place.
#[derive(Clone, Copy, Debug)]
struct Run {
    a: usize,
    b: Option<usize>,
    seg: Segment,
}

/// One pair's run of contacts in [`sort_contacts_by_color`]: its colour, and its place in the
/// narrow phase's parts.
#[derive(Clone, Copy, Debug, Default)]
struct Segment {
    color: usize,
    part: u32,
    start: usize,
    end: usize,
}

/// The lists [`sort_contacts_by_color`] works in, kept from step to step.
#[derive(Default)]
pub(super) struct SortScratch {
    /// Per body, the colours taken.
    used: Vec<u64>,
    /// Per pair's run: its colour, part and place.
    segments: Vec<Segment>,
    /// The manifolds' runs in the new order.
    runs: Vec<(usize, usize)>,
    /// [`RigidSi::color_groups`]'s joints' or manifolds' colours with their indices.
    keyed: Vec<(usize, usize)>,
    /// Per part, its pairs' runs.
    found: Vec<Vec<Run>>,
    /// Per pair's run in the narrow phase's order, its colour, and its bodies when coloured
    /// (forgotten by [`SortScratch::forget`]).
    run_colors: Vec<u8>,
    runs_given: Vec<(usize, Option<usize>)>,
    /// Whether a colouring keeps the last one's colours (`PgsConfig::keep_colors`), and its
    /// working list ([`recolor_keeping`]).
    pub(super) keep_colors: bool,
    kept: Vec<(u8, bool)>,
    /// Whether `segments` hold the colours of the last sort's manifolds (in the sorted order),
    /// which [`RigidSi::color_groups`] finds again, not yet taken by it.
    sorted_fresh: bool,
    /// Per pair's run in the narrow phase's order, its manifold's place in the sorted order
    /// (empty when the manifolds are in the narrow phase's order), for the warm-start map
    /// (`RigidSi::finish`).
    pub(super) placed: Vec<u32>,
    /// How many sorts by colour ran, and whether the last found the same pairs in the same
    /// order as the one before it (and so took its colours again): the manifolds are then
    /// those of the last sort, one for one ([`WarmMap::ready`]).
    pub(super) calls: u64,
    pub(super) same: bool,
    /// The joint order the last colouring of every joint was given, the order it made, and
    /// its count per colour ([`RigidSi::color_groups`]; forgotten by [`SortScratch::forget`]).
    joints_given: Vec<usize>,
    joints_colored: Vec<usize>,
    joint_counts: Vec<usize>,
}

impl SortScratch {
    /// The manifolds' runs `(start, end)` of the last sort by colour.
    pub(super) fn runs(&self) -> &[(usize, usize)] {
        &self.runs
    }

    /// Whether the last sort by colour coloured the `count` runs it returned, and no colouring
    /// has taken its colours since ([`RigidSi::color_groups`] then takes them).
    pub(super) fn sorted_by_color(&self, count: usize) -> bool {
        self.sorted_fresh && self.segments.len() == count && self.runs.len() == count
    }

    /// The colour of run `i` of the last sort by colour ([`COLORS`]: the overflow colour).
    pub(super) fn run_color(&self, i: usize) -> usize {
        self.segments[i].color
    }

    /// Forgets the last colourings of the joints and of the contacts' pairs (a new run's scene
    /// may join other bodies, or fix others).
    pub(super) fn forget(&mut self) {
        self.joints_given.clear();
        self.runs_given.clear();
    }
}

impl RigidSi {
    /// Colours every group's joints and manifolds (see the module docs): reorders
    /// `joint_order` and `order` within each group by colour and records the colours.
    pub(super) fn color_groups(&mut self, scene: &Scene, rule: StaticColors) {
        self.colors.clear();
        let n = scene.rigid.len();
        let mut keep = std::mem::take(&mut self.sort_scratch);
        let SortScratch { used, keyed, segments, sorted_fresh, joints_given, joints_colored, joint_counts, .. } =
            &mut keep;
        used.clear();
        used.resize(n, 0);
        for g in 0..self.groups.len() {
            let group = self.groups[g];
            let first = self.colors.len();
            let mut count = [(0usize, 0usize); COLORS + 1];
            // A group of every joint in the order the last step's colouring was given takes
            // that colouring again (the joints and their bodies are the step's; on two threads,
            // colouring the 100 × 100 joint grid's 19,802 joints again was 2 % of its frame).
            let all_joints = group.j == (0, self.joint_order.len()) && !self.joint_order.is_empty();
            if all_joints && joints_given.as_slice() == self.joint_order.as_slice() {
                self.joint_order.copy_from_slice(joints_colored);
                for (c, &k) in count.iter_mut().zip(joint_counts.iter()) {
                    c.0 = k;
                }
            } else {
                if all_joints {
                    joints_given.clone_from(&self.joint_order);
                }
                // (The contacts take their colours afresh: the joints' colours are all visited
                // before them.)
                let joint = |k: usize| (scene.joints[k].a, scene.joints[k].b);
                let rows = &mut self.joint_order[group.j.0..group.j.1];
                color_in_order(scene, StaticColors::Lowest, used, keyed, rows, joint, |c| count[c].0 += 1);
                if all_joints {
                    joints_colored.clone_from(&self.joint_order);
                    joint_counts.clear();
                    joint_counts.extend(count.iter().map(|c| c.0));
                } else {
                    joints_given.clear();
                }
            }
            // A group of every manifold in the sorted order takes the colours the sort by
            // colour gave them (greedy colouring in the order of its own colours finds them
            // again, and the order stays as it is; on two threads, colouring again was 1.2 % of
            // the 4,095-box pyramid's frame).
            let whole = group.m == (0, self.manifolds.len()) && self.order.len() == self.manifolds.len();
            if whole && *sorted_fresh && segments.len() == self.manifolds.len() {
                debug_assert!(self.order.iter().enumerate().all(|(o, &i)| o == i));
                for s in segments.iter() {
                    count[s.color].1 += 1;
                }
            } else {
                // (This group's bodies free their colours for the next group.)
                let (points, manifolds) = (&self.points, &self.manifolds);
                let manifold = |i: usize| (points[manifolds[i].start].a, points[manifolds[i].start].b);
                let rows = &mut self.order[group.m.0..group.m.1];
                color_in_order(scene, rule, used, keyed, rows, manifold, |c| count[c].1 += 1);
            }
            let (mut j, mut m) = (group.j.0, group.m.0);
            let span = |j: (usize, usize), m: (usize, usize), c: usize| ColorSpan {
                j,
                m,
                overflow: c == COLORS,
                batches: (0, 0),
                contiguous: self.order[m.0..m.1].windows(2).all(|w| w[1] == w[0] + 1),
            };
            for (c, &(nj, _)) in count.iter().enumerate().filter(|(_, n)| n.0 > 0) {
                self.colors.push(span((j, j + nj), (m, m), c));
                j += nj;
            }
            for (c, &(_, nm)) in count.iter().enumerate().filter(|(_, n)| n.1 > 0) {
                self.colors.push(span((j, j), (m, m + nm), c));
                m += nm;
            }
            self.groups[g].colors = (first, self.colors.len());
        }
        *sorted_fresh = false;
        self.sort_scratch = keep;
    }
}
