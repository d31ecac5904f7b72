//! Sequential impulses on 6-DoF rigid bodies: the contact rows of the impulse tutorial, with the
//! same options as the particle rows of [`super`].
//!
//! Per step, after the shared prediction `v ← v + g·h` ([`solverlab_core::rigid`]):
//!
//! 1. Contacts at the start-of-step poses ([`rigid_contacts`]) within a speculative margin
//!    `4·slop + 2h·max(|v| + |ω|·r)`. With `contacts_per_frame` and `S` substeps, only the
//!    frame's first substep finds them, within `4·slop + (S + 1)·h·max(|v| + |ω|·r)` (the
//!    frame's travel and a substep's more), and the later substeps carry them
//!    ([`RigidSi::advance`]): each point's separation moves on with its two ends,
//!    `s = s₀ + n·(Δp_a − Δp_b)`, while its normal, arms and effective masses stay those of the
//!    frame's start (the linearisation Box2D v3's soft step and Rapier's TGS-soft keep over a
//!    frame); the last substep's impulses warm-start the next frame.
//!    With `speculative_margin = "relative"` each pair keeps its points within
//!    `4·slop + T·u` instead, `T` the same time (`2h` or `(S + 1)·h`) and `u` the pair's own
//!    closing speed ([`solverlab_core::rigid::retain_closing`]).
//! 2. Per contact point with arms `r_a = p − x_a`, `r_b = p − x_b`, normal `n` (from b to a) and
//!    two tangents `t₁, t₂`: the row `J = (n, r_a×n, −n, −r_b×n)` acting on `(v_a, ω_a, v_b, ω_b)`
//!    and its effective mass `m = 1/(J M⁻¹ Jᵀ)` with
//!    `J M⁻¹ Jᵀ = 1/m_a + 1/m_b + (r_a×n)·I_a⁻¹(r_a×n) + (r_b×n)·I_b⁻¹(r_b×n)`, `I⁻¹` the world
//!    inverse inertia. The relative normal speed is `v_n = J v`.
//! 3. Position feedback, for separation `s` (negative when penetrating): a speculative contact
//!    (`s > 0`) has bias `s/h` (it may close the gap in this step, no more). Penetration gets
//!    Baumgarte `max(β·min(0, s + slop)/h, −max_push)` in the velocity rows, or in split rows on
//!    pseudo velocities (`split_impulse`), or the soft form `max(ω/a₁·s, −max_push)` with mass
//!    and impulse scales (`feedback = soft`; the same coefficients as the particle rows, at
//!    `static_contact_hertz` for a contact with a fixed body or a world collider).
//! 4. Islands: the connected components of the movable bodies linked by body-body contacts
//!    and joints ([`solverlab_core::rigid::islands`]). With `islands` (the default) the sweeps visit the
//!    islands one after the other and each stops on its own tolerance; the rows are the same, so
//!    with no tolerance met the result is bit-identical to one system (`tests/rigid.rs`). An
//!    island with a sleeping body wakes entirely when any of its bodies is awake (a touch merges
//!    islands); sleeping islands are neither solved nor moved.
//! 5. Warm start: each point's last normal impulse (matched by body pair and narrow-phase
//!    feature id wherever the pair has moved, or else by the nearest point of the pair within
//!    `4·slop`) and each manifold's
//!    friction impulse (a world vector, projected on the new tangents) and twist impulse, times
//!    `warm_start`.
//! 6. `iterations` sweeps, island by island: first the joints' blocks ([`super::joints`]), then
//!    manifold by manifold (with `rigid_order = "colored"`, colour by colour over all awake rows
//!    at once, the joints' colours first, the large colours on all threads: [`colors`]): first the normal rows, either point by point,
//!    `Δλ = −m·s_m·(v_n + bias) − s_i·λ`, scaled by SOR `ω`, accumulated and clamped to `λ ≥ 0`,
//!    or (`block`, the default) all points of a manifold of two to four points at once (a box
//!    whose speculative margin reaches past its size can have up to eight against a plane;
//!    those go point by point) as a small complementarity
//!    problem solved by enumerating its active sets (`Visit::block_normals`; Box2D's block
//!    solver for two points, which Catto reported let Box2D stack 24 boxes at 10 iterations,
//!    here up to four). One block visit solves a lone manifold exactly; point by point, each
//!    point's impulse turns the body and disturbs the others, and the error that ten sweeps
//!    leave rocks a tall stack with a growing amplitude (tested, and the same in Bullet);
//!    then the manifold's friction at its centre (the mean of its points): the 2 × 2 tangent
//!    block solved exactly and clamped to the disk `|λₜ| ≤ μ·Σλₙ` (or, with
//!    `friction_cone = "pyramid"`, each tangent clamped to `±μ·Σλₙ` on its own), and a twist row on the
//!    relative spin about the normal clamped to `μ·r̄·Σλₙ` (`r̄` the points' mean distance from
//!    the centre). Friction at the centre, as PhysX's patch friction, depends on the total
//!    normal impulse only; per-point friction on a four-point manifold depends on how the load is
//!    split among the points, which is not unique. The friction and twist rows are left out of
//!    these sweeps with `friction_pass = "relax"` (and out of step 8's with `"biased"`). With
//!    split impulses, a sweep of the split rows on the pseudo velocities follows.
//! 7. Positions: `x ← x + h·(v + v_p)`; the rotation by the torque-free drift of `ω`
//!    ([`solverlab_core::rigid::torque_free_drift`], the gyroscopic term), then by `ω_p`; with
//!    `rotation = "explicit"` (Rapier 0.36's), the gyroscopic term acts before the solve, as one
//!    explicit step that keeps `|L|` ([`solverlab_core::rigid::gyroscopic_explicit`]), and the
//!    rotation here is the first-order quaternion update by `h·ω`
//!    ([`solverlab_core::rigid::rotate_linearised`]); with `rotation = "implicit"` (Box3D's),
//!    the same, but the gyroscopic step before the solve is one Newton iteration of its
//!    implicit form ([`solverlab_core::rigid::gyroscopic_implicit`]). Before the positions move, the speed caps
//!    `max_speed` and `max_frame_turn` (Rapier's) act on the velocities.
//!    With `position_iterations`, positions are then corrected by nonlinear Gauss-Seidel
//!    sweeps over the joints and the contacts (Box2D v2.4's position solver).
//! 8. `relax_iterations` unbiased sweeps (speculative bias only, `max(s/h, 0)`, from the
//!    separation the integrated velocities reach, `s + h·v_n`; with `relax_separation =
//!    "poses"`, from the separation at the bodies' moved poses, measured as the sweep visits the
//!    point, which with contacts carried through the frame also sets up the next substep's rows)
//!    and one restitution pass (points that approached
//!    faster than `restitution_threshold` and pushed: `v_n → −e·v_n₀`) change velocities only.
//! 9. Sleeping (`sleep_time > 0`): an island whose bodies all stay under `sleep_speed` and
//!    `sleep_spin` for `sleep_time` seconds sleeps, velocities zeroed; its contacts keep their
//!    last impulses, so the forces it reports stay those that hold it.
//!
//! The forces reported per point ([`ContactForce`]) are the normal impulse over `h` and the
//! manifold's friction shared among its points in proportion to their normal impulses.
//!
//! Residual: the same two numbers as the particle rows (see [`super`]): the common violation
//! `max(0, −(s + h·(v_n + v_pn)))` over the points (the linearised penetration at the end of the
//! step), and the velocity residual `|Δλ|/(m·s_m)` (m/s).

