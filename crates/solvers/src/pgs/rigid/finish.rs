//! The end of a step (steps 7–9 of [`super`]): positions, the nonlinear Gauss-Seidel position
//! pass, relax sweeps, restitution, sleeping, and the forces of the step.

use super::*;

impl RigidSi {
    /// The relax sweeps at the poses set up (`relax_separation = "poses"`), the positions moved:
    /// the poses, the relax biases `max(s/h, 0)` of the awake points outside the batches at
    /// them (the batches' are measured as the sweeps visit them, [`sweep::AtPoses`]) and their
    /// largest penetration; and, when the frame's contacts carry on to a next substep, which
    /// starts at these poses, its soft rows (set up on the batches by the sweeps, which
    /// [`RigidSi::advance_batches`] then leaves).
    fn relax_at(&mut self, st: &[RigidState], cfg: &PgsConfig, h: f64) {
        fill(&mut self.poses, st.len(), par_min() / 4, |k| (st[k].x, st[k].q));
        let carries_on = cfg.contacts_per_frame && !self.last_substep && !self.batches.is_empty() && !cfg.block;
        #[cfg(test)]
        let carries_on = carries_on && !self.ahead_off;
        let ahead = carries_on.then(|| {
            let between_bodies = soft(cfg.soft_hertz(h).0, cfg.contact_damping_ratio, h);
            let against_fixed = soft(cfg.static_soft_hertz(h), cfg.contact_damping_ratio, h);
            ((between_bodies, against_fixed), cfg.max_push)
        });
        self.relax_at_poses = Some((h, ahead));
        self.batches_ahead = ahead.is_some();
        #[cfg(test)]
        {
            self.ahead_count += usize::from(ahead.is_some());
        }
        let (poses, carried) = (&self.poses, &self.carried);
        let at_poses = |p: &mut Point, more: &Carried| {
            let s = more.separation(p, |k| poses[k]);
            p.relax_bias = (s / h).max(0.0);
            -s
        };
        // The awake points outside the batches: every point on all threads when every one is
        // awake and none batched, else those of the awake manifolds left out of the batches
        // (few, with batches) on this one. (The largest of maxima: the same number in any
        // grouping.)
        // (With every manifold awake and some batched, the points outside the batches are
        // found by their marks on all threads: the loop over the manifolds below read each
        // manifold's first cache line on the calling thread, 0.9 % of the 4,095-box pyramid's
        // two-thread frame.)
        self.end_worst = if self.batched_points == 0 && self.order.len() == self.manifolds.len() {
            let rows = self.points.par_iter_mut().zip(carried.par_iter()).with_min_len(par_min());
            rows.map(|(p, more)| at_poses(p, more)).reduce(|| 0.0, f64::max)
        } else if self.all_batched() {
            0.0
        } else if self.order.len() == self.manifolds.len() {
            let rows = self.points.par_iter_mut().zip(carried.par_iter().zip(self.batched.par_iter()));
            let loose = rows.with_min_len(par_min()).filter(|(_, (_, &batched))| !batched);
            loose.map(|(p, (more, _))| at_poses(p, more)).reduce(|| 0.0, f64::max)
        } else {
            let mut worst = 0.0_f64;
            for &i in &self.order {
                let (start, end) = (self.manifolds[i].start, self.manifolds[i].end);
                if self.batched[start] {
                    continue;
                }
                for (p, more) in self.points[start..end].iter_mut().zip(&carried[start..end]) {
                    worst = worst.max(at_poses(p, more));
                }
            }
            worst
        };
    }

