//! The spring oscillator of XPBD (Macklin et al. 2016, Fig. 2): one particle of mass 1 kg on a
//! compliant stick of rest length 1 m to a fixed anchor, released at 1.5 m with `α = 0.001` m/N,
//! no gravity. The analytic motion is `x(t) = rest + (x₀ − rest)·cos(√(k/m)·t)` with `k = 1/α`.
//! PBD's period and damping depend on the iteration count; XPBD's do not.

use solverlab_core::{Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "spring",
    summary: "one particle on a compliant stick, released stretched (no gravity)",
    source: "XPBD 2016, Fig. 2",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("compliance", 0.001, "stick compliance α (m/N); stiffness k = 1/α"),
        ParamSpec::num("rest", 1.0, "rest length (m)"),
        ParamSpec::num("start", 1.5, "initial length (m)"),
        ParamSpec::num("mass", 1.0, "particle mass (kg)"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let rest = p.positive("rest")?;
    let mut scene = Scene::new("spring");
    scene.gravity = Vec3::zeros();
    let anchor = scene.add(Particle::fixed(Vec3::zeros()));
    let bob = scene.add(Particle::new(Vec3::new(p.positive("start")?, 0.0, 0.0), p.positive("mass")?));
    let mut c = solverlab_core::Constraint::stick(anchor, bob, rest);
    c.compliance = p.non_negative("compliance")?;
    scene.constraints.push(c);
    Ok(scene)
}
