//! Solver families and the registry that lists them.
//!
//! A [`Family`] is everything solverlab needs to know about one kind of solver: its TOML `kind`,
//! how to read and range-check a settings table (every error names its field), its presets, how
//! to build a solver from settings, its capped form for convergence studies (exactly `n`
//! iterations, tolerance off) and the substeps a run uses when none are given. A
//! [`SolverConfig`] is a family with resolved settings: a TOML table in which every setting has
//! its value, defaults filled in, the form `meta.json` and `solverlab solver list` print.
//!
//! [`Registry::builtin`] holds solverlab's five families. An outside crate adds its own with
//! [`Registry::with`] and hands the registry to the command line (`solverlab_cli::main_with`);
//! experiment files then name its `kind` like any builtin. [`Typed`] makes a family from a
//! settings struct (serde, with defaults) and three functions, the way the builtin families are
//! made.

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;
use solverlab_core::Solver;

use crate::ConfigError;

/// One kind of solver: what the registry and the command line need to know about it.
pub trait Family: Send + Sync {
    /// The TOML `kind` that names it (`relax`, `pgs`, …).
    fn kind(&self) -> &'static str;
    /// One line on what it is.
    fn summary(&self) -> &'static str;
    /// Reads a settings table (without `kind`; a missing key takes its default), checks every
    /// value's range, and returns every setting with its value: the resolved table. Errors name
    /// the field.
    fn resolve(&self, settings: &toml::Table) -> Result<toml::Table, ConfigError>;
    /// The presets, each with a one-line summary and its settings (resolved).
    fn presets(&self) -> Vec<Preset>;
    /// A solver labelled `label` from resolved settings.
    fn build(&self, settings: &toml::Table, label: &str) -> Result<Box<dyn Solver>, ConfigError>;
    /// The settings for a convergence study: exactly `iterations` iterations (however the
    /// family counts them) with the tolerance off. A family without an iteration count returns
    /// the settings unchanged.
    fn capped(&self, settings: &toml::Table, iterations: u64) -> toml::Table;
    /// The substeps a run takes when the command line gives none (default: 1).
    fn substeps(&self, _settings: &toml::Table) -> u32 {
        1
    }
}

/// A solver configuration: a family and its resolved settings.
#[derive(Clone)]
pub struct SolverConfig {
    family: Arc<dyn Family>,
    settings: toml::Table,
}

impl SolverConfig {
    /// The settings `settings` (resolved and checked by the family).
    pub fn new(family: Arc<dyn Family>, settings: &toml::Table) -> Result<Self, ConfigError> {
        let settings = family.resolve(settings)?;
        Ok(Self { family, settings })
    }

    /// The family's `kind`.
    pub fn kind(&self) -> &'static str {
        self.family.kind()
    }

    /// The family.
    pub fn family(&self) -> &Arc<dyn Family> {
        &self.family
    }

    /// Every setting with its value (without `kind`).
    pub fn settings(&self) -> &toml::Table {
        &self.settings
    }

    /// The settings as a solver table: `kind` first, then every setting.
    pub fn to_table(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("kind".into(), toml::Value::String(self.kind().into()));
        t.extend(self.settings.iter().map(|(k, v)| (k.clone(), v.clone())));
        t
    }

    /// A solver labelled `label`.
    pub fn build(&self, label: &str) -> Result<Box<dyn Solver>, ConfigError> {
        self.family.build(&self.settings, label)
    }

    /// Exactly `iterations` iterations, tolerance off ([`Family::capped`]).
    pub fn capped(&self, iterations: u64) -> SolverConfig {
        Self { family: self.family.clone(), settings: self.family.capped(&self.settings, iterations) }
    }

    /// The substeps a run uses when the command line gives none ([`Family::substeps`]).
    pub fn default_substeps(&self) -> u32 {
        self.family.substeps(&self.settings)
    }

    /// The settings as the typed struct `C` of a family made with [`Typed`] (`None` if they do
    /// not read as one).
    pub fn typed<C: DeserializeOwned>(&self) -> Option<C> {
        toml::Value::Table(self.settings.clone()).try_into().ok()
    }

    /// A configuration of a family made with [`Typed`] from its settings struct, unchecked (the
    /// solver checks them when it is built).
    pub fn of<C: Settings>(family: Typed<C>, settings: &C) -> SolverConfig {
        SolverConfig { family: Arc::new(family), settings: Typed::<C>::table(settings) }
    }

    /// These settings with `key` set to `value`, checked again.
    pub fn with(&self, key: &str, value: toml::Value) -> Result<SolverConfig, ConfigError> {
        let mut t = self.settings.clone();
        t.insert(key.into(), value);
        SolverConfig::new(self.family.clone(), &t)
    }
}

