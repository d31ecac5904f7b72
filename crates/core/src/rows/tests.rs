use super::*;
use crate::model::{Constraint, Particle, Plane};

#[test]
fn ids_are_stable_and_distinct() {
    let mut ids = vec![constraint_row_id(0, 0), constraint_row_id(0, 1), constraint_row_id(1, 0)];
    ids.push(contact_row_id(0, ColliderRef::Plane(0), 0));
    ids.push(contact_row_id(0, ColliderRef::Plane(0), 1));
    ids.push(contact_row_id(0, ColliderRef::Sphere(0), 0));
    ids.push(contact_row_id(1, ColliderRef::BoxFace(3), 0));
    ids.push(embedded_row_id(0, ColliderRef::Plane(0), 0));
    ids.push(embedded_row_id(1, ColliderRef::Plane(0), 0));
    ids.push(pair_row_id(0, 1));
    ids.push(body_row_id(3, 7, 12, 1));
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len());
}

#[test]
fn ids_decode_to_what_they_name() {
    assert_eq!(decode(constraint_row_id(41, 2)), RowRef::Constraint { index: 41, axis: 2 });
    for collider in [ColliderRef::Plane(3), ColliderRef::Sphere(0), ColliderRef::Block(9), ColliderRef::BoxFace(5)] {
        assert_eq!(ColliderRef::from_code(collider.code()), collider);
        assert_eq!(
            decode(contact_row_id(123_456, collider, 1)),
            RowRef::Contact { particle: 123_456, collider, dir: 1 }
        );
        assert_eq!(decode(embedded_row_id(77, collider, 2)), RowRef::Embedded { point: 77, collider, dir: 2 });
    }
    assert_eq!(decode(pair_row_id(5, 900_000)), RowRef::Pair { i: 5, j: 900_000 });
    assert_eq!(decode(body_row_id(3, 7, 140, 1)), RowRef::Body { a: 3, b: 7, feature: 140, dir: 1 });
    assert_eq!(ColliderRef::Plane(0).name(), "plane0");
}

/// A fixed particle, one touching the floor and one above it; a stick, a satisfied
/// minimum distance (left out of the rows) and a pin; a floor with friction 0.5.
fn small_scene() -> Scene {
    let mut s = Scene::new("rows");
    s.add(Particle::fixed(Vec3::zeros()));
    s.add(Particle::new(Vec3::new(0.0, -0.01, 0.0), 1.0));
    s.add(Particle::new(Vec3::new(1.0, 0.5, 0.0), 1.0));
    s.constraints.push(Constraint::stick(0, 2, 1.0));
    s.constraints.push(Constraint::min_distance(1, 2, 0.1));
    s.constraints.push(Constraint::pin(2, Vec3::new(1.0, 0.0, 0.0)));
    s.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: 0.5, restitution: 0.0 });
    s
}

#[test]
fn rows_of_a_small_scene() {
    let s = small_scene();
    let rows = gather_rows(&s, &s.initial_state(0.01).x, 0.0, 0.0, |_| 0.0);
    assert_eq!(rows.len(), 1 + 3 + 1);
    assert_eq!(rows[0].n, 2);
    assert!((rows[0].c - (1.25f64.sqrt() - 1.0)).abs() < 1e-15);
    assert_eq!(rows[2].c, 0.5, "pin y row");
    let contact = rows[4];
    assert_eq!(contact.particles[0], 1);
    assert_eq!(contact.contact.unwrap().normal, Vec3::y());
    assert!((contact.c + 0.01).abs() < 1e-15);
    assert_eq!(contact.contact.unwrap().friction, 0.5);
}

/// Gathering into a store that held other rows (wider, with contacts, more of them) gives
/// exactly what gathering into an empty one gives; the store's views are the whole rows;
/// `retain` keeps the chosen rows with their own particles, gradients and contact data.
#[test]
fn the_row_set_reuses_its_memory_and_keeps_each_rows_data() {
    let mut s = small_scene();
    s.planes[0].restitution = 0.3;
    let x = s.initial_state(0.01).x;
    let mut fresh = RowSet::default();
    gather_row_set(&s, &x, 0.0, 0.0, |_| 0.0, &mut fresh);
    let rows: Vec<Row> = fresh.iter().map(|r| r.to_row()).collect();
    let old = Row {
        id: 99,
        n: ROW_PARTICLES,
        particles: [7; ROW_PARTICLES],
        grad: [Vec3::new(1.0, 2.0, 3.0); ROW_PARTICLES],
        c: 5.0,
        dc_dt: 6.0,
        kind: RowKind::Inequality,
        compliance: 7.0,
        contact: Some(ContactInfo { normal: Vec3::x(), friction: 8.0, restitution: 9.0, collider: None }),
    };
    for len in [0, 2, rows.len(), 3 * rows.len()] {
        let mut reused = RowSet::default();
        (0..len).for_each(|_| reused.push(&old));
        gather_row_set(&s, &x, 0.0, 0.0, |_| 0.0, &mut reused);
        assert_eq!(reused.iter().map(|r| r.to_row()).collect::<Vec<_>>(), rows, "over {len} old rows");
    }
    let w = s.inverse_masses();
    assert!(fresh.iter().zip(&rows).all(|(r, q)| r.w_grad2(&w) == q.w_grad2(&w)));
    // A wide contact row, the gathered rows and the wide row again, less the gathered stick
    // and a pin row: every row kept, the contact rows before and after the first one dropped
    // among them, keeps its data.
    let mut set = RowSet::default();
    set.push(&old);
    (0..rows.len()).for_each(|i| set.push(&fresh.get(i).to_row()));
    set.push(&old);
    let mut k = 0;
    set.retain(|_| {
        k += 1;
        k != 2 && k != 4
    });
    let mut kept = vec![old];
    kept.extend(rows.iter().enumerate().filter(|(i, _)| *i != 0 && *i != 2).map(|(_, r)| *r));
    kept.push(old);
    assert_eq!(set.iter().map(|r| r.to_row()).collect::<Vec<_>>(), kept);
    assert_eq!(set.all_particles().len(), kept.iter().map(|r| r.n).sum::<usize>());
}

#[test]
fn tangents_are_orthonormal() {
    for n in [Vec3::y(), Vec3::new(1.0, 2.0, -0.5).normalize(), -Vec3::z()] {
        let (t1, t2) = tangents(&n);
        assert!(t1.dot(&n).abs() < 1e-15 && t2.dot(&n).abs() < 1e-15 && t1.dot(&t2).abs() < 1e-15);
        assert!((t1.norm() - 1.0).abs() < 1e-15 && (t2.norm() - 1.0).abs() < 1e-15);
    }
}
