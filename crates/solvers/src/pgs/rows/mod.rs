//! The prepared velocity rows of the PGS solver: their layout, their preparation and warm
//! start; the sweeps over them in `sweep.rs`, the position sweep in `position.rs`.

use solverlab_core::model::{Kind, Sense};
use solverlab_core::rows::{decode, tangents, IdMap, RowKind, RowRef, RowSet, ROW_PARTICLES};
use solverlab_core::{Scene, Vec3};

use super::{Feedback, PgsConfig};

mod position;
mod sweep;

pub(in crate::pgs) use sweep::BLOCKS;

/// One prepared velocity row: its scalars (128 bytes); its particles and gradients are in
/// [`Parts`], from `start` on.
///
/// Laid out (`repr(C)`) with what a sweep reads first; what only preparation, warm starting and
/// restitution read comes last.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(super) struct VRow {
    /// Effective mass `1/(K + γ)`; 0 when nothing can move.
    pub m: f64,
    /// Accumulated impulse (N·s).
    pub lambda: f64,
    /// Accumulated pseudo impulse of the split sweeps (N·s).
    pub split_lambda: f64,
    /// Bias of the biased sweeps (m/s).
    pub bias: f64,
    /// Bias of the relax sweeps: the speculative part and `∂C/∂t` only.
    pub relax_bias: f64,
    /// Baumgarte bias of the split (pseudo-velocity) sweeps (m/s); the row takes part in them
    /// when `split` is set.
    pub split_bias: f64,
    pub mass_scale: f64,
    pub impulse_scale: f64,
    pub lo: f64,
    pub hi: f64,
    pub n: u32,
    pub split: bool,
    /// A compliant row: its soft coefficients are physics, kept in the relax sweeps too.
    pub compliant: bool,
    /// A rigid equality stick (two particles, `C = |x_b − x_a| − rest`, gradient `(−u, u)`): the
    /// position-level passes (split sweeps, nonlinear Gauss-Seidel) evaluate it at the positions
    /// they correct instead of only at the start of the step.
    pub stick: bool,
    /// The row's first slot in [`Parts`].
    pub start: u32,
    pub id: u64,
    /// `J v` before warm starting, for restitution.
    pub vn0: f64,
    pub restitution: f64,
    /// The position-level `C` at the start of the step (m), for the linearised penetration and
    /// the position sweeps.
    pub c: f64,
}

/// The particles and gradients of every prepared row, row after row (a stick's take 56 bytes,
/// against 224 for room for eight in each row).
#[derive(Default)]
pub(super) struct Parts {
    pub p: Vec<u32>,
    pub j: Vec<Vec3>,
}

impl Parts {
    /// The particles and gradients of `row`.
    #[inline(always)]
    pub fn of(&self, row: &VRow) -> impl Iterator<Item = (usize, &Vec3)> {
        let slots = row.start as usize..row.start as usize + row.n as usize;
        self.p[slots.clone()].iter().map(|&i| i as usize).zip(&self.j[slots])
    }

    /// Appends a row's particles and gradients; returns its first slot.
    fn push(&mut self, p: &[u32], j: &[Vec3]) -> u32 {
        let start = self.p.len() as u32;
        self.p.extend_from_slice(p);
        self.j.extend_from_slice(j);
        start
    }

    fn clear(&mut self) {
        self.p.clear();
        self.j.clear();
    }
}

/// What a sweep visits: one row, or the two tangent rows of a contact (`t1`, `t1 + 1`) limited by
/// its normal row.
#[derive(Clone, Copy, Debug)]
pub(super) enum Item {
    Single(usize),
    Friction { t1: usize, normal: usize, mu: f64 },
}

/// Which sweep: of the particle rows ([`Rows::sweep`]), and of the rigid bodies' joints and
/// contacts (`RigidSi::sweep`, `JointRows::solve`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pass {
    /// Biased: the feedback of the config.
    Biased,
    /// Relax: rigid rows unbiased (a contact keeps its speculative part), compliant rows as in
    /// the biased pass.
    Relax,
    /// Split: the Baumgarte rows on the pseudo velocities.
    Split,
}

