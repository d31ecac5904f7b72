//! Making the colours of the coloured sweeps (`rigid_order = "colored"`, see [`super::colors`]):
//! the contacts sorted by colour when the rows are prepared, so that a colour's rows lie
//! together in memory, and each group's joints and manifolds coloured greedily when the islands
//! are built.

use super::colors::ColorSpan;
use super::*;

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

/// The colours a static pair may take under [`StaticColors::Last`], and no other pair: the
/// last 8.
const STATIC_BAND: u64 = !0 << (COLORS - 8);

/// A colour neither body of a row has among the colours `used` (per body, a bit per colour),
/// taken for both: the lowest, but for a row with a fixed body or the world (a static pair)
/// under `rule` ([`StaticColors`]); [`COLORS`] (the overflow colour) when none is free. Fixed
/// bodies take no colour: rows on one fixed body never conflict through it.
fn take_color(scene: &Scene, used: &mut [u64], a: usize, b: Option<usize>, rule: StaticColors) -> usize {
    let movable = |k: usize| !scene.rigid[k].is_fixed();
    let bits = |k: usize, used: &[u64]| if movable(k) { used[k] } else { 0 };
    let free = !(bits(a, used) | b.map_or(0, |k| bits(k, used)));
    let fixed = !movable(a) || b.is_none_or(|k| !movable(k));
    let free = match (rule, fixed) {
        (StaticColors::Lowest, _) => free,
        (StaticColors::AfterFirst, true) => free & !1,
        (StaticColors::AfterFirst, false) => free,
        (StaticColors::Last, true) => free & STATIC_BAND,
        (StaticColors::Last, false) => free & !STATIC_BAND,
    };
    if free == 0 {
        return COLORS;
    }
    let c = match (rule, fixed) {
        (StaticColors::Last, true) => (u64::BITS - 1 - free.leading_zeros()) as usize,
        _ => free.trailing_zeros() as usize,
    };
    for k in std::iter::once(a).chain(b).filter(|&k| movable(k)) {
        used[k] |= 1 << c;
    }
    c
}

/// Colours the runs `pairs` (in order, sorted by their first body) keeping the colours of the
/// last colouring (`last`, coloured `colors`, which is replaced by the new colours): each pair
/// of `last` found again (the first of its equals not yet matched) keeps its colour if neither
/// of its movable bodies has taken that colour in `used`; then the others are coloured greedily
/// in order ([`take_color`]). `kept` is a working list. With `last` not sorted by its first
/// body, or not as long as `colors`, every pair is coloured afresh.
fn recolor_keeping(
    scene: &Scene,
    rule: StaticColors,
    used: &mut [u64],
    last: &[(usize, Option<usize>)],
    colors: &mut Vec<u8>,
    pairs: impl Iterator<Item = (usize, Option<usize>)> + Clone,
    kept: &mut Vec<(u8, bool)>,
) {
    let movable = |k: usize| !scene.rigid[k].is_fixed();
    let sorted = last.windows(2).all(|w| w[0].0 <= w[1].0);
    // `kept[i]`: the last colouring's colour of `last[i]`, and whether a pair took it (none
    // when the last colouring was forgotten, [`SortScratch::forget`]).
    kept.clear();
    if sorted && colors.len() == last.len() {
        kept.extend(colors.iter().map(|&c| (c, false)));
    }
    colors.clear();
    let mut from = 0;
    for (a, b) in pairs.clone() {
        // The first unmatched equal of (a, b) among `last`'s runs of body `a`.
        while from < kept.len() && last[from].0 < a {
            from += 1;
        }
        let found = (from..kept.len()).take_while(|&i| last[i].0 == a).find(|&i| last[i].1 == b && !kept[i].1);
        let c = found.map(|i| (i, kept[i].0)).filter(|&(_, c)| {
            let clash = |k: usize| movable(k) && used[k] & (1 << c) != 0;
            (c as usize) < COLORS && !clash(a) && !b.is_some_and(clash)
        });
        colors.push(match c {
            Some((i, c)) => {
                kept[i].1 = true;
                for k in std::iter::once(a).chain(b).filter(|&k| movable(k)) {
                    used[k] |= 1 << c;
                }
                c
            }
            None => u8::MAX,
        });
    }
    for ((a, b), c) in pairs.zip(colors.iter_mut()) {
        if *c == u8::MAX {
            *c = take_color(scene, used, a, b, rule) as u8;
        }
    }
}

