//! Scenes of 6-DoF rigid bodies ([`solverlab_core::rigid`]), after the impulse tutorial (seed
//! 004) and Solver2D's test set (reference.md §4, §6). The stack and the pyramid take the same
//! parameters and defaults as their particle-box versions (`box-stack`, `box-pyramid`), so an
//! experiment can put the two representations side by side.

use solverlab_core::rigid::{Joint, JointKind, RigidBody, Shape};
use solverlab_core::{Plane, Scene, Vec3};

use super::box_stack::{pyramid_layout, stack_layout, Layout};
use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The stack entry.
pub const STACK: Builtin = Builtin {
    name: "rigid-stack",
    summary: "a vertical stack of rigid boxes, optional heavy top box (the rigid twin of box-stack)",
    source: "reference.md §4 (vertical stack, mass-ratio stack); impulse tutorial (seed 004)",
    params: super::box_stack::params,
    build: build_stack,
};

/// The pyramid entry.
pub const PYRAMID: Builtin = Builtin {
    name: "rigid-pyramid",
    summary: "a pyramid of rigid boxes, base row of `base` boxes (the rigid twin of box-pyramid)",
    source: "reference.md §4 (pyramid, base 10 and 20); Solver2D",
    params: super::box_stack::pyramid_params,
    build: build_pyramid,
};

/// The sliding box entry.
pub const SLIDE: Builtin = Builtin {
    name: "rigid-slide",
    summary: "a box sliding on the floor at `speed`; Coulomb stops it after v²/(2μg)",
    source: "closed form of kinetic friction; reference.md §6",
    params: slide_params,
    build: build_slide,
};

/// The rolling sphere entry.
pub const ROLLING_SPHERE: Builtin = Builtin {
    name: "rolling-sphere",
    summary: "a solid sphere rolling down an incline at (5/7)·g·sin θ",
    source: "closed form of rolling without slipping; Solver2D (rolling resistance sample)",
    params: rolling_params,
    build: build_rolling,
};

/// The tumbling box entry.
pub const TUMBLING_BOX: Builtin = Builtin {
    name: "tumbling-box",
    summary: "a free 1 × 0.5 × 0.25 m box spinning near its intermediate axis, no gravity (Dzhanibekov)",
    source: "reference.md §6 (gyroscopic term: L = I ω stays fixed)",
    params: tumbling_params,
    build: build_tumbling,
};

/// The friction ramp entry.
pub const RAMP: Builtin = Builtin {
    name: "rigid-ramp",
    summary: "boxes side by side on an incline with μ from 0 to `max_friction`; those with μ < tan θ slide",
    source: "reference.md §4 (friction ramp, onset at atan μ); Solver2D",
    params: ramp_params,
    build: build_ramp,
};

/// The chain entry.
pub const CHAIN: Builtin = Builtin {
    name: "rigid-chain",
    summary: "rigid boxes linked by ball joints from a world anchor, released horizontally, optional heavy end",
    source: "reference.md §4 (chain with heavy end, 100×); Small Steps 2019, Fig. 3",
    params: chain_params,
    build: build_chain,
};

/// The bridge entry.
pub const BRIDGE: Builtin = Builtin {
    name: "rigid-bridge",
    summary: "planks on revolute joints between two world anchors, sagging under their weight",
    source: "Solver2D (bridge); reference.md §4",
    params: bridge_params,
    build: build_bridge,
};

fn chain_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("links", 20.0, "number of links"),
        ParamSpec::num("length", 0.2, "link length (m); links are boxes of length × 0.05 × 0.05 m"),
        ParamSpec::num("mass", 1.0, "mass of each link (kg)"),
        ParamSpec::num("ratio", 1.0, "mass of the last link divided by the others'"),
    ]
}

