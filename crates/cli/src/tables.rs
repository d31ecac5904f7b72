//! Every table solverlab writes, in one place: the columns of each CSV and the functions that
//! turn a frame report, a trace row, a body, a contact or a force into a row of it.
//!
//! An experiment's tables start with [`RUN_COLUMNS`] and one column per sweep key; `simulate`
//! writes the same tables without them (its files hold one run).

use solverlab_core::sim::FrameReport;
use solverlab_core::solver::IterationReport;
use solverlab_core::{Scene, Vec3};

use crate::output::num;

/// How a run ended: the `status` column of runs.csv and the `status` of its meta.json entry,
/// written as [`RunStatus::as_str`] gives it and read back by [`RunStatus::parse`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// It ran every frame (and its study, if any).
    Ok,
    /// A stick or joint tore ([`solverlab_core::sim::tear`]) and the run went on to its last
    /// frame.
    Torn,
    /// NaN, or a blow-up bound, in a frame or in the frozen-state study.
    Diverged,
    /// The solver could not be built or prepared for the scene.
    Failed,
    /// Ctrl-C or SIGTERM stopped it.
    Interrupted,
}

impl RunStatus {
    /// Every status, in the order of the docs.
    pub const ALL: [RunStatus; 5] =
        [RunStatus::Ok, RunStatus::Torn, RunStatus::Diverged, RunStatus::Failed, RunStatus::Interrupted];

    /// The word in the tables and in meta.json: `ok`, `torn`, `diverged`, `failed`, `interrupted`.
    pub const fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Torn => "torn",
            RunStatus::Diverged => "diverged",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// The status a table or meta.json wrote as `text`, if it is one.
    pub fn parse(text: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether the run reached its last frame (`ok` or `torn`): the frozen-state study runs after
    /// these only.
    pub fn completed(self) -> bool {
        matches!(self, RunStatus::Ok | RunStatus::Torn)
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every table solverlab writes: its name (as a figure's `table` gives it), its file and its
/// own columns (after the run and sweep columns of an experiment's tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TableName {
    /// `steps.csv`: one row per frame.
    Steps,
    /// `trace.csv`: one row per inner iteration.
    Trace,
    /// `runs.csv`: one row per run.
    Runs,
    /// `convergence.csv`: the frozen-state study, one row per iteration cap.
    Convergence,
    /// `frozen_trace.csv`: the frozen step's iterations under the solver's own settings.
    FrozenTrace,
    /// `positions.csv`: the particles at the recorded frames.
    Positions,
    /// `sticks.csv`: each recorded run's sticks (with a `run` column of its own).
    Sticks,
    /// `shapes.csv`: the rigid bodies' shapes.
    Shapes,
    /// `colliders.csv`: each recorded run's world colliders (with a `run` column of its own).
    Colliders,
    /// `forces.csv`: the constraint forces at the recorded frames.
    Forces,
    /// `bodies.csv`: the bodies' poses at the recorded frames.
    Bodies,
    /// `contacts.csv`: the rigid contacts at the recorded frames.
    Contacts,
}

impl TableName {
    /// Every table, in the order of the user guide (the documentation test checks each one's
    /// columns).
    #[cfg(test)]
    pub const ALL: [TableName; 12] = [
        TableName::Steps,
        TableName::Trace,
        TableName::Runs,
        TableName::Convergence,
        TableName::FrozenTrace,
        TableName::Positions,
        TableName::Sticks,
        TableName::Shapes,
        TableName::Colliders,
        TableName::Forces,
        TableName::Bodies,
        TableName::Contacts,
    ];

    /// The name: the file's stem, and a figure's `table`.
    pub const fn name(self) -> &'static str {
        match self {
            TableName::Steps => "steps",
            TableName::Trace => "trace",
            TableName::Runs => "runs",
            TableName::Convergence => "convergence",
            TableName::FrozenTrace => "frozen_trace",
            TableName::Positions => "positions",
            TableName::Sticks => "sticks",
            TableName::Shapes => "shapes",
            TableName::Colliders => "colliders",
            TableName::Forces => "forces",
            TableName::Bodies => "bodies",
            TableName::Contacts => "contacts",
        }
    }

    /// The file in a results folder.
    pub const fn file(self) -> &'static str {
        match self {
            TableName::Steps => "steps.csv",
            TableName::Trace => "trace.csv",
            TableName::Runs => "runs.csv",
            TableName::Convergence => "convergence.csv",
            TableName::FrozenTrace => "frozen_trace.csv",
            TableName::Positions => "positions.csv",
            TableName::Sticks => "sticks.csv",
            TableName::Shapes => "shapes.csv",
            TableName::Colliders => "colliders.csv",
            TableName::Forces => "forces.csv",
            TableName::Bodies => "bodies.csv",
            TableName::Contacts => "contacts.csv",
        }
    }

    /// Its own columns: after the run and sweep columns in an experiment's tables, alone in
    /// `simulate`'s (`sticks.csv` and `colliders.csv` start with their own `run` column instead).
    pub const fn columns(self) -> &'static [&'static str] {
        match self {
            TableName::Steps => &STEP_COLUMNS,
            TableName::Trace => &TRACE_COLUMNS,
            TableName::Runs => &RUNS_COLUMNS,
            TableName::Convergence => &CONVERGENCE_COLUMNS,
            TableName::FrozenTrace => &FROZEN_COLUMNS,
            TableName::Positions => &POSITION_COLUMNS,
            TableName::Sticks => &STICK_COLUMNS,
            TableName::Shapes => &SHAPE_COLUMNS,
            TableName::Colliders => &COLLIDER_COLUMNS,
            TableName::Forces => &FORCE_COLUMNS,
            TableName::Bodies => &BODY_COLUMNS,
            TableName::Contacts => &CONTACT_COLUMNS,
        }
    }

