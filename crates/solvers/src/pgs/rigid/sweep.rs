//! The sweeps over a group's joints and manifolds (step 6 of [`super`]), point by point, the
//! split sweeps and the stopping test; the block solves of a manifold's normal rows are in
//! [`super::blocks`].

use super::blocks::normal_units;
use super::*;
use crate::pgs::joints::Velocities;

/// The body's velocities, zero for the world.
#[inline]
fn velocities<V: Velocities + ?Sized>(vel: &V, b: Option<usize>) -> (Vec3, Vec3) {
    b.map_or((Vec3::zeros(), Vec3::zeros()), |k| vel.get(k))
}

/// The row's relative speed `J·v` along the direction `d` whose Jacobian is `row`.
#[inline]
pub(super) fn row_speed<V: Velocities + ?Sized>(
    vel: &V,
    a: usize,
    b: Option<usize>,
    d: &Vec3,
    row: &JacobianRow,
) -> f64 {
    let (va, wa) = vel.get(a);
    let (vb, wb) = velocities(vel, b);
    d.dot(&(va - vb)) + row.ja.dot(&wa) - row.jb.dot(&wb)
}

/// Applies the linear impulse `impulse` (N·s) to `a` and its opposite to `b`, with the angular
/// velocity changes `dwa` and `dwb` (rad/s) it makes (`M⁻¹Jᵀ` prepared in [`JacobianRow`]).
#[inline(always)]
pub(super) fn push<V: Velocities + ?Sized>(
    vel: &mut V,
    a: usize,
    b: Option<usize>,
    impulse: Vec3,
    (ima, imb): (f64, f64),
    dwa: Vec3,
    dwb: Vec3,
) {
    vel.add(a, impulse * ima, dwa);
    if let Some(b) = b {
        vel.add(b, -(impulse * imb), -dwb);
    }
}

/// Applies `impulse` (N·s) at the point with arms `ra`, `rb` and an angular impulse `spin`
/// (N·m·s) to `a`, and their opposites to `b`, through the world inverse inertias `inv_i`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn apply_impulse<V: Velocities + ?Sized>(
    vel: &mut V,
    (inv_m, inv_i): (&[f64], &[Matrix3<f64>]),
    a: usize,
    b: Option<usize>,
    ra: &Vec3,
    rb: &Vec3,
    impulse: Vec3,
    spin: Vec3,
) {
    vel.add(a, impulse * inv_m[a], inv_i[a] * (ra.cross(&impulse) + spin));
    if let Some(b) = b {
        vel.add(b, -(impulse * inv_m[b]), -(inv_i[b] * (rb.cross(&impulse) + spin)));
    }
}

/// How many manifolds of one colour [`Visit::manifolds_interleaved`] visits together.
pub(super) const LANES: usize = 4;

/// What one visit of a manifold or a joint reads besides its rows: the inverse masses, the
/// pass and its settings.
#[derive(Clone, Copy)]
pub(super) struct Visit<'a> {
    pub(super) inv_m: &'a [f64],
    pub(super) inv_i: &'a [Matrix3<f64>],
    pub(super) omega: f64,
    /// `1/omega`, for the residuals.
    pub(super) inv_omega: f64,
    pub(super) pass: Pass,
    /// Whether the friction and twist rows are solved in this pass (`friction_pass`).
    pub(super) friction: bool,
    pub(super) cone: FrictionCone,
    /// The manifolds' blocks (by [`Manifold::index`]) with `block`, else empty.
    pub(super) couplings: &'a [Coupling],
    /// Whether a coloured pass visits its ball joints two at a time on the lanes
    /// ([`Visit::joints_lanes`], with `lanes`; set by the coloured passes).
    pub(super) joint_lanes: bool,
    /// A relax pass that measures its batches' separations at the bodies' poses
    /// (`relax_separation = "poses"`; set by the coloured passes).
    pub(super) at_poses: Option<AtPoses<'a>>,
}

/// What a relax pass at the poses (`relax_separation = "poses"`) reads: the bodies' poses after
/// the positions moved, the step `h` of the relax biases `max(s/h, 0)`, and, when the frame's
/// contacts carry on to a next substep, its soft rows' `(softness, max_push)`, set up on the
/// batches as they are visited (the next substep starts at these poses).
#[derive(Clone, Copy)]
pub(super) struct AtPoses<'a> {
    pub(super) poses: &'a [super::lanes::Pose],
    pub(super) h: f64,
    pub(super) ahead: Option<(super::lanes::Softness, f64)>,
}

