//! A plant: Jakobsen §4: "by placing support sticks between strategically chosen couples of
//! vertices sharing a neighbor, the cloth algorithm can be extended to simulate plants". A stem
//! is a ladder strip of two rails standing on a fixed base; support sticks join every particle to
//! the one two rungs up, which gives the strip bending resistance. The tip starts with a sideways
//! push, so the plant sways.

use solverlab_core::{Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "plant",
    summary: "a stem (strip of sticks) with support sticks, swaying after a push",
    source: "Jakobsen 2001, §4 (support sticks for plants)",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("segments", 12.0, "rungs above the base"),
        ParamSpec::num("segment", 0.1, "rung spacing along the stem (m)"),
        ParamSpec::num("width", 0.04, "stem width (m)"),
        ParamSpec::num("mass", 0.01, "mass of each particle (kg)"),
        ParamSpec::num("push", 1.0, "initial sideways speed of the top rung (m/s), falling off linearly to the base"),
        ParamSpec::flag("support", true, "add the support sticks (without them the stem folds)"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("segments", 2, 100_000)?;
    let seg = p.positive("segment")?;
    let width = p.positive("width")?;
    let mass = p.positive("mass")?;
    let push = p.num("push");
    let mut scene = Scene::new("plant");
    // Rung r has particles 2r (left) and 2r + 1 (right); rung 0 is the fixed base.
    for r in 0..=n {
        for side in 0..2 {
            let x = Vec3::new(side as f64 * width, r as f64 * seg, 0.0);
            let mut particle = if r == 0 { Particle::fixed(x) } else { Particle::new(x, mass) };
            particle.v = Vec3::new(0.0, 0.0, push * r as f64 / n as f64);
            if r == 0 {
                particle.v = Vec3::zeros();
            }
            scene.add(particle);
        }
    }
    for r in 0..n {
        let (l0, r0, l1, r1) = (2 * r, 2 * r + 1, 2 * r + 2, 2 * r + 3);
        scene.stick(l0, l1);
        scene.stick(r0, r1);
        scene.stick(l1, r1);
        scene.stick(l0, r1);
        scene.stick(r0, l1);
    }
    if p.flag("support") {
        for r in 0..n - 1 {
            scene.stick(2 * r, 2 * r + 4);
            scene.stick(2 * r + 1, 2 * r + 5);
        }
    }
    Ok(scene)
}
