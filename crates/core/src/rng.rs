//! Seeded pseudo-randomness: SplitMix64.
//!
//! solverlab owns its generator so that a seed means the same stream on every platform and in
//! every future version, which an external crate does not promise. SplitMix64 (Steele, Lea and
//! Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014) passes BigCrush and needs
//! one `u64` of state.

/// SplitMix64's output function: every input bit reaches every output bit. Also the hash of
/// [`crate::rows::IdMap`].
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A SplitMix64 generator.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded with `seed`; equal seeds give equal streams.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }

    /// A uniform number in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `0..n` (`n > 0`), by Lemire's multiply-shift (bias below 2⁻⁶⁴·n).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// A random unit vector, uniform on the sphere.
    pub fn unit_vector(&mut self) -> crate::Vec3 {
        let z = 2.0 * self.next_f64() - 1.0;
        let phi = std::f64::consts::TAU * self.next_f64();
        let r = (1.0 - z * z).max(0.0).sqrt();
        crate::Vec3::new(r * phi.cos(), r * phi.sin(), z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_known_first_value() {
        let mut a = Rng::new(1234567);
        let mut b = Rng::new(1234567);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        // SplitMix64 reference value for seed 1234567 (first output).
        assert_eq!(Rng::new(1234567).next_u64(), 6457827717110365317);
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut v: Vec<usize> = (0..50).collect();
        Rng::new(7).shuffle(&mut v);
        let mut s = v.clone();
        s.sort_unstable();
        assert_eq!(s, (0..50).collect::<Vec<_>>());
        assert_ne!(v, s, "50 items shuffled into identity is astronomically unlikely");
    }

    #[test]
    fn unit_vectors_are_unit() {
        let mut r = Rng::new(3);
        for _ in 0..100 {
            assert!((r.unit_vector().norm() - 1.0).abs() < 1e-12);
        }
    }
}
