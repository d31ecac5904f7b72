use super::*;

const PENDULUM: &str = r#"
name = "pendulum"
dt = 0.01
[[particle]]
x = [0.0, 0.0, 0.0]
fixed = true
[[particle]]
x = [1.0, 0.0, 0.0]
[[constraint]]
type = "distance"
a = 0
b = 1
"#;

#[test]
fn a_minimal_file_loads_with_documented_defaults() {
    let s = parse(PENDULUM, "p.toml").unwrap();
    assert_eq!(s.gravity, Vec3::new(0.0, -9.81, 0.0));
    assert_eq!(s.damping, 0.0);
    assert_eq!(s.particles[0].w, 0.0);
    assert_eq!(s.particles[1].w, 1.0);
    assert_eq!(s.constraints[0].kind, Kind::Stick { a: 0, b: 1, rest: 1.0, sense: Sense::Equal });
}

#[test]
fn export_then_load_gives_the_same_scene() {
    let s = parse(PENDULUM, "p.toml").unwrap();
    let again = parse(&SceneFile::from_scene(&s).to_toml(), "again").unwrap();
    assert_eq!(s, again);
}

const RIGID: &str = r#"
[[rigid]]
shape = "box"
half_extents = [0.5, 0.25, 0.125]
mass = 2.0
x = [0.0, 1.0, 0.0]
q = [1.0, 0.2, 0.0, 0.0]
w = [0.0, 3.0, 0.0]
friction = 0.3
[[rigid]]
shape = "sphere"
radius = 0.5
density = 1000.0
x = [2.0, 1.0, 0.0]
restitution = 0.5
[[rigid]]
shape = "box"
half_extents = [5.0, 0.5, 5.0]
x = [0.0, -0.5, 0.0]
fixed = true
[[rigid]]
shape = "capsule"
radius = 0.1
half_height = 0.3
x = [4.0, 1.0, 0.0]
[[joint]]
type = "revolute"
a = 0
b = 1
anchor = [1.0, 1.0, 0.0]
axis = [0.0, 0.0, 1.0]
lower = -0.5
[[joint]]
type = "ball"
a = 1
anchor = [2.0, 2.0, 0.0]
compliance = 1e-6
"#;

/// Every `[[rigid]]` key survives export and load, the quaternion is normalised, density
/// gives the mass (1000 kg/m³ × 4/3·π·0.5³ m³ = 523.6 kg) and the inertia follows.
#[test]
fn rigid_bodies_round_trip_with_their_mass_properties() {
    let s = parse(&format!("{PENDULUM}{RIGID}"), "r.toml").unwrap();
    assert_eq!(s.rigid.len(), 4);
    assert_eq!(s.rigid[3].shape, Shape::Capsule { radius: 0.1, half_height: 0.3 });
    assert!((s.rigid[0].q.norm() - 1.0).abs() < 1e-15 && (s.rigid[0].q.i - 0.2 / 1.04f64.sqrt()).abs() < 1e-12);
    assert!((s.rigid[0].mass() - 2.0).abs() < 1e-12 && (s.rigid[0].friction - 0.3).abs() < 1e-15);
    assert!((s.rigid[1].mass() - 523.598_775_598_298_8).abs() < 1e-9, "{}", s.rigid[1].mass());
    assert!((1.0 / s.rigid[1].inv_inertia.x - 0.4 * s.rigid[1].mass() * 0.25).abs() < 1e-9);
    assert!(s.rigid[2].is_fixed() && s.rigid[2].friction == DEFAULT_FRICTION);
    assert_eq!(s.joints.len(), 2);
    assert!(
        matches!(s.joints[0].kind, JointKind::Revolute { lower, upper, .. } if lower == -0.5 && upper == f64::INFINITY)
    );
    assert!(s.joints[1].b.is_none() && s.joints[1].compliance == 1e-6);
    let again = parse(&SceneFile::from_scene(&s).to_toml(), "again").unwrap();
    assert_eq!(s, again);
    // A rigid body's removal round-trips as `rigid = k`.
    let s = parse(&format!("{PENDULUM}{RIGID}\n[[removal]]\nrigid = 1\ntime = 2.0\n"), "r.toml").unwrap();
    let body = solverlab_core::model::RemovedBody::Rigid(1);
    assert_eq!(s.removals, vec![solverlab_core::model::Removal { body, time: 2.0 }]);
    let text = SceneFile::from_scene(&s).to_toml();
    assert!(text.contains("rigid = 1") && !text.contains("body = 1"), "{text}");
    assert_eq!(parse(&text, "again").unwrap(), s);
}

