//! A solverlab scene as a Rapier world: bodies, colliders, joints and the world colliders, the
//! four modes of Rapier's parameters, stepping, and the state read back as a solverlab
//! [`State`] so that solverlab's own [`measure`] gives the metrics.
//!
//! # What maps to what
//!
//! * Each rigid body of `scene.rigid` becomes one Rapier body with one collider centred on it:
//!   a box a cuboid, a sphere a ball, a capsule a capsule along its local y. Its mass and
//!   principal inertia are solverlab's (`inv_mass`, `inv_inertia`), set on the collider as
//!   explicit mass properties; its pose, velocity and angular velocity are the scene's. Fixed
//!   bodies are fixed.
//! * Friction μ and restitution e sit on every collider, combined as solverlab combines them:
//!   friction by the geometric mean `√(μa·μb)`, restitution by the larger.
//! * World colliders live on one fixed body at the origin: each plane (`normal·x ≥ offset`) a
//!   slab under it, or a half-space ([`Walls`]), the box of `bounds` six of them, each sphere
//!   collider a fixed ball, each block a fixed cuboid.
//! * Joints: ball → Rapier's spherical axes, revolute → the revolute axes about the scene's axis,
//!   with its limits (the angle of b relative to a, right-handed about the axis, 0 at the start,
//!   as in solverlab), fixed → all six axes. Each body carries the anchor from its start pose
//!   (`anchor_b` where the scene gives one). A joint to the world is held by the world body.
//!   Jointed bodies do not collide (solverlab's rule); a body jointed to the world still touches
//!   the world colliders.
//! * Removals: before the frame in whose substeps solverlab removes it, a removed body is
//!   disabled in Rapier and reported parked at rest at its start plus `PARK_OFFSET`, as
//!   solverlab parks it.
//! * `damping` (solverlab's `v ← (1 − d)·v` per substep) becomes Rapier's linear and angular
//!   damping `c = d/((1 − d)·h)`, which scales velocities by `1/(1 + c·h)` per substep.
//!
//! Scenes with particles are refused: Rapier here runs the rigid part of solverlab only.

use rapier3d_f64::dynamics::{
    CoefficientCombineRule, GenericJoint, GenericJointBuilder, IntegrationParameters, JointAxesMask, JointAxis,
    MassProperties, RigidBodyBuilder, RigidBodyHandle, SpringCoefficients,
};
use rapier3d_f64::geometry::{ColliderBuilder, ColliderHandle, SharedShape};
use rapier3d_f64::math::{Pose, Rotation, Vector};
use rapier3d_f64::pipeline::PhysicsWorld;
use solverlab_core::metrics::{measure, no_multipliers, StepMetrics};
use solverlab_core::model::PARK_OFFSET;
use solverlab_core::rigid::{JointKind, RigidState, Shape};
use solverlab_core::{Scene, State, Vec3};

/// Which of Rapier's parameters a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The settings of solverlab's `tgs-soft` preset in Rapier's terms (see [`Mode::parameters`]),
    /// no sleeping.
    Matched,
    /// The settings of solverlab's `soft-step` preset, Box2D v3's soft step, as far as Rapier's
    /// parameters reach (see [`Mode::parameters`]), no sleeping.
    Box2d,
    /// `IntegrationParameters::default()`, no sleeping.
    Defaults,
    /// `IntegrationParameters::default()` with sleeping on, as Rapier ships.
    Sleeping,
}

impl Mode {
    /// Every mode, in the order the tables list them.
    pub const ALL: [Mode; 4] = [Mode::Matched, Mode::Box2d, Mode::Defaults, Mode::Sleeping];

