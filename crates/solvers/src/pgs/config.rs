//! The impulse family's settings, their ranges, and its presets.

use serde::{Deserialize, Serialize};

use super::PgsSolver;
use crate::common::order::Order;
pub use crate::common::SpeculativeMargin;
use crate::ConfigError;

/// How position error feeds back into the velocity solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    /// Baumgarte: a fraction `β` of the error per step, as a velocity bias.
    Baumgarte,
    /// Soft constraints given as a frequency and a damping ratio (Box2D v3, Rapier).
    Soft,
}

/// How rigid bodies turn in a step: the gyroscopic term and the orientation update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rotation {
    /// After the solve, the torque-free motion over the step (Euler's equations and the
    /// orientation together) by one classical Runge–Kutta step
    /// ([`solverlab_core::rigid::torque_free_drift`]).
    #[default]
    Rk4,
    /// Rapier 0.36's: before the solve, one explicit step of the gyroscopic term with the angular
    /// momentum's magnitude kept ([`solverlab_core::rigid::gyroscopic_explicit`]); after it,
    /// the orientation turned by the first-order quaternion update `normalise((1, h·ω/2) ⊗ q)`
    /// ([`solverlab_core::rigid::rotate_linearised`]).
    Explicit,
    /// Box3D's: before the solve, one implicit step of the gyroscopic term by one Newton
    /// iteration ([`solverlab_core::rigid::gyroscopic_implicit`]); after it, the same
    /// first-order quaternion update as `Explicit` (Box3D's `b3IntegrateRotation`).
    Implicit,
}

/// How the two tangent impulses of a contact are bounded by `μ·λₙ`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrictionCone {
    /// The disk `|λₜ| ≤ μ·λₙ`: isotropic Coulomb friction.
    #[default]
    Disk,
    /// The square `|λₜ₁|, |λₜ₂| ≤ μ·λₙ` (each tangent row clamped on its own, as in ODE and
    /// Bullet): up to √2 more friction along the diagonals of the tangent basis.
    Pyramid,
}

/// Where a rigid contact's relax sweep measures the separation that its speculative bias lets
/// close, `max(s/h, 0)`: the relax sweep keeps a separated point from closing past contact by
/// the substep's end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelaxSeparation {
    /// Linearised before the positions move, from the velocities the biased sweep left:
    /// `s + h·n·v_rel`, `s` the substep's start separation, measured by the stopping test.
    #[default]
    Linearised,
    /// At the bodies' poses after the positions moved, as the relax sweep visits the point:
    /// `s₀ + n·(Δp_a − Δp_b)` from the frame's arms turned by the bodies' current orientations,
    /// as Rapier 0.36 updates its unbiased rows from the current poses in its relax pass
    /// (`update_rhs_wo_bias`) and Box2D v3 measures the current separation in every pass
    /// (`b2SolveContact`). With contacts carried through the frame, that is the next
    /// substep's start separation: the relax sweep sets up the next substep's soft rows on the
    /// lanes as it goes (the update `contacts_per_frame` makes otherwise makes in its own
    /// pass). Needs `feedback = "soft"`.
    Poses,
}

/// Which colours a coloured sweep (`rigid_order = "colored"`) gives the manifolds of a body with
/// a fixed body or the world (a static pair), and so where they come in each sweep. The
/// manifolds of two movable bodies take the lowest colour neither body has yet in every rule;
/// the sweeps visit the colours in increasing order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StaticColors {
    /// The lowest free colour, as any other pair.
    #[default]
    Lowest,
    /// The lowest free colour but the first (Box2D v3's constraint graph, `b2AddContactToGraph`:
    /// no static contacts in colour 0).
    AfterFirst,
    /// The highest free colour of a band of the last 8 of the 64 colours, which the pairs of
    /// two movable bodies never take, so that a sweep visits every static pair after every
    /// other (Rapier 0.36's solver graph, `assign_pair_solver_color`: its last 8 of 128
    /// colours, "giving fixed geometry the final say each sweep and reducing push-through of
    /// piled bodies"). A body with more than 8 static pairs sends the rest to the overflow
    /// colour, visited last.
    Last,
}

