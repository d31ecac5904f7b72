//! A pile of balls in a box: particles with a radius collide with each other and with the box
//! (piles are a common contact-rich stress scene; Jakobsen §3 handles the
//! box by projection). The balls start on a jittered lattice above the floor, without overlap,
//! and fall into a heap. Particle-particle contact pairs come from the uniform-grid broadphase.

use solverlab_core::rng::Rng;
use solverlab_core::{BoxCollider, Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "balls",
    summary: "a pile of balls with radii colliding with each other in a box",
    source: "Jakobsen 2001, §3 (piles of balls)",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("n", 1000.0, "number of balls"),
        ParamSpec::num("radius", 0.05, "ball radius (m)"),
        ParamSpec::num("width", 1.0, "box width and depth (m)"),
        ParamSpec::num("friction", 0.3, "box friction μ"),
        ParamSpec::num("seed", 1.0, "seed of the lattice jitter"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("n", 1, 1_000_000)?;
    let r = p.positive("radius")?;
    let width = p.positive("width")?;
    let per_side = ((width / (2.2 * r)).floor() as usize).max(1);
    if per_side < 2 {
        return Err(ParamError::new("radius", format!("{r} m balls do not fit two abreast in a {width} m box")));
    }
    let mut rng = Rng::new(p.count("seed", 0, u32::MAX as usize)? as u64);
    let mut scene = Scene::new("balls");
    let spacing = width / per_side as f64;
    for k in 0..n {
        let (i, j, layer) = (k % per_side, (k / per_side) % per_side, k / (per_side * per_side));
        let jitter = (spacing - 2.0 * r) * 0.45;
        let x = Vec3::new(
            (i as f64 + 0.5) * spacing + jitter * (2.0 * rng.next_f64() - 1.0),
            r + 0.1 + layer as f64 * 2.2 * r,
            (j as f64 + 0.5) * spacing + jitter * (2.0 * rng.next_f64() - 1.0),
        );
        let mut ball = Particle::new(x, 1.0);
        ball.radius = r;
        scene.add(ball);
    }
    let top = scene.particles.iter().map(|b| b.x.y).fold(0.0, f64::max) + 1.0;
    scene.bounds = Some(BoxCollider {
        min: Vec3::zeros(),
        max: Vec3::new(width, top, width),
        friction: p.non_negative("friction")?,
        restitution: 0.0,
    });
    Ok(scene)
}
