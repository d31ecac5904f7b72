//! The contacts of a rigid state: what a body touches ([`Other`]), one contact point
//! ([`RigidContact`]), every contact of the bodies with each other and with the world colliders
//! ([`rigid_contacts`], through the narrow phase's [`shape_contacts`]), and the force a solver
//! reports for a contact ([`ContactForce`]).

use nalgebra::UnitQuaternion;

use super::{capsule, collide, ContactPoint, Pose, RigidBody, RigidState, Shape};
use crate::constraint::ColliderRef;
use crate::Vec3;

/// What a rigid body touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Other {
    /// Another rigid body (its index).
    Body(usize),
    /// A world collider.
    Collider(u64),
}

impl Other {
    /// The name written to `contacts.csv`: the body index, or `plane0`, `block2`, ….
    pub fn name(&self) -> String {
        match self {
            Other::Body(k) => k.to_string(),
            Other::Collider(code) => ColliderRef::from_code(*code).name(),
        }
    }
}

/// One contact point of rigid body `a` with `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidContact {
    /// The body the normal pushes.
    pub a: usize,
    /// The other body or collider (pushed along `−normal` if it is a movable body).
    pub b: Other,
    /// The narrow phase's point, normal (from `b` to `a`), separation and feature.
    pub point: ContactPoint,
    /// Combined friction coefficient.
    pub friction: f64,
    /// Combined restitution.
    pub restitution: f64,
}

impl RigidContact {
    /// A key that names this contact point from step to step (for warm starting): the pair and
    /// the narrow phase's feature id.
    pub fn key(&self) -> (usize, Other, u32) {
        (self.a, self.b, self.point.feature)
    }
}

/// Every contact of the rigid bodies at `states` within `margin` (m), in a deterministic order:
/// body by body, colliders (box walls, planes, spheres, blocks) first, then the bodies after it.
pub fn rigid_contacts(scene: &crate::Scene, states: &[RigidState], margin: f64, out: &mut Vec<RigidContact>) {
    rigid_contacts_with(scene, states, margin, out, &mut Vec::new());
}

/// [`rigid_contacts`] with the per-task lists kept in `scratch` from call to call (their memory
/// reused: new memory each step costs page faults that serialise the threads).
pub fn rigid_contacts_with(
    scene: &crate::Scene,
    states: &[RigidState],
    margin: f64,
    out: &mut Vec<RigidContact>,
    scratch: &mut Vec<Vec<RigidContact>>,
) {
    out.clear();
    let bodies = &scene.rigid;
    // Body pairs whose bounding spheres come within `margin` (the broadphase), grouped by their
    // first body; the joined pairs, sorted for lookup.
    let centres: Vec<Vec3> = states.iter().map(|s| s.x).collect();
    let radii: Vec<f64> = bodies.iter().map(|b| b.shape.bounding_radius()).collect();
    let candidates = crate::broadphase::sphere_pairs(&centres, &radii, margin);
    let mut joined: Vec<(usize, usize)> =
        scene.joints.iter().filter_map(|j| j.b.map(|b| (j.a.min(b), j.a.max(b)))).collect();
    joined.sort_unstable();
    // Where each body's candidates start (they are sorted by their first body).
    let mut first = Vec::with_capacity(bodies.len() + 1);
    let mut next = 0;
    for a in 0..=bodies.len() {
        while next < candidates.len() && candidates[next].0 < a {
            next += 1;
        }
        first.push(next);
    }
    let narrow = NarrowPhase { scene, states, margin, candidates: &candidates, first: &first, joined: &joined };
    // The bodies in chunks, each chunk's contacts in body order, the chunks joined in order: the
    // same list on any number of threads (the chunks run in parallel from `PARALLEL_BODIES`
    // bodies on, with more than one thread).
    let chunks = bodies.len().div_ceil(CONTACT_CHUNK);
    if bodies.len() < PARALLEL_BODIES || rayon::current_num_threads() < 2 {
        narrow.bodies(0..bodies.len(), out);
        return;
    }
    use rayon::prelude::*;
    scratch.resize_with(chunks.max(scratch.len()), Vec::new);
    scratch[..chunks].par_iter_mut().enumerate().for_each(|(c, part)| {
        part.clear();
        narrow.bodies(c * CONTACT_CHUNK..((c + 1) * CONTACT_CHUNK).min(bodies.len()), part);
    });
    // The parts joined on all threads: each contact finds its part by the parts' offsets.
    let mut offsets = Vec::with_capacity(chunks + 1);
    offsets.push(0);
    for part in &scratch[..chunks] {
        offsets.push(offsets[offsets.len() - 1] + part.len());
    }
    let parts = &scratch[..chunks];
    (0..offsets[chunks])
        .into_par_iter()
        .with_min_len(4096)
        .map(|k| {
            let p = offsets.partition_point(|&o| o <= k) - 1;
            parts[p][k - offsets[p]]
        })
        .collect_into_vec(out);
}