/// In which sweeps of a step the friction rows of contacts (the tangent rows, and the twist row
/// of a rigid manifold) are solved; the normal rows are solved in every sweep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrictionPass {
    /// In the biased sweeps and in the relax sweeps.
    #[default]
    Both,
    /// In the biased sweeps only.
    Biased,
    /// In the relax sweeps only: friction never reacts to the velocities the position feedback
    /// adds. With `relax_iterations = 0` there is no relax sweep, and friction is solved in the
    /// biased sweeps instead (as Rapier 0.36 does with `friction_in_bias_pass = false` and no
    /// stabilisation iteration).
    Relax,
}

impl FrictionPass {
    /// Whether friction is solved `(in the biased sweeps, in the relax sweeps)` when a step has
    /// `relax_iterations` relax sweeps.
    pub fn sweeps(self, relax_iterations: u32) -> (bool, bool) {
        match self {
            FrictionPass::Both => (true, true),
            FrictionPass::Biased => (true, false),
            FrictionPass::Relax if relax_iterations == 0 => (true, false),
            FrictionPass::Relax => (false, true),
        }
    }
}

/// Settings of the PGS solver; every field has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PgsConfig {
    /// Biased sweeps per step, at least 1 (default: 10).
    pub iterations: u32,
    /// Unbiased relax sweeps after the position update, Box2D's soft step (default: 0).
    pub relax_iterations: u32,
    /// Stop the biased sweeps when the common violation (see `# Residual`) is at most this (m);
    /// 0 disables (default: 1e-9).
    pub tolerance: f64,
    /// Also stop when the own (velocity) residual is at most this (m/s); 0 disables (default: 0).
    pub velocity_tolerance: f64,
    /// SOR factor ω in (0, 2) applied to each impulse change (default: 1).
    pub omega: f64,
    /// Visiting order of the particle rows (default: `natural`).
    pub order: Order,
    /// Visiting order of the rigid rows: `natural` (joints, then manifolds, island by island,
    /// in the order they were found) or `colored` (a graph colouring of the joints, then one of
    /// the manifolds, over all awake rows at once; the large colours run on all threads, with the
    /// same numbers on any number of threads; a small colour's manifolds are visited two at a
    /// time on lanes (`lanes`), or four at a time interleaved; see `pgs::rigid::colors`) (default: `natural`; `colored` in
    /// `tgs-soft` and `soft-step`, the orders Rapier 0.36 and Box2D v3 visit their rows in; on
    /// the 10 × 10 joint grid Rapier and `tgs-soft` agree closely in it, the largest gap 4.98 cm
    /// in both, 4.6 cm in the natural order; on one thread the coloured order costs some 6 %
    /// more instructions on the 210-box pyramid (measured for `tgs-soft`; `soft-step`'s frame on
    /// the lanes takes 0.87 times its natural order's), and about a quarter more time on 10,000 spheres,
    /// whose one-point manifolds never go on the lanes; on two threads it is the faster,
    /// `docs/benchmarks.md`).
    pub rigid_order: Order,
    /// Rigid bodies, coloured sweeps (`rigid_order = "colored"`): solve the manifolds of two or
    /// four points (their normals in `block_pairs`, or point after point without) of a colour
    /// small enough for the calling thread two at a time, side by side in
    /// the lanes of packed `f64` arithmetic, from rows laid out lane by lane once a frame
    /// (`pgs::rigid::lanes`, as Rapier solves its contacts in lanes), the ball joints of every
    /// colour two at a time on the same lanes, and the ball joints' rows prepared two at a time
    /// in any order. The numbers are the same bit for bit as with
    /// `false`, which visits them one by one (kept to time the lanes and to check that they
    /// change nothing) (default: true).
    pub lanes: bool,
    /// Seed of the `shuffled` order (default: 0).
    pub seed: u64,
    /// Fraction in [0, 1] of the previous step's impulses to start from (default: 1; Bullet 0.85).
    pub warm_start: f64,
    /// `baumgarte` or `soft` (default: `baumgarte`).
    pub feedback: Feedback,
    /// Baumgarte factor β in [0, 1]: the fraction of the position error removed per step
    /// (default: 0.2, Bullet's ERP). The position-level passes (split rows, position sweeps)
    /// correct rigid sticks and joints fully, as Box2D v2.4's position solver does joints.
    pub baumgarte: f64,
    /// Solve the Baumgarte correction on pseudo velocities that never enter the momentum (split
    /// impulse), instead of in the velocity rows (default: true; see the module docs).
    pub split_impulse: bool,
    /// Penetration allowed without correction (m) (default: 0.005).
    pub slop: f64,
    /// Soft contacts: stiffness frequency (Hz) (default: 30); capped at a quarter of the
    /// (sub)step rate, as Box2D v3 does (a stiffer spring than the step can follow is unstable).
    pub contact_hertz: f64,
    /// Soft contacts: damping ratio (default: 10).
    pub contact_damping_ratio: f64,
    /// Soft contacts of a rigid body with a fixed body or a world collider (floor, walls):
    /// stiffness frequency (Hz), capped as `contact_hertz`; the damping ratio is
    /// `contact_damping_ratio`. 0 uses `contact_hertz` (default: 0; `tgs-soft`: 60, Rapier 0.36's
    /// `static_contact_softness`). Particle contacts always use `contact_hertz`.
    pub static_contact_hertz: f64,
    /// Rigid bodies: solve the normal rows of each manifold (2 to 4 points) together as one
    /// small complementarity problem, by enumerating which points push (Box2D's block solver,
    /// there for 2-point manifolds), instead of point by point; the biased sweeps of soft rows
    /// stay point by point (default: true; false in `pgs-bullet`, `soft-step` and `tgs-soft`:
    /// Bullet and Box2D v3 go point by point, and Rapier 0.36's blocks are pairs of points with
    /// their softness in the block, `block_pairs`; `block = false` is the impulse tutorial's
    /// rule).
    pub block: bool,
    /// Rigid bodies: solve the normal rows of each manifold of two to four points two at a
    /// time, each pair as a 2 × 2 complementarity problem with the rows' softness in it (Rapier
    /// 0.36's block solver, a default feature of its crate): a four-point manifold's two
    /// diagonals (each point paired with the one farthest from it), a three-point manifold's
    /// farthest pair and then its third point alone. A pair's 2 × 2 matrix `K'` is the rows'
    /// coupling `K` with each diagonal entry divided by the row's mass scale (1 in the relax
    /// sweeps); of the four candidates, both pushing, only the first, only the second or neither,
    /// the first that solves the problem wins, the impulses kept when none does (as Rapier). A pair
    /// whose `det K ≤ 0.01·K₁₁K₂₂` (nearly parallel rows) goes point by point. Cannot be
    /// combined with `block` (default: false; true in `tgs-soft`).
    pub block_pairs: bool,
    /// Rigid bodies: the friction bound, `disk` or `pyramid` (default: `disk`).
    pub friction_cone: FrictionCone,
    /// Which sweeps solve the friction rows, of particle and rigid contacts: `both` the biased
    /// and the relax sweeps, `biased` or `relax` only ([`FrictionPass`]; `relax` with no relax
    /// sweep falls back to the biased ones) (default: `both`; `tgs-soft`: `relax`, as Rapier
    /// 0.36 by default).
    pub friction_pass: FrictionPass,
    /// Rigid bodies, coloured sweeps: the colours of the manifolds against a fixed body or the
    /// world ([`StaticColors`]: `lowest`, `after_first` or `last`) (default: `lowest`;
    /// `soft-step`: `after_first`, Box2D v3's; `tgs-soft`: `last`, Rapier 0.36's: on the
    /// 4,095-box pyramid its largest penetration over 20 frames is 18.0 mm, against 21.5 with
    /// `lowest` and Rapier's 17.2).
    pub static_colors: StaticColors,
    /// Rigid bodies, coloured sweeps: a pair found again keeps the colour it had in the last
    /// colouring, when neither body has taken that colour for another pair this time; only
    /// the new pairs (and those whose colour is taken) are coloured greedily, after the kept
    /// ones. Rapier 0.36 and Box2D v3 keep each pair's colour from when it begins touching to
    /// when it stops. With `false`, every colouring whose pairs changed colours them all
    /// afresh (default: false; true in `tgs-soft` and `soft-step`. Under `tgs-soft`, over four
    /// 1 µm jitters of two lattices of the 10,000 spheres, the deepest pair was 26.2–27.4 and
    /// 25.5–27.6 mm, against 28.6–32.2 and 27.4–30.7 afresh and Rapier's 25.5–26.1 and
    /// 23.2–24.0; under `soft-step`, over eight lattice seeds, 23.7–27.8 mm against 25.3–35.7
    /// afresh and Rapier box2d's 23.9–31.2).
    pub keep_colors: bool,
    /// Rigid bodies: where the relax sweeps measure a contact's separation
    /// ([`RelaxSeparation`]: `linearised` or `poses`) (default: `linearised`; `poses` in
    /// `tgs-soft` and `soft-step`, as Rapier 0.36 and Box2D v3 measure it). With `poses` the
    /// stopping test after the last iteration a step allows is made from the relax sweep's
    /// separations (when the violation is not reported), not in a pass of its own.
    pub relax_separation: RelaxSeparation,
    /// Soft joints (equality rows): stiffness frequency (Hz) (default: 60); capped at half the
    /// (sub)step rate (Box2D v3: twice the capped contact frequency); rigid joints only with
    /// `cap_rigid_joint_hertz`.
    pub joint_hertz: f64,
    /// Cap `joint_hertz` for rigid bodies' joints at half the (sub)step rate, Box2D v3's rule
    /// (default: true; false in `tgs-soft`: Rapier 0.36 caps no joint frequency, and its joints
    /// default to 10⁶ Hz, so stiff that each substep's bias removes the whole joint error,
    /// `C/h`). Particle sticks keep the cap either way: uncapped at 10⁶ Hz with one biased
    /// sweep a substep, they tore the cloth (131 %) and the plant.
    pub cap_rigid_joint_hertz: bool,
    /// Soft joints: damping ratio (default: 2).
    pub joint_damping_ratio: f64,
    /// Largest speed at which penetration is pushed out (m/s) (default: 3).
    pub max_push: f64,
    /// Contacts approaching slower than this (m/s) do not bounce (default: 1).
    pub restitution_threshold: f64,
    /// Substeps the runner uses when none are given on the command line (default: 1).
    pub substeps: u32,
    /// Nonlinear Gauss-Seidel position sweeps over the joints, sticks and contacts after the
    /// positions are updated (Box2D v2.4's position solver; joints and sticks corrected fully,
    /// contacts by β = `baumgarte`, at most 0.2 m per row and sweep), on particles and rigid
    /// bodies. With any, Baumgarte feedback leaves the velocity rows (and the split rows) and
    /// acts only here (default: 0; the `pgs-ngs` preset: 3).
    pub position_iterations: u32,
    /// Rigid bodies: solve each island (connected by contacts) on its own, each stopping on its
    /// own tolerance (default: true). With `false` all contacts are one system; with no
    /// tolerance met both give the same numbers.
    pub islands: bool,
    /// Rigid bodies: an island whose bodies all stay under `sleep_speed` and `sleep_spin` for
    /// this long sleeps until touched (s); 0 disables sleeping (default: 0, so that experiments
    /// measure the solver, not the sleep rule; engines ship 0.5).
    pub sleep_time: f64,
    /// Rigid bodies: the sleep threshold on speed (m/s) (default: 0.05, Box2D's).
    pub sleep_speed: f64,
    /// Rigid bodies: the sleep threshold on angular speed (rad/s) (default: 0.035, 2°/s).
    pub sleep_spin: f64,
    /// Rigid bodies with substeps: find the contacts and prepare their rows once per frame, in
    /// its first substep, with a speculative margin covering the whole frame, and carry them
    /// through the other substeps, each point's separation updated from how far the bodies
    /// moved its two ends (the normal, arms and effective masses held at the frame's start),
    /// as Box2D v3's soft step and Rapier's TGS-soft do. Needs `feedback = "soft"` and no
    /// `position_iterations` (default: false; true in `soft-step` and `tgs-soft`).
    pub contacts_per_frame: bool,
    /// Rigid bodies: contact recycling, as Rapier 0.36 ships it (`contact_recycling`): a pair
    /// whose relative pose has drifted less than 5 cm since its contacts were found (translation
    /// plus the rotation's chord at the farther corner of the bodies' local bounding boxes,
    /// `Shape::box_corner_radius`, as Rapier measures it), with neither body turned by
    /// more than about 11.5°, keeps its points, their normals and lever arms frozen in the world,
    /// each separation measured anew between the point's two ends as the bodies carry them;
    /// contacts with planes and box walls are found every frame
    /// (`solverlab_core::rigid::ContactCache`). It saves most of the narrow phase of resting
    /// piles, and the frozen rows hold tall stacks (default: false; true in `tgs-soft`).
    pub contact_recycling: bool,
    /// Rigid bodies: each pair of boxes keeps its last separating axis from frame to frame, as
    /// Box3D does (`b3SATCache`): while the kept face still separates the boxes, or the contacts
    /// built on it stay within `slop` of the depth it was found at, the whole separating-axis
    /// test is skipped (`solverlab_core::rigid::collide::box_box_cached`). The contacts are
    /// the whole test's whenever it would choose the same axis (default: false; true in
    /// `soft-step`).
    pub sat_cache: bool,
    /// Rigid bodies: which speculative contacts a step keeps, `fastest` or `relative`
    /// ([`SpeculativeMargin`]) (default: `fastest`).
    pub speculative_margin: SpeculativeMargin,
    /// Rigid joints: start each step from the joints' last impulses (times `warm_start`) as the
    /// contacts do; with `false` every step's joint impulses start from zero (default: true;
    /// false in `tgs-soft`, Rapier's `warmstart_joints = false`).
    pub warm_start_joints: bool,
    /// Rigid bodies: how they turn, `rk4`, `explicit` or `implicit` ([`Rotation`]) (default:
    /// `rk4`; `explicit` in `tgs-soft`, Rapier 0.36's gyroscopic update; `implicit` in
    /// `soft-step`, Box3D's).
    pub rotation: Rotation,
    /// Rigid bodies: the fastest a body may move (m/s), enforced on its velocity after the
    /// biased sweeps of every step, before the positions move; 0 for no cap (default: 0;
    /// `tgs-soft`: 400, Rapier 0.36's `max_linear_velocity`; `soft-step`: 400, Box2D v3's
    /// `maximumLinearSpeed`).
    pub max_speed: f64,
    /// Rigid bodies: the most a body may turn in one frame (rad), enforced in every substep as
    /// the cap `|ω| ≤ max_frame_turn / Δt` on its angular velocity (`Δt` the frame, not the
    /// substep), after the biased sweeps and before the positions move; 0 for no cap (default:
    /// 0; `tgs-soft`: π/4, Rapier 0.36's cap for every body not marked to spin fast;
    /// `soft-step`: π/4, Box2D v3's `B2_MAX_ROTATION`).
    pub max_frame_turn: f64,
}