    /// The name on the command line and in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Matched => "matched",
            Mode::Box2d => "box2d",
            Mode::Defaults => "defaults",
            Mode::Sleeping => "sleeping",
        }
    }

    /// The mode called `name`.
    pub fn parse(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// One line on what the mode is.
    pub fn summary(self) -> &'static str {
        match self {
            Mode::Matched => {
                "solverlab's tgs-soft settings in Rapier's terms, which are Rapier 0.36's defaults: 4 substeps × \
                 (1 biased, 1 relax), friction in the relax sweep, contacts 30 Hz ζ 10 (60 Hz against fixed bodies), \
                 push-out ≤ 3 m/s; no sleeping"
            }
            Mode::Box2d => {
                "solverlab's soft-step settings (Box2D v3's soft step) in Rapier's terms: 4 substeps × (1 biased, \
                 1 relax), friction in both sweeps, no contact recycling, contacts 30 Hz ζ 10 (60 Hz against fixed \
                 bodies), push-out ≤ 3 m/s, joints 60 Hz ζ 2 and warm-started; no sleeping"
            }
            Mode::Defaults => {
                "Rapier's IntegrationParameters::default(): 4 substeps × (1 biased, 1 relax), contacts 30 Hz ζ 10 \
                 (60 Hz against fixed bodies), push-out ≤ 3 m/s; no sleeping"
            }
            Mode::Sleeping => "Rapier's defaults with sleeping on (bodies may sleep), as Rapier ships",
        }
    }

    /// The softness of every joint: Rapier's own (10⁶ Hz, ζ 1), or in `Box2d` `soft-step`'s 60 Hz
    /// with ζ 2 (Box2D v3's and Box3D's default, at most a quarter of the substep rate in Box3D
    /// and half in solverlab: 60 Hz either way at 60 Hz × 4).
    pub fn joint_softness(self) -> SpringCoefficients<f64> {
        match self {
            Mode::Box2d => SpringCoefficients::new(60.0, 2.0),
            _ => SpringCoefficients::joint_defaults(),
        }
    }

    /// Whether bodies may sleep.
    pub fn sleeps(self) -> bool {
        self == Mode::Sleeping
    }

    /// Rapier's integration parameters for a scene stepped at `dt` seconds.
    ///
    /// `Matched` sets what solverlab's `tgs-soft` preset sets (`solverlab_solvers::pgs::config`),
    /// which since issue 30 are Rapier 0.36's defaults: 4 substeps (`num_solver_iterations`),
    /// each 1 biased sweep (`num_internal_pgs_iterations`) and 1 relax sweep
    /// (`num_internal_stabilization_iterations`); friction in the relax sweep only
    /// (`friction_in_bias_pass = false`, solverlab's `friction_pass = "relax"`); contacts soft at
    /// 30 Hz with ζ = 10, against fixed bodies at 60 Hz (`static_contact_hertz`); push-out at most
    /// 3 m/s; warm start 1. It spells them out, so that it keeps mirroring `tgs-soft` if Rapier's
    /// defaults move. The soft rows are the same arithmetic in both (Rapier's `cfm_factor` is
    /// Box2D's mass scale, its `erp_inv_dt` the bias rate). Joints keep Rapier's own softness
    /// (10⁶ Hz, ζ 1: `tgs-soft`'s nominal numbers, which solverlab caps at half the substep
    /// rate, 120 Hz at 60 Hz × 4).
    ///
    /// What is left at Rapier's defaults on purpose, and differs from some of solverlab's impulse
    /// presets: joints not warm-started (as in `tgs-soft`), contact recycling (a pair that moved
    /// less than 5 cm keeps its contact points, as `tgs-soft`'s `contact_recycling` does; without
    /// it Rapier drops the stack with a 10× top, and so does `tgs-soft`), continuous collision detection for
    /// fast bodies, the speed caps (400 m/s, and π/4 of turn per frame; `tgs-soft`'s
    /// `max_speed` and `max_frame_turn`), and Rapier's 2 × 2 block solver of contact normals (a
    /// compile-time feature, on by default; `tgs-soft`'s `block_pairs`).
    ///
    /// `Box2d` sets what solverlab's `soft-step` preset sets where it differs from `tgs-soft`,
    /// Box2D v3's algorithm: friction in both sweeps (`friction_in_bias_pass = true`), contacts
    /// found anew every frame (`contact_recycling = false`), and joints soft at 60 Hz with ζ 2
    /// and warm-started (`warmstart_joints`; the softness is set on each joint,
    /// [`Mode::joint_softness`]). What it cannot set: `soft-step` solves a manifold's normal rows
    /// point after point where Rapier's block solver (a compile-time feature) solves two at a
    /// time, turns its bodies by Box3D's implicit gyroscopic step where Rapier turns them
    /// explicitly, and finds box–box contacts by its own separating axes and clipping where
    /// Rapier uses parry's.
    pub fn parameters(self, dt: f64) -> IntegrationParameters {
        let mut p = IntegrationParameters { dt, ..IntegrationParameters::default() };
        if self == Mode::Box2d {
            p = Mode::Matched.parameters(dt);
            p.friction_in_bias_pass = true;
            p.contact_recycling = false;
            p.warmstart_joints = true;
        }
        if self == Mode::Matched {
            p.num_solver_iterations = 4;
            p.num_internal_pgs_iterations = 1;
            p.num_internal_stabilization_iterations = 1;
            p.friction_in_bias_pass = false;
            p.contact_softness = SpringCoefficients::new(30.0, 10.0);
            p.static_contact_softness = SpringCoefficients::new(60.0, 10.0);
            p.normalized_max_corrective_velocity = 3.0;
            p.warmstart_coefficient = 1.0;
        }
        p
    }
}

