//! `write_figure`: files, sizes, labels, dropped points, degenerate data, determinism, errors.

use std::fs;
use std::path::{Path, PathBuf};

use solverlab_plot::{write_figure, Axis, Figure, Font, Legend, LineStyle, Panel, Series, PALETTE, PNG_SCALE};

/// An empty directory for one test, under Cargo's scratch directory for integration tests.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("solverlab-plot-figures").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn axis(label: &str, log: bool) -> Axis {
    Axis { label: label.into(), log, range: None, ..Axis::default() }
}

fn series(label: &str, points: Vec<(f64, f64)>, style: LineStyle) -> Series {
    Series { label: label.into(), points, style, ..Series::default() }
}

/// A log-log panel with series spanning eight decades and a linear panel.
fn two_panel_figure() -> Figure {
    let iterations: Vec<f64> = (0..=40).map(|k| 10f64.powf(f64::from(k) / 10.0)).collect();
    let gs = iterations.iter().map(|&n| (n, 1e-1 / n.powi(2))).collect();
    let jacobi = iterations.iter().map(|&n| (n, 1e-1 / n)).collect();
    let convergence = Panel {
        title: "Convergence".into(),
        x: axis("iteration", true),
        y: axis("residual (m)", true),
        series: vec![series("Gauss-Seidel", gs, LineStyle::Line), series("Jacobi", jacobi, LineStyle::Dashed)],
    };
    let times: Vec<f64> = (0..100).map(|k| f64::from(k) * 0.01).collect();
    let energy = Panel {
        title: "Energy".into(),
        x: axis("time (s)", false),
        y: axis("kinetic energy (J)", false),
        series: vec![
            series("XPBD", times.iter().map(|&t| (t, (6.0 * t).sin().abs())).collect(), LineStyle::LineAndPoints),
            series("PBD", times.iter().map(|&t| (t, 0.5 * t)).collect(), LineStyle::Points),
        ],
    };
    Figure {
        title: "Cloth 16x16, 120 frames".into(),
        panels: vec![convergence, energy],
        columns: 2,
        ..Figure::default()
    }
}

/// The colour plotters writes into the SVG for series `index`.
fn svg_colour(index: usize) -> String {
    let (r, g, b) = PALETTE[index];
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// The contents of the SVG's `<text>` elements, trimmed.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .map(|element| element.split('>').nth(1).unwrap().split('<').next().unwrap().trim())
        .collect()
}

/// The `points` lists of the SVG's polylines drawn in `colour`, each as a number of points.
fn polylines_in(svg: &str, colour: &str) -> Vec<usize> {
    svg.split("<polyline")
        .skip(1)
        .filter(|element| element.split("/>").next().unwrap().contains(&format!("stroke=\"{colour}\"")))
        .map(|element| {
            let points = element.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
            points.split_whitespace().count()
        })
        .collect()
}

#[test]
fn two_panel_figure_writes_svg_and_png_with_every_label() {
    let dir = fresh_dir("two_panel");
    let fig = two_panel_figure();
    let files = write_figure(&fig, &dir.join("fig")).unwrap();
    assert_eq!(files, vec![dir.join("fig.svg"), dir.join("fig.png")]);

    let (w, h) = fig.size();
    assert_eq!((w, h), (2 * 480, 360 + 40));
    let png = image::open(&files[1]).unwrap();
    assert_eq!((png.width(), png.height()), (w * PNG_SCALE, h * PNG_SCALE));

    let svg = fs::read_to_string(&files[0]).unwrap();
    assert!(svg.contains(&format!("width=\"{w}\"")) && svg.contains(&format!("height=\"{h}\"")));
    let texts = texts(&svg);
    for text in [
        "Cloth 16x16, 120 frames",
        "Convergence",
        "Energy",
        "iteration",
        "residual (m)",
        "time (s)",
        "kinetic energy (J)",
        "Gauss-Seidel",
        "Jacobi",
        "XPBD",
        "PBD",
    ] {
        assert!(texts.contains(&text), "the SVG lacks the text {text:?}");
    }
    assert!(texts.contains(&"10⁻⁵") && texts.contains(&"10⁰"), "no decade labels on the log axes: {texts:?}");
    assert!(!texts.contains(&"no data"));
}

#[test]
fn series_take_palette_colours_in_order() {
    let dir = fresh_dir("palette");
    let files = write_figure(&two_panel_figure(), &dir.join("fig")).unwrap();
    let svg = fs::read_to_string(&files[0]).unwrap();
    // Each panel colours its first series with the first palette colour, its second with the second.
    assert!(polylines_in(&svg, &svg_colour(0)).len() >= 2);
    assert!(!polylines_in(&svg, &svg_colour(1)).is_empty());
    assert!(svg.contains(&format!("fill=\"{}\"", svg_colour(1))), "PBD dots are not in the second colour");
}

