//! A chain: particles joined by sticks, the top one fixed, optionally with a heavy end. The
//! mass-ratio chain is the stress test of Small Steps (Macklin et al. 2019, Fig. 3 and 4) and of
//! the heavy-end body chain of Ten Minute Physics; a pinned chain's `J W Jᵀ` is the
//! tridiagonal matrix whose condition number grows as N².
//!
//! Particle 0 is fixed at the origin; particle `i` starts at `i·length` along x (horizontal) or
//! below the origin (vertical).

use solverlab_core::{Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "chain",
    summary: "N sticks hanging from a fixed top particle, optional heavy end",
    source: "Jakobsen 2001, §4; Small Steps 2019, Fig. 3",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("links", 20.0, "number of sticks (particles = links + 1)"),
        ParamSpec::num("length", 0.1, "rest length of each stick (m)"),
        ParamSpec::num("mass", 1.0, "mass of each movable particle (kg)"),
        ParamSpec::num("ratio", 1.0, "mass of the end particle divided by `mass`"),
        ParamSpec::word("start", "horizontal", "horizontal (swings down) | vertical (hangs at rest)"),
        ParamSpec::num("compliance", 0.0, "compliance of every stick (m/N), used by XPBD"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let links = p.count("links", 1, 10_000_000)?;
    let len = p.positive("length")?;
    let mass = p.positive("mass")?;
    let ratio = p.positive("ratio")?;
    let dir = if p.word("start", &["horizontal", "vertical"])? == "horizontal" { Vec3::x() } else { -Vec3::y() };
    let alpha = p.non_negative("compliance")?;
    let mut scene = Scene::new("chain");
    scene.add(Particle::fixed(Vec3::zeros()));
    for i in 1..=links {
        let m = if i == links { mass * ratio } else { mass };
        scene.add(Particle::new(dir * (i as f64 * len), m));
        scene.stick(i - 1, i).compliance = alpha;
    }
    Ok(scene)
}