impl<'a> AtPoses<'a> {
    /// A relax pass's, with `relax` the step and the next substep's rows
    /// ([`RigidSi::finish`]'s, while its relax sweeps run at the poses `poses`); none in a
    /// biased pass.
    pub(super) fn in_pass(
        pass: Pass,
        poses: &'a [super::lanes::Pose],
        relax: Option<(f64, Option<(super::lanes::Softness, f64)>)>,
    ) -> Option<Self> {
        let (h, ahead) = relax.filter(|_| pass == Pass::Relax)?;
        Some(AtPoses { poses, h, ahead })
    }
}

impl<'a> Visit<'a> {
    /// A visit in `pass` with relaxation `omega` (`1/omega` computed here, once, for the
    /// residuals), solving friction with `friction`, with the step's masses `(inv_m, inv_i)`,
    /// cone and the manifolds' blocks (empty without `block`).
    pub(super) fn new(
        (inv_m, inv_i): (&'a [f64], &'a [Matrix3<f64>]),
        omega: f64,
        pass: Pass,
        friction: bool,
        cone: FrictionCone,
        couplings: &'a [Coupling],
    ) -> Self {
        let at_poses = None;
        Visit {
            inv_m,
            inv_i,
            omega,
            inv_omega: 1.0 / omega,
            pass,
            friction,
            cone,
            couplings,
            joint_lanes: false,
            at_poses,
        }
    }

    /// Whether this visit computes the contact rows' residuals for its statistics
    /// ([`SweepStats`]): not in [`Pass::Relax`], whose statistics nothing reads (the relax
    /// sweeps run after the stopping test, and their residual is not reported). A relax visit
    /// adds no contact residual; what else it adds (impulse changes, joints) is not read
    /// either. (On the 210-box pyramid, 120 frames on one thread, `soft-step`'s solver ran
    /// 1.5 % fewer instructions, callgrind; `tgs-soft`'s lanes skip only the sums.)
    pub(super) fn counted(&self) -> bool {
        self.pass != Pass::Relax
    }

    /// Whether manifolds of two to four points solve their normals as a block (`block`: their
    /// blocks were prepared).
    pub(super) fn block(&self) -> bool {
        !self.couplings.is_empty()
    }
}

/// Adds one joint visit's statistics (its largest residual and `Σ Δλ²`) to `acc`.
#[inline]
pub(super) fn joint_stats(acc: &mut SweepStats, (r, d): (f64, f64)) {
    acc.0 = acc.0.max(r);
    acc.1 += r * r;
    acc.2 += 1;
    acc.3 += d;
}