use nalgebra::{Matrix3, Matrix4};
use solverlab_core::rigid::{
    islands, rotate, rotate_linearised, torque_free_drift, ContactForce, JointForce, JointFrame, Other, RigidContact,
    RigidState,
};
use solverlab_core::{Scene, Vec3};

use super::joints::{JointRows, Pseudo};

mod advance;
mod blocks;
mod coloring;
mod colors;
mod finish;
mod lanes;
mod par;
mod prepare;
mod sweep;
mod velocities;
mod warm_map;

use rayon::prelude::*;

pub(super) use par::{fill, par_min};
use par::{for_each_with_points, with_points};

use super::rows::{soft, Pass};
use super::{Feedback, FrictionCone, PgsConfig, RelaxSeparation, Rotation, StaticColors};
use blocks::pseudo_inverse;
use warm_map::{matched_impulse, WarmMap, WarmPair};

/// One prepared contact point. (The fields a sweep reads come first, in declaration order,
/// so that a visit touches few cache lines; what only the other passes read lies apart, in
/// [`Carried`]: 296 bytes, 392 before.)
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct Point {
    a: usize,
    b: Option<usize>,
    n: Vec3,
    /// The row's Jacobian and its image under the inverse mass, for the sweeps: the angular
    /// parts `r_a×n`, `r_b×n`, those times the world inverse inertia, and the inverse masses
    /// (`v_n = n·(v_a − v_b) + (r_a×n)·ω_a − (r_b×n)·ω_b`; an impulse `d` changes `ω_a` by
    /// `d·I_a⁻¹(r_a×n)`).
    row: JacobianRow,
    mn: f64,
    bias: f64,
    mass_scale: f64,
    impulse_scale: f64,
    /// `1/(mn·mass_scale)` and `1/mn` (0 when `mn` is 0): the sweeps' residual of the biased
    /// and relax passes in m/s is an impulse change times these, multiplied rather than
    /// divided in the hot loop.
    inv_mn: [f64; 2],
    ln: f64,
    /// The relax pass's bias (m/s): `max(s_end/h, 0)` of the separation `s_end` the
    /// integrated velocities reach ([`RigidSi::end_separation`]), kept divided by the step.
    relax_bias: f64,
    /// Separation at the start of the step (m).
    s: f64,
    ra: Vec3,
    rb: Vec3,
    /// Split-row bias (m/s), 0 when the point needs no split correction.
    split_bias: f64,
    lp: f64,
}