    /// Steps 6–7, sleeping, and the bookkeeping for the next warm start.
    pub(in crate::pgs) fn finish(&mut self, scene: &Scene, st: &mut [RigidState], cfg: &PgsConfig, h: f64) {
        // (Every awake point's `relax_bias` is still fresh from the last stopping test when all the
        // manifolds are awake and every group was measured after its last sweep.)
        // (Relax sweeps at the poses measure their own: after the positions move, below.)
        let at_poses = cfg.relax_separation == RelaxSeparation::Poses && cfg.relax_iterations > 0;
        let fresh = at_poses || self.order.len() == self.manifolds.len() && self.fresh_end.iter().all(|&f| f);
        let mut points = std::mem::take(&mut self.points);
        if !fresh && !self.all_batched() {
            let (this, st): (&Self, &[RigidState]) = (self, st);
            points.par_iter_mut().zip(self.batched.par_iter()).with_min_len(par_min()).for_each(|(p, &batched)| {
                if !batched {
                    p.relax_bias = (this.end_separation(st, p, h) / h).max(0.0);
                }
            });
        }
        self.points = points;
        if !fresh && !self.batches.is_empty() {
            self.end_batches(st, h);
        }
        let (vp, wp, rotation) = (&self.vp, &self.wp, cfg.rotation);
        let max_v = if cfg.max_speed > 0.0 { cfg.max_speed } else { f64::INFINITY };
        let max_w = if cfg.max_frame_turn > 0.0 { cfg.max_frame_turn / self.frame_h } else { f64::INFINITY };
        st.par_iter_mut().enumerate().zip(scene.rigid.par_iter()).with_min_len(par_min() / 4).for_each(
            |((k, s), b)| {
                if b.is_fixed() || s.asleep {
                    return;
                }
                // Speed caps (Rapier's), on the velocities the positions move with and keep.
                if s.v.norm_squared() > max_v * max_v {
                    s.v *= max_v / s.v.norm();
                }
                if s.w.norm_squared() > max_w * max_w {
                    s.w *= max_w / s.w.norm();
                }
                s.x += (s.v + vp[k]) * h;
                match rotation {
                    Rotation::Rk4 => (s.q, s.w) = torque_free_drift(b, &s.q, &s.w, h),
                    // (The gyroscopic term acted before the solve.)
                    Rotation::Explicit | Rotation::Implicit => s.q = rotate_linearised(&s.q, &s.w, h),
                }
                if wp[k] != Vec3::zeros() {
                    s.q = rotate(&s.q, &wp[k], h);
                }
            },
        );
        if cfg.position_iterations > 0 {
            // (The position pass reads the points' separations.)
            self.store_batches();
        }
        for _ in 0..cfg.position_iterations {
            self.position_pass(scene, st, cfg, h);
        }
        if at_poses {
            self.relax_at(st, cfg, h);
        }
        let friction = cfg.friction_pass.sweeps(cfg.relax_iterations).1;
        for _ in 0..cfg.relax_iterations {
            for g in 0..self.groups.len() {
                self.sweep(g, st, cfg.omega, Pass::Relax, friction);
            }
        }
        if at_poses {
            self.relax_at_poses = None;
            // (The batches' own are read when asked for, `end_penetration_above`, unless the
            // restitution pass below hands the batches' state over and takes it back.)
            if self.bouncy {
                self.end_worst = self.batch_state.iter().map(|s| s.end_worst).fold(self.end_worst, f64::max);
            }
        }
        // Each awake joint's impulses, by joint index (a sleeping joint keeps its own).
        let (slot, joints) = (&self.joint_slot, &self.joints);
        self.warm_joints.par_iter_mut().enumerate().with_min_len(par_min() / 4).for_each(|(k, warm)| {
            if let Some(rows) = joints.get(slot[k]) {
                *warm = Some(rows.impulses());
            }
        });
        // (No contact that bounces: no pass over them. The pass works on the points: the
        // batches hand their state over and take it back.)
        let bouncy = self.bouncy;
        if bouncy {
            self.store_batches();
        }
        for o in (0..self.order.len()).filter(|_| bouncy) {
            let (start, end) = (self.manifolds[self.order[o]].start, self.manifolds[self.order[o]].end);
            for k in start..end {
                let (q, more) = (&self.points[k], self.carried[k]);
                if !(more.e > 0.0 && more.vn0 < -cfg.restitution_threshold && q.ln > 0.0) {
                    continue;
                }
                let p = *q;
                let vn = p.n.dot(&self.vrel(st, &p, Velocity::Real));
                let new = (p.ln - p.mn * (vn + more.e * more.vn0)).max(0.0);
                self.points[k].ln = new;
                self.apply(st, &p, p.n * (new - p.ln), Velocity::Real);
            }
        }
        if bouncy && !self.batches.is_empty() {
            self.load_batches();
        }
        if cfg.sleep_time > 0.0 {
            self.sleep(scene, st, cfg, h);
        }
        // The impulses by pair for the next step that finds its own contacts: this one's next
        // step, or the next frame's first when contacts are carried through the substeps.
        // The forces reported are those of this step, or of the frame's last substep when the
        // contacts are carried through the frame (the runner reads them after the frame).
        let keep = self.carried_for <= 1 || self.last_substep;
        if !keep {
            return;
        }
        // (The friction and twist impulses are read from the manifolds; the batched points'
        // normal impulses go into the kept list from their batches, below.)
        self.store_batch_friction();
        // Each manifold and point on its own (the same lists on any number of threads).
        let (contacts, points) = (&self.contacts, &self.points);
        let mut pairs = std::mem::take(&mut self.warm.pairs);
        let mut warm = std::mem::take(&mut self.warm.points);
        let min = par_min() / 4;
        let manifolds = &self.manifolds;
        // The pairs in the order of the manifolds. A coloured step's are kept so
        // (`WarmMap::keep_by_run`): the next step reads them by manifold if its sort by colour
        // finds the same pairs, else puts them back in the narrow phase's order through the
        // sort's placement and sorts them then (`WarmMap::ready`). (Filled in the narrow
        // phase's order and sorted here, each step read the manifolds out of order and sorted
        // the pairs: 1.3 % of the 4,095-box pyramid's run.) Any other step's are in the narrow
        // phase's order, grouped by first body, for `WarmMap::sort`.
        let placed = &self.sort_scratch.placed;
        let coloured = placed.len() == manifolds.len();
        let by_run = coloured;
        // (Tests: a coloured step's pairs in the narrow phase's order, sorted, as before.)
        #[cfg(test)]
        let by_run = by_run && !self.warm.by_run_off;
        let in_narrow_order = coloured && !by_run;
        fill(&mut pairs, manifolds.len(), min, |r| {
            let m = &manifolds[if in_narrow_order { placed[r] as usize } else { r }];
            let c = &contacts[m.start];
            let friction = m.t1 * m.lt1 + m.t2 * m.lt2;
            WarmPair { key: (c.a, c.b), points: (m.start, m.end), friction, twist: m.l_twist }
        });
        let batched = &self.batched;
        fill(&mut warm, contacts.len(), par_min(), |k| {
            (contacts[k].point.feature, contacts[k].point.point, if batched[k] { 0.0 } else { points[k].ln })
        });
        self.batch_impulses_into(&mut warm);
        (self.warm.pairs, self.warm.points) = (pairs, warm);
        if by_run {
            self.warm.keep_by_run(&self.sort_scratch.placed, self.sort_scratch.calls);
        } else {
            self.warm.sort(st.len());
        }
        // The forces are computed when asked for ([`RigidSi::forces`]), from this step's
        // impulses, which stand until the next step.
        self.forces_h = Some(h);
    }

