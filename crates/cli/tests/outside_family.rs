//! A solver family from outside solverlab's crates runs through the library face of the command
//! line like a builtin: simulate, an experiment that names its `kind` in a sweep with a frozen-state
//! convergence study and a figure, and its errors name the field. (`examples/outside-solver` is
//! the same as a crate of its own.)

mod common;

use serde::{Deserialize, Serialize};
use solverlab_cli::{run_experiment, simulate, Registry, Simulate};
use solverlab_core::solver::{IterationReport, Observer, SolveError, SolveInfo, Solver, StepContext};
use solverlab_core::{FieldError, State};
use solverlab_solvers::registry::{count_of, Settings, Typed};

/// Shrinks every stick towards its rest length by `k` of the way, `iterations` Jacobi sweeps
/// (the smallest solver that is one).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Damped {
    iterations: u32,
    k: f64,
}

impl Settings for Damped {
    fn validate(&self) -> Result<(), FieldError> {
        match self.k > 0.0 && self.k <= 1.0 {
            true => Ok(()),
            false => Err(FieldError::new("k", format!("{} is outside (0, 1]", self.k))),
        }
    }
}

struct DampedSolver(Damped, String);

impl Solver for DampedSolver {
    fn name(&self) -> &str {
        &self.1
    }
    fn solve(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
    ) -> Result<SolveInfo, SolveError> {
        let w = ctx.scene.inverse_masses();
        for it in 1..=self.0.iterations.max(1) as usize {
            let mut dx = vec![solverlab_core::Vec3::zeros(); state.x.len()];
            for c in &ctx.scene.constraints {
                if let solverlab_core::Kind::Stick { a, b, rest, .. } = c.kind {
                    let d = state.x[b] - state.x[a];
                    let (len, sw) = (d.norm(), w[a] + w[b]);
                    if len > 0.0 && sw > 0.0 {
                        let s = self.0.k * (len - rest) / (len * sw);
                        dx[a] += d * (w[a] * s);
                        dx[b] -= d * (w[b] * s);
                    }
                }
            }
            state.x.iter_mut().zip(&dx).for_each(|(x, d)| *x += d);
            observer.iteration(&IterationReport { iteration: it, outer: 1, ..Default::default() });
        }
        Ok(SolveInfo { iterations: self.0.iterations as usize, outer: 1, ..Default::default() })
    }
}

fn registry() -> Registry {
    Registry::builtin().with(Typed {
        kind: "damped",
        summary: "damped Jacobi on sticks (a test family)",
        presets: || vec![("damped-half", "k = 0.5, 4 sweeps", Damped { iterations: 4, k: 0.5 })],
        build: |c, label| Ok(Box::new(DampedSolver(c.clone(), label.to_string()))),
        cap: |c, n| c.iterations = count_of(n),
        substeps: |_| 1,
    })
}

#[test]
fn an_outside_family_simulates_runs_in_sweeps_and_studies_and_names_its_fields() {
    let dir = common::absent("outside", "family");
    std::fs::create_dir_all(&dir).unwrap();
    let registry = registry();
    let args = |solver: &str, out: &str| Simulate {
        scene: "chain".into(),
        sets: vec!["links=5".into()],
        solver: solver.into(),
        frames: 10,
        dt: None,
        substeps: None,
        out: dir.join(out),
        positions_every: 0,
        violation: false,
    };
    let hash = simulate(&registry, &args("damped-half", "preset")).unwrap();
    assert_eq!(simulate(&registry, &args("{ kind = \"damped\", iterations = 4, k = 0.5 }", "inline")).unwrap(), hash);
    let e = simulate(&registry, &args("{ kind = \"damped\", k = 3.0 }", "bad")).unwrap_err();
    assert!(format!("{e:?}").contains("k: 3 is outside (0, 1]"), "{e:?}");
    let e = simulate(&Registry::builtin(), &args("damped-half", "builtin")).unwrap_err();
    assert!(format!("{e:?}").contains("unknown preset"), "the builtin registry does not know it: {e:?}");

    let experiment = dir.join("exp.toml");
    std::fs::write(
        &experiment,
        r#"
name = "outside"
frames = 20
[convergence]
frame = 10
caps = [1, 4]
[[scene]]
name = "chain"
set = { links = 5 }
[[solver]]
label = "damped"
config = { kind = "damped", iterations = 4 }
sweep = { "solver.k" = [0.25, 1.0] }
[[solver]]
label = "GS"
preset = "gs"
[[figure]]
name = "stretch"
x = "frame"
y = "max_stretch"
series = ["label", "solver.k"]
"#,
    )
    .unwrap();
    let out = run_experiment(&registry, &experiment, Some(dir.join("results")), None, false, Some(1)).unwrap();
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().filter(|l| l.contains(",damped,damped,")).count(), 2, "{runs}");
    let convergence = std::fs::read_to_string(out.join("convergence.csv")).unwrap();
    assert!(convergence.lines().any(|l| l.contains(",damped,")), "{convergence}");
    assert!(out.join("stretch.svg").exists());
}
