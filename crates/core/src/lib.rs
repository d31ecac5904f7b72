//! # solverlab-core
//!
//! The shared ground every solver family stands on:
//!
//! * [`model`]: the scene model (particles, constraints, colliders) in SI units, 3-D, `f64`;
//! * [`constraint`]: constraint maths as pure functions (value, gradient, projection), each with
//!   its derivation written above it;
//! * [`rows`]: scalar constraint rows with stable ids, gathered for the Jacobian-based solvers;
//! * [`broadphase`]: the uniform grid that finds particle-particle and body-body candidates;
//! * [`bodies`]: boxes carried by tetrahedra of particles and their vertex-face contacts;
//! * [`rigid`]: 6-DoF rigid bodies (shapes, inertia, the gyroscopic step, contacts and their
//!   narrow phase);
//! * [`integrate`]: the Verlet prediction of Jakobsen's article, shared by every solver, and the
//!   restitution fix-up of the position-level solvers;
//! * [`solver`]: the [`Solver`] and [`Observer`] traits;
//! * [`metrics`]: per-step measurements (the common violation, penetration, stretch, energy,
//!   momentum);
//! * [`forces`]: constraint forces in newtons from any solver's multipliers;
//! * [`sim`]: the frame loop with substeps, the one place that calls a solver;
//! * [`rng`] and [`hash`]: seeded randomness and the state hash that make runs reproducible.
//!
//! Data flows one way: a [`Scene`] and a [`State`] go into [`sim::Simulation`], which predicts,
//! calls the solver, measures and hands a [`sim::FrameReport`] back to whoever records it.

pub mod bodies;
pub mod broadphase;
pub mod constraint;
pub mod forces;
pub mod hash;
pub mod integrate;
pub mod metrics;
pub mod model;
pub mod names;
pub mod par;
pub mod rigid;
pub mod rng;
pub mod rows;
pub mod sim;
pub mod solver;

/// A 3-D vector of `f64`, the only vector type the particle maths uses.
pub type Vec3 = nalgebra::Vector3<f64>;

pub use model::{Block, BoxCollider, Constraint, EmbeddedPoint, Kind, Particle, Plane, Scene, Sense, Sphere, State};
pub use model::{FieldError, ModelError};
pub use solver::{IterationReport, LinearSystem, NullObserver, Observer, SolveError, SolveInfo, Solver, StepContext};