    /// One nonlinear Gauss-Seidel position sweep (Box2D v2.4's position solver): first every
    /// awake joint ([`JointRows::correct_positions`]), then the awake contacts: each point's current separation `s = s₀ + n·(Δp_a − Δp_b)`, with `Δp` how far
    /// each body has carried its contact point since the start of the step (the normal held
    /// fixed), is pushed towards `−slop` by `C = clamp(β·(s + slop), −0.2 m, 0)` (Box2D's
    /// largest linear correction), as a position impulse `−C/K` applied to the poses directly
    /// (velocities untouched).
    fn position_pass(&mut self, scene: &Scene, st: &mut [RigidState], cfg: &PgsConfig, h: f64) {
        let mut rows = JointRows::default();
        for o in 0..self.joint_order.len() {
            let k = self.joint_order[o];
            rows.rebuild(&scene.joints[k], &self.frames[k], st, &self.inv_m, &self.inv_i, cfg, h);
            rows.correct_positions(st, &self.inv_m, &self.inv_i);
        }
        let max_correction = 0.2;
        for o in 0..self.order.len() {
            let (start, end) = (self.manifolds[self.order[o]].start, self.manifolds[self.order[o]].end);
            for k in start..end {
                let (p, more) = (self.points[k], self.carried[k]);
                if p.mn == 0.0 {
                    continue;
                }
                let (a, b) = (p.a, p.b);
                let ra = st[a].q.transform_vector(&more.la);
                let moved_a = st[a].x + ra - more.p0;
                let (rb, moved_b) = match b {
                    Some(k) => {
                        let rb = st[k].q.transform_vector(&more.lb);
                        (rb, st[k].x + rb - more.p0)
                    }
                    None => (Vec3::zeros(), Vec3::zeros()),
                };
                let s = p.s + p.n.dot(&(moved_a - moved_b));
                let c = (cfg.baumgarte * (s + cfg.slop)).clamp(-max_correction, 0.0);
                if c == 0.0 {
                    continue;
                }
                // The effective mass at the current arms.
                let ca = ra.cross(&p.n);
                let mut kk = self.inv_m[a] + ca.dot(&(self.inv_i[a] * ca));
                if let Some(k) = b {
                    let cb = rb.cross(&p.n);
                    kk += self.inv_m[k] + cb.dot(&(self.inv_i[k] * cb));
                }
                if kk <= 0.0 {
                    continue;
                }
                let impulse = p.n * (-c / kk);
                st[a].x += impulse * self.inv_m[a];
                st[a].q = rotate(&st[a].q, &(self.inv_i[a] * ra.cross(&impulse)), 1.0);
                if let Some(k) = b {
                    st[k].x -= impulse * self.inv_m[k];
                    st[k].q = rotate(&st[k].q, &-(self.inv_i[k] * rb.cross(&impulse)), 1.0);
                }
            }
        }
    }

