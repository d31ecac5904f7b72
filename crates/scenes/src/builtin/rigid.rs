//! Scenes of 6-DoF rigid bodies ([`solverlab_core::rigid`]), after the impulse tutorial (Video
//! Game Physics Tutorial, Part III) and Solver2D's test set (Catto 2024). The stack and the pyramid take the same
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
    source: "Solver2D (Catto 2024: vertical stack, high mass ratio); Video Game Physics Tutorial, Part III",
    params: super::box_stack::params,
    build: build_stack,
};

/// The pyramid entry.
pub const PYRAMID: Builtin = Builtin {
    name: "rigid-pyramid",
    summary: "a pyramid of rigid boxes, base row of `base` boxes (the rigid twin of box-pyramid)",
    source: "Solver2D (Catto 2024: pyramid)",
    params: super::box_stack::pyramid_params,
    build: build_pyramid,
};

/// The sliding box entry.
pub const SLIDE: Builtin = Builtin {
    name: "rigid-slide",
    summary: "a box sliding on the floor at `speed`; Coulomb stops it after v²/(2μg)",
    source: "closed form of kinetic friction (Coulomb)",
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
    source: "Catto, GDC 2015 (gyroscopic term: L = I ω stays fixed)",
    params: tumbling_params,
    build: build_tumbling,
};

/// The friction ramp entry.
pub const RAMP: Builtin = Builtin {
    name: "rigid-ramp",
    summary: "boxes side by side on an incline with μ from 0 to `max_friction`; those with μ < tan θ slide",
    source: "Solver2D (Catto 2024: friction ramp, onset at atan μ)",
    params: ramp_params,
    build: build_ramp,
};

/// The chain entry.
pub const CHAIN: Builtin = Builtin {
    name: "rigid-chain",
    summary:
        "rigid boxes linked by ball joints from a world anchor, released horizontally or hanging, optional heavy end",
    source: "Ten Minute Physics (body chain with a 100× heavy end); Small Steps 2019, Fig. 3",
    params: chain_params,
    build: build_chain,
};

/// The bridge entry.
pub const BRIDGE: Builtin = Builtin {
    name: "rigid-bridge",
    summary: "planks on revolute joints between two world anchors, sagging under their weight",
    source: "Solver2D (Catto 2024: bridge)",
    params: bridge_params,
    build: build_bridge,
};

fn chain_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("links", 20.0, "number of links"),
        ParamSpec::num("length", 0.2, "link length (m); links are boxes of length × 0.05 × 0.05 m"),
        ParamSpec::num("mass", 1.0, "mass of each link (kg)"),
        ParamSpec::num("ratio", 1.0, "mass of the last link divided by the others'"),
        ParamSpec::word("start", "horizontal", "horizontal (released, swings down) | vertical (hangs at rest)"),
    ]
}