/// How a plane of the scene (and each wall of its box) enters Rapier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Walls {
    /// A slab: a cuboid [`SLAB`] m thick under the plane and `10³ + 10·R` m wide either way
    /// (`R` the farthest any body reaches from the origin at the start), the plane its top
    /// face. Its bounding box reaches only the bodies near the plane, so Rapier's broad phase
    /// pairs only those with it: the way a Rapier user builds a floor and the walls of a box.
    #[default]
    Slabs,
    /// Rapier's half-space: the exact plane, but its bounding box is all of space, so the
    /// broad phase pairs every body with every plane (10,000 spheres in a box: 60,000 pairs,
    /// whose creation in the first step alone takes a second).
    HalfSpaces,
}

/// Half the thickness of a slab (m).
pub const SLAB: f64 = 10.0;

/// A scene the peer cannot run, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

/// A Rapier world built from a solverlab scene, with what is needed to read it back.
pub struct RapierRun<'a> {
    /// The scene.
    pub scene: &'a Scene,
    /// Rapier's world.
    pub world: PhysicsWorld,
    /// The mode.
    pub mode: Mode,
    bodies: Vec<RigidBodyHandle>,
    /// The colliders of the world (planes, box walls, sphere colliders, blocks): the support
    /// force is their normal force.
    world_colliders: Vec<ColliderHandle>,
    removed: Vec<bool>,
    time: f64,
    step: u64,
    /// Notes on what the mapping had to approximate, for the run's metadata.
    pub notes: Vec<String>,
}

fn v(x: &Vec3) -> Vector {
    Vector::new(x.x, x.y, x.z)
}

fn back(x: Vector) -> Vec3 {
    Vec3::new(x.x, x.y, x.z)
}

fn rot(q: &nalgebra::UnitQuaternion<f64>) -> Rotation {
    Rotation::from_xyzw(q.i, q.j, q.k, q.w)
}

fn rot_back(q: Rotation) -> nalgebra::UnitQuaternion<f64> {
    nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q.w, q.x, q.y, q.z))
}

impl<'a> RapierRun<'a> {
    /// Builds the world of `scene` in `mode`, its planes as `walls`.
    pub fn new(scene: &'a Scene, mode: Mode, walls: Walls) -> Result<Self, Unsupported> {
        Self::with_rotation(scene, mode, walls, false)
    }

