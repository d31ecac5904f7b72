//! The contacts of a rigid state: what a body touches ([`Other`]), one contact point
//! ([`RigidContact`]), every contact of the bodies with each other and with the world colliders
//! ([`rigid_contacts`], through the narrow phase's [`shape_contacts`]), and the force a solver
//! reports for a contact ([`ContactForce`]).

use nalgebra::UnitQuaternion;

use super::{capsule, collide, ContactPoint, Pose, RigidState, Shape};
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
    /// For a recycled contact ([`rigid_contacts_recycled`]): the lever arms from `a`'s centre
    /// and from `b`'s (m, world frame) to the point, frozen when the pair's contacts were last
    /// found (the second has no use for a world collider); `None` for a contact found in this
    /// call, whose arms run to `point.point`.
    pub arms: Option<[Vec3; 2]>,
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
    rigid_contacts_with(scene, states, margin, out, &mut ContactScratch::default());
}

/// The buffers of [`rigid_contacts_with`], kept from call to call: new memory each step costs
/// page faults that serialise the threads, and each fresh allocation of a kilobyte or more may
/// make glibc's allocator merge every small block freed since the last one.
#[derive(Clone, Debug, Default)]
pub struct ContactScratch {
    /// The per-task lists of contacts (and the caller's own scratch lists between calls).
    pub parts: Vec<Vec<RigidContact>>,
    centres: Vec<Vec3>,
    radii: Vec<f64>,
    candidates: Vec<(usize, usize)>,
    joined: Vec<(usize, usize)>,
    first: Vec<usize>,
    /// The entry being built for one body (recycling, on the calling thread).
    fresh: KeptBody,
    /// The broadphase's pairs, kept while the bodies move little.
    kept: crate::broadphase::KeptPairs,
}

/// [`rigid_contacts`] with its buffers kept in `scratch` from call to call.
pub fn rigid_contacts_with(
    scene: &crate::Scene,
    states: &[RigidState],
    margin: f64,
    out: &mut Vec<RigidContact>,
    scratch: &mut ContactScratch,
) {
    let n = rigid_contacts_parts(scene, states, margin, scratch, None);
    join_parts(&mut scratch.parts[..n], out);
}

/// The contacts of [`rigid_contacts_with`] (of [`rigid_contacts_recycled`] with a `cache`) left
/// in the first parts of `scratch.parts`, as many as it returns: their concatenation is that
/// list, which [`join_parts`] makes. For a caller that copies the contacts into an order of its
/// own anyway, which can gather them from the parts: on two threads, joining the 4,095-box
/// pyramid's parts took 3 % of the frame.
pub fn rigid_contacts_parts(
    scene: &crate::Scene,
    states: &[RigidState],
    margin: f64,
    scratch: &mut ContactScratch,
    cache: Option<&mut ContactCache>,
) -> usize {
    let kept = cache.map(|cache| {
        if cache.bodies.len() != scene.rigid.len() {
            cache.bodies.clear();
            cache.bodies.resize_with(scene.rigid.len(), KeptBody::default);
        }
        Kept { bodies: &mut cache.bodies[..], recycle: cache.recycle, sat_slop: cache.sat_slop }
    });
    contacts_parts(scene, states, margin, scratch, kept)
}

/// The kept pairs of one call: each body's entry, and what they are kept for.
struct Kept<'a> {
    bodies: &'a mut [KeptBody],
    recycle: bool,
    sat_slop: Option<f64>,
}

/// Concatenates `parts` into `out` (its old contents dropped): a single part is swapped in,
/// several are copied, each into its own slice, on all threads. A list kept from the last call
/// keeps its length, so that in steady state only the change in count is written before the
/// copies (on two threads, the parts gathered one contact at a time into the list took 1.6 ms a
/// frame of the 4,095-box pyramid, about what the second thread saved in the narrow phase; the
/// copies take about 0.8).
pub fn join_parts(parts: &mut [Vec<RigidContact>], out: &mut Vec<RigidContact>) {
    use rayon::prelude::*;
    if let [only] = parts {
        std::mem::swap(only, out);
        return;
    }
    let total: usize = parts.iter().map(Vec::len).sum();
    match parts.iter().find_map(|p| p.first()) {
        Some(&any) => out.resize(total, any),
        None => out.clear(),
    }
    let slices = crate::broadphase::consecutive_slices(out, parts.iter().map(Vec::len));
    slices.into_par_iter().zip(parts.par_iter()).with_min_len(4).for_each(|(to, from)| to.copy_from_slice(from));
}

