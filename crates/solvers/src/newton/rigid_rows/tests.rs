//! Finite-difference checks of the rigid rows' gradients and of the anchors' curvature.

use super::*;

/// The Hessian of `e·(exp(δ) r)` at `δ = 0` by central differences equals
/// `½(e rᵀ + r eᵀ) − (e·r) I`, so `anchor_curvature(λe, r)` is `−λ` times it; and a link
/// hanging from its anchor (the force on it along its arm towards the anchor) gets a
/// positive semidefinite term, one balanced above it a negative semidefinite one.
#[test]
fn anchor_curvature_matches_finite_differences() {
    let r = Vec3::new(0.3, -0.7, 0.2);
    let h = 1e-4;
    for e in [Vec3::x(), Vec3::y(), Vec3::new(0.6, 0.0, 0.8)] {
        let f = |d: Vec3| e.dot(&(UnitQuaternion::from_scaled_axis(d) * r));
        let mut fd = Matrix3::zeros();
        for i in 0..3 {
            for j in 0..3 {
                let (di, dj) = (Vec3::ith(i, h), Vec3::ith(j, h));
                fd[(i, j)] = (f(di + dj) - f(di - dj) - f(dj - di) + f(-di - dj)) / (4.0 * h * h);
            }
        }
        let lambda = 2.5;
        let expected = -fd * lambda;
        let got = anchor_curvature(&(e * lambda), &r);
        assert!((got - expected).norm() < 1e-6, "e = {e}: {got} against {expected}");
    }
    // The force on a hanging link points from its centre to its anchor: along the arm.
    let hanging = anchor_curvature(&(r * 4.0), &r).symmetric_eigen();
    assert!(hanging.eigenvalues.iter().all(|&v| v > -1e-12), "{:?}", hanging.eigenvalues);
    let balanced = anchor_curvature(&(-r * 4.0), &r).symmetric_eigen();
    assert!(balanced.eigenvalues.iter().all(|&v| v < 1e-12), "{:?}", balanced.eigenvalues);
}
use solverlab_core::rigid::{Joint, JointKind, RigidBody, Shape};
use solverlab_core::Plane;

/// Two boxes stacked on the floor (contact rows, with every manifold sticking: tangent and
/// twist rows), a sphere hinged to the top box (anchor and axis rows) and held to the world
/// by a fixed joint (anchor and orientation rows), all turned away from the axes.
fn scene() -> (Scene, Vec<RigidState>) {
    let mut scene = Scene::new("gradients");
    scene.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: 0.5, restitution: 0.0 });
    let cube = Shape::Box { half: Vec3::new(0.25, 0.25, 0.3) };
    scene.rigid.push(RigidBody::new(cube, 1.0, Vec3::new(0.0, 0.249, 0.0)));
    scene.rigid.push(RigidBody::new(cube, 2.0, Vec3::new(0.02, 0.748, 0.01)));
    scene.rigid.push(RigidBody::new(Shape::Sphere { radius: 0.1 }, 0.5, Vec3::new(1.0, 0.75, 0.0)));
    let inf = f64::INFINITY;
    scene.joints.push(Joint {
        kind: JointKind::Revolute { axis: Vec3::new(0.1, 0.2, 1.0), lower: -inf, upper: inf },
        a: 1,
        b: Some(2),
        anchor: Vec3::new(0.6, 0.75, 0.0),
        anchor_b: None,
        compliance: 0.0,
    });
    scene.joints.push(Joint {
        kind: JointKind::Fixed,
        a: 2,
        b: None,
        anchor: Vec3::new(1.0, 0.8, 0.0),
        anchor_b: None,
        compliance: 0.0,
    });
    let mut st: Vec<RigidState> = scene.rigid.iter().map(|b| b.initial_state()).collect();
    for (k, s) in st.iter_mut().enumerate() {
        s.w = Vec3::new(0.3, -0.2 * k as f64, 0.5);
    }
    (scene, st)
}

/// Every row's gradient with respect to the loop's coordinates (positions and scaled
/// rotation vectors, away from the predicted poses) matches central differences of its value:
/// contacts, friction and twist rows, anchors, revolute axes and fixed-joint orientations.
#[test]
fn row_gradients_match_finite_differences() {
    let (scene, mut st) = scene();
    let mut rr = RigidRows::default();
    rr.begin(&scene, &mut st, 1.0 / 60.0, 0, 1.0 / 60.0, crate::common::SpeculativeMargin::Fastest);
    assert!(rr.manifolds.len() >= 2, "the boxes should touch the floor and each other");
    for m in &mut rr.manifolds {
        m.stick = true;
    }
    let mut c = Vec::new();
    rr.push_predicted(&mut c);
    for (k, v) in c.iter_mut().enumerate() {
        // Away from the prediction, where `J_l(φ)` matters.
        *v += Vec3::new(0.013, -0.021, 0.017) * (1.0 + k as f64);
    }
    let rows_at = |c: &[Vec3]| {
        let mut rows = RowSet::default();
        rr.gather(&scene, c, &mut rows);
        rows.iter().map(|r| r.to_row()).collect::<Vec<_>>()
    };
    let rows = rows_at(&c);
    let has = |id: u64| rows.iter().any(|r| r.id == id);
    for m in &rr.manifolds {
        assert!((1..=3).all(|dir| has(m.id | dir)), "manifold {:#x} lacks a friction or twist row", m.id);
    }
    let joint_rows = rows.iter().filter(|r| r.id & (TAG | (1 << 59)) == TAG | (1 << 59)).count();
    assert_eq!(joint_rows, 5 + 6, "a revolute joint has 5 rows, a fixed one 6");
    let eps = 1e-6;
    let mut worst = 0.0_f64;
    for r in &rows {
        for slot in 0..r.n {
            for axis in 0..3 {
                let value = |sign: f64| {
                    let mut moved = c.clone();
                    moved[r.particles[slot]][axis] += sign * eps;
                    rows_at(&moved).iter().find(|q| q.id == r.id).expect("same rows nearby").c
                };
                let fd = (value(1.0) - value(-1.0)) / (2.0 * eps);
                let error = (fd - r.grad[slot][axis]).abs();
                worst = worst.max(error);
                assert!(error < 1e-6, "row {:#x}, coordinate {slot}.{axis}: {} against {fd}", r.id, r.grad[slot][axis]);
            }
        }
    }
    eprintln!("{} rows, largest gradient error {worst:.1e}", rows.len());
}
