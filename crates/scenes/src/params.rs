//! Builtin-scene parameters and `--set key=value` overrides.

use std::collections::BTreeMap;

use solverlab_core::{Scene, Vec3};

use crate::SceneError;

/// A parameter value: a number, a flag or a word.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A number (integers are numbers too).
    Num(f64),
    /// A flag.
    Bool(bool),
    /// A word, such as `"top"`.
    Str(String),
    /// A 3-vector, such as gravity.
    Vec3([f64; 3]),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Num(x) => write!(f, "{x}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Str(s) => write!(f, "\"{s}\""),
            Value::Vec3(v) => write!(f, "[{}, {}, {}]", v[0], v[1], v[2]),
        }
    }
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Num(_) => "a number",
            Value::Bool(_) => "true or false",
            Value::Str(_) => "a quoted word",
            Value::Vec3(_) => "a vector [x, y, z]",
        }
    }

    fn from_toml(v: toml::Value) -> Option<Value> {
        match v {
            toml::Value::Integer(i) => Some(Value::Num(i as f64)),
            toml::Value::Float(x) => Some(Value::Num(x)),
            toml::Value::Boolean(b) => Some(Value::Bool(b)),
            toml::Value::String(s) => Some(Value::Str(s)),
            toml::Value::Array(a) if a.len() == 3 => {
                let mut out = [0.0; 3];
                for (o, x) in out.iter_mut().zip(a) {
                    *o = match x {
                        toml::Value::Integer(i) => i as f64,
                        toml::Value::Float(f) => f,
                        _ => return None,
                    };
                }
                Some(Value::Vec3(out))
            }
            _ => None,
        }
    }
}

/// A builtin's parameter: name, default and meaning (with unit).
#[derive(Clone, Debug)]
pub struct ParamSpec {
    /// The key for `--set`.
    pub name: &'static str,
    /// Its default, which also fixes its type.
    pub default: Value,
    /// What it means, with its unit.
    pub doc: &'static str,
}

impl ParamSpec {
    /// A numeric parameter.
    pub fn num(name: &'static str, default: f64, doc: &'static str) -> Self {
        Self { name, default: Value::Num(default), doc }
    }
    /// A flag.
    pub fn flag(name: &'static str, default: bool, doc: &'static str) -> Self {
        Self { name, default: Value::Bool(default), doc }
    }
    /// A word.
    pub fn word(name: &'static str, default: &str, doc: &'static str) -> Self {
        Self { name, default: Value::Str(default.to_string()), doc }
    }
}

/// Resolved parameters of one builtin: defaults overridden by `--set`.
#[derive(Clone, Debug)]
pub struct Params {
    source: String,
    values: BTreeMap<String, Value>,
}

/// A parameter-level error inside a builtin's build function.
#[derive(Clone, Debug)]
pub struct ParamError {
    /// The parameter at fault.
    pub field: Option<String>,
    /// What is wrong.
    pub problem: String,
}

impl ParamError {
    /// An error about parameter `field`.
    pub fn new(field: &str, problem: impl Into<String>) -> Self {
        Self { field: Some(field.to_string()), problem: problem.into() }
    }
}

impl Params {
    /// Checks `overrides` against `specs` (unknown keys and wrong types are errors) and fills in
    /// defaults.
    pub fn resolve(source: &str, specs: &[ParamSpec], overrides: &[(String, Value)]) -> Result<Params, SceneError> {
        let mut values: BTreeMap<String, Value> =
            specs.iter().map(|s| (s.name.to_string(), s.default.clone())).collect();
        for (key, value) in overrides {
            let Some(spec) = specs.iter().find(|s| s.name == key) else {
                let known: Vec<&str> = specs.iter().map(|s| s.name).chain(crate::COMMON_KEYS).collect();
                return Err(SceneError::new(
                    source,
                    Some(key.clone()),
                    format!(
                        "unknown parameter{} (known: {})",
                        solverlab_core::names::did_you_mean(key, known.iter().copied()),
                        known.join(", ")
                    ),
                ));
            };
            if std::mem::discriminant(&spec.default) != std::mem::discriminant(value) {
                return Err(SceneError::new(
                    source,
                    Some(key.clone()),
                    format!("expected {}, got {value}", spec.default.type_name()),
                ));
            }
            values.insert(key.clone(), value.clone());
        }
        Ok(Params { source: source.to_string(), values })
    }

    /// Defaults only.
    pub fn defaults(specs: &[ParamSpec]) -> Params {
        Params::resolve("defaults", specs, &[]).expect("defaults are valid")
    }

    /// Every value, by name.
    pub fn values(&self) -> &BTreeMap<String, Value> {
        &self.values
    }