impl Visit<'_> {
    /// One visit of a joint's block ([`JointRows::solve`]), its statistics added to `acc`.
    #[inline]
    pub(super) fn joint<V: Velocities + ?Sized>(&self, vel: &mut V, rows: &mut JointRows, acc: &mut SweepStats) {
        joint_stats(acc, self.joint_visit(vel, rows));
    }

    /// One visit of a joint's block: its largest residual and `Σ Δλ²` ([`joint_stats`] adds
    /// them).
    #[inline]
    pub(super) fn joint_visit<V: Velocities + ?Sized>(&self, vel: &mut V, rows: &mut JointRows) -> (f64, f64) {
        rows.solve(vel, self.inv_m, self.inv_i, self.omega, self.pass)
    }

    /// One visit of [`super::lanes::W`] ball joints of one colour at once
    /// ([`super::lanes::solve_ball_lanes`]: the numbers of [`Visit::joint`] on each in turn);
    /// each joint's residual and `Σ Δλ²`, to be added with [`joint_stats`] in order.
    #[inline]
    pub(super) fn joints_lanes<V: Velocities + ?Sized>(
        &self,
        vel: &mut V,
        js: [&mut JointRows; super::lanes::W],
    ) -> [(f64, f64); super::lanes::W] {
        super::lanes::solve_ball_lanes(vel, js, (self.inv_m, self.inv_i), self.omega, self.pass == Pass::Biased)
    }

    /// One visit of manifold `m`, whose points are `points`: the normal rows (as a block or
    /// point by point), then the friction at the centre and the twist. [`Pass::Biased`] with
    /// the position feedback; [`Pass::Relax`] with only the speculative part (from `s_end`) and
    /// plain masses. The friction and twist rows are solved only with `friction`; their
    /// warm-started impulses act either way. Its statistics are added to `acc`.
    pub(super) fn manifold<V: Velocities + ?Sized>(
        &self,
        vel: &mut V,
        m: &mut Manifold,
        points: &mut [Point],
        acc: &mut SweepStats,
    ) {
        let biased = self.pass == Pass::Biased;
        let (max, sum2, count, dl2) = (&mut acc.0, &mut acc.1, &mut acc.2, &mut acc.3);
        let mut total = 0.0;
        let mut solved = false;
        if self.block() && (2..=4).contains(&points.len()) {
            if let Some((t, stats)) = self.block_normals(vel, m, points) {
                (total, solved) = (t, true);
                if self.counted() {
                    *max = max.max(stats.0);
                    *sum2 += stats.1;
                    *count += stats.2;
                    *dl2 += stats.3;
                }
            }
        }
        // The rows are read and updated in place (a point or manifold is hundreds of bytes;
        // copying each in and out of the sweep cost as much as its arithmetic), through their
        // prepared Jacobians.
        if !solved {
            let (inv_omega, pass) = (self.inv_omega, usize::from(!biased));
            for u in 0..normal_units(m, points.len()) {
                let (first, rows, n) = self.normal_unit(vel, m, points, u, inv_omega, pass);
                for (p, (d, r)) in points[first..first + n].iter().zip(rows) {
                    total += p.ln;
                    if let Some(r) = r {
                        *max = max.max(r);
                        *sum2 += r * r;
                        *count += 1;
                    }
                    *dl2 += d * d;
                }
            }
        }
        let (a, b) = (points[0].a, points[0].b);
        let (tangent, twist) = self.friction_rows(vel, m, a, b, total, points.len());
        *dl2 += tangent;
        *dl2 += twist;
    }

    /// Unit `u` of manifold `m`'s normal rows in a sweep (see [`Visit::manifold`]): with
    /// `m.paired` (`block_pairs`) the points `2u` and `2u + 1` as a pair ([`Visit::normal_pair`]),
    /// or a last odd point alone; otherwise point `u`. Returns the unit's first point, each of
    /// its points' impulse change and residual ([`Visit::normal_row`]), and how many points it
    /// has.
    #[inline(always)]
    fn normal_unit<V: Velocities + ?Sized>(
        &self,
        vel: &mut V,
        m: &Manifold,
        points: &mut [Point],
        u: usize,
        inv_omega: f64,
        pass: usize,
    ) -> (usize, [(f64, Option<f64>); 2], usize) {
        if m.paired && 2 * u + 1 < points.len() {
            let rows = self.normal_pair(vel, m.pairs[u], &mut points[2 * u..2 * u + 2], inv_omega, pass);
            (2 * u, rows, 2)
        } else {
            let k = if m.paired { 2 * u } else { u };
            (k, [self.normal_row(vel, &mut points[k], inv_omega, pass), (0.0, None)], 1)
        }
    }

    /// One normal row of a sweep (see [`Visit::manifold`]): its impulse change and, for a row
    /// with mass in a counted pass ([`Visit::counted`]), its residual (m/s).
    #[inline(always)]
    pub(super) fn normal_row<V: Velocities + ?Sized>(
        &self,
        vel: &mut V,
        p: &mut Point,
        inv_omega: f64,
        pass: usize,
    ) -> (f64, Option<f64>) {
        let omega = self.omega;
        let (bias, ms, is) = if pass == 0 { (p.bias, p.mass_scale, p.impulse_scale) } else { (p.relax_bias, 1.0, 0.0) };
        let vn = row_speed(vel, p.a, p.b, &p.n, &p.row);
        let raw = -p.mn * ms * (vn + bias) - is * p.ln;
        let new = (p.ln + omega * raw).max(0.0);
        let d = new - p.ln;
        p.ln = new;
        let r = (self.counted() && p.mn > 0.0)
            .then(|| (if omega * raw == d { raw } else { d * inv_omega }).abs() * p.inv_mn[pass]);
        let r_ = &p.row;
        push(vel, p.a, p.b, p.n * d, (r_.ima, r_.imb), r_.ga * d, r_.gb * d);
        (d, r)
    }

    /// The friction and twist rows of manifold `m` (bodies `a`, `b`, `count` points whose
    /// normal impulses sum to `total`) in a sweep that solves friction (see
    /// [`Visit::manifold`]): the squared changes of the tangent impulses and of the twist
    /// impulse (0 for a row not solved).
    #[inline(always)]
    fn friction_rows<V: Velocities + ?Sized>(
        &self,
        vel: &mut V,
        m: &mut Manifold,
        a: usize,
        b: Option<usize>,
        total: f64,
        count: usize,
    ) -> (f64, f64) {
        if m.mu == 0.0 || !self.friction {
            return (0.0, 0.0);
        }
        let omega = self.omega;
        // Tangent block at the centre, clamped to the disk μ·Σλₙ.
        let [r1, r2] = &m.rows_t;
        let (v1, v2) = (row_speed(vel, a, b, &m.t1, r1), row_speed(vel, a, b, &m.t2, r2));
        let (o1, o2) = (m.lt1, m.lt2);
        let mut l1 = o1 - omega * (m.mt[0] * v1 + m.mt[1] * v2);
        let mut l2 = o2 - omega * (m.mt[2] * v1 + m.mt[3] * v2);
        let limit = m.mu * total;
        match self.cone {
            FrictionCone::Disk => {
                let len = (l1 * l1 + l2 * l2).sqrt();
                if len > limit {
                    (l1, l2) = (l1 * limit / len, l2 * limit / len);
                }
            }
            FrictionCone::Pyramid => (l1, l2) = (l1.max(-limit).min(limit), l2.max(-limit).min(limit)),
        }
        (m.lt1, m.lt2) = (l1, l2);
        let tangent = (l1 - o1).powi(2) + (l2 - o2).powi(2);
        let (d1, d2) = (l1 - o1, l2 - o2);
        push(vel, a, b, m.t1 * d1 + m.t2 * d2, (r1.ima, r1.imb), r1.ga * d1 + r2.ga * d2, r1.gb * d1 + r2.gb * d2);
        // Twist: the relative spin about the normal, clamped to μ·radius·Σλₙ.
        if count < 2 {
            return (tangent, 0.0);
        }
        let spin = vel.get(a).1 - velocities(vel, b).1;
        let old = m.l_twist;
        let limit = m.mu * m.radius * total;
        // (max/min, not clamp: a NaN limit from a diverged step must not panic.)
        m.l_twist = (old - omega * m.m_twist * m.n.dot(&spin)).max(-limit).min(limit);
        let twist = (m.l_twist - old).powi(2);
        let d = m.l_twist - old;
        push(vel, a, b, Vec3::zeros(), (0.0, 0.0), m.twist_a * d, m.twist_b * d);
        (tangent, twist)
    }

    /// [`Visit::manifold`] (point by point, without `block`) on up to [`LANES`] manifolds of at
    /// most four points each that share no movable body (rows of one colour), interleaved: the first point of each, then
    /// the second of each, …, then each one's friction and twist. The manifolds' dependency
    /// chains (each row reads the velocities the row before wrote) are independent, so the
    /// processor overlaps them; every manifold's arithmetic is that of [`Visit::manifold`], and
    /// the statistics are added in the order of the manifolds one after the other, so the
    /// numbers are those of visiting them one after the other.
    pub(super) fn manifolds_interleaved<V: Velocities + ?Sized>(
        &self,
        vel: &mut V,
        ms: &mut [&mut Manifold],
        points: &mut [&mut [Point]],
        acc: &mut SweepStats,
    ) {
        let lanes = ms.len().min(LANES);
        let (inv_omega, pass) = (self.inv_omega, usize::from(self.pass != Pass::Biased));
        let mut total = [0.0; LANES];
        // Per lane and point: the squared impulse change and the residual (none for a row
        // without mass).
        let mut d2 = [[0.0; 4]; LANES];
        let mut res = [[None; 4]; LANES];
        debug_assert!(points[..lanes].iter().all(|p| p.len() <= 4), "interleaved manifolds have at most 4 points");
        let most = (0..lanes).map(|l| normal_units(ms[l], points[l].len())).max().unwrap_or(0);
        for u in 0..most {
            for l in 0..lanes {
                if u >= normal_units(ms[l], points[l].len()) {
                    continue;
                }
                let (first, rows, n) = self.normal_unit(vel, ms[l], points[l], u, inv_omega, pass);
                for (k, (d, r)) in (first..first + n).zip(rows) {
                    total[l] += points[l][k].ln;
                    (d2[l][k], res[l][k]) = (d * d, r);
                }
            }
        }
        let mut rows = [(0.0, 0.0); LANES];
        for l in 0..lanes {
            let (a, b) = (points[l][0].a, points[l][0].b);
            rows[l] = self.friction_rows(vel, ms[l], a, b, total[l], points[l].len());
        }
        let (max, sum2, count, dl2) = (&mut acc.0, &mut acc.1, &mut acc.2, &mut acc.3);
        for l in 0..lanes {
            for k in 0..points[l].len() {
                if let Some(r) = res[l][k] {
                    *max = max.max(r);
                    *sum2 += r * r;
                    *count += 1;
                }
                *dl2 += d2[l][k];
            }
            *dl2 += rows[l].0;
            *dl2 += rows[l].1;
        }
    }

    /// The warm start of manifold `m` in a later substep of a frame whose contacts are carried
    /// (`contacts_per_frame`): its impulses times `scale`, applied through the rows' prepared
    /// `M⁻¹Jᵀ`, as the sweeps apply them.
    pub(super) fn warm_manifold<V: Velocities + ?Sized>(
        &self,
        vel: &mut V,
        m: &mut Manifold,
        points: &mut [Point],
        scale: f64,
    ) {
        for p in points.iter_mut() {
            p.ln *= scale;
            let (r, d) = (&p.row, p.ln);
            push(vel, p.a, p.b, p.n * d, (r.ima, r.imb), r.ga * d, r.gb * d);
        }
        (m.lt1, m.lt2, m.l_twist) = (m.lt1 * scale, m.lt2 * scale, m.l_twist * scale);
        let (a, b) = (points[0].a, points[0].b);
        let [r1, r2] = &m.rows_t;
        let (d1, d2, d) = (m.lt1, m.lt2, m.l_twist);
        push(vel, a, b, m.t1 * d1 + m.t2 * d2, (r1.ima, r1.imb), r1.ga * d1 + r2.ga * d2, r1.gb * d1 + r2.gb * d2);
        push(vel, a, b, Vec3::zeros(), (0.0, 0.0), m.twist_a * d, m.twist_b * d);
    }
}

