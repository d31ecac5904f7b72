//! The start of a step (steps 1–4 of [`super`]): contacts and their rows, each manifold's
//! friction rows and normal block, the joints' rows, islands and the groups of the sweeps, and
//! the warm start.

use super::sweep::apply_impulse;
use super::*;
use crate::common::order::Order;

impl RigidSi {
    /// The block of manifold `m` (see [`Coupling`]).
    fn block_matrices(&self, m: &Manifold, out: &mut Coupling) {
        let pts = &self.points[m.start..m.end];
        let c = pts.len();
        let mut a = Matrix4::identity();
        for i in 0..c {
            for j in 0..c {
                let (p, q) = (&pts[i], &pts[j]);
                a[(i, j)] = self.cross_coupling(p.a, p.b, &p.ra, &p.rb, &p.n, &q.ra, &q.rb, &q.n);
            }
        }
        let pinv = pseudo_inverse(&a, c);
        for i in 0..4 {
            for j in 0..4 {
                out.a[4 * i + j] = a[(i, j)];
                out.pinv[4 * i + j] = pinv[(i, j)];
            }
        }
    }

    /// The pairs of manifold `m`'s normal rows (see [`Manifold::pairs`]): `(0, 1)` and, with four
    /// points, `(2, 3)`.
    fn pair_couplings(&self, m: &mut Manifold) {
        let pts = &self.points[m.start..m.end];
        m.paired = true;
        for (k, pair) in pts.chunks_exact(2).enumerate() {
            let (p, q) = (&pair[0], &pair[1]);
            let k12 = p.row.coupling(&q.row, &p.n, &q.n);
            let (k11, k22) = (p.row.coupling(&p.row, &p.n, &p.n), q.row.coupling(&q.row, &q.n, &q.n));
            let block = p.mn > 0.0 && q.mn > 0.0 && k11 * k22 - k12 * k12 > 0.01 * k11 * k22;
            m.pairs[k] = Pair { k11, k12, k22, block };
        }
    }

    /// The friction rows of the manifold `points[start..end]` (all of one pair), written over
    /// `out` (in place: a manifold is hundreds of bytes).
    fn manifold(&self, st: &[RigidState], start: usize, end: usize, mu: f64, out: &mut Manifold) {
        let pts = &self.points[start..end];
        let (a, b) = (pts[0].a, pts[0].b);
        let count = pts.len() as f64;
        let centre = pts.iter().map(|p| p.ra + st[a].x).sum::<Vec3>() / count;
        let n = pts.iter().map(|p| p.n).sum::<Vec3>().normalize();
        let t1 = if n.x.abs() < 0.57 { n.cross(&Vec3::x()) } else { n.cross(&Vec3::y()) }.normalize();
        let t2 = n.cross(&t1);
        let ra = centre - st[a].x;
        let rb = b.map_or(Vec3::zeros(), |k| centre - st[k].x);
        let rows_t = [self.jacobian_row(a, b, &ra, &rb, &t1), self.jacobian_row(a, b, &ra, &rb, &t2)];
        let k11 = rows_t[0].coupling(&rows_t[0], &t1, &t1);
        let k12 = rows_t[0].coupling(&rows_t[1], &t1, &t2);
        let k22 = rows_t[1].coupling(&rows_t[1], &t2, &t2);
        let det = k11 * k22 - k12 * k12;
        let mt = if det > 1e-12 * (k11 * k22).max(f64::MIN_POSITIVE) {
            [k22 / det, -k12 / det, -k12 / det, k11 / det]
        } else {
            [0.0; 4]
        };
        let (twist_a, twist_b) = (self.inv_i[a] * n, b.map_or(Vec3::zeros(), |k| self.inv_i[k] * n));
        let kt = n.dot(&twist_a) + b.map_or(0.0, |_| n.dot(&twist_b));
        let radius = pts.iter().map(|p| (p.ra + st[a].x - centre).norm()).sum::<f64>() / count;
        *out = Manifold {
            rows_t,
            twist_a,
            twist_b,
            start,
            end,
            mu,
            n,
            t1,
            t2,
            ra,
            rb,
            mt,
            m_twist: if kt > 0.0 { 1.0 / kt } else { 0.0 },
            radius,
            ..Manifold::default()
        };
    }

