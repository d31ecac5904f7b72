//! A stick-figure ragdoll: Jakobsen §6 ("Articulated bodies"): Hitman's corpses are particles
//! joined by sticks, with unilateral (minimum-distance) sticks as angle limits and as simple
//! self-collision, for example between the knees "making sure that the legs never cross".
//!
//! Particles: 0 head, 1 neck, 2/3 left/right shoulder, 4/5 elbows, 6/7 hands, 8 pelvis, 9/10
//! hips, 11/12 knees, 13/14 feet. The figure stands on the floor (`y = 0`), lifted by `height`,
//! and is hit at the right shoulder. With `drag > 0` the right hand is instead held and dragged
//! along the floor (Jakobsen's IK: an immovable particle moved to its target every step).
//!
//! `ragdoll-stairs` stands the same figure on the top of a flight of solid steps (blocks) and
//! knocks it down them (a ragdoll falling down stairs).

use solverlab_core::{Block, Constraint, Kind, Particle, Plane, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "ragdoll",
    summary: "stick figure with min-distance angle limits (knees never cross), knocked over",
    source: "Jakobsen 2001, §6",
    params,
    build,
};

/// The stairs entry: the same figure knocked down a flight of steps.
pub const STAIRS: Builtin = Builtin {
    name: "ragdoll-stairs",
    summary: "the ragdoll knocked down a flight of solid steps (block colliders)",
    source: "Jakobsen 2001, §6 (a ragdoll falling down stairs)",
    params: stairs_params,
    build: build_stairs,
};

/// Index of the right hand (the dragged one).
pub const RIGHT_HAND: usize = 7;
/// Index of the left knee.
pub const LEFT_KNEE: usize = 11;
/// Index of the right knee.
pub const RIGHT_KNEE: usize = 12;

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("height", 0.2, "initial height of the feet above the floor (m)"),
        ParamSpec::num("push", 3.0, "speed of the blow at the right shoulder, along −z (m/s)"),
        ParamSpec::num("friction", 0.5, "floor friction μ"),
        ParamSpec::num("knee_gap", 0.12, "minimum distance between the knees, and between the feet (m)"),
        ParamSpec::num("mass", 5.0, "mass of each particle (kg)"),
        ParamSpec::num(
            "drag",
            0.0,
            "if > 0, the right hand is held and dragged along +x at this speed (m/s), Jakobsen's IK",
        ),
    ]
}

fn stairs_params() -> Vec<ParamSpec> {
    let mut specs = params();
    specs.retain(|s| s.name != "drag");
    specs.extend([
        ParamSpec::num("steps", 6.0, "number of steps"),
        ParamSpec::num("rise", 0.18, "height of each step (m)"),
        ParamSpec::num("run", 0.3, "depth of each step along −z (m)"),
    ]);
    specs
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let mut scene = figure(p, 0.0)?;
    let drag = p.non_negative("drag")?;
    if drag > 0.0 {
        // Jakobsen's IK: the hand becomes immovable and follows its target, so every solver
        // sees it as a kinematic particle and the rest of the body is pulled along by sticks.
        scene.particles[RIGHT_HAND].w = 0.0;
        scene.particles[RIGHT_HAND].v = Vec3::zeros();
        let target = scene.particles[RIGHT_HAND].x;
        scene.constraints.push(Constraint {
            kind: Kind::Pin { a: RIGHT_HAND, target, velocity: Vec3::new(drag, 0.0, 0.0) },
            compliance: 0.0,
        });
    }
    Ok(scene)
}

/// The figure on the top step of `steps` blocks descending along −z. Step `i` (0 at the top) is
/// the block `x ∈ [−1, 1]`, `y ∈ [0, (steps − i)·rise]`, `z ∈ [−(i + 1)·run, −i·run]`; the top
/// one also reaches back to `z = run` under the figure, which stands at `z = 0`.
fn build_stairs(p: &Params) -> Result<Scene, ParamError> {
    let steps = p.count("steps", 1, 1000)?;
    let rise = p.positive("rise")?;
    let run = p.positive("run")?;
    let mu = p.non_negative("friction")?;
    let mut scene = figure(p, steps as f64 * rise)?;
    scene.name = "ragdoll-stairs".into();
    for i in 0..steps {
        let back = if i == 0 { run } else { -(i as f64) * run };
        scene.blocks.push(Block {
            min: Vec3::new(-1.0, 0.0, -(i as f64 + 1.0) * run),
            max: Vec3::new(1.0, (steps - i) as f64 * rise, back),
            friction: mu,
            restitution: 0.0,
        });
    }
    Ok(scene)
}

/// The standing figure with its feet `height` above `floor`, knocked at the right shoulder.
fn figure(p: &Params, floor: f64) -> Result<Scene, ParamError> {
    let h = p.non_negative("height")? + floor;
    let mass = p.positive("mass")?;
    let gap = p.positive("knee_gap")?;
    let at = |x: f64, y: f64| Vec3::new(x, y + h, 0.0);
    let points = [
        at(0.0, 1.70),   // 0 head
        at(0.0, 1.50),   // 1 neck
        at(-0.20, 1.45), // 2 left shoulder
        at(0.20, 1.45),  // 3 right shoulder
        at(-0.25, 1.15), // 4 left elbow
        at(0.25, 1.15),  // 5 right elbow
        at(-0.28, 0.88), // 6 left hand
        at(0.28, 0.88),  // 7 right hand
        at(0.0, 0.95),   // 8 pelvis
        at(-0.12, 0.90), // 9 left hip
        at(0.12, 0.90),  // 10 right hip
        at(-0.13, 0.48), // 11 left knee
        at(0.13, 0.48),  // 12 right knee
        at(-0.14, 0.03), // 13 left foot
        at(0.14, 0.03),  // 14 right foot
    ];
    let mut scene = Scene::new("ragdoll");
    for x in points {
        scene.add(Particle::new(x, mass));
    }
    scene.particles[3].v = Vec3::new(0.0, 0.0, -p.non_negative("push")?);
    let bones = [
        (0, 1),
        (1, 2),
        (1, 3),
        (2, 3), // head, neck, shoulders
        (2, 4),
        (4, 6),
        (3, 5),
        (5, 7), // arms
        (1, 8),
        (2, 9),
        (3, 10),
        (2, 10),
        (3, 9),
        (8, 9),
        (8, 10),
        (9, 10), // torso
        (9, 11),
        (11, 13),
        (10, 12),
        (12, 14), // legs
    ];
    for (a, b) in bones {
        scene.stick(a, b);
    }
    // Angle limits as minimum distances (§6, Figure 8): elbows and knees cannot fold shut, the
    // head cannot fold onto the chest, knees and feet cannot pass through each other.
    let limit = |scene: &Scene, a: usize, b: usize, fraction: f64| {
        Constraint::min_distance(a, b, fraction * (scene.particles[b].x - scene.particles[a].x).norm())
    };
    let limits = [
        limit(&scene, 2, 6, 0.45),
        limit(&scene, 3, 7, 0.45),
        limit(&scene, 9, 13, 0.55),
        limit(&scene, 10, 14, 0.55),
        limit(&scene, 0, 8, 0.85),
    ];
    scene.constraints.extend(limits);
    scene.constraints.push(Constraint::min_distance(LEFT_KNEE, RIGHT_KNEE, gap));
    scene.constraints.push(Constraint::min_distance(13, 14, gap));
    scene.planes.push(Plane {
        normal: Vec3::y(),
        offset: 0.0,
        friction: p.non_negative("friction")?,
        restitution: 0.0,
    });
    Ok(scene)
}