impl fmt::Debug for SolverConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SolverConfig({})", toml::Value::Table(self.to_table()))
    }
}

impl PartialEq for SolverConfig {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind() && self.settings == other.settings
    }
}

impl Serialize for SolverConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_table().serialize(s)
    }
}

/// A named configuration users can pick with `--solver NAME`.
#[derive(Clone, Debug)]
pub struct Preset {
    /// The name.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// The settings.
    pub config: SolverConfig,
}

/// The families a command line knows, in the order `solverlab solver list` shows them.
#[derive(Clone, Default)]
pub struct Registry {
    families: Vec<Arc<dyn Family>>,
}

impl Registry {
    /// solverlab's own families, one line each.
    pub fn builtin() -> Self {
        Registry::default()
            .with(crate::relax::family())
            .with(crate::newton::cg::family())
            .with(crate::newton::direct::family())
            .with(crate::pgs::family())
            .with(crate::descent::family())
    }

    /// This registry with `family` added after the others (it replaces a family of the same
    /// `kind`).
    pub fn with(mut self, family: impl Family + 'static) -> Self {
        self.families.retain(|f| f.kind() != family.kind());
        self.families.push(Arc::new(family));
        self
    }

    /// Every family.
    pub fn families(&self) -> &[Arc<dyn Family>] {
        &self.families
    }

    /// The family of `kind`.
    pub fn family(&self, kind: &str) -> Option<&Arc<dyn Family>> {
        self.families.iter().find(|f| f.kind() == kind)
    }

    /// Every family's presets, family by family.
    pub fn presets(&self) -> Vec<Preset> {
        self.families.iter().flat_map(|f| f.presets()).collect()
    }

    /// The preset called `name`.
    pub fn preset(&self, name: &str) -> Option<Preset> {
        self.presets().into_iter().find(|p| p.name == name)
    }

    /// The configuration of a solver table (`kind` and settings, or `preset` and the settings
    /// that differ from it, as `{ preset = "tgs-soft", sleep_time = 0.5 }`). Errors name the
    /// field.
    pub fn parse(&self, table: &toml::Table) -> Result<SolverConfig, ConfigError> {
        if let Some(name) = table.get("preset") {
            let toml::Value::String(name) = name else {
                return Err(ConfigError::new("preset", format!("{name} is not a preset name")));
            };
            let preset = self.preset(name).ok_or_else(|| {
                let names: Vec<&str> = self.presets().iter().map(|p| p.name).collect();
                let hint = solverlab_core::names::did_you_mean(name, names.iter().copied());
                ConfigError::new("preset", format!("unknown preset `{name}`{hint} (presets: {})", names.join(", ")))
            })?;
            let mut settings = preset.config.settings().clone();
            for (key, value) in table.iter().filter(|(k, _)| *k != "preset") {
                if key == "kind" {
                    if value.as_str() != Some(preset.config.kind()) {
                        let kind = preset.config.kind();
                        return Err(ConfigError::new(
                            "kind",
                            format!("{value} is not preset `{name}`'s kind `{kind}`"),
                        ));
                    }
                    continue;
                }
                settings.insert(key.clone(), value.clone());
            }
            return SolverConfig::new(preset.config.family().clone(), &settings);
        }
        let kinds = || self.families.iter().map(|f| format!("`{}`", f.kind())).collect::<Vec<_>>().join(", ");
        let kind = match table.get("kind") {
            Some(toml::Value::String(k)) => k,
            Some(other) => return Err(ConfigError::new("kind", format!("{other} is not a name (kinds: {})", kinds()))),
            None => return Err(ConfigError::new("kind", format!("missing (kinds: {})", kinds()))),
        };
        let family = self.family(kind).ok_or_else(|| {
            let names = self.families.iter().map(|f| f.kind());
            let hint = solverlab_core::names::did_you_mean(kind, names);
            ConfigError::new("kind", format!("unknown kind `{kind}`{hint} (kinds: {})", kinds()))
        })?;
        let mut settings = table.clone();
        settings.remove("kind");
        SolverConfig::new(family.clone(), &settings)
    }
}