impl Default for PgsConfig {
    fn default() -> Self {
        Self {
            iterations: 10,
            relax_iterations: 0,
            tolerance: 1e-9,
            velocity_tolerance: 0.0,
            omega: 1.0,
            order: Order::Natural,
            rigid_order: Order::Natural,
            lanes: true,
            seed: 0,
            warm_start: 1.0,
            feedback: Feedback::Baumgarte,
            baumgarte: 0.2,
            split_impulse: true,
            slop: 0.005,
            contact_hertz: 30.0,
            contact_damping_ratio: 10.0,
            static_contact_hertz: 0.0,
            block: true,
            block_pairs: false,
            friction_cone: FrictionCone::Disk,
            friction_pass: FrictionPass::Both,
            static_colors: StaticColors::Lowest,
            keep_colors: false,
            relax_separation: RelaxSeparation::Linearised,
            joint_hertz: 60.0,
            cap_rigid_joint_hertz: true,
            joint_damping_ratio: 2.0,
            max_push: 3.0,
            restitution_threshold: 1.0,
            substeps: 1,
            position_iterations: 0,
            islands: true,
            sleep_time: 0.0,
            sleep_speed: 0.05,
            sleep_spin: 2f64.to_radians(),
            contacts_per_frame: false,
            contact_recycling: false,
            sat_cache: false,
            speculative_margin: SpeculativeMargin::Fastest,
            warm_start_joints: true,
            rotation: Rotation::Rk4,
            max_speed: 0.0,
            max_frame_turn: 0.0,
        }
    }
}

