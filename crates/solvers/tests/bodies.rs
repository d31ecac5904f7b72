//! Rigid bodies made of particles: embedded points, resting boxes, free tetrahedra.

use solverlab_core::metrics::{measure, no_multipliers};
use solverlab_core::sim::Simulation;
use solverlab_core::{EmbeddedPoint, NullObserver, Particle, Plane, Scene, Solver, StepContext, Vec3};
use solverlab_solvers::{build, preset, RelaxConfig, RelaxSolver};

fn scene(name: &str, sets: &[&str]) -> Scene {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    solverlab_scenes::resolve(name, &sets).unwrap()
}

#[test]
fn an_embedded_point_is_pushed_out_of_a_plane_exactly_in_one_projection_for_uneven_masses() {
    let mut s = Scene::new("embedded");
    s.gravity = Vec3::zeros();
    let masses = [0.5, 2.0, 7.0, 1.3];
    let xs = [Vec3::new(0.0, 0.3, 0.0), Vec3::new(1.0, 0.2, 0.1), Vec3::new(0.2, 0.4, 1.0), Vec3::new(0.5, 1.0, 0.4)];
    let floor = 0.1; // every particle is above it; only the embedded point is below
    for (x, m) in xs.iter().zip(masses) {
        s.add(Particle::new(*x, m));
    }
    // A point outside the hull (one negative weight), below the plane y = 0.1.
    let weights = [0.6, 0.5, 0.3, -0.4];
    let point = EmbeddedPoint { particles: [0, 1, 2, 3], weights, count: 4 };
    let before = point.position(&xs);
    assert!(before.y < floor);
    s.embedded.push(point.clone());
    s.planes.push(Plane { normal: Vec3::y(), offset: floor, friction: 0.0, restitution: 0.0 });
    let mut state = s.initial_state(0.01);
    let mut solver = RelaxSolver::new(RelaxConfig { iterations: 1, ..Default::default() }, "t").unwrap();
    solver.prepare(&s).unwrap();
    solver.solve(&StepContext::new(&s, 0.01), &mut state, &mut NullObserver).unwrap();
    let after = point.position(&state.x);
    assert!((after.y - floor).abs() < 1e-14, "p ends on the plane: {}", after.y);
    assert!((after.x - before.x).abs() < 1e-14 && (after.z - before.z).abs() < 1e-14, "only along the normal");
    // Each particle moves along the normal by w·c·Δλ: proportional to c/m.
    let dl = (floor - before.y) / (0..4).map(|k| weights[k] * weights[k] / masses[k]).sum::<f64>();
    for k in 0..4 {
        let moved = state.x[k] - xs[k];
        assert!((moved - Vec3::y() * (weights[k] / masses[k] * dl)).norm() < 1e-14, "particle {k}: {moved}");
    }
    // The momentum change is along the normal only (a contact force).
    let p: Vec3 = (0..4).map(|k| (state.x[k] - xs[k]) * masses[k]).sum();
    assert!(p.x.abs() < 1e-14 && p.z.abs() < 1e-14);
}

#[test]
fn a_box_resting_on_the_floor_stays_at_rest_with_no_energy_gain() {
    let s = scene("embedded-box", &["height=0.25", "spin=0"]);
    for name in ["gs", "xpbd", "pgs", "cg", "direct"] {
        let cfg = preset(name).unwrap().config;
        let mut solver = build(&cfg, name).unwrap();
        let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, cfg.default_substeps()).unwrap();
        let m0 = measure(&s, &sim.state, sim.h(), &no_multipliers);
        let e0 = m0.kinetic_energy + m0.potential_energy;
        // A solver that stops at a tolerance may leave the box that far from where the exact
        // step puts it: a potential energy of up to its weight times the tolerance, either way
        // (`cg`'s micron: 1.0e-5 J of the 9.81 J). Beyond that, no gain in any frame, and none on
        // average over the last hundred frames beyond rounding (a millionth of the energy).
        let tolerance = cfg.settings().get("tolerance").and_then(|t| t.as_float()).unwrap_or(0.0);
        let weight = s.particles.iter().filter(|p| p.w > 0.0).map(|p| 1.0 / p.w).sum::<f64>() * 9.81;
        let mut last = Vec::new();
        for f in 0..500 {
            let m = sim.step_frame(&mut NullObserver).unwrap().metrics;
            let e = m.kinetic_energy + m.potential_energy;
            assert!(e <= e0 + 1e-6 * e0.abs() + weight * tolerance, "{name}, frame {f}: energy {e} above {e0}");
            assert!((m.com - m0.com).norm() < 0.01, "{name}, frame {f}: the box moved to {}", m.com);
            if f >= 400 {
                last.push(e);
            }
        }
        let mean = last.iter().sum::<f64>() / last.len() as f64;
        assert!(mean <= e0 + 1e-6 * e0.abs(), "{name}: energy {mean} on average over the last 100 frames, above {e0}");
    }
}

