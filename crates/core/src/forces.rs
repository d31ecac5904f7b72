//! Constraint forces in newtons, from any solver's multipliers.
//!
//! Every solver reports, per row id ([`crate::rows`]), the position-level multiplier `λ` (N·s²)
//! its last (sub)step applied along the row's gradient ([`crate::Solver::multipliers`]; PGS
//! reports its impulse times `h`). The force is `λ/h²` (N). This module names each force the way
//! a reader of `forces.csv` wants it:
//!
//! | `kind` | `a` | `b` | `force` |
//! |---|---|---|---|
//! | `stick` | particle | particle | tension (N); negative is compression |
//! | `pin` | particle | | magnitude of the pin's force (N) |
//! | `contact` | particle | collider (`plane0`, `sphere1`, `block2`, `box3`) | normal push (N), ≥ 0 |
//! | `contact_friction` | particle | collider | magnitude of the tangential force (N) |
//! | `pair` | particle | particle | push between two particles with radii (N) |
//! | `body` | body | body | push at one contact feature of two box bodies (N) |
//! | `body_friction` | body | body | tangential force at that feature (N) |
//! | `embedded` | embedded point | collider | normal push (N) |
//! | `embedded_friction` | embedded point | collider | tangential force (N) |
//!
//! Sign of a stick: with `C = ±(|xb − xa| − rest)` and `∇b C = s·n` (`s = −1` for a rope,
//! `Sense::AtMost`), the force on `b` is `λ s n / h²`; it pulls `b` towards `a` (tension) when
//! `λ s < 0`, so the tension is `−s λ / h²`.

use crate::model::{Kind, Scene, Sense};
use crate::rows::{decode, RowRef};

/// One force, as written to `forces.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Force {
    /// What acts (see the module table).
    pub kind: &'static str,
    /// First participant (a particle, body or embedded point index).
    pub a: String,
    /// Second participant (a particle, body or collider name), or empty.
    pub b: String,
    /// The force (N), signed as the module table says.
    pub force: f64,
}

/// The forces of `multipliers` (row id, `λ` in N·s²) of a step of `h` seconds, in row-id order.
/// Pins' three rows and friction's two tangent rows are combined into magnitudes.
pub fn forces(scene: &Scene, multipliers: &[(u64, f64)], h: f64) -> Vec<Force> {
    let mut sorted: Vec<(u64, f64)> = multipliers.to_vec();
    sorted.sort_unstable_by_key(|e| e.0);
    let inv_h2 = 1.0 / (h * h);
    let mut out: Vec<Force> = Vec::new();
    // Rows that combine (pin axes, friction tangents) share everything but the low two bits;
    // a pair id uses those bits for its particle and stands alone.
    let group = |id: u64| match decode(id) {
        RowRef::Pair { .. } => id,
        _ => id >> 2,
    };
    let mut k = 0;
    while k < sorted.len() {
        let g = group(sorted[k].0);
        let mut end = k;
        while end < sorted.len() && group(sorted[end].0) == g {
            end += 1;
        }
        let rows = &sorted[k..end];
        k = end;
        let norm = |dirs: &[usize]| {
            rows.iter().filter(|(id, _)| dirs.contains(&((id & 3) as usize))).map(|(_, l)| l * l).sum::<f64>().sqrt()
                * inv_h2
        };
        let normal = match decode(rows[0].0) {
            RowRef::Pair { .. } => Some(rows[0].1 * inv_h2),
            _ => rows.iter().find(|(id, _)| id & 3 == 0).map(|(_, l)| l * inv_h2),
        };
        let mut push = |kind: &'static str, a: String, b: String, force: f64| out.push(Force { kind, a, b, force });
        match decode(rows[0].0) {
            RowRef::Constraint { index, .. } => match scene.constraints.get(index).map(|c| &c.kind) {
                Some(Kind::Stick { a, b, sense, .. }) => {
                    let s = if *sense == Sense::AtMost { -1.0 } else { 1.0 };
                    push("stick", a.to_string(), b.to_string(), -s * normal.unwrap_or(0.0));
                }
                Some(Kind::Pin { a, .. }) => push("pin", a.to_string(), String::new(), norm(&[0, 1, 2, 3])),
                None => {}
            },
            RowRef::Contact { particle, collider, .. } => {
                if let Some(f) = normal {
                    push("contact", particle.to_string(), collider.name(), f);
                }
                if rows.iter().any(|(id, _)| id & 3 != 0) {
                    push("contact_friction", particle.to_string(), collider.name(), norm(&[1, 2]));
                }
            }
            RowRef::Pair { i, j } => push("pair", i.to_string(), j.to_string(), normal.unwrap_or(0.0)),
            RowRef::Body { a, b, .. } => {
                if let Some(f) = normal {
                    push("body", a.to_string(), b.to_string(), f);
                }
                if rows.iter().any(|(id, _)| id & 3 != 0) {
                    push("body_friction", a.to_string(), b.to_string(), norm(&[1, 2]));
                }
            }
            RowRef::Embedded { point, collider, .. } => {
                if let Some(f) = normal {
                    push("embedded", point.to_string(), collider.name(), f);
                }
                if rows.iter().any(|(id, _)| id & 3 != 0) {
                    push("embedded_friction", point.to_string(), collider.name(), norm(&[1, 2]));
                }
            }
        }
    }
    out
}

