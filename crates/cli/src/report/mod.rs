//! `solverlab report DIR`: one self-contained HTML page per experiment.
//!
//! The page holds the experiment's description, its provenance (meta.json and the experiment
//! file), every figure inline (the SVGs), runs.csv as a sortable table, and a 3-D replay of the
//! recorded positions, bodies and contacts, one panel per run on a shared timeline. Data, style
//! and script are inline (`report/viewer.js`, `report/viewer.css`); the page loads nothing, so it
//! works offline, attached to a paper or from a USB stick.
//!
//! The report reads only the results folder: meta.json, experiment.toml (for the figure specs and
//! the description), the CSVs and the SVGs. A `simulate` folder (no experiment.toml) gets the
//! same page with its overview figure and a one-row runs table built from meta.json.
//!
//! The page is held to a size budget (`--max-mb`, 20 MB by default): the replay's frames are
//! decimated, evenly and keeping each run's last, until the page fits, and the replay is left
//! out if even two frames per run do not; a page whose other parts alone exceed the budget says
//! by how much, on the page and on stderr. The tables are read one row at a time
//! (`report/replay.rs`), so memory grows with the scene and the budget, not with the frames.

mod replay;

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use crate::results::Meta;
use crate::spec::ExperimentFile;
use crate::tables::TableName;
use crate::CliError;

/// The default size budget of the page, in MB (10⁶ bytes).
pub const BUDGET_MB: f64 = 20.0;

const VIEWER_JS: &str = include_str!("viewer.js");
const VIEWER_CSS: &str = include_str!("viewer.css");

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The unit of a runs.csv column, for the table's header.
fn unit(column: &str) -> Option<&'static str> {
    Some(match column {
        "final_violation" | "peak_violation" | "max_penetration" | "max_body_drift" | "max_top_drift" => "m",
        "final_support_force" => "N",
        "jitter" => "m/s",
        "energy_gain" => "J",
        c if c.starts_with("step_ms") || c.starts_with("solve_ms") => "ms",
        _ => return None,
    })
}

/// A number at four significant digits: plain between 1e-3 and 1e5, otherwise in e-notation.
fn short(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        x.to_string()
    } else if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{x:.3e}")
    } else {
        let digits = if a == 0.0 { 0 } else { (3 - a.log10().floor() as i32).max(0) as usize };
        let t = format!("{x:.digits$}");
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t
        }
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A CSV file as a header and rows of text.
struct Csv {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Csv {
    fn read(path: &Path) -> Result<Csv, String> {
        let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let columns = r.headers().map_err(|e| format!("{}: {e}", path.display()))?.iter().map(String::from).collect();
        let rows = r
            .records()
            .map(|x| x.map(|x| x.iter().map(String::from).collect()))
            .collect::<Result<Vec<Vec<String>>, _>>()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Csv { columns, rows })
    }
}

/// The scene a run simulated, as its label plus its `scene.*` sweep values: runs with the same
/// group are the same scene under different solvers.
fn scene_group(entry: Option<&serde_json::Value>) -> String {
    let Some(e) = entry else { return String::new() };
    let mut group = e["scene"].as_str().unwrap_or_default().to_string();
    for kv in e["sweep"].as_array().into_iter().flatten() {
        let (k, v) = (kv[0].as_str().unwrap_or_default(), &kv[1]);
        if let Some(key) = k.strip_prefix("scene.") {
            let v = v.as_str().map_or_else(|| v.to_string(), String::from);
            group += &format!(" · {key}={v}");
        }
    }
    group
}

/// The leading comment block of the experiment file, as paragraphs.
fn description(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| {
            let l = l.strip_prefix('#').unwrap_or(l);
            l.strip_prefix(' ').unwrap_or(l).trim_end()
        })
        .collect();
    lines.join("\n").trim().to_string()
}

/// The parts of the page other than the replay, ready to be put together by [`page`].
struct Parts {
    name: String,
    description: String,
    provenance: String,
    settings_file: &'static str,
    settings: String,
    meta: String,
    figures: String,
    table: String,
    /// The embedded data's figures and runs, as escaped JSON.
    figures_json: String,
    runs_json: String,
}

