//! The closed-form curves a `[[figure]]` adds with `analytic`, with their constants read from the
//! experiment's first scene as its runs resolve it (its `set` overrides applied): the undamped
//! oscillator of the `spring` scene, and Coulomb's slide down the `incline`.

use solverlab_core::model::Kind;
use solverlab_core::Scene;
use solverlab_plot::{LineStyle, Series};

use crate::spec::ExperimentFile;

/// A closed form and the constants it takes from the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Analytic {
    /// `x(t) = rest + (start − rest)·cos(ω t)` with `ω = 1/√(m·α)`: the free particle of the
    /// scene's first stick from a fixed particle, of mass `m` (kg), released at length `start`
    /// (m) on a stick of rest length `rest` (m) and compliance `α` (m/N), no gravity.
    Spring {
        /// Rest length (m).
        rest: f64,
        /// Length at the start (m).
        start: f64,
        /// Angular frequency `1/√(m·α)` (rad/s).
        omega: f64,
    },
    /// `a = g·max(0, sin θ − μ cos θ)` against the incline angle θ (degrees), with `g` the norm
    /// of the scene's gravity (m/s²) and μ the friction of its first plane.
    Incline {
        /// Gravity (m/s²).
        g: f64,
        /// Friction coefficient of the plane.
        mu: f64,
    },
}

impl Analytic {
    /// The curve `kind` (`spring` or `incline`, as [`crate::spec::FigureSpec::validate`] allows)
    /// with its constants from the first scene of `file`.
    pub(super) fn of(kind: &str, file: &ExperimentFile) -> Result<Analytic, String> {
        let spec = file.scenes.first().ok_or("analytic: the experiment has no scene")?;
        let scene = spec.resolve().map_err(|e| format!("analytic: scene[0]: {e}"))?;
        let (curve, needs) = match kind {
            "spring" => (spring(&scene), "it needs a stick from a fixed particle to a free one"),
            "incline" => (incline(&scene), "it needs a plane to slide on"),
            other => return Err(format!("analytic: no closed form `{other}`")),
        };
        curve.ok_or_else(|| format!("analytic: \"{kind}\" does not fit scene[0] (`{}`): {needs}", spec.name))
    }

    /// The curve sampled from 0 to `x_max` (time in s, or the angle in degrees).
    pub(super) fn series(&self, x_max: f64) -> Series {
        let (label, points) = match *self {
            Analytic::Spring { rest, start, omega } => (
                "analytic",
                (0..=800)
                    .map(|i| x_max * i as f64 / 800.0)
                    .map(|t| (t, rest + (start - rest) * (omega * t).cos()))
                    .collect(),
            ),
            Analytic::Incline { g, mu } => (
                "Coulomb",
                (0..=400)
                    .map(|i| x_max * i as f64 / 400.0)
                    .map(|deg: f64| (deg, g * (deg.to_radians().sin() - mu * deg.to_radians().cos()).max(0.0)))
                    .collect(),
            ),
        };
        Series { label: label.into(), points, style: LineStyle::Dashed, ..Series::default() }
    }
}

/// The spring's constants: the first stick between a fixed and a free particle.
fn spring(scene: &Scene) -> Option<Analytic> {
    scene.constraints.iter().find_map(|c| {
        let Kind::Stick { a, b, rest, .. } = c.kind else { return None };
        let (pa, pb) = (&scene.particles[a], &scene.particles[b]);
        let free = match (pa.w == 0.0, pb.w == 0.0) {
            (true, false) => pb,
            (false, true) => pa,
            _ => return None,
        };
        let (mass, alpha) = (1.0 / free.w, c.compliance);
        Some(Analytic::Spring { rest, start: (pb.x - pa.x).norm(), omega: 1.0 / (mass * alpha).sqrt() })
    })
}

/// The incline's constants: the gravity's norm and the first plane's friction.
fn incline(scene: &Scene) -> Option<Analytic> {
    let plane = scene.planes.first()?;
    Some(Analytic::Incline { g: scene.gravity.norm(), mu: plane.friction })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(scene: &str) -> ExperimentFile {
        let text = format!("name = \"t\"\nframes = 1\n{scene}\n[[solver]]\nlabel = \"gs\"\npreset = \"gs\"\n");
        toml::from_str(&text).unwrap()
    }

    /// A spring of another mass, compliance, rest and start than the defaults gets its own
    /// oscillator: released at `start`, through `rest` a quarter period later, at `2 rest − start`
    /// half a period later.
    #[test]
    fn the_spring_curve_follows_the_scene() {
        let f = file("[[scene]]\nname = \"spring\"\nset = { mass = 2.0, compliance = 0.004, rest = 0.5, start = 0.8 }");
        let a = Analytic::of("spring", &f).unwrap();
        let omega = 1.0 / (2.0_f64 * 0.004).sqrt();
        assert_eq!(a, Analytic::Spring { rest: 0.5, start: 0.8, omega });
        let period = std::f64::consts::TAU / omega;
        let s = a.series(period);
        let at = |t: f64| s.points.iter().min_by(|p, q| (p.0 - t).abs().total_cmp(&(q.0 - t).abs())).unwrap().1;
        assert!((at(0.0) - 0.8).abs() < 1e-12);
        assert!((at(period / 4.0) - 0.5).abs() < 1e-12);
        assert!((at(period / 2.0) - 0.2).abs() < 1e-12);
        // The defaults: 1 kg, 0.001 m/N, 1 m, 1.5 m.
        let d = Analytic::of("spring", &file("[[scene]]\nname = \"spring\"")).unwrap();
        assert_eq!(d, Analytic::Spring { rest: 1.0, start: 1.5, omega: 1.0 / 0.001_f64.sqrt() });
    }

    /// An incline of another friction and gravity than the defaults gets its own onset,
    /// `tan θ = μ`, and slope.
    #[test]
    fn the_incline_curve_follows_the_scene() {
        let f = file("[[scene]]\nname = \"incline\"\nset = { friction = 0.3, gravity = [0.0, -5.0, 0.0] }");
        let a = Analytic::of("incline", &f).unwrap();
        assert_eq!(a, Analytic::Incline { g: 5.0, mu: 0.3 });
        let s = a.series(90.0);
        let onset = 0.3_f64.atan().to_degrees();
        assert!(s.points.iter().filter(|p| p.0 < onset).all(|p| p.1 == 0.0));
        let (deg, acc) = *s.points.last().unwrap();
        assert_eq!(deg, 90.0);
        assert!((acc - 5.0 * (1.0 - 0.3 * 90.0_f64.to_radians().cos())).abs() < 1e-12);
        // The defaults: μ = 0.5 and g = 9.81 (tilted by the angle; the norm is the same).
        let Analytic::Incline { g, mu } = Analytic::of("incline", &file("[[scene]]\nname = \"incline\"")).unwrap()
        else {
            panic!("an incline")
        };
        assert_eq!(mu, 0.5);
        assert!((g - 9.81).abs() < 1e-12);
    }

    /// A curve the first scene cannot give is refused, naming the figure's scene.
    #[test]
    fn a_curve_the_scene_cannot_give_is_refused() {
        let e = Analytic::of("spring", &file("[[scene]]\nname = \"particles-in-box\"")).unwrap_err();
        assert!(e.contains("does not fit scene[0] (`particles-in-box`)"), "{e}");
        let e = Analytic::of("incline", &file("[[scene]]\nname = \"spring\"")).unwrap_err();
        assert!(e.contains("a plane"), "{e}");
    }
}
