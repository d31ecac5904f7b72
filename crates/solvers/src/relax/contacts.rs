//! The contacts of the relaxation solver: projection with accumulated normal multipliers and
//! position-level Coulomb friction, for particles against colliders, particle pairs, embedded
//! points and box bodies.
//!
//! Per step, [`Contacts::begin_step`] finds every candidate once, at the predicted positions:
//! pairs of particles with radii by the uniform-grid broadphase (within one radius), box-body
//! contacts by their separating axes (within the step's largest travel of a body particle), and
//! the colliders near each movable particle and embedded point (`C` within twice the step's
//! largest travel of any movable particle, that travel taken as at least 0.1 mm). The
//! iterations evaluate only these candidates, at the current positions (so a sphere's or a
//! block's normal follows the particle), and allocate nothing. A collider that a projection
//! carries a particle into from farther away than that reach is met in the next step, as a
//! velocity solver's speculative contact would be; [`Contacts::penetration`], the contact part
//! of the stopping test and of the reported violation, checks every collider, so such a miss is
//! never hidden. Per iteration, [`Contacts::project`] pushes out every penetrating row,
//!
//! ```text
//! Δλₙ = −C / K,   K = Σ wₖcₖ²,   xₖ += wₖ cₖ n Δλₙ,   λₙ += Δλₙ
//! ```
//!
//! (for one particle `c = 1` and this is Jakobsen's projection; for an embedded point `cₖ` are
//! its weights, Jakobsen's §5; for two bodies `+cᴬ` and `−cᴮ`), then applies friction to every
//! row that has pushed in this step ([`coulomb_friction`]: static while the step's tangential
//! displacement fits in the cone `μλₙ`, dynamic beyond it). Contacts only push; `λₙ` is the
//! total push of the step, so `λₙ/h²` is the contact force in newtons.
//!
//! Loops per iteration: one pass over the near colliders of particles and of embedded points,
//! one over the step's pairs and body contacts, one over the rows that pushed (friction). Per
//! step: one pass over movable particles × colliders, one broadphase for pairs and one
//! box-contact search for bodies.

use solverlab_core::rows::IdMap;

use solverlab_core::bodies::BoxContact;
use solverlab_core::constraint::{
    collider_contact, coulomb_friction, delta_lambda, flat_collider, for_each_contact, stick_row, ColliderRef,
    FlatCollider,
};
use solverlab_core::rows::{body_row_id, contact_row_id, embedded_row_id, pair_row_id, tangents};
use solverlab_core::{Scene, Sense, State, Vec3};

/// What a tracked contact row acts on.
#[derive(Clone, Copy, Debug)]
enum On {
    /// A particle against a collider.
    Particle(usize),
    /// An embedded point against a collider.
    Embedded(usize),
    /// Box-body contact `k` of the step's list.
    Body(usize),
}

/// A contact row that pushed in this step.
#[derive(Clone, Copy, Debug)]
struct Slot {
    id: u64,
    on: On,
    normal: Vec3,
    mu: f64,
    lambda_n: f64,
    lambda_t: Vec3,
}

/// The relax solver's contact state for one step.
#[derive(Debug, Default)]
pub(super) struct Contacts {
    slots: Vec<Slot>,
    index: IdMap<u32>,
    pairs: Vec<(usize, usize)>,
    pair_lambda: Vec<f64>,
    bodies: Vec<BoxContact>,
    /// The step's colliders near each movable particle, by particle, in collider order.
    near: Vec<Near>,
    /// The step's colliders near each embedded point, by point, in collider order.
    near_embedded: Vec<Near>,
    /// The scene's flat colliders by collider code (`None` for curved ones).
    flats: Vec<Option<FlatCollider>>,
}

/// A collider near a particle or an embedded point in this step (12 bytes: the iterations
/// stream through these).
#[derive(Clone, Copy, Debug)]
struct Near {
    /// The particle or the embedded point.
    of: u32,
    collider: ColliderRef,
}

