//! The shared floor: what more than one solver family uses, so that no family imports another.
//!
//! * `check`: the range checks of every family's settings (the same message for the same kind
//!   of parameter);
//! * [`order`]: visiting orders and the particle blocks of the parallel coloured sweeps;
//! * `stop`: the stopping test and the report of each iteration, which every family's loop
//!   calls (`Stopping`: the cap, the tolerance, the common violation cut short);
//! * `xpbd`: the rigid bodies' position-level step (prediction, contacts, joints, friction,
//!   velocities and forces): the relaxation family's rigid step, whose prediction, contacts,
//!   friction passes and velocities the Newton family shares;
//! * the parallel threshold [`PARALLEL_ROWS`] of the particle sweeps (relaxation and PGS), the
//!   one-instruction maximum `larger` of the residuals and `on_worker`, which runs an
//!   iteration with parallel passes on a pool worker.

pub(crate) mod check;
pub mod order;
pub(crate) mod stop;
pub(crate) mod xpbd;

/// Which contacts a rigid step keeps as speculative: found ahead of touching, so that bodies
/// closing within the step stop at contact instead of passing into each other. Every family
/// with rigid bodies offers it (`speculative_margin`), each with its own base `b` (PGS
/// `4·slop`, the XPBD step and block descent 1 cm) and time `T` the contacts serve (two steps;
/// PGS with `contacts_per_frame` the frame and one substep more).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeculativeMargin {
    /// Every pair within `b + T·s` of touching, `s` the fastest point of any body
    /// ([`solverlab_core::rigid::max_point_speed`]).
    #[default]
    Fastest,
    /// Each pair within `b + T·u` of touching, `u` that pair's own closing speed
    /// ([`solverlab_core::rigid::closing_speed`]: `|v_a − v_b| + |ω_a|·r_a + |ω_b|·r_b`, or
    /// the body's speed against a world collider), the pairs searched with
    /// [`solverlab_core::rigid::closing_margin`]. Bodies moving together (a falling pile)
    /// carry only the contacts they can reach, and bodies meeting head on are caught at twice
    /// the speed `fastest` allows for; a body struck within the step by another, which had no
    /// closing speed towards its own neighbours at the step's start, reaches them
    /// unannounced.
    Relative,
    /// Every pair within `b` of touching, whatever the speeds: Rapier 0.36's default, which
    /// keeps a pair's contacts within its fixed prediction distance (2 cm, four times its
    /// 5 mm slop) and widens it by the pair's relative travel only for bodies with soft CCD,
    /// off by default (Rapier's `narrow_phase/pair_update.rs`). A body that closes more than
    /// `b` within the time the contacts serve is caught only at the next search.
    Fixed,
}

impl SpeculativeMargin {
    /// The margin to search `states` with for contacts serving `time` (s) beyond `base` (m).
    pub(crate) fn search(
        self,
        bodies: &[solverlab_core::rigid::RigidBody],
        states: &[solverlab_core::rigid::RigidState],
        base: f64,
        time: f64,
    ) -> f64 {
        match self {
            SpeculativeMargin::Fastest => base + time * solverlab_core::rigid::max_point_speed(bodies, states),
            SpeculativeMargin::Relative => solverlab_core::rigid::closing_margin(bodies, states, base, time),
            SpeculativeMargin::Fixed => base,
        }
    }

    /// Keeps, of the contacts found with [`SpeculativeMargin::search`], those the rule keeps.
    pub(crate) fn keep(
        self,
        parts: &mut [Vec<solverlab_core::rigid::RigidContact>],
        bodies: &[solverlab_core::rigid::RigidBody],
        states: &[solverlab_core::rigid::RigidState],
        base: f64,
        time: f64,
    ) {
        if self == SpeculativeMargin::Relative {
            solverlab_core::rigid::retain_closing(parts, bodies, states, base, time);
        }
    }
}

/// Sweeps over at least this many rows run their passes on every core (rayon); smaller ones run
/// on one, where the cost of splitting the work would exceed the gain. The relaxation family's
/// sweeps and PGS's coloured sweeps over particle rows share it.
pub const PARALLEL_ROWS: usize = 16_384;

/// The larger of a running residual `r` and a row's residual `res`: the bits of `r.max(res)` for
/// every `res` (a NaN row leaves `r` as it is), in one `maxsd`. `f64::max`'s NaN handling is a
/// chain of several instructions that carries from row to row; it cost the relaxation's coloured
/// sweep about 1 ns per row (15 %).
#[inline(always)]
pub(crate) fn larger(r: f64, res: f64) -> f64 {
    if res > r {
        res
    } else {
        r
    }
}

/// Runs `op` and returns its result; when `parallel`, on a worker thread of the current rayon
/// pool, the caller waiting, unless the caller is one already or the pool has one thread. A
/// parallel pass forked from outside the pool (the command line's frame loop runs on the main
/// thread) injects a job, puts the caller to sleep and wakes it when the pass ends, at every
/// pass: at ten colours a sweep that cost the coloured sweep on the 256² cloth all of its second
/// thread's gain through `simulate`, where the performance experiment, which solves inside
/// `ThreadPool::install`, measured 1.7×. Forked from a worker, the passes of one iteration pay
/// that once. A rayon scope runs its body on a worker thread of the current pool; the body
/// spawns nothing.
pub(crate) fn on_worker<R: Send>(parallel: bool, op: impl FnOnce() -> R + Send) -> R {
    match parallel && rayon::current_thread_index().is_none() && rayon::current_num_threads() > 1 {
        true => rayon::scope(|_| op()),
        false => op(),
    }
}