/// Bodies per parallel task of [`rigid_contacts`].
const CONTACT_CHUNK: usize = 64;

/// The fewest bodies [`rigid_contacts`] works on all threads for: handing out the tasks costs
/// some 10–20 µs here, more than the narrow phase of a few hundred bodies.
const PARALLEL_BODIES: usize = 512;

/// What the narrow phase of [`rigid_contacts`] reads.
struct NarrowPhase<'a> {
    scene: &'a crate::Scene,
    states: &'a [RigidState],
    margin: f64,
    /// The broadphase's pairs `(a, b)`, `a < b`, sorted; body `a`'s are
    /// `candidates[first[a]..first[a + 1]]`.
    candidates: &'a [(usize, usize)],
    first: &'a [usize],
    /// The pairs a joint joins (they do not collide), sorted.
    joined: &'a [(usize, usize)],
}

impl NarrowPhase<'_> {
    /// The contacts of bodies `range`, body by body, appended to `out`.
    fn bodies(&self, range: std::ops::Range<usize>, out: &mut Vec<RigidContact>) {
        let (scene, states, margin) = (self.scene, self.states, self.margin);
        let bodies = &scene.rigid;
        let mut points = Vec::new();
        for a in range {
            let (ba, sa) = (&bodies[a], &states[a]);
            let pose = sa.pose();
            let mut push = |b: Other, points: &mut Vec<ContactPoint>, mu: f64, e: f64| {
                for p in points.drain(..) {
                    out.push(RigidContact {
                        a,
                        b,
                        point: p,
                        friction: (ba.friction * mu).sqrt(),
                        restitution: ba.restitution.max(e),
                    });
                }
            };
            let against_plane = |n: Vec3, offset: f64, points: &mut Vec<ContactPoint>| match ba.shape {
                Shape::Box { half } => collide::box_plane(half, &pose, n, offset, margin, points),
                Shape::Sphere { radius } => collide::sphere_plane(radius, sa.x, n, offset, margin, points),
                Shape::Capsule { radius, half_height } => {
                    capsule::capsule_plane(radius, half_height, &pose, n, offset, margin, points)
                }
            };
            // A fixed body needs no contacts with the fixed world, only with movable bodies.
            let world = !ba.is_fixed();
            if let (true, Some(bx)) = (world, &scene.bounds) {
                for face in 0..6u8 {
                    let axis = (face / 2) as usize;
                    let mut n = Vec3::zeros();
                    let offset = if face % 2 == 0 {
                        n[axis] = 1.0;
                        bx.min[axis]
                    } else {
                        n[axis] = -1.0;
                        -bx.max[axis]
                    };
                    against_plane(n, offset, &mut points);
                    push(Other::Collider(ColliderRef::BoxFace(face).code()), &mut points, bx.friction, bx.restitution);
                }
            }
            for (k, p) in scene.planes.iter().enumerate().filter(|_| world) {
                against_plane(p.normal.normalize(), p.offset, &mut points);
                push(Other::Collider(ColliderRef::Plane(k as u32).code()), &mut points, p.friction, p.restitution);
            }
            for (k, s) in scene.spheres.iter().enumerate().filter(|_| world) {
                let r = s.radius + ba.shape.bounding_radius() + margin;
                if (s.center - sa.x).norm_squared() > r * r {
                    continue;
                }
                let ball = Pose { x: s.center, q: UnitQuaternion::identity() };
                shape_contacts(&ba.shape, &pose, &Shape::Sphere { radius: s.radius }, &ball, margin, &mut points);
                push(Other::Collider(ColliderRef::Sphere(k as u32).code()), &mut points, s.friction, s.restitution);
            }
            for (k, blk) in scene.blocks.iter().enumerate().filter(|_| world) {
                let half = (blk.max - blk.min) / 2.0;
                let centre = (blk.max + blk.min) / 2.0;
                let r = half.norm() + ba.shape.bounding_radius() + margin;
                if (centre - sa.x).norm_squared() > r * r {
                    continue;
                }
                let block_pose = Pose { x: centre, q: UnitQuaternion::identity() };
                shape_contacts(&ba.shape, &pose, &Shape::Box { half }, &block_pose, margin, &mut points);
                push(Other::Collider(ColliderRef::Block(k as u32).code()), &mut points, blk.friction, blk.restitution);
            }
            for &(_, b) in &self.candidates[self.first[a]..self.first[a + 1]] {
                let (bb, sb) = (&bodies[b], &states[b]);
                if (ba.is_fixed() && bb.is_fixed()) || self.joined.binary_search(&(a, b)).is_ok() {
                    continue;
                }
                shape_contacts(&ba.shape, &pose, &bb.shape, &sb.pose(), margin, &mut points);
                push(Other::Body(b), &mut points, bb.friction, bb.restitution);
            }
        }
    }
}