/// `C`, the normal and μ of `near` at `x`, for a point of radius `r`: flat colliders from their
/// row in `flats` (indexed by collider code), curved ones evaluated.
#[inline(always)]
fn eval(scene: &Scene, flats: &[Option<FlatCollider>], near: Near, x: &Vec3, r: f64) -> Option<(f64, Vec3, f64)> {
    match flats.get(near.collider.code() as usize) {
        Some(Some(f)) => Some((f.c(x, r), f.normal, f.friction)),
        _ => collider_contact(scene, near.collider, x, r).map(|c| (c.c, c.normal, c.friction)),
    }
}

impl Contacts {
    /// Forgets the last step and finds this step's pair and body candidates at the predicted
    /// positions `state.x` (`state.x_prev` holds the start of the step).
    pub(super) fn begin_step(&mut self, scene: &Scene, state: &State, w: &[f64], radius: &[f64]) {
        self.slots.clear();
        self.index.clear();
        self.pairs.clear();
        if radius.iter().any(|&r| r > 0.0) {
            // Candidates within one radius, so that pairs closing during the iterations are kept.
            let r: Vec<f64> = radius.iter().zip(w).map(|(r, w)| if *w > 0.0 { *r } else { 0.0 }).collect();
            let margin = r.iter().copied().fold(0.0, f64::max);
            self.pairs = solverlab_core::broadphase::pairs(&state.x, &r, margin, |_, _| false);
        }
        self.pair_lambda.clear();
        self.pair_lambda.resize(self.pairs.len(), 0.0);
        self.near.clear();
        self.near_embedded.clear();
        if scene.has_colliders() {
            let travel = (0..state.x.len())
                .filter(|&i| w[i] > 0.0)
                .map(|i| (state.x[i] - state.x_prev[i]).norm())
                .fold(1e-4, f64::max);
            let reach = 2.0 * travel;
            self.flats.clear();
            let codes = (0..6).map(ColliderRef::BoxFace).chain((0..scene.planes.len() as u32).map(ColliderRef::Plane));
            for collider in codes {
                let code = collider.code() as usize;
                if self.flats.len() <= code {
                    self.flats.resize(code + 1, None);
                }
                self.flats[code] = flat_collider(scene, collider);
            }
            for (i, x) in state.x.iter().enumerate().filter(|(i, _)| w[*i] > 0.0) {
                for_each_contact(scene, x, radius[i], reach, |c| {
                    self.near.push(Near { of: i as u32, collider: c.collider })
                });
            }
            for (e, point) in scene.embedded.iter().enumerate() {
                let p = point.position(&state.x);
                for_each_contact(scene, &p, 0.0, reach, |c| {
                    self.near_embedded.push(Near { of: e as u32, collider: c.collider })
                });
            }
        }
        self.bodies.clear();
        if !scene.bodies.is_empty() {
            // Within the step's largest travel of a body particle (at least 0.1 mm).
            let travel = scene
                .bodies
                .iter()
                .flat_map(|b| b.particles)
                .map(|i| (state.x[i] - state.x_prev[i]).norm())
                .fold(1e-4, f64::max);
            self.bodies = solverlab_core::bodies::contacts(&scene.bodies, &state.x, travel);
        }
    }

    fn slot(&mut self, id: u64, on: On, normal: Vec3, mu: f64) -> &mut Slot {
        let next = self.slots.len() as u32;
        let k = *self.index.entry(id).or_insert(next);
        if k == next {
            self.slots.push(Slot { id, on, normal, mu, lambda_n: 0.0, lambda_t: Vec3::zeros() });
        }
        let slot = &mut self.slots[k as usize];
        slot.normal = normal;
        slot.mu = mu;
        slot
    }

