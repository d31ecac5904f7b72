//! The Newton loop as a [`Solver`]: one step is a pass of the loop, friction, and the
//! bodies' velocities.

use super::*;

impl<L: Linear> Solver for Newton<L> {
    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, scene: &Scene) -> Result<(), SolveError> {
        self.w = scene.inverse_masses();
        self.particles = self.w.len();
        self.rigid = RigidRows::default();
        self.dense_rows = scene.constraints.len();
        self.previous.reset(self.dense_rows);
        self.previous_friction.clear();
        self.contacts.clear();
        self.sys = System::default();
        Ok(())
    }

    fn solve(
        &mut self,
        ctx: &StepContext,
        state: &mut State,
        observer: &mut dyn Observer,
    ) -> Result<SolveInfo, SolveError> {
        let scene = ctx.scene;
        let h = ctx.h;
        if self.particles != scene.particles.len() {
            self.prepare(scene)?;
        }
        self.stats = NewtonStats::default();
        let travel = state.x.iter().zip(&state.x_prev).map(|(x, p)| (x - p).norm_squared()).fold(0.0, f64::max);
        self.margin = 2.0 * travel.sqrt();
        let restitution = solverlab_core::integrate::has_restitution(scene);
        self.predicted.clone_from(&state.x);
        self.friction.clear();
        // The loop's coordinates: the particles, then each rigid body's two blocks.
        let n = self.particles;
        let rigid = scene.has_rigid();
        let mut x = state.x.clone();
        self.w.truncate(n);
        self.coordinate_scale.clear();
        self.coordinate_scale.resize(n, 1.0);
        if rigid {
            self.rigid.begin(scene, &mut state.rigid, h, n, state.time, self.settings.speculative_margin);
            self.rigid.push_inverse_masses(scene, &mut self.w);
            self.rigid.push_coordinate_scales(scene, &mut self.coordinate_scale);
            self.rigid.push_predicted(&mut x);
        }
        let mut info = SolveInfo::default();
        let mut worst = self.pass(ctx, state, &mut x, observer, &mut info, true)?;
        // Friction (step 6): the contacts that pushed, with their normal multipliers.
        self.contacts.clear();
        for r in self.rows.iter().filter(|r| r.contact.is_some_and(|c| c.friction > 0.0)) {
            let lambda_n = self.current.get(r.id);
            if lambda_n > 0.0 {
                self.contacts.push((r.to_row(), lambda_n));
            }
        }
        if rigid {
            self.rigid.set_normal_multipliers(&lookup(&self.current));
        }
        let rigid_friction = rigid && self.rigid.needs_friction();
        // Only from converged normal multipliers: an unconverged pass (a dense pile that hit the
        // cap) can hold multipliers far from the contact forces, and friction scaled by them
        // would hold the particles where they started.
        if (!self.contacts.is_empty() || rigid_friction) && worst <= self.settings.tolerance {
            // Rigid contacts whose static friction rows ask for more than their cone are
            // released to slide, and the pass runs again (at most `FRICTION_ROUNDS` times).
            for _ in 0..FRICTION_ROUNDS {
                state.x.clone_from(&self.predicted);
                self.apply_friction(state);
                x.truncate(n);
                x.copy_from_slice(&state.x);
                if rigid {
                    // The rigid bodies' friction, from their predicted poses (as the particles').
                    self.rigid.push_predicted(&mut x);
                    self.rigid.write_poses(&x[n..], &mut state.rigid);
                    self.rigid.friction(&mut state.rigid);
                    self.rigid.read_poses(&state.rigid, &mut x[n..]);
                }
                // Start the second pass from the first pass's multipliers.
                self.previous = std::mem::take(&mut self.current);
                worst = self.pass(ctx, state, &mut x, observer, &mut info, false)?;
                if !rigid || !self.rigid.settle_friction(lookup(&self.current)) || worst > self.settings.tolerance {
                    break;
                }
            }
        }
        state.x.copy_from_slice(&x[..n]);
        if rigid {
            self.rigid.joint_forces(scene, &x[n..], lookup(&self.current), h, &mut self.joint_forces);
            self.rigid.write_poses(&x[n..], &mut state.rigid);
            self.rigid.set_normal_multipliers(&lookup(&self.current));
            self.rigid.xpbd.finish(scene, &mut state.rigid, h);
        }
        info.converged = worst <= self.settings.tolerance;
        info.outer = self.stats.outer;
        if !info.converged {
            info.note = Some(self.diagnose());
        } else if self.stats.fell_back {
            info.note = Some(
                "the SQP pass did not meet the tolerance (the step has no finite multipliers here, as on a taut \
                 line between fixed particles or a flat cloth with shear sticks); the projection finished the step \
                 on the constraints, which is not the implicit-Euler step",
            );
        } else if self.stats.breakdowns > 0 {
            // A breakdown ends a linear solve early; the Newton loop may still converge, but the
            // run's meta.json should say that the matrix was not positive definite.
            info.note = Some(
                "a CG solve broke down (pᵀAp ≤ 0: J W Jᵀ is not positive definite along some direction, \
                 as with redundant rows and no regularisation); the Newton loop still converged",
            );
        }
        if restitution {
            solverlab_core::integrate::apply_restitution(scene, &self.predicted, state, h);
        }
        std::mem::swap(&mut self.previous, &mut self.current);
        std::mem::swap(&mut self.previous_friction, &mut self.friction);
        Ok(info)
    }

    fn capture_system(&mut self, outer: Option<usize>) -> bool {
        self.capture = outer;
        self.captured = None;
        true
    }

    fn captured_system(&self) -> Option<&LinearSystem> {
        self.captured.as_ref()
    }

    fn rigid_contacts(&self, out: &mut Vec<solverlab_core::rigid::ContactForce>) {
        out.clear();
        out.extend_from_slice(self.rigid.xpbd.forces());
    }

    fn rigid_joints(&self, out: &mut Vec<solverlab_core::rigid::JointForce>) {
        out.clear();
        out.extend_from_slice(&self.joint_forces);
    }

    fn multiplier(&self, id: u64) -> f64 {
        let dir = match decode(id) {
            RowRef::Contact { dir, .. } | RowRef::Body { dir, .. } | RowRef::Embedded { dir, .. } => dir,
            _ => 0,
        };
        match (dir, self.previous_friction.get(&(id & !3))) {
            (1 | 2, Some((n, lt))) => {
                let (t1, t2) = tangents(n);
                lt.dot(if dir == 1 { &t1 } else { &t2 })
            }
            _ => self.previous.get(id),
        }
    }

    fn multipliers(&self, out: &mut Vec<(u64, f64)>) {
        out.clear();
        // The rigid rows' multipliers reach the tables as contact forces (`rigid_contacts`).
        out.extend(self.previous.iter().filter(|&(id, l)| l != 0.0 && !is_rigid_id(id)));
        for (id, (n, lt)) in &self.previous_friction {
            let (t1, t2) = tangents(n);
            out.extend([(id | 1, lt.dot(&t1)), (id | 2, lt.dot(&t2))]);
        }
        out.sort_unstable_by_key(|e| e.0);
    }
}