    /// Steps 1–4: contacts, rows and the warm start; with `frame_substeps > 1` the contacts
    /// are found with the margin of the whole frame, to be carried through its substeps
    /// ([`RigidSi::advance`]).
    pub(in crate::pgs) fn prepare(
        &mut self,
        scene: &Scene,
        st: &mut [RigidState],
        cfg: &PgsConfig,
        h: f64,
        time: f64,
        frame_substeps: u32,
    ) {
        self.carried_for = frame_substeps;
        self.forces_h = None;
        // (The rows are set up anew.)
        self.batches_ahead = false;
        self.lanes = cfg.lanes;
        self.active.clear();
        self.active.extend((0..scene.joints.len()).map(|j| scene.joint_active(j, time)));
        let n = scene.rigid.len();
        self.cone = cfg.friction_cone;
        let bodies: &[RigidState] = st;
        fill(&mut self.inv_m, n, par_min(), |k| scene.rigid[k].inv_mass);
        fill(&mut self.inv_i, n, par_min() / 4, |k| scene.rigid[k].inv_inertia_world(&bodies[k].q));
        self.vp.clear();
        self.vp.resize(n, Vec3::zeros());
        self.pseudo = false;
        self.wp.clear();
        self.wp.resize(n, Vec3::zeros());
        // Twice a step's travel; for contacts carried through a frame, the frame's travel and
        // one substep's more.
        let steps = if frame_substeps > 1 { f64::from(frame_substeps) + 1.0 } else { 2.0 };
        let (base, time) = (4.0 * cfg.slop, steps * h);
        let margin = cfg.speculative_margin.search(&scene.rigid, st, base, time);
        let mut contacts = std::mem::take(&mut self.contacts);
        // The narrow phase leaves its contacts in parts (see `rigid_contacts_parts`).
        self.contact_cache.configure(cfg.contact_recycling, cfg.sat_cache.then_some(cfg.slop));
        let cache = (cfg.contact_recycling || cfg.sat_cache).then_some(&mut self.contact_cache);
        let found = solverlab_core::rigid::rigid_contacts_parts(scene, st, margin, &mut self.contact_scratch, cache);
        cfg.speculative_margin.keep(&mut self.contact_scratch.parts[..found], &scene.rigid, st, base, time);
        let parts = &mut self.contact_scratch.parts[..found];
        // (The narrow phase's record of the pairs' runs holds unless the margin's rule dropped
        // contacts from the parts.)
        let recorded_runs = (cfg.speculative_margin != crate::SpeculativeMargin::Relative)
            .then_some(&self.contact_scratch.runs[..found]);
        // The manifolds: the runs of one pair's points (the same runs after any reordering
        // within them); with `block_pairs`, each ordered by its diagonals. (Coloured, the sort
        // by colour finds both as it gathers the parts into its order; otherwise the parts are
        // joined.)
        // (`runs` borrows the sort's kept lists, so they are taken out of `self` until the
        // manifolds are built from them, and must be back before `build_islands`, whose
        // colouring takes them in turn.)
        let mut sort = std::mem::take(&mut self.sort_scratch);
        let natural;
        let runs = if cfg.rigid_order == Order::Colored {
            sort.keep_colors = cfg.keep_colors;
            coloring::sort_contacts_by_color(
                scene,
                parts,
                recorded_runs,
                &mut contacts,
                &mut sort,
                cfg.block_pairs,
                cfg.static_colors,
            );
            sort.runs()
        } else {
            solverlab_core::rigid::join_parts(parts, &mut contacts);
            sort.placed.clear();
            natural = pair_runs(&contacts);
            if cfg.block_pairs {
                pair_diagonals(&mut contacts, &natural);
            }
            &natural[..]
        };
        // The last step's impulses, read by manifold or by pair (see `WarmMap::ready`).
        self.warm.ready(n, sort.calls, cfg.rigid_order == Order::Colored && sort.same, runs.len());
        self.bouncy = contacts.par_iter().with_min_len(par_min()).any(|c| c.restitution > 0.0);
        let between_bodies = soft(cfg.soft_hertz(h).0, cfg.contact_damping_ratio, h);
        let against_fixed = soft(cfg.static_soft_hertz(h), cfg.contact_damping_ratio, h);
        // The batches built on the lanes straight from the contacts, where the passes outside
        // them need none of the batched rows (no restitution or position pass, no sleeping,
        // soft rows that keep a mass scale: see `lanes::build`); the other rows below.
        self.points.resize(contacts.len(), Point::default());
        self.carried.resize(contacts.len(), Carried::default());
        self.manifolds.resize(runs.len(), Manifold::default());
        self.batched.clear();
        self.batched.resize(contacts.len(), false);
        self.batched_points = 0;
        self.contacts = contacts;
        self.from_contacts = false;
        let split = cfg.split_impulse && cfg.feedback == Feedback::Baumgarte;
        let on_lanes = cfg.rigid_order == Order::Colored
            && cfg.lanes
            && !cfg.block
            && !split
            && cfg.feedback == Feedback::Soft
            && !self.bouncy
            && cfg.position_iterations == 0
            && cfg.sleep_time == 0.0
            && between_bodies.1 > 0.0
            && against_fixed.1 > 0.0
            && sort.sorted_by_color(runs.len())
            && st.iter().all(|s| !s.asleep);
        #[cfg(test)]
        let on_lanes = on_lanes && !self.lane_build_off;
        if on_lanes {
            let softness = (between_bodies, against_fixed);
            let warm = (cfg.warm_start, (4.0 * cfg.slop).powi(2));
            let paired = cfg.block_pairs;
            self.batches_from_contacts(scene, st, runs, |i| sort.run_color(i), softness, h, cfg.max_push, warm, paired);
        }
        let contacts = std::mem::take(&mut self.contacts);
        let mut points = std::mem::take(&mut self.points);
        let mut carried = std::mem::take(&mut self.carried);
        let this: &Self = self;
        let st_read: &[RigidState] = st;
        let point = |((c, &batched), (p, more)): ((&RigidContact, &bool), (&mut Point, &mut Carried))| {
            // (A batched point's row is its batch's.)
            if batched {
                return;
            }
            let st = st_read;
            let b = match c.b {
                Other::Body(k) => Some(k),
                Other::Collider(_) => None,
            };
            let n = c.point.normal;
            // A recycled contact's arms are those frozen when it was found.
            let [ra, rb] =
                c.arms.unwrap_or([c.point.point - st[c.a].x, b.map_or(Vec3::zeros(), |k| c.point.point - st[k].x)]);
            let rb = if b.is_some() { rb } else { Vec3::zeros() };
            let s = c.point.separation;
            let row = this.jacobian_row(c.a, b, &ra, &rb, &n);
            let mut s0 = s;
            if c.arms.is_some() {
                // The separation a later substep measures, `s₀ + n·(Δp_a − Δp_b)`, follows the
                // arms' ends from the frame's start, which need not meet at the point when the
                // arms are frozen: `s₀` is rebased so that it starts at `s`.
                let end_b = b.map_or(c.point.point, |k| st[k].x + rb);
                s0 = s - n.dot(&((st[c.a].x + ra) - end_b));
            }
            let (mut bias, mut mass_scale, mut impulse_scale, mut split_bias) = (0.0, 1.0, 0.0, 0.0);
            if s > 0.0 {
                bias = s / h;
            } else {
                match cfg.feedback {
                    Feedback::Soft => {
                        // Against a fixed body or a world collider: `static_contact_hertz`.
                        // (Inverse masses of zero: a fixed body, or none for a world collider.)
                        let fixed = row.ima == 0.0 || row.imb == 0.0;
                        let (bias_rate, soft_mass, soft_impulse) = if fixed { against_fixed } else { between_bodies };
                        bias = (bias_rate * s).max(-cfg.max_push);
                        (mass_scale, impulse_scale) = (soft_mass, soft_impulse);
                    }
                    // With a position pass the penetration is corrected there, not here.
                    Feedback::Baumgarte if cfg.position_iterations > 0 => {}
                    Feedback::Baumgarte => {
                        let push = (cfg.baumgarte * (s + cfg.slop).min(0.0) / h).max(-cfg.max_push);
                        if cfg.split_impulse {
                            split_bias = push;
                        } else {
                            bias = push;
                        }
                    }
                }
            }
            // Every field written in place (a struct literal of hundreds of bytes was built
            // aside and copied over, a call to `memcpy` per point); the pattern names every
            // field, so that a new one cannot be left as the last step's.
            let Point {
                a: pa,
                b: pb,
                n: pn,
                row: prow,
                mn: pmn,
                bias: pbias,
                mass_scale: pscale,
                impulse_scale: pimpulse,
                inv_mn: _,
                ln,
                relax_bias,
                s: ps,
                ra: pra,
                rb: prb,
                split_bias: psplit,
                lp,
            } = p;
            (*pa, *pb, *pn, *pra, *prb, *ps) = (c.a, b, n, ra, rb, s);
            *pmn = row.effective_mass(&n);
            *prow = row;
            (*pbias, *pscale, *pimpulse, *psplit) = (bias, mass_scale, impulse_scale, split_bias);
            (*ln, *relax_bias, *lp) = (0.0, 0.0, 0.0);
            p.set_inv_mn();
            // (The approach speed is read only by the restitution pass.)
            let vn0 = if c.restitution > 0.0 { n.dot(&this.vrel(st, p, Velocity::Real)) } else { 0.0 };
            let lb = b.map_or(Vec3::zeros(), |k| st[k].q.inverse_transform_vector(&rb));
            let Carried { s0: c_s0, e, vn0: c_vn0, p0, la: c_la, lb: c_lb } = more;
            (*c_s0, *e, *c_vn0, *p0) = (s0, c.restitution, vn0, c.point.point);
            (*c_la, *c_lb) = (st[c.a].q.inverse_transform_vector(&ra), lb);
        };
        // Each point on its own, written in place: the same rows on any number of threads.
        contacts
            .par_iter()
            .zip(self.batched.par_iter())
            .zip(points.par_iter_mut().zip(carried.par_iter_mut()))
            .with_min_len(par_min())
            .for_each(point);
        (self.points, self.carried) = (points, carried);
        self.contacts = contacts;
        // The manifolds, each built on its own.
        let mut manifolds = std::mem::take(&mut self.manifolds);
        let this: &Self = self;
        let st_read: &[RigidState] = st;
        let manifold = |(index, (&(start, end), m)): (usize, (&(usize, usize), &mut Manifold))| {
            // (A batched manifold's rows are its batch's; `batches_from_contacts` wrote the rest.)
            if this.batched[start] && this.from_contacts {
                return;
            }
            this.manifold(st_read, start, end, this.contacts[start].friction, m);
            m.index = index;
            if cfg.block_pairs && (2..=4).contains(&(end - start)) {
                this.pair_couplings(m);
            }
            let c = &this.contacts[start];
            m.body = match c.b {
                Other::Body(b) if scene.rigid[c.a].is_fixed() => b,
                _ => c.a,
            };
            m.island = m.body;
        };
        // Each manifold on its own, written in place.
        runs.par_iter().zip(manifolds.par_iter_mut()).enumerate().with_min_len(par_min() / 4).for_each(manifold);
        // (Back before `build_islands`: see above.)
        self.sort_scratch = sort;
        // With `block`, each manifold's block, on its own.
        let mut couplings = std::mem::take(&mut self.couplings);
        couplings.clear();
        if cfg.block {
            couplings.resize(manifolds.len(), Coupling::default());
            let this: &Self = self;
            manifolds.par_iter().zip(couplings.par_iter_mut()).with_min_len(par_min() / 4).for_each(|(m, out)| {
                if (2..=4).contains(&(m.end - m.start)) {
                    this.block_matrices(m, out);
                }
            });
        }
        self.couplings = couplings;
        self.manifolds = manifolds;
        self.build_islands(scene, st, cfg);
        self.joint_rows(scene, st, cfg, h);
        self.warm_start(st, cfg);
        self.warm_start_joints(st, cfg);
    }

