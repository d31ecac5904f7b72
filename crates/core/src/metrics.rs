//! Per-step measurements, the same for every solver.
//!
//! * violation: `|C|` over equality rows (equality sticks, pins on movable particles);
//! * penetration: `max(0, −C)` over inequality rows (min/max sticks, every collider, and
//!   particle-particle contacts between particles with a radius);
//! * stretch: `ℓ/rest` over equality sticks;
//! * energy: kinetic `Σ ½ m |v|²` with `v = (x − x*)/h` over movable particles (immovable ones
//!   have infinite mass and no motion); potential: gravitational `−Σ m g·x` over movable
//!   particles plus the elastic energy `½ C²/α` of every compliant row (`α > 0`; an inequality
//!   row only while violated);
//! * linear momentum `Σ m v` over movable particles.

use crate::constraint::{for_each_contact, stick_value};
use crate::model::{Kind, Scene, Sense, State};
use crate::Vec3;

/// Everything measured at the end of a step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepMetrics {
    /// Largest `|C|` over equality rows (m).
    pub max_violation: f64,
    /// Root mean square of `|C|` over equality rows (m); 0 when there are none.
    pub rms_violation: f64,
    /// Largest penetration `max(0, −C)` over inequality rows (m).
    pub max_penetration: f64,
    /// Largest `length/rest` over equality sticks; 1 when there are none.
    pub max_stretch: f64,
    /// Kinetic energy (J).
    pub kinetic_energy: f64,
    /// Potential energy (J): gravitational, relative to the origin, plus elastic `½ C²/α`.
    pub potential_energy: f64,
    /// Linear momentum (kg·m/s).
    pub momentum: Vec3,
    /// Centre of mass of the movable particles (m): sag, drift of a body.
    pub com: Vec3,
}

/// The value of a pin row set: distance from the particle to its target at `time` (m).
fn pin_error(x: &Vec3, target: &Vec3, velocity: &Vec3, time: f64) -> f64 {
    (x - (target + velocity * time)).norm()
}

/// Measures `state` at the end of a step of length `h`.
pub fn measure(scene: &Scene, state: &State, h: f64) -> StepMetrics {
    let x = &state.x;
    let mut m = StepMetrics { max_stretch: 1.0, ..StepMetrics::default() };
    let mut sum_sq = 0.0;
    let mut count = 0usize;
    for c in &scene.constraints {
        match c.kind {
            Kind::Stick { a, b, rest, sense } => {
                let value = stick_value(&x[a], &x[b], rest, sense);
                if c.compliance > 0.0 && (sense == Sense::Equal || value < 0.0) {
                    m.potential_energy += 0.5 * value * value / c.compliance;
                }
                if sense == Sense::Equal {
                    sum_sq += value * value;
                    count += 1;
                    m.max_violation = m.max_violation.max(value.abs());
                    m.max_stretch = m.max_stretch.max((value + rest) / rest);
                } else {
                    m.max_penetration = m.max_penetration.max(-value);
                }
            }
            Kind::Pin { a, target, velocity } => {
                if scene.particles[a].w > 0.0 {
                    let e = pin_error(&x[a], &target, &velocity, state.time);
                    if c.compliance > 0.0 {
                        m.potential_energy += 0.5 * e * e / c.compliance;
                    }
                    sum_sq += e * e;
                    count += 1;
                    m.max_violation = m.max_violation.max(e);
                }
            }
        }
    }
    if count > 0 {
        m.rms_violation = (sum_sq / count as f64).sqrt();
    }
    m.max_penetration = m.max_penetration.max(max_collider_penetration(scene, x));
    let inv_h = 1.0 / h;
    let mut total_mass = 0.0;
    for ((p, xi), xp) in scene.particles.iter().zip(x).zip(&state.x_prev) {
        if p.w > 0.0 {
            let mass = 1.0 / p.w;
            total_mass += mass;
            m.com += xi * mass;
            let v = (xi - xp) * inv_h;
            m.kinetic_energy += 0.5 * mass * v.norm_squared();
            m.potential_energy -= mass * scene.gravity.dot(xi);
            m.momentum += v * mass;
        }
    }
    if total_mass > 0.0 {
        m.com /= total_mass;
    }
    m
}

