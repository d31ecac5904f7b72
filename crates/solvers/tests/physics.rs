//! Contact physics against closed forms, in every family (issue 13): a block on an incline
//! below and above the friction angle, the XPBD spring's period, and an elastic bounce. Each
//! test states the closed form it checks.

use solverlab_core::sim::Simulation;
use solverlab_core::{NullObserver, Particle, Plane, Scene, Vec3};
use solverlab_solvers::{build, preset};

const G: f64 = 9.81;
const MU: f64 = 0.5;
/// The families of the issue: relax (Gauss-Seidel, XPBD), sequential impulses (PGS, soft
/// step), and the Newton family (CG, direct).
const FAMILIES: [&str; 6] = ["gs", "xpbd", "pgs", "soft-step", "cg", "direct"];

/// The `incline` builtin: a plane `y ≥ 0` with μ = 0.5 and gravity tilted by `theta_deg`, a
/// particle or a rigid triangle of three 1 kg particles at rest on it.
fn incline(theta_deg: f64, triangle: bool, dt: f64) -> Scene {
    let body = if triangle { "body=triangle" } else { "body=particle" };
    let mut s = solverlab_scenes::resolve("incline", &[format!("angle={theta_deg}"), body.into()]).unwrap();
    s.dt = dt;
    s
}

/// Runs `name` on `s` for `seconds`; returns (distance the centre of mass moved along x, the
/// reported momentum along x, the total mass).
fn slide(s: &Scene, name: &str, seconds: f64) -> (f64, f64) {
    let cfg = preset(name).unwrap().config;
    let mut solver = build(&cfg, name).unwrap();
    let mut sim = Simulation::new(s, solver.as_mut(), s.dt, cfg.default_substeps()).unwrap();
    let x0 = sim.report_now().metrics.com.x;
    let frames = (seconds / s.dt).round() as usize;
    let mut last = None;
    for _ in 0..frames {
        last = Some(sim.step_frame(&mut NullObserver).unwrap().metrics);
    }
    let m = last.unwrap();
    (m.com.x - x0, m.momentum.x)
}

/// Below the friction angle (20° < atan 0.5 = 26.6°) static friction holds: a particle and a
/// rigid triangle move less than 1 mm in 1 s, at 60 and at 600 Hz, in every family.
#[test]
fn below_the_friction_angle_nothing_creeps() {
    for hz in [60.0, 600.0] {
        for triangle in [false, true] {
            let s = incline(20.0, triangle, 1.0 / hz);
            for name in FAMILIES {
                let (moved, _) = slide(&s, name, 1.0);
                eprintln!(
                    "20°, {hz} Hz, {}: {name} moved {moved:.2e} m",
                    if triangle { "triangle" } else { "particle" }
                );
                assert!(moved.abs() < 1e-3, "{name} at {hz} Hz (triangle: {triangle}): crept {moved} m in 1 s");
            }
        }
    }
}

/// Above it (35°) the block slides with `a = g (sin θ − μ cos θ)`; the distance after 1 s gives
/// `a = 2s/t²` within 3 %, and the reported momentum matches the motion, `p = M a t`, within 3 %.
#[test]
fn above_the_friction_angle_the_slide_accelerates_as_coulomb_says() {
    let t = 35f64.to_radians();
    let a = G * (t.sin() - MU * t.cos());
    for hz in [60.0, 600.0] {
        for triangle in [false, true] {
            let s = incline(35.0, triangle, 1.0 / hz);
            let mass = s.particles.len() as f64;
            for name in FAMILIES {
                let (moved, momentum) = slide(&s, name, 1.0);
                let measured = 2.0 * moved;
                eprintln!("35°, {hz} Hz, triangle {triangle}: {name} a = {measured:.4} (Coulomb {a:.4}), p = {momentum:.4} (M a t {:.4})", mass * a);
                assert!((measured / a - 1.0).abs() < 0.03, "{name} at {hz} Hz: a = {measured}, Coulomb {a}");
                assert!(
                    (momentum / (mass * a) - 1.0).abs() < 0.03,
                    "{name} at {hz} Hz: p = {momentum}, M a t = {}",
                    mass * a
                );
            }
        }
    }
}

/// XPBD 2016, Fig. 2: a 1 kg particle on a compliant stick (α = 0.001 m/N, rest 1, released at
/// 1.5, no gravity) oscillates with period `2π √(m α)` = 0.1987 s. At 600 Hz the period of the
/// first oscillations matches within 2 % under XPBD, the soft step, CG and direct.
#[test]
fn the_xpbd_spring_keeps_its_period() {
    let mut s = solverlab_scenes::resolve("spring", &[]).unwrap();
    s.dt = 1.0 / 600.0;
    let alpha = s.constraints[0].compliance;
    let expected = std::f64::consts::TAU * alpha.sqrt();
    for name in ["xpbd", "soft-step", "cg", "direct"] {
        let cfg = preset(name).unwrap().config;
        let mut solver = build(&cfg, name).unwrap();
        let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, cfg.default_substeps()).unwrap();
        // Upward zero crossings of the stretch ℓ − rest.
        let stretch = |x: &[Vec3]| (x[1] - x[0]).norm() - 1.0;
        let mut crossings = Vec::new();
        let mut before = stretch(&sim.state.x);
        let mut t = 0.0;
        while crossings.len() < 3 && t < 2.0 {
            sim.step_frame(&mut NullObserver).unwrap();
            t = sim.state.time;
            let now = stretch(&sim.state.x);
            if before < 0.0 && now >= 0.0 {
                crossings.push(t - s.dt * now / (now - before));
            }
            before = now;
        }
        let period = (crossings[2] - crossings[0]) / 2.0;
        eprintln!("spring at 600 Hz, {name}: period {period:.5} s, analytic {expected:.5} s");
        assert!((period / expected - 1.0).abs() < 0.02, "{name}: period {period}, analytic {expected}");
    }
}

/// An elastic ball (e = 1) dropped from 1 m onto a plane at 600 Hz still bounces to at least
/// 0.97 m after 3 s (three bounces), and turns back at the plane, not above it (its lowest point
/// within 1 mm of the surface), in every family.
#[test]
fn an_elastic_ball_keeps_bouncing_and_turns_at_the_plane() {
    let mut s = Scene::new("bounce");
    s.dt = 1.0 / 600.0;
    s.planes.push(Plane { normal: Vec3::y(), offset: 0.0, friction: 0.0, restitution: 1.0 });
    s.add(Particle::new(Vec3::new(0.0, 1.0, 0.0), 1.0));
    for name in FAMILIES {
        let cfg = preset(name).unwrap().config;
        let mut solver = build(&cfg, name).unwrap();
        let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, cfg.default_substeps()).unwrap();
        let (mut lowest, mut apex, mut rising) = (f64::INFINITY, 0.0f64, false);
        let mut last_apex = 0.0;
        let mut previous = 1.0;
        for _ in 0..1800 {
            sim.step_frame(&mut NullObserver).unwrap();
            let y = sim.state.x[0].y;
            lowest = lowest.min(y);
            if y > previous {
                rising = true;
                apex = apex.max(y);
            } else if rising {
                last_apex = apex;
                (rising, apex) = (false, 0.0);
            }
            previous = y;
        }
        eprintln!("bounce at 600 Hz, {name}: last apex {last_apex:.4} m, lowest {lowest:.2e} m");
        assert!(last_apex >= 0.97, "{name}: bounced to {last_apex} m after 3 s");
        assert!(lowest.abs() < 1e-3, "{name}: turned back {lowest} m from the plane");
    }
}