/// Link `k` spans `[k·L, (k+1)·L]` along x at y = 0; joint `k` sits at `x = k·L` (joint 0 on the
/// world).
fn build_chain(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("links", 1, 100_000)?;
    let len = p.positive("length")?;
    let mass = p.positive("mass")?;
    let ratio = p.positive("ratio")?;
    let mut scene = Scene::new("rigid-chain");
    for k in 0..n {
        let m = if k + 1 == n { mass * ratio } else { mass };
        let x = Vec3::new((k as f64 + 0.5) * len, 0.0, 0.0);
        scene.rigid.push(RigidBody::new(Shape::Box { half: Vec3::new(len / 2.0, 0.025, 0.025) }, m, x));
        let (a, b) = if k == 0 { (0, None) } else { (k - 1, Some(k)) };
        scene.joints.push(Joint {
            kind: JointKind::Ball,
            a,
            b,
            anchor: Vec3::new(k as f64 * len, 0.0, 0.0),
            compliance: 0.0,
        });
    }
    Ok(scene)
}

fn bridge_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("planks", 20.0, "number of planks"),
        ParamSpec::num("length", 0.5, "plank length along the span (m); planks are 0.5 m wide and 0.05 m thick"),
        ParamSpec::num("mass", 2.0, "mass of each plank (kg)"),
    ]
}

/// Planks side by side along x at y = 0, each hinged to the next about z (revolute joints at
/// their shared edges), the first and the last hinged to the world: a rope bridge of rigid
/// planks that sags into a catenary-like curve.
fn build_bridge(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("planks", 1, 100_000)?;
    let len = p.positive("length")?;
    let mass = p.positive("mass")?;
    let mut scene = Scene::new("rigid-bridge");
    let inf = f64::INFINITY;
    let hinge = |a: usize, b: Option<usize>, x: f64| Joint {
        kind: JointKind::Revolute { axis: Vec3::z(), lower: -inf, upper: inf },
        a,
        b,
        anchor: Vec3::new(x, 0.0, 0.0),
        compliance: 0.0,
    };
    for k in 0..n {
        let x = Vec3::new((k as f64 + 0.5) * len, 0.0, 0.0);
        scene.rigid.push(RigidBody::new(Shape::Box { half: Vec3::new(len / 2.0, 0.025, 0.25) }, mass, x));
        scene.joints.push(if k == 0 { hinge(0, None, 0.0) } else { hinge(k - 1, Some(k), k as f64 * len) });
    }
    scene.joints.push(hinge(n - 1, None, n as f64 * len));
    Ok(scene)
}

fn floor(scene: &mut Scene, normal: Vec3, friction: f64) {
    scene.planes.push(Plane { normal, offset: 0.0, friction, restitution: 0.0 });
}

fn cube(size: f64, mass: f64, x: Vec3, friction: f64) -> RigidBody {
    let mut b = RigidBody::new(Shape::Box { half: Vec3::repeat(size / 2.0) }, mass, x);
    b.friction = friction;
    b
}

fn rigid_boxes(name: &str, l: Layout) -> Scene {
    let mut scene = Scene::new(name);
    for (centre, mass) in l.boxes {
        scene.rigid.push(cube(l.size, mass, centre, l.friction));
    }
    floor(&mut scene, Vec3::y(), l.friction);
    scene
}

fn build_stack(p: &Params) -> Result<Scene, ParamError> {
    Ok(rigid_boxes("rigid-stack", stack_layout(p)?))
}

fn build_pyramid(p: &Params) -> Result<Scene, ParamError> {
    Ok(rigid_boxes("rigid-pyramid", pyramid_layout(p)?))
}

fn slide_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("speed", 2.0, "initial speed along x (m/s)"),
        ParamSpec::num("friction", 0.5, "friction μ of the floor and of the box"),
        ParamSpec::num("size", 0.5, "box edge (m)"),
        ParamSpec::num("mass", 1.0, "box mass (kg)"),
    ]
}