    /// [`RigidSi::warm_start`] for coloured sweeps: each manifold finds its impulses on its
    /// own, then they act colour by colour through the rows' prepared `M⁻¹Jᵀ`, as the sweeps
    /// apply them (the same numbers on any number of threads).
    fn colored_warm_start(&mut self, st: &mut [RigidState], cfg: &PgsConfig) {
        let radius2 = (4.0 * cfg.slop).powi(2);
        let (contacts, warm, awake, batched) = (&self.contacts, &self.warm, &self.awake, &self.batched);
        let visit = |m: &mut Manifold, points: &mut [Point]| {
            // (The batches find their own, below.)
            if batched[m.start] {
                return;
            }
            // A sleeping island keeps its impulses as they were (for the forces it reports) and
            // applies nothing.
            let ws = if m.island != usize::MAX && awake[m.island] { cfg.warm_start } else { 1.0 };
            if ws == 0.0 {
                return;
            }
            let c = &contacts[m.start];
            let Some((previous, friction, twist)) = warm.get_at(m.index, &(c.a, c.b)) else { return };
            for (c, p) in contacts[m.start..m.end].iter().zip(points.iter_mut()) {
                if let Some(ln) = matched_impulse(previous, c, radius2) {
                    p.ln = ln * ws;
                }
            }
            m.lt1 = friction.dot(&m.t1) * ws;
            m.lt2 = friction.dot(&m.t2) * ws;
            m.l_twist = twist * ws;
        };
        for_each_with_points(&mut self.manifolds, &mut self.points, 0, par_min() / 4, &visit);
        // (Batches built from the contacts found theirs there.)
        if !self.from_contacts {
            self.warm_batches(cfg.warm_start, radius2);
        }
        // The awake rows (those the colours hold) act; the scale 1 leaves their impulses.
        self.colored_warm(st, 1.0);
    }