    /// Where the parameters come from (for messages).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// A number.
    pub fn num(&self, key: &str) -> f64 {
        match self.values.get(key) {
            Some(Value::Num(x)) => *x,
            _ => panic!("builtin reads undeclared numeric parameter `{key}`"),
        }
    }

    /// A positive finite number.
    pub fn positive(&self, key: &str) -> Result<f64, ParamError> {
        let x = self.num(key);
        if x > 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(ParamError::new(key, format!("{x} must be positive")))
        }
    }

    /// A non-negative finite number.
    pub fn non_negative(&self, key: &str) -> Result<f64, ParamError> {
        let x = self.num(key);
        if x >= 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(ParamError::new(key, format!("{x} must be ≥ 0")))
        }
    }

    /// A whole number in `min..=max`.
    pub fn count(&self, key: &str, min: usize, max: usize) -> Result<usize, ParamError> {
        let x = self.num(key);
        if x.fract() == 0.0 && x >= min as f64 && x <= max as f64 {
            Ok(x as usize)
        } else {
            Err(ParamError::new(key, format!("{x} must be a whole number in {min}..={max}")))
        }
    }

    /// A flag.
    pub fn flag(&self, key: &str) -> bool {
        match self.values.get(key) {
            Some(Value::Bool(b)) => *b,
            _ => panic!("builtin reads undeclared flag `{key}`"),
        }
    }

    /// A word that must be one of `allowed`.
    pub fn word(&self, key: &str, allowed: &[&str]) -> Result<String, ParamError> {
        match self.values.get(key) {
            Some(Value::Str(s)) if allowed.contains(&s.as_str()) => Ok(s.clone()),
            Some(Value::Str(s)) => Err(ParamError::new(key, format!("\"{s}\" is not one of {}", allowed.join(", ")))),
            _ => panic!("builtin reads undeclared word `{key}`"),
        }
    }
}

/// Parses `key=value` strings; values are TOML (`12`, `1.5`, `true`, `"top"`, `[0, -9.81, 0]`),
/// and a bare word that is not TOML is taken as a word.
pub fn parse_sets(source: &str, sets: &[String]) -> Result<Vec<(String, Value)>, SceneError> {
    let mut out = Vec::new();
    for s in sets {
        let Some((key, raw)) = s.split_once('=') else {
            return Err(SceneError::new(source, None, format!("--set `{s}`: expected key=value")));
        };
        let key = key.trim().to_string();
        let raw = raw.trim();
        let parsed = toml::from_str::<toml::Table>(&format!("v = {raw}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .and_then(Value::from_toml);
        let value = match parsed {
            Some(v) => v,
            None if !raw.is_empty() && raw.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') => {
                Value::Str(raw.to_string())
            }
            None => {
                return Err(SceneError::new(
                    source,
                    Some(key),
                    format!("cannot read `{raw}` as a number, flag, word or [x, y, z]"),
                ))
            }
        };
        out.push((key, value));
    }
    Ok(out)
}

/// Applies one of [`crate::COMMON_KEYS`] to a built scene.
pub fn apply_common(scene: &mut Scene, source: &str, key: &str, value: &Value) -> Result<(), SceneError> {
    let bad = |what: &str| SceneError::new(source, Some(key.to_string()), format!("expected {what}, got {value}"));
    match (key, value) {
        ("dt", Value::Num(x)) => scene.dt = *x,
        ("damping", Value::Num(x)) => scene.damping = *x,
        ("gravity", Value::Vec3(g)) => scene.gravity = Vec3::new(g[0], g[1], g[2]),
        ("gravity", _) => return Err(bad("a vector [x, y, z] in m/s²")),
        _ => return Err(bad("a number")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_parse_as_toml_or_words() {
        let v = parse_sets(
            "t",
            &["n=12".into(), "pin=top".into(), "shear=false".into(), "gravity=[0, -1, 0]".into(), "k = 0.5".into()],
        )
        .unwrap();
        assert_eq!(v[0], ("n".into(), Value::Num(12.0)));
        assert_eq!(v[1], ("pin".into(), Value::Str("top".into())));
        assert_eq!(v[2], ("shear".into(), Value::Bool(false)));
        assert_eq!(v[3], ("gravity".into(), Value::Vec3([0.0, -1.0, 0.0])));
        assert_eq!(v[4], ("k".into(), Value::Num(0.5)));
        assert!(parse_sets("t", &["novalue".into()]).is_err());
    }

    #[test]
    fn unknown_and_mistyped_parameters_are_named() {
        let specs = [ParamSpec::num("n", 3.0, "count")];
        let e = Params::resolve("builtin x", &specs, &[("m".into(), Value::Num(1.0))]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("m"));
        assert!(e.problem.contains("unknown parameter"));
        let e = Params::resolve("builtin x", &specs, &[("n".into(), Value::Bool(true))]).unwrap_err();
        assert!(e.to_string().contains("expected a number"), "{e}");
    }
}