/// Escapes `<`, `>` and `&` in JSON text for an inline `<script>`: they only occur inside JSON
/// strings, where their `\u` escapes read the same, so no label can close the script or open a
/// comment.
fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page: `replay` is the replay's escaped JSON (`null` for none), `replay_note` what
/// the page says instead of a replay, `budget_note` what it says about its size.
fn page(p: &Parts, replay: &str, replay_note: &str, budget_note: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>solverlab report · {name}</title>\n<style>\n{VIEWER_CSS}\n</style></head>\n<body>\n\
         <header><h1>{name}</h1>{desc}{budget_note}</header>\n\
         <section id=\"provenance\"><h2>Provenance</h2>\n{provenance}\n\
         <details><summary>Resolved settings ({settings_file})</summary><pre>{settings}</pre></details>\n\
         <details><summary>meta.json</summary><pre>{meta}</pre></details>\n</section>\n\
         <section id=\"replay\"><h2>Replay</h2>\n{replay_note}</section>\n\
         <section id=\"figures\"><h2>Figures</h2>\n{figures}</section>\n\
         <section id=\"runs\"><h2>Runs</h2>\n{table}\n</section>\n\
         <script type=\"application/json\" id=\"solverlab-data\">{{\"figures\":{figures_json},\"runs\":{runs_json},\
         \"replay\":{replay}}}</script>\n\
         <script>\n{VIEWER_JS}\n</script>\n</body></html>\n",
        name = p.name,
        desc = p.description,
        provenance = p.provenance,
        settings_file = p.settings_file,
        settings = p.settings,
        meta = p.meta,
        figures = p.figures,
        table = p.table,
        figures_json = p.figures_json,
        runs_json = p.runs_json,
    )
}

/// A report's failure: interrupted (exit 130, nothing written) or bad input (exit 2).
fn failed(m: String) -> CliError {
    match crate::interrupt::interrupted() {
        true => CliError::Interrupted(format!("report: {m}; nothing was written")),
        false => CliError::Input(format!("report: {m}")),
    }
}

