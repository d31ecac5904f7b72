//! Tests of the constraint maths: collider codes, flat colliders' bits, and the gradients of
//! the rows against finite differences.

use super::*;
use crate::model::{Block, BoxCollider, Plane, Scene, Sphere};

/// A flat collider's affine row gives exactly the bits of the contact function it stands
/// for, at random points, radii and walls (the relaxation solver relies on it: its results
/// must not depend on which of the two it evaluates).
#[test]
fn flat_colliders_give_the_contact_functions_bits() {
    use crate::model::{BoxCollider, Plane};
    let mut rng = crate::rng::Rng::new(5);
    let mut value = |scale: f64| (rng.next_f64() - 0.5) * scale;
    for _ in 0..2000 {
        let mut scene = Scene::new("flat");
        let min = Vec3::new(value(3.0), value(3.0), value(3.0));
        let max = min + Vec3::new(1.0 + value(1.0).abs(), 0.7, 2.0 + value(0.3));
        scene.bounds = Some(BoxCollider { min, max, friction: 0.3, restitution: 0.0 });
        let normal = Vec3::new(value(1.0), value(1.0), value(1.0));
        scene.planes.push(Plane { normal, offset: value(2.0), friction: 0.1, restitution: 0.0 });
        let x = Vec3::new(value(7.0), value(7.0), value(7.0));
        let r = value(0.2).abs();
        let colliders = (0..6).map(ColliderRef::BoxFace).chain([ColliderRef::Plane(0)]);
        for collider in colliders {
            let full = collider_contact(&scene, collider, &x, r).unwrap();
            let flat = flat_collider(&scene, collider).unwrap();
            assert_eq!(flat.c(&x, r), full.c, "{collider:?} at {x:?}, r = {r}");
            assert_eq!((flat.normal, flat.friction), (full.normal, full.friction));
        }
    }
    assert!(flat_collider(&Scene::new("empty"), ColliderRef::Plane(0)).is_none());
    assert!(flat_collider(&Scene::new("empty"), ColliderRef::Sphere(0)).is_none());
}

fn fd_gradient(f: impl Fn(&Vec3, &Vec3) -> f64, xa: &Vec3, xb: &Vec3) -> (Vec3, Vec3) {
    let h = 1e-6;
    let mut ga = Vec3::zeros();
    let mut gb = Vec3::zeros();
    for k in 0..3 {
        let mut e = Vec3::zeros();
        e[k] = h;
        ga[k] = (f(&(xa + e), xb) - f(&(xa - e), xb)) / (2.0 * h);
        gb[k] = (f(xa, &(xb + e)) - f(xa, &(xb - e))) / (2.0 * h);
    }
    (ga, gb)
}

#[test]
fn stick_gradients_match_finite_differences_for_every_sense() {
    let xa = Vec3::new(0.3, -1.2, 0.7);
    let xb = Vec3::new(1.1, 0.4, -0.2);
    for sense in [Sense::Equal, Sense::AtLeast, Sense::AtMost] {
        let (ga, gb) = stick_gradient(&xa, &xb, sense).unwrap();
        let (fa, fb) = fd_gradient(|a, b| stick_value(a, b, 0.8, sense), &xa, &xb);
        assert!((ga - fa).norm() < 1e-8, "{sense:?}: {ga} vs {fa}");
        assert!((gb - fb).norm() < 1e-8, "{sense:?}: {gb} vs {fb}");
        let row = stick_row(&xa, &xb, 0.8, sense, false, || unreachable!());
        assert!((row.normal - gb).norm() < 1e-15);
        assert!((row.c - stick_value(&xa, &xb, 0.8, sense)).abs() < 1e-15);
    }
}

