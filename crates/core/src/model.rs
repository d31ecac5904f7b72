//! The scene model: particles, constraints and world colliders, in SI units.
//!
//! A [`Scene`] is immutable during a run; the moving part is a [`State`] (positions and previous
//! positions, Jakobsen's `x` and `x*`). Keeping them apart lets an experiment freeze a state and
//! hand identical copies to several solvers.

use crate::Vec3;

/// One particle as it is described in a scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Particle {
    /// Initial position (m).
    pub x: Vec3,
    /// Initial velocity (m/s).
    pub v: Vec3,
    /// Inverse mass `w = 1/m` (1/kg); `0` makes the particle immovable.
    pub w: f64,
    /// Collision radius (m) against colliders; `0` is a point.
    pub radius: f64,
}

impl Particle {
    /// A movable particle of mass `mass` (kg) at rest at `x`.
    pub fn new(x: Vec3, mass: f64) -> Self {
        Self { x, v: Vec3::zeros(), w: 1.0 / mass, radius: 0.0 }
    }

    /// An immovable particle (`w = 0`) at `x`.
    pub fn fixed(x: Vec3) -> Self {
        Self { x, v: Vec3::zeros(), w: 0.0, radius: 0.0 }
    }

    /// The mass (kg); infinite for immovable particles.
    pub fn mass(&self) -> f64 {
        if self.w > 0.0 {
            1.0 / self.w
        } else {
            f64::INFINITY
        }
    }
}

/// Which side of `rest` a stick accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sense {
    /// `|xb − xa| = rest`: Jakobsen's stick (bilateral).
    Equal,
    /// `|xb − xa| ≥ rest`: Jakobsen's angle limits and self-collision sticks (unilateral).
    AtLeast,
    /// `|xb − xa| ≤ rest`: a rope (unilateral).
    AtMost,
}

/// What a constraint holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A distance constraint between particles `a` and `b`.
    Stick {
        /// First particle index.
        a: usize,
        /// Second particle index.
        b: usize,
        /// Rest length (m), positive.
        rest: f64,
        /// Equality or one of the unilateral senses.
        sense: Sense,
    },
    /// Particle `a` held at the world point `target + velocity·t` (Jakobsen's IK and dragging).
    ///
    /// On a movable particle this is a constraint with three rows (one per axis). On an
    /// immovable particle (`w = 0`) it is kinematic: the shared integrator moves the particle to
    /// the target before every solve, so no solver sees it.
    Pin {
        /// The particle index.
        a: usize,
        /// Target position at `t = 0` (m).
        target: Vec3,
        /// Target velocity (m/s).
        velocity: Vec3,
    },
}

/// A constraint: a [`Kind`] plus XPBD compliance.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// What the constraint holds.
    pub kind: Kind,
    /// XPBD compliance `α` (m/N), the inverse stiffness; `0` is rigid.
    pub compliance: f64,
}

impl Constraint {
    /// A rigid equality stick between `a` and `b`.
    pub fn stick(a: usize, b: usize, rest: f64) -> Self {
        Self { kind: Kind::Stick { a, b, rest, sense: Sense::Equal }, compliance: 0.0 }
    }

    /// A rigid unilateral stick: `|xb − xa| ≥ rest`.
    pub fn min_distance(a: usize, b: usize, rest: f64) -> Self {
        Self { kind: Kind::Stick { a, b, rest, sense: Sense::AtLeast }, compliance: 0.0 }
    }

    /// A rigid unilateral stick: `|xb − xa| ≤ rest`.
    pub fn max_distance(a: usize, b: usize, rest: f64) -> Self {
        Self { kind: Kind::Stick { a, b, rest, sense: Sense::AtMost }, compliance: 0.0 }
    }

    /// A static pin of particle `a` at `target`.
    pub fn pin(a: usize, target: Vec3) -> Self {
        Self { kind: Kind::Pin { a, target, velocity: Vec3::zeros() }, compliance: 0.0 }
    }