#[test]
fn a_free_tetrahedron_conserves_momentum_and_loses_angular_momentum_as_documented() {
    // Documented bound. Linear momentum: conserved to rounding by every solver (sticks push
    // equally and oppositely). Angular momentum: textbook PGS (`split_impulse = false`) works on
    // velocities with central impulses and conserves it to rounding; with split impulses (the
    // `pgs` preset) the position correction moves particles without turning their velocities,
    // so it loses some, less than the chord model. The position-level solvers (relax, CG, direct) predict each
    // particle along its tangent and project it back onto the rigid configuration, which
    // shortens a rotation's velocity by a factor of about 1 − (ωh)²/2 per step (the chord
    // against the arc): after N steps L keeps about (1 − (ωh)²/2)^N, whichever solver projects.
    // At ω = 5 rad/s, 60 Hz, 200 frames that is a loss of 50 %; each position solver must be
    // within 10 % of it, and PGS within 1e-10 of no loss. With 4 substeps the chord model
    // predicts 16 % and 23 % is measured (the model misses an effect of first order in h), so
    // for substeps the test asks only that the loss at least halves.
    let omega = 5.0;
    let s = scene("tetrahedron", &["size=0", "gravity=[0, 0, 0]", "spin=5", "speed=1"]);
    let mut one_substep_loss = f64::NAN;
    for substeps in [1u32, 4] {
        let h = s.dt / substeps as f64;
        let predicted_loss = 1.0 - (1.0 - (omega * h).powi(2) / 2.0).powi(200 * substeps as i32);
        for name in ["gs", "xpbd", "pgs", "pgs-textbook", "cg", "direct"] {
            let config = match name {
                "pgs-textbook" => solverlab_solvers::SolverConfig::from(solverlab_solvers::PgsConfig {
                    split_impulse: false,
                    ..Default::default()
                }),
                _ => preset(name).unwrap().config,
            };
            let mut solver = build(&config, name).unwrap();
            let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, substeps).unwrap();
            let angular = |x: &[Vec3], xp: &[Vec3]| -> Vec3 {
                let c = x.iter().sum::<Vec3>() / 4.0;
                (0..4).map(|i| (x[i] - c).cross(&((x[i] - xp[i]) / h))).sum()
            };
            let l0 = angular(&sim.state.x, &sim.state.x_prev);
            let p0 = measure(&s, &sim.state, h, &no_multipliers).momentum;
            for _ in 0..200 {
                let r = sim.step_frame(&mut NullObserver).unwrap();
                assert!((r.metrics.momentum - p0).norm() < 1e-10, "{name}: momentum");
            }
            let loss = 1.0 - angular(&sim.state.x, &sim.state.x_prev).norm() / l0.norm();
            eprintln!("{name}, {substeps} substep(s): L lost {loss:.4}, predicted {predicted_loss:.4}");
            if name == "pgs-textbook" {
                assert!(loss.abs() < 1e-10, "{name}: {loss}");
            } else if name == "pgs" {
                assert!(loss > 0.0 && loss < predicted_loss, "{name}: lost {loss}, chord model {predicted_loss}");
            } else if substeps == 1 {
                assert!(
                    (loss - predicted_loss).abs() < 0.1 * predicted_loss,
                    "{name}: lost {loss}, predicted {predicted_loss}"
                );
                one_substep_loss = loss;
            } else {
                assert!(
                    loss < 0.5 * one_substep_loss,
                    "{name}: {substeps} substeps lost {loss}, 1 lost {one_substep_loss}"
                );
            }
        }
    }
}

