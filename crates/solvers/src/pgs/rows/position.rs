//! The nonlinear Gauss-Seidel position sweep over the prepared rows (Box2D v2.4's position
//! solver, the `pgs-ngs` preset).

use solverlab_core::Vec3;

use super::{Item, Rows};
use crate::pgs::PgsConfig;

impl Rows {
    /// One nonlinear Gauss-Seidel position sweep over the rows (Box2D v2.4's position solver),
    /// in prepared order, moving the end-of-step positions `x` directly; `x0` are the
    /// start-of-step positions. Each displacement is also added to the pseudo velocities
    /// (`Δx/h`), so that the step's velocities stay what the velocity sweeps made them.
    ///
    /// * A stick is evaluated at the current positions, `C = |x_b − x_a| − rest` (written
    ///   `|x_b − x_a| − |x0_b − x0_a| + C₀`), and corrected fully: `Δλ = −C/K` along the current
    ///   direction (Box2D corrects joints fully).
    /// * Every other row is linear in the positions from the start of the step,
    ///   `C = C₀ + J·(x − x0) + h·∂C/∂t`: equality rows (pins) are corrected fully; an
    ///   inequality row (a contact, a distance limit) only when `C + slop < 0`, by
    ///   `C' = β·(C + slop)`, Box2D's contact rule.
    /// * Every correction is capped at [`MAX_CORRECTION`] per row and sweep, Box2D's
    ///   `b2_maxLinearCorrection`; friction rows and compliant rows take no part.
    pub fn position_sweep(&mut self, x: &mut [Vec3], x0: &[Vec3], w: &[f64], cfg: &PgsConfig) {
        let inv_h = 1.0 / self.h;
        for it in 0..self.items.len() {
            let Item::Single(r) = self.items[it] else { continue };
            let row = self.vrows[r];
            if row.m == 0.0 || row.compliant {
                continue;
            }
            let parts = &self.parts;
            if row.stick {
                let slots = row.start as usize;
                let (a, b) = (parts.p[slots] as usize, parts.p[slots + 1] as usize);
                let d = x[b] - x[a];
                let len = d.norm();
                let u = if len > 0.0 { d / len } else { parts.j[slots + 1] };
                let c = len - (x0[b] - x0[a]).norm() + row.c;
                let s = row.m * c.clamp(-MAX_CORRECTION, MAX_CORRECTION);
                for (i, step) in [(a, u * (w[a] * s)), (b, -u * (w[b] * s))] {
                    x[i] += step;
                    self.vp[i] += step * inv_h;
                }
                continue;
            }
            let moved: f64 = parts.of(&row).map(|(i, j)| j.dot(&(x[i] - x0[i]))).sum();
            let c = match row.lo {
                f64::NEG_INFINITY => (row.c + moved + self.h * row.relax_bias).clamp(-MAX_CORRECTION, MAX_CORRECTION),
                _ => (cfg.baumgarte * (row.c + moved + cfg.slop)).clamp(-MAX_CORRECTION, 0.0),
            };
            if c == 0.0 {
                continue;
            }
            let s = -row.m * c;
            for (i, j) in parts.of(&row) {
                let step = j * (w[i] * s);
                x[i] += step;
                self.vp[i] += step * inv_h;
            }
        }
    }
}

/// The largest correction of one row in one position sweep (m): Box2D's
/// `b2_maxLinearCorrection`, which keeps a deep overlap from being resolved in one jump.
const MAX_CORRECTION: f64 = 0.2;