/// What a point keeps for the passes that are not sweeps, beside it in `RigidSi::carried` (a
/// sweep streams the points it visits through the caches whole: on the 10,000 spheres the
/// sweeps miss the 512 kB second-level cache on almost every line they read).
#[derive(Clone, Copy, Debug, Default)]
struct Carried {
    /// Separation when the contact was found, at the start of the frame (m); the same as `s`
    /// unless contacts are carried through substeps (`contacts_per_frame`).
    s0: f64,
    /// Restitution, and the normal speed before the step (m/s, read by the restitution pass).
    e: f64,
    vn0: f64,
    /// The contact point at the start of the step, and its arms in each body's frame (for
    /// later substeps and the position pass, which follow the bodies' motion).
    p0: Vec3,
    la: Vec3,
    lb: Vec3,
}

impl Carried {
    /// Point `p`'s separation at the bodies' poses `pose(k)`: its separation at the frame's
    /// start moved on by how far the bodies carried its two ends, `s = s₀ + n·(Δp_a − Δp_b)`
    /// (the lanes' [`lanes`] `SidePoses::separations`, operation for operation).
    #[inline(always)]
    fn separation(&self, p: &Point, pose: impl Fn(usize) -> lanes::Pose) -> f64 {
        let (xa, qa) = pose(p.a);
        let moved_a = xa + qa.transform_vector(&self.la) - self.p0;
        let moved_b = p.b.map_or(Vec3::zeros(), |k| {
            let (xb, qb) = pose(k);
            xb + qb.transform_vector(&self.lb) - self.p0
        });
        self.s0 + p.n.dot(&(moved_a - moved_b))
    }
}

impl Point {
    /// Sets [`Point::inv_mn`] from `mn` and `mass_scale`.
    fn set_inv_mn(&mut self) {
        self.inv_mn = [inverse(self.mn * self.mass_scale), inverse(self.mn)];
    }

    /// [`Point::set_inv_mn`] after a change of `mass_scale` only (`mn` unchanged).
    fn set_inv_mn_scaled(&mut self) {
        self.inv_mn[0] = inverse(self.mn * self.mass_scale);
    }
}

