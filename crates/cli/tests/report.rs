//! `solverlab report`: a self-contained page per experiment. The page's content and its bad
//! inputs are tested here on every run; the replay itself is tested in a real browser
//! (`report_replays_in_headless_chromium`, ignored by default because it needs Debian's
//! `chromium`; `.ci/run` installs it and runs it).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{s, solverlab, stderr};

/// A chain and a rigid stack under two solvers, positions every 2nd frame, one figure.
const EXPERIMENT: &str = r#"
# A small experiment for the report tests.
#
# Two scenes, two solvers.
name = "reported"
frames = 30
positions_every = 2

[[scene]]
name = "chain"
set = { links = 6 }

[[scene]]
name = "rigid-stack"
set = { boxes = 3 }

[[solver]]
label = "GS"
preset = "gs"

[[solver]]
label = "PGS"
preset = "pgs"

[[figure]]
name = "violation"
x = "frame"
y = "violation"
logy = true
"#;

/// Runs the experiment with `--report` into `dir/out`.
fn reported(dir: &Path, text: &str) -> PathBuf {
    let file = dir.join("exp.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("out");
    let o = solverlab(&["run", s(&file), "--out", s(&out), "--report"]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// The JSON data embedded in a report.
fn embedded(html: &str) -> serde_json::Value {
    let start = html.find("id=\"solverlab-data\">").unwrap() + "id=\"solverlab-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end].replace("<\\/", "</")).unwrap()
}

#[test]
fn the_report_is_one_self_contained_page_with_every_part() {
    let d = common::tmp("report", "page");
    let out = reported(&d, EXPERIMENT);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    // Nothing is fetched: no external script, style, image or font.
    for needle in ["<script src", "<link", "src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!html.contains(needle), "the page must not load `{needle}`");
    }
    assert!(html.contains("A small experiment for the report tests."), "the description");
    assert!(html.contains(env!("CARGO_PKG_VERSION")) && html.contains("Resolved settings"), "provenance");
    assert_eq!(html.matches("<tr data-run=").count(), 4, "runs.csv as a table");
    assert!(html.contains("data-figure=\"violation\"><figcaption>") && html.contains("<svg"), "figures inline");
    let data = embedded(&html);
    let series = data["figures"][0]["series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "one series per solver label");
    assert_eq!(series[0]["colour"], "#0072b2");
    assert_eq!(series[0]["runs"], serde_json::json!([0, 2]), "GS is runs 0 and 2");
    let replay = &data["replay"];
    assert_eq!(replay["panels"].as_array().unwrap().len(), 4, "one panel per run");
    assert_eq!(replay["frames"].as_array().unwrap().len(), 16, "frames 0, 2, …, 30");
    let chain = &replay["panels"][0];
    assert_eq!(chain["particles"], 7);
    assert!(chain["sticks"].as_str().unwrap().len() > 10);
    let stack = &replay["panels"][2];
    assert_eq!(stack["shapes"].as_array().unwrap().len(), 3, "the rigid boxes' shapes");
    assert_eq!(stack["shapes"][0]["kind"], "box");
    assert!(stack["contacts"].is_array(), "contacts when contacts.csv exists");
    assert_eq!(stack["colliders"][0]["kind"], "plane", "the floor, from colliders.csv");
    assert_eq!(stack["colliders"][0]["b"], serde_json::json!([0.0, 1.0, 0.0]), "its normal");
    assert_eq!(chain["group"], "chain", "runs grouped by scene (a `set` is not a sweep)");
    assert_eq!(replay["panels"][1]["group"], chain["group"], "GS and PGS on the chain overlay");
    let frames = chain["frames"].as_array().unwrap().len();
    for k in ["violation", "energy", "iterations"] {
        assert_eq!(chain["stats"][k].as_array().unwrap().len(), frames, "a live `{k}` per shown frame");
    }
    assert!(chain["stats"]["iterations"][1].as_f64().unwrap() >= 1.0);
    assert!(html.contains("<th>peak_violation (m)</th>"), "units in the runs table's header");
    assert!(html.contains("data-value=\""), "rounded numbers keep their full value for sorting");

    // A budget with room for half the replay decimates its frames, says so, and keeps to it.
    let replay_bytes = serde_json::to_string(&data["replay"]).unwrap().len();
    let budget = (html.len() - replay_bytes / 2) as f64 / 1e6;
    let o = solverlab(&["report", s(&out), "--out", s(&d.join("small")), "--max-mb", &budget.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let small = std::fs::read_to_string(d.join("small/report.html")).unwrap();
    assert!(small.len() as f64 <= budget * 1e6, "{} bytes over a {budget} MB budget", small.len());
    let note = embedded(&small)["replay"]["note"].as_str().unwrap().to_string();
    assert!(note.contains("decimated") && note.contains("budget (--max-mb)"), "{note}");
    let kept = embedded(&small)["replay"]["frames"].as_array().unwrap().len();
    assert!((2..16).contains(&kept), "{kept} frames kept");
    let _ = std::fs::remove_dir_all(&d);
}

/// `--max-mb` bounds the whole page: however many frames were recorded, the page keeps to its
/// budget by decimating them (the replay keeps the first and last frame and evenly many
/// between), and a page whose other parts alone exceed the budget leaves the replay out and says,
/// on the page and on stderr, by how much it is over; it never claims a budget it broke.
#[test]
fn the_page_keeps_to_its_budget_or_says_by_how_much_it_missed() {
    let d = common::tmp("report", "budget");
    let mut sizes = Vec::new();
    for frames in [300, 3000] {
        let dir = d.join(format!("frames{frames}"));
        common::generated_folder(&dir, frames, 200);
        let o = solverlab(&["report", s(&dir), "--max-mb", "1"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        assert!(html.len() <= 1_000_000, "{frames} frames: {} bytes over a 1 MB budget", html.len());
        let replay = &embedded(&html)["replay"];
        let kept: Vec<u64> = replay["frames"].as_array().unwrap().iter().map(|f| f.as_u64().unwrap()).collect();
        assert_eq!((kept[0], *kept.last().unwrap()), (0, frames - 1), "the first and last frames are kept");
        assert!(replay["note"].as_str().unwrap().contains(&format!("{frames} frames were recorded")));
        sizes.push((html.len(), kept.len()));
    }
    // Ten times the frames, about the same page: the decimation grows with the frames.
    assert!(sizes[1].0 > sizes[0].0 / 2 && sizes[1].1 < sizes[0].1 * 2, "{sizes:?}");

    // A budget smaller than the viewer itself: no replay, and a page that says it is over.
    let dir = d.join("frames300");
    let o = solverlab(&["report", s(&dir), "--out", s(&d.join("tiny")), "--max-mb", "0.01"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(d.join("tiny/report.html")).unwrap();
    assert!(embedded(&html)["replay"].is_null(), "the replay is left out");
    assert!(html.contains("The replay is left out"), "and the page says so");
    let over = "over its 0.01 MB budget";
    assert!(html.contains(&format!("This page is {:.2} MB", html.len() as f64 / 1e6)) && html.contains(over));
    assert!(stderr(&o).contains("over the 0.01 MB budget (--max-mb)"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_folders_get_exit_2_and_no_positions_get_a_note() {
    let d = common::tmp("report", "bad");
    let o = solverlab(&["report", s(&d)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is not a results folder"), "{}", stderr(&o));
    assert!(!d.join("report.html").exists());

    let out = reported(&d, &EXPERIMENT.replace("positions_every = 2\n", ""));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(embedded(&html)["replay"].is_null());
    assert!(html.contains("No positions were recorded"), "the replay is replaced by a note");

    std::fs::remove_file(out.join("positions.csv")).unwrap();
    std::fs::remove_file(out.join("report.html")).unwrap();
    let o = solverlab(&["report", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no positions.csv"), "{}", stderr(&o));
    assert!(!out.join("report.html").exists(), "nothing written");
    let _ = std::fs::remove_dir_all(&d);
}

/// A `simulate` folder is a results folder too: simulate draws its overview and prints a
/// summary, `plot` redraws it, and `report` makes the same page with one replay panel (sticks
/// included) and a one-row runs table.
#[test]
fn a_single_simulate_run_can_be_plotted_and_reported() {
    let d = common::tmp("report", "single");
    let out = d.join("sim");
    let o = solverlab(&["simulate", "--scene", "chain", "--set", "links=6", "--frames", "12", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("chain · gs: 12 frames, 12 unconverged, peak violation"), "{e}");
    assert!(e.contains("status ok") && e.contains("overview.png") && e.contains("steps.csv"), "{e}");
    let svg = std::fs::read_to_string(out.join("overview.svg")).unwrap();
    for panel in ["Constraint violation", "Energy", "Iterations per frame (12 of 12 unconverged)"] {
        assert!(svg.contains(panel), "overview panel `{panel}`");
    }
    assert!(!svg.contains("Support force"), "a chain has no support force panel");
    std::fs::remove_file(out.join("overview.svg")).unwrap();
    let o = solverlab(&["plot", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(out.join("overview.svg")).unwrap(), svg, "plot redraws the same figure");
    let o = solverlab(&["report", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("data-figure=\"overview\"") && html.contains("One `solverlab simulate` run"));
    assert_eq!(html.matches("<tr data-run=").count(), 1, "one run");
    let replay = &embedded(&html)["replay"];
    assert_eq!(replay["panels"].as_array().unwrap().len(), 1);
    assert_eq!(replay["panels"][0]["particles"], 7);
    assert_eq!(replay["frames"].as_array().unwrap().len(), 13, "frames 0..=12");
    assert!(replay["panels"][0]["sticks"].as_str().unwrap().len() > 10, "sticks.csv read without a run column");

    let o = solverlab(&["simulate", "--scene", "chain", "--frames", "3", "--no-figures", "--out", s(&d.join("bare"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!d.join("bare/overview.svg").exists(), "--no-figures draws nothing");
    let o = solverlab(&["plot", s(&d)]);
    assert_eq!(o.status.code(), Some(2), "a folder that is neither kind: {}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// Chromium, if installed.
fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"].iter().map(PathBuf::from).find(|p| p.exists())
}

fn headless(args: &[&str]) -> Output {
    let browser = chromium().expect("Debian's chromium: apt-get install chromium (.ci/run does)");
    // (A profile of its own per call: tests run on several threads, and each removes its own.)
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let profile = common::tmp("chromium", &format!("profile-{call}"));
    Command::new(browser)
        .args(["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs")
}

/// Renders `url` to a PNG and returns its pixels, with the page's width and height.
fn screenshot(url: &str, path: &Path) -> image::RgbaImage {
    let _ = std::fs::remove_file(path);
    let o = headless(&[
        "--window-size=1200,900",
        "--virtual-time-budget=3000",
        &format!("--screenshot={}", path.display()),
        url,
    ]);
    assert!(path.exists(), "no screenshot: {}", stderr(&o));
    image::open(path).unwrap().to_rgba8()
}

#[test]
#[ignore = "needs Debian's chromium; .ci/run installs it and runs this test"]
fn report_replays_in_headless_chromium() {
    let d = common::tmp("report", "browser");
    let out = reported(&d, EXPERIMENT);
    let url = format!("file://{}", out.join("report.html").display());

    // The page loads without errors, and the replay advances when played.
    let o = headless(&[
        "--virtual-time-budget=6000",
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
        &format!("{url}#selftest"),
    ]);
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom.find("id=\"selftest-result\">").expect("the self-test ran") + "id=\"selftest-result\">".len();
    let result: serde_json::Value = serde_json::from_str(&dom[start..start + dom[start..].find('<').unwrap()]).unwrap();
    assert_eq!(result["errors"], serde_json::json!([]), "console errors: {result}");
    assert_eq!(result["advanced"], true, "the replay advances when played: {result}");
    assert_eq!(result["nonblank"], true, "the first panel is drawn: {result}");
    assert_eq!(result["ok"], true, "{result}");
    let console: Vec<&str> = std::str::from_utf8(&o.stderr)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("CONSOLE") && l.contains("report.html"))
        .collect();
    assert!(console.is_empty(), "the page logged: {console:?}");

    // Screenshots of the viewer at the first and the last frame: drawn, and different.
    let first = screenshot(&format!("{url}#frame=0&only=replay"), &d.join("first.png"));
    let last = screenshot(&format!("{url}#frame=15&only=replay"), &d.join("last.png"));
    assert_eq!(first.dimensions(), last.dimensions());
    // The panels lie below the controls; compare that band only (the frame label differs too).
    let (w, h) = first.dimensions();
    let band = |img: &image::RgbaImage| -> Vec<[u8; 4]> {
        (h / 5..h).flat_map(|y| (0..w).map(move |x| (x, y))).map(|(x, y)| img.get_pixel(x, y).0).collect()
    };
    let (a, b) = (band(&first), band(&last));
    let drawn = a.iter().filter(|p| p[0] < 200 || p[1] < 200 || p[2] < 200).count();
    assert!(drawn > 2000, "the viewer is not blank: {drawn} dark pixels");
    let changed = a.iter().zip(&b).filter(|(p, q)| p != q).count();
    assert!(changed > 500, "frames 0 and 30 look the same: {changed} pixels differ");

    // Overlay: one view per scene (the chain and the rigid stack), with the same self-test.
    let o = headless(&["--virtual-time-budget=6000", "--dump-dom", &format!("{url}#selftest&overlay=1")]);
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom.find("id=\"selftest-result\">").expect("the self-test ran") + "id=\"selftest-result\">".len();
    let result: serde_json::Value = serde_json::from_str(&dom[start..start + dom[start..].find('<').unwrap()]).unwrap();
    assert_eq!(result["ok"], true, "overlay: {result}");
    assert_eq!(result["views"], 2, "overlay: one view per scene: {result}");
    let overlay = screenshot(&format!("{url}#frame=8&only=replay&overlay=1"), &d.join("overlay.png"));
    // Both solvers' colours (GS blue #0072b2, PGS vermillion #d55e00) are drawn in one view.
    let near = |p: &image::Rgba<u8>, c: [i32; 3]| (0..3).all(|k| (i32::from(p.0[k]) - c[k]).abs() < 40);
    let (ow, _) = overlay.dimensions();
    let first_view = overlay.enumerate_pixels().filter(|(x, _, _)| *x < ow / 2);
    let (blue, red) = first_view.fold((0, 0), |(b, r), (_, _, p)| {
        (b + usize::from(near(p, [0, 114, 178])), r + usize::from(near(p, [213, 94, 0])))
    });
    assert!(
        blue > 50 && red > 50,
        "the overlay draws both runs in their colours: {blue} blue, {red} vermillion pixels"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A label that would end the page's script or open an HTML comment (`<!--<script>`) is
/// embedded with `<`, `>` and `&` escaped, and reads back unchanged from the data.
#[test]
fn labels_cannot_break_out_of_the_embedded_data() {
    let d = common::tmp("report", "hostile-label");
    let hostile = "GS <!--<script> & </script>";
    let out = reported(&d, &EXPERIMENT.replace("label = \"GS\"", &format!("label = \"{hostile}\"")));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let start = html.find("id=\"solverlab-data\">").unwrap();
    let data = &html[start..start + html[start..].find("</script>").unwrap()];
    assert!(!data.contains("<!--") && !data.contains("<script"), "raw markup in the data");
    let runs = embedded(&html)["runs"].clone();
    assert!(runs.as_array().unwrap().iter().any(|r| r["label"] == hostile), "{runs}");
}
