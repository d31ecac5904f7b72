//! The copies of the bodies' velocities the coloured passes of [`super::colors`] read and
//! write: the compact copy a pass on the calling thread works in ([`BodyVel`], through
//! [`Direct`]), the copy the threads of a pass with a large colour share ([`SharedVel`]: each
//! row's two bodies loaded into a [`Local`] copy and stored back, or changed in place by
//! [`InPlace`] on one thread), and the [`Store`] either is to the rows.

use super::*;
use crate::pgs::joints::Velocities;
use std::sync::atomic::{AtomicU64, Ordering};

/// The velocities of a row's two bodies `a` and `b` (`b` is `usize::MAX` for the world, whose
/// velocities no row reads). A fixed body's copy takes the exactly zero changes and is dropped.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Local {
    a: usize,
    b: usize,
    va: Vec3,
    wa: Vec3,
    vb: Vec3,
    wb: Vec3,
}

impl Local {
    /// The velocities of `a` and `b` (or the world), to be loaded.
    pub(super) fn between(a: usize, b: Option<usize>) -> Self {
        let z = Vec3::zeros();
        Local { a, b: b.unwrap_or(usize::MAX), va: z, wa: z, vb: z, wb: z }
    }

    /// Copies the bodies' velocities in.
    #[inline]
    pub(super) fn load(&mut self, vel: &[SharedVel]) {
        (self.va, self.wa) = vel[self.a].get();
        if let Some(s) = vel.get(self.b) {
            (self.vb, self.wb) = s.get();
        }
    }

    /// Writes the movable bodies' velocities back (a fixed body's are left as they were).
    #[inline]
    pub(super) fn store(&self, vel: &[SharedVel], inv_m: &[f64]) {
        if inv_m[self.a] != 0.0 {
            vel[self.a].set(self.va, self.wa);
        }
        if self.b != usize::MAX && inv_m[self.b] != 0.0 {
            vel[self.b].set(self.vb, self.wb);
        }
    }
}

impl Velocities for Local {
    #[inline(always)]
    fn get(&self, k: usize) -> (Vec3, Vec3) {
        if k == self.a {
            (self.va, self.wa)
        } else {
            debug_assert_eq!(k, self.b);
            (self.vb, self.wb)
        }
    }

    #[inline(always)]
    fn add(&mut self, k: usize, dv: Vec3, dw: Vec3) {
        if k == self.a {
            self.va += dv;
            self.wa += dw;
        } else {
            debug_assert_eq!(k, self.b);
            self.vb += dv;
            self.wb += dw;
        }
    }
}

/// The shared velocities read and changed in place, for rows of one large colour on one
/// thread (no other thread touches their bodies): as [`Local`], a fixed body's velocities are
/// left as they were.
pub(super) struct InPlace<'a> {
    pub(super) vel: &'a [SharedVel],
    pub(super) inv_m: &'a [f64],
}

impl Velocities for InPlace<'_> {
    #[inline(always)]
    fn get(&self, k: usize) -> (Vec3, Vec3) {
        self.vel[k].get()
    }

    #[inline(always)]
    fn add(&mut self, k: usize, dv: Vec3, dw: Vec3) {
        if self.inv_m[k] != 0.0 {
            let (v, w) = self.vel[k].get();
            self.vel[k].set(v + dv, w + dw);
        }
    }
}

/// A body's linear and angular velocity (m/s, rad/s), copied out of its [`RigidState`] for the
/// sweeps: a coloured pass reads and writes only these 48 bytes of a body, and each colour
/// reaches bodies all over the state. In the compact copy ([`RigidSi::colored_pass`]) the
/// velocities of 10,000 bodies take 480 kB, not the 1.2 MB of their states: about what a
/// core's second-level cache held on the host this was measured on (512 kB), where the states
/// were not.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct BodyVel {
    pub(super) v: Vec3,
    pub(super) w: Vec3,
}

