//! Visiting orders for Gauss-Seidel sweeps, shared by every sequential solver.

use serde::{Deserialize, Serialize};
use solverlab_core::rng::Rng;

/// The order in which a Gauss-Seidel sweep visits constraints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Scene order.
    #[default]
    Natural,
    /// Scene order backwards.
    Reversed,
    /// Forward then backward; one iteration costs two sweeps (symmetric Gauss-Seidel).
    Symmetric,
    /// A fresh seeded random permutation every sweep.
    Shuffled,
    /// Greedy graph colouring: constraints that share no particle get the same colour, and the
    /// sweep visits colour by colour (within a colour, in scene order). Rows of one colour are
    /// independent, which is what a parallel or SIMD solver exploits. On a chain or a grid of
    /// sticks the colouring is the red-black order, and `red-black` (or `coloured`) names it too.
    #[serde(alias = "red-black", alias = "coloured")]
    Colored,
}

/// A precomputed order.
#[derive(Clone, Debug, Default)]
pub struct Ordering {
    order: Order,
    forward: Vec<usize>,
    backward: Vec<usize>,
    colors: usize,
    /// `Colored`: where each colour starts in `forward`, then its length.
    color_starts: Vec<usize>,
}

impl Ordering {
    /// Builds the order for rows touching the particle pairs `pairs` (a row on one particle
    /// repeats it), over `n_particles` particles.
    pub fn new(order: Order, pairs: &[[usize; 2]], n_particles: usize) -> Self {
        let natural: Vec<usize> = (0..pairs.len()).collect();
        let mut color_starts = Vec::new();
        let (forward, colors) = match order {
            Order::Natural | Order::Symmetric | Order::Shuffled => (natural, 0),
            Order::Reversed => (natural.into_iter().rev().collect(), 0),
            Order::Colored => {
                let colors = greedy_coloring(pairs, n_particles);
                let count = colors.iter().copied().max().map_or(0, |c| c + 1);
                let mut idx = natural;
                idx.sort_by_key(|&j| colors[j]); // stable: scene order within a colour
                color_starts = (0..count).map(|c| idx.partition_point(|&j| colors[j] < c)).collect();
                color_starts.push(idx.len());
                (idx, count)
            }
        };
        let backward = if order == Order::Symmetric { forward.iter().rev().copied().collect() } else { Vec::new() };
        Self { order, forward, backward, colors, color_starts }
    }

    /// The forward pass (`Shuffled`: as last drawn).
    pub fn forward(&self) -> &[usize] {
        &self.forward
    }

    /// `Colored`: the colours as ranges of the one pass [`Ordering::passes`] gives; empty for
    /// the other orders.
    pub fn color_ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.color_starts.windows(2).map(|w| w[0]..w[1])
    }

    /// The number of colours (for `Colored`; 0 otherwise).
    pub fn colors(&self) -> usize {
        self.colors
    }

    /// The sweeps of one iteration: one, or two for `Symmetric`. `Shuffled` draws a new
    /// permutation from `rng` each time.
    pub fn passes<'s>(&'s mut self, rng: &mut Rng) -> impl Iterator<Item = &'s [usize]> {
        if self.order == Order::Shuffled {
            rng.shuffle(&mut self.forward);
        }
        let second = (self.order == Order::Symmetric).then_some(self.backward.as_slice());
        std::iter::once(self.forward.as_slice()).chain(second)
    }
}

/// The first particle of block `j` when `n` particles are cut into `parts` equal index ranges:
/// the blocks a parallel coloured sweep runs side by side (relax and PGS).
pub(crate) fn block_start(j: usize, parts: usize, n: usize) -> usize {
    (j * n).div_ceil(parts)
}

/// The block (of `parts` over `n` particles) that holds every one of `particles`, or `parts` for
/// a row that straddles two.
pub(crate) fn block_of(particles: &[usize], parts: usize, n: usize) -> usize {
    let block = |i: usize| (i * parts) / n.max(1);
    let b = block(particles[0]);
    if particles.iter().all(|&i| block(i) == b) {
        b
    } else {
        parts
    }
}

/// Sorts one colour's rows by their block (`block`, from [`block_of`]; stable, so rows keep
/// their order within a block) and returns, offset by `start`, where each block's rows begin and
/// then where the straddling rows begin (`parts + 1` entries). Rows of one colour share no
/// particle, so any order within a colour gives the same numbers.
pub(crate) fn group_by_block<T>(rows: &mut [T], parts: usize, start: usize, block: impl Fn(&T) -> usize) -> Vec<usize> {
    rows.sort_by_key(&block);
    (0..=parts).map(|j| start + rows.partition_point(|r| block(r) < j)).collect()
}

/// Greedy colouring of rows so that no two rows sharing a particle share a colour.
pub fn greedy_coloring(pairs: &[[usize; 2]], n_particles: usize) -> Vec<usize> {
    // Colours used so far at each particle, as a growable bit set.
    let mut used: Vec<Vec<u64>> = vec![Vec::new(); n_particles];
    let mut colors = Vec::with_capacity(pairs.len());
    for &[a, b] in pairs {
        let taken = |c: usize, set: &Vec<u64>| set.get(c / 64).is_some_and(|w| w & (1 << (c % 64)) != 0);
        let mut c = 0;
        while taken(c, &used[a]) || taken(c, &used[b]) {
            c += 1;
        }
        for p in [a, b] {
            let set = &mut used[p];
            if set.len() <= c / 64 {
                set.resize(c / 64 + 1, 0);
            }
            set[c / 64] |= 1 << (c % 64);
        }
        colors.push(c);
    }
    colors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coloring_separates_rows_that_share_a_particle() {
        // A chain of 6 links needs 2 colours; a star of 5 rows on one particle needs 5.
        let chain: Vec<[usize; 2]> = (0..6).map(|i| [i, i + 1]).collect();
        let c = greedy_coloring(&chain, 7);
        assert_eq!(c, vec![0, 1, 0, 1, 0, 1]);
        let star: Vec<[usize; 2]> = (1..6).map(|i| [0, i]).collect();
        assert_eq!(greedy_coloring(&star, 6), vec![0, 1, 2, 3, 4]);
        let o = Ordering::new(Order::Colored, &chain, 7);
        assert_eq!(o.forward, vec![0, 2, 4, 1, 3, 5]);
        assert_eq!(o.colors(), 2);
    }

    #[test]
    fn symmetric_gives_two_passes_and_shuffled_changes_each_time() {
        let pairs: Vec<[usize; 2]> = (0..20).map(|i| [i, i + 1]).collect();
        let mut rng = Rng::new(1);
        let mut sym = Ordering::new(Order::Symmetric, &pairs, 21);
        let passes: Vec<Vec<usize>> = sym.passes(&mut rng).map(<[usize]>::to_vec).collect();
        assert_eq!(passes.len(), 2);
        assert_eq!(passes[1], (0..20).rev().collect::<Vec<_>>());
        let mut sh = Ordering::new(Order::Shuffled, &pairs, 21);
        let first: Vec<usize> = sh.passes(&mut rng).next().unwrap().to_vec();
        let second: Vec<usize> = sh.passes(&mut rng).next().unwrap().to_vec();
        assert_ne!(first, second);
    }
}