    /// The same constraint with compliance `alpha` (m/N).
    pub fn with_compliance(mut self, alpha: f64) -> Self {
        self.compliance = alpha;
        self
    }
}

/// A half-space particles stay in: `normal·x ≥ offset + radius`.
#[derive(Clone, Debug, PartialEq)]
pub struct Plane {
    /// Unit outward normal (points into the allowed side).
    pub normal: Vec3,
    /// Offset along the normal (m).
    pub offset: f64,
    /// Friction coefficient μ (dimensionless), default 0.
    pub friction: f64,
    /// Restitution e in [0, 1], default 0 (Jakobsen's perfectly inelastic projection).
    pub restitution: f64,
}

/// A solid sphere particles stay outside of.
#[derive(Clone, Debug, PartialEq)]
pub struct Sphere {
    /// Centre (m).
    pub center: Vec3,
    /// Radius (m).
    pub radius: f64,
    /// Friction coefficient μ, default 0.
    pub friction: f64,
    /// Restitution e in [0, 1], default 0.
    pub restitution: f64,
}

/// Jakobsen's box (§3): particles stay inside `[min, max]` on every axis.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxCollider {
    /// Lower corner (m).
    pub min: Vec3,
    /// Upper corner (m).
    pub max: Vec3,
    /// Friction coefficient μ, default 0.
    pub friction: f64,
    /// Restitution e in [0, 1], default 0.
    pub restitution: f64,
}

/// A solid axis-aligned block particles stay outside of: a stair step, a wall, a table.
///
/// Its contact row is the face of least penetration: with the per-axis outside distances
/// `dₖ = max(minₖ − r − xₖ, xₖ − maxₖ − r)`, `C = maxₖ dₖ` and `∇C = ±eₖ` for the maximising
/// axis (negative `C` inside). Outside a block `C` is the largest axis distance, a lower bound on
/// the true distance, which is all a contact margin needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Lower corner (m).
    pub min: Vec3,
    /// Upper corner (m).
    pub max: Vec3,
    /// Friction coefficient μ, default 0.
    pub friction: f64,
    /// Restitution e in [0, 1], default 0.
    pub restitution: f64,
}

/// A scene event: box body `body` leaves the scene at `time` (s), for example the heavy top of
/// a stack (Solver2D's warm-start energy test). From the first step that ends at or after
/// `time`, its particles are parked at rest at their initial positions plus [`PARK_OFFSET`], far
/// from everything, and the metrics leave them out; a removed rigid body is parked the same way,
/// at rest and asleep, so that no solver moves it.
#[derive(Clone, Debug, PartialEq)]
pub struct Removal {
    /// Index into [`Scene::bodies`], or into [`Scene::rigid`] when `rigid`.
    pub body: usize,
    /// Whether `body` names a 6-DoF rigid body.
    pub rigid: bool,
    /// When it leaves (s).
    pub time: f64,
}

/// Where removed bodies wait, relative to their initial positions (m).
pub const PARK_OFFSET: Vec3 = Vec3::new(1000.0, 0.0, 0.0);

/// A point carried by up to four particles, `p = Σ cᵢ xᵢ` with `Σ cᵢ = 1` (Jakobsen §5): a
/// corner of a box embedded in a tetrahedron, a point on a stick. It collides with the world
/// colliders like a particle, and its corrections are spread over the particles by their weights.
#[derive(Clone, Debug, PartialEq)]
pub struct EmbeddedPoint {
    /// The particles (the first `count` are used).
    pub particles: [usize; 4],
    /// The affine weights `cᵢ` (sum 1; may be negative for points outside the particles' hull).
    pub weights: [f64; 4],
    /// How many particles carry it (1 to 4).
    pub count: usize,
}