/// The contacts of shape `sa` at `pa` (A) with shape `sb` at `pb` (B) within `margin`, normals
/// from B to A, appended to `out`: the narrow phase of [`collide`] and [`capsule`] for every pair
/// of shapes (the mirrored pairs by swapping A and B and turning the normals round).
pub fn shape_contacts(sa: &Shape, pa: &Pose, sb: &Shape, pb: &Pose, margin: f64, out: &mut Vec<ContactPoint>) {
    use Shape::{Box, Capsule, Sphere};
    match (*sa, *sb) {
        (Box { half: ha }, Box { half: hb }) => collide::box_box(ha, pa, hb, pb, margin, out),
        (Sphere { radius: ra }, Sphere { radius: rb }) => collide::sphere_sphere(ra, pa.x, rb, pb.x, margin, out),
        (Sphere { radius }, Box { half }) => collide::sphere_box(radius, pa.x, half, pb, margin, out),
        (Capsule { radius, half_height }, Sphere { radius: rs }) => {
            capsule::capsule_sphere(radius, half_height, pa, rs, pb.x, margin, out)
        }
        (Capsule { radius: ra, half_height: ha }, Capsule { radius: rb, half_height: hb }) => {
            capsule::capsule_capsule(ra, ha, pa, rb, hb, pb, margin, out)
        }
        (Capsule { radius, half_height }, Box { half }) => {
            capsule::capsule_box(radius, half_height, pa, half, pb, margin, out)
        }
        (Box { .. } | Sphere { .. }, _) => {
            let start = out.len();
            shape_contacts(sb, pb, sa, pa, margin, out);
            for p in &mut out[start..] {
                p.normal = -p.normal;
            }
        }
    }
}

/// A rigid contact with the force a solver applied through it in the last (sub)step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactForce {
    /// The contact (at the start of the step).
    pub contact: RigidContact,
    /// The normal force on `a` along the normal (N), ≥ 0.
    pub normal_force: f64,
    /// The magnitude of the friction force (N).
    pub tangent_force: f64,
}

/// The fastest any point of any body moves (m/s), bounded by `|v| + |ω|·r` with `r` the body's
/// bounding radius: the speculative contact margin of a step is a multiple of it.
pub fn max_point_speed(bodies: &[RigidBody], states: &[RigidState]) -> f64 {
    bodies.iter().zip(states).map(|(b, s)| s.v.norm() + s.w.norm() * b.shape.bounding_radius()).fold(0.0, f64::max)
}

/// The total normal force of the world colliders on the rigid bodies (N).
pub fn collider_support(contacts: &[ContactForce]) -> f64 {
    contacts.iter().filter(|c| matches!(c.contact.b, Other::Collider(_))).map(|c| c.normal_force).sum()
}

/// The largest penetration `max(0, −separation)` over the rigid contacts at `states` (m).
pub fn max_penetration(scene: &crate::Scene, states: &[RigidState]) -> f64 {
    let mut contacts = Vec::new();
    rigid_contacts(scene, states, 0.0, &mut contacts);
    contacts.iter().map(|c| -c.point.separation).fold(0.0, f64::max)
}
