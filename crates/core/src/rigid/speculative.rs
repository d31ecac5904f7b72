//! The speculative margin of a rigid step: how fast bodies and pairs can close
//! ([`max_point_speed`], [`closing_speed`]), the margin to search with ([`closing_margin`]) and
//! the filter that keeps each pair's contacts within its own reach ([`retain_closing`]).

use super::contact::{Other, RigidContact};
use super::{RigidBody, RigidState};
use crate::Vec3;

/// The fastest any point of any body moves (m/s), bounded by `|v| + |ω|·r` with `r` the body's
/// bounding radius: the speculative contact margin of a step is a multiple of it.
pub fn max_point_speed(bodies: &[RigidBody], states: &[RigidState]) -> f64 {
    bodies.iter().zip(states).map(|(b, s)| s.v.norm() + s.w.norm() * b.shape.bounding_radius()).fold(0.0, f64::max)
}

/// How fast a pair's separation can shrink (m/s), bounded by the relative speed of any two of
/// their points: `|v_a − v_b| + |ω_a|·r_a + |ω_b|·r_b` for two bodies (`r` the bounding
/// radius), `|v_a| + |ω_a|·r_a` against a world collider, which does not move.
#[inline]
pub fn closing_speed(bodies: &[RigidBody], states: &[RigidState], a: usize, b: Other) -> f64 {
    let spin = |k: usize| states[k].w.norm() * bodies[k].shape.bounding_radius();
    match b {
        Other::Body(b) => (states[a].v - states[b].v).norm() + spin(a) + spin(b),
        Other::Collider(_) => states[a].v.norm() + spin(a),
    }
}

/// The widest speculative margin a pair can need with [`retain_closing`] over `time` (s) (m):
/// `base + time · max(fastest, 2·spread)`, `fastest` the [`max_point_speed`] (a body closing
/// on a collider) and `spread` the largest `|v_k − v̄| + |ω_k|·r_k` about the bodies' mean
/// velocity `v̄` (two bodies: `|v_a − v_b| ≤ |v_a − v̄| + |v_b − v̄|`). A search with it finds
/// every pair `retain_closing` keeps.
pub fn closing_margin(bodies: &[RigidBody], states: &[RigidState], base: f64, time: f64) -> f64 {
    if states.is_empty() {
        return base;
    }
    let mean = states.iter().fold(Vec3::zeros(), |sum, s| sum + s.v) / states.len() as f64;
    let spread = bodies
        .iter()
        .zip(states)
        .map(|(b, s)| (s.v - mean).norm() + s.w.norm() * b.shape.bounding_radius())
        .fold(0.0, f64::max);
    base + time * max_point_speed(bodies, states).max(2.0 * spread)
}

/// Keeps, of the contacts in `parts` (found with a margin at least [`closing_margin`]'s), those
/// whose pair can close their separation within `time` (s) at the pair's [`closing_speed`]:
/// `separation ≤ base + time · closing_speed`. Two bodies falling side by side keep only the
/// contacts within `base` of each other, where a margin from the fastest body alone keeps
/// every neighbour within the distance that body travels; two bodies meeting head on keep
/// theirs at twice their speed. The order within each part is kept (the same list on any
/// number of threads).
pub fn retain_closing(
    parts: &mut [Vec<RigidContact>],
    bodies: &[RigidBody],
    states: &[RigidState],
    base: f64,
    time: f64,
) {
    use rayon::prelude::*;
    let keep = |c: &RigidContact| c.point.separation <= base + time * closing_speed(bodies, states, c.a, c.b);
    if parts.iter().map(Vec::len).sum::<usize>() >= 4096 {
        parts.par_iter_mut().for_each(|part| part.retain(keep));
    } else {
        parts.iter_mut().for_each(|part| part.retain(keep));
    }
}

#[cfg(test)]
mod tests {
    use super::super::contact::{join_parts, rigid_contacts, rigid_contacts_parts, ContactScratch};
    use super::*;
    use crate::constraint::ColliderRef;
    use crate::rigid::Shape;
    use nalgebra::UnitQuaternion;

    /// A deterministic stream of numbers in [-1, 1).
    fn numbers(seed: u64) -> impl FnMut() -> f64 {
        let mut x = seed;
        move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
    }

