//! A block on an incline: the floor `y ≥ 0` with friction μ and gravity tilted by the incline's
//! angle θ about z, `g = (g sin θ, −g cos θ, 0)`, so that "down the slope" is +x. The block is one
//! particle or a rigid triangle of three particles (three sticks) lying on the plane, at rest.
//!
//! Closed forms (Coulomb friction): below the friction angle, `tan θ < μ`, the block stays; above
//! it, it slides with `a = g (sin θ − μ cos θ)`, so after `t` seconds it has moved `a t²/2` and
//! carries momentum `M a t`. The friction ramp of Solver2D (Catto 2024; onset at atan μ),
//! and the check the issue on contact physics asks of every family.

use solverlab_core::{Particle, Plane, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "incline",
    summary: "a particle or rigid triangle at rest on a plane tilted by `angle` (gravity tilted), friction μ",
    source: "Solver2D (Catto 2024: friction ramp, onset at atan μ); Coulomb's law",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("angle", 20.0, "incline angle θ (degrees, 0 ≤ θ < 90)"),
        ParamSpec::num("friction", 0.5, "friction coefficient μ of the plane (atan 0.5 = 26.6°)"),
        ParamSpec::word("body", "particle", "particle | triangle (three particles joined by sticks)"),
        ParamSpec::num("mass", 1.0, "mass of each particle (kg)"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let angle = p.non_negative("angle")?;
    if angle >= 90.0 {
        return Err(ParamError::new("angle", format!("{angle}° must be below 90°")));
    }
    let mu = p.non_negative("friction")?;
    let mass = p.positive("mass")?;
    let triangle = p.word("body", &["particle", "triangle"])? == "triangle";
    let t = angle.to_radians();
    let mut s = Scene::new("incline");
    s.gravity = Vec3::new(9.81 * t.sin(), -9.81 * t.cos(), 0.0);
    s.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: mu, restitution: 0.0 });
    s.add(Particle::new(Vec3::zeros(), mass));
    if triangle {
        s.add(Particle::new(Vec3::new(0.2, 0.0, 0.0), mass));
        s.add(Particle::new(Vec3::new(0.1, 0.0, 0.17), mass));
        for (a, b) in [(0, 1), (1, 2), (2, 0)] {
            s.stick(a, b);
        }
    }
    Ok(s)
}