/// The total normal force of the world colliders on the scene (N): the sum of every `contact`
/// and `embedded` push. At rest it equals the weight the colliders carry.
pub fn collider_support(multipliers: &[(u64, f64)], h: f64) -> f64 {
    multipliers
        .iter()
        .filter(|(id, _)| matches!(decode(*id), RowRef::Contact { dir: 0, .. } | RowRef::Embedded { dir: 0, .. }))
        .map(|(_, l)| l)
        .sum::<f64>()
        / (h * h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraint::ColliderRef;
    use crate::model::{Constraint, Particle};
    use crate::rows::{constraint_row_id, contact_row_id};
    use crate::Vec3;

    #[test]
    fn forces_are_named_signed_and_combined() {
        let mut s = Scene::new("f");
        s.add(Particle::fixed(Vec3::zeros()));
        s.add(Particle::new(Vec3::new(0.0, -1.0, 0.0), 1.0));
        s.constraints.push(Constraint::stick(0, 1, 1.0));
        s.constraints.push(Constraint::max_distance(0, 1, 1.0));
        s.constraints.push(Constraint::pin(1, Vec3::zeros()));
        let h = 0.1;
        let m = [
            (constraint_row_id(0, 0), -0.02), // a stretched stick pulls: λ < 0 is tension
            (constraint_row_id(1, 0), 0.03),  // a taut rope: λ > 0 is tension
            (constraint_row_id(2, 0), 0.03),
            (constraint_row_id(2, 1), 0.04),
            (contact_row_id(1, ColliderRef::Plane(0), 0), 0.05),
            (contact_row_id(1, ColliderRef::Plane(0), 1), 0.006),
            (contact_row_id(1, ColliderRef::Plane(0), 2), -0.008),
        ];
        let f = forces(&s, &m, h);
        assert_eq!(f.len(), 5);
        assert!(f[0].kind == "stick" && f[0].a == "0" && f[0].b == "1" && (f[0].force - 2.0).abs() < 1e-12);
        assert!(f[1].kind == "stick" && (f[1].force - 3.0).abs() < 1e-12, "rope tension positive");
        assert!(f[2].kind == "pin" && (f[2].force - 5.0).abs() < 1e-12, "|(3, 4)| N");
        assert!(f[3].kind == "contact" && f[3].b == "plane0" && (f[3].force - 5.0).abs() < 1e-12);
        assert!(f[4].kind == "contact_friction" && (f[4].force - 1.0).abs() < 1e-12);
        assert!((collider_support(&m, h) - 5.0).abs() < 1e-12);
    }
}