    /// The rows of this step of the joints the sweeps visit, in their order (`joints[o]` for
    /// joint `joint_order[o]`), each built on its own (on all threads for many joints), with
    /// its warm start: its last impulses times `warm_start` (none without
    /// `warm_start_joints`), applied by [`RigidSi::warm_start_joints`].
    pub(super) fn joint_rows(&mut self, scene: &Scene, st: &[RigidState], cfg: &PgsConfig, h: f64) {
        if self.frames.len() != scene.joints.len() {
            self.frames = scene.joints.iter().map(|j| JointFrame::new(j, &scene.rigid)).collect();
            self.warm_joints = vec![None; scene.joints.len()];
        }
        self.joints.resize_with(self.joint_order.len(), JointRows::default);
        let (frames, inv_m, inv_i, warm) = (&self.frames, &self.inv_m, &self.inv_i, &self.warm_joints);
        let scale = (cfg.warm_start > 0.0 && cfg.warm_start_joints).then_some(cfg.warm_start);
        // Two ball joints at a time on the lanes (`lanes`), the same numbers as one by one.
        let rows = self.joints.par_chunks_mut(lanes::W).zip(self.joint_order.par_chunks(lanes::W));
        rows.with_min_len(par_min() / 8).for_each(|(rows, ks)| {
            let joints = ks.iter().map(|&k| &scene.joints[k]);
            if let ([r0, r1], &[k0, k1], true) =
                (&mut *rows, ks, cfg.lanes && joints.into_iter().all(lanes::builds_on_lanes))
            {
                let (joints, frames) = ([&scene.joints[k0], &scene.joints[k1]], [&frames[k0], &frames[k1]]);
                lanes::rebuild_ball_lanes([r0, r1], joints, frames, st, (inv_m, inv_i), cfg, h);
            } else {
                for (rows, &k) in rows.iter_mut().zip(ks) {
                    rows.rebuild(&scene.joints[k], &frames[k], st, inv_m, inv_i, cfg, h);
                }
            }
            for (rows, &k) in rows.iter_mut().zip(ks) {
                if let (Some(scale), Some((l, side))) = (scale, warm[k]) {
                    rows.set_warm(l * scale, side);
                }
            }
        });
    }

