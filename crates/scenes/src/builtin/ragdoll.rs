//! A stick-figure ragdoll: Jakobsen §6 ("Articulated bodies"): Hitman's corpses are particles
//! joined by sticks, with unilateral (minimum-distance) sticks as angle limits and as simple
//! self-collision, for example between the knees "making sure that the legs never cross".
//!
//! Particles: 0 head, 1 neck, 2/3 left/right shoulder, 4/5 elbows, 6/7 hands, 8 pelvis, 9/10
//! hips, 11/12 knees, 13/14 feet. The figure stands on the floor (`y = 0`), lifted by `height`,
//! and is hit at the right shoulder. With `drag > 0` the right hand is instead held and dragged
//! along the floor (the seed's IK: an immovable particle moved to its target every step).

use solverlab_core::{Constraint, Particle, Plane, Scene, Vec3};

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
            "if > 0, the right hand is held and dragged along +x at this speed (m/s), the seed's IK",
        ),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let h = p.non_negative("height")?;
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