/// Regression: aligned boxes put corners exactly on the face boundary, where rounding dropped
/// half of the vertex-face contacts and the stack fell through itself.
#[test]
fn aligned_box_corners_on_the_face_boundary_still_support_the_box_above() {
    let s = scene("box-stack", &["boxes=3", "offset=0", "friction=0"]);
    for name in ["direct", "pgs"] {
        let mut solver = build(&preset(name).unwrap().config, name).unwrap();
        let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, 1).unwrap();
        for f in 0..300 {
            let m = sim.step_frame(&mut NullObserver).unwrap().metrics;
            assert!((m.com.y - 0.75).abs() < 0.01, "{name}, frame {f}: centre of mass at {}", m.com.y);
        }
    }
}

/// A box sliding at 1 m/s on an immovable box (μ = 0.5) stops after about v²/(2μg) = 0.102 m
/// under relax and the Newton solvers (position-level Coulomb on the relative motion,
/// [`coulomb_friction`]) and PGS (clamped tangential impulses). Measured: 0.093, 0.0945 and
/// 0.094 m, the three families within 2 % of each other and 8 % short of the closed form (the
/// corners' contacts carry the box's weight unevenly while it tips forward). Asserted: each
/// within 15 % of Coulomb. Without friction between bodies it would slide off.
///
/// [`coulomb_friction`]: solverlab_core::constraint::coulomb_friction
#[test]
fn a_box_sliding_on_another_box_stops_where_coulomb_says() {
    let mut s = scene("box-stack", &["boxes=2", "offset=0", "friction=0.5"]);
    for p in &mut s.particles[0..4] {
        p.w = 0.0;
    }
    for p in &mut s.particles[4..8] {
        p.v = Vec3::new(1.0, 0.0, 0.0);
    }
    let expected = 1.0 / (2.0 * 0.5 * 9.81);
    for name in ["gs", "pgs", "direct"] {
        let mut solver = build(&preset(name).unwrap().config, name).unwrap();
        let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, 1).unwrap();
        for _ in 0..60 {
            sim.step_frame(&mut NullObserver).unwrap();
        }
        let centre = |x: &[Vec3]| x[4..8].iter().sum::<Vec3>() / 4.0;
        let slid = (centre(&sim.state.x) - centre(&s.particles.iter().map(|p| p.x).collect::<Vec<_>>())).x;
        let speed = (centre(&sim.state.x) - centre(&sim.state.x_prev)).x / s.dt;
        println!("{name}: slid {slid:.4} m (Coulomb {expected:.4} m), sliding speed {speed:.2e} m/s");
        assert!(speed.abs() < 1e-2, "{name}: still sliding at {speed} m/s (started at 1 m/s)");
        assert!((0.85..1.15).contains(&(slid / expected)), "{name}: slid {slid} m, Coulomb {expected} m");
    }
}

/// A box dropped edge-first across the top edge of an immovable box (both turned 45°, the edges
/// crossing at right angles) rests on the edge-edge contact: no corner touches anything, so
/// without edge-edge contacts it would sink about 0.2 m before its corners met the faces.
#[test]
fn a_box_rests_crosswise_on_the_edge_of_another() {
    let mut s = Scene::new("crossed");
    let reach = 0.5 * std::f64::consts::SQRT_2;
    for (axis, centre) in [(Vec3::z(), Vec3::zeros()), (Vec3::x(), Vec3::new(0.0, 2.0 * reach + 0.002, 0.0))] {
        let first = s.particles.len();
        solverlab_scenes::builtin::box_stack::add_box(&mut s, Vec3::zeros(), 1.0, 4.0, 0.5);
        let q = nalgebra::UnitQuaternion::from_axis_angle(
            &nalgebra::Unit::new_normalize(axis),
            std::f64::consts::FRAC_PI_4,
        );
        for p in &mut s.particles[first..] {
            p.x = centre + q * p.x;
        }
    }
    s.embedded.clear();
    for p in &mut s.particles[0..4] {
        p.w = 0.0;
    }
    for name in ["gs", "pgs", "direct"] {
        let mut solver = build(&preset(name).unwrap().config, name).unwrap();
        let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, 1).unwrap();
        for frame in 1..=60 {
            let r = sim.step_frame(&mut NullObserver).unwrap();
            assert!(r.metrics.max_penetration < 0.01, "{name}, frame {frame}: {} m deep", r.metrics.max_penetration);
        }
        let top = sim.state.x[4..8].iter().sum::<Vec3>() / 4.0;
        assert!(top.y > 2.0 * reach - 0.01, "{name}: the upper box sank to {} m", top.y);
    }
}