/// `∇²C` of a stick, from its curvature, matches central differences of its gradient for
/// every sense.
#[test]
fn stick_hessians_match_finite_differences_for_every_sense() {
    let xa = Vec3::new(0.3, -1.2, 0.7);
    let xb = Vec3::new(1.1, 0.4, -0.2);
    let h = 1e-6;
    for sense in [Sense::Equal, Sense::AtLeast, Sense::AtMost] {
        let (kappa, n) = stick_curvature(&xa, &xb, sense).unwrap();
        let p = nalgebra::Matrix3::identity() - n * n.transpose();
        // Column k of ∂(∇a C, ∇b C)/∂xb, by central differences; the analytic blocks are
        // (xa, xb) = −κP and (xb, xb) = κP, and by symmetry the xa columns are their negatives.
        for k in 0..3 {
            let mut e = Vec3::zeros();
            e[k] = h;
            let (ga_p, gb_p) = stick_gradient(&xa, &(xb + e), sense).unwrap();
            let (ga_m, gb_m) = stick_gradient(&xa, &(xb - e), sense).unwrap();
            let (da, db) = ((ga_p - ga_m) / (2.0 * h), (gb_p - gb_m) / (2.0 * h));
            assert!((da + kappa * p.column(k)).norm() < 1e-8, "{sense:?} xa-xb column {k}");
            assert!((db - kappa * p.column(k)).norm() < 1e-8, "{sense:?} xb-xb column {k}");
            let (ga_p, gb_p) = stick_gradient(&(xa + e), &xb, sense).unwrap();
            let (ga_m, gb_m) = stick_gradient(&(xa - e), &xb, sense).unwrap();
            let (da, db) = ((ga_p - ga_m) / (2.0 * h), (gb_p - gb_m) / (2.0 * h));
            assert!((da - kappa * p.column(k)).norm() < 1e-8, "{sense:?} xa-xa column {k}");
            assert!((db + kappa * p.column(k)).norm() < 1e-8, "{sense:?} xb-xa column {k}");
        }
        assert!(stick_curvature(&xa, &xa, sense).is_none());
    }
}

#[test]
fn collider_gradients_match_finite_differences() {
    let x = Vec3::new(0.2, 0.35, -0.4);
    let plane = Plane { normal: Vec3::new(1.0, 2.0, 0.5), offset: 0.1, friction: 0.0, restitution: 0.0 };
    let sphere = Sphere { center: Vec3::new(1.0, 0.0, 0.0), radius: 0.5, friction: 0.0, restitution: 0.0 };
    let bx =
        BoxCollider { min: Vec3::new(-1.0, 0.0, -1.0), max: Vec3::new(1.0, 2.0, 1.0), friction: 0.0, restitution: 0.0 };
    type ContactFn<'a> = Box<dyn Fn(&Vec3) -> Contact + 'a>;
    let checks: Vec<ContactFn> = vec![
        Box::new(|x: &Vec3| plane_contact(0, &plane, x, 0.05)),
        Box::new(|x: &Vec3| sphere_contact(0, &sphere, x, 0.05)),
        Box::new(|x: &Vec3| box_face_contact(3, &bx, x, 0.05)),
        Box::new(|x: &Vec3| box_face_contact(4, &bx, x, 0.05)),
    ];
    for f in checks {
        let h = 1e-6;
        for k in 0..3 {
            let mut e = Vec3::zeros();
            e[k] = h;
            let fd = (f(&(x + e)).c - f(&(x - e)).c) / (2.0 * h);
            assert!((fd - f(&x).normal[k]).abs() < 1e-8);
        }
    }
}

#[test]
fn sqrt_approximation_is_exact_at_rest_and_second_order_near_it() {
    let xa = Vec3::zeros();
    let rest = 2.0;
    let at_rest = stick_row(&xa, &Vec3::new(rest, 0.0, 0.0), rest, Sense::Equal, true, || unreachable!());
    assert_eq!(at_rest.c, 0.0);
    for eps in [1e-2, 1e-3] {
        let xb = Vec3::new(rest + eps, 0.0, 0.0);
        let approx = stick_row(&xa, &xb, rest, Sense::Equal, true, || unreachable!()).c;
        // (ℓ² + r²)/(2r) − r = (ℓ − r)²/(2r) + (ℓ − r)
        assert!((approx - eps - eps * eps / (2.0 * rest)).abs() < 1e-14);
    }
}

#[test]
fn coinciding_particles_use_the_fallback_direction() {
    let x = Vec3::new(1.0, 1.0, 1.0);
    let row = stick_row(&x, &x, 1.0, Sense::Equal, false, Vec3::z);
    assert_eq!(row.normal, Vec3::z());
    assert_eq!(row.c, -1.0);
}