/// `1/k`, or 0 for `k ≤ 0` (a row without mass).
fn inverse(k: f64) -> f64 {
    if k > 0.0 {
        1.0 / k
    } else {
        0.0
    }
}

/// A contact row's Jacobian and its image under `M⁻¹`, prepared once and read by each sweep.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct JacobianRow {
    ja: Vec3,
    jb: Vec3,
    ga: Vec3,
    gb: Vec3,
    ima: f64,
    imb: f64,
}

impl JacobianRow {
    /// `d₁·K·d₂` between this row (along `d1`) and `other` (along `d2`), both at the same arms
    /// of the same bodies: the change of this row's speed per unit impulse of `other`.
    fn coupling(&self, other: &JacobianRow, d1: &Vec3, d2: &Vec3) -> f64 {
        let dd = d1.dot(d2);
        // (Without a second body its terms are zeros, and adding them changes nothing.)
        self.ima * dd + self.ja.dot(&other.ga) + (self.imb * dd + self.jb.dot(&other.gb))
    }

    /// The effective mass `1/(J M⁻¹ Jᵀ)` of the row along the unit `d` it was built for (0 for
    /// a row without mass).
    fn effective_mass(&self, d: &Vec3) -> f64 {
        let k = self.coupling(self, d, d);
        if k > 0.0 {
            1.0 / k
        } else {
            0.0
        }
    }
}

/// The friction rows of one manifold (the consecutive points of one pair), at its centre. (The
/// fields a sweep reads come first, in declaration order, so that a visit reads a few
/// consecutive cache lines; before, the block solve's 256 bytes lay among them and the pair flag
/// at the end of the 944 bytes. The block solve's matrices now lie apart, in
/// `RigidSi::couplings`, and the velocities a parallel visit kept until written back were
/// moved out too: 584 bytes.)
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct Manifold {
    /// The manifold's points are `points[start..end]`.
    start: usize,
    end: usize,
    /// Friction coefficient.
    mu: f64,
    /// Pair solve (`block_pairs`): `paired` when the manifold's normals go in pairs, the pairs
    /// of points (0, 1) and (2, 3).
    paired: bool,
    /// Effective mass of the twist row (relative spin about `n`).
    m_twist: f64,
    /// Mean distance of the points from the centre (m): the twist limit is `μ·radius·Σλₙ`.
    radius: f64,
    /// The tangents and the (mean) normal.
    t1: Vec3,
    t2: Vec3,
    n: Vec3,
    /// Inverse of the 2 × 2 tangent block `[tᵢ·K·tⱼ]`, row-major (its off-diagonal couples the
    /// two tangent rows through the rotation).
    mt: [f64; 4],
    /// The two tangent rows' Jacobians at the centre, and the twist row's images `I⁻¹n`.
    rows_t: [JacobianRow; 2],
    twist_a: Vec3,
    twist_b: Vec3,
    lt1: f64,
    lt2: f64,
    l_twist: f64,
    pairs: [Pair; 2],
    /// Arms of the centre (the mean of the points) from each body's centre of mass.
    ra: Vec3,
    rb: Vec3,
    /// The manifold's place in `RigidSi::manifolds`, and so of its block in
    /// `RigidSi::couplings` (`block`).
    index: usize,
    /// The island of the manifold's movable body (its index, until the islands are built).
    island: usize,
    /// The manifold's movable body.
    body: usize,
}

/// Block solve (`block`) of a manifold: the normal coupling matrix `A[i][j]` of its points (the
/// change of point i's normal speed per unit impulse at point j) and the pseudo-inverse of the
/// whole block, both row-major 4 × 4 (only the manifold's points are used). Kept apart from
/// the manifolds, in `RigidSi::couplings`: a sweep without `block` never reads these 256 bytes,
/// and a sweep streams the manifolds it visits through the caches whole.
#[derive(Clone, Copy, Debug, Default)]
struct Coupling {
    a: [f64; 16],
    pinv: [f64; 16],
}

