//! A box embedded in a tetrahedron, dropped on the floor: Jakobsen §5, Figure 6. The rigid body
//! is a regular tetrahedron of 4 particles and 6 sticks inscribed in a cube: its vertices are
//! four alternate corners of the cube, and the other four corners are embedded points
//! `p = Σ cᵢxᵢ` with affine weights `(−½, ½, ½, ½)` and permutations, so the whole cube collides
//! with the floor while only the tetrahedron is simulated.

use nalgebra::Matrix3;
use solverlab_core::{Constraint, EmbeddedPoint, Particle, Plane, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "embedded-box",
    summary: "a cube carried by a tetrahedron rigid body (embedded corners), dropped on the floor",
    source: "Jakobsen 2001, §5 (Figure 6)",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("size", 0.5, "cube edge (m)"),
        ParamSpec::num("height", 1.0, "initial height of the centre (m); size/2 rests on the floor"),
        ParamSpec::num("spin", 3.0, "initial angular speed about (1, 0, 1) (rad/s)"),
        ParamSpec::num("friction", 0.5, "floor friction μ"),
        ParamSpec::num("mass", 1.0, "mass of each tetrahedron particle (kg)"),
    ]
}

/// Affine weights of `p` with respect to the tetrahedron `v` (solves `Σ cᵢvᵢ = p`, `Σ cᵢ = 1`).
pub fn barycentric(v: &[Vec3; 4], p: &Vec3) -> Option<[f64; 4]> {
    let m = Matrix3::from_columns(&[v[0] - v[3], v[1] - v[3], v[2] - v[3]]);
    let c = m.try_inverse()? * (p - v[3]);
    Some([c.x, c.y, c.z, 1.0 - c.x - c.y - c.z])
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let s = p.positive("size")? / 2.0;
    let centre = Vec3::new(0.0, p.num("height"), 0.0);
    if centre.y < s {
        return Err(ParamError::new("height", format!("{} m puts the cube below the floor", centre.y)));
    }
    let omega = Vec3::new(1.0, 0.0, 1.0).normalize() * p.num("spin");
    let mass = p.positive("mass")?;
    let corners = |signs: [f64; 3]| Vec3::new(signs[0], signs[1], signs[2]) * s;
    let vertices =
        [corners([1.0, 1.0, 1.0]), corners([1.0, -1.0, -1.0]), corners([-1.0, 1.0, -1.0]), corners([-1.0, -1.0, 1.0])];
    let mut scene = Scene::new("embedded-box");
    for r in vertices {
        let mut particle = Particle::new(centre + r, mass);
        particle.v = omega.cross(&r);
        scene.add(particle);
    }
    for a in 0..4 {
        for b in a + 1..4 {
            scene.constraints.push(Constraint::stick(a, b, (vertices[b] - vertices[a]).norm()));
        }
    }
    for signs in [[-1.0, -1.0, -1.0], [-1.0, 1.0, 1.0], [1.0, -1.0, 1.0], [1.0, 1.0, -1.0]] {
        let weights = barycentric(&vertices, &corners(signs)).expect("a regular tetrahedron is not flat");
        scene.embedded.push(EmbeddedPoint { particles: [0, 1, 2, 3], weights, count: 4 });
    }
    scene.planes.push(Plane {
        normal: Vec3::y(),
        offset: 0.0,
        friction: p.non_negative("friction")?,
        restitution: 0.0,
    });
    Ok(scene)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_other_cube_corners_have_weights_minus_half_and_halves() {
        let scene = crate::builtin::default_scene("embedded-box");
        let x: Vec<Vec3> = scene.particles.iter().map(|p| p.x).collect();
        for e in &scene.embedded {
            let mut w = e.weights;
            w.sort_by(f64::total_cmp);
            for (got, want) in w.iter().zip([-0.5, 0.5, 0.5, 0.5]) {
                assert!((got - want).abs() < 1e-12, "{:?}", e.weights);
            }
            // Each embedded corner is a cube corner: at distance √3·s from the centre.
            let c = x.iter().sum::<Vec3>() / 4.0;
            assert!(((e.position(&x) - c).norm() - 0.25 * 3f64.sqrt()).abs() < 1e-12);
        }
    }
}
