//! Progress on stderr for every command that can take more than a few seconds: a bar on a
//! terminal, and without one (a pipe, a log file, a cluster job) a plain line every
//! [`LINE_EVERY`] seconds (or `SOLVERLAB_PROGRESS_SECONDS`), so a long run is never silent and a
//! log stays short.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Seconds between two progress lines when stderr is not a terminal, unless the environment
/// variable `SOLVERLAB_PROGRESS_SECONDS` gives another number.
pub const LINE_EVERY: f64 = 5.0;

fn line_every() -> Duration {
    let s = std::env::var("SOLVERLAB_PROGRESS_SECONDS").ok().and_then(|v| v.parse::<f64>().ok());
    Duration::from_secs_f64(s.filter(|s| s.is_finite() && *s >= 0.0).unwrap_or(LINE_EVERY))
}

/// A count of `len` units of work (frames, figures) with a message.
pub struct Progress {
    bar: ProgressBar,
    message: String,
    unit: &'static str,
    start: Instant,
    every: Duration,
    /// When the last line was printed (no terminal only).
    last_line: Option<Mutex<Instant>>,
}

impl Progress {
    /// Starts counting `len` `unit`s (plural, e.g. "frames") under `message`.
    pub fn new(len: u64, unit: &'static str, message: &str) -> Progress {
        let bar = ProgressBar::new(len);
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit}, {{elapsed}} elapsed, eta {{eta}}"
            ))
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.set_message(message.to_string());
        let start = Instant::now();
        let last_line = bar.is_hidden().then(|| Mutex::new(start));
        Progress { bar, message: message.to_string(), unit, start, every: line_every(), last_line }
    }

    /// Counts one more unit done (from any thread).
    pub fn inc(&self) {
        self.bar.inc(1);
        let Some(last) = &self.last_line else { return };
        let Ok(mut last) = last.lock() else { return };
        if last.elapsed() < self.every {
            return;
        }
        *last = Instant::now();
        let (pos, len) = (self.bar.position(), self.bar.length().unwrap_or(0));
        let elapsed = self.start.elapsed().as_secs_f64();
        let eta = if pos > 0 { elapsed * (len.saturating_sub(pos)) as f64 / pos as f64 } else { f64::NAN };
        eprintln!("{}: {pos}/{len} {}, {elapsed:.0} s elapsed, about {eta:.0} s to go", self.message, self.unit);
    }

    /// Counts `n` units as done without doing them: the frames a run did not reach because it
    /// stopped early (blew up, tore, or failed), so that the count still ends at its total and
    /// the time left is estimated from the work that remains.
    pub fn skip(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Clears the bar; without a terminal, says how long the whole took if it took long enough to
    /// have printed progress lines.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
        let elapsed = self.start.elapsed().as_secs_f64();
        if self.last_line.is_some() && self.start.elapsed() >= self.every {
            eprintln!("{}: {} {} in {elapsed:.0} s", self.message, self.bar.position(), self.unit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run that stops early has its unreached frames counted as skipped, so the count ends
    /// at its total.
    #[test]
    fn skipped_frames_complete_the_count() {
        let p = Progress::new(10, "frames", "test");
        for _ in 0..3 {
            p.inc();
        }
        p.skip(7);
        assert_eq!((p.bar.position(), p.bar.length()), (10, Some(10)));
    }
}
