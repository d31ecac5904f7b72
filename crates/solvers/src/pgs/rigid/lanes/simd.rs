//! The lanes' numbers: [`W`] `f64`s in one register ([`Fw`]), their flags ([`Mw`]) and
//! 3-vectors ([`Vw`]), each operation the scalar one in each lane, bit for bit.

use std::ops::{Add, Div, Mul, Neg, Sub};

use super::W;
use crate::pgs::rigid::Vec3;

/// [`W`] `f64` lanes, in one 128-bit register (`wide`'s `f64x2`: SSE2 on x86-64, NEON on
/// aarch64, an array elsewhere). (As `[f64; 2]`, the compiler packed the arithmetic but kept
/// the lanes on the stack between operations: in the warm start on the lanes, a quarter of
/// the instructions moved lanes to and from the stack.)
#[derive(Clone, Copy, Debug)]
pub(super) struct Fw(Raw);

type Raw = wide::f64x2;

/// Lane flags, as all-ones or all-zeros lanes ([`Fw::ge`], [`Mw::of`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Mw(Raw);

/// [`W`] lane flags, as kept in the batches.
pub(super) type Mask = [bool; W];

mod raw {
    //! The lanes' operations, each the scalar operation in each lane, bit for bit.
    use super::{Raw, W};
    use wide::{CmpEq, CmpGe, CmpGt};

    #[inline(always)]
    pub(super) fn splat(x: f64) -> Raw {
        Raw::splat(x)
    }
    #[inline(always)]
    pub(super) fn from_array(a: [f64; W]) -> Raw {
        Raw::from(a)
    }
    #[inline(always)]
    pub(super) fn to_array(x: Raw) -> [f64; W] {
        x.to_array()
    }
    #[inline(always)]
    pub(super) fn add(a: Raw, b: Raw) -> Raw {
        a + b
    }
    #[inline(always)]
    pub(super) fn sub(a: Raw, b: Raw) -> Raw {
        a - b
    }
    #[inline(always)]
    pub(super) fn mul(a: Raw, b: Raw) -> Raw {
        a * b
    }
    #[inline(always)]
    pub(super) fn div(a: Raw, b: Raw) -> Raw {
        a / b
    }
    /// The sign bit flipped, as `-x`.
    #[inline(always)]
    pub(super) fn neg(a: Raw) -> Raw {
        a ^ Raw::splat(-0.0)
    }
    /// The sign bit cleared, as `f64::abs`.
    #[inline(always)]
    pub(super) fn abs(a: Raw) -> Raw {
        a & Raw::splat(f64::from_bits(u64::MAX >> 1))
    }
    /// `a ≥ b` (false with a NaN), as all-ones lanes.
    #[inline(always)]
    pub(super) fn ge(a: Raw, b: Raw) -> Raw {
        a.cmp_ge(b)
    }
    /// `a > b` (false with a NaN), as all-ones lanes.
    #[inline(always)]
    pub(super) fn gt(a: Raw, b: Raw) -> Raw {
        a.cmp_gt(b)
    }
    /// Whether `a` or `b` is NaN, as all-ones lanes.
    #[inline(always)]
    pub(super) fn unordered(a: Raw, b: Raw) -> Raw {
        !(a.cmp_eq(a) & b.cmp_eq(b))
    }
    /// `a == b` (false with a NaN), as all-ones lanes.
    #[inline(always)]
    pub(super) fn eq(a: Raw, b: Raw) -> Raw {
        a.cmp_eq(b)
    }
    #[inline(always)]
    pub(super) fn and(a: Raw, b: Raw) -> Raw {
        a & b
    }
    #[inline(always)]
    pub(super) fn or(a: Raw, b: Raw) -> Raw {
        a | b
    }
    /// The correctly rounded square root, as `f64::sqrt`.
    #[inline(always)]
    pub(super) fn sqrt(a: Raw) -> Raw {
        a.sqrt()
    }
    /// `a` where `m` is all ones, else `b`.
    #[inline(always)]
    pub(super) fn select(m: Raw, a: Raw, b: Raw) -> Raw {
        m.blend(a, b)
    }
    /// The flags `m` as all-ones or all-zeros lanes.
    #[inline(always)]
    pub(super) fn mask(m: [bool; W]) -> Raw {
        Raw::from(m.map(|x| f64::from_bits(if x { u64::MAX } else { 0 })))
    }
}