/// Everything on the page but the replay, from the folder's meta.json, experiment file, runs
/// table and figures.
fn parts(dir: &Path, single: bool, meta: &Meta) -> Result<Parts, CliError> {
    let bad = |m: String| CliError::Input(format!("report: {m}"));
    let mut figures = Vec::new();
    let mut figure_html = String::new();
    let mut add_svg = |name: &str, svg_name: &str, caption: String| {
        let Ok(svg) = std::fs::read_to_string(dir.join(svg_name)) else { return };
        let svg = svg.find("<svg").map_or("", |k| &svg[k..]);
        let _ = writeln!(
            figure_html,
            "<figure class=\"figure\" data-figure=\"{}\"><figcaption>{}</figcaption><div class=\"svg\">{svg}</div></figure>",
            esc(name),
            esc(&caption)
        );
    };
    let (text, runs) = if single {
        let o = crate::single::overview(dir).map_err(failed)?;
        let svg_name = format!("{}.svg", crate::single::OVERVIEW);
        add_svg(crate::single::OVERVIEW, &svg_name, format!("{} ({svg_name})", o.title));
        let run = meta.runs.first().cloned().unwrap_or_default();
        let settings = serde_json::to_string_pretty(&json!({ "solver": run["solver"], "scene": run["scene_file"] }))
            .expect("serialises");
        let text = format!(
            "# One `solverlab simulate` run: {}, {} frames of {:.4} s, {} per frame.\n\n{settings}\n",
            o.title,
            o.frames,
            run["dt"].as_f64().unwrap_or(0.0),
            match run["substeps"].as_u64().unwrap_or(1) {
                1 => "one step".to_string(),
                n => format!("{n} substeps"),
            }
        );
        let hash = run["final_state_hash"].as_str().unwrap_or_default().to_string();
        let runs = Csv {
            columns: ["run", "scene · solver", "frames", "unconverged", "peak violation (m)", "status", "state hash"]
                .map(String::from)
                .to_vec(),
            rows: vec![vec![
                "0".into(),
                o.title.clone(),
                o.frames.to_string(),
                o.unconverged.to_string(),
                format!("{:.3e}", o.peak_violation),
                o.status.to_string(),
                hash,
            ]],
        };
        (text, runs)
    } else {
        let (file, text) = ExperimentFile::read(&dir.join("experiment.toml"))?;
        for spec in &file.figures {
            if crate::interrupt::interrupted() {
                return Err(failed("interrupted".into()));
            }
            let series = crate::figures::series_runs(spec, dir).unwrap_or_default();
            figures.push(json!({
                "id": spec.name,
                "series": series.iter().map(|s| json!({
                    "name": s.name,
                    "colour": format!("#{:02x}{:02x}{:02x}", s.colour.0, s.colour.1, s.colour.2),
                    "runs": s.runs,
                })).collect::<Vec<_>>(),
            }));
            for svg_name in crate::figures::svg_files(spec) {
                let caption =
                    if spec.title.is_empty() { svg_name.clone() } else { format!("{} ({svg_name})", spec.title) };
                add_svg(&spec.name, &svg_name, caption);
            }
        }
        (text, Csv::read(&dir.join(TableName::Runs.file())).map_err(bad)?)
    };
    let run_list: Vec<serde_json::Value> =
        meta.runs.iter().map(|e| json!({"run": e["run"], "label": e["label"], "scene": e["scene"]})).collect();

    let mut table = String::from("<table id=\"runs-table\"><thead><tr>");
    for c in &runs.columns {
        let _ = match unit(c) {
            Some(u) => write!(table, "<th>{} ({u})</th>", esc(c)),
            None => write!(table, "<th>{}</th>", esc(c)),
        };
    }
    table += "</tr></thead><tbody>\n";
    for row in &runs.rows {
        let _ = write!(table, "<tr data-run=\"{}\">", esc(&row[0]));
        for v in row {
            // Numbers at four significant digits, the full value kept for sorting and as a tooltip.
            let _ = match v.parse::<f64>() {
                Ok(x) if v.contains(['.', 'e', 'E']) => {
                    write!(table, "<td data-value=\"{}\" title=\"{}\">{}</td>", esc(v), esc(v), short(x))
                }
                _ => write!(table, "<td>{}</td>", esc(v)),
            };
        }
        table += "</tr>\n";
    }
    table += "</tbody></table>";

    let mut provenance = String::from("<table class=\"meta\">");
    for (k, v) in [
        ("experiment", meta.experiment.as_str()),
        ("solverlab", meta.solverlab_version.as_str()),
        ("commit", meta.commit.as_str()),
        ("rustc", meta.rustc.as_str()),
        ("cpu", meta.cpu.as_str()),
        ("date", meta.date.as_str()),
    ] {
        let _ = write!(provenance, "<tr><th>{k}</th><td>{}</td></tr>", esc(v));
    }
    let _ = write!(provenance, "<tr><th>runs</th><td>{}</td></tr></table>", meta.runs.len());
    let meta_text = std::fs::read_to_string(dir.join("meta.json")).unwrap_or_default();
    let desc = description(&text);
    let desc_html: String = desc.split("\n\n").map(|p| format!("<p class=\"description\">{}</p>", esc(p))).collect();
    Ok(Parts {
        name: esc(&meta.experiment),
        description: desc_html,
        provenance,
        settings_file: if single { "meta.json" } else { "experiment.toml" },
        settings: esc(&text),
        meta: esc(&meta_text),
        figures: figure_html,
        table,
        figures_json: script_safe(&serde_json::to_string(&figures).expect("serialises")),
        runs_json: script_safe(&serde_json::to_string(&run_list).expect("serialises")),
    })
}