    /// An awake island whose every body moves slower than `sleep_speed` and turns slower than
    /// `sleep_spin` adds `h` to its rest time; once that reaches `sleep_time` the island sleeps
    /// (velocities zeroed). A body with no contacts is an island of its own.
    fn sleep(&mut self, scene: &Scene, st: &mut [RigidState], cfg: &PgsConfig, h: f64) {
        let count = self.awake.len();
        let mut calm = vec![true; count];
        for (k, s) in st.iter().enumerate() {
            let i = self.island[k];
            if i != usize::MAX && (s.v.norm() > cfg.sleep_speed || s.w.norm() > cfg.sleep_spin) {
                calm[i] = false;
            }
        }
        let mut rest = vec![f64::INFINITY; count];
        for (k, s) in st.iter_mut().enumerate() {
            let i = self.island[k];
            if i == usize::MAX || scene.rigid[k].is_fixed() || s.asleep {
                continue;
            }
            s.rest_time = if calm[i] { s.rest_time + h } else { 0.0 };
            rest[i] = rest[i].min(s.rest_time);
        }
        for (k, s) in st.iter_mut().enumerate() {
            let i = self.island[k];
            if i != usize::MAX && rest[i] >= cfg.sleep_time && rest[i].is_finite() {
                s.asleep = true;
                s.v = Vec3::zeros();
                s.w = Vec3::zeros();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `frames` frames of `scene` under `preset` with the solver first changed by `set`: the
    /// bodies' final states (as text, compared bit for bit) and what `read` takes from the
    /// solver.
    fn run<T>(
        scene: &solverlab_core::Scene,
        preset: &str,
        frames: usize,
        set: impl FnOnce(&mut crate::PgsSolver),
        read: impl FnOnce(&crate::PgsSolver) -> T,
    ) -> (String, T) {
        let cfg = crate::pgs::config::preset_config(preset);
        let mut solver = crate::PgsSolver::new(cfg.clone(), preset).unwrap();
        set(&mut solver);
        let mut sim = solverlab_core::sim::Simulation::new(scene, &mut solver, scene.dt, cfg.substeps).unwrap();
        for _ in 0..frames {
            sim.step_frame(&mut solverlab_core::NullObserver).unwrap();
        }
        let states = format!("{:?}", sim.state.rigid);
        drop(sim);
        (states, read(&solver))
    }

    /// The next substep's rows that a relax sweep at the poses sets up on the batches as it
    /// visits them (`relax_separation = "poses"`) are those [`RigidSi::advance_batches`] makes
    /// in its own pass at the next substep's start: the same states bit for bit, on the pyramid
    /// (pairs in 2 × 2 blocks, `tgs-soft`) and with the points one after the other
    /// (`soft-step`), whose relax sweeps run at the poses in every substep but the last.
    #[test]
    fn rows_set_up_ahead_are_those_of_the_next_substep() {
        let scene = solverlab_scenes::resolve("rigid-pyramid", &["base=8".to_string()]).unwrap();
        for preset in ["tgs-soft", "soft-step"] {
            let cfg = crate::pgs::config::preset_config(preset);
            assert_eq!(cfg.relax_separation, RelaxSeparation::Poses, "{preset}");
            let run = |ahead: bool| run(&scene, preset, 40, |s| s.rigid.ahead_off = !ahead, |s| s.rigid.ahead_count);
            let (ahead, advanced) = (run(true), run(false));
            // (Three substeps of each of the 40 frames carry on to a next one.)
            assert_eq!((ahead.1, advanced.1), (120, 0), "{preset}: relax sweeps that set up the next substep");
            assert!(ahead.0 == advanced.0, "{preset}: the states part");
        }
    }

    /// The impulses a coloured step keeps by manifold (`WarmMap::keep_by_run`) warm-start the
    /// next step as those kept by pair and sorted did: read by manifold where the next step's
    /// sort by colour finds the same pairs, put back and sorted where it does not (both happen
    /// on a pyramid that settles and a stack that falls onto the ground), the same states bit
    /// for bit.
    #[test]
    fn impulses_kept_by_manifold_warm_start_as_those_kept_by_pair() {
        for (name, set) in [("rigid-pyramid", "base=8"), ("rigid-stack", "gap=0.05")] {
            let scene = solverlab_scenes::resolve(name, &[set.to_string()]).unwrap();
            for preset in ["tgs-soft", "soft-step"] {
                let run = |by_run: bool| {
                    run(&scene, preset, 60, |s| s.rigid.warm.by_run_off = !by_run, |s| s.rigid.warm.counts)
                };
                let (by_run, by_pair) = (run(true), run(false));
                assert_eq!(by_pair.1, (0, 0), "{name}, {preset}: nothing kept by manifold");
                let (kept, sorted) = by_run.1;
                // (The settling pyramid keeps its pairs from its first frame on; the falling
                // boxes' pairs change as they land.)
                let changes = name == "rigid-stack";
                assert!(
                    kept > 10 && (sorted > 0) == changes,
                    "{name}, {preset}: read by manifold {kept}, sorted {sorted}"
                );
                assert!(by_run.0 == by_pair.0, "{name}, {preset}: the states part");
            }
        }
    }
}
