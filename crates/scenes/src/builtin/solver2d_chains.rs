//! Two of Solver2D's joint scenes (Catto 2024, `samples/collection/sample_joints.cpp`) in 3-D
//! with 6-DoF rigid bodies, Solver2D's lengths in metres, gravity −10 m/s².
//!
//! * `ball-and-chain`: 40 capsules of half length 0.5 m and radius 0.125 m, density 20 kg/m³
//!   (1.15 kg each), lying end to end along x from a world anchor at height 20 m, on revolute
//!   joints about z (`joint = "ball"`: ball joints), and a ball of radius 4 m on the last one.
//!   Box2D v3's version of the scene has the radius-4 ball, whose areal mass is 168 times a link's
//!   (Solver2D's own sample has radius 8: 672 times); a solid sphere of radius 4 m at the same
//!   density would be 4 700 times a capsule, so the ball's mass is set by `ratio` (default 168)
//!   and the radius only shapes its collisions. The chain is released horizontally and swings
//!   down. Solver2D damps the bodies' velocities by 0.1/s; these do not.
//! * `stretched-chain`: 40 links of length 1 m whose centres start 2 m apart, hanging from a
//!   world anchor at height 39.5 m: each joint holds the end of one link to the start of the
//!   next, 1 m apart at the start (`anchor_b` of [`solverlab_core::rigid::Joint`]), so every
//!   joint starts with a 1 m gap to close. A link is a sphere of radius 0.2 m (density 1) with
//!   its joint anchors 0.5 m above and below its centre; revolute joints about z as in Solver2D
//!   (there the links do not collide: here the spheres are 1 m apart once the gaps close).

use solverlab_core::rigid::{Joint, JointKind, RigidBody, Shape};
use solverlab_core::{Scene, Vec3};

use super::high_mass_ratio::solver2d_scene;
use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The ball-and-chain entry.
pub const BALL_AND_CHAIN: Builtin = Builtin {
    name: "ball-and-chain",
    summary: "40 capsules on revolute joints from a world anchor with a radius-4 ball 168 times a link's mass",
    source: "Solver2D (Catto 2024: ball & chain; Box2D v3's radius-4 ball)",
    params: ball_params,
    build: build_ball,
};

/// The stretched-chain entry.
pub const STRETCHED_CHAIN: Builtin = Builtin {
    name: "stretched-chain",
    summary: "40 links of 1 m hanging from a world anchor, started at twice their spacing (every joint 1 m apart)",
    source: "Solver2D (Catto 2024: stretched chain)",
    params: stretched_params,
    build: build_stretched,
};

fn ball_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("links", 40.0, "capsules in the chain"),
        ParamSpec::num("ratio", 168.0, "mass of the ball divided by a capsule's"),
        ParamSpec::num("radius", 4.0, "radius of the ball (m)"),
        ParamSpec::word("joint", "revolute", "revolute (about z, as in Solver2D) | ball"),
    ]
}

fn joint_kind(word: &str) -> JointKind {
    let inf = f64::INFINITY;
    match word {
        "ball" => JointKind::Ball,
        _ => JointKind::Revolute { axis: Vec3::z(), lower: -inf, upper: inf },
    }
}

/// Capsule i (its axis along x) centred at `x = 0.5 + i`, `y = 20`; joint i at `x = i` joins
/// capsule i to capsule i − 1 (joint 0 to the world); the ball's centre is `radius` beyond the
/// last joint.
fn build_ball(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("links", 1, 10_000)?;
    let ratio = p.positive("ratio")?;
    let radius = p.positive("radius")?;
    let kind = joint_kind(&p.word("joint", &["revolute", "ball"])?);
    let (hx, r, density, y) = (0.5, 0.125, 20.0, 20.0);
    let mut scene = solver2d_scene("ball-and-chain");
    let lying = nalgebra::UnitQuaternion::from_axis_angle(&Vec3::z_axis(), std::f64::consts::FRAC_PI_2);
    let capsule = Shape::Capsule { radius: r, half_height: hx };
    let link_mass = density * capsule.volume();
    let joint = |a: usize, b: Option<usize>, x: f64| Joint {
        kind,
        a,
        b,
        anchor: Vec3::new(x, y, 0.0),
        anchor_b: None,
        compliance: 0.0,
    };
    for i in 0..n {
        let mut b = RigidBody::new(capsule, link_mass, Vec3::new((1.0 + 2.0 * i as f64) * hx, y, 0.0));
        b.q = lying;
        scene.rigid.push(b);
        scene.joints.push(if i == 0 { joint(0, None, 0.0) } else { joint(i, Some(i - 1), 2.0 * hx * i as f64) });
    }
    let end = 2.0 * hx * n as f64;
    scene.rigid.push(RigidBody::new(Shape::Sphere { radius }, ratio * link_mass, Vec3::new(end + radius, y, 0.0)));
    scene.joints.push(joint(n, Some(n - 1), end));
    Ok(scene)
}

fn stretched_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("links", 40.0, "links in the chain"),
        ParamSpec::num("length", 1.0, "link length (m): the distance between a link's two anchors"),
        ParamSpec::num("stretch", 2.0, "spacing of the links' centres at the start, in link lengths"),
    ]
}

/// Solver2D's layout with `L` the link length: the world anchor at `y = N·L − L/2`, link i's
/// centre at `y = N·L − s·L·(i + 1)` with `s` the stretch, its anchors at `±L/2` along y; joint i
/// holds the lower anchor of link i − 1 (or the world point) to the upper anchor of link i.
fn build_stretched(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("links", 1, 10_000)?;
    let len = p.positive("length")?;
    let stretch = p.positive("stretch")?;
    let kind = joint_kind("revolute");
    let mut scene = solver2d_scene("stretched-chain");
    let base = n as f64 * len;
    let shape = Shape::Sphere { radius: 0.2 * len };
    let centre = |i: usize| Vec3::new(0.0, base - stretch * len * (i as f64 + 1.0), 0.0);
    for i in 0..n {
        scene.rigid.push(RigidBody::new(shape, shape.volume(), centre(i)));
        // `a` (link i) holds its upper anchor; `b` (link i − 1, or the world) its lower one.
        let (b, held_by_b) = if i == 0 {
            (None, Vec3::new(0.0, base - 0.5 * len, 0.0))
        } else {
            (Some(i - 1), centre(i - 1) - Vec3::new(0.0, 0.5 * len, 0.0))
        };
        scene.joints.push(Joint {
            kind,
            a: i,
            b,
            anchor: centre(i) + Vec3::new(0.0, 0.5 * len, 0.0),
            anchor_b: Some(held_by_b),
            compliance: 0.0,
        });
    }
    Ok(scene)
}