/// A body's linear and angular velocity as the threads of a coloured pass share them: the six
/// numbers' bits in atomics, read and written with relaxed order (plain moves on x86-64, no
/// locked instruction). Each thread loads a row's two bodies, visits the row and stores them
/// back in the same chunk: within a colour no two rows share a movable body, so no body is
/// written by two threads or read by one while another writes it, and the pool's join ends
/// each colour before the next reads. (Before, each large colour's rows kept their bodies'
/// copies until the calling thread wrote them all back alone, and that write-back was the
/// largest part of the two-thread step the second thread never ran.)
pub(super) struct SharedVel([AtomicU64; 6]);

impl SharedVel {
    pub(super) fn new(v: Vec3, w: Vec3) -> Self {
        SharedVel([v.x, v.y, v.z, w.x, w.y, w.z].map(|x| AtomicU64::new(x.to_bits())))
    }

    #[inline(always)]
    pub(super) fn get(&self) -> (Vec3, Vec3) {
        let x = |i: usize| f64::from_bits(self.0[i].load(Ordering::Relaxed));
        (Vec3::new(x(0), x(1), x(2)), Vec3::new(x(3), x(4), x(5)))
    }

    #[inline(always)]
    pub(super) fn set(&self, v: Vec3, w: Vec3) {
        for (a, x) in self.0.iter().zip([v.x, v.y, v.z, w.x, w.y, w.z]) {
            a.store(x.to_bits(), Ordering::Relaxed);
        }
    }
}

/// The bodies' velocities a pass on the calling thread reads and writes in place: the compact
/// copy ([`BodyVel`]), or the shared one ([`SharedVel`]) between a parallel pass's large
/// colours.
pub(super) trait Store {
    /// Body `k`'s linear and angular velocity.
    fn read(&self, k: usize) -> (Vec3, Vec3);
    /// Sets body `k`'s linear and angular velocity.
    fn write(&mut self, k: usize, v: Vec3, w: Vec3);
}

impl Store for [BodyVel] {
    #[inline(always)]
    fn read(&self, k: usize) -> (Vec3, Vec3) {
        (self[k].v, self[k].w)
    }

    #[inline(always)]
    fn write(&mut self, k: usize, v: Vec3, w: Vec3) {
        self[k] = BodyVel { v, w };
    }
}

/// The bodies' own states, for a pass over few bodies ([`RigidSi::colored_pass`]): their
/// velocities read and written in place, without the compact copy in and out.
impl Store for [RigidState] {
    #[inline(always)]
    fn read(&self, k: usize) -> (Vec3, Vec3) {
        (self[k].v, self[k].w)
    }

    #[inline(always)]
    fn write(&mut self, k: usize, v: Vec3, w: Vec3) {
        (self[k].v, self[k].w) = (v, w);
    }
}

impl Store for [SharedVel] {
    #[inline(always)]
    fn read(&self, k: usize) -> (Vec3, Vec3) {
        self[k].get()
    }

    #[inline(always)]
    fn write(&mut self, k: usize, v: Vec3, w: Vec3) {
        self[k].set(v, w);
    }
}

/// The shared velocities seen from one task of a parallel pass, as a [`Store`]: the rows of
/// one colour share no movable body, so each task writes only its own bodies'.
pub(super) struct Shared<'a>(pub(super) &'a [SharedVel]);

impl Store for Shared<'_> {
    #[inline(always)]
    fn read(&self, k: usize) -> (Vec3, Vec3) {
        self.0[k].get()
    }

    #[inline(always)]
    fn write(&mut self, k: usize, v: Vec3, w: Vec3) {
        self.0[k].set(v, w);
    }
}

/// The bodies' velocities straight in a copy (`S`: [`BodyVel`]s, or [`SharedVel`]s on the
/// calling thread), for rows run one after the other; like [`Local`], it leaves a fixed
/// body's velocities alone (their changes are exactly zero).
pub(super) struct Direct<'s, S: ?Sized + Store> {
    pub(super) st: &'s mut S,
    pub(super) inv_m: &'s [f64],
}

impl<S: ?Sized + Store> Velocities for Direct<'_, S> {
    #[inline]
    fn get(&self, k: usize) -> (Vec3, Vec3) {
        self.st.read(k)
    }

    #[inline]
    fn add(&mut self, k: usize, dv: Vec3, dw: Vec3) {
        if self.inv_m[k] != 0.0 {
            let (v, w) = self.st.read(k);
            self.st.write(k, v + dv, w + dw);
        }
    }
}
