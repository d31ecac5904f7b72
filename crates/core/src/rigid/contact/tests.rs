use super::*;
use crate::rigid::{RigidBody, Shape};

/// A 1 m box resting 1 mm into a 2 m box, its face square on the lower box's top face.
fn two_boxes() -> (crate::Scene, Vec<RigidState>) {
    let mut scene = crate::Scene::new("boxes");
    scene.rigid.push(RigidBody::new(Shape::Box { half: Vec3::repeat(0.5) }, 1.0, Vec3::new(0.1, 0.499, 0.0)));
    scene.rigid.push(RigidBody::new(Shape::Box { half: Vec3::repeat(1.0) }, 8.0, Vec3::new(0.0, -1.0, 0.0)));
    let states = scene.rigid.iter().map(|b| b.initial_state()).collect();
    (scene, states)
}

fn recycled(scene: &crate::Scene, states: &[RigidState], cache: &mut ContactCache) -> Vec<RigidContact> {
    let mut out = Vec::new();
    rigid_contacts_recycled(scene, states, 0.02, &mut out, &mut ContactScratch::default(), cache);
    out
}

fn fresh(scene: &crate::Scene, states: &[RigidState]) -> Vec<RigidContact> {
    let mut out = Vec::new();
    rigid_contacts(scene, states, 0.02, &mut out);
    out
}

/// 640 boxes in a heap on a floor, each 1 cm into its neighbours.
fn heap() -> (crate::Scene, Vec<RigidState>) {
    let mut scene = crate::Scene::new("heap");
    for k in 0..640 {
        let (i, j, l) = ((k % 8) as f64, ((k / 8) % 8) as f64, (k / 64) as f64);
        let x = Vec3::new(i * 0.99 + 0.01 * l, 0.495 + l * 0.99, j * 0.99 - 0.01 * l);
        scene.rigid.push(RigidBody::new(Shape::Box { half: Vec3::repeat(0.5) }, 1.0, x));
    }
    scene.planes.push(crate::Plane { normal: Vec3::y(), offset: 0.0, friction: 0.5, restitution: 0.0 });
    let states: Vec<RigidState> = scene.rigid.iter().map(|b| b.initial_state()).collect();
    (scene, states)
}

/// With the pairs of boxes keeping their separating axes (no recycling), on one thread and
/// on two: the first call finds what the narrow phase finds and keeps an axis for every
/// pair of boxes the broadphase gives; called again on the same states, every one of them
/// is answered from its kept axis, with the same contacts.
#[test]
fn kept_separating_axes_give_the_narrow_phases_contacts() {
    let (scene, states) = heap();
    let want = fresh(&scene, &states);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut cache = ContactCache::new(false, Some(0.005));
        let mut scratch = ContactScratch::default();
        let mut find = |cache: &mut ContactCache| {
            let n = pool.install(|| rigid_contacts_parts(&scene, &states, 0.02, &mut scratch, Some(cache)));
            scratch.parts[..n].concat()
        };
        assert_eq!(find(&mut cache), want);
        let (pairs, hits) = cache.sat_hits();
        assert!(pairs > 1000 && hits == 0, "{pairs} pairs, {hits} hits");
        assert_eq!(find(&mut cache), want);
        assert_eq!(cache.sat_hits(), (pairs, pairs));
    }
}

/// On two threads, the heap (above `PARALLEL_BODIES`) leaves its contacts in several parts
/// whose concatenation is the list found on one thread, with and without recycling;
/// joined, the parts are that list again.
#[test]
fn the_parts_are_the_list_found_on_one_thread() {
    let (scene, states) = heap();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for recycling in [false, true] {
        let mut cache = ContactCache::default();
        let find = |cache: &mut ContactCache, scratch: &mut ContactScratch| {
            rigid_contacts_parts(&scene, &states, 0.02, scratch, recycling.then_some(cache))
        };
        let mut single = ContactScratch::default();
        let n = one.install(|| find(&mut cache.clone(), &mut single));
        assert_eq!(n, 1);
        let mut several = ContactScratch::default();
        let n = two.install(|| find(&mut cache, &mut several));
        assert!(n > 1, "one part on two threads");
        let concatenated: Vec<RigidContact> = several.parts[..n].concat();
        assert!(concatenated.len() > 640, "the heap touches: {} contacts", concatenated.len());
        assert_eq!(concatenated, single.parts[0]);
        // Each part's recorded runs are its pairs' runs: they cover the part in order, each
        // one pair's, the next another's.
        for (part, runs) in
            several.parts[..n].iter().chain(&single.parts[..1]).zip(several.runs[..n].iter().chain(&single.runs[..1]))
        {
            let mut at = 0;
            for (k, r) in runs.iter().enumerate() {
                assert!(r.start == at && r.end > r.start, "runs cover the part in order");
                assert!(part[r.start..r.end].iter().all(|c| (c.a, c.b) == (r.a, r.b)), "one pair's run");
                assert!(runs.get(k + 1).is_none_or(|q| (q.a, q.b) != (r.a, r.b)), "a pair's run is whole");
                at = r.end;
            }
            assert_eq!(at, part.len(), "runs cover the part");
        }
        assert!(single.runs[0].len() > 640, "the heap's pairs: {}", single.runs[0].len());
        let mut joined = vec![concatenated[3]; 5];
        two.install(|| join_parts(&mut several.parts[..n], &mut joined));
        assert_eq!(joined, single.parts[0]);
    }
}