    /// [`RapierRun::new`], with every body allowed to spin fast (`fast_rotation`: Rapier's
    /// `allow_fast_rotation`, which lifts its cap of π/4 of turn per frame; an experiment on the
    /// cap, not part of any mode).
    pub fn with_rotation(scene: &'a Scene, mode: Mode, walls: Walls, fast_rotation: bool) -> Result<Self, Unsupported> {
        if !scene.particles.is_empty() {
            return Err(Unsupported(format!(
                "scene `{}` has {} particles: the Rapier peer runs rigid scenes only (`[[rigid]]` bodies and joints)",
                scene.name,
                scene.particles.len()
            )));
        }
        if scene.rigid.is_empty() {
            return Err(Unsupported(format!("scene `{}` has no rigid bodies", scene.name)));
        }
        let mut notes = Vec::new();
        let mut world = PhysicsWorld::new();
        world.gravity = v(&scene.gravity);
        world.integration_parameters = mode.parameters(scene.dt);
        let h = scene.dt / world.integration_parameters.num_solver_iterations.max(1) as f64;
        let damping = if scene.damping > 0.0 { scene.damping / ((1.0 - scene.damping) * h) } else { 0.0 };

        let ground = world.bodies.insert(RigidBodyBuilder::fixed());
        let mut world_colliders = Vec::new();
        let material = |c: ColliderBuilder, mu: f64, e: f64| {
            c.friction(mu)
                .friction_combine_rule(CoefficientCombineRule::GeometricMean)
                .restitution(e)
                .restitution_combine_rule(CoefficientCombineRule::Max)
        };
        let mut add_world = |world: &mut PhysicsWorld, c: ColliderBuilder| {
            let handle = world.colliders.insert_with_parent(c, ground, &mut world.bodies);
            world_colliders.push(handle);
        };
        // A plane (`normal·x ≥ offset`): a half-space, or a slab under it (see [`Walls`]).
        let reach = scene.rigid.iter().map(|b| b.x.norm() + b.shape.bounding_radius()).fold(0.0, f64::max);
        let half_width = 1e3 + 10.0 * reach;
        let plane = |n: Vec3, at: Vec3| match walls {
            Walls::HalfSpaces => ColliderBuilder::new(SharedShape::halfspace(v(&n))).translation(v(&at)),
            Walls::Slabs => {
                let turn = Rotation::from_rotation_arc(Vector::Y, v(&n));
                ColliderBuilder::cuboid(half_width, SLAB, half_width)
                    .position(Pose::from_parts(v(&(at - n * SLAB)), turn))
            }
        };
        for p in &scene.planes {
            let n = p.normal.normalize();
            add_world(&mut world, material(plane(n, n * p.offset), p.friction, p.restitution));
        }
        if let Some(b) = &scene.bounds {
            for axis in 0..3 {
                for (sign, at) in [(1.0, b.min[axis]), (-1.0, b.max[axis])] {
                    let mut n = Vec3::zeros();
                    n[axis] = sign;
                    let mut x = (b.min + b.max) / 2.0;
                    x[axis] = at;
                    add_world(&mut world, material(plane(n, x), b.friction, b.restitution));
                }
            }
        }
        for s in &scene.spheres {
            let c = ColliderBuilder::ball(s.radius).translation(v(&s.center));
            add_world(&mut world, material(c, s.friction, s.restitution));
        }
        for blk in &scene.blocks {
            let half = (blk.max - blk.min) / 2.0;
            let c = ColliderBuilder::cuboid(half.x, half.y, half.z).translation(v(&((blk.max + blk.min) / 2.0)));
            add_world(&mut world, material(c, blk.friction, blk.restitution));
        }

        let mut bodies = Vec::with_capacity(scene.rigid.len());
        for b in &scene.rigid {
            let pose = Pose::from_parts(v(&b.x), rot(&b.q));
            let builder = if b.is_fixed() {
                RigidBodyBuilder::fixed().pose(pose)
            } else {
                RigidBodyBuilder::dynamic()
                    .pose(pose)
                    .linvel(v(&b.v))
                    .angvel(v(&b.w))
                    .linear_damping(damping)
                    .angular_damping(damping)
                    .can_sleep(mode.sleeps())
                    .allow_fast_rotation(fast_rotation)
            };
            let handle = world.bodies.insert(builder);
            let shape = match b.shape {
                Shape::Box { half } => ColliderBuilder::cuboid(half.x, half.y, half.z),
                Shape::Sphere { radius } => ColliderBuilder::ball(radius),
                Shape::Capsule { radius, half_height } => ColliderBuilder::capsule_y(half_height, radius),
            };
            let mut c = material(shape, b.friction, b.restitution);
            if !b.is_fixed() {
                let inertia = b.inv_inertia.map(|k| 1.0 / k);
                c = c.mass_properties(MassProperties::new(Vector::ZERO, b.mass(), v(&inertia)));
            }
            world.colliders.insert_with_parent(c, handle, &mut world.bodies);
            bodies.push(handle);
        }

        for (k, j) in scene.joints.iter().enumerate() {
            if j.compliance > 0.0 {
                notes.push(format!(
                    "joint {k}: compliance {} m/N ignored (Rapier's joints keep their own softness)",
                    j.compliance
                ));
            }
            let a = &scene.rigid[j.a];
            let (xb, qb, body_b) = match j.b {
                Some(k) => (scene.rigid[k].x, scene.rigid[k].q, bodies[k]),
                None => (Vec3::zeros(), nalgebra::UnitQuaternion::identity(), ground),
            };
            let anchor_a = a.q.inverse() * (j.anchor - a.x);
            let anchor_b = qb.inverse() * (j.anchor_b() - xb);
            // The joint's frame in the world at the start: x along a revolute joint's axis.
            let frame = match j.kind {
                JointKind::Revolute { axis, .. } => Rotation::from_rotation_arc(Vector::X, v(&axis.normalize())),
                JointKind::Ball | JointKind::Fixed => Rotation::IDENTITY,
            };
            let axes = match j.kind {
                JointKind::Ball => JointAxesMask::LOCKED_SPHERICAL_AXES,
                JointKind::Revolute { .. } => JointAxesMask::LOCKED_REVOLUTE_AXES,
                JointKind::Fixed => JointAxesMask::LOCKED_FIXED_AXES,
            };
            let mut builder = GenericJointBuilder::new(axes)
                .local_frame1(Pose::from_parts(v(&anchor_a), rot(&a.q).inverse() * frame))
                .local_frame2(Pose::from_parts(v(&anchor_b), rot(&qb).inverse() * frame))
                .contacts_enabled(j.b.is_none())
                .softness(mode.joint_softness());
            if let JointKind::Revolute { lower, upper, .. } = j.kind {
                if let Some(limits) = limits(lower, upper) {
                    if limits != [lower, upper] {
                        notes.push(format!(
                            "joint {k}: a half-open limit [{lower}, {upper}] rad is held as [{}, {}] (Rapier reads a \
                             limit off the wrapped angle)",
                            limits[0], limits[1]
                        ));
                    }
                    builder = builder.limits(JointAxis::AngX, limits);
                }
            }
            let joint: GenericJoint = builder.build();
            world.impulse_joints.insert(bodies[j.a], body_b, joint, true);
        }
        Ok(Self {
            scene,
            world,
            mode,
            bodies,
            world_colliders,
            removed: vec![false; scene.rigid.len()],
            time: 0.0,
            step: 0,
            notes,
        })
    }