/// The impulse family: `kind = "pgs"` and its presets.
pub fn family() -> crate::registry::Typed<PgsConfig> {
    crate::registry::Typed {
        kind: "pgs",
        summary: "sequential impulses / projected Gauss-Seidel: split impulses, Baumgarte or soft feedback, NGS, soft step, TGS-soft",
        presets: pgs_presets,
        build: |c, label| Ok(Box::new(PgsSolver::new(c.clone(), label)?)),
        cap: |c, n| {
            c.iterations = crate::registry::count_of(n);
            c.tolerance = 0.0;
        },
        substeps: |c| c.substeps,
    }
}

impl crate::registry::Settings for PgsConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        PgsConfig::validate(self)
    }
}

/// Impulse preset `name`'s settings as the registry gives them (for the tests).
#[cfg(test)]
pub(crate) fn preset_config(name: &str) -> PgsConfig {
    let settings = crate::preset(name).expect("an impulse preset").config.settings().clone();
    toml::Value::Table(settings).try_into().expect("the preset's settings")
}

/// The impulse presets.
fn pgs_presets() -> Vec<(&'static str, &'static str, PgsConfig)> {
    let pgs = PgsConfig::default();
    vec![
        (
            "pgs",
            "sequential impulses: 10 iterations, Baumgarte β = 0.2 (split), warm start 1.0, rigid manifolds' normals as blocks",
            pgs.clone(),
        ),
        (
            "pgs-bullet",
            "sequential impulses as Bullet ships them: warm start 0.85, ERP 0.2, 10 iterations, point by point",
            PgsConfig { warm_start: 0.85, block: false, ..pgs.clone() },
        ),
        (
            "pgs-ngs",
            "PGS then nonlinear Gauss-Seidel as Box2D v2.4: 8 block sweeps, 3 position sweeps on joints, sticks and contacts (β = 0.2 on contacts)",
            PgsConfig { iterations: 8, position_iterations: 3, ..pgs.clone() },
        ),
        (
            "soft-step",
            "Box2D v3 soft step: 4 substeps × (1 biased, 1 relax); contacts 30 Hz ζ 10 (60 Hz against static bodies), joints 60 Hz ζ 2; speeds capped; rows colour by colour with each pair's colour kept; a fixed 2 cm speculative margin; Box3D's implicit gyroscopic step and separating-axis cache",
            // (Box2D v3 caps every body's speed in every substep before its position moves:
            // `b2IntegratePositionsTask`, 400 m/s by default and π/4 of turn per step,
            // `B2_MAX_ROTATION`. On the 20-link chain with a 100× heavy end, 300 frames, the
            // joints open 7.1 cm with the caps or without (the caps never act); in the natural
            // order they opened 10.0 cm with the caps, and 14.5 cm without, torn in frame 218.
            // Box2D v3 runs its warm start, solve and relax stages colour by colour over its
            // constraint graph, on any number of threads, its contacts in SIMD-wide batches
            // point after point (Box2D's `solver.c` and `contact_solver.c`): here the coloured order,
            // two manifolds at a time on the lanes, `lanes`. Bodies turn as Box3D, Box2D v3's
            // three-dimensional sibling, turns them: one Newton iteration of the implicit
            // gyroscopic step with the forces, the first-order quaternion update after the
            // solve (`solver.c`, `b3IntegrateVelocitiesTask` and `b3IntegratePositionsTask`).
            // Contacts with a static body or the world are twice as stiff, 60 Hz with the same
            // ζ, as Box2D v3 makes them (`b2StepWorld`: `staticSoftness = b2MakeSoft(2 ·
            // contactHertz, …)`; Box3D halves their ζ as well). Each pair of boxes keeps its
            // last separating axis from frame to frame, as Box3D's `b3CollideHulls` keeps its
            // `b3SATCache`. Box2D v3's speculative collision is limited: a manifold keeps the
            // points within `B2_SPECULATIVE_DISTANCE`, four linear slops (2 cm), whatever the
            // speeds (`constants.h`), hence `speculative_margin = "fixed"`; Box2D v3's
            // continuous collision of fast bodies against static ones, which catches what that
            // margin misses, is not modelled here.)
            PgsConfig {
                iterations: 1,
                static_contact_hertz: 60.0,
                sat_cache: true,
                speculative_margin: SpeculativeMargin::Fixed,
                relax_iterations: 1,
                feedback: Feedback::Soft,
                substeps: 4,
                block: false,
                contacts_per_frame: true,
                max_speed: 400.0,
                max_frame_turn: std::f64::consts::FRAC_PI_4,
                rigid_order: Order::Colored,
                static_colors: StaticColors::AfterFirst,
                keep_colors: true,
                relax_separation: RelaxSeparation::Poses,
                rotation: Rotation::Implicit,
                ..pgs
            },
        ),
        (
            "tgs-soft",
            "Rapier 0.36's defaults: 4 substeps × (1 biased, 1 relax), friction in the relax sweep; contacts 30 Hz ζ 10 (60 Hz against fixed bodies), push ≤ 3 m/s, contact recycling with a fixed 2 cm speculative margin, normals in 2 × 2 soft blocks, rows colour by colour with each pair's colour kept, speeds capped",
            tgs_soft(),
        ),
    ]
}

