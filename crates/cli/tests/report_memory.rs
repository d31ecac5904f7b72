//! The report's memory does not grow with the frames: its tables are read one row at a time and
//! only the frames the page has room for are kept. Measured in this process (its own test
//! binary, one test, so nothing else allocates meanwhile) as the growth of the peak resident
//! memory (`VmHWM`, Linux) from a report of a small positions table to one of a table ten times
//! its size.

#![cfg(target_os = "linux")]

mod common;

/// The peak resident memory of this process so far, in bytes.
fn peak() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/self/status");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[test]
fn a_report_of_ten_times_the_frames_takes_no_more_memory() {
    let d = common::tmp("report-memory", "frames");
    let (small, large) = (d.join("small"), d.join("large"));
    common::generated_folder(&small, 300, 500);
    common::generated_folder(&large, 3000, 500);
    let table = std::fs::metadata(large.join("positions.csv")).unwrap().len();
    assert!(table > 40_000_000, "a table of {table} bytes");
    solverlab_cli::report(&small, &small, 2.0).unwrap();
    let before = peak();
    solverlab_cli::report(&large, &large, 2.0).unwrap();
    let grown = peak().saturating_sub(before);
    // Holding the table, even as raw bytes, would grow the peak by its size; the page's budget
    // (2 MB) and the frames kept for it take a few times that.
    assert!(grown < table / 4, "the peak grew by {grown} bytes reporting a table of {table} bytes");
    let _ = std::fs::remove_dir_all(&d);
}
