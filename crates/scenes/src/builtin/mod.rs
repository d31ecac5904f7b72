//! The builtin scenes, one module each, each naming its source.
//!
//! Units are SI throughout. Jakobsen's examples use a box of 1000 units and a stick of 100; the
//! builtins scale these to a 10 m box and 1 m stick, which keeps the ratios.

pub mod avbd_demo;
pub mod balls;
pub mod box_stack;
pub mod chain;
pub mod cloth;
pub mod embedded_box;
pub mod high_mass_ratio;
pub mod hinge;
pub mod incline;
pub mod particles_in_box;
pub mod pendulum;
pub mod plant;
pub mod ragdoll;
pub mod rigid;
pub mod solver2d;
pub mod solver2d_chains;
pub mod spring;
pub mod stick_in_box;
pub mod tetrahedron;

use solverlab_core::Scene;

use crate::params::{ParamError, ParamSpec, Params};

/// A builtin scene: its name, what it is, where it comes from, its parameters and its builder.
#[derive(Clone, Copy)]
pub struct Builtin {
    /// The name used on the command line.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// The section or figure it comes from.
    pub source: &'static str,
    /// Its parameters with defaults.
    pub params: fn() -> Vec<ParamSpec>,
    /// Builds it from resolved parameters.
    pub build: fn(&Params) -> Result<Scene, ParamError>,
}

/// Every builtin, in the order `solverlab scene list` shows them.
pub fn builtins() -> Vec<Builtin> {
    vec![
        particles_in_box::BUILTIN,
        stick_in_box::BUILTIN,
        cloth::BUILTIN,
        plant::BUILTIN,
        chain::BUILTIN,
        pendulum::BUILTIN,
        tetrahedron::BUILTIN,
        ragdoll::BUILTIN,
        ragdoll::STAIRS,
        hinge::BUILTIN,
        spring::BUILTIN,
        incline::BUILTIN,
        balls::BUILTIN,
        embedded_box::BUILTIN,
        box_stack::BUILTIN,
        box_stack::PYRAMID,
        box_stack::WARM_START_ENERGY,
        rigid::STACK,
        rigid::PYRAMID,
        rigid::SLIDE,
        rigid::ROLLING_SPHERE,
        rigid::TUMBLING_BOX,
        rigid::RAMP,
        rigid::CHAIN,
        rigid::BRIDGE,
        rigid::CARD_HOUSE,
        rigid::ARCH,
        rigid::RAGDOLL,
        rigid::JOINT_GRID,
        rigid::WARM_START_ENERGY,
        high_mass_ratio::PYRAMIDS,
        high_mass_ratio::ON_TWO,
        high_mass_ratio::ON_GROUND_BOX,
        solver2d_chains::BALL_AND_CHAIN,
        solver2d_chains::STRETCHED_CHAIN,
        solver2d::DOUBLE_DOMINO,
        solver2d::CIRCLE_STACK,
        solver2d::CONFINED,
        solver2d::RUSH,
        avbd_demo::STACK_RATIO,
    ]
}

/// The builtin called `name`.
pub fn find(name: &str) -> Option<Builtin> {
    builtins().into_iter().find(|b| b.name == name)
}

/// Builds a builtin with its default parameters.
pub fn default_scene(name: &str) -> Scene {
    let b = find(name).unwrap_or_else(|| panic!("no builtin `{name}`"));
    (b.build)(&Params::defaults(&(b.params)())).unwrap_or_else(|e| panic!("builtin `{name}` defaults: {:?}", e.problem))
}
