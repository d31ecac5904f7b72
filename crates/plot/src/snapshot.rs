//! Particle scenes: [`Snapshot`]s drawn in a fixed orthographic [`View`], as still figures
//! ([`write_snapshots`]) or an animated GIF ([`write_animation`]).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::output::Staged;
use crate::style::{check_size, draw_centred, ensure_font, px, rgb, stretch_colour, text};
use crate::{DrawResult, PlotError, PNG_SCALE};

/// Height of the band above each scene that holds its title, in SVG pixels.
const TITLE_BAND: f64 = 32.0;
/// Space between a scene and its panel's edges, in SVG pixels.
const MARGIN: f64 = 10.0;
/// Width of the column right of the scenes that holds the colour bar and the axis triad.
const LEGEND_WIDTH: u32 = 110;
/// Colour of the particle dots.
const PARTICLE: (u8, u8, u8) = (40, 40, 40);

/// A 3-D particle scene at one instant: particles drawn as dots, sticks as lines coloured by
/// how far they are stretched (see [`crate::stretch_colour`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// Title drawn above the scene, e.g. the solver's name and the time.
    pub title: String,
    /// Particle positions `[x, y, z]` in metres, `+y` up. Non-finite positions are not drawn,
    /// nor are sticks that touch them.
    pub points: Vec<[f64; 3]>,
    /// Sticks as `(a, b, length / rest)`: indices into `points` and the stick's current length
    /// over its rest length (1 = at rest).
    pub sticks: Vec<(usize, usize, f64)>,
}

/// How snapshots are projected and laid out: a fixed orthographic camera, the saturation of the
/// stretch colour scale and the panel size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// Azimuth of the camera about the vertical `+y` axis, in degrees, from `+z` towards `+x`.
    /// At yaw 0 and pitch 0 the camera looks along `−z`, with `+x` right and `+y` up. Default 30.
    pub yaw_deg: f64,
    /// Elevation of the camera above the horizontal plane, in degrees (positive looks down).
    /// Default 20.
    pub pitch_deg: f64,
    /// Deviation of `length / rest` from 1 at which the stick colours saturate, as a fraction:
    /// 0.05 (the default) gives full blue at 0.95 and below, full vermillion at 1.05 and above.
    pub saturation: f64,
    /// Width of one scene panel in SVG pixels, at least 100. Default 360.
    pub panel_width: u32,
    /// Height of one scene panel in SVG pixels, at least 100. Default 360.
    pub panel_height: u32,
}

impl Default for View {
    fn default() -> Self {
        Self { yaw_deg: 30.0, pitch_deg: 20.0, saturation: 0.05, panel_width: 360, panel_height: 360 }
    }
}

impl View {
    /// Screen coordinates `(right, up)` of world point `p`, in metres, and its depth towards the
    /// camera (larger is nearer).
    fn project(&self, [x, y, z]: [f64; 3]) -> (f64, f64, f64) {
        let (sy, cy) = self.yaw_deg.to_radians().sin_cos();
        let (sp, cp) = self.pitch_deg.to_radians().sin_cos();
        let (right, toward) = (x * cy - z * sy, x * sy + z * cy);
        (right, y * cp - toward * sp, y * sp + toward * cp)
    }

    /// Size in SVG pixels of a row of `n` panels with the colour bar.
    fn size(&self, n: usize) -> (u32, u32) {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        (n.saturating_mul(self.panel_width).saturating_add(LEGEND_WIDTH), self.panel_height)
    }

    fn check(&self, n: usize) -> Result<(), String> {
        if !(self.yaw_deg.is_finite() && self.pitch_deg.is_finite()) {
            return Err(format!("view angles must be finite, not yaw {} and pitch {}", self.yaw_deg, self.pitch_deg));
        }
        if !(self.saturation.is_finite() && self.saturation > 0.0) {
            return Err(format!("the colour saturation must be positive, not {}", self.saturation));
        }
        check_size(self.panel_width, self.panel_height, self.size(n))
    }
}

