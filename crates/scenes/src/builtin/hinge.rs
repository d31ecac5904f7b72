//! Joints by shared particles (Jakobsen §6: "a pin joint … by letting two bodies share a
//! particle, and a hinge joint by letting them share two"). A fixed tetrahedron (the frame) and a
//! movable one that shares `shared` of its particles: one shared particle is a ball joint, two
//! are a hinge about the line through them (here the z axis at height 2 m). The movable body
//! starts level, sticking out along +x, and is given a sideways speed along +z at its far tip:
//! on a hinge it can only swing in the x-y plane, on a ball joint it also swings out of it.

use solverlab_core::{Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "hinge",
    summary: "a tetrahedron hanging from a fixed one by 1 shared particle (ball joint) or 2 (hinge)",
    source: "Jakobsen 2001, §6",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("shared", 2.0, "particles the bodies share: 1 (ball joint) or 2 (hinge)"),
        ParamSpec::num("length", 1.0, "reach of the movable body along x (m)"),
        ParamSpec::num("speed", 1.0, "initial sideways speed of the tip along +z (m/s)"),
        ParamSpec::num("mass", 1.0, "mass of each movable particle (kg)"),
    ]
}

/// Particles: 0–3 the fixed frame (0 and 1 on the hinge line z = ∓0.25 at x = 0, y = 2). The
/// movable body is 0 and 1 (for a ball joint, 0 and a particle of its own where 1 is), its far
/// tip at x = length (the particle with an initial velocity) and one above its middle.
fn build(p: &Params) -> Result<Scene, ParamError> {
    let shared = p.count("shared", 1, 2)?;
    let length = p.positive("length")?;
    let mass = p.positive("mass")?;
    let speed = p.num("speed");
    let mut scene = Scene::new("hinge");
    let y = 2.0;
    for x in [
        Vec3::new(0.0, y, -0.25),
        Vec3::new(0.0, y, 0.25),
        Vec3::new(-0.4, y + 0.3, 0.0),
        Vec3::new(-0.3, y - 0.2, 0.1),
    ] {
        scene.add(Particle::fixed(x));
    }
    // With one shared particle, the body's second particle near the axis is its own (movable).
    let second = if shared == 2 { 1 } else { scene.add(Particle::new(Vec3::new(0.0, y, 0.25), mass)) };
    let tip = scene.add(Particle::new(Vec3::new(length, y, 0.0), mass));
    scene.particles[tip].v = Vec3::new(0.0, 0.0, speed);
    let top = scene.add(Particle::new(Vec3::new(0.5 * length, y + 0.3, 0.0), mass));
    let body = [0, second, tip, top];
    for a in 0..4 {
        for b in a + 1..4 {
            // A stick between two fixed particles (the hinge line itself) would be inert.
            if scene.particles[body[a]].w + scene.particles[body[b]].w > 0.0 {
                scene.stick(body[a], body[b]);
            }
        }
    }
    Ok(scene)
}