fn error_of(text: &str) -> String {
    parse(text, "bad.toml").unwrap_err().to_string()
}

#[test]
fn bad_files_name_the_file_field_and_problem() {
    let cases = [
        (
            PENDULUM.replace("b = 1", "b = 7"),
            "bad.toml: constraint[0].b: particle index 7 out of range (the scene has 2 particles)",
        ),
        (PENDULUM.replace("b = 1", "b = -1"), "bad.toml: constraint[0].b: particle index -1 out of range"),
        (
            PENDULUM.replace("x = [1.0, 0.0, 0.0]", "x = [1.0, 0.0, 0.0]\nmass = -2.0"),
            "bad.toml: particle[1].mass: -2 must be positive",
        ),
        (
            PENDULUM.replace("x = [1.0, 0.0, 0.0]", "x = [1.0, 0.0, 0.0]\nmass = 0.0"),
            "bad.toml: particle[1].mass: 0 must be positive",
        ),
        (PENDULUM.replace("x = [1.0, 0.0, 0.0]", "x = [1.0, nan, 0.0]"), "bad.toml: particle[1].x: must be finite"),
        (
            PENDULUM.replace("x = [1.0, 0.0, 0.0]", "x = [0.0, 0.0, 0.0]"),
            "bad.toml: constraint[0].rest: 0 must be a positive length",
        ),
        (PENDULUM.replace("dt = 0.01", "dt = -1.0"), "bad.toml: dt: -1 must be a positive"),
        (
            PENDULUM.replacen("fixed = true", "fixed = true\nv = [0.0, 1.0, 0.0]", 1),
            "bad.toml: particle[0].v: a fixed particle cannot move",
        ),
        (PENDULUM.replace("dt = 0.01", "damping = 1.5"), "bad.toml: damping: 1.5 is outside [0, 1)"),
        (PENDULUM.replace("b = 1", "b = 1\nstiffnes = 2"), "unknown field `stiffnes`"),
        (PENDULUM.replace("type = \"distance\"", "type = \"spring\""), "unknown variant `spring`"),
        (PENDULUM.replace("b = 1", ""), "bad.toml: constraint[0].b: missing"),
        (
            format!("{PENDULUM}\n[[removal]]\nbody = 0\ntime = 1.0\n"),
            "bad.toml: removal[0].body: body index 0 out of range",
        ),
        (
            format!("{PENDULUM}\n[[removal]]\nrigid = 3\ntime = 1.0\n"),
            "bad.toml: removal[0].rigid: rigid index 3 out of range",
        ),
        (
            format!("{PENDULUM}\n[[removal]]\nbody = 0\nrigid = 0\ntime = 1.0\n"),
            "bad.toml: removal[0]: give exactly one of body",
        ),
        (
            format!("{PENDULUM}\n[[block]]\nmin = [0.0, 0.0, 0.0]\nmax = [1.0, 0.0, 1.0]\n"),
            "bad.toml: block[0].max: max must exceed min on every axis (axis 1",
        ),
        (
            format!("{PENDULUM}{RIGID}").replace("mass = 2.0", "mass = -1.0"),
            "bad.toml: rigid[0].mass: -1 must be positive",
        ),
        (
            format!("{PENDULUM}{RIGID}").replace("half_extents = [0.5, 0.25, 0.125]\n", ""),
            "bad.toml: rigid[0].half_extents: missing",
        ),
        (
            format!("{PENDULUM}{RIGID}").replace("0.125]", "0.0]"),
            "bad.toml: rigid[0].half_extents: must be a positive length",
        ),
        (
            format!("{PENDULUM}{RIGID}").replace("q = [1.0, 0.2, 0.0, 0.0]", "q = [0.0, 0.0, 0.0, 0.0]"),
            "bad.toml: rigid[0].q: must be a finite, non-zero",
        ),
        (
            format!("{PENDULUM}{RIGID}").replace("mass = 2.0", "mass = 2.0\ndensity = 5.0"),
            "bad.toml: rigid[0].density: give mass or density",
        ),
        (
            format!("{PENDULUM}{RIGID}").replace("friction = 0.3", "friction = -0.3"),
            "bad.toml: rigid[0].friction: -0.3 must be ≥ 0",
        ),
        (format!("{PENDULUM}{RIGID}").replace("shape = \"box\"", "shape = \"cone\""), "unknown variant `cone`"),
        (
            format!("{PENDULUM}{RIGID}").replace("b = 1\nanchor", "b = 5\nanchor"),
            "bad.toml: joint[0].b: rigid index 5 out of range (the scene has 4 rigid bodies)",
        ),
        (format!("{PENDULUM}{RIGID}").replace("half_height = 0.3\n", ""), "bad.toml: rigid[3].half_height: missing"),
        (
            format!("{PENDULUM}{RIGID}").replace("half_height = 0.3", "half_height = -0.3"),
            "bad.toml: rigid[3].half_height: must be a positive length",
        ),
        (format!("{PENDULUM}{RIGID}").replace("axis = [0.0, 0.0, 1.0]\n", ""), "bad.toml: joint[0].axis: missing"),
        (
            format!("{PENDULUM}{RIGID}").replace("lower = -0.5", "lower = 0.5\nupper = -0.5"),
            "bad.toml: joint[0].upper: limits [0.5, -0.5] rad must satisfy lower ≤ upper",
        ),
        (
            format!("{PENDULUM}{RIGID}").replace("a = 1\nanchor", "a = 1\nb = 1\nanchor"),
            "bad.toml: joint[1].b: a joint needs two different bodies",
        ),
    ];
    for (text, expected) in cases {
        let e = error_of(&text);
        assert!(e.contains(expected), "expected `{expected}` in `{e}`");
        assert!(e.starts_with("bad.toml"), "{e}");
    }
}