/// Soft-constraint coefficients `(bias_rate, mass_scale, impulse_scale)` for frequency `hz`,
/// damping ratio `zeta` and step `h`.
pub(super) fn soft(hz: f64, zeta: f64, h: f64) -> (f64, f64, f64) {
    let omega = std::f64::consts::TAU * hz;
    let a1 = 2.0 * zeta + h * omega;
    let a2 = h * omega * a1;
    (omega / a1, a2 / (1.0 + a2), 1.0 / (1.0 + a2))
}

/// The last step's impulses, for the warm start.
pub(super) struct Warm<'a> {
    /// The last step's row ids, in order.
    pub ids: &'a [u64],
    /// The position of each of `ids`.
    pub index: &'a IdMap<usize>,
    /// The impulses (N·s), in the order of `ids`.
    pub lambda: &'a [f64],
    /// The pseudo impulses (N·s), NaN for rows without one.
    pub split: &'a [f64],
    /// The warm-start factor.
    pub factor: f64,
}

/// The prepared rows of one step and the velocities they act on.
#[derive(Default)]
pub(super) struct Rows {
    pub vrows: Vec<VRow>,
    /// The rows' particles and gradients.
    pub parts: Parts,
    pub items: Vec<Item>,
    /// The rows' ids, in order (for the warm start's match with the last step).
    pub ids: Vec<u64>,
    /// The rows with restitution, the only ones whose `vn0` is read.
    pub bouncy: Vec<usize>,
    /// Whether any row takes part in the split sweeps.
    pub any_split: bool,
    /// The coloured layout: per colour, where each particle block's rows start, then where the
    /// straddling rows start, then the colour's end (see `PgsSolver::colour_order`).
    pub layout: Vec<Vec<usize>>,
    /// Whether this step's rows are stored in `layout`.
    pub in_layout: bool,
    /// Velocities (m/s).
    pub v: Vec<Vec3>,
    /// Pseudo velocities of the split sweeps (m/s).
    pub vp: Vec<Vec3>,
    /// The step (s).
    pub h: f64,
}

/// The rest length of the rigid equality stick that row `id` belongs to, if it is one.
fn stick_rest(scene: &Scene, id: u64) -> Option<f64> {
    match decode(id) {
        RowRef::Constraint { index, axis: 0 } => match scene.constraints.get(index)?.kind {
            Kind::Stick { rest, sense: Sense::Equal, .. } => Some(rest),
            _ => None,
        },
        _ => None,
    }
}

fn apply(v: &mut [Vec3], w: &[f64], parts: &Parts, row: &VRow, dl: f64) {
    for (i, j) in parts.of(row) {
        v[i] += j * (w[i] * dl);
    }
}

fn jv(v: &[Vec3], parts: &Parts, row: &VRow) -> f64 {
    parts.of(row).map(|(i, j)| j.dot(&v[i])).sum()
}

impl Rows {
    /// `J v` of row `r`.
    pub fn jv(&self, r: usize) -> f64 {
        jv(&self.v, &self.parts, &self.vrows[r])
    }

    /// Applies an impulse change `dl` of row `r` to the velocities.
    pub fn apply(&mut self, w: &[f64], r: usize, dl: f64) {
        apply(&mut self.v, w, &self.parts, &self.vrows[r], dl);
    }

    /// Applies a pseudo impulse change `dl` of row `r` to the pseudo velocities.
    pub fn apply_split(&mut self, w: &[f64], r: usize, dl: f64) {
        apply(&mut self.vp, w, &self.parts, &self.vrows[r], dl);
    }