impl RigidSi {
    /// One sweep of group `g`: [`Pass::Biased`] over the joints and the points with the position
    /// feedback; [`Pass::Relax`] with only the speculative part (from `s_end`) and plain masses;
    /// [`Pass::Split`] over the split rows on the pseudo velocities (see [`Visit::manifold`]).
    /// Coloured groups (`rigid_order = "colored"`) go colour by colour ([`RigidSi::colored_sweep`]);
    /// the others visit the joints, then the manifolds, in order.
    pub(in crate::pgs) fn sweep(
        &mut self,
        g: usize,
        st: &mut [RigidState],
        omega: f64,
        pass: Pass,
        friction: bool,
    ) -> SweepStats {
        self.fresh_end[g] = false;
        if pass == Pass::Split {
            return self.split_sweep(g, st, omega);
        }
        let group = self.groups[g];
        if group.colors.0 < group.colors.1 {
            return self.colored_sweep(g, st, omega, pass, friction);
        }
        let mut acc = (0.0_f64, 0.0, 0usize, 0.0);
        let visit = Visit::new((&self.inv_m, &self.inv_i), omega, pass, friction, self.cone, &self.couplings);
        for o in group.j.0..group.j.1 {
            visit.joint(st, &mut self.joints[o], &mut acc);
        }
        for o in group.m.0..group.m.1 {
            let m = &mut self.manifolds[self.order[o]];
            visit.manifold(st, m, &mut self.points[m.start..m.end], &mut acc);
        }
        acc
    }

