//! Per-step measurements, the same for every solver.
//!
//! * violation, the one yardstick every family is measured and stopped by ([`violation`], m;
//!   rigid-body joints add their anchor gap in m and their angular error in rad,
//!   [`crate::rigid::Joint::error`]):
//!   the largest of `|C|` over rigid equality rows, `|C + α̃λ|` over compliant rows (`α̃ = α/h²`,
//!   `λ` the solver's multiplier, so a compliant row that settled where its force balances counts
//!   as satisfied), and the penetration `max(0, −C)` over inequality rows, colliders and contacts;
//! * `max_violation`, `rms_violation`: the geometric `|C|` over equality rows alone (for compliant
//!   rows that is the stretch, not an error);
//! * penetration: `max(0, −C)` over inequality rows (min/max sticks, every collider, and
//!   particle-particle contacts between particles with a radius);
//! * stretch: `ℓ/rest` over equality sticks;
//! * energy: kinetic `Σ ½ m |v|²` with `v = (x − x*)/h` over movable particles (immovable ones
//!   have infinite mass and no motion); potential: gravitational `−Σ m g·x` over movable
//!   particles plus the elastic energy `½ C²/α` of every compliant row (`α > 0`; an inequality
//!   row only while violated);
//! * linear momentum `Σ m v` over movable particles;
//! * stacks: the RMS particle speed `√(Σ|v|²/n)` over movable particles (averaged over a
//!   settled window it is the stack's jitter); each box body's drift, the distance of its centre
//!   from where the scene put it; the top body's drift (the body starting highest against
//!   gravity); and whether every body is still in place, within [`IN_PLACE`] of its smallest half
//!   extent (a stack "stood" if that held in every frame).
//!
//! Particles of removed bodies ([`crate::model::Removal`]) are left out of the energies, momentum,
//! centre of mass, speeds and drifts from their removal on.

use crate::constraint::{for_each_contact, stick_value};
use crate::model::{Kind, Scene, Sense, State};
use crate::Vec3;

/// Everything measured at the end of a step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepMetrics {
    /// The common violation ([`violation`]) at the end of the step (m).
    pub violation: f64,
    /// Largest `|C|` over equality rows (m), and over rigid-body joints their anchor gap (m) and
    /// angular error (rad) ([`crate::rigid::Joint::error`]).
    pub max_violation: f64,
    /// Root mean square of `|C|` over equality rows (m); 0 when there are none.
    pub rms_violation: f64,
    /// Largest penetration `max(0, −C)` over inequality rows (m).
    pub max_penetration: f64,
    /// Largest `length/rest` over equality sticks; 1 when there are none.
    pub max_stretch: f64,
    /// The largest tear, a fraction: `|length − rest|/rest` over rigid (compliance 0) equality
    /// sticks, and over the joints that hold the anchor gap divided by the size (twice the
    /// bounding radius) of the smaller body the joint holds. A run is torn above
    /// [`crate::sim::TEAR`]; 0 when there are neither.
    pub tear: f64,
    /// Kinetic energy (J).
    pub kinetic_energy: f64,
    /// Potential energy (J): gravitational, relative to the origin, plus elastic `½ C²/α`.
    pub potential_energy: f64,
    /// The elastic part of `potential_energy` (J): `½ C²/α` over the compliant constraints.
    pub elastic_energy: f64,
    /// Linear momentum (kg·m/s).
    pub momentum: Vec3,
    /// Angular momentum about the origin (kg·m²/s): `Σ m x × v` over particles and rigid
    /// bodies, plus `I ω` of each rigid body.
    pub angular_momentum: Vec3,
    /// Centre of mass of the movable particles (m): sag, drift of a body.
    pub com: Vec3,
    /// Root mean square speed of the movable particles (m/s); 0 when there are none.
    pub rms_speed: f64,
    /// Largest distance of a box body's centre from its initial position (m); 0 without bodies.
    pub body_drift: f64,
    /// Distance of the top box body's centre from its initial position (m); 0 without bodies.
    pub top_drift: f64,
    /// Whether every box body's centre is within [`IN_PLACE`] times its smallest half extent of
    /// its initial position (true without bodies).
    pub in_place: bool,
}

