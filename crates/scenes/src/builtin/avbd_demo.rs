//! The stack of growing boxes from the AVBD authors' two-dimensional demo (Giles, Diaz and Yuksel
//! 2025, "Augmented Vertex Block Descent", and its demo's "Stack Ratio" scene), in 3-D with
//! 6-DoF rigid boxes.
//!
//! `stack-ratio`: `boxes` boxes stacked on the floor, each `grow` times wider and taller than the
//! one below it and all `depth` deep (the 2-D scene extruded), of one density, so that each box
//! is `grow²` times heavier than the one it rests on: with the defaults (6 boxes doubling from
//! 1 m) the top box of 32 × 32 × 1 m weighs 1 024 times the bottom one, the paper's 1 024:1
//! stack. Each box rests exactly on the one below (the demo's integer layout leaves its first
//! pair half a metre inside each other; here no box starts in contact deeper than zero).

use solverlab_core::rigid::{RigidBody, Shape};
use solverlab_core::{Plane, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The stack of growing boxes.
pub const STACK_RATIO: Builtin = Builtin {
    name: "stack-ratio",
    summary: "boxes stacked largest on top, each 2× the edge and 4× the mass of the one below (1 024:1 for 6)",
    source: "Giles, Diaz and Yuksel 2025 (AVBD), the authors' demo: stack ratio",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("boxes", 6.0, "number of boxes"),
        ParamSpec::num("size", 1.0, "edge of the bottom box (m)"),
        ParamSpec::num("grow", 2.0, "each box's width and height over the one's below it"),
        ParamSpec::num("depth", 1.0, "depth of every box along z (m)"),
        ParamSpec::num("density", 1.0, "density of every box (kg/m³)"),
        ParamSpec::num("friction", 0.5, "friction μ of the boxes and the floor"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let n = p.count("boxes", 1, 12)?;
    let size = p.positive("size")?;
    let grow = p.positive("grow")?;
    let depth = p.positive("depth")?;
    let density = p.positive("density")?;
    let mu = p.non_negative("friction")?;
    let mut scene = Scene::new("stack-ratio");
    scene.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: mu, restitution: 0.0 });
    let (mut edge, mut bottom) = (size, 0.0);
    for _ in 0..n {
        let shape = Shape::Box { half: Vec3::new(edge / 2.0, edge / 2.0, depth / 2.0) };
        let mut b = RigidBody::new(shape, density * shape.volume(), Vec3::new(0.0, bottom + edge / 2.0, 0.0));
        b.friction = mu;
        scene.rigid.push(b);
        bottom += edge;
        edge *= grow;
    }
    Ok(scene)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_box_is_1024_times_the_bottom_one_and_every_box_rests_on_the_one_below() {
        let s = build(&Params::defaults(&params())).unwrap();
        assert_eq!(s.rigid.len(), 6);
        let ratio = s.rigid[5].mass() / s.rigid[0].mass();
        assert!((ratio - 1024.0).abs() < 1e-9, "{ratio}");
        for w in s.rigid.windows(2) {
            let (Shape::Box { half: a }, Shape::Box { half: b }) = (w[0].shape, w[1].shape) else { panic!() };
            let gap = (w[1].x.y - b.y) - (w[0].x.y + a.y);
            assert!(gap.abs() < 1e-12, "{gap}");
        }
        let Shape::Box { half } = s.rigid[0].shape else { panic!() };
        assert!((s.rigid[0].x.y - half.y).abs() < 1e-12);
    }
}