    /// Substeps per frame.
    pub fn substeps(&self) -> usize {
        self.world.integration_parameters.num_solver_iterations.max(1)
    }

    /// Advances one frame of `dt` (one Rapier step) and returns the wall time of Rapier's step
    /// alone (s).
    ///
    /// Time advances as solverlab's does, by `dt/substeps` per substep, so that the metrics'
    /// removal test agrees with solverlab's. A body leaves before the frame in whose substeps
    /// solverlab removes it (Rapier can be changed between frames only).
    pub fn step(&mut self) -> f64 {
        let h = self.scene.dt / self.substeps() as f64;
        let mut end = self.time;
        for _ in 0..self.substeps() {
            end += h;
        }
        for k in self.scene.removals.iter().filter_map(|r| r.rigid_body_by(end)) {
            if !self.removed[k] {
                self.removed[k] = true;
                self.world.bodies[self.bodies[k]].set_enabled(false);
            }
        }
        let t0 = std::time::Instant::now();
        self.world.step();
        let seconds = t0.elapsed().as_secs_f64();
        self.time = end;
        self.step += self.substeps() as u64;
        seconds
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Rapier's bodies as a solverlab state (removed bodies parked as solverlab parks them).
    pub fn state(&self) -> State {
        let rigid = self
            .scene
            .rigid
            .iter()
            .zip(&self.bodies)
            .zip(&self.removed)
            .map(|((b, h), &gone)| {
                if gone {
                    return RigidState { x: b.x + PARK_OFFSET, q: b.q, asleep: true, ..b.initial_state() };
                }
                let body = &self.world.bodies[*h];
                RigidState {
                    x: back(body.translation()),
                    q: rot_back(*body.rotation()),
                    v: back(body.linvel()),
                    w: back(body.angvel()),
                    rest_time: 0.0,
                    asleep: body.is_sleeping(),
                }
            })
            .collect();
        State { x: Vec::new(), x_prev: Vec::new(), rigid, time: self.time, step: self.step }
    }

    /// solverlab's metrics of Rapier's state (`solverlab_core::metrics::measure`, with no
    /// multipliers: the rigid metrics use none).
    pub fn metrics(&self) -> StepMetrics {
        let h = self.scene.dt / self.substeps() as f64;
        measure(self.scene, &self.state(), h, &no_multipliers)
    }

    /// The total normal force of the world colliders on the bodies over the last step (N): the
    /// normal impulses Rapier keeps on the contacts with them (the whole step's, all substeps
    /// summed: a box at rest on the floor reports its weight times `dt`), over `dt`.
    pub fn support_force(&self) -> f64 {
        let mut impulse = 0.0;
        for &c in &self.world_colliders {
            for pair in self.world.narrow_phase.contact_pairs_with(c) {
                impulse += pair.total_impulse_magnitude();
            }
        }
        impulse / self.scene.dt
    }

    /// Whether every body is finite.
    pub fn is_finite(&self) -> bool {
        self.bodies.iter().all(|h| {
            let b = &self.world.bodies[*h];
            b.translation().is_finite() && b.linvel().is_finite() && b.angvel().is_finite()
        })
    }
}

/// The limits Rapier is given for solverlab's `[lower, upper]`: `None` for a free joint; a
/// half-open range closed a little short of a full turn from its finite side (Rapier reads the
/// angle off the relative rotation, so a range of a full turn or more is no limit).
pub fn limits(lower: f64, upper: f64) -> Option<[f64; 2]> {
    const TURN: f64 = 2.0 * std::f64::consts::PI - 1e-3;
    match (lower.is_finite(), upper.is_finite()) {
        (false, false) => None,
        (true, true) => Some([lower, upper]),
        (true, false) => Some([lower, lower + TURN]),
        (false, true) => Some([upper - TURN, upper]),
    }
}

#[cfg(test)]
mod tests {
    use solverlab_core::rigid::{Joint, RigidBody};
    use solverlab_core::{Particle, Plane};