/// Draws `panels` side by side with common bounds and a common colour scale, plus a colour bar
/// labelled "length / rest" and an axis triad, and writes `<stem>.svg` and `<stem>.png`;
/// returns the two paths, SVG first. The SVG is `panels.len() × panel_width + 110` px wide and
/// `panel_height` px tall; the PNG is [`PNG_SCALE`] times larger.
///
/// Fails, naming the file, if there are no panels, a stick refers to a missing particle, the
/// view is invalid, or a file cannot be written; then neither file is replaced.
pub fn write_snapshots(panels: &[Snapshot], view: &View, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let svg = Staged::new(stem, "svg")?;
    let png = Staged::new(stem, "png")?;
    let (w, h) = view.size(panels.len());
    let bounds = Bounds::new(panels.iter(), view);
    svg.draw(|tmp| {
        check_row(panels, view)?;
        let root = SVGBackend::new(tmp, (w, h)).into_drawing_area();
        draw_row(&root, panels, view, &bounds, 1.0)?;
        root.present()?;
        Ok(())
    })?;
    png.draw(|tmp| {
        let root = BitMapBackend::new(tmp, (w * PNG_SCALE, h * PNG_SCALE)).into_drawing_area();
        draw_row(&root, panels, view, &bounds, f64::from(PNG_SCALE))?;
        root.present()?;
        Ok(())
    })?;
    Ok(vec![svg.commit()?, png.commit()?])
}

/// Draws one row of panels per element of `frames` (as [`write_snapshots`] does) into the
/// animated, endlessly looping `<stem>.gif`, showing each frame for `delay_ms` milliseconds
/// (GIF stores hundredths of a second, at most 655.35 s). Bounds are fitted to all frames at once, so the camera
/// stays still. The GIF is drawn at the SVG size of [`write_snapshots`], with at most 256
/// colours per frame.
///
/// Fails, naming the file, if there are no frames, the frames have different numbers of
/// panels, or as [`write_snapshots`] does.
pub fn write_animation(
    frames: &[Vec<Snapshot>],
    view: &View,
    delay_ms: u32,
    stem: &Path,
) -> Result<PathBuf, PlotError> {
    let gif = Staged::new(stem, "gif")?;
    gif.draw(|tmp| {
        let n = frames.first().ok_or("the animation has no frames")?.len();
        for (i, frame) in frames.iter().enumerate() {
            if frame.len() != n {
                return Err(format!("frame {i} has {} panels, frame 0 has {n}", frame.len()).into());
            }
            check_row(frame, view).map_err(|e| format!("frame {i}: {e}"))?;
        }
        let bounds = Bounds::new(frames.iter().flatten(), view);
        let root = BitMapBackend::gif(tmp, view.size(n), delay_ms.min(655_350))?.into_drawing_area();
        for frame in frames {
            draw_row(&root, frame, view, &bounds, 1.0)?;
            root.present()?;
        }
        Ok(())
    })?;
    gif.commit()
}

/// Checks a row of panels before anything is drawn.
fn check_row(panels: &[Snapshot], view: &View) -> Result<(), String> {
    if panels.is_empty() {
        return Err("there are no snapshots to draw".into());
    }
    view.check(panels.len())?;
    for snap in panels {
        let n = snap.points.len();
        if let Some(&(a, b, _)) = snap.sticks.iter().find(|&&(a, b, _)| a >= n || b >= n) {
            return Err(format!(
                "snapshot '{}': stick ({a}, {b}) refers to a particle beyond the {n} given",
                snap.title
            ));
        }
    }
    Ok(())
}

/// The projected extent shared by all panels, in metres, padded by 5 %.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    centre: (f64, f64),
    half: (f64, f64),
}

impl Bounds {
    fn new<'a>(snaps: impl Iterator<Item = &'a Snapshot>, view: &View) -> Self {
        let mut lo = (f64::INFINITY, f64::INFINITY);
        let mut hi = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for p in snaps.flat_map(|s| s.points.iter()).filter(|p| p.iter().all(|c| c.is_finite())) {
            let (u, v, _) = view.project(*p);
            (lo, hi) = ((lo.0.min(u), lo.1.min(v)), (hi.0.max(u), hi.1.max(v)));
        }
        if lo.0 > hi.0 {
            return Self { centre: (0.0, 0.0), half: (1.0, 1.0) };
        }
        let half = (0.5 * (hi.0 - lo.0), 0.5 * (hi.1 - lo.1));
        let pad = 0.05 * half.0.max(half.1);
        let pad = if pad > 0.0 { pad } else { 0.5 };
        Self { centre: (0.5 * (lo.0 + hi.0), 0.5 * (lo.1 + hi.1)), half: (half.0 + pad, half.1 + pad) }
    }
}

