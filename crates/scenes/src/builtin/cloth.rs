//! Cloth: Jakobsen §4 ("Cloth simulation"): a grid of particles joined by sticks at their rest
//! distances. Structural sticks join grid neighbours, shear sticks the diagonals, and optional
//! bending sticks skip one particle. Also the hanging cloth of XPBD (Macklin et al. 2016, Fig. 6)
//! and Small Steps (Macklin et al. 2019, Fig. 5).
//!
//! Particle `(i, j)` (column `i < nx`, row `j < ny`) has index `j·nx + i`. Horizontal sheets lie
//! in the `x–z` plane at height `height`; vertical ones hang in the `x–y` plane from row 0.
//! Constraints come in the order: structural along x, structural along y, shear, bending.

use solverlab_core::{Particle, Scene, Vec3};

use super::Builtin;
use crate::params::{ParamError, ParamSpec, Params};

/// The registry entry.
pub const BUILTIN: Builtin = Builtin {
    name: "cloth",
    summary: "nx × ny grid of sticks (structural, shear, optional bending), pinned corners or edge",
    source: "Jakobsen 2001, §4 (Cloth simulation); XPBD 2016, Fig. 6",
    params,
    build,
};

fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::num("nx", 20.0, "particles along x"),
        ParamSpec::num("ny", 20.0, "particles along the other axis"),
        ParamSpec::num("spacing", 0.05, "grid spacing (m)"),
        ParamSpec::num("mass", 0.01, "mass of each particle (kg)"),
        ParamSpec::flag("shear", true, "add diagonal (shear) sticks"),
        ParamSpec::flag("bending", false, "add bending sticks that skip one particle"),
        ParamSpec::word("pin", "corners", "corners (two corners of row 0) | top (all of row 0) | four | none"),
        ParamSpec::word("layout", "horizontal", "horizontal (x–z sheet) | vertical (hanging in x–y)"),
        ParamSpec::num("height", 1.0, "height of row 0 (m)"),
        ParamSpec::num("compliance", 0.0, "compliance of every stick (m/N), used by XPBD"),
    ]
}

fn build(p: &Params) -> Result<Scene, ParamError> {
    let nx = p.count("nx", 2, 4096)?;
    let ny = p.count("ny", 2, 4096)?;
    let s = p.positive("spacing")?;
    let mass = p.positive("mass")?;
    let pin = p.word("pin", &["corners", "top", "four", "none"])?;
    let vertical = p.word("layout", &["horizontal", "vertical"])? == "vertical";
    let height = p.num("height");
    let alpha = p.non_negative("compliance")?;
    let mut scene = Scene::new("cloth");
    for j in 0..ny {
        for i in 0..nx {
            let (u, v) = (i as f64 * s, j as f64 * s);
            let x = if vertical { Vec3::new(u, height - v, 0.0) } else { Vec3::new(u, height, v) };
            let fixed = match pin.as_str() {
                "corners" => j == 0 && (i == 0 || i == nx - 1),
                "top" => j == 0,
                "four" => (j == 0 || j == ny - 1) && (i == 0 || i == nx - 1),
                _ => false,
            };
            scene.add(if fixed { Particle::fixed(x) } else { Particle::new(x, mass) });
        }
    }
    let id = |i: usize, j: usize| j * nx + i;
    let mut pairs = Vec::new();
    for j in 0..ny {
        for i in 0..nx - 1 {
            pairs.push((id(i, j), id(i + 1, j)));
        }
    }
    for j in 0..ny - 1 {
        for i in 0..nx {
            pairs.push((id(i, j), id(i, j + 1)));
        }
    }
    if p.flag("shear") {
        for j in 0..ny - 1 {
            for i in 0..nx - 1 {
                pairs.push((id(i, j), id(i + 1, j + 1)));
                pairs.push((id(i + 1, j), id(i, j + 1)));
            }
        }
    }
    if p.flag("bending") {
        for j in 0..ny {
            for i in 0..nx.saturating_sub(2) {
                pairs.push((id(i, j), id(i + 2, j)));
            }
        }
        for j in 0..ny.saturating_sub(2) {
            for i in 0..nx {
                pairs.push((id(i, j), id(i, j + 2)));
            }
        }
    }
    for (a, b) in pairs {
        scene.stick(a, b).compliance = alpha;
    }
    Ok(scene)
}
