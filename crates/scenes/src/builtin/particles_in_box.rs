//! Particles in a box: Jakobsen §3 ("Collision and contact handling by projection"). Free
//! particles thrown around a closed box; projection onto the box handles collision and resting
//! contact at once, with the velocity change left to Verlet.

use solverlab_core::rng::Rng;
use solverlab_core::{BoxCollider, Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "particles-in-box",
    summary: "free particles thrown around a closed box",
    source: "Jakobsen 2001, §3",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("n", 64.0, "number of particles"),
        ParamSpec::num("size", 10.0, "box edge (m)"),
        ParamSpec::num("speed", 5.0, "largest initial speed (m/s)"),
        ParamSpec::num("friction", 0.0, "box friction μ"),
        ParamSpec::num("restitution", 0.0, "box restitution e in [0, 1]"),
        ParamSpec::num("seed", 1.0, "seed of the initial positions and velocities"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("n", 1, 10_000_000)?;
    let size = p.positive("size")?;
    let speed = p.non_negative("speed")?;
    let mut rng = Rng::new(p.count("seed", 0, u32::MAX as usize)? as u64);
    let mut scene = Scene::new("particles-in-box");
    for _ in 0..n {
        let x = Vec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) * size;
        let mut particle = Particle::new(x, 1.0);
        particle.v = rng.unit_vector() * speed * rng.next_f64();
        scene.add(particle);
    }
    scene.bounds = Some(BoxCollider {
        min: Vec3::zeros(),
        max: Vec3::repeat(size),
        friction: p.non_negative("friction")?,
        restitution: p.non_negative("restitution")?,
    });
    Ok(scene)
}