/// A body is in place while its centre stays within this fraction of its smallest half extent of
/// where it started: 0.5, so a 0.5 m box may move 12.5 cm (sinking, sliding or tilting) before a
/// stack counts as fallen.
pub const IN_PLACE: f64 = 0.5;

/// The index of the body whose initial centre is highest against gravity (the top of a stack),
/// among those not removed by `time`.
pub fn top_body(scene: &Scene, time: f64) -> Option<usize> {
    let x0: Vec<Vec3> = scene.particles.iter().map(|p| p.x).collect();
    let up = if scene.gravity.norm() > 0.0 { -scene.gravity.normalize() } else { Vec3::y() };
    (0..scene.bodies.len()).filter(|&k| !removed(scene, k, time)).max_by(|&a, &b| {
        up.dot(&scene.bodies[a].frame(&x0).0).total_cmp(&up.dot(&scene.bodies[b].frame(&x0).0)).then(b.cmp(&a))
    })
}

/// The rigid bodies the metrics count: movable and still in the scene.
fn movable_rigid<'a>(
    scene: &'a Scene,
    state: &'a State,
) -> impl Iterator<Item = (&'a crate::rigid::RigidBody, &'a crate::rigid::RigidState)> {
    scene
        .rigid
        .iter()
        .zip(&state.rigid)
        .enumerate()
        .filter(move |(k, (b, _))| !b.is_fixed() && !scene.rigid_removed(*k, state.time))
        .map(|(_, pair)| pair)
}

fn removed(scene: &Scene, body: usize, time: f64) -> bool {
    scene.removals.iter().any(|r| r.box_body_by(time) == Some(body))
}

/// Body drift from the scene's initial positions, over the particle box bodies still in the
/// scene at `time` and the movable rigid bodies: `(largest, top body's, all in place)`. The top
/// body is the one starting highest against gravity (a particle body on a tie).
fn body_drift(scene: &Scene, state: &State) -> (f64, f64, bool) {
    let x0: Vec<Vec3> = scene.particles.iter().map(|p| p.x).collect();
    let up = if scene.gravity.norm() > 0.0 { -scene.gravity.normalize() } else { Vec3::y() };
    // (initial height, drift, in place) per body.
    let mut all: Vec<(f64, f64, bool)> = Vec::new();
    for (_, b) in scene.bodies.iter().enumerate().filter(|(k, _)| !removed(scene, *k, state.time)) {
        let start = b.frame(&x0).0;
        let d = (b.frame(&state.x).0 - start).norm();
        all.push((up.dot(&start), d, d <= IN_PLACE * b.half.min()));
    }
    for (b, r) in movable_rigid(scene, state) {
        let d = (r.x - b.x).norm();
        all.push((up.dot(&b.x), d, d <= IN_PLACE * b.shape.smallest_extent()));
    }
    let worst = all.iter().map(|e| e.1).fold(0.0, f64::max);
    let in_place = all.iter().all(|e| e.2);
    let top =
        all.iter().enumerate().max_by(|(i, a), (j, b)| a.0.total_cmp(&b.0).then(j.cmp(i))).map_or(0.0, |(_, e)| e.1);
    (worst, top, in_place)
}

/// The value of a pin row set: distance from the particle to its target at `time` (m).
fn pin_error(x: &Vec3, target: &Vec3, velocity: &Vec3, time: f64) -> f64 {
    (x - (target + velocity * time)).norm()
}

/// The multipliers of a state no solver has touched (frame 0): every `λ` is 0.
pub fn no_multipliers(_id: u64) -> f64 {
    0.0
}

