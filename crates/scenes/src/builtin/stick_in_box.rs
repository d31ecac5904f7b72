//! A stick in a box: Jakobsen §4, constraints (C1) (stay in the box) and (C2) (two particles a
//! fixed distance apart), satisfied together by relaxation. Jakobsen's stick of 100 in a box of
//! 1000 becomes 1 m in 10 m.

use solverlab_core::{BoxCollider, Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "stick-in-box",
    summary: "two particles joined by a stick, tumbling in a box",
    source: "Jakobsen 2001, §4, constraints (C1) and (C2)",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("length", 1.0, "stick length (m)"),
        ParamSpec::num("size", 10.0, "box edge (m)"),
        ParamSpec::num("spin", 3.0, "opposite sideways speeds of the two ends (m/s)"),
        ParamSpec::num("friction", 0.0, "box friction μ"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let length = p.positive("length")?;
    let size = p.positive("size")?;
    if length >= size {
        return Err(ParamError::new("length", format!("{length} m does not fit in a box of {size} m")));
    }
    let spin = p.non_negative("spin")?;
    let mut scene = Scene::new("stick-in-box");
    let c = Vec3::repeat(size / 2.0);
    let mut a = Particle::new(c - Vec3::new(length / 2.0, 0.0, 0.0), 1.0);
    let mut b = Particle::new(c + Vec3::new(length / 2.0, 0.0, 0.0), 1.0);
    a.v = Vec3::new(1.0, 2.0, spin);
    b.v = Vec3::new(1.0, 2.0 + spin, -spin);
    let (a, b) = (scene.add(a), scene.add(b));
    scene.stick(a, b);
    scene.bounds = Some(BoxCollider {
        min: Vec3::zeros(),
        max: Vec3::repeat(size),
        friction: p.non_negative("friction")?,
        restitution: 0.0,
    });
    Ok(scene)
}