/// A quaternion is scaled by its largest component before it is normalised: one whose norm
/// overflows (or whose square underflows) loads as the rotation it names instead of being
/// called non-finite; NaN, infinite and zero ones are still refused naming `q`.
#[test]
fn huge_and_tiny_quaternions_are_normalised_safely() {
    let with_q = |q: &str| format!("{PENDULUM}{RIGID}").replace("q = [1.0, 0.2, 0.0, 0.0]", &format!("q = {q}"));
    let half_turn = std::f64::consts::FRAC_1_SQRT_2;
    for (q, expected) in [
        ("[1e200, 1e200, 0.0, 0.0]", [half_turn, half_turn, 0.0, 0.0]),
        ("[-1e300, 0.0, 0.0, 1e300]", [-half_turn, 0.0, 0.0, half_turn]),
        ("[1e-200, 0.0, 0.0, 0.0]", [1.0, 0.0, 0.0, 0.0]),
        ("[3e-300, 0.0, 4e-300, 0.0]", [0.6, 0.0, 0.8, 0.0]),
    ] {
        let s = parse(&with_q(q), "q.toml").unwrap_or_else(|e| panic!("{q}: {e}"));
        let got = s.rigid[0].q.quaternion();
        let got = [got.w, got.i, got.j, got.k];
        for (g, e) in got.iter().zip(expected) {
            assert!((g - e).abs() < 1e-12, "{q}: {got:?} against {expected:?}");
        }
    }
    for q in ["[nan, 1.0, 0.0, 0.0]", "[inf, 0.0, 0.0, 0.0]", "[0.0, 0.0, 0.0, 0.0]", "[1e308, -inf, 0.0, 0.0]"] {
        let e = error_of(&with_q(q));
        assert!(e.contains("bad.toml: rigid[0].q: must be a finite, non-zero"), "{q}: {e}");
    }
}