/// Largest overlap `rᵢ + rⱼ − |xⱼ − xᵢ|` of two movable particles with radii (m).
pub fn max_pair_overlap(scene: &Scene, x: &[Vec3]) -> f64 {
    if !scene.particles.iter().any(|p| p.radius > 0.0) {
        return 0.0;
    }
    let radius: Vec<f64> = scene.particles.iter().map(|p| if p.w > 0.0 { p.radius } else { 0.0 }).collect();
    crate::broadphase::pairs(x, &radius, 0.0, |_, _| false)
        .into_iter()
        .map(|(i, j)| radius[i] + radius[j] - (x[j] - x[i]).norm())
        .fold(0.0, f64::max)
}

/// Largest penetration of any movable particle into any collider or another particle (m).
pub fn max_collider_penetration(scene: &Scene, x: &[Vec3]) -> f64 {
    let mut worst: f64 = max_pair_overlap(scene, x);
    if !scene.has_colliders() {
        return worst;
    }
    for (p, xi) in scene.particles.iter().zip(x) {
        if p.w > 0.0 {
            for_each_contact(scene, xi, p.radius, 0.0, |c| {
                worst = worst.max(-c.c);
            });
        }
    }
    for k in crate::bodies::contacts(&scene.bodies, x, 0.0) {
        worst = worst.max(-k.c);
    }
    for e in &scene.embedded {
        for_each_contact(scene, &e.position(x), 0.0, 0.0, |c| {
            worst = worst.max(-c.c);
        });
    }
    worst
}

/// The common position-level violation every solver can report: the largest of `|C|` over
/// equality rows and `max(0, −C)` over inequality rows and colliders (m), at `time`.
pub fn max_violation(scene: &Scene, x: &[Vec3], time: f64) -> f64 {
    let mut worst: f64 = 0.0;
    for c in &scene.constraints {
        match c.kind {
            Kind::Stick { a, b, rest, sense } => {
                let value = stick_value(&x[a], &x[b], rest, sense);
                worst = worst.max(if sense == Sense::Equal { value.abs() } else { -value });
            }
            Kind::Pin { a, target, velocity } => {
                if scene.particles[a].w > 0.0 {
                    worst = worst.max(pin_error(&x[a], &target, &velocity, time));
                }
            }
        }
    }
    worst.max(max_collider_penetration(scene, x))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Constraint, Particle, Plane};

    #[test]
    fn metrics_of_a_small_hand_checked_scene() {
        let mut scene = Scene::new("m");
        scene.add(Particle::fixed(Vec3::zeros()));
        scene.add(Particle::new(Vec3::new(0.0, -1.1, 0.0), 2.0));
        scene.constraints.push(Constraint::stick(0, 1, 1.0));
        scene.planes.push(Plane { normal: Vec3::y(), offset: -1.0, friction: 0.0, restitution: 0.0 });
        let mut state = scene.initial_state(0.1);
        state.x_prev[1] = Vec3::new(-0.1, -1.1, 0.0); // v = (1, 0, 0) m/s
        let m = measure(&scene, &state, 0.1);
        assert!((m.max_violation - 0.1).abs() < 1e-12);
        assert!((m.rms_violation - 0.1).abs() < 1e-12);
        assert!((m.max_stretch - 1.1).abs() < 1e-12);
        assert!((m.max_penetration - 0.1).abs() < 1e-12);
        assert!((m.kinetic_energy - 1.0).abs() < 1e-12, "½·2·1²");
        assert!((m.potential_energy - (-2.0 * 9.81 * 1.1)).abs() < 1e-12);
        assert!((m.momentum - Vec3::new(2.0, 0.0, 0.0)).norm() < 1e-12);
        assert_eq!(m.com, Vec3::new(0.0, -1.1, 0.0), "the fixed particle has no finite mass");
        assert!((max_violation(&scene, &state.x, 0.0) - 0.1).abs() < 1e-12);
        scene.constraints[0].compliance = 0.01;
        let elastic = measure(&scene, &state, 0.1).potential_energy - m.potential_energy;
        assert!((elastic - 0.5 * 0.01 / 0.01).abs() < 1e-12, "½·0.1²/0.01 = 0.5 J, got {elastic}");
    }
}