    /// One sweep of the split rows on the pseudo velocities ([`Pass::Split`]).
    fn split_sweep(&mut self, g: usize, st: &mut [RigidState], omega: f64) -> SweepStats {
        self.pseudo = true;
        let (mut max, mut sum2, mut count, mut dl2) = (0.0_f64, 0.0, 0usize, 0.0);
        let group = self.groups[g];
        let (first, last) = group.m;
        for o in first..last {
            let (start, end) = (self.manifolds[self.order[o]].start, self.manifolds[self.order[o]].end);
            for k in start..end {
                let mut p = self.points[k];
                if p.split_bias == 0.0 {
                    continue;
                }
                let vn = p.n.dot(&self.vrel(st, &p, Velocity::Pseudo));
                let raw = -p.mn * (vn + p.split_bias);
                let new = (p.lp + omega * raw).max(0.0);
                let d = new - p.lp;
                p.lp = new;
                if p.mn > 0.0 {
                    let r = (d / omega).abs() * p.inv_mn[1];
                    max = max.max(r);
                    sum2 += r * r;
                    count += 1;
                }
                dl2 += d * d;
                self.apply(st, &p, p.n * d, Velocity::Pseudo);
                self.points[k] = p;
            }
        }
        (max, sum2, count, dl2)
    }