#[test]
fn delta_lambda_clamps_unilateral_rows_and_skips_immovable_ones() {
    assert_eq!(delta_lambda(0.5, 2.0, 0.0, 0.0, true), 0.0, "satisfied inequality: no push");
    assert_eq!(delta_lambda(-0.5, 2.0, 0.0, 0.0, true), 0.25);
    assert_eq!(delta_lambda(0.5, 2.0, 0.0, 0.1, true), -0.1, "may release what it pushed, no more");
    assert_eq!(delta_lambda(0.5, 0.0, 0.0, 0.0, false), 0.0);
    // XPBD: α̃ = 1, λ = 0.5 → (−0.2 − 0.5)/(1 + 1)
    assert!((delta_lambda(0.2, 1.0, 1.0, 0.5, false) + 0.35).abs() < 1e-15);
}

/// A particle on the floor (`w = 1`, pushed up by `λₙ = 0.1`) that moved 0.03 sideways over the
/// step: within the cone `μλₙ = 0.05` the whole displacement is cancelled; with `μ = 0.2`
/// (limit 0.02) it keeps 0.01 of it; a second call changes nothing more.
#[test]
fn coulomb_friction_cancels_inside_the_cone_and_limits_outside() {
    let n = Vec3::y();
    let start = [Vec3::new(0.0, 0.0, 0.0)];
    let moved = Vec3::new(0.03, 0.0, 0.0);
    let mut x = [moved];
    let lt = coulomb_friction(&mut x, &start, &[1.0], &[0], &[1.0], &n, 0.1, 0.5, Vec3::zeros());
    assert!(x[0].norm() < 1e-16 && (lt.x + 0.03).abs() < 1e-16, "static: back to the start");
    let mut x = [moved];
    let lt = coulomb_friction(&mut x, &start, &[1.0], &[0], &[1.0], &n, 0.1, 0.2, Vec3::zeros());
    assert!((x[0].x - 0.01).abs() < 1e-15 && (lt.x + 0.02).abs() < 1e-15, "dynamic: limited to μλₙ");
    let again = coulomb_friction(&mut x, &start, &[1.0], &[0], &[1.0], &n, 0.1, 0.2, lt);
    assert!((x[0].x - 0.01).abs() < 1e-15 && (again - lt).norm() < 1e-16, "accumulated: no double removal");
    // Two bodies: only the relative motion is resisted (both moved together: nothing to do).
    let start = [Vec3::zeros(), Vec3::zeros()];
    let mut x = [moved, moved];
    coulomb_friction(&mut x, &start, &[1.0, 1.0], &[0, 1], &[1.0, -1.0], &n, 0.1, 0.5, Vec3::zeros());
    assert_eq!(x, [moved, moved]);
}

#[test]
fn a_block_pushes_out_through_the_face_of_least_penetration() {
    let b = Block { min: Vec3::new(0.0, 0.0, 0.0), max: Vec3::new(2.0, 1.0, 4.0), friction: 0.3, restitution: 0.0 };
    // 0.1 below the top, 0.5 from the nearest side: out through the top.
    let c = block_contact(2, &b, &Vec3::new(0.5, 0.9, 2.0), 0.0);
    assert!((c.c + 0.1).abs() < 1e-15 && c.normal == Vec3::y() && c.collider == ColliderRef::Block(2));
    // 0.05 inside the x = 0 side: out through −x; a radius adds to the depth.
    let c = block_contact(0, &b, &Vec3::new(0.05, 0.5, 2.0), 0.02);
    assert!((c.c + 0.07).abs() < 1e-15 && c.normal == -Vec3::x());
    // Outside above the top by 0.3 and beside it by 0.1: C is the larger axis distance.
    let c = block_contact(0, &b, &Vec3::new(2.1, 1.3, 2.0), 0.0);
    assert!((c.c - 0.3).abs() < 1e-15 && c.normal == Vec3::y());
    // Moving along the normal changes C at unit rate (∇C = n).
    let x = Vec3::new(0.5, 0.9, 2.0);
    let d = block_contact(0, &b, &(x + Vec3::y() * 1e-3), 0.0).c - block_contact(0, &b, &x, 0.0).c;
    assert!((d - 1e-3).abs() < 1e-12);
}

#[test]
fn collider_codes_are_distinct() {
    let mut codes: Vec<u64> = (0..6u8).map(|f| ColliderRef::BoxFace(f).code()).collect();
    for k in 0..50u32 {
        codes.extend([ColliderRef::Plane(k).code(), ColliderRef::Sphere(k).code(), ColliderRef::Block(k).code()]);
    }
    let n = codes.len();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), n);
}
