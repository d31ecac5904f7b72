//! A later substep's start (step 1 of [`super`] when the contacts are carried through a frame,
//! `contacts_per_frame`): the frame's points moved on with the bodies, the joints' rows anew,
//! the islands again where they may have changed, and the warm start.

use super::*;
use crate::common::order::Order;

impl RigidSi {
    /// A later substep of a frame whose contacts were found in its first
    /// (`contacts_per_frame`): the same points, manifolds and rows, each point's separation
    /// moved on by how far the bodies carried its two ends, `s = s₀ + n·(Δp_a − Δp_b)` (the
    /// normal, the arms and the effective masses held at the frame's start), and its bias
    /// recomputed from it; the joints' rows anew; the islands again (one may have fallen asleep);
    /// and the impulses of the last substep, times `warm_start`, applied as the warm start.
    pub(in crate::pgs) fn advance(&mut self, scene: &Scene, st: &mut [RigidState], cfg: &PgsConfig, h: f64, time: f64) {
        let before = std::mem::take(&mut self.active);
        self.active.extend((0..scene.joints.len()).map(|j| scene.joint_active(j, time)));
        // The same contacts and joints, and nothing asleep or falling asleep: the same islands,
        // order and colours.
        let same_islands = self.active == before && cfg.sleep_time == 0.0;
        // The world inverse inertias at this substep's poses, for what reads them within the
        // substep: the joints' rows and sweeps, the manifolds' whole blocks (`block`), the
        // restitution and position passes. The contact rows keep the frame's (in their
        // prepared `I⁻¹J`), so a step with none of those skips them: the same numbers.
        let read = !scene.joints.is_empty() || cfg.block || self.bouncy || cfg.position_iterations > 0;
        if read {
            self.inv_i
                .par_iter_mut()
                .zip(scene.rigid.par_iter().zip(st.par_iter()))
                .with_min_len(par_min() / 4)
                .for_each(|(inv_i, (b, s))| *inv_i = b.inv_inertia_world(&s.q));
        }
        // (Only a split sweep writes pseudo velocities, and it sets `pseudo`: otherwise they are
        // still zero.)
        if self.pseudo {
            self.vp.iter_mut().for_each(|v| *v = Vec3::zeros());
            self.wp.iter_mut().for_each(|v| *v = Vec3::zeros());
        }
        self.pseudo = false;
        let between_bodies = soft(cfg.soft_hertz(h).0, cfg.contact_damping_ratio, h);
        let against_fixed = soft(cfg.static_soft_hertz(h), cfg.contact_damping_ratio, h);
        let st_read: &[RigidState] = st;
        // (The contacts' separations are read after the frame, with the forces: written in its
        // last substep only.)
        let last = self.last_substep;
        let loose = if self.all_batched() { 0 } else { self.points.len() };
        let rows = self.points[..loose].par_iter_mut().zip(self.carried.par_iter().zip(self.batched.par_iter()));
        rows.zip(self.contacts.par_iter_mut()).with_min_len(par_min()).for_each(|((p, (more, &batched)), c)| {
            // (A batched point's state is moved on in its batch, below.)
            if batched {
                return;
            }
            p.s = more.separation(p, |k| (st_read[k].x, st_read[k].q));
            if last {
                c.point.separation = p.s;
            }
            (p.bias, p.mass_scale, p.impulse_scale) = if p.s > 0.0 {
                (p.s / h, 1.0, 0.0)
            } else {
                // As in `prepare`: against a fixed body or a world collider, `static_contact_hertz`.
                let fixed = p.row.ima == 0.0 || p.row.imb == 0.0;
                let (bias_rate, soft_mass, soft_impulse) = if fixed { against_fixed } else { between_bodies };
                ((bias_rate * p.s).max(-cfg.max_push), soft_mass, soft_impulse)
            };
            // (The rows' effective masses are the frame's: only the mass scale changed. A scale
            // of 1, `1/(mn·1)`, is the unscaled `1/mn` without the division.)
            if p.mass_scale == 1.0 {
                p.inv_mn[0] = p.inv_mn[1];
            } else {
                p.set_inv_mn_scaled();
            }
        });
        self.advance_batches(st, h, (between_bodies, against_fixed), cfg.max_push, last);
        if !same_islands {
            // (The rows back in the points and manifolds, for the batches built again.)
            if self.from_contacts {
                self.store_full();
            } else {
                self.store_batches();
            }
            for m in self.manifolds.iter_mut() {
                m.island = m.body;
            }
            self.build_islands(scene, st, cfg);
        }
        self.done.iter_mut().for_each(|d| *d = false);
        self.group_violation.iter_mut().for_each(|v| *v = 0.0);
        self.fresh_end.iter_mut().for_each(|f| *f = false);
        self.joint_rows(scene, st, cfg, h);
        self.warm_start_joints(st, cfg);
        if cfg.warm_start == 0.0 {
            for p in self.points.iter_mut() {
                p.ln = 0.0;
            }
            for m in self.manifolds.iter_mut() {
                (m.lt1, m.lt2, m.l_twist) = (0.0, 0.0, 0.0);
            }
            self.clear_batch_impulses();
            return;
        }
        // Sleeping islands' manifolds are not in `order`: they keep their impulses, unapplied.
        // The impulses act through the rows' prepared `M⁻¹Jᵀ`, as in the sweeps.
        if cfg.rigid_order == Order::Colored {
            self.colored_warm(st, cfg.warm_start);
            return;
        }
        let masses = (&self.inv_m[..], &self.inv_i[..]);
        let visit = sweep::Visit::new(masses, 1.0, Pass::Biased, false, self.cone, &self.couplings);
        for &i in &self.order {
            let m = &mut self.manifolds[i];
            visit.warm_manifold(st, m, &mut self.points[m.start..m.end], cfg.warm_start);
        }
    }
}
