//! The shared Verlet prediction (Jakobsen §2), the first half of every step of every solver.
//!
//! ```text
//! x' = x + (1 − damping)(x − x*) + a·h²        movable particles (w > 0)
//! x* ← x                                       (then x ← x')
//! ```
//!
//! With `damping = 0` this is `x' = 2x − x* + a·h²`; Jakobsen lowers the 2 to 1.99 for drag, which
//! is `damping = 0.01` here. Immovable particles keep their position, except those under a
//! kinematic pin, which move to the pin's target at the end of the step (Jakobsen's IK dragging).
//! The particles of a removed body ([`crate::model::Removal`]) are put at their parking place at
//! rest (`x = x* = initial + PARK_OFFSET`) from the first step that ends at or after its time.
//! The solver then projects `x` onto the constraints; the velocity at the end of the step is
//! `(x − x*)/h`.
//!
//! Rigid bodies ([`crate::rigid`]) are predicted at the velocity level: `v ← (1 − damping)·v +
//! g·h` and `ω ← (1 − damping)·ω` followed by the implicit gyroscopic step; their poses stay at
//! the start of the step, and the solver moves them ([`crate::rigid::integrate_positions`] or its
//! own position update).

use crate::constraint::for_each_contact;
use crate::model::{Kind, Scene, State};
use crate::Vec3;

/// A pin on an immovable particle: driven, not solved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KinematicPin {
    /// The particle.
    pub particle: usize,
    /// Target at `t = 0` (m).
    pub target: Vec3,
    /// Target velocity (m/s).
    pub velocity: Vec3,
}

/// The pins that act on immovable particles, in constraint order.
pub fn kinematic_pins(scene: &Scene) -> Vec<KinematicPin> {
    scene
        .constraints
        .iter()
        .filter_map(|c| match c.kind {
            Kind::Pin { a, target, velocity } if scene.particles[a].w == 0.0 => {
                Some(KinematicPin { particle: a, target, velocity })
            }
            _ => None,
        })
        .collect()
}

/// The fewest rigid bodies [`predict`] works on all threads for (half the 4,096 items the rigid
/// solvers' passes take before they go to the pool; chosen, not tuned).
const PARALLEL_RIGID: usize = 2048;

/// Predicts one step of `h` seconds and advances `state.time` and `state.step`.
pub fn predict(scene: &Scene, kinematic: &[KinematicPin], state: &mut State, h: f64) {
    let gh2 = scene.gravity * (h * h);
    let keep = 1.0 - scene.damping;
    for ((x, x_prev), p) in state.x.iter_mut().zip(state.x_prev.iter_mut()).zip(&scene.particles) {
        let old = *x;
        if p.w > 0.0 {
            *x += (*x - *x_prev) * keep + gh2;
        }
        *x_prev = old;
    }
    if !scene.rigid.is_empty() {
        // Damping, then [`crate::rigid::predict_velocity`], body by body: on all threads from
        // `PARALLEL_RIGID` bodies on (each body on its own, the same numbers on any number of
        // threads; on two threads the serial loop was 1 % of the 4,095-box pyramid's frame).
        let body = |(r, b): (&mut crate::rigid::RigidState, &crate::rigid::RigidBody)| {
            r.v *= keep;
            r.w *= keep;
            crate::rigid::predict_velocity(b, r, scene.gravity, h);
        };
        if state.rigid.len() >= PARALLEL_RIGID && rayon::current_num_threads() > 1 {
            use rayon::prelude::*;
            state.rigid.par_iter_mut().zip(scene.rigid.par_iter()).with_min_len(PARALLEL_RIGID / 2).for_each(body);
        } else {
            state.rigid.iter_mut().zip(&scene.rigid).for_each(body);
        }
    }
    state.time += h;
    state.step += 1;
    if let Some(gone) = scene.removed_particles(state.time) {
        for (i, _) in gone.iter().enumerate().filter(|(_, g)| **g) {
            let parked = scene.particles[i].x + crate::model::PARK_OFFSET;
            state.x[i] = parked;
            state.x_prev[i] = parked;
        }
    }
    for k in scene.removals.iter().filter_map(|r| r.rigid_body_by(state.time)) {
        // Parked far away at rest and asleep: no solver moves it, nothing touches it.
        let b = &scene.rigid[k];
        state.rigid[k] =
            crate::rigid::RigidState { x: b.x + crate::model::PARK_OFFSET, asleep: true, ..b.initial_state() };
    }
    for pin in kinematic {
        state.x[pin.particle] = pin.target + pin.velocity * state.time;
    }
}

