//! # solverlab-scenes
//!
//! The builtin scenes (one module each under [`builtin`], each naming the section of Jakobsen's
//! article or the paper it comes from) and the scene-file format ([`mod@file`]).
//!
//! A scene is named either by a builtin name with parameters (`cloth` with `nx = 32`) or by the
//! path of a TOML file. [`resolve`] turns either into a validated [`Scene`]; every error names the
//! file (or builtin), the field and the problem.

pub mod builtin;
pub mod file;
pub mod mutate;
pub mod params;

use std::path::Path;

use solverlab_core::Scene;

pub use builtin::{builtins, Builtin};
pub use params::{ParamSpec, Params, Value};

/// A scene that could not be built: where, which field, and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneError {
    /// The file path, or `builtin NAME`.
    pub source: String,
    /// The field path (`constraint[3].b`), where one is to blame.
    pub field: Option<String>,
    /// What is wrong.
    pub problem: String,
}

impl SceneError {
    /// An error in `source` at `field`.
    pub fn new(source: impl Into<String>, field: Option<String>, problem: impl Into<String>) -> Self {
        Self { source: source.into(), field, problem: problem.into() }
    }
}

impl std::fmt::Display for SceneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{}: {}: {}", self.source, field, self.problem),
            None => write!(f, "{}: {}", self.source, self.problem),
        }
    }
}

impl std::error::Error for SceneError {}

/// Keys every scene accepts through `--set`, builtin or file: `dt`, `damping`, `gravity`.
pub const COMMON_KEYS: [&str; 3] = ["dt", "damping", "gravity"];

/// Builds the scene `name_or_file` with `--set` overrides `sets` (`key=value` strings; values
/// in TOML syntax: `12`, `true`, `"top"`, `[0.0, -9.81, 0.0]`).
///
/// A name that is an existing path, or ends in `.toml`, is read as a scene file, which accepts
/// only the common keys; any other name must be a builtin.
pub fn resolve(name_or_file: &str, sets: &[String]) -> Result<Scene, SceneError> {
    let overrides = params::parse_sets(name_or_file, sets)?;
    let is_file = Path::new(name_or_file).exists() || name_or_file.ends_with(".toml");
    let (mut scene, source) = if is_file {
        if let Some((key, _)) = overrides.iter().find(|(k, _)| !COMMON_KEYS.contains(&k.as_str())) {
            return Err(SceneError::new(
                name_or_file,
                Some(key.clone()),
                format!("a scene file accepts only --set {} (edit the file for anything else)", COMMON_KEYS.join(", ")),
            ));
        }
        (file::load(Path::new(name_or_file))?, name_or_file.to_string())
    } else {
        let b = builtin::find(name_or_file).ok_or_else(|| {
            let names: Vec<&str> = builtins().iter().map(|b| b.name).collect();
            SceneError::new(
                format!("scene `{name_or_file}`"),
                None,
                format!(
                    "no such file, and not a builtin{} (builtins: {})",
                    solverlab_core::names::did_you_mean(name_or_file, names.iter().copied()),
                    names.join(", ")
                ),
            )
        })?;
        let source = format!("builtin {}", b.name);
        let specific: Vec<(String, Value)> =
            overrides.iter().filter(|(k, _)| !COMMON_KEYS.contains(&k.as_str())).cloned().collect();
        let params = Params::resolve(&source, &(b.params)(), &specific)?;
        ((b.build)(&params).map_err(|e| SceneError::new(&source, e.field, e.problem))?, source)
    };
    for (key, value) in overrides.iter().filter(|(k, _)| COMMON_KEYS.contains(&k.as_str())) {
        params::apply_common(&mut scene, &source, key, value)?;
    }
    scene.validate().map_err(|e| SceneError::new(&source, Some(e.field), e.problem))?;
    Ok(scene)
}
