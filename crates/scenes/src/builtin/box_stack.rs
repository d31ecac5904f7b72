//! A vertical stack of boxes on the floor (Solver2D, Catto 2024: "vertical stack (15 boxes, μ 0.3,
//! ±0.01 offsets)"; "high mass ratio (heavy box 100–400× on light ones)"). Every box is a
//! tetrahedron of particles carrying a cube ([`solverlab_core::bodies`]): its four other corners
//! are embedded points against the floor, and boxes touch each other through vertex-face
//! contacts. Boxes alternate ±`offset` along x; with `ratio ≠ 1` the top box is `ratio` times
//! heavier than the others.

use solverlab_core::bodies::{weights, BoxBody};
use solverlab_core::model::{Removal, RemovedBody};
use solverlab_core::{EmbeddedPoint, Particle, Plane, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "box-stack",
    summary: "a vertical stack of boxes (tetrahedra carrying cubes), optional heavy top box",
    source: "Solver2D (Catto 2024: vertical stack, high mass ratio); Jakobsen 2001, §5",
    params,
    build,
};

/// The pyramid entry.
pub const PYRAMID: Builtin = Builtin {
    name: "box-pyramid",
    summary: "a pyramid of boxes (tetrahedra carrying cubes), base row of `base` boxes",
    source: "Solver2D (Catto 2024: pyramid); Jakobsen 2001, §5",
    params: pyramid_params,
    build: build_pyramid,
};

/// The warm-start energy entry.
pub const WARM_START_ENERGY: Builtin = Builtin {
    name: "warm-start-energy",
    summary: "three stacked boxes, the top one `ratio` times denser, removed at `remove_at`",
    source: "Solver2D (Catto 2024: warm start energy, densities 1, 1, 100, top removed mid-run)",
    params: energy_params,
    build: build_energy,
};

pub(crate) fn energy_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("ratio", 100.0, "density of the top box divided by the others'"),
        ParamSpec::num("remove_at", 2.0, "when the top box leaves the scene (s)"),
        ParamSpec::num("size", 0.5, "box edge (m)"),
        ParamSpec::num("mass", 10.0, "mass of each light box (kg)"),
        ParamSpec::num("friction", 0.5, "friction μ of the floor and between boxes"),
    ]
}

/// Three boxes resting on each other on the floor; the top one, `ratio` times heavier, is
/// removed at `remove_at`. A solver that warm-starts the lower contacts with the impulses that
/// carried the heavy box pushes the light boxes up in the step after the removal.
fn build_energy(p: &Params) -> Result<Scene, ParamError> {
    let (l, remove_at) = energy_layout(p)?;
    let mut scene = Scene::new("warm-start-energy");
    for &(centre, m) in &l.boxes {
        add_box(&mut scene, centre, l.size, m, l.friction);
    }
    scene.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: l.friction, restitution: 0.0 });
    scene.removals.push(Removal { body: RemovedBody::BoxBody(2), time: remove_at });
    Ok(scene)
}

/// The three boxes of the warm-start test (the top one `ratio` times heavier) and when the top
/// one leaves (s); shared with the rigid twin, `rigid-warm-start-energy`.
pub(crate) fn energy_layout(p: &Params) -> Result<(Layout, f64), ParamError> {
    let size = p.positive("size")?;
    let mass = p.positive("mass")?;
    let ratio = p.positive("ratio")?;
    let boxes = [mass, mass, mass * ratio]
        .into_iter()
        .enumerate()
        .map(|(i, m)| (Vec3::new(0.0, size / 2.0 + i as f64 * size, 0.0), m))
        .collect();
    Ok((Layout { boxes, size, friction: p.non_negative("friction")? }, p.non_negative("remove_at")?))
}

/// The parameters of the pyramid (shared with its rigid twin, `rigid-pyramid`).
pub(crate) fn pyramid_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("base", 10.0, "boxes in the bottom row (the pyramid has base·(base+1)/2)"),
        ParamSpec::num("size", 0.5, "box edge (m)"),
        ParamSpec::num("spacing", 0.05, "horizontal gap between neighbouring boxes in a row (m)"),
        ParamSpec::num("mass", 10.0, "mass of each box (kg)"),
        ParamSpec::num("friction", 0.5, "friction μ of the floor and between boxes"),
    ]
}

/// Where the boxes of a stack or a pyramid go, read from its parameters: shared by the particle
/// builders here and the rigid ones (`rigid-stack`, `rigid-pyramid`), so the twins are the same
/// scene.
pub(crate) struct Layout {
    /// Each box's centre (m) and mass (kg).
    pub boxes: Vec<(Vec3, f64)>,
    /// Box edge (m).
    pub size: f64,
    /// Friction μ of the floor and of every box.
    pub friction: f64,
}