/// Whether any collider has restitution `e > 0` (only then do solvers keep the prediction for
/// [`apply_restitution`]).
pub fn has_restitution(scene: &Scene) -> bool {
    scene.planes.iter().any(|p| p.restitution > 0.0)
        || scene.spheres.iter().any(|s| s.restitution > 0.0)
        || scene.bounds.as_ref().is_some_and(|b| b.restitution > 0.0)
        || scene.blocks.iter().any(|b| b.restitution > 0.0)
}

/// The position-level solvers' restitution, applied after their solve: a particle that struck a
/// collider with restitution `e > 0` faster than `2|g|h` (slower, resting contact would jitter)
/// gets its normal velocity set to `−e` times its approach velocity in the prediction
/// `predicted`. Only `x*` changes, so the Verlet state carries the bounce into the next step.
pub fn apply_restitution(scene: &Scene, predicted: &[Vec3], state: &mut State, h: f64) {
    if !has_restitution(scene) {
        return;
    }
    let threshold = 2.0 * scene.gravity.norm() * h * h;
    for (i, p) in scene.particles.iter().enumerate() {
        if p.w == 0.0 {
            continue;
        }
        let x = state.x[i];
        let mut x_prev = state.x_prev[i];
        for_each_contact(scene, &x, p.radius, 1e-9, |c| {
            let approach = (predicted[i] - x_prev).dot(&c.normal);
            if c.restitution > 0.0 && -approach > threshold {
                let now = (x - x_prev).dot(&c.normal);
                x_prev += c.normal * (now + c.restitution * approach);
            }
        });
        state.x_prev[i] = x_prev;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Constraint, Particle};

    /// Jakobsen's exercise (§2): a = (0, 0, 1), x = (1, 0, 0), x* = 0, h = 1. By hand:
    /// x₁ = (2, 0, 1), x₂ = (3, 0, 3), x₃ = (4, 0, 6): x_n = (n + 1, 0, n(n + 1)/2).
    #[test]
    fn verlet_reproduces_the_seed_hand_example() {
        let mut scene = Scene::new("hand");
        scene.gravity = Vec3::new(0.0, 0.0, 1.0);
        scene.add(Particle::new(Vec3::new(1.0, 0.0, 0.0), 1.0));
        let mut state = State {
            x: vec![Vec3::new(1.0, 0.0, 0.0)],
            x_prev: vec![Vec3::zeros()],
            rigid: Vec::new(),
            time: 0.0,
            step: 0,
        };
        for n in 1..=10u32 {
            predict(&scene, &[], &mut state, 1.0);
            let nf = n as f64;
            assert_eq!(state.x[0], Vec3::new(nf + 1.0, 0.0, nf * (nf + 1.0) / 2.0));
        }
        assert_eq!(state.step, 10);
        assert_eq!(state.time, 10.0);
    }

    #[test]
    fn damping_scales_the_carried_displacement() {
        let mut scene = Scene::new("drag");
        scene.gravity = Vec3::zeros();
        scene.damping = 0.01;
        scene.add(Particle::new(Vec3::zeros(), 1.0));
        let mut state = State {
            x: vec![Vec3::new(1.0, 0.0, 0.0)],
            x_prev: vec![Vec3::zeros()],
            rigid: Vec::new(),
            time: 0.0,
            step: 0,
        };
        predict(&scene, &[], &mut state, 0.1);
        assert_eq!(state.x[0].x, 1.0 + 0.99);
    }

    #[test]
    fn immovable_particles_stay_and_kinematic_pins_follow_their_target() {
        let mut scene = Scene::new("pins");
        let a = scene.add(Particle::fixed(Vec3::new(0.0, 1.0, 0.0)));
        let b = scene.add(Particle::fixed(Vec3::new(5.0, 1.0, 0.0)));
        scene.constraints.push(Constraint {
            kind: Kind::Pin { a: b, target: Vec3::new(5.0, 1.0, 0.0), velocity: Vec3::new(1.0, 0.0, 0.0) },
            compliance: 0.0,
        });
        let pins = kinematic_pins(&scene);
        assert_eq!(pins.len(), 1);
        let mut state = scene.initial_state(0.5);
        for _ in 0..4 {
            predict(&scene, &pins, &mut state, 0.5);
        }
        assert_eq!(state.x[a], Vec3::new(0.0, 1.0, 0.0));
        assert_eq!(state.x[b], Vec3::new(7.0, 1.0, 0.0));
        assert_eq!(state.x_prev[b], Vec3::new(6.5, 1.0, 0.0), "velocity (x − x*)/h = 1 m/s");
    }
}
