//! Step 3 of the rigid position-level step ([`super`]): one sweep over the joints, the
//! contacts' normal rows and their friction, Gauss-Seidel or Jacobi.

use nalgebra::UnitQuaternion;
use solverlab_core::rigid::joint_rows::{anchors, hinge, relative_rotation, Anchors, Hinge};
use solverlab_core::rigid::{rotate, JointKind, RigidState};
use solverlab_core::{Scene, Vec3};

use super::{Fix, Pending, RigidXpbd, Update};

impl RigidXpbd {
    /// One sweep (step 3); returns the largest correction asked for (m or rad).
    pub(crate) fn sweep(&mut self, scene: &Scene, st: &mut [RigidState], update: Update, omega: f64, h: f64) -> f64 {
        let mut residual = 0.0_f64;
        self.update = update;
        let jacobi = update == Update::Jacobi;
        self.pending.clear();
        // Jacobi reads every row at the sweep's start: a copy of the poses, and sums per body.
        let mut frozen = std::mem::take(&mut self.frozen);
        if jacobi {
            frozen.clear();
            frozen.extend_from_slice(st);
        }
        let mut rows = Vec::with_capacity(4);
        let joints = scene.joints.len();
        for r in 0..joints + 2 * self.contacts.len() {
            rows.clear();
            {
                let read: &[RigidState] = if jacobi { &frozen } else { st };
                let e = if r < joints {
                    if !self.active[r] {
                        continue;
                    }
                    self.joint(scene, read, r, omega, h, &mut rows)
                } else if r - joints < self.contacts.len() {
                    self.contact(read, r - joints, &mut rows)
                } else {
                    self.friction(read, r - joints - self.contacts.len(), &mut rows);
                    0.0
                };
                residual = residual.max(e);
            }
            for fix in &rows {
                for &(k, dx, dq) in &fix.moves[..fix.len] {
                    if jacobi {
                        self.dx[k] += dx;
                        self.dq[k] += dq;
                        self.count[k] += 1;
                    } else {
                        st[k].x += dx;
                        st[k].q = rotate(&st[k].q, &dq, 1.0);
                    }
                }
            }
        }
        if jacobi {
            // Each row's multiplier grows by the share of its change that was applied: ω over
            // the larger count of its two bodies (as for the particle rows).
            let pending = std::mem::take(&mut self.pending);
            for &(which, dl, dt) in &pending {
                let bodies = match which {
                    Pending::Joint(j) | Pending::JointTurn(j) => (Some(scene.joints[j].a), scene.joints[j].b),
                    Pending::Normal(c) | Pending::Tangent(c) => (Some(self.contacts[c].a), self.contacts[c].b),
                };
                let n = [bodies.0, bodies.1].iter().flatten().map(|&k| self.count[k]).max().unwrap_or(1).max(1);
                let share = omega / n as f64;
                match which {
                    Pending::Joint(j) => {
                        self.joint_lambda[j] += dl * share;
                        self.joint_push[j].0 += dt * share;
                    }
                    Pending::JointTurn(j) => self.joint_push[j].1 += dt * share,
                    Pending::Normal(c) => self.contacts[c].ln += dl * share,
                    Pending::Tangent(c) => self.contacts[c].lt += dt * share,
                }
            }
            self.pending = pending;
            for (k, s) in st.iter_mut().enumerate() {
                if self.count[k] > 0 {
                    let share = omega / self.count[k] as f64;
                    s.x += self.dx[k] * share;
                    s.q = rotate(&s.q, &(self.dq[k] * share), 1.0);
                }
                (self.dx[k], self.dq[k], self.count[k]) = (Vec3::zeros(), Vec3::zeros(), 0);
            }
        }
        self.frozen = frozen;
        residual
    }

