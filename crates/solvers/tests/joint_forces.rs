//! Joint forces against statics, under every family: a ball joint holding a hanging sphere
//! carries its weight and no torque; a fixed joint holding a horizontal beam by one end carries
//! its weight and the torque `m·g·L/2` about the anchor (what `forces.csv` writes as `joint`
//! rows).

use solverlab_core::rigid::{Joint, JointForce, JointKind, RigidBody, Shape};
use solverlab_core::sim::Simulation;
use solverlab_core::{NullObserver, Scene, Vec3};
use solverlab_solvers::{build, preset};

const G: f64 = 9.81;

fn held(kind: JointKind, shape: Shape, centre: Vec3, mass: f64) -> Scene {
    let mut s = Scene::new("held");
    s.rigid.push(RigidBody::new(shape, mass, centre));
    s.joints.push(Joint { kind, a: 0, b: None, anchor: Vec3::zeros(), anchor_b: None, compliance: 0.0 });
    s
}

fn settle(scene: &Scene, solver: &str) -> JointForce {
    let p = preset(solver).unwrap();
    let mut s = build(&p.config, solver).unwrap();
    let mut sim = Simulation::new(scene, s.as_mut(), scene.dt, p.config.default_substeps()).unwrap();
    for _ in 0..120 {
        sim.step_frame(&mut NullObserver).unwrap();
    }
    let mut out = Vec::new();
    sim.solver().rigid_joints(&mut out);
    assert_eq!(out.len(), 1, "{solver}: one joint");
    out[0]
}

#[test]
fn joints_carry_the_weight_and_the_moment_of_what_they_hold_every_family() {
    let (mass, length) = (2.0, 1.0);
    let pendulum = held(JointKind::Ball, Shape::Sphere { radius: 0.1 }, Vec3::new(0.0, -1.0, 0.0), mass);
    let beam = held(
        JointKind::Fixed,
        Shape::Box { half: Vec3::new(length / 2.0, 0.05, 0.05) },
        Vec3::new(length / 2.0, 0.0, 0.0),
        mass,
    );
    let weight = mass * G;
    for solver in ["xpbd", "gs", "pgs", "soft-step", "cg", "direct"] {
        let f = settle(&pendulum, solver);
        eprintln!("{solver}: pendulum {:.4} N, {:.2e} N·m", f.force.norm(), f.torque.norm());
        assert!((f.force - Vec3::new(0.0, weight, 0.0)).norm() < 0.01 * weight, "{solver}: {:?}", f.force);
        assert!(f.torque.norm() < 1e-6, "{solver}: a ball joint holds no torque: {:?}", f.torque);
        let f = settle(&beam, solver);
        let moment = weight * length / 2.0;
        eprintln!(
            "{solver}: beam {:.4} N, {:.4} N·m (statics {weight:.4} N, {moment:.4} N·m)",
            f.force.norm(),
            f.torque.norm()
        );
        assert!((f.force - Vec3::new(0.0, weight, 0.0)).norm() < 0.01 * weight, "{solver}: {:?}", f.force);
        // The beam would turn down about z: the joint turns it back up, +z on the beam.
        assert!((f.torque - Vec3::new(0.0, 0.0, moment)).norm() < 0.01 * moment, "{solver}: {:?}", f.torque);
    }
}
