//! A scene's own invariants ([`Scene::validate`]): one function per kind of item, in the order
//! the checks run (the first error found is the one reported).

use super::{Kind, ModelError, RemovedBody, Scene, MASS, MAX_COORDINATE, MAX_SPEED, MAX_SPIN, SIZE};
use crate::rigid::{JointKind, Shape};
use crate::Vec3;

/// The result of a check.
type Check = Result<(), ModelError>;

fn err(field: String, problem: String) -> Check {
    Err(ModelError { field, problem })
}

fn finite3(v: &Vec3) -> bool {
    v.iter().all(|c| c.is_finite())
}

/// Finite but absurd magnitudes: the documented ranges (see [`super::RANGES`]).
fn far(v: &Vec3) -> bool {
    v.iter().any(|c| c.abs() > MAX_COORDINATE)
}

fn fast(v: &Vec3) -> bool {
    v.norm() > MAX_SPEED
}

fn out_of(what: &str, value: f64, (lo, hi): (f64, f64), unit: &str) -> String {
    format!("{value:e} {unit} is outside the {what} solverlab accepts, [{lo:e}, {hi:e}] {unit}")
}

/// A particle index of a field within the scene's `n` particles.
fn particle_index(field: String, i: usize, n: usize) -> Check {
    match i >= n {
        true => err(field, format!("particle index {i} out of range (the scene has {n} particles)")),
        false => Ok(()),
    }
}

/// A collider's or body's friction and restitution.
fn material(field: String, mu: f64, e: f64) -> Check {
    if !(mu >= 0.0 && mu.is_finite()) {
        return Err(ModelError { field: format!("{field}.friction"), problem: format!("{mu} must be ≥ 0") });
    }
    if !(0.0..=1.0).contains(&e) {
        return Err(ModelError { field: format!("{field}.restitution"), problem: format!("{e} is outside [0, 1]") });
    }
    Ok(())
}

impl Scene {
    /// Checks the scene's own invariants (indices, masses, finiteness, lengths). The scene-file
    /// loader adds the file name to the message.
    pub fn validate(&self) -> Result<(), ModelError> {
        world(self)?;
        particles(self)?;
        constraints(self)?;
        planes(self)?;
        spheres(self)?;
        blocks(self)?;
        removals(self)?;
        embedded(self)?;
        bodies(self)?;
        rigid(self)?;
        joints(self)?;
        bounds(self)
    }
}

/// Gravity, damping and the frame's `dt`.
fn world(s: &Scene) -> Check {
    if !finite3(&s.gravity) {
        return err("gravity".into(), "must be finite".into());
    }
    if !(s.damping >= 0.0 && s.damping < 1.0) {
        return err("damping".into(), format!("{} is outside [0, 1)", s.damping));
    }
    if !(s.dt > 0.0 && s.dt.is_finite()) {
        return err("dt".into(), format!("{} must be a positive number of seconds", s.dt));
    }
    if s.gravity.norm() > MAX_SPEED {
        return err("gravity".into(), format!("{:e} m/s² is beyond the {MAX_SPEED:e} m/s² accepted", s.gravity.norm()));
    }
    Ok(())
}

fn particles(s: &Scene) -> Check {
    for (i, p) in s.particles.iter().enumerate() {
        if !finite3(&p.x) {
            return err(format!("particle[{i}].x"), "must be finite".into());
        }
        if far(&p.x) {
            return err(format!("particle[{i}].x"), format!("a coordinate is beyond ±{MAX_COORDINATE:e} m"));
        }
        if !finite3(&p.v) {
            return err(format!("particle[{i}].v"), "must be finite".into());
        }
        if fast(&p.v) {
            return err(
                format!("particle[{i}].v"),
                format!("{:e} m/s is beyond the {MAX_SPEED:e} m/s accepted", p.v.norm()),
            );
        }
        if !(p.w >= 0.0 && p.w.is_finite()) {
            return err(format!("particle[{i}].mass"), "must be positive (or set fixed = true)".into());
        }
        if p.w > 0.0 && !(MASS.0..=MASS.1).contains(&(1.0 / p.w)) {
            return err(format!("particle[{i}].mass"), out_of("mass", 1.0 / p.w, MASS, "kg"));
        }
        if !(p.radius >= 0.0 && p.radius.is_finite()) {
            return err(format!("particle[{i}].radius"), format!("{} must be ≥ 0", p.radius));
        }
    }
    Ok(())
}