/// Colours the rows `rows` (joints or manifolds, each with the bodies `bodies` gives) greedily
/// in their order ([`take_color`]; `counted` is told each row's colour), reorders them by colour
/// (stably, in the working list `keyed`), and then frees their bodies' colours in `used`.
#[allow(clippy::too_many_arguments)]
fn color_in_order(
    scene: &Scene,
    rule: StaticColors,
    used: &mut [u64],
    keyed: &mut Vec<(usize, usize)>,
    rows: &mut [usize],
    bodies: impl Fn(usize) -> (usize, Option<usize>),
    mut counted: impl FnMut(usize),
) {
    keyed.clear();
    for &k in rows.iter() {
        let (a, b) = bodies(k);
        let c = take_color(scene, used, a, b, rule);
        counted(c);
        keyed.push((c, k));
    }
    keyed.sort_by_key(|&(c, _)| c);
    for (slot, &(_, k)) in rows.iter_mut().zip(keyed.iter()) {
        *slot = k;
    }
    for &k in rows.iter() {
        let (a, b) = bodies(k);
        used[a] = 0;
        if let Some(b) = b {
            used[b] = 0;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every colour's rows share no movable body; the joints' colours come before the
    /// manifolds'; every awake row is in exactly one colour; and with every body awake the
    /// manifolds lie in memory in the order the sweeps visit them.
    #[test]
    fn colours_share_no_movable_body_and_hold_every_row_once() {
        let cases = [
            ("rigid-pyramid", vec!["base=12".to_string()]),
            ("rigid-joint-grid", vec![]),
            ("rigid-card-house", vec![]),
            ("rigid-ragdoll", vec![]),
        ];
        let cfg = crate::pgs::config::preset_config("soft-step");
        let cfg = PgsConfig { rigid_order: crate::common::order::Order::Colored, ..cfg };
        for (name, sets) in cases {
            let scene = solverlab_scenes::resolve(name, &sets).unwrap();
            let mut st = scene.initial_state(scene.dt).rigid;
            let mut si = RigidSi::default();
            si.prepare(&scene, &mut st, &cfg, scene.dt / 4.0, 0.0, 4);
            // (The batched points' rows written whole, for the check of their bodies.)
            si.store_full();
            assert_eq!(si.groups.len(), 1, "{name}: coloured sweeps are one group");
            let (first, last) = si.groups[0].colors;
            let (mut joints, mut manifolds) = (Vec::new(), Vec::new());
            let mut seen_manifold_colour = false;
            for span in &si.colors[first..last] {
                let mut bodies = Vec::new();
                for (&k, rows) in si.joint_order[span.j.0..span.j.1].iter().zip(&si.joints[span.j.0..span.j.1]) {
                    assert!(!seen_manifold_colour, "{name}: a joint colour after a manifold colour");
                    joints.push(k);
                    let (a, b) = rows.bodies();
                    assert_eq!((a, b), (scene.joints[k].a, scene.joints[k].b), "{name}: joint {k}'s rows in its place");
                    bodies.extend(std::iter::once(a).chain(b));
                }
                for &i in &si.order[span.m.0..span.m.1] {
                    seen_manifold_colour = true;
                    manifolds.push(i);
                    let p = &si.points[si.manifolds[i].start];
                    bodies.extend(std::iter::once(p.a).chain(p.b));
                }
                bodies.retain(|&k| !scene.rigid[k].is_fixed());
                let count = bodies.len();
                bodies.sort_unstable();
                bodies.dedup();
                assert!(span.overflow || bodies.len() == count, "{name}: a colour shares a movable body");
            }
            joints.sort_unstable();
            manifolds.sort_unstable();
            assert_eq!(joints, (0..scene.joints.len()).collect::<Vec<_>>(), "{name}: joints");
            assert_eq!(manifolds, (0..si.manifolds.len()).collect::<Vec<_>>(), "{name}: manifolds");
            assert!(si.order.windows(2).all(|w| w[1] == w[0] + 1), "{name}: manifolds out of colour order");
            assert!(name != "rigid-pyramid" || si.manifolds.len() > 100, "{name}: the pyramid touches");
            // The colours the sort gave (taken again above) are those colouring afresh finds.
            let spans = |si: &RigidSi| si.colors.iter().map(|c| (c.m, c.j, c.overflow)).collect::<Vec<_>>();
            let (taken, order) = (spans(&si), si.order.clone());
            assert!(!si.sort_scratch.sorted_fresh, "{name}: the sort's colours not taken");
            si.color_groups(&scene, cfg.static_colors);
            assert_eq!(spans(&si), taken, "{name}: colours");
            assert_eq!(si.order, order, "{name}: order");
        }
    }

    /// The 78-box pyramid (base 12) and its contacts at rest, within 2 cm.
    fn pyramid_contacts() -> (Scene, Vec<RigidContact>) {
        let scene = solverlab_scenes::resolve("rigid-pyramid", &["base=12".to_string()]).unwrap();
        let st = scene.initial_state(scene.dt).rigid;
        let mut all = Vec::new();
        solverlab_core::rigid::rigid_contacts(&scene, &st, 0.02, &mut all);
        (scene, all)
    }

    /// The sort by colour gathers the same list, in the same order, from the narrow phase's
    /// contacts in one part and cut into three at pair boundaries (as the parallel narrow phase
    /// leaves them), with the same runs; with `diagonals` too.
    #[test]
    fn the_sort_by_colour_is_the_same_from_one_part_and_from_several() {
        let (scene, all) = pyramid_contacts();
        // Cuts where a pair's run starts, near a third and two thirds of the list.
        let cut = |at: usize| (at..all.len()).find(|&k| (all[k].a, all[k].b) != (all[k - 1].a, all[k - 1].b)).unwrap();
        let (c1, c2) = (cut(all.len() / 3), cut(2 * all.len() / 3));
        let parts = vec![all[..c1].to_vec(), all[c1..c2].to_vec(), all[c2..].to_vec()];
        for diagonals in [false, true] {
            let (mut one, mut three) = (Vec::new(), vec![all[0]; 7]);
            let mut keep = SortScratch::default();
            let runs_one = sort_contacts_by_color(
                &scene,
                std::slice::from_ref(&all),
                None,
                &mut one,
                &mut keep,
                diagonals,
                StaticColors::Lowest,
            )
            .to_vec();
            // (Coloured afresh, not from the colours just made.)
            let mut keep = SortScratch::default();
            let runs_three =
                sort_contacts_by_color(&scene, &parts, None, &mut three, &mut keep, diagonals, StaticColors::Lowest)
                    .to_vec();
            assert_eq!(one, three);
            assert_eq!(runs_one, runs_three);
            // The same from the narrow phase's parts with the runs it recorded.
            let st = scene.initial_state(scene.dt).rigid;
            let mut scratch = solverlab_core::rigid::ContactScratch::default();
            let n = solverlab_core::rigid::rigid_contacts_parts(&scene, &st, 0.02, &mut scratch, None);
            let (mut recorded, mut keep) = (Vec::new(), SortScratch::default());
            let given = Some(&scratch.runs[..n]);
            let runs_recorded = sort_contacts_by_color(
                &scene,
                &scratch.parts[..n],
                given,
                &mut recorded,
                &mut keep,
                diagonals,
                StaticColors::Lowest,
            )
            .to_vec();
            assert_eq!((recorded, runs_recorded), (one.clone(), runs_one.clone()), "from the recorded runs");
            assert_eq!(one.len(), all.len());
            assert!(runs_one.len() > 50, "the pyramid's manifolds: {}", runs_one.len());
            assert!(one != all, "the sort changed nothing");
        }
    }

    /// Where the static pairs (a box on the ground) go: under `last` every one after every pair
    /// of two boxes, in the band of the last 8 colours; under `after_first` none in colour 0;
    /// under `lowest` some in colour 0. Every rule keeps a colour's pairs on distinct boxes.
    #[test]
    fn static_pairs_take_the_colours_their_rule_gives() {
        let (scene, all) = pyramid_contacts();
        for rule in [StaticColors::Lowest, StaticColors::AfterFirst, StaticColors::Last] {
            let (mut out, mut keep) = (Vec::new(), SortScratch::default());
            let runs =
                sort_contacts_by_color(&scene, std::slice::from_ref(&all), None, &mut out, &mut keep, true, rule)
                    .to_vec();
            let fixed = |k: usize| scene.rigid[k].is_fixed();
            let is_static = |c: &RigidContact| {
                fixed(c.a)
                    || match c.b {
                        Other::Body(k) => fixed(k),
                        Other::Collider(_) => true,
                    }
            };
            let colours: Vec<(usize, bool)> =
                runs.iter().enumerate().map(|(i, &(s, _))| (keep.run_color(i), is_static(&out[s]))).collect();
            assert!(colours.iter().any(|c| c.1) && colours.iter().any(|c| !c.1), "{rule:?}: both kinds of pair");
            assert!(colours.iter().all(|&(c, _)| c < COLORS), "{rule:?}: no overflow");
            let lowest_static = colours.iter().filter(|c| c.1).map(|c| c.0).min().unwrap();
            let highest_dynamic = colours.iter().filter(|c| !c.1).map(|c| c.0).max().unwrap();
            match rule {
                StaticColors::Lowest => assert_eq!(lowest_static, 0, "lowest"),
                StaticColors::AfterFirst => assert_eq!(lowest_static, 1, "after_first"),
                StaticColors::Last => {
                    assert!(lowest_static >= COLORS - 8 && highest_dynamic < COLORS - 8, "last: {colours:?}");
                    let first_static = colours.iter().position(|c| c.1).unwrap();
                    assert!(colours[first_static..].iter().all(|c| c.1), "last: a static pair before a box pair");
                }
            }
            for c in 0..COLORS {
                let mut bodies: Vec<usize> = runs
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| keep.run_color(*i) == c)
                    .flat_map(|(_, &(s, _))| {
                        let b = match out[s].b {
                            Other::Body(k) => Some(k),
                            Other::Collider(_) => None,
                        };
                        std::iter::once(out[s].a).chain(b)
                    })
                    .filter(|&k| !fixed(k))
                    .collect();
                let n = bodies.len();
                bodies.sort_unstable();
                bodies.dedup();
                assert_eq!(bodies.len(), n, "{rule:?}: colour {c} shares a box");
            }
        }
    }

    /// A step whose pairs are the last step's, in the same order, takes their colours again:
    /// the same list, runs and placement as a sort afresh; one whose pairs differ (a pair
    /// gone) is coloured anew, as afresh; forgotten, the colours are made again.
    #[test]
    fn a_steps_pair_colours_are_taken_again_only_for_the_same_pairs() {
        let (scene, all) = pyramid_contacts();
        // The pyramid's contacts less the first pair's: every pair after it moves up a place.
        let first = (1..all.len()).find(|&k| (all[k].a, all[k].b) != (all[0].a, all[0].b)).unwrap();
        let fewer = all[first..].to_vec();
        let sorted = |keep: &mut SortScratch, contacts: &Vec<RigidContact>| {
            let mut out = Vec::new();
            let runs = sort_contacts_by_color(
                &scene,
                std::slice::from_ref(contacts),
                None,
                &mut out,
                keep,
                true,
                StaticColors::Lowest,
            )
            .to_vec();
            (out, runs, keep.placed.clone(), keep.run_colors.clone())
        };
        let afresh = |contacts: &Vec<RigidContact>| sorted(&mut SortScratch::default(), contacts);
        let mut keep = SortScratch::default();
        let made = sorted(&mut keep, &all);
        assert!(made.3.iter().any(|&c| c > 2), "the pyramid's pairs in several colours");
        assert_eq!(sorted(&mut keep, &all), made, "taken again");
        assert_eq!(sorted(&mut keep, &fewer), afresh(&fewer), "a pair gone: coloured anew");
        // (The colours of the pairs that stayed are not the first step's: taking those again
        // would have been wrong.)
        assert_ne!(afresh(&fewer).3, made.3[1..].to_vec(), "the colours moved with the pairs");
        assert_eq!(sorted(&mut keep, &all), made, "back to the first pairs");
        keep.forget();
        assert!(keep.runs_given.is_empty(), "forgotten");
        assert_eq!(sorted(&mut keep, &all), made, "made again");
    }

    /// With `keep_colors`, a pair found again keeps its colour: the pyramid's pairs less its first
    /// keep the colours they had (where colouring afresh moves them, above), and with the first
    /// pair back, it alone is coloured anew. Every colouring is a colouring: no movable body
    /// in two pairs of one colour.
    #[test]
    fn a_pair_found_again_keeps_its_colour() {
        let (scene, all) = pyramid_contacts();
        let first = (1..all.len()).find(|&k| (all[k].a, all[k].b) != (all[0].a, all[0].b)).unwrap();
        let fewer = all[first..].to_vec();
        let mut keep = SortScratch { keep_colors: true, ..SortScratch::default() };
        let mut colours = |contacts: &Vec<RigidContact>| {
            let mut out = Vec::new();
            let parts = std::slice::from_ref(contacts);
            sort_contacts_by_color(&scene, parts, None, &mut out, &mut keep, true, StaticColors::Last);
            let valid = (0..keep.run_colors.len()).all(|i| {
                (0..i).all(|j| {
                    let ((a, b), (c, d)) = (keep.runs_given[i], keep.runs_given[j]);
                    let shared =
                        [Some(a), b].iter().flatten().any(|&k| !scene.rigid[k].is_fixed() && (k == c || d == Some(k)));
                    !shared || keep.run_colors[i] != keep.run_colors[j] || keep.run_colors[i] as usize == COLORS
                })
            });
            assert!(valid, "two pairs of one colour share a movable body");
            keep.run_colors.clone()
        };
        let made = colours(&all);
        assert!(made.iter().any(|&c| c > 2), "the pyramid's pairs in several colours");
        let kept = colours(&fewer);
        assert_eq!(kept, made[1..].to_vec(), "the pairs that stayed keep their colours");
        let back = colours(&all);
        assert_eq!(back[1..], made[1..], "and keep them when the first pair comes back");
    }

    /// A second step with the same joints takes the first step's joint colouring again: the
    /// same joint order and colour spans as colouring afresh, on the joint grid and the
    /// ragdolls; forgotten, it is made again the same.
    #[test]
    fn a_steps_joint_colouring_is_taken_again() {
        let cfg = crate::pgs::config::preset_config("tgs-soft");
        let cfg = PgsConfig { rigid_order: crate::common::order::Order::Colored, ..cfg };
        for name in ["rigid-joint-grid", "rigid-ragdoll"] {
            let scene = solverlab_scenes::resolve(name, &[]).unwrap();
            let mut st = scene.initial_state(scene.dt).rigid;
            let spans = |si: &RigidSi| {
                let joints = si.colors.iter().filter(|c| c.j.0 < c.j.1).map(|c| c.j).collect::<Vec<_>>();
                (joints, si.joint_order.clone())
            };
            let mut si = RigidSi::default();
            si.prepare(&scene, &mut st, &cfg, scene.dt / 4.0, 0.0, 4);
            let fresh = spans(&si);
            assert!(fresh.0.len() > 1, "{name}: joints in several colours");
            assert!(!si.sort_scratch.joints_given.is_empty(), "{name}: the colouring kept");
            si.prepare(&scene, &mut st, &cfg, scene.dt / 4.0, 0.0, 4);
            assert_eq!(spans(&si), fresh, "{name}: taken again");
            si.sort_scratch.forget();
            si.prepare(&scene, &mut st, &cfg, scene.dt / 4.0, 0.0, 4);
            assert_eq!(spans(&si), fresh, "{name}: made again");
        }
    }

    /// `fill` gives the same list below and above its threshold, on two threads, and leaves
    /// nothing of the list it overwrites.
    #[test]
    fn fill_is_the_same_list_on_the_calling_thread_and_on_all_threads() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let f = |k: usize| (k as f64).sqrt() * 3.0 + k as f64;
        let (mut serial, mut parallel) = (vec![7.0; 10_000], vec![7.0; 3]);
        pool.install(|| {
            fill(&mut serial, 5_000, usize::MAX, f);
            fill(&mut parallel, 5_000, 16, f);
        });
        assert_eq!(serial.len(), 5_000);
        assert_eq!(serial, parallel);
        assert_eq!(serial[4_999], f(4_999));
    }
}