    /// The table a `[[figure]]` names, if it is one a figure may draw from ([`FIGURE_TABLES`]).
    pub fn figure(name: &str) -> Option<TableName> {
        FIGURE_TABLES.into_iter().find(|t| t.name() == name)
    }
}

impl std::fmt::Display for TableName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Columns of `steps.csv`. `violation` is the common yardstick of every family
/// (`solverlab_core::metrics::violation`, m); `residual` is each family's own (relax: m,
/// PGS: m/s, CG and direct: relative, dimensionless); `max_violation` and `rms_violation` are the
/// geometric `|C|` of equality rows alone; `support_force` is the total normal force of the world
/// colliders (N).
#[rustfmt::skip]
pub const STEP_COLUMNS: [&str; 30] = [
    "frame", "time", "iterations", "outer_iterations", "residual", "converged", "violation", "max_violation",
    "rms_violation", "max_penetration", "max_stretch", "tear", "kinetic_energy", "potential_energy", "momentum_x",
    "momentum_y", "momentum_z", "angular_momentum_x", "angular_momentum_y", "angular_momentum_z", "com_x", "com_y", "com_z", "rms_speed", "body_drift", "top_drift", "in_place",
    "support_force", "solve_seconds", "integrate_seconds",
];

/// Columns of `trace.csv`.
pub const TRACE_COLUMNS: [&str; 8] =
    ["frame", "substep", "outer", "iteration", "residual", "residual_rms", "delta_lambda", "violation"];