    /// 64 spheres and boxes in a loose lattice above a floor, each with its own velocity and
    /// spin about a common drift of 3 m/s, some pairs heading for each other: the search with
    /// `closing_margin` and `retain_closing` keep exactly the contacts of a search 10 m wide
    /// filtered by `separation ≤ base + T·closing_speed`: fewer than the margin of the
    /// fastest body keeps, and a head-on pair that margin misses.
    #[test]
    fn the_closing_margin_finds_every_contact_a_pair_can_close() {
        let mut next = numbers(7);
        let mut scene = crate::Scene::new("lattice");
        scene.planes.push(crate::Plane { normal: Vec3::y(), offset: 0.0, friction: 0.5, restitution: 0.0 });
        let mut states = Vec::new();
        for k in 0..64 {
            let (i, j, l) = ((k % 4) as f64, ((k / 4) % 4) as f64, (k / 16) as f64);
            let x = Vec3::new(i * 0.13, 0.06 + l * 0.13, j * 0.13) + Vec3::new(next(), next(), next()) * 0.01;
            let shape = if k % 3 == 0 {
                Shape::Box { half: Vec3::new(0.05, 0.04, 0.03) }
            } else {
                Shape::Sphere { radius: 0.05 }
            };
            let body = RigidBody::new(shape, 1.0, x);
            let mut st = body.initial_state();
            st.v = Vec3::new(3.0, -1.0, 0.5) + Vec3::new(next(), next(), next()) * if k % 5 == 0 { 2.0 } else { 0.2 };
            st.w = Vec3::new(next(), next(), next()) * 5.0;
            scene.rigid.push(body);
            states.push(st);
        }
        // Two spheres apart from the lattice, meeting head on faster than any of it: their gap
        // is beyond the fastest body's travel and within their closing speed's.
        for (x, v) in [(2.0, 5.0), (2.25, -5.0)] {
            let body = RigidBody::new(Shape::Sphere { radius: 0.05 }, 1.0, Vec3::new(x, 1.0, 0.0));
            states.push(RigidState { v: Vec3::new(v, 0.0, 0.0), w: Vec3::zeros(), ..body.initial_state() });
            scene.rigid.push(body);
        }
        let (base, time) = (0.02, 5.0 / 240.0);
        let key = |c: &RigidContact| (c.a, c.b, c.point.feature);
        let mut wide = Vec::new();
        rigid_contacts(&scene, &states, 10.0, &mut wide);
        wide.retain(|c| c.point.separation <= base + time * closing_speed(&scene.rigid, &states, c.a, c.b));
        let mut scratch = ContactScratch::default();
        let margin = closing_margin(&scene.rigid, &states, base, time);
        let found = rigid_contacts_parts(&scene, &states, margin, &mut scratch, None);
        retain_closing(&mut scratch.parts[..found], &scene.rigid, &states, base, time);
        let mut kept = Vec::new();
        join_parts(&mut scratch.parts[..found], &mut kept);
        let (mut a, mut b): (Vec<_>, Vec<_>) = (wide.iter().map(key).collect(), kept.iter().map(key).collect());
        a.sort();
        b.sort();
        assert!(a.len() > 20, "{} contacts: the lattice touches", a.len());
        assert_eq!(a, b);
        let mut fastest = Vec::new();
        rigid_contacts(&scene, &states, base + time * max_point_speed(&scene.rigid, &states), &mut fastest);
        assert!(kept.len() < fastest.len(), "{} kept of the fastest margin's {}", kept.len(), fastest.len());
        let head_on = |c: &RigidContact| (c.a, c.b) == (64, Other::Body(65));
        assert!(
            kept.iter().any(head_on) && !fastest.iter().any(head_on),
            "the head-on pair: kept, not by the fastest margin"
        );
    }

    /// `closing_speed` bounds how fast a pair's nearest separation shrinks: boxes and spheres
    /// turning and moving at random, against each other and a floor, moved rigidly over 10 µs.
    #[test]
    fn the_closing_speed_bounds_the_separations_rate() {
        let mut next = numbers(11);
        let mut worst = 0.0_f64;
        for trial in 0..200 {
            let mut scene = crate::Scene::new("pair");
            scene.planes.push(crate::Plane { normal: Vec3::y(), offset: 0.0, friction: 0.5, restitution: 0.0 });
            let shape = |k: usize| {
                if (trial + k).is_multiple_of(2) {
                    Shape::Box { half: Vec3::new(0.3, 0.2, 0.1) }
                } else {
                    Shape::Sphere { radius: 0.2 }
                }
            };
            let mut states = Vec::new();
            for k in 0..2 {
                let x = Vec3::new(k as f64 * 0.5 + next() * 0.05, 0.35 + next() * 0.05, next() * 0.05);
                let body = RigidBody::new(shape(k), 1.0, x);
                let mut st = body.initial_state();
                st.q = UnitQuaternion::from_scaled_axis(Vec3::new(next(), next(), next()));
                // (Spins that dominate: each lever's share of the bound is tested.)
                st.v = Vec3::new(next(), next(), next()) * 0.2;
                st.w = Vec3::new(next(), next(), next()) * 20.0;
                scene.rigid.push(body);
                states.push(st);
            }
            let nearest = |states: &[RigidState], a: usize, b: Other| {
                let mut out = Vec::new();
                rigid_contacts(&scene, states, 10.0, &mut out);
                out.iter().filter(|c| c.a == a && c.b == b).map(|c| c.point.separation).fold(f64::INFINITY, f64::min)
            };
            let eps = 1e-5;
            let moved: Vec<RigidState> = states
                .iter()
                .map(|s| RigidState { x: s.x + s.v * eps, q: UnitQuaternion::from_scaled_axis(s.w * eps) * s.q, ..*s })
                .collect();
            let pairs = [
                (0, Other::Body(1)),
                (0, Other::Collider(ColliderRef::Plane(0).code())),
                (1, Other::Collider(ColliderRef::Plane(0).code())),
            ];
            for (a, b) in pairs {
                let (before, after) = (nearest(&states, a, b), nearest(&moved, a, b));
                if !before.is_finite() || !after.is_finite() {
                    continue;
                }
                let rate = (before - after) / eps;
                let bound = closing_speed(&scene.rigid, &states, a, b);
                worst = worst.max(rate / bound);
                assert!(
                    rate <= bound * (1.0 + 1e-3) + 1e-6,
                    "trial {trial}, pair {a}-{b:?}: closes at {rate}, bound {bound}"
                );
            }
        }
        assert!(worst > 0.5, "the bound is tight for some pair: {worst}");
    }
}