/// Draws a row of scene panels and the legend column on `root`, lengths multiplied by `s`.
fn draw_row<DB>(root: &DrawingArea<DB, Shift>, panels: &[Snapshot], view: &View, bounds: &Bounds, s: f64) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    ensure_font()?;
    root.fill(&WHITE)?;
    let scenes_width = root.dim_in_pixel().0 - px(f64::from(LEGEND_WIDTH), s);
    let (scenes, legend) = root.split_horizontally(scenes_width);
    for (snap, cell) in panels.iter().zip(scenes.split_evenly((1, panels.len()))) {
        draw_scene(&cell, snap, view, bounds, s)?;
    }
    draw_legend(&legend, view, s)
}

/// Draws one scene: title, sticks (far ones first) and particle dots.
fn draw_scene<DB>(cell: &DrawingArea<DB, Shift>, snap: &Snapshot, view: &View, bounds: &Bounds, s: f64) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let (band, body) = cell.split_vertically(px(TITLE_BAND, s));
    draw_centred(&band, &snap.title, text(15.0 * s))?;

    let projected: Vec<Option<(f64, f64, f64)>> =
        snap.points.iter().map(|p| p.iter().all(|c| c.is_finite()).then(|| view.project(*p))).collect();
    if projected.iter().all(Option::is_none) {
        return draw_centred(&body, "no data", text(14.0 * s).color(&BLACK.mix(0.6)));
    }

    let (w, h) = body.dim_in_pixel();
    let margin = f64::from(px(MARGIN, s));
    let scale = ((f64::from(w) - 2.0 * margin) / (2.0 * bounds.half.0))
        .min((f64::from(h) - 2.0 * margin) / (2.0 * bounds.half.1))
        .max(0.0);
    let to_pixel = |(u, v, _): (f64, f64, f64)| {
        let x = 0.5 * f64::from(w) + (u - bounds.centre.0) * scale;
        let y = 0.5 * f64::from(h) - (v - bounds.centre.1) * scale;
        (x.round() as i32, y.round() as i32)
    };

    let mut sticks: Vec<_> =
        snap.sticks.iter().filter_map(|&(a, b, ratio)| Some((projected[a]?, projected[b]?, ratio))).collect();
    sticks.sort_by(|p, q| (p.0 .2 + p.1 .2).total_cmp(&(q.0 .2 + q.1 .2)));
    let width = px(2.0, s);
    for (a, b, ratio) in sticks {
        let colour = rgb(stretch_colour(ratio, view.saturation)).stroke_width(width);
        body.draw(&PathElement::new(vec![to_pixel(a), to_pixel(b)], colour))?;
    }

    let mut dots: Vec<_> = projected.into_iter().flatten().collect();
    dots.sort_by(|p, q| p.2.total_cmp(&q.2));
    let (radius, dot) = (px(2.5, s), rgb(PARTICLE).filled());
    for p in dots {
        body.draw(&Circle::new(to_pixel(p), radius, dot))?;
    }
    Ok(())
}