/// The `steps.csv` fields of one frame report.
pub fn step_fields(r: &FrameReport) -> Vec<String> {
    let m = &r.metrics;
    vec![
        r.frame.to_string(),
        num(r.time),
        r.iterations.to_string(),
        r.outer_iterations.to_string(),
        num(r.residual),
        (r.converged as u8).to_string(),
        num(m.violation),
        num(m.max_violation),
        num(m.rms_violation),
        num(m.max_penetration),
        num(m.max_stretch),
        num(m.tear),
        num(m.kinetic_energy),
        num(m.potential_energy),
        num(m.momentum.x),
        num(m.momentum.y),
        num(m.momentum.z),
        num(m.angular_momentum.x),
        num(m.angular_momentum.y),
        num(m.angular_momentum.z),
        num(m.com.x),
        num(m.com.y),
        num(m.com.z),
        num(m.rms_speed),
        num(m.body_drift),
        num(m.top_drift),
        (m.in_place as u8).to_string(),
        num(r.support_force),
        num(r.solve_seconds),
        num(r.integrate_seconds),
    ]
}

/// Columns every table starts with; then one per sweep key.
pub const RUN_COLUMNS: [&str; 4] = ["run", "scene", "label", "family"];

/// The rest of runs.csv: one row per run, timing statistics after the warm-up frames.
/// `unconverged_frames` counts frames that ended above the solver's tolerance (their reasons are
/// in meta.json); `final_violation` and `peak_violation` are the common violation at the last
/// frame and its largest value over the run (m); `final_support_force` is the world colliders'
/// total normal force at the last frame (N). Stack columns (see `solverlab_core::metrics`):
/// `jitter` is the RMS of `rms_speed` over the settled window, the second half of the completed
/// frames (m/s); `max_body_drift` and `max_top_drift` are the largest drifts over the run (m);
/// `stood` is 1 if every body stayed in place in every frame, 0 if not, empty for scenes without
/// bodies. `peak_tear` is the largest tear over the run (a fraction: `tear` of steps.csv; above
/// 0.5 the run is `torn`), and `energy_gain` the largest rise of the total energy above the
/// start's (J, 0 if it never rose).
#[rustfmt::skip]
pub const RUNS_COLUMNS: [&str; 24] = [
    "status", "particles", "constraints", "frames_completed", "unconverged_frames", "mean_iterations",
    "mean_outer_iterations", "step_ms_median", "step_ms_p25", "step_ms_p75", "final_violation", "peak_violation",
    "final_max_stretch", "max_penetration", "final_support_force", "jitter", "max_body_drift", "max_top_drift",
    "stood", "final_state_hash", "solve_ms_median", "step_ms_mean", "peak_tear", "energy_gain",
];

/// Jitter: the RMS of the per-frame RMS particle speed over the second half of `steps` (frame 0
/// excluded), in m/s.
pub fn jitter(steps: &[solverlab_core::sim::FrameReport]) -> f64 {
    let done = steps.len().saturating_sub(1);
    let window = &steps[steps.len() - done / 2..];
    if window.is_empty() {
        return 0.0;
    }
    (window.iter().map(|r| r.metrics.rms_speed.powi(2)).sum::<f64>() / window.len() as f64).sqrt()
}

/// The rest of convergence.csv.
pub const CONVERGENCE_COLUMNS: [&str; 6] = ["cap", "iterations", "error_rms", "error_max", "violation", "seconds"];

/// The rest of frozen_trace.csv.
pub const FROZEN_COLUMNS: [&str; 5] = ["outer", "iteration", "residual", "residual_rms", "violation"];

/// Columns of `positions.csv`: one row per particle per recorded frame (m).
pub const POSITION_COLUMNS: [&str; 5] = ["frame", "particle", "x", "y", "z"];

/// Columns of `sticks.csv`: each recorded run's sticks, particle indices, rest length (m) and
/// sense (`equal`, or the limits `at_least` and `at_most`), so that figures can colour sticks by
/// stretch from the CSVs alone and draw limits as limits.
pub const STICK_COLUMNS: [&str; 5] = ["run", "a", "b", "rest", "sense"];