    /// The joints' warm start ([`RigidSi::joint_rows`]) applied in the sweeps' order: with
    /// coloured sweeps colour by colour, a large colour on all threads (the same numbers: a
    /// colour's joints share no movable body).
    pub(super) fn warm_start_joints(&mut self, st: &mut [RigidState], cfg: &PgsConfig) {
        if !(cfg.warm_start > 0.0 && cfg.warm_start_joints) {
            return;
        }
        if cfg.rigid_order == Order::Colored {
            self.colored_warm_joints(st);
            return;
        }
        for rows in self.joints.iter_mut() {
            rows.apply_warm(st, &self.inv_m, &self.inv_i);
        }
    }

    /// Islands, waking, and the order and groups of the sweeps (see the module docs).
    pub(super) fn build_islands(&mut self, scene: &Scene, st: &mut [RigidState], cfg: &PgsConfig) {
        // Without sleeping, and with sweeps that do not go island by island (coloured, or
        // `islands = false`), the islands decide nothing: every movable body is awake, in one
        // group. The search over the contact graph is then skipped (it ran on one thread).
        let grouped = cfg.islands && cfg.rigid_order != Order::Colored;
        let nothing_sleeps = cfg.sleep_time == 0.0 && st.iter().all(|s| !s.asleep);
        let (island, count) = if !grouped && nothing_sleeps {
            (scene.rigid.iter().map(|b| if b.is_fixed() { usize::MAX } else { 0 }).collect(), 1)
        } else if self.active.iter().all(|&a| a) {
            islands(&scene.rigid, &self.contacts, &scene.joints)
        } else {
            // A joint that left with a removed body links nothing.
            let held: Vec<_> = scene.joints.iter().zip(&self.active).filter(|(_, a)| **a).map(|(j, _)| *j).collect();
            islands(&scene.rigid, &self.contacts, &held)
        };
        // An island is awake if any of its bodies is: a body touched by an awake one wakes with
        // its whole island.
        self.awake.clear();
        self.awake.resize(count, false);
        for (k, s) in st.iter().enumerate() {
            if island[k] != usize::MAX && !s.asleep {
                self.awake[island[k]] = true;
            }
        }
        for (k, s) in st.iter_mut().enumerate() {
            if island[k] != usize::MAX && self.awake[island[k]] && s.asleep {
                s.asleep = false;
                s.rest_time = 0.0;
            }
        }
        // (On all threads for many manifolds: each of the 4,095-box pyramid's 8,000 is a cache
        // line apart from the next.)
        let island_of = &island;
        self.manifolds.par_iter_mut().with_min_len(par_min() / 4).for_each(|m| m.island = island_of[m.island]);
        // (Each joint's island, and below the awake joints, on all threads for many joints:
        // on the calling thread, 2 % of the 100 × 100 joint grid's two-thread frame.)
        let mut joint_island = Vec::new();
        fill(&mut joint_island, scene.joints.len(), par_min() / 4, |k| {
            let j = &scene.joints[k];
            match j.b {
                Some(b) if scene.rigid[j.a].is_fixed() => island[b],
                _ => island[j.a],
            }
        });
        let awake = |i: usize| i != usize::MAX && self.awake[i];
        self.order.clear();
        if !grouped && nothing_sleeps {
            // Every manifold has a movable body (the narrow phase pairs no two fixed bodies, and
            // a fixed body with no world collider), in the one island, awake.
            debug_assert!(self.manifolds.iter().all(|m| m.island == 0));
            self.order.extend(0..self.manifolds.len());
        } else {
            self.order.extend((0..self.manifolds.len()).filter(|&i| awake(self.manifolds[i].island)));
        }
        self.joint_order.clear();
        let held = |&j: &usize| self.active[j] && awake(joint_island[j]);
        if scene.joints.len() >= par_min() / 4 {
            let all = (0..scene.joints.len()).into_par_iter().with_min_len(par_min() / 4);
            self.joint_order.par_extend(all.filter(held));
        } else {
            self.joint_order.extend((0..scene.joints.len()).filter(held));
        }
        self.groups.clear();
        // Coloured sweeps go over all the awake rows at once (islands set only what sleeps).
        if cfg.islands && cfg.rigid_order != Order::Colored {
            self.order.sort_by_key(|&i| self.manifolds[i].island);
            self.joint_order.sort_by_key(|&j| joint_island[j]);
            let (mut m, mut j) = (0, 0);
            while m < self.order.len() || j < self.joint_order.len() {
                let im = self.order.get(m).map_or(usize::MAX, |&i| self.manifolds[i].island);
                let ij = self.joint_order.get(j).map_or(usize::MAX, |&k| joint_island[k]);
                let id = im.min(ij);
                let m_end = (m..self.order.len())
                    .find(|&k| self.manifolds[self.order[k]].island != id)
                    .unwrap_or(self.order.len());
                let j_end = (j..self.joint_order.len())
                    .find(|&k| joint_island[self.joint_order[k]] != id)
                    .unwrap_or(self.joint_order.len());
                self.groups.push(Group { m: (m, m_end), j: (j, j_end), colors: (0, 0) });
                (m, j) = (m_end, j_end);
            }
        } else if !self.order.is_empty() || !self.joint_order.is_empty() {
            self.groups.push(Group { m: (0, self.order.len()), j: (0, self.joint_order.len()), colors: (0, 0) });
        }
        if cfg.rigid_order == Order::Colored {
            self.color_groups(scene, cfg.static_colors);
            self.build_batches(cfg);
        }
        self.joint_slot.clear();
        self.joint_slot.resize(scene.joints.len(), usize::MAX);
        for (o, &k) in self.joint_order.iter().enumerate() {
            self.joint_slot[k] = o;
        }
        self.done.clear();
        self.done.resize(self.groups.len(), false);
        self.group_violation.clear();
        self.group_violation.resize(self.groups.len(), 0.0);
        self.fresh_end.clear();
        self.fresh_end.resize(self.groups.len(), false);
        self.island = island;
    }