fn constraints(s: &Scene) -> Check {
    let n = s.particles.len();
    for (j, c) in s.constraints.iter().enumerate() {
        if !(c.compliance >= 0.0 && c.compliance.is_finite()) {
            return err(format!("constraint[{j}].compliance"), format!("{} must be ≥ 0", c.compliance));
        }
        match &c.kind {
            Kind::Stick { a, b, rest, .. } => {
                for (name, idx) in [("a", a), ("b", b)] {
                    particle_index(format!("constraint[{j}].{name}"), *idx, n)?;
                }
                if a == b {
                    return err(format!("constraint[{j}].b"), "a stick needs two different particles".into());
                }
                if !(*rest > 0.0 && rest.is_finite()) {
                    return err(
                        format!("constraint[{j}].rest"),
                        format!("{rest} must be a positive length (a zero-length stick has no direction)"),
                    );
                }
            }
            Kind::Pin { a, target, velocity } => {
                particle_index(format!("constraint[{j}].a"), *a, n)?;
                if !finite3(target) {
                    return err(format!("constraint[{j}].target"), "must be finite".into());
                }
                if !finite3(velocity) {
                    return err(format!("constraint[{j}].velocity"), "must be finite".into());
                }
            }
        }
    }
    Ok(())
}

fn planes(s: &Scene) -> Check {
    for (k, p) in s.planes.iter().enumerate() {
        if !finite3(&p.normal) || p.normal.norm() < 1e-12 {
            return err(format!("plane[{k}].normal"), "must be a finite, non-zero vector".into());
        }
        if !p.offset.is_finite() {
            return err(format!("plane[{k}].offset"), "must be finite".into());
        }
        material(format!("plane[{k}]"), p.friction, p.restitution)?;
    }
    Ok(())
}

fn spheres(s: &Scene) -> Check {
    for (k, sp) in s.spheres.iter().enumerate() {
        if !finite3(&sp.center) {
            return err(format!("sphere[{k}].center"), "must be finite".into());
        }
        if !(sp.radius > 0.0 && sp.radius.is_finite()) {
            return err(format!("sphere[{k}].radius"), format!("{} must be positive", sp.radius));
        }
        material(format!("sphere[{k}]"), sp.friction, sp.restitution)?;
    }
    Ok(())
}

fn blocks(s: &Scene) -> Check {
    for (k, b) in s.blocks.iter().enumerate() {
        if !finite3(&b.min) || !finite3(&b.max) {
            return err(format!("block[{k}].min"), "min and max must be finite".into());
        }
        if let Some(axis) = (0..3).find(|&a| b.min[a] >= b.max[a]) {
            return err(
                format!("block[{k}].max"),
                format!("max must exceed min on every axis (axis {axis}: {} ≥ {})", b.min[axis], b.max[axis]),
            );
        }
        material(format!("block[{k}]"), b.friction, b.restitution)?;
    }
    Ok(())
}

fn removals(s: &Scene) -> Check {
    for (k, r) in s.removals.iter().enumerate() {
        match r.body {
            RemovedBody::Rigid(i) if i >= s.rigid.len() => {
                return err(
                    format!("removal[{k}].rigid"),
                    format!("rigid index {i} out of range (the scene has {} rigid bodies)", s.rigid.len()),
                );
            }
            RemovedBody::BoxBody(i) if i >= s.bodies.len() => {
                return err(
                    format!("removal[{k}].body"),
                    format!("body index {i} out of range (the scene has {} bodies)", s.bodies.len()),
                );
            }
            _ => {}
        }
        if !(r.time >= 0.0 && r.time.is_finite()) {
            return err(format!("removal[{k}].time"), format!("{} must be a time ≥ 0 in seconds", r.time));
        }
    }
    Ok(())
}

fn embedded(s: &Scene) -> Check {
    let n = s.particles.len();
    for (k, e) in s.embedded.iter().enumerate() {
        if !(1..=4).contains(&e.count) {
            return err(
                format!("embedded[{k}].particles"),
                format!("{} particles; an embedded point needs 1 to 4", e.count),
            );
        }
        if let Some(&i) = e.particles[..e.count].iter().find(|&&i| i >= n) {
            return particle_index(format!("embedded[{k}].particles"), i, n);
        }
        let sum: f64 = e.weights[..e.count].iter().sum();
        if !e.weights[..e.count].iter().all(|c| c.is_finite()) || (sum - 1.0).abs() > 1e-9 {
            return err(format!("embedded[{k}].weights"), format!("must be finite and sum to 1 (they sum to {sum})"));
        }
    }
    Ok(())
}

/// Jakobsen's box bodies (particles held by sticks).
fn bodies(s: &Scene) -> Check {
    let n = s.particles.len();
    for (k, b) in s.bodies.iter().enumerate() {
        if let Some(&i) = b.particles.iter().find(|&&i| i >= n) {
            return particle_index(format!("body[{k}].particles"), i, n);
        }
        if !(b.half.iter().all(|h| *h > 0.0 && h.is_finite())) {
            return err(format!("body[{k}].half"), "half extents must be positive".into());
        }
        if !(b.friction >= 0.0 && b.friction.is_finite()) {
            return err(format!("body[{k}].friction"), format!("{} must be ≥ 0", b.friction));
        }
    }
    Ok(())
}