/// The `sticks.csv` fields (after `run`) of a scene's sticks.
pub fn stick_rows(scene: &Scene) -> Vec<[String; 4]> {
    use solverlab_core::model::{Kind, Sense};
    scene
        .constraints
        .iter()
        .filter_map(|c| match c.kind {
            Kind::Stick { a, b, rest, sense } => {
                let sense = match sense {
                    Sense::Equal => "equal",
                    Sense::AtLeast => "at_least",
                    Sense::AtMost => "at_most",
                };
                Some([a.to_string(), b.to_string(), num(rest), sense.to_string()])
            }
            Kind::Pin { .. } => None,
        })
        .collect()
}

/// Columns of `colliders.csv`: each recorded run's world colliders, for the replay. `kind` is
/// `plane` (`a` a point on it, `b` its unit normal), `sphere` (`a` its centre, `bx` its radius),
/// `block` (a solid box particles stay outside: `a` its lower and `b` its upper corner) or `box`
/// (the box particles stay inside, corners as for a block); every length in m.
pub const COLLIDER_COLUMNS: [&str; 8] = ["run", "kind", "ax", "ay", "az", "bx", "by", "bz"];

/// The `colliders.csv` fields (after `run`) of a scene.
pub fn collider_rows(scene: &Scene) -> Vec<[String; 7]> {
    let row = |kind: &str, a: Vec3, b: [f64; 3]| {
        [kind.to_string(), num(a.x), num(a.y), num(a.z), num(b[0]), num(b[1]), num(b[2])]
    };
    let mut rows = Vec::new();
    for p in &scene.planes {
        rows.push(row("plane", p.normal * p.offset, [p.normal.x, p.normal.y, p.normal.z]));
    }
    for s in &scene.spheres {
        rows.push(row("sphere", s.center, [s.radius, 0.0, 0.0]));
    }
    for b in &scene.blocks {
        rows.push(row("block", b.min, [b.max.x, b.max.y, b.max.z]));
    }
    if let Some(b) = &scene.bounds {
        rows.push(row("box", b.min, [b.max.x, b.max.y, b.max.z]));
    }
    rows
}

/// Columns of `shapes.csv`, written beside `bodies.csv` for scenes with rigid bodies: each rigid
/// body's shape (numbered as in `bodies.csv`), with its half extents for a box, its radius for a
/// sphere, and its radius and half height for a capsule (m; the others empty).
pub const SHAPE_COLUMNS: [&str; 7] = ["body", "shape", "hx", "hy", "hz", "radius", "half_height"];

/// The `shapes.csv` rows of a scene.
pub fn shape_rows(scene: &Scene) -> Vec<Vec<String>> {
    use solverlab_core::rigid::Shape;
    let n = scene.bodies.len();
    scene
        .rigid
        .iter()
        .enumerate()
        .map(|(k, body)| {
            let e = String::new;
            let (h, r, hh) = match body.shape {
                Shape::Box { half } => ([num(half.x), num(half.y), num(half.z)], e(), e()),
                Shape::Sphere { radius } => ([e(), e(), e()], num(radius), e()),
                Shape::Capsule { radius, half_height } => ([e(), e(), e()], num(radius), num(half_height)),
            };
            let [hx, hy, hz] = h;
            vec![(n + k).to_string(), body.shape.name().to_string(), hx, hy, hz, r, hh]
        })
        .collect()
}

/// The tables a `[[figure]]` may draw from, in the order its error message lists them.
pub const FIGURE_TABLES: [TableName; 6] = [
    TableName::Steps,
    TableName::Runs,
    TableName::Trace,
    TableName::Convergence,
    TableName::FrozenTrace,
    TableName::Forces,
];

/// Columns the figures add to the steps table (`figures::Table::derive_steps`).
/// `slide_acceleration` is `2 (x_com − x_com,0)/t²`, the constant acceleration that carries the
/// centre of mass this far along x from rest (m/s²): the incline's measured acceleration.
pub const DERIVED_STEP_COLUMNS: [&str; 6] =
    ["energy", "energy_ratio", "energy_change", "step_ms", "solve_ms", "slide_acceleration"];