    /// The joints' part of [`RigidSi::violation`] (m): their largest linearised error if the step
    /// ended now, up to the first above `bound`.
    pub(in crate::pgs) fn joint_violation(&mut self, g: usize, st: &[RigidState], h: f64, bound: f64) -> f64 {
        let group = self.groups[g];
        let mut vp = std::mem::take(&mut self.vp);
        let mut wp = std::mem::take(&mut self.wp);
        let pseudo = Pseudo(&mut vp, &mut wp);
        let mut joints = 0.0_f64;
        for rows in &self.joints[group.j.0..group.j.1] {
            joints = joints.max(rows.violation(st, &pseudo, h));
            if joints > bound {
                break;
            }
        }
        (self.vp, self.wp) = (vp, wp);
        joints.max(0.0)
    }

    /// The common violation of group `g` if the step ended now (m): the joints' linearised
    /// errors and the contacts' linearised penetration, when it is at most `bound`; otherwise a
    /// number above `bound` (the contacts' term is always computed in full, as [`RigidSi::finish`]
    /// reuses it; the joints stop at the first one above `bound`). It is also kept as the
    /// group's last violation.
    pub(in crate::pgs) fn violation(&mut self, g: usize, st: &[RigidState], h: f64, bound: f64) -> f64 {
        let group = self.groups[g];
        let (first, last) = group.m;
        let v = self.joint_violation(g, st, h, bound);
        // (The largest of the manifolds' worst points: the same number in any grouping.) On the
        // calling thread each point keeps the relax bias of its end separation `s_end`, which
        // is then fresh for [`RigidSi::finish`] until the group's next sweep; in parallel tasks
        // it is only read.
        let min = par_min() / 4;
        let serial = last - first < 2 * min;
        // (A group of every manifold holds every point: in parallel tasks over the points, each
        // keeps its relax bias too.)
        let whole = first == 0 && last == self.order.len() && self.order.len() == self.manifolds.len();
        // (The batched points on their batches' lanes, each keeping its relax bias there; a
        // coloured group holds every awake manifold, and so every batch.)
        let v = if self.batches.is_empty() { v } else { v.max(self.end_batches(st, h)) };
        let v = if whole && self.all_batched() {
            v
        } else if whole {
            // (Point by point in their stored order, without the manifolds' indirection.)
            let mut points = std::mem::take(&mut self.points);
            let this: &Self = self;
            let end = |(p, &batched): (&mut Point, &bool)| {
                if batched {
                    return 0.0;
                }
                let s_end = this.end_separation(st, p, h);
                p.relax_bias = (s_end / h).max(0.0);
                -s_end
            };
            let batched = &self.batched;
            let worst = if serial {
                points.iter_mut().zip(batched).map(end).fold(v, f64::max)
            } else {
                let all = points.par_iter_mut().zip(batched.par_iter()).with_min_len(par_min());
                all.map(end).reduce(|| 0.0, f64::max).max(v)
            };
            self.points = points;
            worst
        } else if serial {
            let mut worst = v;
            for o in first..last {
                let (start, end) = (self.manifolds[self.order[o]].start, self.manifolds[self.order[o]].end);
                for k in start..end {
                    if self.batched[k] {
                        continue;
                    }
                    let s_end = self.end_separation(st, &self.points[k], h);
                    self.points[k].relax_bias = (s_end / h).max(0.0);
                    worst = worst.max(-s_end);
                }
            }
            worst
        } else {
            v.max(
                self.order[first..last]
                    .par_iter()
                    .with_min_len(min)
                    .map(|&i| {
                        (self.manifolds[i].start..self.manifolds[i].end)
                            .filter(|&k| !self.batched[k])
                            .map(|k| -self.end_separation(st, &self.points[k], h))
                            .fold(0.0, f64::max)
                    })
                    .reduce(|| 0.0, f64::max),
            )
        };
        self.fresh_end[g] = serial || whole;
        self.group_violation[g] = v;
        v
    }