/// Rapier 0.36's defaults (source: Rapier 0.36, `IntegrationParameters::default()`) in
/// solverlab's terms: `num_solver_iterations = 4` substeps, each with
/// `num_internal_pgs_iterations = 1` biased sweep and `num_internal_stabilization_iterations = 1`
/// unbiased sweep after the position update; penetrating contacts soft at 30 Hz with damping
/// ratio 10 (`contact_softness`), those against a fixed body or the world at 60 Hz with ζ 10
/// (`static_contact_softness`); push-out at most 3 m/s (`max_corrective_velocity`); friction
/// solved in the unbiased sweep only (`friction_in_bias_pass = false`); warm start 1
/// (`warmstart_coefficient`). Rapier's 0.005 m slop (`allowed_linear_error`) is no dead zone on
/// the push-out, and neither is solverlab's on soft rigid rows; the slop sets the speculative
/// margin, 4 × 0.005 m = Rapier's 0.02 m prediction distance, fixed whatever the bodies' speeds
/// as Rapier keeps it for bodies without soft CCD (`speculative_margin = "fixed"`). Joints are Rapier's, effectively
/// rigid: 10⁶ Hz, ζ 1, uncapped (`cap_rigid_joint_hertz = false`; with Box2D v3's cap of half the
/// substep rate, 120 Hz here, the 10 × 10 joint grid opened its joints to 8 cm and tore in
/// frame 11, where Rapier's open 5 cm); like Rapier's (`warmstart_joints = false`) they
/// start every substep from zero impulses (warm-started, the 10 × 10 joint grid blows up under
/// this preset's single relax sweep in frame 18). Contacts are recycled as Rapier 0.36 does by
/// default (`contact_recycling`: 5 cm of relative drift, 11.5° of turn), and contact normals
/// are solved two points at a time in 2 × 2 soft blocks (`block_pairs`), as Rapier's default
/// `block-solver` feature does, and bodies turn as Rapier turns them (`rotation = "explicit"`:
/// its gyroscopic step before the solve, its first-order quaternion update after), with
/// Rapier's speed caps (`max_speed` 400 m/s, `max_frame_turn` π/4 a frame: on a chain with a
/// 100× heavy end, 300 frames, the joints open 17 cm with the turn cap, as Rapier's do, and
/// 64 cm without it; Rapier's, lifted of its cap, 33 m). The rows go colour by colour
/// (`rigid_order = "colored"`), joints first, the pairs with a fixed body or the world in the
/// last colours (`static_colors = "last"`), a pair keeping its colour from frame to frame
/// (`keep_colors`), as Rapier 0.36's solver visits them on any number of threads: in the natural order the 10 × 10 joint grid's joints opened 4.6 cm against
/// Rapier's 5.0, coloured 4.98 against 4.98, with the largest drift equal to nine digits. What
/// else differs: Rapier solves a manifold's twist row before its tangent rows (here after), and
/// bounds the twist by `μ·Σλᵢ·dᵢ` over the points' distances `dᵢ` from the centre (here `μ·d̄·Σλᵢ`, `d̄` their
/// mean).
fn tgs_soft() -> PgsConfig {
    PgsConfig {
        iterations: 1,
        relax_iterations: 1,
        feedback: Feedback::Soft,
        substeps: 4,
        contact_hertz: 30.0,
        contact_damping_ratio: 10.0,
        static_contact_hertz: 60.0,
        joint_hertz: 1e6,
        cap_rigid_joint_hertz: false,
        joint_damping_ratio: 1.0,
        max_push: 3.0,
        slop: 0.005,
        warm_start: 1.0,
        friction_pass: FrictionPass::Relax,
        block: false,
        block_pairs: true,
        rotation: Rotation::Explicit,
        rigid_order: Order::Colored,
        static_colors: StaticColors::Last,
        keep_colors: true,
        relax_separation: RelaxSeparation::Poses,
        max_speed: 400.0,
        max_frame_turn: std::f64::consts::FRAC_PI_4,
        contacts_per_frame: true,
        contact_recycling: true,
        speculative_margin: SpeculativeMargin::Fixed,
        warm_start_joints: false,
        ..PgsConfig::default()
    }
}