    /// One pass of normal projections (colliders, pairs, embedded points, bodies, in that order)
    /// then one of friction. Returns the deepest penetration met (m).
    pub(super) fn project(&mut self, scene: &Scene, state: &mut State, w: &[f64], radius: &[f64]) -> f64 {
        let mut worst: f64 = 0.0;
        // A particle's near colliders, each evaluated where the particle stood when its turn came
        // (the penetrating ones are its rows), then pushed out of one after the other.
        let mut k = 0;
        while k < self.near.len() {
            let i = self.near[k].of as usize;
            let start = state.x[i];
            while k < self.near.len() && self.near[k].of as usize == i {
                let near = self.near[k];
                k += 1;
                let Some((c, normal, mu)) = eval(scene, &self.flats, near, &start, radius[i]) else { continue };
                if c > 0.0 {
                    continue;
                }
                // Re-evaluated at the moving x: an earlier face may already have pushed it.
                let depth = -(c + normal.dot(&(state.x[i] - start)));
                if depth > 0.0 {
                    state.x[i] += normal * depth;
                    worst = worst.max(depth);
                    self.slot(contact_row_id(i, near.collider, 0), On::Particle(i), normal, mu).lambda_n +=
                        depth / w[i];
                }
            }
        }
        for (k, &(i, j)) in self.pairs.iter().enumerate() {
            let rest = radius[i] + radius[j];
            let r = stick_row(&state.x[i], &state.x[j], rest, Sense::AtLeast, false, Vec3::y);
            let dl = delta_lambda(r.c, w[i] + w[j], 0.0, 0.0, true);
            if dl > 0.0 {
                worst = worst.max(-r.c);
                state.x[i] -= r.normal * (w[i] * dl);
                state.x[j] += r.normal * (w[j] * dl);
                self.pair_lambda[k] += dl;
            }
        }
        let mut n = 0;
        while n < self.near_embedded.len() {
            let e = self.near_embedded[n].of as usize;
            let point = &scene.embedded[e];
            let count = point.count;
            let k: f64 = (0..count).map(|m| w[point.particles[m]] * point.weights[m] * point.weights[m]).sum();
            let p = point.position(&state.x);
            while n < self.near_embedded.len() && self.near_embedded[n].of as usize == e {
                let near = self.near_embedded[n];
                n += 1;
                if k == 0.0 {
                    continue;
                }
                let Some((c, normal, mu)) = eval(scene, &self.flats, near, &p, 0.0) else { continue };
                if c > 0.0 {
                    continue;
                }
                let depth = -normal.dot(&(point.position(&state.x) - p)) - c;
                if depth <= 0.0 {
                    continue;
                }
                worst = worst.max(depth);
                let dl = depth / k;
                for m in 0..count {
                    let i = point.particles[m];
                    state.x[i] += normal * (w[i] * point.weights[m] * dl);
                }
                self.slot(embedded_row_id(e, near.collider, 0), On::Embedded(e), normal, mu).lambda_n += dl;
            }
        }
        for b in 0..self.bodies.len() {
            let contact = self.bodies[b];
            let (pa, pb) = (scene.bodies[contact.a].particles, scene.bodies[contact.b].particles);
            let k: f64 =
                (0..4).map(|m| w[pa[m]] * contact.weights_a[m].powi(2) + w[pb[m]] * contact.weights_b[m].powi(2)).sum();
            // C at the current positions: an earlier row of this sweep (often the same contact
            // seen from the other body) may already have separated them.
            let p: Vec3 = (0..4).map(|m| state.x[pa[m]] * contact.weights_a[m]).sum();
            let q: Vec3 = (0..4).map(|m| state.x[pb[m]] * contact.weights_b[m]).sum();
            let c = contact.normal.dot(&(p - q));
            if c >= 0.0 || k == 0.0 {
                continue;
            }
            worst = worst.max(-c);
            let dl = -c / k;
            for m in 0..4 {
                state.x[pa[m]] += contact.normal * (w[pa[m]] * contact.weights_a[m] * dl);
                state.x[pb[m]] -= contact.normal * (w[pb[m]] * contact.weights_b[m] * dl);
            }
            let mu = scene.bodies[contact.a].friction.min(scene.bodies[contact.b].friction);
            let id = body_row_id(contact.a, contact.b, contact.feature, 0);
            self.slot(id, On::Body(b), contact.normal, mu).lambda_n += dl;
        }
        self.friction(scene, state, w);
        worst
    }