/// A family's settings struct: serde with defaults for every field, and its range checks.
pub trait Settings: Serialize + DeserializeOwned + Default + Clone + Send + Sync + 'static {
    /// Checks every value's range; the error names the field.
    fn validate(&self) -> Result<(), ConfigError>;
}

/// A solver labelled by the `&str` from settings `C`.
pub type BuildFn<C> = fn(&C, &str) -> Result<Box<dyn Solver>, ConfigError>;

/// A family made from a settings struct `C` and plain functions: the form of the builtin
/// families, and the shortest way to write one.
pub struct Typed<C: Settings> {
    /// The TOML `kind`.
    pub kind: &'static str,
    /// One line on the family.
    pub summary: &'static str,
    /// The presets: name, one-line summary, settings.
    pub presets: fn() -> Vec<(&'static str, &'static str, C)>,
    /// A solver from checked settings.
    pub build: BuildFn<C>,
    /// Sets exactly `n` iterations and the tolerance off (leave it as it is if the family
    /// counts no iterations).
    pub cap: fn(&mut C, u64),
    /// The substeps a run takes when none are given.
    pub substeps: fn(&C) -> u32,
}

impl<C: Settings> Typed<C> {
    /// The settings of a resolved table (which [`Family::resolve`] made, so they read).
    fn read(&self, settings: &toml::Table) -> C {
        toml::Value::Table(settings.clone()).try_into().expect("resolved settings read back")
    }

    fn table(c: &C) -> toml::Table {
        toml::Table::try_from(c).expect("settings serialise to a table")
    }
}

/// A value that does not fit its field: the field named, with the value and what serde expected.
fn field_error<C: DeserializeOwned>(settings: &toml::Table, e: toml::de::Error) -> ConfigError {
    // Read each key alone (the others take their defaults) to find the one at fault.
    for (key, value) in settings {
        let mut one = toml::Table::new();
        one.insert(key.clone(), value.clone());
        if let Err(e) = toml::Value::Table(one).try_into::<C>() {
            let message = e.message().trim_end().to_string();
            return if message.starts_with("unknown field") {
                ConfigError::new(key, solverlab_core::names::annotate_unknown(&message))
            } else if message.ends_with("expected u32") {
                ConfigError::new(key, format!("{value} must be a whole number from 0 to {}", u32::MAX))
            } else {
                ConfigError::new(key, format!("{value}: {}", solverlab_core::names::annotate_unknown(&message)))
            };
        }
    }
    ConfigError::new("settings", e.message().trim_end().to_string())
}

impl<C: Settings> Family for Typed<C> {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn summary(&self) -> &'static str {
        self.summary
    }

    fn resolve(&self, settings: &toml::Table) -> Result<toml::Table, ConfigError> {
        let c: C = toml::Value::Table(settings.clone()).try_into().map_err(|e| field_error::<C>(settings, e))?;
        c.validate()?;
        Ok(Self::table(&c))
    }

    fn presets(&self) -> Vec<Preset> {
        let family: Arc<dyn Family> = Arc::new(*self);
        (self.presets)()
            .into_iter()
            .map(|(name, summary, c)| Preset {
                name,
                summary,
                config: SolverConfig { family: family.clone(), settings: Self::table(&c) },
            })
            .collect()
    }

    fn build(&self, settings: &toml::Table, label: &str) -> Result<Box<dyn Solver>, ConfigError> {
        (self.build)(&self.read(settings), label)
    }

    fn capped(&self, settings: &toml::Table, iterations: u64) -> toml::Table {
        let mut c = self.read(settings);
        (self.cap)(&mut c, iterations);
        Self::table(&c)
    }

    fn substeps(&self, settings: &toml::Table) -> u32 {
        (self.substeps)(&self.read(settings))
    }
}

impl<C: Settings> Clone for Typed<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: Settings> Copy for Typed<C> {}

/// An iteration count for a settings field (`u32`), saturated.
pub fn count_of(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