impl EmbeddedPoint {
    /// The point's position for particle positions `x`.
    pub fn position(&self, x: &[Vec3]) -> Vec3 {
        (0..self.count).map(|k| x[self.particles[k]] * self.weights[k]).sum()
    }
}

/// A complete scene: what is simulated, independent of any solver.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Name, used in file names and CSV columns.
    pub name: String,
    /// Gravity (m/s²), default `[0, −9.81, 0]`.
    pub gravity: Vec3,
    /// Verlet drag in [0, 1): the update is `x' = x + (1 − damping)(x − x*) + a·h²`. Applied per
    /// (sub)step. Default 0.
    pub damping: f64,
    /// Frame step (s), default 1/60.
    pub dt: f64,
    /// The particles.
    pub particles: Vec<Particle>,
    /// The constraints.
    pub constraints: Vec<Constraint>,
    /// Half-space colliders.
    pub planes: Vec<Plane>,
    /// Sphere colliders (particles stay outside).
    pub spheres: Vec<Sphere>,
    /// The optional box particles stay inside.
    pub bounds: Option<BoxCollider>,
    /// Solid blocks particles stay outside of.
    pub blocks: Vec<Block>,
    /// Points carried by particles that collide with the world colliders.
    pub embedded: Vec<EmbeddedPoint>,
    /// Box bodies (tetrahedra of particles) that collide with each other.
    pub bodies: Vec<crate::bodies::BoxBody>,
    /// Bodies that leave the scene during a run.
    pub removals: Vec<Removal>,
    /// 6-DoF rigid bodies ([`crate::rigid`]); they collide with each other and with the world
    /// colliders, not with particles.
    pub rigid: Vec<crate::rigid::RigidBody>,
    /// Joints between rigid bodies, or between a rigid body and the world.
    pub joints: Vec<crate::rigid::Joint>,
}