impl PgsConfig {
    /// The soft frequencies in force for a step of `h` seconds (Hz): contacts at most a quarter
    /// of the step rate, joints (particle sticks) at most half (Box2D v3's rule; at 60 Hz and
    /// one substep the default 30 and 60 Hz become 15 and 30 Hz).
    pub fn soft_hertz(&self, h: f64) -> (f64, f64) {
        (self.contact_hertz.min(0.25 / h), self.joint_hertz.min(0.5 / h))
    }

    /// The soft frequency of rigid bodies' joints for a step of `h` seconds (Hz): `joint_hertz`,
    /// capped as [`PgsConfig::soft_hertz`] caps sticks with `cap_rigid_joint_hertz`.
    pub fn rigid_joint_hertz(&self, h: f64) -> f64 {
        if self.cap_rigid_joint_hertz {
            self.joint_hertz.min(0.5 / h)
        } else {
            self.joint_hertz
        }
    }

    /// The soft frequency in force for a rigid contact with a fixed body or a world collider,
    /// for a step of `h` seconds (Hz): `static_contact_hertz`, or `contact_hertz` when it is 0,
    /// capped at a quarter of the step rate as [`PgsConfig::soft_hertz`] caps contacts.
    pub fn static_soft_hertz(&self, h: f64) -> f64 {
        let hz = if self.static_contact_hertz > 0.0 { self.static_contact_hertz } else { self.contact_hertz };
        hz.min(0.25 / h)
    }

    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        use crate::common::check::{count, non_negative, within};
        count("iterations", self.iterations, 1)?;
        count("position_iterations", self.position_iterations, 0)?;
        count("relax_iterations", self.relax_iterations, 0)?;
        count("substeps", self.substeps, 1)?;
        non_negative("tolerance", self.tolerance, "m")?;
        non_negative("velocity_tolerance", self.velocity_tolerance, "m/s")?;
        within("omega", self.omega, (0.0, 2.0), (false, false))?;
        within("warm_start", self.warm_start, (0.0, 1.0), (true, true))?;
        within("baumgarte", self.baumgarte, (0.0, 1.0), (true, true))?;
        for (f, v) in [
            ("slop", self.slop),
            ("contact_hertz", self.contact_hertz),
            ("contact_damping_ratio", self.contact_damping_ratio),
            ("static_contact_hertz", self.static_contact_hertz),
            ("joint_hertz", self.joint_hertz),
            ("joint_damping_ratio", self.joint_damping_ratio),
            ("max_push", self.max_push),
            ("restitution_threshold", self.restitution_threshold),
            ("sleep_time", self.sleep_time),
            ("sleep_speed", self.sleep_speed),
            ("sleep_spin", self.sleep_spin),
            ("max_speed", self.max_speed),
            ("max_frame_turn", self.max_frame_turn),
        ] {
            non_negative(f, v, "")?;
        }
        if self.feedback == Feedback::Soft && (self.contact_hertz == 0.0 || self.joint_hertz == 0.0) {
            return Err(ConfigError::new("contact_hertz", "soft feedback needs positive frequencies"));
        }
        if self.block && self.block_pairs {
            return Err(ConfigError::new(
                "block_pairs",
                "the normal rows go either as whole-manifold blocks (`block`) or in pairs (`block_pairs`), not both",
            ));
        }
        if !matches!(self.rigid_order, Order::Natural | Order::Colored) {
            return Err(ConfigError::new("rigid_order", "the rigid rows go in the `natural` or the `colored` order"));
        }
        if self.relax_separation == RelaxSeparation::Poses && self.feedback != Feedback::Soft {
            return Err(ConfigError::new(
                "relax_separation",
                "measuring the relax sweeps' separations at the poses needs feedback = \"soft\"",
            ));
        }
        if self.contacts_per_frame && (self.feedback != Feedback::Soft || self.position_iterations > 0) {
            return Err(ConfigError::new(
                "contacts_per_frame",
                "carrying contacts through the substeps needs feedback = \"soft\" and position_iterations = 0",
            ));
        }
        Ok(())
    }
}