/// Measures `state` at the end of a step of length `h`; `lambda` gives the solver's multiplier
/// of a row by id ([`crate::Solver::multiplier`]), used for the compliant rows of [`violation`].
pub fn measure(scene: &Scene, state: &State, h: f64, lambda: &dyn Fn(u64) -> f64) -> StepMetrics {
    let x = &state.x;
    let mut m = StepMetrics { max_stretch: 1.0, in_place: true, ..StepMetrics::default() };
    m.violation = violation(scene, x, state.time, h, &|j, axis| lambda(crate::rows::constraint_row_id(j, axis)));
    let mut sum_sq = 0.0;
    let mut count = 0usize;
    for c in &scene.constraints {
        match c.kind {
            Kind::Stick { a, b, rest, sense } => {
                let value = stick_value(&x[a], &x[b], rest, sense);
                if c.compliance > 0.0 && (sense == Sense::Equal || value < 0.0) {
                    m.elastic_energy += 0.5 * value * value / c.compliance;
                }
                if sense == Sense::Equal {
                    sum_sq += value * value;
                    count += 1;
                    m.max_violation = m.max_violation.max(value.abs());
                    m.max_stretch = m.max_stretch.max((value + rest) / rest);
                    if c.compliance == 0.0 {
                        m.tear = m.tear.max(value.abs() / rest);
                    }
                } else {
                    m.max_penetration = m.max_penetration.max(-value);
                }
            }
            Kind::Pin { a, target, velocity } => {
                if scene.particles[a].w > 0.0 {
                    let e = pin_error(&x[a], &target, &velocity, state.time);
                    if c.compliance > 0.0 {
                        m.elastic_energy += 0.5 * e * e / c.compliance;
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
    m.potential_energy = m.elastic_energy;
    m.max_penetration = m.max_penetration.max(max_collider_penetration(scene, x));
    let inv_h = 1.0 / h;
    let mut total_mass = 0.0;
    let mut movable = 0usize;
    let gone = scene.removed_particles(state.time);
    for (i, ((p, xi), xp)) in scene.particles.iter().zip(x).zip(&state.x_prev).enumerate() {
        if p.w > 0.0 && !gone.as_ref().is_some_and(|g| g[i]) {
            let mass = 1.0 / p.w;
            total_mass += mass;
            m.com += xi * mass;
            let v = (xi - xp) * inv_h;
            m.kinetic_energy += 0.5 * mass * v.norm_squared();
            m.rms_speed += v.norm_squared();
            movable += 1;
            m.potential_energy -= mass * scene.gravity.dot(xi);
            m.momentum += v * mass;
            m.angular_momentum += xi.cross(&(v * mass));
        }
    }
    for (b, r) in movable_rigid(scene, state) {
        let mass = b.mass();
        let spin = b.inertia_world(&r.q) * r.w;
        total_mass += mass;
        m.com += r.x * mass;
        m.kinetic_energy += 0.5 * mass * r.v.norm_squared() + 0.5 * r.w.dot(&spin);
        m.rms_speed += r.v.norm_squared();
        movable += 1;
        m.potential_energy -= mass * scene.gravity.dot(&r.x);
        m.momentum += r.v * mass;
        m.angular_momentum += r.x.cross(&(r.v * mass)) + spin;
    }
    if total_mass > 0.0 {
        m.com /= total_mass;
        m.rms_speed = (m.rms_speed / movable as f64).sqrt();
    }
    if !scene.bodies.is_empty() || !scene.rigid.is_empty() {
        (m.body_drift, m.top_drift, m.in_place) = body_drift(scene, state);
    }
    if !scene.rigid.is_empty() {
        let pen = crate::rigid::max_penetration(scene, &state.rigid);
        m.max_penetration = m.max_penetration.max(pen);
        let joints = joint_violation(scene, &state.rigid, state.time);
        m.max_violation = m.max_violation.max(joints);
        m.violation = m.violation.max(pen).max(joints);
        for j in (0..scene.joints.len()).filter(|&j| scene.joint_active(j, state.time)) {
            let joint = &scene.joints[j];
            let size = |b: usize| 2.0 * scene.rigid[b].shape.bounding_radius();
            let size = joint.b.map_or(size(joint.a), |b| size(joint.a).min(size(b)));
            m.tear = m.tear.max(joint.error(&scene.rigid, &state.rigid).0 / size);
        }
    }
    m
}

/// The largest joint error of the rigid bodies at `states`: anchor gaps (m) and angular errors
/// (rad) ([`crate::rigid::Joint::error`]).
pub fn joint_violation(scene: &Scene, states: &[crate::rigid::RigidState], time: f64) -> f64 {
    (0..scene.joints.len())
        .filter(|&j| scene.joint_active(j, time))
        .map(|j| scene.joints[j].error(&scene.rigid, states))
        .fold(0.0, |v, (gap, angle)| v.max(gap).max(angle))
}

/// The common violation of the rigid bodies at `states`: the largest penetration (m) and joint
/// error ([`joint_violation`]).
pub fn rigid_violation(scene: &Scene, states: &[crate::rigid::RigidState], time: f64) -> f64 {
    match scene.rigid.is_empty() {
        true => 0.0,
        false => crate::rigid::max_penetration(scene, states).max(joint_violation(scene, states, time)),
    }
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

/// The violation of one row (m): `|C|` for a rigid equality, `|C + α̃λ|` for a compliant one;
/// for an inequality (`C ≥ 0` allowed, `λ ≥ 0`) the penetration `max(0, −C)`, or `|C + α̃λ|` for
/// a compliant inequality that pushes (`λ > 0`).
#[inline]
pub fn row_violation(c: f64, alpha_tilde: f64, lambda: f64, equality: bool) -> f64 {
    if alpha_tilde > 0.0 && (equality || lambda > 0.0) {
        (c + alpha_tilde * lambda).abs()
    } else if equality {
        c.abs()
    } else {
        (-c).max(0.0)
    }
}

/// The constraint part of [`violation`]: sticks (equality and unilateral) and pins on movable
/// particles, at positions `x`, time `time` and step `h`. `lambda(j, axis)` is the solver's
/// multiplier of row `axis` of constraint `j` (N·s²); it is asked only for compliant rows.
/// Rows whose particles are all immovable are left out: no solver can move them.
pub fn constraint_violation(scene: &Scene, x: &[Vec3], time: f64, h: f64, lambda: &dyn Fn(usize, usize) -> f64) -> f64 {
    constraint_violation_until(scene, x, time, h, lambda, f64::INFINITY)
}

/// [`constraint_violation`] cut short for a stopping test: the same number when it is at most
/// `bound` (m); otherwise the largest row violation seen up to the first row above `bound`, a
/// number above `bound`, without visiting the rows after it. So `… ≤ tolerance` holds exactly
/// when `constraint_violation(…) ≤ tolerance`, and a step far from its tolerance pays for a few
/// rows instead of all of them. With `bound = ∞` it is [`constraint_violation`].
pub fn constraint_violation_until(
    scene: &Scene,
    x: &[Vec3],
    time: f64,
    h: f64,
    lambda: &dyn Fn(usize, usize) -> f64,
    bound: f64,
) -> f64 {
    let mut worst: f64 = 0.0;
    let inv_h2 = 1.0 / (h * h);
    for (j, c) in scene.constraints.iter().enumerate() {
        if worst > bound {
            return worst;
        }
        let at = c.compliance * inv_h2;
        match c.kind {
            Kind::Stick { a, b, rest, sense } => {
                if scene.particles[a].w + scene.particles[b].w == 0.0 {
                    continue;
                }
                let value = stick_value(&x[a], &x[b], rest, sense);
                let l = if at > 0.0 { lambda(j, 0) } else { 0.0 };
                worst = worst.max(row_violation(value, at, l, sense == Sense::Equal));
            }
            Kind::Pin { a, target, velocity } => {
                if scene.particles[a].w == 0.0 {
                    continue;
                }
                if at > 0.0 {
                    let goal = target + velocity * time;
                    for k in 0..3 {
                        worst = worst.max(row_violation(x[a][k] - goal[k], at, lambda(j, k), true));
                    }
                } else {
                    worst = worst.max(pin_error(&x[a], &target, &velocity, time));
                }
            }
        }
    }
    worst
}

/// The common position-level violation, the same yardstick for every family (m): the largest of
/// [`constraint_violation`] and the deepest penetration of any collider or contact
/// ([`max_collider_penetration`]). Every solver reports it per iteration (trace `violation`) and
/// per frame (`steps.csv` `violation`), and stops when it is at most its `tolerance`.
pub fn violation(scene: &Scene, x: &[Vec3], time: f64, h: f64, lambda: &dyn Fn(usize, usize) -> f64) -> f64 {
    constraint_violation(scene, x, time, h, lambda).max(max_collider_penetration(scene, x))
}

/// [`violation`] cut short for a stopping test, as [`constraint_violation_until`] is: the same
/// number when it is at most `bound` (m), otherwise a number above `bound`, without the rows
/// and contacts after the first one above it.
pub fn violation_until(
    scene: &Scene,
    x: &[Vec3],
    time: f64,
    h: f64,
    lambda: &dyn Fn(usize, usize) -> f64,
    bound: f64,
) -> f64 {
    let v = constraint_violation_until(scene, x, time, h, lambda, bound);
    match v > bound {
        true => v,
        false => v.max(max_collider_penetration(scene, x)),
    }
}

/// [`violation`] with every multiplier 0: the geometric `|C|` of every row, which is the
/// violation of a scene without compliant rows.
pub fn max_violation(scene: &Scene, x: &[Vec3], time: f64) -> f64 {
    violation(scene, x, time, 1.0, &|_, _| 0.0)
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
        let m = measure(&scene, &state, 0.1, &no_multipliers);
        assert!((m.max_violation - 0.1).abs() < 1e-12);
        assert!((m.rms_violation - 0.1).abs() < 1e-12);
        assert!((m.max_stretch - 1.1).abs() < 1e-12);
        assert!((m.max_penetration - 0.1).abs() < 1e-12);
        assert!((m.kinetic_energy - 1.0).abs() < 1e-12, "½·2·1²");
        assert!((m.potential_energy - (-2.0 * 9.81 * 1.1)).abs() < 1e-12);
        assert!((m.momentum - Vec3::new(2.0, 0.0, 0.0)).norm() < 1e-12);
        assert_eq!(m.com, Vec3::new(0.0, -1.1, 0.0), "the fixed particle has no finite mass");
        assert!((m.rms_speed - 1.0).abs() < 1e-12, "one movable particle at 1 m/s");
        assert!((max_violation(&scene, &state.x, 0.0) - 0.1).abs() < 1e-12);
        scene.constraints[0].compliance = 0.01;
        let elastic = measure(&scene, &state, 0.1, &no_multipliers).potential_energy - m.potential_energy;
        assert!((elastic - 0.5 * 0.01 / 0.01).abs() < 1e-12, "½·0.1²/0.01 = 0.5 J, got {elastic}");
    }

    #[test]
    fn body_drift_measures_the_top_box_and_the_in_place_bound() {
        use crate::bodies::BoxBody;
        let mut scene = Scene::new("two boxes");
        let corners = [[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]];
        for centre in [Vec3::new(0.0, 0.5, 0.0), Vec3::new(0.0, 1.5, 0.0)] {
            let first = scene.particles.len();
            for c in corners {
                scene.add(Particle::new(centre + Vec3::new(c[0], c[1], c[2]) * 0.5, 1.0));
            }
            let particles = [first, first + 1, first + 2, first + 3];
            scene.bodies.push(BoxBody { particles, half: Vec3::repeat(0.5), friction: 0.0 });
        }
        assert_eq!(top_body(&scene, 0.0), Some(1));
        let mut state = scene.initial_state(0.1);
        let m = measure(&scene, &state, 0.1, &no_multipliers);
        assert!(m.body_drift == 0.0 && m.top_drift == 0.0 && m.in_place);
        // Slide the top box 0.2 m sideways: within 0.5 · 0.5 m, still in place.
        for i in 4..8 {
            state.x[i].x += 0.2;
        }
        let m = measure(&scene, &state, 0.1, &no_multipliers);
        assert!((m.top_drift - 0.2).abs() < 1e-12 && (m.body_drift - 0.2).abs() < 1e-12 && m.in_place);
        // Drop the bottom box by 0.3 m: out of place, and the largest drift.
        for i in 0..4 {
            state.x[i].y -= 0.3;
        }
        let m = measure(&scene, &state, 0.1, &no_multipliers);
        assert!((m.body_drift - 0.3).abs() < 1e-12 && (m.top_drift - 0.2).abs() < 1e-12 && !m.in_place);
    }
}