impl Scene {
    /// An empty scene with the documented defaults.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            gravity: Vec3::new(0.0, -9.81, 0.0),
            damping: 0.0,
            dt: 1.0 / 60.0,
            particles: Vec::new(),
            constraints: Vec::new(),
            planes: Vec::new(),
            spheres: Vec::new(),
            bounds: None,
            blocks: Vec::new(),
            embedded: Vec::new(),
            bodies: Vec::new(),
            removals: Vec::new(),
            rigid: Vec::new(),
            joints: Vec::new(),
        }
    }

    /// Whether each particle belongs to a body removed at or before `time`; `None` when no
    /// body has been removed by then.
    pub fn removed_particles(&self, time: f64) -> Option<Vec<bool>> {
        let mut gone: Option<Vec<bool>> = None;
        for r in self.removals.iter().filter(|r| !r.rigid && r.time <= time) {
            let g = gone.get_or_insert_with(|| vec![false; self.particles.len()]);
            for &i in &self.bodies[r.body].particles {
                g[i] = true;
            }
        }
        gone
    }

    /// Whether rigid body `k` has left the scene at or before `time`.
    pub fn rigid_removed(&self, k: usize, time: f64) -> bool {
        self.removals.iter().any(|r| r.rigid && r.body == k && r.time <= time)
    }

    /// Whether joint `j` still holds at `time`: a joint leaves the scene with either of its
    /// bodies (every family and the metrics skip it from then on).
    pub fn joint_active(&self, j: usize, time: f64) -> bool {
        let joint = &self.joints[j];
        self.removals.is_empty()
            || !(self.rigid_removed(joint.a, time) || joint.b.is_some_and(|b| self.rigid_removed(b, time)))
    }

    /// Adds a particle and returns its index.
    pub fn add(&mut self, p: Particle) -> usize {
        self.particles.push(p);
        self.particles.len() - 1
    }

    /// Adds an equality stick whose rest length is the current distance.
    pub fn stick(&mut self, a: usize, b: usize) -> &mut Constraint {
        let rest = (self.particles[b].x - self.particles[a].x).norm();
        self.constraints.push(Constraint::stick(a, b, rest));
        self.constraints.last_mut().expect("just pushed")
    }

    /// The inverse masses, in particle order.
    pub fn inverse_masses(&self) -> Vec<f64> {
        self.particles.iter().map(|p| p.w).collect()
    }

    /// Whether the scene has any world collider (plane, sphere, box or block).
    pub fn has_colliders(&self) -> bool {
        !self.planes.is_empty() || !self.spheres.is_empty() || self.bounds.is_some() || !self.blocks.is_empty()
    }

    /// Whether the scene has 6-DoF rigid bodies.
    pub fn has_rigid(&self) -> bool {
        !self.rigid.is_empty()
    }

    /// The initial state for a step of `h` seconds: `x* = x − v·h`, so that the Verlet velocity
    /// `(x − x*)/h` equals the scene's initial velocity.
    pub fn initial_state(&self, h: f64) -> State {
        State {
            x: self.particles.iter().map(|p| p.x).collect(),
            x_prev: self.particles.iter().map(|p| p.x - p.v * h).collect(),
            rigid: self.rigid.iter().map(|b| b.initial_state()).collect(),
            time: 0.0,
            step: 0,
        }
    }

    /// Checks the scene's own invariants (indices, masses, finiteness, lengths). The scene-file
    /// loader adds the file name to the message.
    pub fn validate(&self) -> Result<(), ModelError> {
        let n = self.particles.len();
        let finite3 = |v: &Vec3| v.iter().all(|c| c.is_finite());
        let err = |field: String, problem: String| Err(ModelError { field, problem });
        // Finite but absurd magnitudes: the documented ranges (see `RANGES`).
        let far = |v: &Vec3| v.iter().any(|c| c.abs() > MAX_COORDINATE);
        let fast = |v: &Vec3| v.norm() > MAX_SPEED;
        let out_of = |what: &str, value: f64, (lo, hi): (f64, f64), unit: &str| {
            format!("{value:e} {unit} is outside the {what} solverlab accepts, [{lo:e}, {hi:e}] {unit}")
        };
        if !finite3(&self.gravity) {
            return err("gravity".into(), "must be finite".into());
        }
        if !(self.damping >= 0.0 && self.damping < 1.0) {
            return err("damping".into(), format!("{} is outside [0, 1)", self.damping));
        }
        if !(self.dt > 0.0 && self.dt.is_finite()) {
            return err("dt".into(), format!("{} must be a positive number of seconds", self.dt));
        }
        if self.gravity.norm() > MAX_SPEED {
            return err(
                "gravity".into(),
                format!("{:e} m/s² is beyond the {MAX_SPEED:e} m/s² accepted", self.gravity.norm()),
            );
        }
        for (i, p) in self.particles.iter().enumerate() {
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
        for (j, c) in self.constraints.iter().enumerate() {
            if !(c.compliance >= 0.0 && c.compliance.is_finite()) {
                return err(format!("constraint[{j}].compliance"), format!("{} must be ≥ 0", c.compliance));
            }
            match &c.kind {
                Kind::Stick { a, b, rest, .. } => {
                    for (name, idx) in [("a", a), ("b", b)] {
                        if *idx >= n {
                            return err(
                                format!("constraint[{j}].{name}"),
                                format!("particle index {idx} out of range (the scene has {n} particles)"),
                            );
                        }
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
                    if *a >= n {
                        return err(
                            format!("constraint[{j}].a"),
                            format!("particle index {a} out of range (the scene has {n} particles)"),
                        );
                    }
                    if !finite3(target) {
                        return err(format!("constraint[{j}].target"), "must be finite".into());
                    }
                    if !finite3(velocity) {
                        return err(format!("constraint[{j}].velocity"), "must be finite".into());
                    }
                }
            }
        }
        let material = |field: String, mu: f64, e: f64| -> Result<(), ModelError> {
            if !(mu >= 0.0 && mu.is_finite()) {
                return Err(ModelError { field: format!("{field}.friction"), problem: format!("{mu} must be ≥ 0") });
            }
            if !(0.0..=1.0).contains(&e) {
                return Err(ModelError {
                    field: format!("{field}.restitution"),
                    problem: format!("{e} is outside [0, 1]"),
                });
            }
            Ok(())
        };
        for (k, p) in self.planes.iter().enumerate() {
            if !finite3(&p.normal) || p.normal.norm() < 1e-12 {
                return err(format!("plane[{k}].normal"), "must be a finite, non-zero vector".into());
            }
            if !p.offset.is_finite() {
                return err(format!("plane[{k}].offset"), "must be finite".into());
            }
            material(format!("plane[{k}]"), p.friction, p.restitution)?;
        }
        for (k, s) in self.spheres.iter().enumerate() {
            if !finite3(&s.center) {
                return err(format!("sphere[{k}].center"), "must be finite".into());
            }
            if !(s.radius > 0.0 && s.radius.is_finite()) {
                return err(format!("sphere[{k}].radius"), format!("{} must be positive", s.radius));
            }
            material(format!("sphere[{k}]"), s.friction, s.restitution)?;
        }
        for (k, b) in self.blocks.iter().enumerate() {
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
        for (k, r) in self.removals.iter().enumerate() {
            if r.rigid && r.body >= self.rigid.len() {
                return err(
                    format!("removal[{k}].rigid"),
                    format!("rigid index {} out of range (the scene has {} rigid bodies)", r.body, self.rigid.len()),
                );
            }
            if !r.rigid && r.body >= self.bodies.len() {
                return err(
                    format!("removal[{k}].body"),
                    format!("body index {} out of range (the scene has {} bodies)", r.body, self.bodies.len()),
                );
            }
            if !(r.time >= 0.0 && r.time.is_finite()) {
                return err(format!("removal[{k}].time"), format!("{} must be a time ≥ 0 in seconds", r.time));
            }
        }
        for (k, e) in self.embedded.iter().enumerate() {
            if !(1..=4).contains(&e.count) {
                return err(
                    format!("embedded[{k}].particles"),
                    format!("{} particles; an embedded point needs 1 to 4", e.count),
                );
            }
            if let Some(&i) = e.particles[..e.count].iter().find(|&&i| i >= n) {
                return err(
                    format!("embedded[{k}].particles"),
                    format!("particle index {i} out of range (the scene has {n} particles)"),
                );
            }
            let sum: f64 = e.weights[..e.count].iter().sum();
            if !e.weights[..e.count].iter().all(|c| c.is_finite()) || (sum - 1.0).abs() > 1e-9 {
                return err(
                    format!("embedded[{k}].weights"),
                    format!("must be finite and sum to 1 (they sum to {sum})"),
                );
            }
        }
        for (k, b) in self.bodies.iter().enumerate() {
            if let Some(&i) = b.particles.iter().find(|&&i| i >= n) {
                return err(
                    format!("body[{k}].particles"),
                    format!("particle index {i} out of range (the scene has {n} particles)"),
                );
            }
            if !(b.half.iter().all(|h| *h > 0.0 && h.is_finite())) {
                return err(format!("body[{k}].half"), "half extents must be positive".into());
            }
            if !(b.friction >= 0.0 && b.friction.is_finite()) {
                return err(format!("body[{k}].friction"), format!("{} must be ≥ 0", b.friction));
            }
        }
        for (k, b) in self.rigid.iter().enumerate() {
            let f = |name: &str| format!("rigid[{k}].{name}");
            let sizes: Vec<(&str, f64)> = match b.shape {
                crate::rigid::Shape::Box { half } => half.iter().map(|h| ("half_extents", *h)).collect(),
                crate::rigid::Shape::Sphere { radius } => vec![("radius", radius)],
                crate::rigid::Shape::Capsule { radius, half_height } => {
                    vec![("radius", radius), ("half_height", half_height)]
                }
            };
            if let Some((name, size)) =
                sizes.iter().find(|(_, h)| h.is_finite() && *h > 0.0 && !(SIZE.0..=SIZE.1).contains(h))
            {
                return err(f(name), out_of("size", *size, SIZE, "m"));
            }
            match b.shape {
                crate::rigid::Shape::Box { half } => {
                    if !half.iter().all(|h| *h > 0.0 && h.is_finite()) {
                        return err(f("half_extents"), "half extents must be positive lengths (m)".into());
                    }
                }
                crate::rigid::Shape::Sphere { radius } => {
                    if !(radius > 0.0 && radius.is_finite()) {
                        return err(f("radius"), format!("{radius} must be a positive length (m)"));
                    }
                }
                crate::rigid::Shape::Capsule { radius, half_height } => {
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
        let nr = self.rigid.len();
        for (k, j) in self.joints.iter().enumerate() {
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
            if let crate::rigid::JointKind::Revolute { axis, lower, upper } = j.kind {
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
        if let Some(b) = &self.bounds {
            if !finite3(&b.min) || !finite3(&b.max) || (0..3).any(|k| b.min[k] >= b.max[k]) {
                return err("box".into(), "min must be below max on every axis".into());
            }
            material("box".into(), b.friction, b.restitution)?;
        }
        Ok(())
    }
}

/// The largest coordinate a scene may place anything at (m): beyond it, `f64` spacing exceeds a
/// micrometre and the energies overflow long before.
pub const MAX_COORDINATE: f64 = 1e6;
/// The largest speed (m/s) and gravity (m/s²) a scene may start with.
pub const MAX_SPEED: f64 = 1e4;
/// The largest angular speed a rigid body may start with (rad/s).
pub const MAX_SPIN: f64 = 1e4;
/// The masses a particle or rigid body may have (kg).
pub const MASS: (f64, f64) = (1e-9, 1e9);
/// The sizes a rigid body may have (half extents, radii, half heights; m).
pub const SIZE: (f64, f64) = (1e-6, 1e6);
/// Every range [`Scene::validate`] holds a scene to, for the documentation: name, range, unit.
pub const RANGES: [(&str, (f64, f64), &str); 5] = [
    ("coordinate", (-MAX_COORDINATE, MAX_COORDINATE), "m"),
    ("speed, and gravity", (0.0, MAX_SPEED), "m/s, m/s²"),
    ("angular speed", (0.0, MAX_SPIN), "rad/s"),
    ("mass", MASS, "kg"),
    ("size of a rigid body", SIZE, "m"),
];

/// A value that is not allowed: which field, and what is wrong with it. The one error type of
/// scene invariants ([`ModelError`]) and solver settings (`solverlab_solvers::ConfigError`).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// The field path, as in the file: `constraint[3].b`, `omega`.
    pub field: String,
    /// What is wrong.
    pub problem: String,
}

impl FieldError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { field: field.into(), problem: problem.into() }
    }
}

/// A scene invariant that does not hold.
pub type ModelError = FieldError;

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for FieldError {}

/// The moving part of a simulation: Jakobsen's `x` and `x*`.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Current positions (m).
    pub x: Vec<Vec3>,
    /// Previous positions (m); `(x − x*)/h` is the velocity.
    pub x_prev: Vec<Vec3>,
    /// The rigid bodies' poses and velocities, in [`Scene::rigid`] order.
    pub rigid: Vec<crate::rigid::RigidState>,
    /// Simulated time (s) at `x`.
    pub time: f64,
    /// Steps (substeps) taken so far.
    pub step: u64,
}

impl State {
    /// Whether every coordinate is finite.
    pub fn is_finite(&self) -> bool {
        self.x.iter().chain(self.x_prev.iter()).all(|v| v.iter().all(|c| c.is_finite()))
            && self.rigid.iter().all(|r| r.is_finite())
    }
}