/// Two normal rows of a manifold solved together (`block_pairs`): their `K = J M⁻¹ Jᵀ`.
#[derive(Clone, Copy, Debug, Default)]
struct Pair {
    k11: f64,
    k12: f64,
    k22: f64,
    /// Whether the pair is solved as a block: both rows have mass and `det K > 0.01·K₁₁K₂₂`.
    block: bool,
}

/// A group of rows iterated together: one island, or everything.
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    m: (usize, usize),
    j: (usize, usize),
    /// Its colours, `colors[colors.0..colors.1]`; none unless `rigid_order = "colored"`.
    colors: (usize, usize),
}

/// The rigid part of the PGS solver: per-step contacts and the impulses kept for warm starting.
#[derive(Default)]
pub(super) struct RigidSi {
    /// Per joint, whether it holds this step (a joint leaves with a removed body).
    active: Vec<bool>,
    contacts: Vec<RigidContact>,
    /// Whether any contact of this frame bounces (restitution above 0).
    bouncy: bool,
    /// The contact search's buffers, kept for their memory.
    contact_scratch: solverlab_core::rigid::ContactScratch,
    /// The sort by colour's lists, kept for their memory.
    sort_scratch: coloring::SortScratch,
    /// The contact pairs kept from frame to frame (`contact_recycling`).
    contact_cache: solverlab_core::rigid::ContactCache,
    points: Vec<Point>,
    /// Per point, what the passes other than the sweeps read ([`Carried`]).
    carried: Vec<Carried>,
    manifolds: Vec<Manifold>,
    /// Per manifold, its block ([`Coupling`]) with `block`; empty without (the sweeps solve a
    /// manifold's normals as a block when it is not empty: [`sweep::Visit::block`]).
    couplings: Vec<Coupling>,
    /// Manifold indices of the awake islands, island by island (or all in one group).
    order: Vec<usize>,
    /// Joint indices of the awake islands, in the same grouping.
    joint_order: Vec<usize>,
    /// Per joint, its place in `joint_order` (`usize::MAX` for a joint the sweeps leave alone).
    joint_slot: Vec<usize>,
    /// Whether the coloured sweeps use the lanes (`lanes`): the batches of manifolds, and
    /// ball joints two at a time.
    lanes: bool,
    /// Per group the iterations stop on separately: `order[m.0..m.1]` and `joint_order[j.0..j.1]`.
    groups: Vec<Group>,
    /// The colours of the groups, group after group (`rigid_order = "colored"`).
    colors: Vec<colors::ColorSpan>,
    /// The joints' frames in their bodies (from the scene's initial poses, by joint index), the
    /// rows of this step of the awake joints, in the order the sweeps visit them (`joints[o]`
    /// are the rows of joint `joint_order[o]`, so that a colour's joints lie together in
    /// memory), and the joints' impulses of the last step (by joint index).
    frames: Vec<JointFrame>,
    joints: Vec<JointRows>,
    warm_joints: Vec<Option<(nalgebra::Vector6<f64>, u8)>>,
    /// Per group: whether it met the tolerance (its rows are then left alone).
    done: Vec<bool>,
    /// Per group: its last violation (m).
    group_violation: Vec<f64>,
    /// Per group: whether its points' `relax_bias` were set by [`RigidSi::violation`] after the
    /// group's last sweep (then [`RigidSi::finish`] need not compute them again).
    fresh_end: Vec<bool>,
    /// Each body's island, and per island whether it is awake.
    island: Vec<usize>,
    awake: Vec<bool>,
    inv_m: Vec<f64>,
    inv_i: Vec<Matrix3<f64>>,
    /// The pseudo velocities of the split rows (zero at the start of each step), and whether a
    /// split sweep has run since they were zeroed (if not, they are zero and not read).
    vp: Vec<Vec3>,
    wp: Vec<Vec3>,
    pseudo: bool,
    /// Last step's impulses per body pair.
    warm: WarmMap,
    /// The length of the step whose impulses the points and manifolds hold, once it has
    /// finished (none from the start of the next step's contacts): the forces reported.
    forces_h: Option<f64>,
    /// The friction bound of this step (from the settings).
    cone: FrictionCone,
    /// The substeps of the frame whose first substep found the contacts, when they are carried
    /// through it (`contacts_per_frame`); 1 when every step finds its own.
    carried_for: u32,
    /// Whether this step is the last substep of its frame (set by the caller each step).
    pub(super) last_substep: bool,
    /// The frame's length (s): the step times its substeps (set by the caller each step).
    pub(super) frame_h: f64,
    /// The bodies' poses after the positions moved, for a relax sweep that measures its
    /// separations there (`relax_separation = "poses"`), kept for their memory; and, during
    /// that sweep, its step and the next substep's soft rows (see [`sweep::AtPoses`]).
    poses: Vec<lanes::Pose>,
    relax_at_poses: Option<(f64, Option<(lanes::Softness, f64)>)>,
    /// Whether the batches already hold this substep's start separations and soft rows, set
    /// up by the last substep's relax sweep (then [`RigidSi::advance_batches`] leaves them).
    batches_ahead: bool,
    /// The largest penetration at the poses the last relax sweep measured (m) of the points
    /// outside the batches (each batch keeps its own, [`lanes::BatchState::end_worst`]; with
    /// a restitution pass, theirs too).
    end_worst: f64,
    /// The bodies' velocities during a coloured pass (see [`velocities::BodyVel`]), kept for
    /// their memory.
    compact: Vec<velocities::BodyVel>,
    /// The bodies' velocities during a coloured pass on all threads (see
    /// [`velocities::SharedVel`]), kept for their memory.
    shared: Vec<velocities::SharedVel>,
    /// The coloured sweeps' batches of manifolds on lanes ([`lanes`]), colour by colour, what
    /// their rows change through a frame, and what the passes between the sweeps read of their
    /// points.
    batches: Vec<lanes::Batch>,
    /// Each batch's first place in `order` (its [`lanes::Batch::span`]'s), apart from the
    /// batches: a pass that cuts a colour into chunks finds each chunk's batches here without
    /// reading a cache line of every batch on the calling thread (1.2–1.4 % of the 4,095-box
    /// pyramid's two-thread frame, each pass).
    batch_at: Vec<usize>,
    batch_state: Vec<lanes::BatchState>,
    batch_carried: Vec<lanes::BatchCarried>,
    batch_arms: Vec<lanes::BatchArms>,
    /// Per point, whether its manifold is in a batch, which then holds what the point changes
    /// through the frame (the point's own fields of it are stale until
    /// [`RigidSi::store_batches`]).
    batched: Vec<bool>,
    /// How many of them are batched.
    batched_points: usize,
    /// Whether this frame's batches were built on the lanes from the contacts
    /// ([`RigidSi::batches_from_contacts`]): their points' and manifolds' rows are then not
    /// written until [`RigidSi::store_full`].
    from_contacts: bool,
    /// The places of the last build's batches on the lanes (their first manifold in `order`,
    /// and each lane's points), and whether each was built ([`RigidSi::batches_from_contacts`]).
    batch_places: Vec<(usize, [(usize, usize); lanes::W])>,
    batch_built: Vec<bool>,
    /// Tests: build the batches from the rows only.
    #[cfg(test)]
    lane_build_off: bool,
    /// Tests: leave the next substep's rows to [`RigidSi::advance_batches`] (no relax sweep at
    /// the poses sets them up).
    #[cfg(test)]
    ahead_off: bool,
    /// Tests: how many relax sweeps set up the next substep's rows.
    #[cfg(test)]
    ahead_count: usize,
}