    use super::*;

    fn floor(scene: &mut Scene) {
        scene.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: 0.5, restitution: 0.0 });
    }

    /// Checks that `mode`'s parameters are `preset`'s where Rapier has the parameter: substeps,
    /// biased and relax sweeps, where friction is solved, contact recycling, the two contact
    /// softnesses, the push-out, the warm start (contacts and joints) and the joints' softness
    /// at 60 Hz × 4.
    fn assert_mirrors(mode: Mode, preset: &str) {
        use solverlab_solvers::{FrictionPass, PgsConfig};
        let c: PgsConfig = solverlab_solvers::preset(preset).unwrap().config.typed().unwrap();
        let p = mode.parameters(1.0 / 60.0);
        let sweeps = (p.num_solver_iterations, p.num_internal_pgs_iterations, p.num_internal_stabilization_iterations);
        assert_eq!(sweeps, (c.substeps as usize, c.iterations as usize, c.relax_iterations as usize));
        assert_eq!(p.friction_in_bias_pass, c.friction_pass != FrictionPass::Relax);
        assert_eq!((p.contact_recycling, p.warmstart_joints), (c.contact_recycling, c.warm_start_joints));
        let soft = (p.contact_softness.natural_frequency, p.contact_softness.damping_ratio);
        assert_eq!(soft, (c.contact_hertz, c.contact_damping_ratio));
        let fixed = (p.static_contact_softness.natural_frequency, p.static_contact_softness.damping_ratio);
        assert_eq!(fixed, (c.static_contact_hertz, c.contact_damping_ratio));
        assert_eq!((p.normalized_max_corrective_velocity, p.warmstart_coefficient), (c.max_push, c.warm_start));
        let (j, h) = (mode.joint_softness(), 1.0 / 60.0 / c.substeps as f64);
        assert_eq!((j.natural_frequency, j.damping_ratio), (c.rigid_joint_hertz(h), c.joint_damping_ratio));
    }

    /// `matched` mirrors solverlab's `tgs-soft` number for number, and `tgs-soft` is Rapier's
    /// defaults: the two modes' parameters are the same.
    #[test]
    fn matched_mirrors_tgs_soft() {
        assert_mirrors(Mode::Matched, "tgs-soft");
        assert_eq!(Mode::Matched.parameters(1.0 / 60.0), Mode::Defaults.parameters(1.0 / 60.0));
    }

    /// `box2d` mirrors solverlab's `soft-step` where Rapier has the parameter: `matched`'s
    /// numbers (which `soft-step` shares: substeps, sweeps, contact softness, push-out, warm
    /// start) with friction in both sweeps, no recycling and `soft-step`'s joints, 60 Hz ζ 2,
    /// warm-started.
    #[test]
    fn box2d_mirrors_soft_step() {
        assert_mirrors(Mode::Box2d, "soft-step");
    }

    /// A box at rest on the floor stays there, and the floor carries its weight, with the floor
    /// as a slab and as a half-space, in every mode.
    #[test]
    fn a_resting_box_is_carried() {
        let mut scene = Scene::new("box");
        floor(&mut scene);
        scene.rigid.push(RigidBody::new(
            Shape::Box { half: Vec3::new(0.5, 0.25, 0.5) },
            10.0,
            Vec3::new(0.3, 0.25, -2.0),
        ));
        for walls in [Walls::Slabs, Walls::HalfSpaces] {
            for mode in Mode::ALL {
                let mut run = RapierRun::new(&scene, mode, walls).expect("a rigid scene");
                for _ in 0..120 {
                    run.step();
                }
                let m = run.metrics();
                assert!(m.body_drift < 2e-3 && m.in_place, "{walls:?} {mode:?}: drift {}", m.body_drift);
                assert!((run.support_force() / (10.0 * 9.81) - 1.0).abs() < 1e-3, "{walls:?} {mode:?}");
            }
        }
    }

    /// A rod hinged to the world at one end swings down under gravity until its limit stops
    /// it; solverlab's joint error of Rapier's state (which reads the limit as solverlab does,
    /// the angle of b relative to a) stays small, so both read the angle the same way round.
    #[test]
    fn revolute_limits_have_solverlabs_sign() {
        let mut scene = Scene::new("hinge");
        scene.rigid.push(RigidBody::new(
            Shape::Box { half: Vec3::new(0.5, 0.05, 0.05) },
            1.0,
            Vec3::new(0.5, 0.0, 0.0),
        ));
        // Falling turns the rod by a negative angle about z, so b (the world) turns by a
        // positive angle relative to a: the upper limit stops it.
        scene.joints.push(Joint {
            kind: JointKind::Revolute { axis: Vec3::z(), lower: -1.0, upper: 0.3 },
            a: 0,
            b: None,
            anchor: Vec3::zeros(),
            anchor_b: None,
            compliance: 0.0,
        });
        let mut run = RapierRun::new(&scene, Mode::Matched, Walls::Slabs).expect("a rigid scene");
        for _ in 0..180 {
            run.step();
        }
        let s = run.state();
        let turned = s.rigid[0].q.scaled_axis().z;
        assert!((turned + 0.3).abs() < 0.02, "the rod turned by {turned} rad, not −0.3");
        assert!(run.metrics().max_violation < 0.02, "joint error {}", run.metrics().max_violation);
    }

    /// A ball joint between two bodies and one to the world hold their anchors, and the joined
    /// bodies do not collide (they overlap at the start and stay put without gravity).
    #[test]
    fn joints_hold_and_joined_bodies_do_not_collide() {
        let mut scene = Scene::new("pair");
        scene.gravity = Vec3::new(0.0, -9.81, 0.0);
        let half = Vec3::new(0.3, 0.1, 0.1);
        scene.rigid.push(RigidBody::new(Shape::Box { half }, 1.0, Vec3::new(0.3, 0.0, 0.0)));
        scene.rigid.push(RigidBody::new(Shape::Box { half }, 1.0, Vec3::new(0.8, 0.0, 0.0)));
        let ball = |a, b, x: f64| Joint {
            kind: JointKind::Ball,
            a,
            b,
            anchor: Vec3::new(x, 0.0, 0.0),
            anchor_b: None,
            compliance: 0.0,
        };
        scene.joints.push(ball(0, None, 0.0));
        scene.joints.push(ball(0, Some(1), 0.55));
        let mut run = RapierRun::new(&scene, Mode::Defaults, Walls::Slabs).expect("a rigid scene");
        let (mut worst, mut lowest) = (0.0_f64, 0.0_f64);
        for _ in 0..120 {
            run.step();
            worst = worst.max(run.metrics().max_violation);
            lowest = lowest.min(run.state().rigid[1].x.y);
        }
        assert!(worst < 0.02, "joint error {worst}");
        // The pair swung down: the far body went well below its start.
        assert!(lowest < -0.3, "{lowest}");
    }

    /// A removed body leaves when solverlab's would, and the metrics leave it out (they would
    /// count it 1000 m away, parked, otherwise).
    #[test]
    fn removals_follow_solverlab() {
        let scene = solverlab_scenes::resolve("rigid-warm-start-energy", &[]).expect("a builtin");
        let mut run = RapierRun::new(&scene, Mode::Matched, Walls::Slabs).expect("a rigid scene");
        for frame in 1..=150 {
            run.step();
            let m = run.metrics();
            assert!(m.body_drift < 1.0, "frame {frame}: drift {}", m.body_drift);
            assert_eq!(run.state().rigid[2].asleep, frame > 120, "frame {frame}");
        }
    }

    #[test]
    fn particles_are_refused() {
        let mut scene = Scene::new("cloth");
        scene.add(Particle::new(Vec3::zeros(), 1.0));
        assert!(RapierRun::new(&scene, Mode::Matched, Walls::Slabs).is_err());
    }

    #[test]
    fn half_open_limits() {
        assert_eq!(limits(f64::NEG_INFINITY, f64::INFINITY), None);
        assert_eq!(limits(-1.0, 2.0), Some([-1.0, 2.0]));
        let [lo, hi] = limits(0.5, f64::INFINITY).expect("a limit");
        assert!(lo == 0.5 && hi > 0.5 + 6.0 && hi < 0.5 + 2.0 * std::f64::consts::PI);
    }
}