    /// Step 4. Normal impulses by the same feature of the same pair, or else the nearest point
    /// of that pair within `4·slop` (a feature id can change while the point stays put, for
    /// example when an incident vertex of two equal stacked boxes crosses the reference face's
    /// edge); friction and twist impulses by pair, projected on the new tangents.
    fn warm_start(&mut self, st: &mut [RigidState], cfg: &PgsConfig) {
        if cfg.rigid_order == Order::Colored {
            self.colored_warm_start(st, cfg);
            return;
        }
        let radius2 = (4.0 * cfg.slop).powi(2);
        let warm = std::mem::take(&mut self.warm);
        // (In place: a point or a manifold is hundreds of bytes, and copying each in and out
        // cost as much as applying its impulse.)
        let masses = (&self.inv_m[..], &self.inv_i[..]);
        for m in self.manifolds.iter_mut() {
            // A sleeping island keeps its impulses as they were (for the forces it reports) and
            // applies nothing.
            let awake = m.island != usize::MAX && self.awake[m.island];
            let ws = if awake { cfg.warm_start } else { 1.0 };
            if ws == 0.0 {
                continue;
            }
            let c = &self.contacts[m.start];
            let Some((previous, friction, twist)) = warm.get_at(m.index, &(c.a, c.b)) else { continue };
            for k in m.start..m.end {
                if let Some(ln) = matched_impulse(previous, &self.contacts[k], radius2) {
                    let p = &mut self.points[k];
                    p.ln = ln * ws;
                    if awake {
                        apply_impulse(st, masses, p.a, p.b, &p.ra, &p.rb, p.n * p.ln, Vec3::zeros());
                    }
                }
            }
            m.lt1 = friction.dot(&m.t1) * ws;
            m.lt2 = friction.dot(&m.t2) * ws;
            m.l_twist = twist * ws;
            if awake {
                let p = &self.points[m.start];
                let impulse = m.t1 * m.lt1 + m.t2 * m.lt2;
                apply_impulse(st, masses, p.a, p.b, &m.ra, &m.rb, impulse, m.n * m.l_twist);
            }
        }
        self.warm = warm;
    }
}

