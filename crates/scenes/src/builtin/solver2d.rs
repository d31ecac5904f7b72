//! Four of Solver2D's contact scenes (Catto 2024, `samples/collection/sample_contact.cpp`) in
//! 3-D with 6-DoF rigid bodies, Solver2D's lengths in metres and its densities read as kg/m³
//! (which keeps every mass ratio), gravity −10 m/s² where the scene has gravity.
//!
//! * `double-domino`: 15 dominoes of half extents 0.125 × 0.5 m (and `depth`/2 along z), 1 m
//!   apart on the floor, density 1 kg/m³, μ = 0.6; the first is pushed at its top by an impulse
//!   of 0.2 N·s per metre of depth (Solver2D's 0.2 N·s on its 0.25 kg domino), so that it starts
//!   at Solver2D's speeds: 0.8 m/s and 4.5 rad/s.
//! * `circle-stack`: 10 spheres of radius 1 m dropped in a column, centres at 4 + 3i m: each
//!   falls onto the one below, and a stack of spheres only stands if the solver keeps it exactly
//!   symmetric.
//! * `confined`: a `grid` × `grid` layer (default 25 × 25: 625) of spheres of radius 0.5 m,
//!   0.72 m apart (so neighbours start 0.28 m inside each other), in a closed box 20 m wide and
//!   19.5 m high whose front and back walls hold the layer (one diameter deep); no gravity. The
//!   spheres cannot all fit (they cover 126 % of the box's area): the solver must keep the
//!   unsatisfiable overlaps quiet, not blow up.
//! * `rush`: `count` (400) spheres of radius 0.5 m, density 100, μ = 0.2, on a spiral from 5 m
//!   out (0.2 rad and 5 cm further out per sphere) around a fixed sphere of radius 0.5 m, no
//!   gravity. Solver2D pulls every sphere to the centre with a force of 1000 N each step;
//!   solverlab's scenes have no central force, so here each sphere starts moving towards the
//!   centre at `speed` (10 m/s: Solver2D's alternative, there set every step), and once the
//!   spheres have met nothing pulls them further: a pile-up at the centre, not a sustained
//!   squeeze.

use solverlab_core::model::BoxCollider;
use solverlab_core::rigid::{RigidBody, Shape};
use solverlab_core::{Scene, Vec3};

use super::high_mass_ratio::{dense_box, floor, solver2d_scene};
use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The domino entry.
pub const DOUBLE_DOMINO: Builtin = Builtin {
    name: "double-domino",
    summary: "15 dominoes 0.25 × 1 m, 1 m apart, μ 0.6, the first pushed at its top",
    source: "Solver2D (Catto 2024: double domino)",
    params: domino_params,
    build: build_domino,
};

/// The sphere-stack entry.
pub const CIRCLE_STACK: Builtin = Builtin {
    name: "circle-stack",
    summary: "10 spheres of radius 1 m dropped in a column onto the floor",
    source: "Solver2D (Catto 2024: circle stack)",
    params: circle_params,
    build: build_circles,
};

/// The confined entry.
pub const CONFINED: Builtin = Builtin {
    name: "confined",
    summary: "a layer of 25 × 25 overlapping spheres packed in a closed box, no gravity",
    source: "Solver2D (Catto 2024: confined)",
    params: confined_params,
    build: build_confined,
};

/// The rush entry.
pub const RUSH: Builtin = Builtin {
    name: "rush",
    summary: "400 dense spheres on a spiral rushing at 10 m/s to a fixed sphere at the centre, no gravity",
    source: "Solver2D (Catto 2024: rush; there a central force, here an initial inward speed)",
    params: rush_params,
    build: build_rush,
};

fn domino_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("count", 15.0, "dominoes"),
        ParamSpec::num("depth", 1.0, "domino depth along z (m)"),
        ParamSpec::num("impulse", 0.2, "push along +x on the first domino's top, per metre of depth (N·s/m)"),
        ParamSpec::num("friction", 0.6, "friction μ of the dominoes and the floor"),
    ]
}

/// Domino i at `x = −count/2 + i`, `y = 0.5`; the impulse `J` along +x at the first domino's
/// top gives it `v = J/m` and `ω = I⁻¹ (r × J)` with `r = (0, 0.5, 0)`.
fn build_domino(p: &Params) -> Result<Scene, ParamError> {
    let count = p.count("count", 1, 10_000)?;
    let depth = p.positive("depth")?;
    let impulse = p.num("impulse");
    if !impulse.is_finite() {
        return Err(ParamError::new("impulse", format!("{impulse} must be finite (N·s)")));
    }
    let mu = p.non_negative("friction")?;
    let mut scene = solver2d_scene("double-domino");
    floor(&mut scene, mu);
    let half = Vec3::new(0.125, 0.5, depth / 2.0);
    for i in 0..count {
        let x = -0.5 * count as f64 + i as f64;
        let mut b = dense_box(half, 1.0, Vec3::new(x, 0.5, 0.0), mu);
        if i == 0 {
            let j = Vec3::new(impulse * depth, 0.0, 0.0);
            b.v = j * b.inv_mass;
            b.w = Vec3::new(0.0, 0.5, 0.0).cross(&j).component_mul(&b.inv_inertia);
        }
        scene.rigid.push(b);
    }
    Ok(scene)
}