/// Which velocities an impulse reads and changes: the bodies' own, or the pseudo velocities of
/// the split rows (`split_impulse`), which move the positions in this step only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Velocity {
    /// The bodies' velocities `v`, `ω`.
    Real,
    /// The pseudo velocities `v_p`, `ω_p`.
    Pseudo,
}

/// What one sweep measured: the largest and the summed squared residuals, the row count and the
/// squared impulse changes.
type SweepStats = (f64, f64, usize, f64);

impl RigidSi {
    pub(super) fn reset(&mut self) {
        self.carried_for = 0;
        self.frames.clear();
        self.warm_joints.clear();
        self.warm.clear();
        self.contact_cache.clear();
        self.sort_scratch.forget();
        self.forces_h = None;
    }

    /// The contact forces of the last finished step into `out` (none before one has finished):
    /// each point's normal impulse over the step, and its manifold's friction impulse shared
    /// among its points by their normal impulses, point by point (each finds its manifold; the
    /// same list on any number of threads). The normal impulses are read from those the step
    /// kept for the next one's warm start (by contact, in the same order), which hold the
    /// batched points' too ([`lanes`]).
    pub(super) fn forces(&self, out: &mut Vec<ContactForce>) {
        out.clear();
        let Some(h) = self.forces_h else { return };
        let (contacts, kept, manifolds) = (&self.contacts, &self.warm.points, &self.manifolds);
        debug_assert_eq!(kept.len(), contacts.len(), "an impulse kept per contact");
        kept.par_iter()
            .enumerate()
            .with_min_len(par_min())
            .map(|(k, &(_, _, ln))| {
                let m = &manifolds[manifolds.partition_point(|m| m.end <= k)];
                let friction = (m.t1 * m.lt1 + m.t2 * m.lt2).norm();
                let total: f64 = kept[m.start..m.end].iter().map(|p| p.2).sum();
                let share = if total > 0.0 { ln / total } else { 1.0 / (m.end - m.start) as f64 };
                ContactForce { contact: contacts[k], normal_force: ln / h, tangent_force: friction * share / h }
            })
            .collect_into_vec(out);
    }