/// The first call finds what the narrow phase finds. Moved by 1 mm up and 3 cm along the
/// face (drift 3 cm), the upper box keeps its points: their features, their normal and
/// their arms as found, each separation the distance along the normal between the point's
/// ends carried by the bodies (1 mm more), the point midway between the ends. Past 5 cm of
/// drift, or with both boxes turned together by 12° (no relative drift, but frozen arms
/// would be wrong), the points are the narrow phase's again.
#[test]
fn recycled_contacts_follow_the_bodies_until_they_drift_too_far() {
    let (scene, mut states) = two_boxes();
    let mut cache = ContactCache::default();
    let first = recycled(&scene, &states, &mut cache);
    assert_eq!(first, fresh(&scene, &states));
    assert_eq!(first.len(), 4);
    assert!(first.iter().all(|c| (c.point.separation + 0.001).abs() < 1e-12 && c.arms.is_none()));

    let moved = Vec3::new(0.03, 0.001, 0.0);
    states[0].x += moved;
    let kept = recycled(&scene, &states, &mut cache);
    assert_eq!(kept.len(), 4);
    for (k, f) in kept.iter().zip(&first) {
        assert_eq!((k.a, k.b, k.point.feature, k.point.normal), (f.a, f.b, f.point.feature, f.point.normal));
        assert!((k.point.separation - (f.point.separation + 0.001)).abs() < 1e-12, "{}", k.point.separation);
        assert!((k.point.point - (f.point.point + moved * 0.5)).norm() < 1e-12);
        let [ra, rb] = k.arms.expect("recycled");
        assert!((ra - (f.point.point - scene.rigid[0].x)).norm() < 1e-12);
        assert!((rb - (f.point.point - scene.rigid[1].x)).norm() < 1e-12);
    }

    // 2.5 cm more along the face: 5.5 cm from where they were found.
    states[0].x.x += 0.025;
    assert_eq!(recycled(&scene, &states, &mut cache), fresh(&scene, &states));

    // Both boxes turned by 12° about the vertical through the lower box's centre.
    let (scene, mut states) = two_boxes();
    let mut cache = ContactCache::default();
    recycled(&scene, &states, &mut cache);
    let turn = UnitQuaternion::from_euler_angles(0.0, 12f64.to_radians(), 0.0);
    for s in states.iter_mut() {
        s.x = Vec3::new(0.0, -1.0, 0.0) + turn * (s.x - Vec3::new(0.0, -1.0, 0.0));
        s.q = turn * s.q;
    }
    assert_eq!(recycled(&scene, &states, &mut cache), fresh(&scene, &states));
}

/// A turn's drift is measured at the corner of a body's local bounding box, as Rapier's
/// `max_extent` measures it: for 10 cm spheres, `√3` × 10 cm. The upper of two touching spheres
/// turned by 10° (a chord of 3.02 cm at the corner, 1.74 cm on the sphere) keeps its point
/// when moved 1.5 cm along the lower one (drift 4.52 cm), and is found anew when moved 2.5 cm
/// (5.52 cm; 4.24 cm on the sphere).
#[test]
fn a_turned_spheres_drift_is_measured_at_its_bounding_boxs_corner() {
    let mut scene = crate::Scene::new("spheres");
    for y in [0.0, 0.199] {
        scene.rigid.push(RigidBody::new(Shape::Sphere { radius: 0.1 }, 1.0, Vec3::new(0.0, y, 0.0)));
    }
    assert!((Shape::Sphere { radius: 0.1 }.box_corner_radius() - 0.1 * 3f64.sqrt()).abs() < 1e-15);
    let mut states: Vec<RigidState> = scene.rigid.iter().map(|b| b.initial_state()).collect();
    let mut cache = ContactCache::default();
    assert_eq!(recycled(&scene, &states, &mut cache).len(), 1);
    states[1].q = UnitQuaternion::from_euler_angles(0.0, 0.0, 10f64.to_radians());
    states[1].x.x = 0.015;
    let kept = recycled(&scene, &states, &mut cache);
    assert!(kept.len() == 1 && kept[0].arms.is_some(), "recycled within the bound");
    states[1].x.x = 0.025;
    let found = recycled(&scene, &states, &mut cache);
    assert!(found.len() == 1 && found[0].arms.is_none(), "found anew past it");
    assert_eq!(found, fresh(&scene, &states));
}

/// The pairs a joint joins find no contacts, and a scratch kept from a call with a joint to one
/// without (or the other way round) finds what a fresh one finds: the joined pairs are made
/// again when the joints' pairs change.
#[test]
fn joined_pairs_follow_the_joints_of_each_call() {
    let (free, states) = two_boxes();
    let mut joined = free.clone();
    joined.joints.push(crate::rigid::Joint {
        kind: crate::rigid::JointKind::Ball,
        a: 0,
        b: Some(1),
        anchor: Vec3::zeros(),
        anchor_b: None,
        compliance: 0.0,
    });
    let found = |scene: &crate::Scene, scratch: &mut ContactScratch| {
        let n = rigid_contacts_parts(scene, &states, 0.02, scratch, None);
        scratch.parts[..n].concat()
    };
    assert!(!fresh(&free, &states).is_empty(), "the free boxes touch");
    assert!(fresh(&joined, &states).is_empty(), "the joined boxes find no contact");
    let mut scratch = ContactScratch::default();
    for scene in [&free, &joined, &joined, &free, &joined] {
        assert_eq!(found(scene, &mut scratch), fresh(scene, &states));
    }
}