    /// Position-level Coulomb friction on every row that pushed in this step.
    fn friction(&mut self, scene: &Scene, state: &mut State, w: &[f64]) {
        for s in self.slots.iter_mut().filter(|s| s.mu > 0.0 && s.lambda_n > 0.0) {
            let (x, x_start) = (&mut state.x, &state.x_prev);
            s.lambda_t = match s.on {
                On::Particle(i) => {
                    coulomb_friction(x, x_start, w, &[i], &[1.0], &s.normal, s.lambda_n, s.mu, s.lambda_t)
                }
                On::Embedded(e) => {
                    let p = &scene.embedded[e];
                    let (ps, cs) = (&p.particles[..p.count], &p.weights[..p.count]);
                    coulomb_friction(x, x_start, w, ps, cs, &s.normal, s.lambda_n, s.mu, s.lambda_t)
                }
                On::Body(b) => {
                    let c = &self.bodies[b];
                    let (pa, pb) = (scene.bodies[c.a].particles, scene.bodies[c.b].particles);
                    let ps = [pa[0], pa[1], pa[2], pa[3], pb[0], pb[1], pb[2], pb[3]];
                    let (wa, wb) = (c.weights_a, c.weights_b);
                    let cs = [wa[0], wa[1], wa[2], wa[3], -wb[0], -wb[1], -wb[2], -wb[3]];
                    coulomb_friction(x, x_start, w, &ps, &cs, &s.normal, s.lambda_n, s.mu, s.lambda_t)
                }
            };
        }
    }

    /// The deepest penetration of the rows this solver tracks, at the current positions (m):
    /// every collider of every movable particle and embedded point, and the step's pairs and
    /// body contacts. The contact part of the stopping test.
    pub(super) fn penetration(&self, scene: &Scene, state: &State, w: &[f64], radius: &[f64]) -> f64 {
        let mut worst: f64 = 0.0;
        if scene.has_colliders() {
            for (i, x) in state.x.iter().enumerate().filter(|(i, _)| w[*i] > 0.0) {
                for_each_contact(scene, x, radius[i], 0.0, |c| worst = worst.max(-c.c));
            }
            for e in &scene.embedded {
                for_each_contact(scene, &e.position(&state.x), 0.0, 0.0, |c| worst = worst.max(-c.c));
            }
        }
        for &(i, j) in &self.pairs {
            worst = worst.max(radius[i] + radius[j] - (state.x[j] - state.x[i]).norm());
        }
        for c in &self.bodies {
            let (pa, pb) = (scene.bodies[c.a].particles, scene.bodies[c.b].particles);
            let p: Vec3 = (0..4).map(|m| state.x[pa[m]] * c.weights_a[m]).sum();
            let q: Vec3 = (0..4).map(|m| state.x[pb[m]] * c.weights_b[m]).sum();
            worst = worst.max(-c.normal.dot(&(p - q)));
        }
        worst
    }

    /// The multiplier of contact row `id` (N·s²), or 0: the normal push, or the friction
    /// multiplier along the row's first or second tangent ([`tangents`]).
    pub(super) fn multiplier(&self, id: u64) -> f64 {
        let dir = id & 3;
        if let Some(&k) = self.index.get(&(id & !3)) {
            let s = &self.slots[k as usize];
            let (t1, t2) = tangents(&s.normal);
            return match dir {
                0 => s.lambda_n,
                1 => s.lambda_t.dot(&t1),
                _ => s.lambda_t.dot(&t2),
            };
        }
        self.pairs.iter().zip(&self.pair_lambda).find(|((i, j), _)| pair_row_id(*i, *j) == id).map_or(0.0, |(_, l)| *l)
    }

    /// Every nonzero contact multiplier, appended to `out`.
    pub(super) fn multipliers(&self, out: &mut Vec<(u64, f64)>) {
        for s in &self.slots {
            out.push((s.id, s.lambda_n));
            if s.lambda_t != Vec3::zeros() {
                let (t1, t2) = tangents(&s.normal);
                out.push((s.id | 1, s.lambda_t.dot(&t1)));
                out.push((s.id | 2, s.lambda_t.dot(&t2)));
            }
        }
        for (&(i, j), &l) in self.pairs.iter().zip(&self.pair_lambda) {
            if l != 0.0 {
                out.push((pair_row_id(i, j), l));
            }
        }
    }
}
