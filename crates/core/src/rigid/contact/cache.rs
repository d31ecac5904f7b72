//! The kept pairs of contact recycling and the boxes' separating axes ([`ContactCache`]).

use nalgebra::UnitQuaternion;

use super::{collide, Other, Pose};
use crate::Vec3;

/// The pairs and contact points of the last call of [`super::rigid_contacts_recycled`], by first body.
///
/// A pair of bodies, or of a body and a world block or sphere, is recycled while both hold:
/// * its relative pose (the second's pose in the first's frame) has drifted by at most
///   5 cm (Rapier 0.36's default) since its contacts were found: the translation's change plus the
///   chord `2·r·sin(Δθ/2)` of its rotation's change, `r` the larger distance from a body's
///   centre to its local bounding box's farthest corner ([`crate::rigid::Shape::box_corner_radius`],
///   Rapier's `max_extent`: `√3` times a sphere's radius); for a pair that had no contact point,
///   at most the speculative margin it was found with, if less;
/// * neither body has turned by more than about 11.5° since (`cos Δθ > 0.98`).
///
/// A recycled pair keeps its points and their feature ids (their warm start), their normals
/// and their lever arms frozen in the world as they were found; each point's separation is
/// measured anew along its normal between its two ends, each carried by its body. (The frozen
/// arms make the rows the same from frame to frame, which Rapier's source calls
/// load-bearing for tall stacks.) Contacts with planes and box walls are found anew every
/// call: an infinite collider's drift bound is infinite, as it is in Rapier.
///
/// A cache made by [`ContactCache::new`] with a `sat_slop` also keeps, for every pair of boxes
/// whose contacts are found anew (box bodies, and a box body with a world block), its last
/// separating axis ([`collide::SatCache`], as Box3D keeps it), and finds their contacts with
/// [`collide::box_box_cached`]; without `recycle` it keeps no points, only those axes.
/// `ContactCache::default()` recycles and keeps no axes.
#[derive(Clone, Debug)]
pub struct ContactCache {
    pub(super) bodies: Vec<KeptBody>,
    pub(super) recycle: bool,
    pub(super) sat_slop: Option<f64>,
}

impl Default for ContactCache {
    fn default() -> Self {
        Self::new(true, None)
    }
}

impl ContactCache {
    /// A cache that recycles pairs' contacts (`recycle`), keeps the separating axes of pairs of
    /// boxes with the slop of [`collide::box_box_cached`] (`sat_slop`, m), or both.
    pub fn new(recycle: bool, sat_slop: Option<f64>) -> Self {
        Self { bodies: Vec::new(), recycle, sat_slop }
    }

    /// Sets what the cache keeps, as [`ContactCache::new`] does; a change forgets every kept
    /// pair.
    pub fn configure(&mut self, recycle: bool, sat_slop: Option<f64>) {
        if (recycle, sat_slop) != (self.recycle, self.sat_slop) {
            *self = Self::new(recycle, sat_slop);
        }
    }

    /// Forgets every kept pair (the next call finds all contacts anew).
    pub fn clear(&mut self) {
        self.bodies.clear();
    }

    /// How many pairs of boxes kept a separating axis in the last call, and how many of those
    /// were answered from it (see [`collide::box_box_cached`]).
    pub fn sat_hits(&self) -> (usize, usize) {
        let all = self.bodies.iter().flat_map(|b| &b.sat);
        (all.clone().count(), all.filter(|(_, c)| c.hit).count())
    }
}

/// The largest relative drift of a recycled pair (m): Rapier 0.36's
/// `normalized_contact_recycle_distance` (0.05) at a length unit of 1 m.
pub(super) const RECYCLE_DISTANCE: f64 = 0.05;

/// The smallest `cos Δθ` of either body's turn since its pair's contacts were found, for the
/// pair to be recycled (Rapier 0.36's bound; about 11.5°).
pub(super) const RECYCLE_TURN_COS: f64 = 0.98;

/// One body's kept pairs and their points, and its pairs of boxes' separating axes.
#[derive(Clone, Debug, Default)]
pub(super) struct KeptBody {
    pub(super) pairs: Vec<KeptPair>,
    pub(super) points: Vec<KeptPoint>,
    pub(super) sat: Vec<(Other, collide::SatCache)>,
}

/// A pair of the body (`a`) with `b`, as its contacts were last found.
#[derive(Clone, Copy, Debug)]
pub(super) struct KeptPair {
    pub(super) b: Other,
    /// `b`'s pose in `a`'s frame: its position and orientation.
    pub(super) t: Vec3,
    pub(super) q: UnitQuaternion<f64>,
    /// Both bodies' orientations.
    pub(super) qa: UnitQuaternion<f64>,
    pub(super) qb: UnitQuaternion<f64>,
    /// The larger distance to a local bounding box's corner (m) and the largest drift for
    /// recycling (m).
    pub(super) extent: f64,
    pub(super) max_drift: f64,
    /// Its points, `KeptBody::points[points.0..points.1]`.
    pub(super) points: (usize, usize),
}

/// A kept contact point.
#[derive(Clone, Copy, Debug)]
pub(super) struct KeptPoint {
    /// The point's end on `a`'s surface in `a`'s frame, and on `b`'s in `b`'s (m).
    pub(super) la: Vec3,
    pub(super) lb: Vec3,
    /// The normal (from `b` to `a`) and the lever arms from `a`'s and `b`'s origin, frozen in the
    /// world frame.
    pub(super) n: Vec3,
    pub(super) arms: [Vec3; 2],
    pub(super) feature: u32,
}

impl KeptPair {
    /// Whether the pair at poses `pa`, `pb` is still within its recycling bounds.
    pub(super) fn holds(&self, pa: &Pose, pb: &Pose) -> bool {
        let turn_cos = |base: &UnitQuaternion<f64>, now: &UnitQuaternion<f64>| {
            let c = base.coords.dot(&now.coords);
            2.0 * c * c - 1.0
        };
        if turn_cos(&self.qa, &pa.q).min(turn_cos(&self.qb, &pb.q)) <= RECYCLE_TURN_COS {
            return false;
        }
        let t = pa.q.inverse_transform_vector(&(pb.x - pa.x));
        let q = pa.q.inverse() * pb.q;
        let turn = q * self.q.inverse();
        let drift = (t - self.t).norm() + 2.0 * turn.imag().norm() * self.extent;
        drift <= self.max_drift
    }
}
