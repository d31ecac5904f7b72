//! Taking colours: a row's colour from its bodies' taken colours ([`take_color`]), a sort's
//! pairs coloured keeping their last colours ([`recolor_keeping`]), and a group's rows coloured
//! in order ([`color_in_order`]).

use super::COLORS;
use crate::pgs::config::StaticColors;
use solverlab_core::Scene;

/// The colours a static pair may take under [`StaticColors::Last`], and no other pair: the
/// last 8.
pub(super) const STATIC_BAND: u64 = !0 << (COLORS - 8);

/// A colour neither body of a row has among the colours `used` (per body, a bit per colour),
/// taken for both: the lowest, but for a row with a fixed body or the world (a static pair)
/// under `rule` ([`StaticColors`]); [`COLORS`] (the overflow colour) when none is free. Fixed
/// bodies take no colour: rows on one fixed body never conflict through it.
pub(super) fn take_color(scene: &Scene, used: &mut [u64], a: usize, b: Option<usize>, rule: StaticColors) -> usize {
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
    mark(scene, used, a, b, c);
    c
}

/// Marks colour `c` taken on the movable bodies of the row between `a` and `b` in `used`.
fn mark(scene: &Scene, used: &mut [u64], a: usize, b: Option<usize>, c: usize) {
    for k in std::iter::once(a).chain(b).filter(|&k| !scene.rigid[k].is_fixed()) {
        used[k] |= 1 << c;
    }
}

/// Colours the runs `pairs` (in order, sorted by their first body) keeping the colours of the
/// last colouring (`last`, coloured `colors`, which is replaced by the new colours): each pair
/// of `last` found again (the first of its equals not yet matched) keeps its colour if neither
/// of its movable bodies has taken that colour in `used`; then the others are coloured greedily
/// in order ([`take_color`]). `kept` is a working list. With `last` not sorted by its first
/// body, or not as long as `colors`, every pair is coloured afresh.
pub(super) fn recolor_keeping(
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
                mark(scene, used, a, b, c as usize);
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
pub(super) fn color_in_order(
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
