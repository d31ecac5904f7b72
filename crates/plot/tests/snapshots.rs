//! `write_snapshots` and `write_animation`: files, sizes, frame counts, degenerate scenes, errors.

use std::fs;
use std::path::{Path, PathBuf};

use solverlab_plot::{write_animation, write_snapshots, Snapshot, View, PNG_SCALE};

/// An empty directory for one test, under Cargo's scratch directory for integration tests.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("solverlab-plot-snapshots").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// An `n × n` cloth in the horizontal plane at height `sag`-dependent positions, with structural
/// sticks whose stretch grows towards the middle by up to `stretch`.
fn cloth(title: &str, n: usize, sag: f64, stretch: f64) -> Snapshot {
    let spacing = 0.1;
    let mut points = Vec::new();
    for i in 0..n {
        for k in 0..n {
            let (x, z) = (i as f64 * spacing, k as f64 * spacing);
            let r = ((x - 0.45).powi(2) + (z - 0.45).powi(2)).sqrt();
            points.push([x, -sag * (1.0 - r), z]);
        }
    }
    let mut sticks = Vec::new();
    for i in 0..n {
        for k in 0..n {
            let a = i * n + k;
            let centred = 1.0 - ((i as f64 - 4.5).abs() + (k as f64 - 4.5).abs()) / 9.0;
            if i + 1 < n {
                sticks.push((a, a + n, 1.0 + stretch * centred));
            }
            if k + 1 < n {
                sticks.push((a, a + 1, 1.0 - stretch * centred));
            }
        }
    }
    Snapshot { title: title.into(), points, sticks }
}

/// The contents of the SVG's `<text>` elements, trimmed.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .map(|element| element.split('>').nth(1).unwrap().split('<').next().unwrap().trim())
        .collect()
}

#[test]
fn snapshots_write_svg_and_png_with_titles_and_colour_bar() {
    let dir = fresh_dir("row");
    let panels = [cloth("Gauss-Seidel", 10, 0.2, 0.03), cloth("Jacobi", 10, 0.3, 0.08)];
    let view = View::default();
    let files = write_snapshots(&panels, &view, &dir.join("cloth")).unwrap();
    assert_eq!(files, vec![dir.join("cloth.svg"), dir.join("cloth.png")]);

    let png = image::open(&files[1]).unwrap();
    let (w, h) = (2 * view.panel_width + 110, view.panel_height);
    assert_eq!((png.width(), png.height()), (w * PNG_SCALE, h * PNG_SCALE));

    let svg = fs::read_to_string(&files[0]).unwrap();
    let texts = texts(&svg);
    for text in ["Gauss-Seidel", "Jacobi", "length / rest", "≥ 1.05", "1.00", "≤ 0.95", "x", "y", "z"] {
        assert!(texts.contains(&text), "the SVG lacks the text {text:?}: {texts:?}");
    }
    // Every particle is a dot and every stick a line.
    assert_eq!(svg.matches("<circle").count(), 2 * 100);
    let sticks = 2 * 2 * 9 * 10;
    assert!(svg.matches("<polyline").count() >= sticks);

    let again = write_snapshots(&panels, &view, &dir.join("again")).unwrap();
    assert!(fs::read(&files[0]).unwrap() == fs::read(&again[0]).unwrap(), "the SVG is not deterministic");
    assert!(fs::read(&files[1]).unwrap() == fs::read(&again[1]).unwrap(), "the PNG is not deterministic");
}

#[test]
fn animation_writes_one_gif_frame_per_element() {
    let dir = fresh_dir("animation");
    let frames: Vec<Vec<Snapshot>> = (0..5)
        .map(|f| {
            let sag = 0.05 * f as f64;
            vec![
                cloth(&format!("GS t={f}"), 6, sag, 0.01 * f as f64),
                cloth(&format!("Jacobi t={f}"), 6, 2.0 * sag, 0.0),
            ]
        })
        .collect();
    let view = View { panel_width: 200, panel_height: 180, ..View::default() };
    let gif_path = write_animation(&frames, &view, 40, &dir.join("anim")).unwrap();
    assert_eq!(gif_path, dir.join("anim.gif"));

    let bytes = fs::read(&gif_path).unwrap();
    assert!(bytes.starts_with(b"GIF89a"));
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options.read_info(bytes.as_slice()).unwrap();
    assert_eq!((decoder.width(), decoder.height()), (2 * 200 + 110, 180));
    let mut delays = Vec::new();
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        delays.push(frame.delay);
    }
    assert_eq!(delays, vec![4; 5], "five frames of 40 ms (4 hundredths) each");
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "a temporary was left behind");
}

#[test]
fn degenerate_scenes_draw_without_panicking() {
    let dir = fresh_dir("degenerate");
    let empty = Snapshot { title: "empty".into(), ..Snapshot::default() };
    let broken = Snapshot {
        title: "broken".into(),
        points: vec![[0.0, 0.0, 0.0], [f64::NAN, 1.0, 0.0], [1.0, 1.0, 1.0]],
        sticks: vec![(0, 1, 1.0), (0, 2, f64::INFINITY), (1, 2, f64::NAN)],
    };
    let single = Snapshot { title: "one particle".into(), points: vec![[3.0, 3.0, 3.0]], sticks: vec![] };
    let files = write_snapshots(&[empty, broken, single], &View::default(), &dir.join("odd")).unwrap();
    let svg = fs::read_to_string(&files[0]).unwrap();
    assert_eq!(texts(&svg).iter().filter(|&&t| t == "no data").count(), 1);
    assert_eq!(svg.matches("<circle").count(), 3, "the NaN particle is not drawn");
    assert!(!svg.contains("NaN"));
}

#[test]
fn invalid_input_is_an_error_naming_the_file_and_leaves_nothing() {
    let dir = fresh_dir("invalid");
    let bad_stick = Snapshot { title: "bad".into(), points: vec![[0.0; 3]; 2], sticks: vec![(0, 5, 1.0)] };
    let err = write_snapshots(&[bad_stick], &View::default(), &dir.join("bad")).unwrap_err().to_string();
    assert!(err.contains(&dir.join("bad.svg").display().to_string()) && err.contains("(0, 5)"), "{err}");

    let uneven = vec![vec![cloth("a", 3, 0.0, 0.0)], vec![cloth("a", 3, 0.0, 0.0), cloth("b", 3, 0.0, 0.0)]];
    let err = write_animation(&uneven, &View::default(), 100, &dir.join("uneven")).unwrap_err().to_string();
    assert!(err.contains("uneven.gif") && err.contains("frame 1"), "{err}");
    assert!(write_animation(&[], &View::default(), 100, &dir.join("none"))
        .unwrap_err()
        .to_string()
        .contains("no frames"));
    assert!(write_snapshots(&[], &View::default(), &dir.join("none")).is_err());
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "something was left behind");

    let missing = dir.join("no-such-dir").join("anim");
    let err = write_animation(&[vec![cloth("a", 3, 0.0, 0.0)]], &View::default(), 100, &missing).unwrap_err();
    assert!(err.to_string().contains(&dir.join("no-such-dir").join("anim.gif").display().to_string()), "{err}");
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "something was left behind");
}
