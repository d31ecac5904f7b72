//! The Newton family's methods (`newton = "projection" | "gauss_newton" | "full"`): what each
//! converges to and how fast, against the implicit-Euler step's own conditions.

use solverlab_core::rows::{decode, RowRef};
use solverlab_core::sim::Simulation;
use solverlab_core::solver::{IterationReport, Observer};
use solverlab_core::{Kind, NullObserver, Scene, Vec3};
use solverlab_solvers::newton::Method;
use solverlab_solvers::{build, cg_solver, direct_solver, preset, CgConfig, DirectConfig};

fn scene(name: &str, sets: &[&str]) -> Scene {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    solverlab_scenes::resolve(name, &sets).unwrap()
}

/// The common violation after each outer iteration of one step.
#[derive(Default)]
struct PerOuter(Vec<(usize, f64)>);

impl Observer for PerOuter {
    fn wants_violation(&self) -> bool {
        true
    }
    fn iteration(&mut self, r: &IterationReport) {
        if let Some(v) = r.violation {
            match self.0.last_mut() {
                Some(last) if last.0 == r.outer => last.1 = v,
                _ => self.0.push((r.outer, v)),
            }
        }
    }
}

/// `direct` (the full method) converges quadratically on scenes whose step has unique finite
/// multipliers: a hanging chain with a 100× end mass, the 12 × 12 cloth pinned along its top
/// edge (structural sticks only), and a chain of rigid links on ball joints. Every frame of 60
/// meets 1e-10 m in at most 6 outer iterations (4 on average at most), and in the printed
/// frame each violation is at most `10³ m⁻¹ · v²` of the one before once below a millimetre
/// (and above the rounding floor, 1e-12 m): the number of correct digits doubles.
#[test]
fn direct_converges_quadratically_where_the_step_has_finite_multipliers() {
    let cases: [(&str, &[&str]); 3] =
        [("chain", &["ratio=100"]), ("cloth", &["nx=12", "ny=12", "pin=top", "shear=false"]), ("rigid-chain", &[])];
    for (name, sets) in cases {
        let s = scene(name, sets);
        let cfg = DirectConfig { tolerance: 1e-10, ..DirectConfig::default() };
        let mut direct = direct_solver(&cfg, "direct").unwrap();
        let mut sim = Simulation::new(&s, &mut direct, s.dt, 1).unwrap();
        let mut outers = Vec::new();
        for frame in 1..=60 {
            let r = if frame == 40 {
                let mut trace = PerOuter::default();
                let r = sim.step_frame(&mut trace).unwrap();
                let shown: Vec<String> = trace.0.iter().map(|(k, v)| format!("{k}: {v:.1e}")).collect();
                eprintln!("{name} frame 40, violation after each outer iteration: {}", shown.join(", "));
                for w in trace.0.windows(2) {
                    let (v, next) = (w[0].1, w[1].1);
                    if v < 1e-3 && next > 1e-12 {
                        assert!(next <= 1e3 * v * v, "{name}: {next:e} after {v:e} is not quadratic");
                    }
                }
                r
            } else {
                sim.step_frame(&mut NullObserver).unwrap()
            };
            assert!(r.converged, "{name} frame {frame}: {:?}", r.note);
            assert!(r.metrics.max_violation <= 1e-10, "{name} frame {frame}: {:e}", r.metrics.max_violation);
            outers.push(r.outer_iterations);
        }
        let mean = outers.iter().sum::<usize>() as f64 / outers.len() as f64;
        let most = *outers.iter().max().unwrap();
        eprintln!("{name}: {mean:.2} outer iterations a frame on average, at most {most}");
        assert!(mean <= 4.0 && most <= 6, "{name}: {mean} on average, at most {most}");
    }
}

