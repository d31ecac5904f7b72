//! The scenes the peer runs: any solverlab scene by name or file (`solverlab_scenes::resolve`),
//! and the one the benchmark needs that no rigid builtin gives, 10,000 spheres in a box.

use solverlab_core::rigid::{RigidBody, Shape};
use solverlab_core::Scene;

/// The scene `name` (a builtin or a scene file) with `--set` overrides, as solverlab builds it;
/// with `rigid_spheres`, its balls made rigid ([`rigid_spheres`]).
pub fn load(name: &str, sets: &[String], rigid_spheres: bool) -> Result<Scene, String> {
    let scene = solverlab_scenes::resolve(name, sets).map_err(|e| e.to_string())?;
    if rigid_spheres {
        self::rigid_spheres(&scene)
    } else {
        Ok(scene)
    }
}

/// The balls of a particle scene (particles with a radius, such as the `balls` builtin's pile in
/// a box) as rigid spheres of the same radius, mass, position and velocity, with the friction
/// and restitution of the scene's box (or 0), in the same box, under the same gravity and step.
/// solverlab has no rigid builtin of thousands of spheres in a box; this gives one from the
/// `balls` layout, for both engines alike.
pub fn rigid_spheres(scene: &Scene) -> Result<Scene, String> {
    if scene.particles.iter().any(|p| p.radius <= 0.0 || p.w <= 0.0) || !scene.constraints.is_empty() {
        return Err(format!(
            "scene `{}`: --rigid-spheres needs free movable particles with a radius and no constraints",
            scene.name
        ));
    }
    let (mu, e) = scene.bounds.as_ref().map_or((0.0, 0.0), |b| (b.friction, b.restitution));
    let mut out = Scene::new(format!("{}-rigid", scene.name));
    out.gravity = scene.gravity;
    out.dt = scene.dt;
    out.damping = scene.damping;
    out.bounds = scene.bounds.clone();
    out.planes = scene.planes.clone();
    out.spheres = scene.spheres.clone();
    out.blocks = scene.blocks.clone();
    for p in &scene.particles {
        let mut b = RigidBody::new(Shape::Sphere { radius: p.radius }, p.mass(), p.x);
        b.v = p.v;
        b.friction = mu;
        b.restitution = e;
        out.rigid.push(b);
    }
    out.validate().map_err(|e| format!("scene `{}`: {e}", out.name))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balls_become_rigid_spheres() {
        let sets = ["n=50".to_string()];
        let s = load("balls", &sets, true).expect("balls");
        assert_eq!(s.rigid.len(), 50);
        assert!(s.particles.is_empty() && s.bounds.is_some());
        assert!(s.rigid.iter().all(|b| b.shape == Shape::Sphere { radius: 0.05 } && (b.mass() - 1.0).abs() < 1e-12));
        assert!(load("cloth", &[], true).is_err());
    }
}