#[test]
fn log_axes_drop_zeros_negatives_and_nan_without_panicking() {
    let dir = fresh_dir("log_drop");
    let points = vec![(1.0, 1.0), (2.0, 10.0), (3.0, 0.0), (4.0, -5.0), (5.0, f64::NAN), (6.0, 1e3), (7.0, 1e4)];
    let panel = Panel {
        title: "Dropped points".into(),
        x: axis("x", true),
        y: axis("y", true),
        series: vec![series("only", points, LineStyle::Line)],
    };
    let fig = Figure { title: "Log".into(), panels: vec![panel], ..Figure::default() };
    let files = write_figure(&fig, &dir.join("log")).unwrap();
    assert!(files.iter().all(|f| f.is_file()));
    let svg = fs::read_to_string(&files[0]).unwrap();
    // The line breaks at the three dropped points: two pieces of two points each.
    assert_eq!(polylines_in(&svg, &svg_colour(0)), vec![2, 2]);
    // A single series gets no legend.
    assert!(!texts(&svg).contains(&"only"));
    assert!(!svg.contains("NaN") && !svg.contains("inf"));

    // The same data as dots: exactly the four valid points are drawn.
    let mut dots = fig.clone();
    dots.panels[0].series[0].style = LineStyle::Points;
    let files = write_figure(&dots, &dir.join("dots")).unwrap();
    let svg = fs::read_to_string(&files[0]).unwrap();
    assert_eq!(svg.matches("<circle").count(), 4);
}

#[test]
fn empty_panels_and_constant_series_draw_without_panicking() {
    let dir = fresh_dir("degenerate");
    let empty = Panel { title: "Empty".into(), x: axis("x", false), y: axis("y", false), series: vec![] };
    let all_dropped = Panel {
        title: "Nothing positive".into(),
        x: axis("x", false),
        y: axis("y", true),
        series: vec![series("zeros", vec![(0.0, 0.0), (1.0, -1.0), (2.0, f64::NAN)], LineStyle::Line)],
    };
    let constant = Panel {
        title: "Constant".into(),
        x: axis("x", false),
        y: axis("y", false),
        series: vec![series("flat", vec![(1.0, 2.0), (2.0, 2.0), (3.0, 2.0)], LineStyle::Line)],
    };
    let single_point = Panel {
        title: "One point, log".into(),
        x: axis("x", true),
        y: axis("y", true),
        series: vec![series("one", vec![(5.0, 5.0)], LineStyle::LineAndPoints)],
    };
    let fig = Figure {
        title: "Degenerate".into(),
        panels: vec![empty, all_dropped, constant, single_point],
        columns: 3,
        ..Figure::default()
    };
    let files = write_figure(&fig, &dir.join("degenerate")).unwrap();
    let png = image::open(&files[1]).unwrap();
    assert_eq!((png.width(), png.height()), ((3 * 480) * PNG_SCALE, (2 * 360 + 40) * PNG_SCALE));
    let svg = fs::read_to_string(&files[0]).unwrap();
    assert_eq!(texts(&svg).iter().filter(|&&t| t == "no data").count(), 2);
    assert_eq!(polylines_in(&svg, &svg_colour(0)).len(), 1, "only the constant series draws a line");

    let mut huge = fig.clone();
    huge.panels[2].series[0].points = vec![(1.0, -1e308), (2.0, 1e308)];
    let err = write_figure(&huge, &dir.join("huge")).unwrap_err().to_string();
    assert!(err.contains("panel 3") && err.contains("too wide"), "{err}");
}

#[test]
fn explicit_ranges_clip_the_data() {
    let dir = fresh_dir("clip");
    let panel = Panel {
        title: "Zoom".into(),
        x: Axis { label: "x".into(), log: false, range: Some((0.0, 10.0)), ..Axis::default() },
        y: Axis { label: "y".into(), log: false, range: Some((0.0, 1.0)), ..Axis::default() },
        series: vec![series("s", vec![(0.0, 0.5), (2.0, 2.5), (4.0, 0.5), (20.0, 0.5)], LineStyle::Line)],
    };
    let fig = Figure { title: "Clip".into(), panels: vec![panel], ..Figure::default() };
    let svg = fs::read_to_string(&write_figure(&fig, &dir.join("clip")).unwrap()[0]).unwrap();
    assert_eq!(polylines_in(&svg, &svg_colour(0)), vec![2, 3]);
}

#[test]
fn the_same_figure_gives_identical_files() {
    let dir = fresh_dir("deterministic");
    let fig = two_panel_figure();
    let first = write_figure(&fig, &dir.join("a")).unwrap();
    let second = write_figure(&fig, &dir.join("b")).unwrap();
    for (a, b) in first.iter().zip(&second) {
        assert!(fs::read(a).unwrap() == fs::read(b).unwrap(), "{} and {} differ", a.display(), b.display());
    }
}

#[test]
fn a_missing_directory_is_an_error_naming_the_path() {
    let dir = fresh_dir("missing");
    let stem = dir.join("no-such-dir").join("fig");
    let err = write_figure(&two_panel_figure(), &stem).unwrap_err();
    assert!(err.to_string().contains(&dir.join("no-such-dir").join("fig.svg").display().to_string()), "{err}");
    assert!(!dir.join("no-such-dir").exists());
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "something was left behind");
}

