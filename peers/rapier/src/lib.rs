//! Rapier (`rapier3d-f64`) as a peer of solverlab's rigid solvers: the same scenes, the same
//! `steps.csv` columns, and a benchmark that times the two interleaved.
//!
//! * [`world`]: a solverlab scene as a Rapier world, Rapier's four modes (`matched`,
//!   `box2d`, `defaults`, `sleeping`), and Rapier's state read back as a solverlab state;
//! * [`steps`]: solverlab's `steps.csv` columns for a Rapier run;
//! * [`scenes`]: scenes by name or file, and rigid spheres from the `balls` layout;
//! * [`bench`]: the benchmark and its tables; [`meta`]: `meta.json`;
//! * [`threads`]: one thread against two, for both engines (Rapier built with `parallel`).

pub mod bench;
pub mod meta;
pub mod scenes;
pub mod steps;
pub mod threads;
pub mod world;