/// Link `k` spans `[k·L, (k+1)·L]` along x at y = 0 (or, hanging, along −y at x = 0); joint `k`
/// sits at `k·L` along the chain (joint 0 on the world).
fn build_chain(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("links", 1, 100_000)?;
    let len = p.positive("length")?;
    let mass = p.positive("mass")?;
    let ratio = p.positive("ratio")?;
    let dir = if p.word("start", &["horizontal", "vertical"])? == "horizontal" { Vec3::x() } else { -Vec3::y() };
    let half = dir.abs() * (len / 2.0) + (Vec3::repeat(1.0) - dir.abs()) * 0.025;
    let mut scene = Scene::new("rigid-chain");
    for k in 0..n {
        let m = if k + 1 == n { mass * ratio } else { mass };
        let x = dir * ((k as f64 + 0.5) * len);
        scene.rigid.push(RigidBody::new(Shape::Box { half }, m, x));
        let (a, b) = if k == 0 { (0, None) } else { (k - 1, Some(k)) };
        scene.joints.push(Joint {
            kind: JointKind::Ball,
            a,
            b,
            anchor: dir * (k as f64 * len),
            anchor_b: None,
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
        anchor_b: None,
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

/// The warm-start energy entry.
pub const WARM_START_ENERGY: Builtin = Builtin {
    name: "rigid-warm-start-energy",
    summary: "three stacked rigid boxes, the top one `ratio` times denser, removed at `remove_at` (the rigid twin of warm-start-energy)",
    source: "Solver2D (Catto 2024: warm start energy)",
    params: super::box_stack::energy_params,
    build: build_energy,
};

/// The card house entry.
pub const CARD_HOUSE: Builtin = Builtin {
    name: "rigid-card-house",
    summary: "a house of thin cards: rows of leaning pairs (A-frames) with a flat deck card between rows",
    source: "Solver2D (Catto 2024: card house)",
    params: card_params,
    build: build_card_house,
};

/// The arch entry.
pub const ARCH: Builtin = Builtin {
    name: "rigid-arch",
    summary: "a corbelled arch: two walls of boxes stepping inwards until they meet, held by friction and each other",
    source: "Solver2D (Catto 2024: arch, there of wedge stones; solverlab has boxes, so a corbelled arch)",
    params: arch_params,
    build: build_arch,
};

/// The ragdoll entry.
pub const RAGDOLL: Builtin = Builtin {
    name: "rigid-ragdoll",
    summary: "capsule ragdolls (11 bodies: ball neck and shoulders, hinged spine, hips, knees and elbows with limits) dropped on the floor",
    source: "Solver2D (Catto 2024: ragdoll)",
    params: ragdoll_params,
    build: build_ragdoll,
};

/// The joint grid entry.
pub const JOINT_GRID: Builtin = Builtin {
    name: "rigid-joint-grid",
    summary: "an n × n grid of spheres, each joined to its right and lower neighbours by ball joints, hung from its top corners",
    source: "Solver2D (Catto 2024: joint grid)",
    params: grid_params,
    build: build_joint_grid,
};

/// Half the extra length of the right card of each A-frame (m).
const TALLER: f64 = 0.01;

fn card_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("levels", 3.0, "rows of A-frames; row r (0 = bottom) has levels − r of them"),
        ParamSpec::num("angle", 25.0, "tilt of each card from the vertical (degrees)"),
        ParamSpec::num("height", 0.5, "card height (m); cards are 0.35 m wide and 0.02 m thick"),
        ParamSpec::num("gap", 0.1, "gap between the feet of neighbouring A-frames (m)"),
        ParamSpec::num("mass", 0.2, "mass of each card (kg)"),
        ParamSpec::num("friction", 0.7, "friction μ of the cards and the floor"),
    ]
}

/// A card of half height `l` and half thickness `t`, tilted by θ from the vertical, touches the
/// floor (or the deck below, at `base`) with its lowest corner and its partner at the apex, a
/// line at `x = xc`, height `base + 2·l·cos θ`: its centre is
/// `(xc ∓ (l·sin θ + t·cos θ), base + l·cos θ + t·sin θ)`. The deck of row `r` is one flat card
/// on the frames' highest corners, spanning the row's apexes with half a frame of overhang at each end; row `r + 1` stands on it,
/// its frames centred between the apexes below. Two cards meeting edge to edge is a knife-edge
/// start; so the right card of each pair is `2·TALLER` longer upwards.
fn build_card_house(p: &Params) -> Result<Scene, ParamError> {
    let levels = p.count("levels", 1, 50)?;
    let theta = p.num("angle").to_radians();
    if !(theta > 0.0 && theta < std::f64::consts::FRAC_PI_3) {
        return Err(ParamError::new("angle", format!("{} must be in (0, 60) degrees", p.num("angle"))));
    }
    let l = p.positive("height")? / 2.0;
    let (t, w) = (0.01, 0.175);
    let gap = p.non_negative("gap")?;
    let mass = p.positive("mass")?;
    let mu = p.non_negative("friction")?;
    let mut scene = Scene::new("rigid-card-house");
    floor(&mut scene, Vec3::y(), mu);
    let half_foot = l * theta.sin() + t * theta.cos();
    let pitch = 4.0 * half_foot + gap;
    let card = |x: Vec3, angle: f64, half: Vec3| {
        let mut b = RigidBody::new(Shape::Box { half }, mass, x);
        b.q = nalgebra::UnitQuaternion::from_axis_angle(&Vec3::z_axis(), angle);
        b.friction = mu;
        b
    };
    let mut base = 0.0;
    for r in 0..levels {
        let frames = levels - r;
        let x0 = -(frames as f64 - 1.0) / 2.0 * pitch;
        for k in 0..frames {
            let xc = x0 + k as f64 * pitch;
            let y = base + l * theta.cos() + t * theta.sin();
            // Rotating about z by −θ tips the card's long (y) axis towards +x: the left card.
            scene.rigid.push(card(Vec3::new(xc - half_foot, y, 0.0), -theta, Vec3::new(t, l, w)));
            // The right card is 2 cm taller, its foot where it was: the left card's top edge
            // then leans on its face, 2 cm below its top, rather than meeting its top edge.
            let taller = Vec3::new(-theta.sin(), theta.cos(), 0.0) * TALLER;
            scene.rigid.push(card(Vec3::new(xc + half_foot, y, 0.0) + taller, theta, Vec3::new(t, l + TALLER, w)));
        }
        // The highest point of a frame: the right card's outer top corner.
        let apex = base + 2.0 * (l + TALLER) * theta.cos() + 2.0 * t * theta.sin();
        if frames > 1 {
            let half_len = (frames as f64 - 1.0) / 2.0 * pitch + 2.0 * half_foot;
            scene.rigid.push(card(Vec3::new(0.0, apex + t, 0.0), 0.0, Vec3::new(half_len, t, w)));
        }
        base = apex + 2.0 * t;
    }
    Ok(scene)
}

fn arch_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("layers", 6.0, "boxes in each wall"),
        ParamSpec::num("step", 0.1, "how far each layer reaches further in than the one below (m)"),
        ParamSpec::num("mass", 5.0, "mass of each box (kg)"),
        ParamSpec::num("friction", 0.6, "friction μ of the boxes and the floor"),
    ]
}

