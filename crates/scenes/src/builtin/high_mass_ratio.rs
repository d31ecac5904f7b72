//! Solver2D's three high-mass-ratio scenes (Catto 2024, `samples/collection/sample_contact.cpp`:
//! "High Mass Ratio 1, 2, 3"), in 3-D with 6-DoF rigid boxes, gravity −10 m/s² and Solver2D's
//! lengths in metres.
//!
//! * `high-mass-ratio-1`: three pyramids of base 10 of cubes of half extent 1 m and density
//!   1 kg/m³ (8 kg each), whose top box is 100, 200 and 300 times denser; the top box starts
//!   `drop` = 2 m above its resting place, as in Solver2D. Rows touch side by side (no gap), each
//!   row shifted by half a box. `pyramid = 1, 2 or 3` keeps only that pyramid.
//! * `high-mass-ratio-2`: a 20 × 20 m box dropped from 15 m onto two 1 m boxes 18 m apart on the
//!   floor. Every body is `depth` deep (default 1 m, the 2-D scene extruded), so the big box is
//!   400 times the mass of a small one as in 2-D (as cubes it would be 8 000 times).
//!   `supports = 1` puts one small box under the big box's centre instead.
//! * `high-mass-ratio-3`: the same resting on one box: Solver2D's third scene differs from the
//!   second only in its ground, a fixed 80 × 4 m box instead of a segment, so here the ground is a
//!   fixed rigid box (box-box contacts) instead of the floor plane (box-plane contacts).
//!
//! Friction: 0.5 in the first (Solver2D sets it), 0.6 in the others (Solver2D's default). Units:
//! Solver2D's densities are areal (kg/m²); here they are kg/m³, which keeps every mass ratio.

use solverlab_core::rigid::{RigidBody, Shape};
use solverlab_core::{Plane, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// Solver2D's gravity (m/s²), along −y.
pub(crate) const GRAVITY: f64 = 10.0;

/// The three-pyramid entry.
pub const PYRAMIDS: Builtin = Builtin {
    name: "high-mass-ratio-1",
    summary: "three pyramids of base 10 of 2 m boxes, the top box 100, 200 and 300 times denser, dropped 2 m",
    source: "Solver2D (Catto 2024: high mass ratio 1)",
    params: pyramids_params,
    build: build_pyramids,
};

/// The big box on two small ones.
pub const ON_TWO: Builtin = Builtin {
    name: "high-mass-ratio-2",
    summary: "a 20 × 20 m box (400× the mass) dropped 15 m onto two 1 m boxes 18 m apart",
    source: "Solver2D (Catto 2024: high mass ratio 2)",
    params: big_box_params,
    build: build_on_two,
};

/// The same on a ground box.
pub const ON_GROUND_BOX: Builtin = Builtin {
    name: "high-mass-ratio-3",
    summary: "high-mass-ratio-2 with the ground a fixed 80 × 4 m box instead of the floor plane",
    source: "Solver2D (Catto 2024: high mass ratio 3)",
    params: big_box_params,
    build: build_on_ground_box,
};

/// A Solver2D scene: gravity −10 m/s² along y.
pub(crate) fn solver2d_scene(name: &str) -> Scene {
    let mut scene = Scene::new(name);
    scene.gravity = Vec3::new(0.0, -GRAVITY, 0.0);
    scene
}

/// The floor `y ≥ 0` with friction `mu`.
pub(crate) fn floor(scene: &mut Scene, mu: f64) {
    scene.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: mu, restitution: 0.0 });
}

/// A movable box of half extents `half` and `density` (kg/m³) at `x`, friction `mu`.
pub(crate) fn dense_box(half: Vec3, density: f64, x: Vec3, mu: f64) -> RigidBody {
    let shape = Shape::Box { half };
    let mut b = RigidBody::new(shape, density * shape.volume(), x);
    b.friction = mu;
    b
}