/// [`rigid_contacts_with`] with contact recycling, as Rapier 0.36 does it (its
/// `contact_recycling`, on by default): a pair whose relative pose has drifted little since its
/// contacts were last found keeps them ([`ContactCache`]); the others are found anew and kept
/// for the next call. The first call, or one with a new body count, finds all.
pub fn rigid_contacts_recycled(
    scene: &crate::Scene,
    states: &[RigidState],
    margin: f64,
    out: &mut Vec<RigidContact>,
    scratch: &mut ContactScratch,
    cache: &mut ContactCache,
) {
    let n = rigid_contacts_parts(scene, states, margin, scratch, Some(cache));
    join_parts(&mut scratch.parts[..n], out);
}

/// The pairs and contact points of the last call of [`rigid_contacts_recycled`], by first body.
///
/// A pair of bodies, or of a body and a world block or sphere, is recycled while both hold:
/// * its relative pose (the second's pose in the first's frame) has drifted by at most
///   5 cm (Rapier 0.36's default) since its contacts were found: the translation's change plus the
///   chord `2·r·sin(Δθ/2)` of its rotation's change, `r` the larger bounding radius; for a pair
///   that had no contact point, at most the speculative margin it was found with, if less;
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
    bodies: Vec<KeptBody>,
    recycle: bool,
    sat_slop: Option<f64>,
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
const RECYCLE_DISTANCE: f64 = 0.05;

/// The smallest `cos Δθ` of either body's turn since its pair's contacts were found, for the
/// pair to be recycled (Rapier 0.36's bound; about 11.5°).
const RECYCLE_TURN_COS: f64 = 0.98;

/// One body's kept pairs and their points, and its pairs of boxes' separating axes.
#[derive(Clone, Debug, Default)]
struct KeptBody {
    pairs: Vec<KeptPair>,
    points: Vec<KeptPoint>,
    sat: Vec<(Other, collide::SatCache)>,
}

/// A pair of the body (`a`) with `b`, as its contacts were last found.
#[derive(Clone, Copy, Debug)]
struct KeptPair {
    b: Other,
    /// `b`'s pose in `a`'s frame: its position and orientation.
    t: Vec3,
    q: UnitQuaternion<f64>,
    /// Both bodies' orientations.
    qa: UnitQuaternion<f64>,
    qb: UnitQuaternion<f64>,
    /// The larger bounding radius (m) and the largest drift for recycling (m).
    extent: f64,
    max_drift: f64,
    /// Its points, `KeptBody::points[points.0..points.1]`.
    points: (usize, usize),
}

/// A kept contact point.
#[derive(Clone, Copy, Debug)]
struct KeptPoint {
    /// The point's end on `a`'s surface in `a`'s frame, and on `b`'s in `b`'s (m).
    la: Vec3,
    lb: Vec3,
    /// The normal (from `b` to `a`) and the lever arms from `a`'s and `b`'s origin, frozen in the
    /// world frame.
    n: Vec3,
    arms: [Vec3; 2],
    feature: u32,
}