impl Default for Fw {
    fn default() -> Self {
        Fw::splat(0.0)
    }
}

impl Fw {
    #[inline(always)]
    pub(super) fn splat(x: f64) -> Self {
        Fw(raw::splat(x))
    }

    /// Lane `l` is `f(l)`.
    #[inline(always)]
    pub(super) fn from_fn(f: impl FnMut(usize) -> f64) -> Self {
        Fw(raw::from_array(std::array::from_fn(f)))
    }

    /// The lanes as an array.
    #[inline(always)]
    pub(super) fn lanes(self) -> [f64; W] {
        raw::to_array(self.0)
    }

    /// Lane `l`.
    #[inline(always)]
    pub(super) fn lane(self, l: usize) -> f64 {
        self.lanes()[l]
    }

    /// These lanes with lane `l` set to `x`.
    #[inline(always)]
    pub(super) fn with_lane(self, l: usize, x: f64) -> Self {
        let mut a = self.lanes();
        a[l] = x;
        Fw(raw::from_array(a))
    }

    /// `f64::max` lane by lane (a NaN lane takes the other number, as the scalar visit). On
    /// x86-64 as the compiler forms the scalar `a.max(b)` there: `b` where `a` is NaN, else `b`
    /// where `b > a`, else `a` (so `max(−0, +0)` is −0 and `max(+0, −0)` is +0), with packed
    /// compares and selects (`max_and_min_are_the_scalar_ones` checks each case); elsewhere
    /// lane by lane.
    #[inline(always)]
    pub(super) fn max(self, o: Self) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            // (`maxpd b, a` is `b > a ? b : a`, NaNs going to `a`.)
            let larger = Fw(o.0.fast_max(self.0));
            o.select(self.is_nan(), larger)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let (a, b) = (self.lanes(), o.lanes());
            Fw::from_fn(|l| a[l].max(b[l]))
        }
    }

    /// `f64::min` lane by lane, as [`Fw::max`] with `b < a`.
    #[inline(always)]
    pub(super) fn min(self, o: Self) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            // (`minpd b, a` is `b < a ? b : a`, NaNs going to `a`.)
            let smaller = Fw(o.0.fast_min(self.0));
            o.select(self.is_nan(), smaller)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let (a, b) = (self.lanes(), o.lanes());
            Fw::from_fn(|l| a[l].min(b[l]))
        }
    }

    /// Lane by lane whether the lane is NaN.
    #[inline(always)]
    pub(super) fn is_nan(self) -> Mw {
        Mw(raw::unordered(self.0, self.0))
    }

    #[inline(always)]
    pub(super) fn abs(self) -> Self {
        Fw(raw::abs(self.0))
    }

    /// `self` where `m` holds, else `other`.
    #[inline(always)]
    pub(super) fn select(self, m: Mw, other: Self) -> Self {
        Fw(raw::select(m.0, self.0, other.0))
    }

    /// Lane by lane `a ≥ b`.
    #[inline(always)]
    pub(super) fn ge(self, o: Self) -> Mw {
        Mw(raw::ge(self.0, o.0))
    }

    /// Lane by lane `a > b`.
    #[inline(always)]
    pub(super) fn gt(self, o: Self) -> Mw {
        Mw(raw::gt(self.0, o.0))
    }

    /// Lane by lane `a == b`.
    #[inline(always)]
    pub(super) fn eq(self, o: Self) -> Mw {
        Mw(raw::eq(self.0, o.0))
    }

    /// Lane by lane `a < b`.
    #[inline(always)]
    pub(super) fn lt(self, o: Self) -> Mw {
        o.gt(self)
    }

    /// `f64::sqrt` lane by lane (correctly rounded, as the scalar square root).
    #[inline(always)]
    pub(super) fn sqrt(self) -> Self {
        Fw(raw::sqrt(self.0))
    }
}

