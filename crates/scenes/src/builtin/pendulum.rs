//! A simple pendulum: one stick from a fixed pivot at the origin to a bob. The constraint
//! tutorial's opening example (Video Game Physics Tutorial, Part III, "Particle distance constraint") and the
//! `pendulum.toml` of the scene-file format.

use solverlab_core::{Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "pendulum",
    summary: "one bob on a stick from a fixed pivot",
    source: "Video Game Physics Tutorial, Part III: particle distance constraint",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("length", 1.0, "stick length (m)"),
        ParamSpec::num("angle", 90.0, "initial angle from straight down (degrees); 90 starts horizontal"),
        ParamSpec::num("mass", 1.0, "bob mass (kg)"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let len = p.positive("length")?;
    let theta = p.num("angle").to_radians();
    let mut scene = Scene::new("pendulum");
    let pivot = scene.add(Particle::fixed(Vec3::zeros()));
    let bob = scene.add(Particle::new(Vec3::new(len * theta.sin(), -len * theta.cos(), 0.0), p.positive("mass")?));
    scene.stick(pivot, bob);
    Ok(scene)
}