/// The columns of an experiment table a figure can use: the run columns, the sweep columns, the
/// table's own (and, for steps, the derived ones); for `None` (a name that is no table a figure
/// draws from), the run and sweep columns alone.
pub fn columns_of(table: Option<TableName>, sweep_columns: &[String]) -> Vec<String> {
    let mut c: Vec<String> = RUN_COLUMNS.iter().map(|s| s.to_string()).collect();
    c.extend(sweep_columns.iter().cloned());
    let own = table.map_or(&[][..], TableName::columns);
    let derived: &[&str] = if table == Some(TableName::Steps) { &DERIVED_STEP_COLUMNS } else { &[] };
    c.extend(own.iter().chain(derived).map(|s| s.to_string()));
    c
}

/// The `trace.csv` fields of one iteration report.
pub fn trace_fields(frame: u64, substep: u32, r: &IterationReport) -> Vec<String> {
    let opt = |x: Option<f64>| x.map(num).unwrap_or_default();
    vec![
        frame.to_string(),
        substep.to_string(),
        r.outer.to_string(),
        r.iteration.to_string(),
        num(r.residual),
        opt(r.residual_rms),
        opt(r.delta_lambda),
        opt(r.violation),
    ]
}

/// Columns of `forces.csv`: one row per active constraint row (pins and friction pairs
/// combined) per recorded frame; see `solverlab_core::forces` for kinds and signs. Rigid joints
/// follow, one row each of kind `joint`: `a` and `b` its bodies (`world` for none), `force` the
/// magnitude of the force on `a` (N) and `torque` that of the torque on `a` about the anchor
/// (N·m; 0 for a ball joint); `torque` is empty on the other rows.
pub const FORCE_COLUMNS: [&str; 6] = ["frame", "kind", "a", "b", "force", "torque"];

/// The `forces.csv` rows of one frame from a solver's multipliers and joint forces.
pub fn force_rows(
    scene: &Scene,
    frame: u64,
    multipliers: &[(u64, f64)],
    joints: &[solverlab_core::rigid::JointForce],
    h: f64,
) -> Vec<[String; 6]> {
    let rows = solverlab_core::forces::forces(scene, multipliers, h)
        .into_iter()
        .map(|f| [frame.to_string(), f.kind.to_string(), f.a, f.b, num(f.force), String::new()]);
    let joints = joints.iter().map(|f| {
        let joint = &scene.joints[f.joint];
        let b = joint.b.map_or("world".to_string(), |b| b.to_string());
        [frame.to_string(), "joint".into(), joint.a.to_string(), b, num(f.force.norm()), num(f.torque.norm())]
    });
    rows.chain(joints).collect()
}