/// The 6-DoF rigid bodies: size, mass, pose and velocities, material.
fn rigid(s: &Scene) -> Check {
    for (k, b) in s.rigid.iter().enumerate() {
        let f = |name: &str| format!("rigid[{k}].{name}");
        let sizes: &[(&str, f64)] = match b.shape {
            Shape::Box { half } => &[("half_extents", half.x), ("half_extents", half.y), ("half_extents", half.z)],
            Shape::Sphere { radius } => &[("radius", radius)],
            Shape::Capsule { radius, half_height } => &[("radius", radius), ("half_height", half_height)],
        };
        if let Some((name, size)) =
            sizes.iter().find(|(_, h)| h.is_finite() && *h > 0.0 && !(SIZE.0..=SIZE.1).contains(h))
        {
            return err(f(name), out_of("size", *size, SIZE, "m"));
        }
        match b.shape {
            Shape::Box { half } => {
                if !half.iter().all(|h| *h > 0.0 && h.is_finite()) {
                    return err(f("half_extents"), "half extents must be positive lengths (m)".into());
                }
            }
            Shape::Sphere { radius } => {
                if !(radius > 0.0 && radius.is_finite()) {
                    return err(f("radius"), format!("{radius} must be a positive length (m)"));
                }
            }
            Shape::Capsule { radius, half_height } => {
                if !(radius > 0.0 && radius.is_finite()) {
                    return err(f("radius"), format!("{radius} must be a positive length (m)"));
                }
                if !(half_height > 0.0 && half_height.is_finite()) {
                    return err(f("half_height"), format!("{half_height} must be a positive length (m)"));
                }
            }
        }
        let finite_mass = b.inv_mass >= 0.0 && b.inv_mass.is_finite();
        if !(finite_mass && b.inv_inertia.iter().all(|i| *i >= 0.0 && i.is_finite())) {
            return err(f("mass"), "must be positive (or set fixed = true)".into());
        }
        if b.inv_mass > 0.0 && !(MASS.0..=MASS.1).contains(&(1.0 / b.inv_mass)) {
            return err(f("mass"), out_of("mass", 1.0 / b.inv_mass, MASS, "kg"));
        }
        for (name, v) in [("x", &b.x), ("v", &b.v), ("w", &b.w)] {
            if !finite3(v) {
                return err(f(name), "must be finite".into());
            }
        }
        if far(&b.x) {
            return err(f("x"), format!("a coordinate is beyond ±{MAX_COORDINATE:e} m"));
        }
        if fast(&b.v) {
            return err(f("v"), format!("{:e} m/s is beyond the {MAX_SPEED:e} m/s accepted", b.v.norm()));
        }
        if b.w.norm() > MAX_SPIN {
            return err(f("w"), format!("{:e} rad/s is beyond the {MAX_SPIN:e} rad/s accepted", b.w.norm()));
        }
        if b.inv_mass == 0.0 && (b.v.norm() > 0.0 || b.w.norm() > 0.0) {
            return err(f("v"), "a fixed body cannot move: leave v and w out, or give it a mass".into());
        }
        if !b.q.coords.iter().all(|c| c.is_finite()) {
            return err(f("q"), "must be finite".into());
        }
        material(format!("rigid[{k}]"), b.friction, b.restitution)?;
    }
    Ok(())
}

fn joints(s: &Scene) -> Check {
    let nr = s.rigid.len();
    for (k, j) in s.joints.iter().enumerate() {
        let f = |name: &str| format!("joint[{k}].{name}");
        for (name, idx) in [("a", Some(j.a)), ("b", j.b)] {
            if let Some(i) = idx.filter(|&i| i >= nr) {
                return err(f(name), format!("rigid index {i} out of range (the scene has {nr} rigid bodies)"));
            }
        }
        if j.b == Some(j.a) {
            return err(f("b"), "a joint needs two different bodies (leave b out to attach a to the world)".into());
        }
        if !finite3(&j.anchor) {
            return err(f("anchor"), "must be finite".into());
        }
        if j.anchor_b.is_some_and(|p| !finite3(&p)) {
            return err(f("anchor_b"), "must be finite".into());
        }
        if !(j.compliance >= 0.0 && j.compliance.is_finite()) {
            return err(f("compliance"), format!("{} must be ≥ 0 (m/N)", j.compliance));
        }
        if let JointKind::Revolute { axis, lower, upper } = j.kind {
            if !finite3(&axis) || axis.norm() < 1e-12 {
                return err(f("axis"), "must be a finite, non-zero vector".into());
            }
            if lower.is_nan() {
                return err(f("lower"), "must be a number of radians (or leave it out)".into());
            }
            if upper.is_nan() || lower > upper {
                return err(f("upper"), format!("limits [{lower}, {upper}] rad must satisfy lower ≤ upper"));
            }
        }
    }
    Ok(())
}

/// The scene's box of walls.
fn bounds(s: &Scene) -> Check {
    if let Some(b) = &s.bounds {
        if !finite3(&b.min) || !finite3(&b.max) || (0..3).any(|k| b.min[k] >= b.max[k]) {
            return err("box".into(), "min must be below max on every axis".into());
        }
        material("box".into(), b.friction, b.restitution)?;
    }
    Ok(())
}