/// Writes `out/report.html` for the results folder `dir`, at most `budget_mb` MB: the replay's
/// frames are decimated to fit, and left out if even a run's first and last frame do not; a page
/// whose other parts alone exceed the budget is written with a note, embedded and printed, that
/// says by how much. Returns its size in bytes.
pub fn write(dir: &Path, out: &Path, budget_mb: f64) -> Result<usize, CliError> {
    let here = dir.display();
    let bad = |m: String| CliError::Input(format!("report: {m}"));
    let single = crate::single::is_single(dir);
    if !single
        && (!dir.join("meta.json").exists()
            || !dir.join("experiment.toml").exists()
            || !dir.join(TableName::Runs.file()).exists())
    {
        return Err(bad(format!(
            "{here} is not a results folder (it needs meta.json, experiment.toml and runs.csv, as `solverlab run` \
             writes them, or meta.json and steps.csv, as `solverlab simulate` writes them)"
        )));
    }
    if !dir.join(TableName::Positions.file()).exists() {
        return Err(bad(format!("{here} has no positions.csv; re-run with positions recorded")));
    }
    let meta = Meta::read(dir).map_err(bad)?;
    let parts = parts(dir, single, &meta)?;
    let budget = (budget_mb * 1e6).floor() as usize;
    let tables: u64 =
        [TableName::Positions.file(), TableName::Bodies.file(), TableName::Contacts.file(), TableName::Steps.file()]
            .iter()
            .filter_map(|t| std::fs::metadata(dir.join(t)).ok())
            .map(|m| m.len() / 1_000_000)
            .sum();
    let progress = crate::progress::Progress::new(2 * tables, "MB read", &format!("report {}", meta.experiment));
    let survey = replay::survey(dir, &progress).map_err(failed)?;
    let no_replay = "<p class=\"note\">No positions were recorded, so there is no replay. Add <code>positions_every = \
                     N</code> (or a snapshot figure) to the experiment file and run it again.</p>";
    let fixed = page(&parts, "null", no_replay, "").len();
    let (mut replay_json, mut replay_note) = ("null".to_string(), no_replay.to_string());
    match survey {
        None => {}
        Some(_) if fixed >= budget => {
            replay_note = format!(
                "<p class=\"note\">The replay is left out: the page's figures and tables alone take {:.2} MB of its \
                 {budget_mb} MB budget (--max-mb).</p>",
                fixed as f64 / 1e6
            );
        }
        Some(survey) => {
            replay_note = format!(
                "<p class=\"note\">The replay is left out: even each run's first and last recorded frames would \
                 take the page over its {budget_mb} MB budget. Give <code>solverlab report --max-mb</code> a larger \
                 budget to see it.</p>"
            );
            // Frames are decimated evenly: a first guess from the counts, then coarser until the
            // page fits (each try reads the tables once more, one row at a time).
            let room = (budget - fixed) as f64;
            let most = survey.most_frames().max(1);
            let mut step = ((survey.full_bytes() / room).ceil() as u64).clamp(1, most);
            for _ in 0..8 {
                let data = replay::collect(dir, &survey, step, &meta, budget_mb, &progress).map_err(failed)?;
                let json = script_safe(&serde_json::to_string(&data).expect("serialises"));
                drop(data);
                let size = page(&parts, &json, "", "").len();
                if size <= budget {
                    (replay_json, replay_note) = (json, String::new());
                    break;
                }
                if step >= most {
                    break;
                }
                // The frames' data shrinks about as 1/step.
                let ratio = (size - fixed) as f64 / room;
                step = ((step as f64 * ratio * 1.05).ceil() as u64).max(step + 1).min(most);
            }
        }
    }
    progress.finish();
    let mut html = page(&parts, &replay_json, &replay_note, "");
    if html.len() > budget {
        // Over the budget with the replay left out: say so, on the page and here, by how much.
        let mut note = String::new();
        for _ in 0..3 {
            let size = page(&parts, &replay_json, &replay_note, &note).len();
            note = format!(
                "<p class=\"note budget\">This page is {:.2} MB, {:.2} MB over its {budget_mb} MB budget (--max-mb): \
                 its figures, tables and provenance alone take that much.</p>",
                size as f64 / 1e6,
                size.saturating_sub(budget) as f64 / 1e6
            );
        }
        html = page(&parts, &replay_json, &replay_note, &note);
        eprintln!(
            "note: {} is {:.2} MB, {:.2} MB over the {budget_mb} MB budget (--max-mb): its figures, tables and \
             provenance alone take that much",
            out.join("report.html").display(),
            html.len() as f64 / 1e6,
            html.len().saturating_sub(budget) as f64 / 1e6
        );
    }
    if crate::interrupt::interrupted() {
        return Err(failed("interrupted".into()));
    }
    std::fs::create_dir_all(out).map_err(|e| CliError::Io(format!("{}: {e}", out.display())))?;
    crate::output::write_atomic(&out.join("report.html"), &html)
        .map_err(|e| CliError::Io(format!("{}: {e}", out.display())))?;
    Ok(html.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoder agrees with the standard's test vectors (RFC 4648, section 10).
    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn table_numbers_have_four_significant_digits() {
        assert_eq!(short(0.016666666666666666), "0.01667");
        assert_eq!(short(1234.5678), "1235");
        assert_eq!(short(2.5), "2.5");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(6.518063152619047e-6), "6.518e-6");
        assert_eq!(short(-3.25e7), "-3.250e7");
    }

    #[test]
    fn the_description_is_the_leading_comment_block() {
        assert_eq!(description("# A title\n#\n# More text.\nname = \"x\"\n# not this"), "A title\n\nMore text.");
    }
}