    /// Builds the velocity rows of this step from the gathered position rows (step 3), taken in
    /// `order` (indices into `rows`; `None`: as gathered), and warm starts each as it is built
    /// (step 4), while it is in cache: `v0` are the velocities before any warm start (`J v0` is a
    /// bouncy row's approach speed), `warm` the last step's impulses.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        scene: &Scene,
        rows: &RowSet,
        order: Option<&[u32]>,
        w: &[f64],
        cfg: &PgsConfig,
        h: f64,
        v0: &[Vec3],
        warm: Option<&Warm>,
    ) {
        self.vrows.clear();
        self.parts.clear();
        self.items.clear();
        self.ids.clear();
        self.bouncy.clear();
        self.any_split = false;
        let (contact_hz, joint_hz) = cfg.soft_hertz(h);
        let (joint_rate, joint_ms, joint_is) = soft(joint_hz.max(1e-12), cfg.joint_damping_ratio, h);
        let (contact_rate, contact_ms, contact_is) = soft(contact_hz.max(1e-12), cfg.contact_damping_ratio, h);
        self.h = h;
        // Nonlinear Gauss-Seidel position sweeps take Baumgarte's place in the velocity rows
        // (Box2D v2.4); otherwise split impulses may.
        let ngs = cfg.position_iterations > 0 && cfg.feedback == Feedback::Baumgarte;
        let split = cfg.split_impulse && cfg.feedback == Feedback::Baumgarte && !ngs;
        for i in 0..rows.len() {
            let row = rows.get(order.map_or(i, |o| o[i] as usize));
            let k = row.w_grad2(w);
            let mut vr = VRow {
                id: row.id,
                n: row.particles.len() as u32,
                start: 0,
                m: 0.0,
                mass_scale: 1.0,
                impulse_scale: 0.0,
                bias: 0.0,
                relax_bias: row.dc_dt,
                split_bias: 0.0,
                split: false,
                compliant: false,
                stick: false,
                lo: f64::NEG_INFINITY,
                hi: f64::INFINITY,
                lambda: 0.0,
                split_lambda: 0.0,
                vn0: 0.0,
                restitution: 0.0,
                c: row.c,
            };
            let c = row.c;
            if let (RowKind::Equality, 2, 0.0) = (row.kind, row.particles.len(), row.compliance) {
                vr.stick = stick_rest(scene, row.id).is_some();
            }
            if row.compliance > 0.0 {
                let gamma = row.compliance / (h * h);
                vr.m = 1.0 / (k + gamma);
                vr.impulse_scale = gamma * vr.m;
                vr.bias = c / h + row.dc_dt;
                vr.relax_bias = vr.bias;
                vr.compliant = true;
            } else if k > 0.0 {
                vr.m = 1.0 / k;
                match (row.kind, cfg.feedback) {
                    (RowKind::Equality, Feedback::Baumgarte) if ngs => vr.bias = row.dc_dt,
                    (RowKind::Equality, Feedback::Baumgarte) if split => {
                        // A position-level pass corrects a stick fully (as Box2D v2.4's position
                        // solver does joints): with β = 0.2 an unconverged velocity solve leaves
                        // more sag each step than a fifth of it removes, and a 20-link chain
                        // hangs at 4.6 times its length without warm start (1.9 with full
                        // correction).
                        vr.bias = row.dc_dt;
                        vr.split_bias = if vr.stick { c / h } else { cfg.baumgarte * c / h };
                        vr.split = true;
                    }
                    (RowKind::Equality, Feedback::Baumgarte) => vr.bias = cfg.baumgarte * c / h + row.dc_dt,
                    (RowKind::Equality, Feedback::Soft) => {
                        vr.bias = joint_rate * c + row.dc_dt;
                        vr.mass_scale = joint_ms;
                        vr.impulse_scale = joint_is;
                    }
                    (RowKind::Inequality, _) if c > 0.0 => {
                        // Speculative: a velocity limit, not a position correction.
                        vr.bias = c / h;
                        vr.relax_bias = c / h;
                        vr.split = split;
                    }
                    (RowKind::Inequality, Feedback::Baumgarte) if ngs => {}
                    (RowKind::Inequality, Feedback::Baumgarte) if split => {
                        vr.split_bias = (cfg.baumgarte * (c + cfg.slop).min(0.0) / h).max(-cfg.max_push);
                        vr.split = true;
                    }
                    (RowKind::Inequality, Feedback::Baumgarte) => {
                        vr.bias = (cfg.baumgarte * (c + cfg.slop).min(0.0) / h).max(-cfg.max_push)
                    }
                    (RowKind::Inequality, Feedback::Soft) => {
                        vr.bias = (contact_rate * (c + cfg.slop).min(0.0)).max(-cfg.max_push);
                        vr.mass_scale = contact_ms;
                        vr.impulse_scale = contact_is;
                    }
                }
            }
            if row.kind == RowKind::Inequality {
                vr.lo = 0.0;
            }
            let normal = self.vrows.len();
            self.any_split |= vr.split;
            match row.contact {
                Some(info) if info.friction > 0.0 && vr.m > 0.0 => {
                    // Two tangent rows, then the normal row. The row's gradient on
                    // particle k is cₖ·n (cₖ = 1 for a particle, the weight for an embedded
                    // point), so the tangent rows are cₖ·t.
                    let (t1, t2) = tangents(&info.normal);
                    for (dir, t) in [(1u64, t1), (2, t2)] {
                        let mut j = [Vec3::zeros(); ROW_PARTICLES];
                        let mut k_t = 0.0;
                        for (k, jk) in j.iter_mut().enumerate().take(row.particles.len()) {
                            *jk = t * row.grad[k].dot(&info.normal);
                            k_t += w[row.particles[k] as usize] * jk.norm_squared();
                        }
                        let start = self.parts.push(row.particles, &j[..row.particles.len()]);
                        self.vrows.push(VRow {
                            id: row.id + dir,
                            start,
                            m: if k_t > 0.0 { 1.0 / k_t } else { 0.0 },
                            mass_scale: 1.0,
                            impulse_scale: 0.0,
                            bias: 0.0,
                            relax_bias: 0.0,
                            split: false,
                            split_bias: 0.0,
                            compliant: false,
                            stick: false,
                            lo: f64::NEG_INFINITY,
                            hi: f64::INFINITY,
                            restitution: 0.0,
                            ..vr
                        });
                    }
                    vr.restitution = info.restitution;
                    if vr.restitution > 0.0 {
                        self.bouncy.push(normal + 2);
                    }
                    vr.start = self.parts.push(row.particles, row.grad);
                    self.vrows.push(vr);
                    self.ids.extend([row.id + 1, row.id + 2, row.id]);
                    // The normal row first, so that even the first sweep's friction limit is the
                    // normal impulse of that sweep (a sweep that ends on the tolerance has then
                    // applied friction too).
                    self.items.push(Item::Single(normal + 2));
                    self.items.push(Item::Friction { t1: normal, normal: normal + 2, mu: info.friction });
                }
                _ => {
                    vr.restitution = row.contact.map_or(0.0, |i| i.restitution);
                    if vr.restitution > 0.0 {
                        self.bouncy.push(normal);
                    }
                    vr.start = self.parts.push(row.particles, row.grad);
                    self.vrows.push(vr);
                    self.ids.push(row.id);
                    self.items.push(Item::Single(normal));
                }
            }
            for r in normal..self.vrows.len() {
                if self.vrows[r].restitution > 0.0 {
                    self.vrows[r].vn0 = jv(v0, &self.parts, &self.vrows[r]);
                }
                if let Some(warm) = warm {
                    self.warm_start(r, w, warm);
                }
            }
        }
    }

    /// Starts row `r` from the last step's impulses times `warm.factor`, applied to the
    /// velocities; linear equality rows (pins) also from their pseudo impulses. A contact's
    /// pseudo impulse from the last step would push a body that no longer penetrates clear of the
    /// surface, where it floats without friction. A stick's pseudo impulse holds the last step's
    /// curvature correction, which its split sweeps compute afresh: started from it as well, the
    /// 20-link chain of the `chain` scene is torn within a second.
    fn warm_start(&mut self, r: usize, w: &[f64], warm: &Warm) {
        let id = self.ids[r];
        // The last step's position of this row: the same position while the rows stay the same.
        let k = if warm.ids.get(r) == Some(&id) { Some(r) } else { warm.index.get(&id).copied() };
        let Some(k) = k.filter(|&k| k < warm.lambda.len()) else { return };
        let l = warm.lambda[k] * warm.factor;
        self.vrows[r].lambda = l;
        self.apply(w, r, l);
        let l = warm.split[k];
        let row = &self.vrows[r];
        if !l.is_nan() && row.split && !row.stick && row.lo == f64::NEG_INFINITY {
            let l = l * warm.factor;
            self.vrows[r].split_lambda = l;
            self.apply_split(w, r, l);
        }
    }
}