impl Mw {
    /// The flags `m` on the lanes.
    #[inline(always)]
    pub(super) fn of(m: Mask) -> Self {
        Mw(raw::mask(m))
    }

    /// Lane by lane `a && b`.
    #[inline(always)]
    pub(super) fn and(self, o: Mw) -> Mw {
        Mw(raw::and(self.0, o.0))
    }

    /// Lane by lane `a || b`.
    #[inline(always)]
    pub(super) fn or(self, o: Mw) -> Mw {
        Mw(raw::or(self.0, o.0))
    }

    /// The flags as booleans.
    #[inline(always)]
    pub(super) fn flags(self) -> Mask {
        raw::to_array(self.0).map(|x| x.to_bits() != 0)
    }
}

macro_rules! lanewise {
    ($tr:ident, $f:ident) => {
        impl $tr for Fw {
            type Output = Fw;
            #[inline(always)]
            fn $f(self, o: Fw) -> Fw {
                Fw(raw::$f(self.0, o.0))
            }
        }
    };
}
lanewise!(Add, add);
lanewise!(Sub, sub);
lanewise!(Mul, mul);
lanewise!(Div, div);

impl Neg for Fw {
    type Output = Fw;
    #[inline(always)]
    fn neg(self) -> Fw {
        Fw(raw::neg(self.0))
    }
}

/// [`W`] 3-vectors, one per lane.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Vw {
    pub(super) x: Fw,
    pub(super) y: Fw,
    pub(super) z: Fw,
}

impl Vw {
    /// Lane `l` is `f(l)`.
    #[inline(always)]
    pub(super) fn from_fn(mut f: impl FnMut(usize) -> Vec3) -> Self {
        let v: [Vec3; W] = std::array::from_fn(&mut f);
        Vw { x: Fw::from_fn(|l| v[l].x), y: Fw::from_fn(|l| v[l].y), z: Fw::from_fn(|l| v[l].z) }
    }

    /// Lane `l` as a vector.
    #[inline(always)]
    pub(super) fn lane(&self, l: usize) -> Vec3 {
        Vec3::new(self.x.lane(l), self.y.lane(l), self.z.lane(l))
    }

    /// The dot product as nalgebra forms it for three components: `(x·x' + y·y') + z·z'`.
    #[inline(always)]
    pub(super) fn dot(&self, o: &Vw) -> Fw {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// The cross product as nalgebra forms it: `(y·z' − z·y', z·x' − x·z', x·y' − y·x')`.
    #[inline(always)]
    pub(super) fn cross(&self, o: &Vw) -> Vw {
        Vw { x: self.y * o.z - self.z * o.y, y: self.z * o.x - self.x * o.z, z: self.x * o.y - self.y * o.x }
    }

    /// `m · v` with lane `l` of `m` from `m(l)`, as nalgebra forms a 3 × 3 matrix times a
    /// vector: column by column, `(m₀·v₀ + m₁·v₁) + m₂·v₂` in each row.
    #[inline(always)]
    pub(super) fn times(&self, m: impl Fn(usize) -> nalgebra::Matrix3<f64>) -> Vw {
        let ms: [nalgebra::Matrix3<f64>; super::W] = std::array::from_fn(m);
        let row = |i: usize| {
            let at = |c: usize| Fw::from_fn(|l| ms[l][(i, c)]);
            at(0) * self.x + at(1) * self.y + at(2) * self.z
        };
        Vw { x: row(0), y: row(1), z: row(2) }
    }

    #[inline(always)]
    pub(super) fn scale(&self, s: Fw) -> Vw {
        Vw { x: self.x * s, y: self.y * s, z: self.z * s }
    }

    #[inline(always)]
    pub(super) fn select(self, m: Mw, other: Vw) -> Vw {
        Vw { x: self.x.select(m, other.x), y: self.y.select(m, other.y), z: self.z.select(m, other.z) }
    }
}

/// [`W`] 3 × 3 matrices, one per lane, by row and column.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct M3w([[Fw; 3]; 3]);

impl M3w {
    /// Lane `l` is `f(l)`.
    #[inline(always)]
    pub(super) fn from_fn(f: impl Fn(usize) -> nalgebra::Matrix3<f64>) -> Self {
        let ms: [nalgebra::Matrix3<f64>; W] = std::array::from_fn(f);
        M3w(std::array::from_fn(|i| std::array::from_fn(|c| Fw::from_fn(|l| ms[l][(i, c)]))))
    }

