//! The range checks every solver configuration uses, so that the same kind of parameter gets the
//! same message everywhere: `FIELD: VALUE must be …` with the unit where there is one.

use crate::ConfigError;

/// A count (iterations, sweeps, budgets) of at least `min`.
pub(crate) fn count(field: &str, value: u32, min: u32) -> Result<(), ConfigError> {
    match value >= min {
        true => Ok(()),
        false => Err(ConfigError::new(field, format!("{value} must be at least {min}"))),
    }
}

/// A finite number of at least 0, in `unit` (for example `"m"`; empty for none).
pub(crate) fn non_negative(field: &str, value: f64, unit: &str) -> Result<(), ConfigError> {
    match value >= 0.0 && value.is_finite() {
        true => Ok(()),
        false if unit.is_empty() => Err(ConfigError::new(field, format!("{value} must be a finite number ≥ 0"))),
        false => Err(ConfigError::new(field, format!("{value} must be a finite number ≥ 0 ({unit})"))),
    }
}

/// A number in `[lo, hi]`, `[lo, hi)`, `(lo, hi)` or `(lo, hi]` (`closed` says which ends belong).
pub(crate) fn within(field: &str, value: f64, (lo, hi): (f64, f64), closed: (bool, bool)) -> Result<(), ConfigError> {
    let above = if closed.0 { value >= lo } else { value > lo };
    let below = if closed.1 { value <= hi } else { value < hi };
    match above && below {
        true => Ok(()),
        false => Err(ConfigError::new(
            field,
            format!(
                "{value} is outside {}{lo}, {hi}{}",
                if closed.0 { '[' } else { '(' },
                if closed.1 { ']' } else { ')' }
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_field_the_value_and_the_range() {
        assert_eq!(count("iterations", 0, 1).unwrap_err().to_string(), "iterations: 0 must be at least 1");
        assert!(count("iterations", 1, 1).is_ok());
        assert_eq!(
            non_negative("tolerance", -1.0, "m").unwrap_err().to_string(),
            "tolerance: -1 must be a finite number ≥ 0 (m)"
        );
        assert!(non_negative("slop", f64::NAN, "").is_err() && non_negative("slop", 0.0, "").is_ok());
        assert_eq!(
            within("omega", 2.0, (0.0, 2.0), (false, false)).unwrap_err().to_string(),
            "omega: 2 is outside (0, 2)"
        );
        assert!(within("warm_start", 1.0, (0.0, 1.0), (true, true)).is_ok());
        assert!(within("warm_start", f64::NAN, (0.0, 1.0), (true, true)).is_err());
    }
}
