//! The contacts of a rigid state: what a body touches ([`Other`]), one contact point
//! ([`RigidContact`]), every contact of the bodies with each other and with the world colliders
//! ([`rigid_contacts`], through the narrow phase's [`shape_contacts`]), and the force a solver
//! reports for a contact ([`ContactForce`]).

use nalgebra::UnitQuaternion;

use super::{capsule, collide, ContactPoint, Pose, RigidState, Shape};
use crate::constraint::ColliderRef;
use crate::Vec3;

mod cache;

pub use cache::ContactCache;
use cache::{KeptBody, KeptPair, KeptPoint, RECYCLE_DISTANCE};

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
    /// Per part, its pairs' runs of contacts in order ([`PairRun`]), as
    /// [`rigid_contacts_parts`] found them (a caller that changes the parts must not read them).
    pub runs: Vec<Vec<PairRun>>,
    centres: Vec<Vec3>,
    radii: Vec<f64>,
    candidates: Vec<(usize, usize)>,
    joined: Vec<(usize, usize)>,
    joined_given: Vec<(usize, usize)>,
    first: Vec<usize>,
    /// The entry being built for one body (recycling, on the calling thread).
    fresh: KeptBody,
    /// The broadphase's pairs, kept while the bodies move little.
    kept: crate::broadphase::KeptPairs,
}

/// One pair's contacts in a part of [`rigid_contacts_parts`]: `part[start..end]`, all of body
/// `a` with `b` (the narrow phase finds a pair's contacts together), recorded as each body's
/// contacts are found, while they are in the cache, for a caller that would otherwise scan the
/// contacts for them (on the 4,095-box pyramid, the scan of the cold list was 1 % of a frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairRun {
    /// The body the normals push.
    pub a: usize,
    /// What it touches.
    pub b: Other,
    /// The run's first contact in its part.
    pub start: usize,
    /// One past the run's last contact in its part.
    pub end: usize,
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
    let ContactScratch { parts: scratch, runs, centres, radii, candidates, joined, joined_given, first, fresh, kept } =
        scratch;
    // Body pairs whose bounding spheres come within `margin` (the broadphase), grouped by their
    // first body; the joined pairs, sorted for lookup.
    centres.clear();
    centres.extend(states.iter().map(|s| s.x));
    radii.clear();
    radii.extend(bodies.iter().map(|b| b.shape.bounding_radius()));
    crate::broadphase::sphere_pairs_kept(centres, radii, margin, kept, candidates);
    // (Sorted only when the joints' pairs differ from the last call's, kept in `joined_given`:
    // the sort of the 19,800 joints of the 100 × 100 joint grid ran on the calling thread each
    // step, 2 % of its two-thread frame.)
    let pairs = || scene.joints.iter().filter_map(|j| j.b.map(|b| (j.a.min(b), j.a.max(b))));
    if !pairs().eq(joined_given.iter().copied()) {
        joined_given.clear();
        joined_given.extend(pairs());
        joined.clone_from(joined_given);
        joined.sort_unstable();
    }
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
        runs.resize_with(scratch.len(), Vec::new);
        let out = (&mut scratch[0], &mut runs[0]);
        narrow.bodies(0..bodies.len(), out, cache.as_mut().map(|c| &mut c[..]), fresh);
        return 1;
    }
    use rayon::prelude::*;
    let chunks = bodies.len().div_ceil(CONTACT_CHUNK);
    scratch.resize_with(chunks.max(scratch.len()), Vec::new);
    runs.resize_with(scratch.len(), Vec::new);
    // Each task's part of the kept points (its bodies' lists), if any.
    let mut kept: Vec<Option<&mut [KeptBody]>> = match cache {
        Some(c) => c.chunks_mut(CONTACT_CHUNK).map(Some).collect(),
        None => (0..chunks).map(|_| None).collect(),
    };
    let tasks = scratch[..chunks].par_iter_mut().zip(runs[..chunks].par_iter_mut());
    tasks.zip(kept.par_iter_mut()).enumerate().for_each(|(c, (out, kept))| {
        let range = c * CONTACT_CHUNK..((c + 1) * CONTACT_CHUNK).min(bodies.len());
        narrow.bodies(range, out, kept.as_deref_mut(), &mut KeptBody::default());
    });
    chunks
}

/// Bodies per parallel task of [`rigid_contacts`]. (Each task costs more than its bodies: on the
/// 4,095-box pyramid, the narrow phase's tasks run in turn on one thread took 0.45 ms a frame
/// more than one call over all the bodies with tasks of 64 bodies, and 0.21 more with tasks of
/// 256; on two threads its contact search took 0.99 ms a frame against 1.14–1.20 with 64, in
/// alternated runs. The same contacts in the same order: only the parts they lie in change.)
const CONTACT_CHUNK: usize = 256;

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
    /// The contacts of bodies `range`, body by body, into `out.0` (emptied first), and their
    /// pairs' runs into `out.1` ([`PairRun`]); with `cache` (the kept
    /// pairs of these bodies, `cache[a - range.start]` body `a`'s), a pair within its recycling
    /// bounds keeps its points ([`ContactCache`]), and each body's entry is replaced by its pairs
    /// of this call, built in `fresh` and copied into the entry's own memory (so that each
    /// entry's memory keeps the size its body needs, and a step in steady state allocates none).
    fn bodies(
        &self,
        range: std::ops::Range<usize>,
        (out, runs): (&mut Vec<RigidContact>, &mut Vec<PairRun>),
        mut cache: Option<&mut [KeptBody]>,
        fresh: &mut KeptBody,
    ) {
        out.clear();
        runs.clear();
        let (scene, states, margin) = (self.scene, self.states, self.margin);
        let bodies = &scene.rigid;
        let mut points = Vec::new();
        let first = range.start;
        for a in range {
            let body_start = out.len();
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
                    extent: ba.shape.box_corner_radius().max(bb.box_corner_radius()),
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
            // The body's pairs' runs, from its contacts just found.
            let mut start = body_start;
            while start < out.len() {
                let b = out[start].b;
                let end = out[start..].iter().position(|c| c.b != b).map_or(out.len(), |k| start + k);
                runs.push(PairRun { a, b, start, end });
                start = end;
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
mod tests;