/// Columns of `bodies.csv`, written beside `positions.csv` for scenes with box bodies: each
/// body's centre (m) and orientation as a unit quaternion `(w, x, y, z)`, the rotation from the
/// body's own axes to the world (identity as the scene builds it). With the half extents in the
/// scene file, this redraws every box.
pub const BODY_COLUMNS: [&str; 15] =
    ["frame", "body", "cx", "cy", "cz", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"];

/// The `bodies.csv` rows of one frame: the particle box bodies (numbered first; their
/// velocity columns are empty, since a tetrahedron's velocity is its particles'), then the rigid
/// bodies (numbered after them), with `v` (m/s) and the world angular velocity `w` (rad/s).
pub fn body_rows(
    scene: &solverlab_core::Scene,
    frame: u64,
    x: &[solverlab_core::Vec3],
    rigid: &[solverlab_core::rigid::RigidState],
) -> Vec<Vec<String>> {
    let particle_bodies = scene.bodies.iter().enumerate().map(|(k, b)| {
        let (c, _) = b.frame(x);
        let q = b.orientation(x);
        let v = [c.x, c.y, c.z, q.w, q.i, q.j, q.k];
        [frame.to_string(), k.to_string()]
            .into_iter()
            .chain(v.map(num))
            .chain(std::iter::repeat_n(String::new(), 6))
            .collect()
    });
    let n = scene.bodies.len();
    let rigid_bodies = rigid.iter().enumerate().map(|(k, r)| {
        let q = r.q.quaternion();
        let v = [r.x.x, r.x.y, r.x.z, q.w, q.i, q.j, q.k, r.v.x, r.v.y, r.v.z, r.w.x, r.w.y, r.w.z];
        [frame.to_string(), (n + k).to_string()].into_iter().chain(v.map(num)).collect()
    });
    particle_bodies.chain(rigid_bodies).collect()
}

/// Columns of `contacts.csv`: one row per rigid-body contact point per recorded frame, at the
/// start of the frame's last (sub)step. `body_b` is a rigid body index (numbered as in
/// `bodies.csv`) or a world collider (`plane0`, `block2`, …); the normal points from `b` to `a`;
/// `depth` is the penetration (m, negative for a speculative gap); forces in N.
pub const CONTACT_COLUMNS: [&str; 12] =
    ["frame", "body_a", "body_b", "x", "y", "z", "nx", "ny", "nz", "depth", "normal_force", "tangent_force"];

/// The `contacts.csv` rows of one frame.
pub fn contact_rows(
    scene: &solverlab_core::Scene,
    frame: u64,
    contacts: &[solverlab_core::rigid::ContactForce],
) -> Vec<Vec<String>> {
    let n = scene.bodies.len();
    contacts
        .iter()
        .map(|c| {
            let k = &c.contact;
            let b = match k.b {
                solverlab_core::rigid::Other::Body(j) => (n + j).to_string(),
                other => other.name(),
            };
            let p = &k.point;
            let v = [p.point.x, p.point.y, p.point.z, p.normal.x, p.normal.y, p.normal.z, -p.separation];
            [frame.to_string(), (n + k.a).to_string(), b]
                .into_iter()
                .chain(v.map(num))
                .chain([num(c.normal_force), num(c.tangent_force)])
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod documented {
    use super::*;

    /// Every word inside a backtick span of the user guide (`docs/*.md`).
    fn documented_words() -> std::collections::BTreeSet<String> {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        let mut words = std::collections::BTreeSet::new();
        for entry in std::fs::read_dir(&docs).expect("docs/ exists") {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&path).unwrap();
                for span in text.split('`').skip(1).step_by(2) {
                    words.extend(
                        span.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .filter(|w| !w.is_empty())
                            .map(String::from),
                    );
                }
            }
        }
        words
    }

    /// Every column any table is written with is named, in backticks, in the user guide.
    #[test]
    fn every_column_the_code_writes_is_documented() {
        let words = documented_words();
        let tables: Vec<(&str, &[&str])> = TableName::ALL
            .iter()
            .map(|t| (t.file(), t.columns()))
            .chain([("run columns", &RUN_COLUMNS[..]), ("derived figure columns", &DERIVED_STEP_COLUMNS[..])])
            .collect();
        let missing: Vec<String> = tables
            .iter()
            .flat_map(|(t, cols)| cols.iter().filter(|c| !words.contains(**c)).map(move |c| format!("{t}: {c}")))
            .collect();
        assert!(missing.is_empty(), "columns not documented in docs/*.md: {missing:?}");
    }
}

#[cfg(test)]
mod status {
    use super::RunStatus;

    /// The word written to runs.csv, the one serde writes to meta.json and the one read back are
    /// the same for every status.
    #[test]
    fn statuses_are_written_and_read_as_the_same_word() {
        for s in RunStatus::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), serde_json::Value::String(s.as_str().into()));
            assert_eq!(serde_json::from_value::<RunStatus>(s.as_str().into()).unwrap(), s);
            assert_eq!(RunStatus::parse(&s.to_string()), Some(s));
        }
        assert_eq!(RunStatus::parse("OK"), None);
    }
}
