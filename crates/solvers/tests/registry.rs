//! The family registry: every preset round-trips (settings table → configuration → table), the
//! builtin families are the five, and a settings table with a wrong field gets a message naming it.

use solverlab_solvers::{presets, Registry};

#[test]
fn every_preset_round_trips_through_its_table() {
    let registry = Registry::builtin();
    for p in presets() {
        let table = p.config.to_table();
        assert_eq!(table.keys().next().map(String::as_str), Some("kind"), "{}: kind first", p.name);
        let again = registry.parse(&table).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(again, p.config, "{}", p.name);
        let text = toml::to_string(&table).unwrap();
        let reread: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(registry.parse(&reread).unwrap(), p.config, "{}: through its TOML text", p.name);
    }
}

#[test]
fn the_builtin_registry_lists_five_families_and_eighteen_presets() {
    let registry = Registry::builtin();
    let kinds: Vec<&str> = registry.families().iter().map(|f| f.kind()).collect();
    assert_eq!(kinds, ["relax", "cg", "direct", "pgs", "block_descent"]);
    assert_eq!(registry.presets().len(), 18);
    assert!(registry.preset("soft-step").is_some_and(|p| p.config.default_substeps() == 4));
}

#[test]
fn wrong_settings_are_named_by_their_field() {
    let registry = Registry::builtin();
    let parse = |text: &str| registry.parse(&toml::from_str(text).unwrap()).unwrap_err().to_string();
    assert_eq!(parse("kind = \"pgs\"\niterations = -1"), "iterations: -1 must be a whole number from 0 to 4294967295");
    assert!(parse("kind = \"pgs\"\nitrations = 4").starts_with("itrations: unknown field"));
    assert_eq!(parse("kind = \"relax\"\nomega = 3.0"), "omega: 3 is outside (0, 2)");
    assert!(parse("kind = \"pgz\"").starts_with("kind: unknown kind `pgz`"));
    assert!(parse("iterations = 3").starts_with("kind: missing"));
    assert!(parse("kind = \"cg\"\nforcing = \"sometimes\"").starts_with("forcing: "));
}

/// The capped form runs exactly the cap with the tolerance off, for the iteration-counting
/// families; the reference ignores caps.
#[test]
fn the_capped_form_sets_the_count_and_turns_the_tolerance_off() {
    let registry = Registry::builtin();
    for (name, key) in [("gs", "iterations"), ("pgs", "iterations"), ("cg", "cg_budget")] {
        let capped = registry.preset(name).unwrap().config.capped(7);
        assert_eq!(capped.settings()[key].as_integer(), Some(7), "{name}");
        assert_eq!(capped.settings()["tolerance"].as_float(), Some(0.0), "{name}");
    }
    let direct = registry.preset("direct").unwrap().config;
    assert_eq!(direct.capped(7), direct);
}

#[test]
fn a_preset_with_changed_settings_is_that_preset_but_for_them() {
    let registry = Registry::builtin();
    let parse = |text: &str| registry.parse(&toml::from_str(text).unwrap());
    let base = registry.preset("tgs-soft").unwrap().config;
    let sleepy = parse("preset = \"tgs-soft\"\nsleep_time = 0.5").unwrap();
    assert_eq!(sleepy.kind(), "pgs");
    for (key, value) in base.settings() {
        let expected = if key == "sleep_time" { &toml::Value::Float(0.5) } else { value };
        assert_eq!(sleepy.settings().get(key), Some(expected), "{key}");
    }
    assert_eq!(parse("preset = \"tgs-soft\"\nkind = \"pgs\"").unwrap(), base);
    let error = |text: &str| parse(text).unwrap_err().to_string();
    assert!(
        error("preset = \"tgs-sfot\"").starts_with("preset: unknown preset `tgs-sfot`"),
        "{}",
        error("preset = \"tgs-sfot\"")
    );
    assert!(error("preset = 3").starts_with("preset: 3 is not a preset name"));
    assert!(error("preset = \"gs\"\nkind = \"pgs\"").starts_with("kind: "));
    assert!(error("preset = \"tgs-soft\"\nsleep_tim = 0.5").starts_with("sleep_tim: unknown field"));
    assert!(error("preset = \"tgs-soft\"\nsleep_time = -1.0").starts_with("sleep_time: "));
}