/// The warm-start energy scene's removal: the heavy top box is parked at rest far away, the
/// metrics leave it out, and under the exact solver the two light boxes stay put afterwards.
#[test]
fn a_removed_body_is_parked_at_rest_and_left_out_of_the_metrics() {
    let s = scene("warm-start-energy", &["ratio=10", "remove_at=0.5"]);
    let mut solver = build(&preset("direct").unwrap().config, "direct").unwrap();
    let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, 1).unwrap();
    let mut before = None;
    for _ in 0..60 {
        let r = sim.step_frame(&mut NullObserver).unwrap();
        if r.time < 0.5 {
            before = Some(r.metrics);
        } else {
            assert!(
                r.metrics.kinetic_energy < 1e-2,
                "t = {}: {} J after the removal",
                r.time,
                r.metrics.kinetic_energy
            );
            assert!(r.metrics.in_place && r.metrics.top_drift < 1e-3, "{:?}", r.metrics);
        }
    }
    for i in 8..12 {
        let parked = s.particles[i].x + solverlab_core::model::PARK_OFFSET;
        assert_eq!((sim.state.x[i], sim.state.x_prev[i]), (parked, parked));
    }
    // Before: the centre of mass is pulled up by the heavy top (10, 10, 100 kg at 0.25, 0.75,
    // 1.25 m); after, it is that of the two light boxes.
    let after = measure(&s, &sim.state, s.dt, &no_multipliers);
    assert!((before.unwrap().com.y - (2.5 + 7.5 + 125.0) / 120.0).abs() < 1e-3);
    assert!((after.com.y - 0.5).abs() < 1e-3, "{}", after.com.y);
}

/// Jakobsen §6's joints by shared particles: a body sharing two particles with a fixed frame
/// turns about the line through them (every particle keeps its coordinate along the axis and its
/// distance to it), while one sharing a single particle swings out of that plane too; both keep
/// every shared particle exactly where the frame has it, in every solver family.
#[test]
fn a_body_sharing_two_particles_turns_on_a_hinge_and_one_sharing_one_on_a_ball_joint() {
    for shared in [2, 1] {
        let s = scene("hinge", &[&format!("shared={shared}")]);
        let tip = s.particles.iter().position(|p| p.v.norm() > 0.0).unwrap();
        let movable: Vec<usize> = (0..s.particles.len()).filter(|&i| s.particles[i].w > 0.0).collect();
        // The hinge line: x = 0, y = 2, along z.
        let radius = |x: &Vec3| ((x.x).powi(2) + (x.y - 2.0).powi(2)).sqrt();
        for name in ["gs", "pgs", "direct"] {
            let mut solver = build(&preset(name).unwrap().config, name).unwrap();
            let mut sim = Simulation::new(&s, solver.as_mut(), s.dt, 4).unwrap();
            let mut lowest = f64::INFINITY;
            let mut widest: f64 = 0.0;
            for _ in 0..60 {
                sim.step_frame(&mut NullObserver).unwrap();
                lowest = lowest.min(sim.state.x[tip].y);
                widest = widest.max(sim.state.x[tip].z.abs());
                if shared == 2 {
                    for &i in &movable {
                        let (x, x0) = (sim.state.x[i], s.particles[i].x);
                        assert!((x.z - x0.z).abs() < 2e-3, "{name}: particle {i} slid {} m along the axis", x.z - x0.z);
                        assert!((radius(&x) - radius(&x0)).abs() < 2e-3, "{name}: particle {i} left its circle");
                    }
                }
            }
            assert!(lowest < 1.5, "{name}, {shared} shared: the tip did not swing down (lowest {lowest} m)");
            if shared == 1 {
                assert!(widest > 0.1, "{name}: a ball joint lets the tip swing sideways, only {widest} m");
            }
        }
    }
}