    /// `m · v` as nalgebra forms it ([`Vw::times`]).
    #[inline(always)]
    pub(super) fn apply(&self, v: &Vw) -> Vw {
        let row = |i: usize| self.0[i][0] * v.x + self.0[i][1] * v.y + self.0[i][2] * v.z;
        Vw { x: row(0), y: row(1), z: row(2) }
    }
}

/// [`W`] unit quaternions, one per lane: the imaginary part and the scalar.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Qw {
    pub(super) v: Vw,
    pub(super) w: Fw,
}

impl Qw {
    /// Lane `l` is `f(l)`.
    #[inline(always)]
    pub(super) fn from_fn(mut f: impl FnMut(usize) -> nalgebra::UnitQuaternion<f64>) -> Self {
        let q: [nalgebra::UnitQuaternion<f64>; W] = std::array::from_fn(&mut f);
        Qw { v: Vw::from_fn(|l| q[l].as_ref().vector().into_owned()), w: Fw::from_fn(|l| q[l].as_ref().scalar()) }
    }

    /// The inverse turns (the conjugates: the imaginary part negated).
    #[inline(always)]
    pub(super) fn inverse(&self) -> Qw {
        Qw { v: -self.v, w: self.w }
    }

    /// `v` turned by each lane's quaternion, as nalgebra's `UnitQuaternion::transform_vector`
    /// forms it: `t = 2·(u × v)`, then `(t·w + u × t) + v`, with `u` the imaginary part.
    #[inline(always)]
    pub(super) fn transform(&self, v: &Vw) -> Vw {
        let t = self.v.cross(v).scale(Fw::splat(2.0));
        let cross = self.v.cross(&t);
        (t.scale(self.w) + cross) + *v
    }
}

impl Add for Vw {
    type Output = Vw;
    #[inline(always)]
    fn add(self, o: Vw) -> Vw {
        Vw { x: self.x + o.x, y: self.y + o.y, z: self.z + o.z }
    }
}

impl Sub for Vw {
    type Output = Vw;
    #[inline(always)]
    fn sub(self, o: Vw) -> Vw {
        Vw { x: self.x - o.x, y: self.y - o.y, z: self.z - o.z }
    }
}

impl Neg for Vw {
    type Output = Vw;
    #[inline(always)]
    fn neg(self) -> Vw {
        Vw { x: -self.x, y: -self.y, z: -self.z }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lanes' `max` and `min` give the scalar `f64::max` and `f64::min` bit for bit on
    /// every pair of signed zeros, ones, infinities, a subnormal and NaNs of either sign, at run
    /// time (the compiler folds constants to `max(−0, +0) = +0`; the solver's operands are
    /// never constants).
    #[test]
    fn max_and_min_are_the_scalar_ones() {
        let v = [0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, 5e-324];
        for &a in &v {
            for &b in &v {
                let (x, y) = (Fw::from_fn(|l| if l == 0 { a } else { b }), Fw::from_fn(|l| if l == 0 { b } else { a }));
                let (max, min) = (x.max(y).lanes(), x.min(y).lanes());
                for (l, (p, q)) in [(a, b), (b, a)].into_iter().enumerate() {
                    let (p, q) = (std::hint::black_box(p), std::hint::black_box(q));
                    assert_eq!(max[l].to_bits(), p.max(q).to_bits(), "max({p:?}, {q:?})");
                    assert_eq!(min[l].to_bits(), p.min(q).to_bits(), "min({p:?}, {q:?})");
                }
            }
        }
    }
}