#[test]
fn a_failed_figure_keeps_the_old_files_and_leaves_no_temporary() {
    let dir = fresh_dir("keep_old");
    let stem = dir.join("fig");
    let good = write_figure(&two_panel_figure(), &stem).unwrap();
    let before: Vec<Vec<u8>> = good.iter().map(|f| fs::read(f).unwrap()).collect();

    let mut bad = two_panel_figure();
    bad.panels[1].y.log = true;
    bad.panels[1].y.range = Some((0.0, 1.0));
    let err = write_figure(&bad, &stem).unwrap_err().to_string();
    assert!(err.contains("fig.svg") && err.contains("panel 2") && err.contains("positive"), "{err}");

    let after: Vec<Vec<u8>> = good.iter().map(|f| fs::read(f).unwrap()).collect();
    assert!(before == after, "a good file was overwritten");
    let mut names: Vec<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["fig.png", "fig.svg"]);

    let empty = Figure { title: "Nothing".into(), ..Figure::default() };
    assert!(write_figure(&empty, &stem).unwrap_err().to_string().contains("no panels"));
    let tiny = Figure { panel_width: 10, ..two_panel_figure() };
    assert!(write_figure(&tiny, &stem).unwrap_err().to_string().contains("at least"));
}

/// A figure's own colours, dotted lines, open rings, categories, legend placement, font and text
/// scale reach the SVG.
#[test]
fn styles_categories_legends_and_fonts_reach_the_svg() {
    let dir = fresh_dir("styles");
    let own = Series {
        label: "own colour".into(),
        points: vec![(1.0, 0.0), (2.0, 1.0), (3.0, 2.0)],
        style: LineStyle::Dotted,
        colour: Some((0x12, 0x34, 0x56)),
    };
    let rings =
        Series { label: "failed".into(), points: vec![(2.0, 1.0)], style: LineStyle::Hollow, ..Series::default() };
    let rows = Axis {
        label: "solver".into(),
        categories: vec!["alpha".into(), "beta".into(), "gamma".into()],
        ..Axis::default()
    };
    let panel = |title: &str, series: Vec<Series>| Panel {
        title: title.into(),
        x: axis("value (m)", false),
        y: rows.clone(),
        series,
    };
    // The panels show different series: Auto would give each its own legend; Below gathers them.
    let fig = Figure {
        panels: vec![panel("one", vec![own.clone(), rings.clone()]), panel("two", vec![own.clone()])],
        legend: Legend::Below,
        font: Font::Serif,
        text_scale: 0.8,
        ..Figure::default()
    };
    let svg = fs::read_to_string(&write_figure(&fig, &dir.join("fig")).unwrap()[0]).unwrap();
    let t = texts(&svg);
    for name in ["alpha", "beta", "gamma", "own colour", "failed"] {
        assert!(t.contains(&name), "the SVG lacks {name:?}: {t:?}");
    }
    assert_eq!(t.iter().filter(|s| **s == "own colour").count(), 1, "one shared legend entry: {t:?}");
    assert!(!t.contains(&"0.5"), "a categorical axis labels only whole numbers: {t:?}");
    assert!(svg.contains("stroke=\"#123456\""), "the series' own colour is not drawn");
    assert!(svg.contains("font-family=\"serif\"") && !svg.contains("font-family=\"sans-serif\""));
    assert!(svg.contains("fill=\"none\""), "no open ring");
    // A legend below adds a band: the figure is taller than its panels.
    assert!(fig.size().1 > 360);

    let none = Figure { legend: Legend::None, ..fig.clone() };
    let svg = fs::read_to_string(&write_figure(&none, &dir.join("none")).unwrap()[0]).unwrap();
    assert!(!texts(&svg).contains(&"own colour"), "legend = none still drew a legend");
    assert_eq!(none.size().1, 360);

    // Text scale scales the font sizes.
    let big = Figure { text_scale: 1.6, ..none.clone() };
    let svg_big = fs::read_to_string(&write_figure(&big, &dir.join("big")).unwrap()[0]).unwrap();
    let size = |svg: &str| -> f64 {
        svg.split("font-size=\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap().parse::<f64>().unwrap())
            .fold(0.0, f64::max)
    };
    assert!((size(&svg_big) / size(&svg) - 2.0).abs() < 0.01, "{} vs {}", size(&svg_big), size(&svg));

    let bad = Figure { text_scale: 3.0, ..none };
    assert!(write_figure(&bad, &dir.join("bad")).unwrap_err().0.contains("text scale"));
    let log_rows = Figure {
        panels: vec![Panel { y: Axis { log: true, ..rows.clone() }, ..panel("log", vec![own]) }],
        ..Figure::default()
    };
    assert!(write_figure(&log_rows, &dir.join("log")).unwrap_err().0.contains("categorical"));
}