/// Draws the colour bar for `length / rest` and, below it, the orientation of the world axes.
fn draw_legend<DB>(area: &DrawingArea<DB, Shift>, view: &View, s: f64) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let h = f64::from(area.dim_in_pixel().1);
    let (x0, x1) = (px(14.0, s) as i32, px(30.0, s) as i32);
    let (top, bottom) = ((0.12 * h).round() as i32, (0.62 * h).round() as i32);
    let sat = view.saturation;
    // One 1-pixel row per colour, stretched at the top.
    for y in top..bottom {
        let ratio = 1.0 + sat * (1.0 - 2.0 * (f64::from(y - top) + 0.5) / f64::from(bottom - top));
        area.draw(&Rectangle::new([(x0, y), (x1, y + 1)], rgb(stretch_colour(ratio, sat)).filled()))?;
    }
    area.draw(&Rectangle::new([(x0, top), (x1, bottom)], BLACK.stroke_width(px(1.0, s))))?;

    let decimals = (-sat.log10()).ceil().max(2.0) as usize;
    let ticks = [
        (top, format!("≥ {:.decimals$}", 1.0 + sat)),
        ((top + bottom) / 2, format!("{:.decimals$}", 1.0)),
        (bottom, format!("≤ {:.decimals$}", 1.0 - sat)),
    ];
    let label_style = text(12.0 * s).pos(Pos::new(HPos::Left, VPos::Center));
    for (y, label) in ticks {
        area.draw(&PathElement::new(vec![(x1, y), (x1 + px(4.0, s) as i32, y)], BLACK.stroke_width(px(1.0, s))))?;
        area.draw(&Text::new(label, (x1 + px(7.0, s) as i32, y), label_style.clone()))?;
    }
    let title_style = text(13.0 * s).transform(FontTransform::Rotate270).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new("length / rest", (px(96.0, s) as i32, (top + bottom) / 2), title_style))?;

    // Axis triad: where the world axes point on screen.
    let reach = (0.1 * h).min(f64::from(px(22.0, s)));
    let origin = (px(40.0, s) as i32, (h - 1.6 * reach - f64::from(px(4.0, s))).round() as i32);
    let grey = BLACK.mix(0.6);
    for (name, axis) in [("x", [1.0, 0.0, 0.0]), ("y", [0.0, 1.0, 0.0]), ("z", [0.0, 0.0, 1.0])] {
        let (u, v, _) = view.project(axis);
        let tip = |k: f64| (origin.0 + (k * reach * u).round() as i32, origin.1 - (k * reach * v).round() as i32);
        area.draw(&PathElement::new(vec![origin, tip(1.0)], grey.stroke_width(px(1.5, s))))?;
        area.draw(&Text::new(name, tip(1.35), text(11.0 * s).color(&grey).pos(Pos::new(HPos::Center, VPos::Center))))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: (f64, f64, f64), b: (f64, f64, f64)) -> bool {
        (a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12 && (a.2 - b.2).abs() < 1e-12
    }

    #[test]
    fn projection_conventions() {
        let front = View { yaw_deg: 0.0, pitch_deg: 0.0, ..View::default() };
        assert!(close(front.project([1.0, 2.0, 3.0]), (1.0, 2.0, 3.0)));
        // From above (pitch 90°) the near side (+z) is at the bottom of the screen.
        let above = View { yaw_deg: 0.0, pitch_deg: 90.0, ..View::default() };
        assert!(close(above.project([0.0, 0.0, 1.0]), (0.0, -1.0, 0.0)));
        // Yaw 90° puts the camera on +x: +x comes towards it and +z points left.
        let side = View { yaw_deg: 90.0, pitch_deg: 0.0, ..View::default() };
        assert!(close(side.project([1.0, 0.0, 0.0]), (0.0, 0.0, 1.0)));
        assert!(close(side.project([0.0, 0.0, 1.0]), (-1.0, 0.0, 0.0)));
    }

    #[test]
    fn bounds_cover_all_panels_and_never_collapse() {
        let view = View { yaw_deg: 0.0, pitch_deg: 0.0, ..View::default() };
        let a = Snapshot { points: vec![[0.0, 0.0, 0.0]], ..Snapshot::default() };
        let b = Snapshot { points: vec![[2.0, 1.0, 0.0], [f64::NAN, 0.0, 0.0]], ..Snapshot::default() };
        let bounds = Bounds::new([&a, &b].into_iter(), &view);
        assert_eq!(bounds.centre, (1.0, 0.5));
        assert!((bounds.half.0 - 1.05).abs() < 1e-12 && (bounds.half.1 - 0.55).abs() < 1e-12);
        let single = Bounds::new([&a].into_iter(), &view);
        assert!(single.half.0 > 0.0 && single.half.1 > 0.0);
    }

    #[test]
    fn bad_sticks_and_views_are_rejected() {
        let snap = Snapshot { title: "t".into(), points: vec![[0.0; 3]; 2], sticks: vec![(0, 2, 1.0)] };
        assert!(check_row(&[snap], &View::default()).unwrap_err().contains("(0, 2)"));
        assert!(check_row(&[], &View::default()).is_err());
        let view = View { saturation: 0.0, ..View::default() };
        assert!(check_row(&[Snapshot::default()], &view).is_err());
    }
}