/// Two walls of `layers` boxes (0.6 × 0.25 × 0.5 m), layer k's inner face `step` further in
/// than layer k − 1's, so that the top layers' inner faces meet at x = 0; a capstone box lies
/// across the top. Each wall alone would topple inwards once its overhang passes its base; the
/// two lean on each other at the top, which is what an arch does.
fn build_arch(p: &Params) -> Result<Scene, ParamError> {
    let layers = p.count("layers", 2, 100)?;
    let step = p.positive("step")?;
    let mass = p.positive("mass")?;
    let mu = p.non_negative("friction")?;
    let half = Vec3::new(0.3, 0.125, 0.25);
    let mut scene = Scene::new("rigid-arch");
    floor(&mut scene, Vec3::y(), mu);
    let inner0 = (layers as f64 - 1.0) * step;
    for k in 0..layers {
        let inner = inner0 - k as f64 * step;
        let y = half.y * (2 * k + 1) as f64;
        for side in [-1.0, 1.0] {
            let mut b = RigidBody::new(Shape::Box { half }, mass, Vec3::new(side * (inner + half.x), y, 0.0));
            b.friction = mu;
            scene.rigid.push(b);
        }
    }
    let mut cap = RigidBody::new(Shape::Box { half }, mass, Vec3::new(0.0, half.y * (2 * layers + 1) as f64, 0.0));
    cap.friction = mu;
    scene.rigid.push(cap);
    Ok(scene)
}

fn ragdoll_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("count", 3.0, "ragdolls, dropped one above the other, each turned 40° about y from the last"),
        ParamSpec::num("height", 0.3, "drop height of the lowest ragdoll's feet (m)"),
        ParamSpec::num("friction", 0.6, "friction μ of the bodies and the floor"),
    ]
}

/// One ragdoll, standing, facing +z (SI units; 70 kg in all). The limits follow the joint angle
/// of [`JointKind::Revolute`] (b relative to a, right-handed about the axis): about +x a limb
/// hanging along −y swings forwards (+z) for negative angles, so elbows bend in `[−2.5, 0]`,
/// knees in `[0, 2.5]` and hips in `[−1.6, 0.5]` rad; the spine in `[−0.5, 0.8]`.
fn ragdoll(scene: &mut Scene, origin: Vec3, turn: f64, mu: f64) {
    let q = nalgebra::UnitQuaternion::from_axis_angle(&Vec3::y_axis(), turn);
    let at = |x: f64, y: f64| origin + q * Vec3::new(x, y, 0.0);
    let add = |scene: &mut Scene, shape: Shape, mass: f64, x: f64, y: f64, lying: bool| {
        let mut b = RigidBody::new(shape, mass, at(x, y));
        b.q = if lying {
            q * nalgebra::UnitQuaternion::from_axis_angle(&Vec3::z_axis(), std::f64::consts::FRAC_PI_2)
        } else {
            q
        };
        b.friction = mu;
        scene.rigid.push(b);
        scene.rigid.len() - 1
    };
    let cap = |radius: f64, half_height: f64| Shape::Capsule { radius, half_height };
    let pelvis = add(scene, cap(0.1, 0.1), 12.0, 0.0, 1.0, true);
    let torso = add(scene, cap(0.12, 0.15), 22.0, 0.0, 1.35, false);
    let head = add(scene, Shape::Sphere { radius: 0.11 }, 5.0, 0.0, 1.75, false);
    let axis = q * Vec3::x();
    let joint = |scene: &mut Scene, kind: JointKind, a: usize, b: usize, x: f64, y: f64| {
        scene.joints.push(Joint { kind, a, b: Some(b), anchor: at(x, y), anchor_b: None, compliance: 0.0 });
    };
    let hinge = |lower: f64, upper: f64| JointKind::Revolute { axis, lower, upper };
    joint(scene, hinge(-0.5, 0.8), pelvis, torso, 0.0, 1.12);
    joint(scene, JointKind::Ball, torso, head, 0.0, 1.63);
    for side in [-1.0, 1.0] {
        let upper_arm = add(scene, cap(0.05, 0.12), 2.5, side * 0.28, 1.38, false);
        let forearm = add(scene, cap(0.045, 0.11), 2.0, side * 0.28, 1.06, false);
        let thigh = add(scene, cap(0.07, 0.17), 8.0, side * 0.1, 0.72, false);
        let shin = add(scene, cap(0.06, 0.17), 4.5, side * 0.1, 0.3, false);
        joint(scene, JointKind::Ball, torso, upper_arm, side * 0.28, 1.55);
        joint(scene, hinge(-2.5, 0.0), upper_arm, forearm, side * 0.28, 1.21);
        joint(scene, hinge(-1.6, 0.5), pelvis, thigh, side * 0.1, 0.92);
        joint(scene, hinge(0.0, 2.5), thigh, shin, side * 0.1, 0.51);
    }
}

