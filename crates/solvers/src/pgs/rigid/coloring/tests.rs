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
            sort_contacts_by_color(&scene, std::slice::from_ref(&all), None, &mut out, &mut keep, true, rule).to_vec();
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
