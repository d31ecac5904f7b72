//! The look shared by every figure: font, palette, stretch colour scale, sizes, centred text.

use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend, Text};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle, RGBColor, TextStyle, BLACK};

use crate::DrawResult;

/// Smallest panel side, in SVG pixels.
const MIN_PANEL: u32 = 100;
/// Largest figure side, in SVG pixels.
const MAX_SIDE: u32 = 10_000;

/// DejaVu Sans, embedded so that drawing needs no system font library.
static SANS_BYTES: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
/// DejaVu Serif, for [`Font::Serif`].
static SERIF_BYTES: &[u8] = include_bytes!("../assets/DejaVuSerif.ttf");

/// The typeface of a figure's text. The SVG names the generic family (`sans-serif` or `serif`),
/// so a document that includes it sets it in its own face; the PNG and every text measurement
/// use the embedded DejaVu face of that family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Font {
    /// DejaVu Sans (`sans-serif`): the screen figures.
    #[default]
    Sans,
    /// DejaVu Serif (`serif`): figures set beside a paper's serif text.
    Serif,
}

/// How text and lines are drawn: every length is multiplied by `s` (the PNG scale), every font
/// size also by `text` (the figure's text scale), in the figure's font.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pen {
    /// Device pixels per SVG pixel.
    pub(crate) s: f64,
    /// Font size multiplier.
    pub(crate) text: f64,
    /// Typeface.
    pub(crate) font: Font,
    /// Series line width, SVG px.
    pub(crate) line: f64,
}

impl Pen {
    /// Black text `size` SVG pixels high before the text scale.
    pub(crate) fn text(&self, size: f64) -> TextStyle<'static> {
        let family = match self.font {
            Font::Sans => FontFamily::SansSerif,
            Font::Serif => FontFamily::Serif,
        };
        TextStyle::from(FontDesc::new(family, size * self.s * self.text, FontStyle::Normal)).color(&BLACK)
    }

    /// `length` SVG pixels in whole device pixels.
    pub(crate) fn px(&self, length: f64) -> u32 {
        px(length, self.s)
    }

    /// `length` SVG pixels scaled like text (for room kept for labels), in device pixels.
    pub(crate) fn tpx(&self, length: f64) -> u32 {
        px(length * self.text, self.s)
    }
}

/// The colours given to series in order, as sRGB `(r, g, b)`: the Okabe–Ito palette, which stays
/// distinguishable for readers with colour-vision deficiencies. Yellow comes last because it is
/// the hardest to see on white; a ninth series starts again from the first colour.
pub const PALETTE: [(u8, u8, u8); 8] = [
    (0, 114, 178),   // blue
    (213, 94, 0),    // vermillion
    (0, 158, 115),   // bluish green
    (204, 121, 167), // reddish purple
    (230, 159, 0),   // orange
    (86, 180, 233),  // sky blue
    (0, 0, 0),       // black
    (240, 228, 66),  // yellow
];

/// Colour of a stick at `length / rest == 1`.
const NEUTRAL: (u8, u8, u8) = (150, 150, 150);
/// Colour of a fully compressed stick (`length / rest <= 1 - saturation`).
const COMPRESSED: (u8, u8, u8) = PALETTE[0];
/// Colour of a fully stretched stick (`length / rest >= 1 + saturation`).
const STRETCHED: (u8, u8, u8) = PALETTE[1];

/// Colour of a stick whose `length / rest` is `ratio`, as sRGB `(r, g, b)`.
///
/// 1.0 is neutral grey; compression shades towards blue and stretch towards vermillion, both
/// reaching full colour at a deviation of `saturation` (a fraction: 0.05 saturates at 0.95 and
/// 1.05) and staying there beyond (infinite ratios included). A NaN ratio, or a `saturation`
/// that is not positive, gives black.
pub fn stretch_colour(ratio: f64, saturation: f64) -> (u8, u8, u8) {
    if ratio.is_nan() || saturation.is_nan() || saturation <= 0.0 {
        return (0, 0, 0);
    }
    let t = (ratio - 1.0) / saturation;
    let (end, t) = if t < 0.0 { (COMPRESSED, -t) } else { (STRETCHED, t) };
    let t = t.min(1.0);
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    (mix(NEUTRAL.0, end.0), mix(NEUTRAL.1, end.1), mix(NEUTRAL.2, end.2))
}