/// Orders each three- or four-point manifold of `contacts` (its run in `runs`) for
/// `block_pairs`: the point farthest from the first comes second, so that a four-point
/// manifold's pairs `(0, 1)` and `(2, 3)` are its diagonals and a three-point one's first pair
/// is its longest side from the first point (the first of the farthest on a tie).
fn pair_diagonals(contacts: &mut [RigidContact], runs: &[(usize, usize)]) {
    for &(start, end) in runs.iter().filter(|(start, end)| (3..=4).contains(&(end - start))) {
        let far = farthest(&contacts[start..end]);
        contacts.swap(start + 1, start + far);
    }
}

/// The place in `run` (of at least two contacts) of the point farthest from the first, the
/// first of the farthest on a tie.
pub(super) fn farthest(run: &[RigidContact]) -> usize {
    let first = run[0].point.point;
    let mut far = (1, f64::NEG_INFINITY);
    for (k, c) in run.iter().enumerate().skip(1) {
        let d = (c.point.point - first).norm_squared();
        if d > far.1 {
            far = (k, d);
        }
    }
    far.0
}

/// The runs `(start, end)` of consecutive contacts of one pair of bodies: each manifold's.
fn pair_runs(contacts: &[RigidContact]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = 0;
    while start < contacts.len() {
        let pair = (contacts[start].a, contacts[start].b);
        let end = (start..contacts.len()).find(|&k| (contacts[k].a, contacts[k].b) != pair).unwrap_or(contacts.len());
        runs.push((start, end));
        start = end;
    }
    runs
}