/// The SQP methods land on the implicit-Euler step, `M(x − x̃) = J(x)ᵀλ` with `C(x) = 0`; the
/// projection lands on the constraints elsewhere. On a hanging 20-link chain released sideways
/// (the sticks turn during the step), the full method's residual of the first condition, as a
/// displacement `|x − x̃ − W J(x)ᵀλ|`, is below 1e-9 m for every particle, and the projection's
/// is above 1e-6 m.
#[test]
fn the_full_step_is_the_implicit_euler_step_and_the_projection_is_not() {
    let mut s = scene("chain", &[]);
    for (i, p) in s.particles.iter_mut().enumerate() {
        p.v = Vec3::new(0.3 * i as f64, 0.0, 0.1);
    }
    let residual = |method: Method| {
        let cfg = DirectConfig { newton: method, tolerance: 1e-12, ..DirectConfig::default() };
        let mut direct = direct_solver(&cfg, "direct").unwrap();
        let mut sim = Simulation::new(&s, &mut direct, s.dt, 1).unwrap();
        for _ in 0..10 {
            sim.step_frame(&mut NullObserver).unwrap();
        }
        // The Verlet prediction of the next step (no damping): x̃ = 2x − x* + h²g.
        let h = sim.h();
        let predicted: Vec<Vec3> = sim
            .state
            .x
            .iter()
            .zip(&sim.state.x_prev)
            .zip(&s.particles)
            .map(|((x, xp), p)| if p.w > 0.0 { 2.0 * x - xp + s.gravity * h * h } else { *x })
            .collect();
        sim.step_frame(&mut NullObserver).unwrap();
        let mut multipliers = Vec::new();
        sim.solver_mut().multipliers(&mut multipliers);
        let x = &sim.state.x;
        let mut pull = vec![Vec3::zeros(); x.len()];
        for (id, lambda) in multipliers {
            let RowRef::Constraint { index, axis: 0 } = decode(id) else { continue };
            let Kind::Stick { a, b, .. } = s.constraints[index].kind else { continue };
            let n = (x[b] - x[a]).normalize();
            pull[a] -= n * lambda;
            pull[b] += n * lambda;
        }
        (0..x.len())
            .filter(|&i| s.particles[i].w > 0.0)
            .map(|i| (x[i] - predicted[i] - pull[i] * s.particles[i].w).norm())
            .fold(0.0, f64::max)
    };
    let full = residual(Method::Full);
    let projection = residual(Method::Projection);
    eprintln!("|x − x̃ − W Jᵀλ|: full {full:.1e} m, projection {projection:.1e} m");
    assert!(full < 1e-9, "full: {full:e}");
    assert!(projection > 1e-6, "projection: {projection:e}");
}

/// CG's warm start pays where the step has finite multipliers: on the quickstart's cloth
/// (12 × 12, pinned along its top edge, structural sticks), frames 50–100, the warm-started
/// preset takes at most 0.8 of the cold one's CG iterations, both ending at the same tolerance.
#[test]
fn warm_started_cg_needs_at_most_four_fifths_of_the_cold_iterations() {
    let s = scene("cloth", &["nx=12", "ny=12", "pin=top", "shear=false"]);
    let iterations = |name: &str| {
        let cfg = preset(name).unwrap().config;
        let mut solver = build(&cfg, name).unwrap();
        let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, 1).unwrap();
        let mut total = 0;
        for frame in 1..=100 {
            let r = sim.step_frame(&mut NullObserver).unwrap();
            assert!(r.converged, "{name} frame {frame}");
            if frame >= 50 {
                total += r.iterations;
            }
        }
        total as f64 / 51.0
    };
    let (warm, cold) = (iterations("cg"), iterations("cg-cold"));
    eprintln!("CG iterations a frame, frames 50–100: warm {warm:.1}, cold {cold:.1}");
    assert!(warm <= 0.8 * cold, "warm {warm} against cold {cold}");
}

/// The three methods share the system's form: the same CG solves all three on a chain, and the
/// Gauss-Newton method (the SQP without curvature) converges to the full method's step, only
/// more slowly.
#[test]
fn gauss_newton_reaches_the_full_step_more_slowly() {
    let s = scene("chain", &["links=10"]);
    let run = |method: Method| {
        let cfg = CgConfig { newton: method, tolerance: 1e-11, outer_iterations: 200, ..CgConfig::default() };
        let mut cg = cg_solver(&cfg, "cg").unwrap();
        let mut sim = Simulation::new(&s, &mut cg, s.dt, 1).unwrap();
        let mut outer = 0;
        for _ in 0..5 {
            let r = sim.step_frame(&mut NullObserver).unwrap();
            assert!(r.converged, "{method:?}");
            outer += r.outer_iterations;
        }
        (sim.state.x.clone(), outer)
    };
    let (full, full_outer) = run(Method::Full);
    let (gauss, gauss_outer) = run(Method::GaussNewton);
    let gap = full.iter().zip(&gauss).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
    eprintln!("outer iterations over 5 frames: full {full_outer}, Gauss-Newton {gauss_outer}; gap {gap:.1e} m");
    assert!(gap < 1e-9, "{gap:e}");
    assert!(gauss_outer > full_outer, "{gauss_outer} against {full_outer}");
}

/// `direct` keeps its symbolic factorisation while the active set changes
/// ([`solverlab_solvers::newton::pattern`]): on the 55-box pyramid, where the contact rows
/// leave and rejoin the active set several times a step and friction rows join each step's
/// second pass, 60 frames need at most one symbolic factorisation per four steps (before the
/// kept pattern, five a step: one for every change of the active set).
#[test]
fn direct_keeps_its_symbolic_factorisation_while_the_active_set_changes() {
    let s = scene("rigid-pyramid", &[]);
    let mut direct = direct_solver(&DirectConfig::default(), "direct").unwrap();
    let frames = 60;
    {
        let mut sim = Simulation::new(&s, &mut direct, s.dt, 1).unwrap();
        for _ in 0..frames {
            sim.step_frame(&mut NullObserver).unwrap();
        }
    }
    let (numeric, symbolic) = direct.linear().counts();
    eprintln!("rigid-pyramid, {frames} frames: {numeric} numeric and {symbolic} symbolic factorisations");
    assert!(numeric >= 2 * frames && symbolic <= frames / 4, "{numeric} numeric, {symbolic} symbolic");
}