/// The plotters colour of series number `index` (0-based), cycling through [`PALETTE`].
pub(crate) fn series_colour(index: usize) -> RGBColor {
    rgb(PALETTE[index % PALETTE.len()])
}

/// A plotters colour from an `(r, g, b)` triple.
pub(crate) fn rgb((r, g, b): (u8, u8, u8)) -> RGBColor {
    RGBColor(r, g, b)
}

/// Registers the embedded fonts with plotters under the `sans-serif` and `serif` families, once
/// per process.
///
/// Must run before anything is drawn: with the `ab_glyph` feature plotters knows no other font.
pub(crate) fn ensure_font() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        let register =
            |family: FontFamily, bytes| plotters::style::register_font(family.as_str(), FontStyle::Normal, bytes);
        register(FontFamily::SansSerif, SANS_BYTES).is_ok() && register(FontFamily::Serif, SERIF_BYTES).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err("the embedded DejaVu fonts could not be loaded".into())
    }
}

/// Black text in the embedded font, `size` pixels high (plotters' notion of font size).
pub(crate) fn text(size: f64) -> TextStyle<'static> {
    TextStyle::from(FontDesc::new(FontFamily::SansSerif, size, FontStyle::Normal)).color(&BLACK)
}

/// `length` SVG pixels at scale `s`, in whole device pixels.
pub(crate) fn px(length: f64, s: f64) -> u32 {
    (length * s).round() as u32
}

/// Checks a panel size and the figure size it gives, both in SVG pixels.
pub(crate) fn check_size(panel_width: u32, panel_height: u32, (w, h): (u32, u32)) -> Result<(), String> {
    if panel_width < MIN_PANEL || panel_height < MIN_PANEL {
        return Err(format!(
            "panels must be at least {MIN_PANEL} × {MIN_PANEL} px, not {panel_width} × {panel_height}"
        ));
    }
    if w > MAX_SIDE || h > MAX_SIDE {
        return Err(format!("the figure would be {w} × {h} px, more than {MAX_SIDE} px a side"));
    }
    Ok(())
}

/// Draws `label` centred in `area`.
pub(crate) fn draw_centred<DB>(area: &DrawingArea<DB, Shift>, label: &str, style: TextStyle) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let (w, h) = area.dim_in_pixel();
    let centre = (i32::try_from(w / 2)?, i32::try_from(h / 2)?);
    area.draw(&Text::new(label, centre, style.pos(Pos::new(HPos::Center, VPos::Center))))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretch_scale_is_neutral_at_one_and_saturates() {
        assert_eq!(stretch_colour(1.0, 0.05), NEUTRAL);
        assert_eq!(stretch_colour(0.95, 0.05), COMPRESSED);
        assert_eq!(stretch_colour(0.5, 0.05), COMPRESSED);
        assert_eq!(stretch_colour(1.05, 0.05), STRETCHED);
        assert_eq!(stretch_colour(3.0, 0.05), STRETCHED);
        assert_ne!(stretch_colour(1.02, 0.05), stretch_colour(1.04, 0.05));
        assert_eq!(stretch_colour(f64::INFINITY, 0.05), STRETCHED);
        assert_eq!(stretch_colour(f64::NAN, 0.05), (0, 0, 0));
        assert_eq!(stretch_colour(1.0, 0.0), (0, 0, 0));
    }

    #[test]
    fn palette_cycles() {
        assert_eq!(series_colour(0), series_colour(PALETTE.len()));
        assert_ne!(series_colour(0), series_colour(1));
    }
}