/// Row `r` (0 at the bottom) holds `base − r` boxes centred on x = 0, `size + spacing` apart,
/// each resting on the two below it.
pub(crate) fn pyramid_layout(p: &Params) -> Result<Layout, ParamError> {
    let base = p.count("base", 1, 200)?;
    let size = p.positive("size")?;
    let spacing = p.non_negative("spacing")?;
    let mass = p.positive("mass")?;
    let pitch = size + spacing;
    let mut boxes = Vec::new();
    for row in 0..base {
        let count = base - row;
        for k in 0..count {
            let x = (k as f64 - (count - 1) as f64 / 2.0) * pitch;
            boxes.push((Vec3::new(x, size / 2.0 + row as f64 * size, 0.0), mass));
        }
    }
    Ok(Layout { boxes, size, friction: p.non_negative("friction")? })
}

fn build_pyramid(p: &Params) -> Result<Scene, ParamError> {
    let l = pyramid_layout(p)?;
    let mut scene = Scene::new("box-pyramid");
    for &(centre, mass) in &l.boxes {
        add_box(&mut scene, centre, l.size, mass, l.friction);
    }
    scene.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: l.friction, restitution: 0.0 });
    Ok(scene)
}

/// The parameters of the stack (shared with its rigid twin, `rigid-stack`).
pub(crate) fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("boxes", 10.0, "number of boxes"),
        ParamSpec::num("size", 0.5, "box edge (m)"),
        ParamSpec::num("offset", 0.005, "alternating sideways offset of the boxes (m)"),
        ParamSpec::num(
            "gap",
            0.0,
            "initial vertical gap between boxes (m); negative: overlap (Solver2D's overlap recovery: −size/4)",
        ),
        ParamSpec::num("ratio", 1.0, "mass of the top box divided by the others'"),
        ParamSpec::num("mass", 10.0, "mass of each box (kg)"),
        ParamSpec::num("friction", 0.5, "friction μ of the floor and between boxes"),
    ]
}

/// Adds one box body of edge `size` centred at `centre` with total mass `mass`.
pub fn add_box(scene: &mut Scene, centre: Vec3, size: f64, mass: f64, friction: f64) {
    let h = size / 2.0;
    let first = scene.particles.len();
    let signs = [[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]];
    for s in signs {
        scene.add(Particle::new(centre + Vec3::new(s[0], s[1], s[2]) * h, mass / 4.0));
    }
    let p = [first, first + 1, first + 2, first + 3];
    for a in 0..4 {
        for b in a + 1..4 {
            scene.stick(p[a], p[b]);
        }
    }
    // The other four corners collide with the world as embedded points.
    for s in [[-1.0, -1.0, -1.0], [-1.0, 1.0, 1.0], [1.0, -1.0, 1.0], [1.0, 1.0, -1.0]] {
        let w = weights(&Vec3::new(s[0], s[1], s[2]));
        scene.embedded.push(EmbeddedPoint { particles: p, weights: w, count: 4 });
    }
    scene.bodies.push(BoxBody { particles: p, half: Vec3::repeat(h), friction });
}

/// `boxes` boxes alternating ±`offset` along x, `size + gap` apart, the top one `ratio` times
/// heavier.
pub(crate) fn stack_layout(p: &Params) -> Result<Layout, ParamError> {
    let n = p.count("boxes", 1, 10_000)?;
    let size = p.positive("size")?;
    let offset = p.num("offset");
    let gap = p.num("gap");
    if !(gap.is_finite() && gap > -size / 2.0) {
        return Err(ParamError::new("gap", format!("{gap} must be a finite length above −size/2 (m)")));
    }
    let ratio = p.positive("ratio")?;
    let mass = p.positive("mass")?;
    let boxes = (0..n)
        .map(|i| {
            let x = if i % 2 == 0 { offset } else { -offset };
            let m = if i == n - 1 { mass * ratio } else { mass };
            (Vec3::new(x, size / 2.0 + i as f64 * (size + gap), 0.0), m)
        })
        .collect();
    Ok(Layout { boxes, size, friction: p.non_negative("friction")? })
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let l = stack_layout(p)?;
    let mut scene = Scene::new("box-stack");
    for &(centre, mass) in &l.boxes {
        add_box(&mut scene, centre, l.size, mass, l.friction);
    }
    scene.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: l.friction, restitution: 0.0 });
    Ok(scene)
}