    /// The joint forces of the last finished step into `out`, by joint index (none before one
    /// has finished): each awake joint's accumulated impulses on body `a` over the step.
    pub(super) fn joint_forces(&self, out: &mut Vec<JointForce>) {
        out.clear();
        let Some(h) = self.forces_h else { return };
        let rows = self.joint_order.par_iter().zip(self.joints.par_iter()).with_min_len(par_min() / 4);
        rows.map(|(&k, rows)| {
            let (linear, angular) = rows.impulse_on_a();
            JointForce { joint: k, force: linear / h, torque: angular / h }
        })
        .collect_into_vec(out);
        out.sort_unstable_by_key(|f| f.joint);
    }

    #[inline(always)]
    fn vrel(&self, st: &[RigidState], p: &Point, which: Velocity) -> Vec3 {
        self.vrel_at(st, p.a, p.b, &p.ra, &p.rb, which)
    }

    /// The velocity of the point with arms `ra`, `rb` on body `a` relative to `b`.
    #[inline(always)]
    fn vrel_at(&self, st: &[RigidState], a: usize, b: Option<usize>, ra: &Vec3, rb: &Vec3, which: Velocity) -> Vec3 {
        let v = |k: usize| match which {
            Velocity::Pseudo => (self.vp[k], self.wp[k]),
            Velocity::Real => (st[k].v, st[k].w),
        };
        let (va, wa) = v(a);
        let mut rel = va + wa.cross(ra);
        if let Some(b) = b {
            let (vb, wb) = v(b);
            rel -= vb + wb.cross(rb);
        }
        rel
    }

    fn apply(&mut self, st: &mut [RigidState], p: &Point, impulse: Vec3, which: Velocity) {
        self.apply_at(st, p.a, p.b, &p.ra, &p.rb, impulse, Vec3::zeros(), which);
    }

