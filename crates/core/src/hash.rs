//! The state hash recorded in every run's metadata.
//!
//! FNV-1a (64-bit) over the exact bit patterns of every position and previous position, in
//! particle order. Two runs with the same hash ended in bit-identical states.

use crate::State;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over a sequence of `f64` bit patterns.
pub fn hash_f64s(values: impl IntoIterator<Item = f64>) -> u64 {
    let mut h = FNV_OFFSET;
    for v in values {
        for byte in v.to_bits().to_le_bytes() {
            h ^= byte as u64;
            h = h.wrapping_mul(FNV_PRIME);
        }
    }
    h
}

/// The hash of a state: positions then previous positions, bit for bit, then each rigid body's
/// position, orientation (w, x, y, z), velocity, angular velocity, rest time and sleep flag.
pub fn state_hash(state: &State) -> u64 {
    let particles = state.x.iter().chain(state.x_prev.iter()).flat_map(|v| [v.x, v.y, v.z]);
    let rigid = state.rigid.iter().flat_map(|r| {
        let q = r.q.quaternion();
        let asleep = if r.asleep { 1.0 } else { 0.0 };
        [r.x.x, r.x.y, r.x.z, q.w, q.i, q.j, q.k, r.v.x, r.v.y, r.v.z, r.w.x, r.w.y, r.w.z, r.rest_time, asleep]
    });
    hash_f64s(particles.chain(rigid))
}

/// A hash formatted as 16 hexadecimal digits, as written to `meta.json`.
pub fn hex(h: u64) -> String {
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_of_nothing_is_the_offset_basis() {
        assert_eq!(hash_f64s([]), FNV_OFFSET);
    }

    #[test]
    fn one_bit_changes_the_hash() {
        let a = hash_f64s([1.0, 2.0]);
        let b = hash_f64s([1.0, f64::from_bits(2.0f64.to_bits() ^ 1)]);
        assert_ne!(a, b);
        assert_ne!(hash_f64s([0.0]), hash_f64s([-0.0]), "the hash sees bits, not values");
    }
}
