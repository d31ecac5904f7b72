//! A tetrahedron rigid body: Jakobsen §5 ("Rigid bodies"): four particles and six sticks have
//! exactly the six degrees of freedom of a rigid body (4·3 − 6). Dropped, spinning, into
//! Jakobsen's box; Jakobsen reports 3–4 relaxation iterations are enough.

use solverlab_core::{BoxCollider, Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "tetrahedron",
    summary: "rigid body of 4 particles and 6 sticks, dropped spinning into a box",
    source: "Jakobsen 2001, §5",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("edge", 1.0, "edge length (m)"),
        ParamSpec::num("size", 10.0, "box edge (m); 0 removes the box"),
        ParamSpec::num("height", 5.0, "initial height of the centre (m)"),
        ParamSpec::num("spin", 2.0, "initial angular speed about the body's (1, 1, 0) axis (rad/s)"),
        ParamSpec::num("speed", 1.0, "initial sideways speed of the centre (m/s)"),
        ParamSpec::num("friction", 0.3, "box friction μ"),
        ParamSpec::num("mass", 1.0, "mass of each particle (kg)"),
    ]
}

/// The four vertices of a regular tetrahedron of edge `edge` centred on the origin.
pub fn vertices(edge: f64) -> [Vec3; 4] {
    let s = edge / (2.0 * 2f64.sqrt());
    [
        Vec3::new(1.0, 1.0, 1.0) * s,
        Vec3::new(1.0, -1.0, -1.0) * s,
        Vec3::new(-1.0, 1.0, -1.0) * s,
        Vec3::new(-1.0, -1.0, 1.0) * s,
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let edge = p.positive("edge")?;
    let size = p.non_negative("size")?;
    let height = p.num("height");
    let omega = Vec3::new(1.0, 1.0, 0.0).normalize() * p.num("spin");
    let centre = Vec3::new(size / 2.0, height, size / 2.0);
    let v_centre = Vec3::new(p.num("speed"), 0.0, 0.0);
    let mass = p.positive("mass")?;
    let mut scene = Scene::new("tetrahedron");
    for r in vertices(edge) {
        let mut particle = Particle::new(centre + r, mass);
        particle.v = v_centre + omega.cross(&r);
        scene.add(particle);
    }
    for a in 0..4 {
        for b in a + 1..4 {
            scene.stick(a, b);
        }
    }
    if size > 0.0 {
        if edge >= size {
            return Err(ParamError::new("edge", format!("{edge} m does not fit in a box of {size} m")));
        }
        scene.bounds = Some(BoxCollider {
            min: Vec3::zeros(),
            max: Vec3::repeat(size),
            friction: p.non_negative("friction")?,
            restitution: 0.0,
        });
    }
    Ok(scene)
}