fn circle_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("count", 10.0, "spheres"),
        ParamSpec::num("radius", 1.0, "sphere radius (m)"),
        ParamSpec::num("spacing", 3.0, "distance between the centres at the start (m); the lowest starts at 4 m"),
        ParamSpec::num("friction", 0.6, "friction μ of the spheres and the floor"),
    ]
}

fn sphere(radius: f64, density: f64, x: Vec3, mu: f64) -> RigidBody {
    let shape = Shape::Sphere { radius };
    let mut b = RigidBody::new(shape, density * shape.volume(), x);
    b.friction = mu;
    b
}

fn build_circles(p: &Params) -> Result<Scene, ParamError> {
    let count = p.count("count", 1, 10_000)?;
    let r = p.positive("radius")?;
    let spacing = p.positive("spacing")?;
    let mu = p.non_negative("friction")?;
    let mut scene = solver2d_scene("circle-stack");
    floor(&mut scene, mu);
    for i in 0..count {
        scene.rigid.push(sphere(r, 1.0, Vec3::new(0.0, 4.0 + spacing * i as f64, 0.0), mu));
    }
    Ok(scene)
}

fn confined_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("grid", 25.0, "spheres along each side of the layer"),
        ParamSpec::num("friction", 0.6, "friction μ of the spheres and the walls"),
    ]
}

/// Sphere (c, r) at `(−8.75 + 0.72c, 1.5 + 0.72r, 0)` as in Solver2D (its 18/25 m pitch); the
/// box spans x in [−10, 10], y in [0.5, 20] and z in [−0.5, 0.5] for the default grid, and keeps
/// Solver2D's margins (1.25 m on the left, 1 m at the bottom) around a grid of another size.
fn build_confined(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("grid", 1, 200)?;
    let mu = p.non_negative("friction")?;
    let (r, pitch) = (0.5, 0.72);
    let mut scene = solver2d_scene("confined");
    scene.gravity = Vec3::zeros();
    let (x0, y0) = (-8.75, 1.5);
    let width = 20.0 * n as f64 / 25.0;
    let height = 19.5 * n as f64 / 25.0;
    scene.bounds = Some(BoxCollider {
        min: Vec3::new(x0 - 1.25, y0 - 1.0, -r),
        max: Vec3::new(x0 - 1.25 + width, y0 - 1.0 + height, r),
        friction: mu,
        restitution: 0.0,
    });
    for c in 0..n {
        for row in 0..n {
            scene.rigid.push(sphere(r, 1.0, Vec3::new(x0 + pitch * c as f64, y0 + pitch * row as f64, 0.0), mu));
        }
    }
    Ok(scene)
}

fn rush_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("count", 400.0, "spheres on the spiral"),
        ParamSpec::num("speed", 10.0, "initial speed of every sphere towards the centre (m/s)"),
        ParamSpec::num("density", 100.0, "density of the spheres (kg/m³)"),
        ParamSpec::num("friction", 0.2, "friction μ of the spheres"),
    ]
}

/// Sphere i at distance `5 + 0.05i` m and angle `0.2i` rad in the xy plane, moving at `speed`
/// towards the origin, where a fixed sphere of radius 0.5 m sits.
fn build_rush(p: &Params) -> Result<Scene, ParamError> {
    let count = p.count("count", 1, 100_000)?;
    let speed = p.non_negative("speed")?;
    let density = p.positive("density")?;
    let mu = p.non_negative("friction")?;
    let mut scene = solver2d_scene("rush");
    scene.gravity = Vec3::zeros();
    let mut centre = RigidBody::fixed(Shape::Sphere { radius: 0.5 }, Vec3::zeros());
    centre.friction = mu;
    scene.rigid.push(centre);
    let (mut distance, mut angle) = (5.0f64, 0.0f64);
    for _ in 0..count {
        let x = Vec3::new(distance * angle.cos(), distance * angle.sin(), 0.0);
        let mut b = sphere(0.5, density, x, mu);
        b.v = -x / distance * speed;
        scene.rigid.push(b);
        angle += 0.2;
        distance += 0.05;
    }
    Ok(scene)
}