    /// The separation point `p` reaches at the end of the step at the current velocities and
    /// pseudo velocities (m): `s + h·n·(v_rel + v_rel,pseudo)`, the `s_end` of the relax pass
    /// and the common violation's contact term. (Inlined: called out of line by the parallel
    /// stopping test, with `vrel` not inlined into it, it ran 1.8 times the instructions of the
    /// same work on the calling thread.)
    #[inline(always)]
    pub(super) fn end_separation(&self, st: &[RigidState], p: &Point, h: f64) -> f64 {
        let real = self.vrel(st, p, Velocity::Real);
        // (Zero pseudo velocities add nothing: the same number without them.)
        let rel = if self.pseudo { real + self.vrel(st, p, Velocity::Pseudo) } else { real };
        p.s + h * p.n.dot(&rel)
    }

    /// Whether the last relax sweeps at the poses (`relax_separation = "poses"`) measured a
    /// penetration above `bound` (m): the points' outside the batches, then the batches' up to
    /// the first above it.
    pub(in crate::pgs) fn end_penetration_above(&self, bound: f64) -> bool {
        self.end_worst > bound || self.batch_state.iter().any(|s| s.end_worst > bound)
    }

    /// The largest last violation over the groups (m).
    pub(in crate::pgs) fn worst_violation(&self) -> f64 {
        self.group_violation.iter().copied().fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cut short at a bound, the violation says on which side of the bound the full one lies:
    /// at most the bound exactly when the full violation is, for bounds at and just below each
    /// joint's error (so that some bound lies between the first joint's error and the worst).
    #[test]
    fn a_bounded_violation_decides_as_the_full_one() {
        let scene = solverlab_scenes::resolve("rigid-joint-grid", &["n=5".to_string()]).unwrap();
        let cfg = crate::pgs::config::preset_config("tgs-soft");
        let h = scene.dt / 4.0;
        let mut st = scene.initial_state(scene.dt).rigid;
        // Velocities that open the joints unevenly, more so further down the list.
        for (i, s) in st.iter_mut().enumerate() {
            let i = i as f64;
            s.v += 0.1 * i * Vec3::new(i.sin(), (2.0 * i).cos(), 0.5 * (3.0 * i).sin());
        }
        let mut si = RigidSi::default();
        si.prepare(&scene, &mut st, &cfg, h, 0.0, 4);
        assert_eq!(si.group_count(), 1, "one island");
        si.sweep(0, &mut st, 1.0, Pass::Biased, true);
        let full = si.violation(0, &st, h, f64::INFINITY);
        let (mut vp, mut wp) = (si.vp.clone(), si.wp.clone());
        let pseudo = crate::pgs::joints::Pseudo(&mut vp, &mut wp);
        let errors: Vec<f64> = si.joints.iter().map(|rows| rows.violation(&st[..], &pseudo, h)).collect();
        assert!(
            errors.len() > 10 && full == errors.iter().copied().fold(0.0, f64::max),
            "the joints give the violation"
        );
        let mut between = 0;
        for b in errors.iter().flat_map(|&e| [e, f64::from_bits(e.to_bits() - 1)]) {
            let cut = si.violation(0, &st, h, b);
            assert_eq!(cut <= b, full <= b, "bound {b:e}: cut {cut:e}, full {full:e}");
            between += usize::from(errors[0] <= b && b < full);
        }
        assert!(between > 0, "a bound between the first joint's error and the worst: {errors:?} {full}");
    }
}