fn build_ragdoll(p: &Params) -> Result<Scene, ParamError> {
    let count = p.count("count", 1, 1000)?;
    let height = p.non_negative("height")?;
    let mu = p.non_negative("friction")?;
    let mut scene = Scene::new("rigid-ragdoll");
    floor(&mut scene, Vec3::y(), mu);
    for k in 0..count {
        // The shins' lowest point is 0.07 m above the ragdoll's origin.
        let origin = Vec3::new(0.0, height - 0.07 + 2.0 * k as f64, 0.0);
        ragdoll(&mut scene, origin, (40.0 * k as f64).to_radians(), mu);
    }
    Ok(scene)
}

fn grid_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("n", 10.0, "spheres along each side"),
        ParamSpec::num(
            "spacing",
            0.2,
            "distance between neighbouring sphere centres (m); spheres have radius spacing/4",
        ),
        ParamSpec::num("mass", 1.0, "mass of each sphere (kg)"),
    ]
}

/// Sphere (i, j) at `(j·s, −i·s, 0)`; ball joints at the midpoints to (i, j + 1) and (i + 1, j);
/// the two top corners hang from the world by ball joints at their centres.
fn build_joint_grid(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("n", 2, 1000)?;
    let s = p.positive("spacing")?;
    let mass = p.positive("mass")?;
    let mut scene = Scene::new("rigid-joint-grid");
    let index = |i: usize, j: usize| i * n + j;
    let centre = |i: usize, j: usize| Vec3::new(j as f64 * s, -(i as f64) * s, 0.0);
    for i in 0..n {
        for j in 0..n {
            scene.rigid.push(RigidBody::new(Shape::Sphere { radius: s / 4.0 }, mass, centre(i, j)));
        }
    }
    let ball = |a: usize, b: Option<usize>, anchor: Vec3| Joint {
        kind: JointKind::Ball,
        a,
        b,
        anchor,
        anchor_b: None,
        compliance: 0.0,
    };
    for i in 0..n {
        for j in 0..n {
            if j + 1 < n {
                scene.joints.push(ball(index(i, j), Some(index(i, j + 1)), (centre(i, j) + centre(i, j + 1)) / 2.0));
            }
            if i + 1 < n {
                scene.joints.push(ball(index(i, j), Some(index(i + 1, j)), (centre(i, j) + centre(i + 1, j)) / 2.0));
            }
        }
    }
    scene.joints.push(ball(index(0, 0), None, centre(0, 0)));
    scene.joints.push(ball(index(0, n - 1), None, centre(0, n - 1)));
    Ok(scene)
}

/// Three boxes resting on each other on the floor; the top one, `ratio` times heavier, leaves
/// the scene at `remove_at` (`[[removal]] rigid = 2`). A solver that warm-starts the lower
/// contacts with the impulses that carried the heavy box pushes the light boxes up in the step
/// after the removal; `max_top_drift` and the kinetic energy after `remove_at` show by how much.
fn build_energy(p: &Params) -> Result<Scene, ParamError> {
    let (l, remove_at) = super::box_stack::energy_layout(p)?;
    let mut scene = rigid_boxes("rigid-warm-start-energy", l);
    let body = solverlab_core::model::RemovedBody::Rigid(2);
    scene.removals.push(solverlab_core::model::Removal { body, time: remove_at });
    Ok(scene)
}
