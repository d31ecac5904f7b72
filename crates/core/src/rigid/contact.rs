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
    contacts_with(scene, states, margin, out, scratch, None);
}

/// [`rigid_contacts_with`] with contact coherence: a box's contacts with another box or a world
/// block are those of the last call, their separations measured anew, while the pair's relative
/// motion since they were found stays small ([`ContactCache`]); otherwise they are found anew
/// and kept for the next call. The first call, or one with a new body count, finds all.
pub fn rigid_contacts_coherent(
    scene: &crate::Scene,
    states: &[RigidState],
    margin: f64,
    out: &mut Vec<RigidContact>,
    scratch: &mut Vec<Vec<RigidContact>>,
    cache: &mut ContactCache,
) {
    if cache.bodies.len() != scene.rigid.len() {
        cache.bodies.clear();
        cache.bodies.resize_with(scene.rigid.len(), Vec::new);
    }
    contacts_with(scene, states, margin, out, scratch, Some(&mut cache.bodies));
}

/// The box–box contact points of the last call of [`rigid_contacts_coherent`], kept in both
/// bodies' frames, by first body.
///
/// A pair's kept points are used again, as in the contact coherence of parry's cuboid–cuboid
/// manifolds (which Rapier uses), while all of these hold: the normal, fixed in each body, has
/// turned by less than 1° from one body to the other; no point has crossed between gap and
/// penetration since the last call; and no point's two ends have slid more than 1 mm apart
/// along the normal's plane since the points were found. The points then keep their feature ids
/// (their warm start), the normal turns with the second body, and each separation is the
/// distance along it between the point's two ends. A pair that fails any test, and every pair
/// of other shapes, is found anew by the narrow phase.
#[derive(Clone, Debug, Default)]
pub struct ContactCache {
    bodies: Vec<Vec<KeptPoint>>,
}

impl ContactCache {
    /// Forgets every kept point (the next call finds all contacts anew).
    pub fn clear(&mut self) {
        self.bodies.clear();
    }
}

/// One kept contact point of body `a` (the cache's index) with `b`.
#[derive(Clone, Copy, Debug)]
struct KeptPoint {
    b: Other,
    /// The point's end on `a`'s surface, in `a`'s frame (m).
    la: Vec3,
    /// Its end on `b`'s surface, in `b`'s frame (the world's for a block) (m).
    lb: Vec3,
    /// The normal (from `b` to `a`) in `a`'s frame and in `b`'s.
    na: Vec3,
    nb: Vec3,
    /// The separation last measured (m).
    separation: f64,
    feature: u32,
}

/// The smallest cosine between the normal as fixed in either body for kept points to be used
/// again (1°).
const COHERENT_COS: f64 = 0.999_847_695_156_391_2;

/// The largest squared slide of a kept point's two ends along the normal's plane (m²): 1 mm.
const COHERENT_SLIDE2: f64 = 1.0e-6;

/// The kept points `kept` of a pair at poses `pa`, `pb`, appended to `out` with their
/// separations measured anew and written back, or `false` (and `out` unchanged) when the pair
/// moved too far for them ([`ContactCache`]).
fn reuse(kept: &mut [KeptPoint], pa: &Pose, pb: &Pose, out: &mut Vec<ContactPoint>) -> bool {
    let Some(first) = kept.first() else { return false };
    let n = pb.q * first.nb;
    if (pa.q * first.na).dot(&n) < COHERENT_COS {
        return false;
    }
    let start = out.len();
    for k in kept.iter() {
        let (ea, eb) = (pa.x + pa.q * k.la, pb.x + pb.q * k.lb);
        let d = ea - eb;
        let separation = d.dot(&n);
        if separation * k.separation < 0.0 || (d - n * separation).norm_squared() > COHERENT_SLIDE2 {
            out.truncate(start);
            return false;
        }
        out.push(ContactPoint { point: (ea + eb) * 0.5, normal: n, separation, feature: k.feature });
    }
    for (k, p) in kept.iter_mut().zip(&out[start..]) {
        k.separation = p.separation;
    }
    true
}