fn pyramids_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num(
            "pyramid",
            0.0,
            "0: all three; 1, 2 or 3: only the pyramid whose top is 100, 200 or 300× denser",
        ),
        ParamSpec::num("base", 10.0, "boxes in each pyramid's bottom row"),
        ParamSpec::num("extent", 1.0, "half extent of every box (m)"),
        ParamSpec::num("ratio", 100.0, "density of pyramid j's top box is j × ratio times the others' (j = 1, 2, 3)"),
        ParamSpec::num("drop", 2.0, "gap under each top box at the start (m)"),
        ParamSpec::num("friction", 0.5, "friction μ of the boxes and the floor"),
    ]
}

/// Solver2D's layout: pyramid j (0, 1, 2) is offset by `−20e + 2(base + 1)·e·j` along x; in a
/// row of `count` boxes, box i sits at `x = 2(i − count/2)·e + offset`; rows are `2e` apart.
fn build_pyramids(p: &Params) -> Result<Scene, ParamError> {
    let which = p.count("pyramid", 0, 3)?;
    let base = p.count("base", 1, 100)?;
    let e = p.positive("extent")?;
    let ratio = p.positive("ratio")?;
    let drop = p.non_negative("drop")?;
    let mu = p.non_negative("friction")?;
    let mut scene = solver2d_scene("high-mass-ratio-1");
    floor(&mut scene, mu);
    for j in 0..3 {
        if which != 0 && which != j + 1 {
            continue;
        }
        let offset = -20.0 * e + 2.0 * (base as f64 + 1.0) * e * j as f64;
        let mut y = e;
        for count in (1..=base).rev() {
            for i in 0..count {
                let x = 2.0 * (i as f64 - 0.5 * count as f64) * e + offset;
                let (yy, density) = if count == 1 { (y + drop, (j + 1) as f64 * ratio) } else { (y, 1.0) };
                scene.rigid.push(dense_box(Vec3::repeat(e), density, Vec3::new(x, yy, 0.0), mu));
            }
            y += 2.0 * e;
        }
    }
    Ok(scene)
}

fn big_box_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("size", 20.0, "edge of the big box (m); the small boxes are 1 m"),
        ParamSpec::num("span", 18.0, "distance between the small boxes' centres (m)"),
        ParamSpec::num("supports", 2.0, "small boxes: 2 (at ±span/2) or 1 (under the big box's centre)"),
        ParamSpec::num("drop", 15.0, "gap under the big box at the start (m)"),
        ParamSpec::num("depth", 1.0, "depth of every body along z (m)"),
        ParamSpec::num("friction", 0.6, "friction μ of every body and the ground"),
    ]
}

/// Two 1 m boxes at `x = ±span/2` (or one at x = 0) on the ground (its top at y = 0) and the big
/// box above them.
fn big_box_on_two(name: &str, p: &Params) -> Result<Scene, ParamError> {
    let size = p.positive("size")?;
    let span = p.non_negative("span")?;
    let supports: &[f64] = match p.count("supports", 1, 2)? {
        1 => &[0.0],
        _ => &[-0.5, 0.5],
    };
    let drop = p.non_negative("drop")?;
    let depth = p.positive("depth")?;
    let mu = p.non_negative("friction")?;
    let mut scene = solver2d_scene(name);
    let small = Vec3::new(0.5, 0.5, depth / 2.0);
    for x in supports {
        scene.rigid.push(dense_box(small, 1.0, Vec3::new(x * span, 0.5, 0.0), mu));
    }
    let big = Vec3::new(size / 2.0, size / 2.0, depth / 2.0);
    scene.rigid.push(dense_box(big, 1.0, Vec3::new(0.0, 1.0 + drop + size / 2.0, 0.0), mu));
    Ok(scene)
}

fn build_on_two(p: &Params) -> Result<Scene, ParamError> {
    let mut scene = big_box_on_two("high-mass-ratio-2", p)?;
    floor(&mut scene, p.num("friction"));
    Ok(scene)
}

/// The ground is a fixed box of 80 × 4 m (and 10 m deep) whose top face is y = 0.
fn build_on_ground_box(p: &Params) -> Result<Scene, ParamError> {
    let mut scene = big_box_on_two("high-mass-ratio-3", p)?;
    let mut ground = RigidBody::fixed(Shape::Box { half: Vec3::new(40.0, 2.0, 5.0) }, Vec3::new(0.0, -2.0, 0.0));
    ground.friction = p.num("friction");
    scene.rigid.insert(0, ground);
    Ok(scene)
}