    /// Applies `impulse` (N·s) at the point with arms `ra`, `rb` and an angular impulse `spin`
    /// (N·m·s) to `a`, and their opposites to `b`.
    #[allow(clippy::too_many_arguments)]
    fn apply_at(
        &mut self,
        st: &mut [RigidState],
        a: usize,
        b: Option<usize>,
        ra: &Vec3,
        rb: &Vec3,
        impulse: Vec3,
        spin: Vec3,
        which: Velocity,
    ) {
        let dva = impulse * self.inv_m[a];
        let dwa = self.inv_i[a] * (ra.cross(&impulse) + spin);
        match which {
            Velocity::Pseudo => {
                self.vp[a] += dva;
                self.wp[a] += dwa;
            }
            Velocity::Real => {
                st[a].v += dva;
                st[a].w += dwa;
            }
        }
        if let Some(b) = b {
            let dvb = impulse * self.inv_m[b];
            let dwb = self.inv_i[b] * (rb.cross(&impulse) + spin);
            match which {
                Velocity::Pseudo => {
                    self.vp[b] -= dvb;
                    self.wp[b] -= dwb;
                }
                Velocity::Real => {
                    st[b].v -= dvb;
                    st[b].w -= dwb;
                }
            }
        }
    }

    /// The Jacobian of the row along `d` at arms `ra`, `rb` between `a` and `b`
    /// ([`JacobianRow`]), with this step's inverse masses.
    fn jacobian_row(&self, a: usize, b: Option<usize>, ra: &Vec3, rb: &Vec3, d: &Vec3) -> JacobianRow {
        let ja = ra.cross(d);
        let mut row = JacobianRow { ja, ga: self.inv_i[a] * ja, ima: self.inv_m[a], ..JacobianRow::default() };
        if let Some(b) = b {
            row.jb = rb.cross(d);
            row.gb = self.inv_i[b] * row.jb;
            row.imb = self.inv_m[b];
        }
        row
    }

    /// `d₁·K·d₂` between two points of one pair: the change of the normal speed at the point
    /// with arms `ra1, rb1` along `n1` per unit impulse along `n2` at the point with arms
    /// `ra2, rb2`.
    #[allow(clippy::too_many_arguments)]
    fn cross_coupling(
        &self,
        a: usize,
        b: Option<usize>,
        ra1: &Vec3,
        rb1: &Vec3,
        n1: &Vec3,
        ra2: &Vec3,
        rb2: &Vec3,
        n2: &Vec3,
    ) -> f64 {
        let mut k = self.inv_m[a] * n1.dot(n2) + ra1.cross(n1).dot(&(self.inv_i[a] * ra2.cross(n2)));
        if let Some(b) = b {
            k += self.inv_m[b] * n1.dot(n2) + rb1.cross(n1).dot(&(self.inv_i[b] * rb2.cross(n2)));
        }
        k
    }

    /// Whether the contacts of this frame's first substep are carried through a frame of
    /// `substeps` substeps.
    pub(super) fn carried(&self, substeps: u32) -> bool {
        substeps > 1 && self.carried_for == substeps
    }

    /// The number of groups the iterations run over.
    pub(super) fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// Whether group `g` has met its tolerance.
    pub(super) fn group_done(&self, g: usize) -> bool {
        self.done[g]
    }

    /// Marks group `g` as having met its tolerance.
    pub(super) fn set_group_done(&mut self, g: usize) {
        self.done[g] = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows a sweep streams stay as small as they were made: a point of 296 bytes and a
    /// manifold of 584 (392 and 944 while the block matrices, the kept velocities and the carried
    /// fields lay in them; on the 10,000 spheres the sweeps miss the second-level cache on almost
    /// every line); and on the lanes a batch of 2,048 (2,400 while each of its rows kept the
    /// bodies' inverse masses and each pair the relax pass's block solve), its state of 768 and
    /// its carried fields of 640 (1,120 with the world arms, 480, now apart).
    #[test]
    fn the_rows_a_sweep_streams_keep_their_size() {
        assert_eq!(std::mem::size_of::<Point>(), 296);
        assert_eq!(std::mem::size_of::<Manifold>(), 584);
        assert_eq!(std::mem::size_of::<Coupling>(), 256);
        assert_eq!(std::mem::size_of::<Carried>(), 96);
        assert_eq!(std::mem::size_of::<lanes::Batch>(), 2048);
        assert_eq!(std::mem::size_of::<lanes::BatchState>(), 768);
        assert_eq!(std::mem::size_of::<lanes::BatchCarried>(), 640);
        assert_eq!(std::mem::size_of::<lanes::BatchArms>(), 480);
    }
}