/// Keeps the fresh points `points` of body `a` at `pa` with `b` at `pb` in `kept`.
fn keep(b: Other, points: &[ContactPoint], pa: &Pose, pb: &Pose, kept: &mut Vec<KeptPoint>) {
    for p in points {
        let half = p.normal * (0.5 * p.separation);
        kept.push(KeptPoint {
            b,
            la: pa.q.inverse_transform_vector(&(p.point + half - pa.x)),
            lb: pb.q.inverse_transform_vector(&(p.point - half - pb.x)),
            na: pa.q.inverse_transform_vector(&p.normal),
            nb: pb.q.inverse_transform_vector(&p.normal),
            separation: p.separation,
            feature: p.feature,
        });
    }
}

/// [`rigid_contacts_with`], with the kept points of [`rigid_contacts_coherent`] (one list per
/// body) when given.
fn contacts_with(
    scene: &crate::Scene,
    states: &[RigidState],
    margin: f64,
    out: &mut Vec<RigidContact>,
    scratch: &mut Vec<Vec<RigidContact>>,
    mut cache: Option<&mut Vec<Vec<KeptPoint>>>,
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
        narrow.bodies(0..bodies.len(), out, cache.as_mut().map(|c| &mut c[..]));
        return;
    }
    use rayon::prelude::*;
    scratch.resize_with(chunks.max(scratch.len()), Vec::new);
    // Each task's part of the kept points (its bodies' lists), if any.
    let mut kept: Vec<Option<&mut [Vec<KeptPoint>]>> = match cache {
        Some(c) => c.chunks_mut(CONTACT_CHUNK).map(Some).collect(),
        None => (0..chunks).map(|_| None).collect(),
    };
    scratch[..chunks].par_iter_mut().zip(kept.par_iter_mut()).enumerate().for_each(|(c, (part, kept))| {
        part.clear();
        let range = c * CONTACT_CHUNK..((c + 1) * CONTACT_CHUNK).min(bodies.len());
        narrow.bodies(range, part, kept.as_deref_mut());
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
    /// The contacts of bodies `range`, body by body, appended to `out`; with `cache` (the kept
    /// points of these bodies, `cache[a - range.start]` body `a`'s), box–box pairs reuse their
    /// kept points while coherent, and each body's list is replaced by its pairs' of this call.
    fn bodies(
        &self,
        range: std::ops::Range<usize>,
        out: &mut Vec<RigidContact>,
        mut cache: Option<&mut [Vec<KeptPoint>]>,
    ) {
        let (scene, states, margin) = (self.scene, self.states, self.margin);
        let bodies = &scene.rigid;
        let mut points = Vec::new();
        // The lists being built: one body's kept points of this call (its old list is reused for
        // the next body's).
        let mut fresh: Vec<KeptPoint> = Vec::new();
        let first = range.start;
        for a in range {
            let (ba, sa) = (&bodies[a], &states[a]);
            let pose = sa.pose();
            let mut old = match (cache.as_mut(), ba.shape) {
                (Some(c), Shape::Box { .. }) => Some(std::mem::take(&mut c[a - first])),
                _ => None,
            };
            fresh.clear();
            // A box's contacts with box `bb` at `pb` (`b`): its kept points if coherent, else
            // the narrow phase's, kept.
            let mut boxes = |b: Other, bb: &Shape, pb: &Pose, points: &mut Vec<ContactPoint>| {
                let Some(old) = old.as_mut().filter(|_| matches!(bb, Shape::Box { .. })) else {
                    shape_contacts(&ba.shape, &pose, bb, pb, margin, points);
                    return;
                };
                let run = old.iter().position(|k| k.b == b).map(|s| {
                    let e = old[s..].iter().position(|k| k.b != b).map_or(old.len(), |e| s + e);
                    s..e
                });
                if let Some(run) = run {
                    if reuse(&mut old[run.clone()], &pose, pb, points) {
                        fresh.extend_from_slice(&old[run]);
                        return;
                    }
                }
                shape_contacts(&ba.shape, &pose, bb, pb, margin, points);
                keep(b, points, &pose, pb, &mut fresh);
            };
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
                let code = Other::Collider(ColliderRef::Block(k as u32).code());
                boxes(code, &Shape::Box { half }, &block_pose, &mut points);
                push(Other::Collider(ColliderRef::Block(k as u32).code()), &mut points, blk.friction, blk.restitution);
            }
            for &(_, b) in &self.candidates[self.first[a]..self.first[a + 1]] {
                let (bb, sb) = (&bodies[b], &states[b]);
                if (ba.is_fixed() && bb.is_fixed()) || self.joined.binary_search(&(a, b)).is_ok() {
                    continue;
                }
                boxes(Other::Body(b), &bb.shape, &sb.pose(), &mut points);
                push(Other::Body(b), &mut points, bb.friction, bb.restitution);
            }
            if let (Some(c), Some(old)) = (cache.as_mut(), old.as_mut()) {
                std::mem::swap(old, &mut fresh);
                c[a - first] = std::mem::take(old);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rigid::{RigidBody, Shape};

    /// A 1 m box resting 1 mm into a 2 m box, its face square on the lower box's top face.
    fn two_boxes() -> (crate::Scene, Vec<RigidState>) {
        let mut scene = crate::Scene::new("boxes");
        scene.rigid.push(RigidBody::new(Shape::Box { half: Vec3::repeat(0.5) }, 1.0, Vec3::new(0.1, 0.499, 0.0)));
        scene.rigid.push(RigidBody::new(Shape::Box { half: Vec3::repeat(1.0) }, 8.0, Vec3::new(0.0, -1.0, 0.0)));
        let states = scene.rigid.iter().map(|b| b.initial_state()).collect();
        (scene, states)
    }

    fn coherent(scene: &crate::Scene, states: &[RigidState], cache: &mut ContactCache) -> Vec<RigidContact> {
        let mut out = Vec::new();
        rigid_contacts_coherent(scene, states, 0.02, &mut out, &mut Vec::new(), cache);
        out
    }

    fn fresh(scene: &crate::Scene, states: &[RigidState]) -> Vec<RigidContact> {
        let mut out = Vec::new();
        rigid_contacts(scene, states, 0.02, &mut out);
        out
    }

    /// The first call finds what the narrow phase finds. Moved by less than the limits, the
    /// upper box keeps its points (features, surface ends): a slide along the normal moves each
    /// separation by the slide exactly, and a slide along the face leaves each point midway
    /// between the box's end, which moved, and the lower box's, which did not. Past a 1 mm slide,
    /// across the gap, or turned by 2°, the points are the narrow phase's again.
    #[test]
    fn kept_box_contacts_follow_the_bodies_until_they_move_too_far() {
        let (scene, mut states) = two_boxes();
        let mut cache = ContactCache::default();
        let first = coherent(&scene, &states, &mut cache);
        assert_eq!(first, fresh(&scene, &states));
        assert_eq!(first.len(), 4);
        assert!(first.iter().all(|c| (c.point.separation + 0.001).abs() < 1e-12));

        // 0.4 mm up: kept, each separation moved by the slide.
        states[0].x.y += 0.0004;
        let kept = coherent(&scene, &states, &mut cache);
        assert_eq!(kept.len(), 4);
        for (k, f) in kept.iter().zip(&first) {
            assert_eq!(k.point.feature, f.point.feature);
            assert!((k.point.separation - (f.point.separation + 0.0004)).abs() < 1e-12, "{}", k.point.separation);
            assert!((k.point.normal - f.point.normal).norm() < 1e-12);
        }

        // 0.5 mm along x: kept, midway between the ends (0.25 mm behind the narrow phase's).
        states[0].x.x += 0.0005;
        let (kept, found) = (coherent(&scene, &states, &mut cache), fresh(&scene, &states));
        assert_eq!(kept.len(), found.len());
        for (k, f) in kept.iter().zip(&found) {
            assert_eq!(k.point.feature, f.point.feature);
            assert!((k.point.separation - f.point.separation).abs() < 1e-12);
            assert!((k.point.point - f.point.point + Vec3::new(0.00025, 0.0, 0.0)).norm() < 1e-12);
        }

        // 0.6 mm more (1.1 mm since they were found): found anew.
        states[0].x.x += 0.0006;
        assert_eq!(coherent(&scene, &states, &mut cache), fresh(&scene, &states));

        // Across the gap (from −0.6 mm to +0.2 mm): found anew.
        coherent(&scene, &states, &mut cache);
        states[0].x.y += 0.0008;
        assert_eq!(coherent(&scene, &states, &mut cache), fresh(&scene, &states));

        // Tilted by 2° about x: found anew.
        let (scene, mut states) = two_boxes();
        let mut cache = ContactCache::default();
        coherent(&scene, &states, &mut cache);
        states[0].q = nalgebra::UnitQuaternion::from_euler_angles(2f64.to_radians(), 0.0, 0.0);
        assert_eq!(coherent(&scene, &states, &mut cache), fresh(&scene, &states));
    }
}