impl KeptPair {
    /// Whether the pair at poses `pa`, `pb` is still within its recycling bounds.
    fn holds(&self, pa: &Pose, pb: &Pose) -> bool {
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

/// [`rigid_contacts_parts`], with the kept pairs of [`rigid_contacts_recycled`] (one entry per
/// body) when given.
fn contacts_parts(
    scene: &crate::Scene,
    states: &[RigidState],
    margin: f64,
    scratch: &mut ContactScratch,
    cache: Option<Kept<'_>>,
) -> usize {
    let bodies = &scene.rigid;
    let ContactScratch { parts: scratch, centres, radii, candidates, joined, first, fresh, kept } = scratch;
    // Body pairs whose bounding spheres come within `margin` (the broadphase), grouped by their
    // first body; the joined pairs, sorted for lookup.
    centres.clear();
    centres.extend(states.iter().map(|s| s.x));
    radii.clear();
    radii.extend(bodies.iter().map(|b| b.shape.bounding_radius()));
    crate::broadphase::sphere_pairs_kept(centres, radii, margin, kept, candidates);
    joined.clear();
    joined.extend(scene.joints.iter().filter_map(|j| j.b.map(|b| (j.a.min(b), j.a.max(b)))));
    joined.sort_unstable();
    // Where each body's candidates start (they are sorted by their first body).
    first.clear();
    let mut next = 0;
    for a in 0..=bodies.len() {
        while next < candidates.len() && candidates[next].0 < a {
            next += 1;
        }
        first.push(next);
    }
    let (recycle, sat_slop) = cache.as_ref().map_or((false, None), |k| (k.recycle, k.sat_slop));
    let mut cache = cache.map(|k| k.bodies);
    let narrow = NarrowPhase { scene, states, margin, candidates, first, joined, recycle, sat_slop };
    // The bodies in chunks, each chunk's contacts in body order, one part per chunk: the same
    // list on any number of threads (the chunks run in parallel from `PARALLEL_BODIES` bodies
    // on, with more than one thread; below, one part of all).
    if bodies.len() < PARALLEL_BODIES || rayon::current_num_threads() < 2 {
        scratch.resize_with(scratch.len().max(1), Vec::new);
        let out = &mut scratch[0];
        out.clear();
        narrow.bodies(0..bodies.len(), out, cache.as_mut().map(|c| &mut c[..]), fresh);
        return 1;
    }
    use rayon::prelude::*;
    let chunks = bodies.len().div_ceil(CONTACT_CHUNK);
    scratch.resize_with(chunks.max(scratch.len()), Vec::new);
    // Each task's part of the kept points (its bodies' lists), if any.
    let mut kept: Vec<Option<&mut [KeptBody]>> = match cache {
        Some(c) => c.chunks_mut(CONTACT_CHUNK).map(Some).collect(),
        None => (0..chunks).map(|_| None).collect(),
    };
    scratch[..chunks].par_iter_mut().zip(kept.par_iter_mut()).enumerate().for_each(|(c, (part, kept))| {
        part.clear();
        let range = c * CONTACT_CHUNK..((c + 1) * CONTACT_CHUNK).min(bodies.len());
        narrow.bodies(range, part, kept.as_deref_mut(), &mut KeptBody::default());
    });
    chunks
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
    /// With kept pairs: whether their points are recycled, and the slop of the kept separating
    /// axes of pairs of boxes, if kept ([`ContactCache`]).
    recycle: bool,
    sat_slop: Option<f64>,
}

impl NarrowPhase<'_> {
    /// The contacts of bodies `range`, body by body, appended to `out`; with `cache` (the kept
    /// pairs of these bodies, `cache[a - range.start]` body `a`'s), a pair within its recycling
    /// bounds keeps its points ([`ContactCache`]), and each body's entry is replaced by its pairs
    /// of this call, built in `fresh` and copied into the entry's own memory (so that each
    /// entry's memory keeps the size its body needs, and a step in steady state allocates none).
    fn bodies(
        &self,
        range: std::ops::Range<usize>,
        out: &mut Vec<RigidContact>,
        mut cache: Option<&mut [KeptBody]>,
        fresh: &mut KeptBody,
    ) {
        let (scene, states, margin) = (self.scene, self.states, self.margin);
        let bodies = &scene.rigid;
        let mut points = Vec::new();
        let first = range.start;
        for a in range {
            let (ba, sa) = (&bodies[a], &states[a]);
            let pose = sa.pose();
            let mut old = cache.as_mut().map(|c| std::mem::take(&mut c[a - first]));
            fresh.pairs.clear();
            fresh.points.clear();
            fresh.sat.clear();
            // The pair's friction and restitution from the other side's `(μ, e)`.
            let combined = |(mu, e): (f64, f64)| ((ba.friction * mu).sqrt(), ba.restitution.max(e));
            // The contacts of `points` with `b`, the other side's coefficients `(μ, e)`, appended
            // to `out` (emptying `points`; their arms run to the points).
            let push =
                |b: Other, points: &mut Vec<ContactPoint>, coefficients: (f64, f64), out: &mut Vec<RigidContact>| {
                    let (friction, restitution) = combined(coefficients);
                    out.extend(points.drain(..).map(|point| RigidContact {
                        a,
                        b,
                        point,
                        friction,
                        restitution,
                        arms: None,
                    }));
                };
            // The contacts with `b` (shape `bb` at `pb`) appended to `out`: with recycling, the
            // kept ones with their frozen arms if the pair is within its bounds, else the narrow
            // phase's, kept.
            let mut pair = |b: Other,
                            bb: &Shape,
                            pb: &Pose,
                            coefficients: (f64, f64),
                            points: &mut Vec<ContactPoint>,
                            out: &mut Vec<RigidContact>| {
                let Some(old) = old.as_ref() else {
                    shape_contacts(&ba.shape, &pose, bb, pb, margin, points);
                    push(b, points, coefficients, out);
                    return;
                };
                let start = fresh.points.len();
                let recycled = if self.recycle { old.pairs.iter().find(|k| k.b == b) } else { None };
                if let Some(k) = recycled.filter(|k| k.holds(&pose, pb)) {
                    let (friction, restitution) = combined(coefficients);
                    let kept = &old.points[k.points.0..k.points.1];
                    out.extend(kept.iter().map(|kp| {
                        let (ea, eb) = (pose.x + pose.q * kp.la, pb.x + pb.q * kp.lb);
                        let separation = (ea - eb).dot(&kp.n);
                        let point =
                            ContactPoint { point: (ea + eb) * 0.5, normal: kp.n, separation, feature: kp.feature };
                        RigidContact { a, b, point, friction, restitution, arms: Some(kp.arms) }
                    }));
                    fresh.points.extend_from_slice(kept);
                    fresh.pairs.push(KeptPair { points: (start, fresh.points.len()), ..*k });
                    fresh.sat.extend(old.sat.iter().find(|(o, _)| *o == b));
                    return;
                }
                match (self.sat_slop, &ba.shape, bb) {
                    (Some(slop), Shape::Box { half: ha }, Shape::Box { half: hb }) => {
                        let mut sat = old.sat.iter().find(|(o, _)| *o == b).map_or_else(Default::default, |e| e.1);
                        collide::box_box_cached(*ha, &pose, *hb, pb, margin, slop, &mut sat, points);
                        fresh.sat.push((b, sat));
                    }
                    _ => shape_contacts(&ba.shape, &pose, bb, pb, margin, points),
                }
                if !self.recycle {
                    push(b, points, coefficients, out);
                    return;
                }
                for p in points.iter() {
                    let half = p.normal * (0.5 * p.separation);
                    fresh.points.push(KeptPoint {
                        la: pose.q.inverse_transform_vector(&(p.point + half - pose.x)),
                        lb: pb.q.inverse_transform_vector(&(p.point - half - pb.x)),
                        n: p.normal,
                        arms: [p.point - pose.x, p.point - pb.x],
                        feature: p.feature,
                    });
                }
                fresh.pairs.push(KeptPair {
                    b,
                    t: pose.q.inverse_transform_vector(&(pb.x - pose.x)),
                    q: pose.q.inverse() * pb.q,
                    qa: pose.q,
                    qb: pb.q,
                    extent: ba.shape.bounding_radius().max(bb.bounding_radius()),
                    max_drift: if points.is_empty() { RECYCLE_DISTANCE.min(margin) } else { RECYCLE_DISTANCE },
                    points: (start, fresh.points.len()),
                });
                push(b, points, coefficients, out);
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
                    let face = Other::Collider(ColliderRef::BoxFace(face).code());
                    push(face, &mut points, (bx.friction, bx.restitution), out);
                }
            }
            for (k, p) in scene.planes.iter().enumerate().filter(|_| world) {
                against_plane(p.normal.normalize(), p.offset, &mut points);
                push(
                    Other::Collider(ColliderRef::Plane(k as u32).code()),
                    &mut points,
                    (p.friction, p.restitution),
                    out,
                );
            }
            for (k, s) in scene.spheres.iter().enumerate().filter(|_| world) {
                let r = s.radius + ba.shape.bounding_radius() + margin;
                if (s.center - sa.x).norm_squared() > r * r {
                    continue;
                }
                let ball = Pose { x: s.center, q: UnitQuaternion::identity() };
                let code = Other::Collider(ColliderRef::Sphere(k as u32).code());
                pair(code, &Shape::Sphere { radius: s.radius }, &ball, (s.friction, s.restitution), &mut points, out);
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
                pair(code, &Shape::Box { half }, &block_pose, (blk.friction, blk.restitution), &mut points, out);
            }
            for &(_, b) in &self.candidates[self.first[a]..self.first[a + 1]] {
                let (bb, sb) = (&bodies[b], &states[b]);
                if (ba.is_fixed() && bb.is_fixed()) || self.joined.binary_search(&(a, b)).is_ok() {
                    continue;
                }
                pair(Other::Body(b), &bb.shape, &sb.pose(), (bb.friction, bb.restitution), &mut points, out);
            }
            if let Some(c) = cache.as_mut() {
                let mut kept = old.take().unwrap_or_default();
                kept.pairs.clone_from(&fresh.pairs);
                kept.points.clone_from(&fresh.points);
                kept.sat.clone_from(&fresh.sat);
                c[a - first] = kept;
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

/// The total normal force of the world colliders on the rigid bodies (N).
pub fn collider_support(contacts: &[ContactForce]) -> f64 {
    contacts.iter().filter(|c| matches!(c.contact.b, Other::Collider(_))).map(|c| c.normal_force).sum()
}

/// The largest penetration `max(0, −separation)` over the rigid contacts at `states` (m).
///
/// Its contact list and search buffers are kept per thread from call to call, as the solvers
/// keep theirs: the runner measures every frame, and a new list each time cost the page faults
/// of its memory and the gathering of the parallel search's parts (about 3 ms a frame of the
/// 4,095-box pyramid on two threads, where the kept list takes the solver's parallel copies).
/// A call on a thread whose buffers are in use (nested in another's parallel search) takes new
/// ones. The buffers change no number: the list is written in full each call.
pub fn max_penetration(scene: &crate::Scene, states: &[RigidState]) -> f64 {
    thread_local! {
        static KEPT: std::cell::RefCell<(Vec<RigidContact>, ContactScratch)> =
            std::cell::RefCell::new((Vec::new(), ContactScratch::default()));
    }
    let deepest = |contacts: &mut Vec<RigidContact>, scratch: &mut ContactScratch| {
        rigid_contacts_with(scene, states, 0.0, contacts, scratch);
        contacts.iter().map(|c| -c.point.separation).fold(0.0, f64::max)
    };
    KEPT.with(|kept| match kept.try_borrow_mut() {
        Ok(mut kept) => {
            let (contacts, scratch) = &mut *kept;
            deepest(contacts, scratch)
        }
        Err(_) => deepest(&mut Vec::new(), &mut ContactScratch::default()),
    })
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

    fn recycled(scene: &crate::Scene, states: &[RigidState], cache: &mut ContactCache) -> Vec<RigidContact> {
        let mut out = Vec::new();
        rigid_contacts_recycled(scene, states, 0.02, &mut out, &mut ContactScratch::default(), cache);
        out
    }

    fn fresh(scene: &crate::Scene, states: &[RigidState]) -> Vec<RigidContact> {
        let mut out = Vec::new();
        rigid_contacts(scene, states, 0.02, &mut out);
        out
    }

    /// 640 boxes in a heap on a floor, each 1 cm into its neighbours.
    fn heap() -> (crate::Scene, Vec<RigidState>) {
        let mut scene = crate::Scene::new("heap");
        for k in 0..640 {
            let (i, j, l) = ((k % 8) as f64, ((k / 8) % 8) as f64, (k / 64) as f64);
            let x = Vec3::new(i * 0.99 + 0.01 * l, 0.495 + l * 0.99, j * 0.99 - 0.01 * l);
            scene.rigid.push(RigidBody::new(Shape::Box { half: Vec3::repeat(0.5) }, 1.0, x));
        }
        scene.planes.push(crate::Plane { normal: Vec3::y(), offset: 0.0, friction: 0.5, restitution: 0.0 });
        let states: Vec<RigidState> = scene.rigid.iter().map(|b| b.initial_state()).collect();
        (scene, states)
    }

    /// With the pairs of boxes keeping their separating axes (no recycling), on one thread and
    /// on two: the first call finds what the narrow phase finds and keeps an axis for every
    /// pair of boxes the broadphase gives; called again on the same states, every one of them
    /// is answered from its kept axis, with the same contacts.
    #[test]
    fn kept_separating_axes_give_the_narrow_phases_contacts() {
        let (scene, states) = heap();
        let want = fresh(&scene, &states);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut cache = ContactCache::new(false, Some(0.005));
            let mut scratch = ContactScratch::default();
            let mut find = |cache: &mut ContactCache| {
                let n = pool.install(|| rigid_contacts_parts(&scene, &states, 0.02, &mut scratch, Some(cache)));
                scratch.parts[..n].concat()
            };
            assert_eq!(find(&mut cache), want);
            let (pairs, hits) = cache.sat_hits();
            assert!(pairs > 1000 && hits == 0, "{pairs} pairs, {hits} hits");
            assert_eq!(find(&mut cache), want);
            assert_eq!(cache.sat_hits(), (pairs, pairs));
        }
    }

    /// On two threads, the heap (above `PARALLEL_BODIES`) leaves its contacts in several parts
    /// whose concatenation is the list found on one thread, with and without recycling;
    /// joined, the parts are that list again.
    #[test]
    fn the_parts_are_the_list_found_on_one_thread() {
        let (scene, states) = heap();
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for recycling in [false, true] {
            let mut cache = ContactCache::default();
            let find = |cache: &mut ContactCache, scratch: &mut ContactScratch| {
                rigid_contacts_parts(&scene, &states, 0.02, scratch, recycling.then_some(cache))
            };
            let mut single = ContactScratch::default();
            let n = one.install(|| find(&mut cache.clone(), &mut single));
            assert_eq!(n, 1);
            let mut several = ContactScratch::default();
            let n = two.install(|| find(&mut cache, &mut several));
            assert!(n > 1, "one part on two threads");
            let concatenated: Vec<RigidContact> = several.parts[..n].concat();
            assert!(concatenated.len() > 640, "the heap touches: {} contacts", concatenated.len());
            assert_eq!(concatenated, single.parts[0]);
            let mut joined = vec![concatenated[3]; 5];
            two.install(|| join_parts(&mut several.parts[..n], &mut joined));
            assert_eq!(joined, single.parts[0]);
        }
    }

    /// The first call finds what the narrow phase finds. Moved by 1 mm up and 3 cm along the
    /// face (drift 3 cm), the upper box keeps its points: their features, their normal and
    /// their arms as found, each separation the distance along the normal between the point's
    /// ends carried by the bodies (1 mm more), the point midway between the ends. Past 5 cm of
    /// drift, or with both boxes turned together by 12° (no relative drift, but frozen arms
    /// would be wrong), the points are the narrow phase's again.
    #[test]
    fn recycled_contacts_follow_the_bodies_until_they_drift_too_far() {
        let (scene, mut states) = two_boxes();
        let mut cache = ContactCache::default();
        let first = recycled(&scene, &states, &mut cache);
        assert_eq!(first, fresh(&scene, &states));
        assert_eq!(first.len(), 4);
        assert!(first.iter().all(|c| (c.point.separation + 0.001).abs() < 1e-12 && c.arms.is_none()));

        let moved = Vec3::new(0.03, 0.001, 0.0);
        states[0].x += moved;
        let kept = recycled(&scene, &states, &mut cache);
        assert_eq!(kept.len(), 4);
        for (k, f) in kept.iter().zip(&first) {
            assert_eq!((k.a, k.b, k.point.feature, k.point.normal), (f.a, f.b, f.point.feature, f.point.normal));
            assert!((k.point.separation - (f.point.separation + 0.001)).abs() < 1e-12, "{}", k.point.separation);
            assert!((k.point.point - (f.point.point + moved * 0.5)).norm() < 1e-12);
            let [ra, rb] = k.arms.expect("recycled");
            assert!((ra - (f.point.point - scene.rigid[0].x)).norm() < 1e-12);
            assert!((rb - (f.point.point - scene.rigid[1].x)).norm() < 1e-12);
        }

        // 2.5 cm more along the face: 5.5 cm from where they were found.
        states[0].x.x += 0.025;
        assert_eq!(recycled(&scene, &states, &mut cache), fresh(&scene, &states));

        // Both boxes turned by 12° about the vertical through the lower box's centre.
        let (scene, mut states) = two_boxes();
        let mut cache = ContactCache::default();
        recycled(&scene, &states, &mut cache);
        let turn = UnitQuaternion::from_euler_angles(0.0, 12f64.to_radians(), 0.0);
        for s in states.iter_mut() {
            s.x = Vec3::new(0.0, -1.0, 0.0) + turn * (s.x - Vec3::new(0.0, -1.0, 0.0));
            s.q = turn * s.q;
        }
        assert_eq!(recycled(&scene, &states, &mut cache), fresh(&scene, &states));
    }
}