fn build_slide(p: &Params) -> Result<Scene, ParamError> {
    let size = p.positive("size")?;
    let mu = p.non_negative("friction")?;
    let mut scene = Scene::new("rigid-slide");
    let mut b = cube(size, p.positive("mass")?, Vec3::new(0.0, size / 2.0, 0.0), mu);
    b.v = Vec3::new(p.num("speed"), 0.0, 0.0);
    scene.rigid.push(b);
    floor(&mut scene, Vec3::y(), mu);
    Ok(scene)
}

fn rolling_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("angle", 20.0, "incline angle (degrees)"),
        ParamSpec::num("radius", 0.2, "sphere radius (m)"),
        ParamSpec::num("mass", 2.0, "sphere mass (kg)"),
        ParamSpec::num("friction", 0.6, "friction μ of the incline and of the sphere"),
    ]
}

fn build_rolling(p: &Params) -> Result<Scene, ParamError> {
    let theta = p.num("angle").to_radians();
    if !(0.0..std::f64::consts::FRAC_PI_2).contains(&theta) {
        return Err(ParamError::new("angle", format!("{} must be in [0, 90) degrees", p.num("angle"))));
    }
    let r = p.positive("radius")?;
    let mu = p.non_negative("friction")?;
    let mut scene = Scene::new("rolling-sphere");
    let n = Vec3::new(-theta.sin(), theta.cos(), 0.0);
    floor(&mut scene, n, mu);
    let mut b = RigidBody::new(Shape::Sphere { radius: r }, p.positive("mass")?, n * r);
    b.friction = mu;
    scene.rigid.push(b);
    Ok(scene)
}

fn tumbling_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("spin", 5.0, "angular speed about the intermediate (y) axis (rad/s)"),
        ParamSpec::num("wobble", 0.1, "angular speed about the x axis that starts the tumble (rad/s)"),
        ParamSpec::num("mass", 1.0, "box mass (kg)"),
    ]
}

fn build_tumbling(p: &Params) -> Result<Scene, ParamError> {
    let mut scene = Scene::new("tumbling-box");
    scene.gravity = Vec3::zeros();
    let mut b = RigidBody::new(Shape::Box { half: Vec3::new(0.5, 0.25, 0.125) }, p.positive("mass")?, Vec3::zeros());
    b.w = Vec3::new(p.num("wobble"), p.num("spin"), 0.2 * p.num("wobble"));
    scene.rigid.push(b);
    Ok(scene)
}

fn ramp_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("angle", 30.0, "incline angle (degrees); tan 30° = 0.577"),
        ParamSpec::num("boxes", 9.0, "number of boxes, μ spread evenly over [0, max_friction]"),
        ParamSpec::num("max_friction", 0.8, "friction μ of the last box against the incline"),
        ParamSpec::num("size", 0.5, "box edge (m)"),
    ]
}

/// The incline has μ = 1 and box k has μₖ² so that the combined `√(μ_incline·μ_box)` is exactly
/// `μₖ = k/(n − 1)·max_friction`.
fn build_ramp(p: &Params) -> Result<Scene, ParamError> {
    let theta = p.num("angle").to_radians();
    if !(0.0..std::f64::consts::FRAC_PI_2).contains(&theta) {
        return Err(ParamError::new("angle", format!("{} must be in [0, 90) degrees", p.num("angle"))));
    }
    let n = p.count("boxes", 1, 1000)?;
    let size = p.positive("size")?;
    let top = p.non_negative("max_friction")?;
    let mut scene = Scene::new("rigid-ramp");
    let normal = Vec3::new(-theta.sin(), theta.cos(), 0.0);
    floor(&mut scene, normal, 1.0);
    let q = nalgebra::UnitQuaternion::from_axis_angle(&Vec3::z_axis(), theta);
    for k in 0..n {
        let mu = if n > 1 { top * k as f64 / (n - 1) as f64 } else { top };
        let mut b = cube(size, 1.0, normal * (size / 2.0) + Vec3::z() * (1.5 * size * k as f64), mu * mu);
        b.q = q;
        scene.rigid.push(b);
    }
    Ok(scene)
}