    /// Joint `j`'s corrections, every row of it computed from the poses `st` as given (the
    /// caller applies them together, after); returns its largest error (m or rad).
    pub(super) fn joint(
        &mut self,
        scene: &Scene,
        st: &[RigidState],
        j: usize,
        omega: f64,
        h: f64,
        out: &mut Vec<Fix>,
    ) -> f64 {
        let joint = &scene.joints[j];
        let f = self.frames[j];
        let (a, b) = (Some(joint.a), joint.b);
        let mut worst = 0.0_f64;
        // The anchors (the shared geometry of [`solverlab_core::rigid::joint_rows`]).
        let pose = |k: Option<usize>| k.map(|k| (st[k].x, st[k].q));
        let Anchors { pa, pb, ra, rb } = anchors(&f, pose(a), pose(b));
        let gap = pb - pa;
        let c = gap.norm();
        worst = worst.max(c);
        if c > 0.0 {
            let n = gap / c;
            let alpha = joint.compliance / (h * h);
            let w = self.w(a, &ra, &n) + b.map_or(0.0, |k| self.w(Some(k), &rb, &n));
            if w + alpha > 0.0 {
                let dl = omega * (c - alpha * self.joint_lambda[j]) / (w + alpha);
                if self.update == Update::Jacobi {
                    self.pending.push((Pending::Joint(j), dl, n * dl));
                } else {
                    self.joint_lambda[j] += dl;
                    self.joint_push[j].0 += n * dl;
                }
                out.push(self.push_pair(st, a, b, &pa, &pb, n * dl));
            }
        }
        // The angular rows: each a rotation vector that takes a's frame onto b's.
        let qa = st[joint.a].q;
        let qb = b.map_or(UnitQuaternion::identity(), |k| st[k].q);
        let mut errors = [Vec3::zeros(); 2];
        match joint.kind {
            JointKind::Ball => {}
            JointKind::Revolute { lower, upper, .. } => {
                let Hinge { axis_a, axis_b, theta, .. } = hinge(&f, &qa, &qb);
                errors[0] = axis_a.cross(&axis_b);
                // Past a limit, a turns towards b (and b back) about the axis.
                if theta < lower {
                    errors[1] = -axis_a * (lower - theta);
                } else if theta > upper {
                    errors[1] = axis_a * (theta - upper);
                }
            }
            JointKind::Fixed => errors[0] = relative_rotation(&qa, &qb, &f.relative),
        }
        for err in errors {
            let theta = err.norm();
            worst = worst.max(theta);
            if theta < 1e-15 {
                continue;
            }
            let n = err / theta;
            let w = self.w_rot(a, &n) + self.w_rot(b, &n);
            if w > 0.0 {
                let turn = n * (omega * theta / w);
                if self.update == Update::Jacobi {
                    self.pending.push((Pending::JointTurn(j), 0.0, turn));
                } else {
                    self.joint_push[j].1 += turn;
                }
                out.push(self.turn_pair(a, b, turn));
            }
        }
        worst
    }

    /// Contact `c`'s normal correction at the poses `st`; returns its penetration (m).
    pub(super) fn contact(&mut self, st: &[RigidState], c: usize, out: &mut Vec<Fix>) -> f64 {
        let k = self.contacts[c];
        let (a, b) = (Some(k.a), k.b);
        let pa = Self::point(st, a, &k.la);
        let pb = Self::point(st, b, &k.lb);
        let depth = (pa - pb).dot(&k.n);
        if depth >= k.floor {
            return (-depth).max(0.0);
        }
        let w = self.w(a, &(pa - st[k.a].x), &k.n) + b.map_or(0.0, |j| self.w(Some(j), &(pb - st[j].x), &k.n));
        if w > 0.0 {
            let dl = (k.floor - depth) / w;
            if self.update == Update::Jacobi {
                self.pending.push((Pending::Normal(c), dl, Vec3::zeros()));
            } else {
                self.contacts[c].ln += dl;
            }
            out.push(self.push_pair(st, a, b, &pa, &pb, k.n * dl));
        }
        -depth
    }

    /// Contact `c`'s friction at the poses `st`, at the position level as for the particle rows:
    /// the correction that would cancel the points' tangential displacement since the step's
    /// start (`len/w_t` along `−t`) is added to the accumulated tangential correction `λₜ`,
    /// which is then clamped to the disk `|λₜ| ≤ μ·λₙ`; the change is applied. Inside the
    /// cone the points stick, beyond it they slide with the Coulomb force `μ·λₙ/h²`.
    pub(super) fn friction(&mut self, st: &[RigidState], c: usize, out: &mut Vec<Fix>) {
        let k = self.contacts[c];
        if k.mu == 0.0 || k.ln <= 0.0 {
            return;
        }
        let (a, b) = (Some(k.a), k.b);
        let pa = Self::point(st, a, &k.la);
        let pb = Self::point(st, b, &k.lb);
        let moved = (pa - k.a0) - (pb - k.b0);
        let tangential = moved - k.n * moved.dot(&k.n);
        let len = tangential.norm();
        if len <= 1e-15 {
            return;
        }
        let t = tangential / len;
        let wt = self.w(a, &(pa - st[k.a].x), &t) + b.map_or(0.0, |j| self.w(Some(j), &(pb - st[j].x), &t));
        if wt <= 0.0 {
            return;
        }
        let mut lt = k.lt - t * (len / wt);
        let limit = k.mu * k.ln;
        if lt.norm() > limit {
            lt *= limit / lt.norm();
        }
        let change = lt - k.lt;
        if self.update == Update::Jacobi {
            self.pending.push((Pending::Tangent(c), 0.0, change));
        } else {
            self.contacts[c].lt = lt;
        }
        out.push(self.push_pair(st, a, b, &pa, &pb, change));
    }
}
