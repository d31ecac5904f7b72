//! Benchmarks live in benches/.
