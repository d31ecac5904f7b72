//! Linear algebra of the explicit-Jacobian solvers (CG and the faer direct reference).
//!
//! The scene is a hanging cloth, `cloth pin=top layout=vertical shear=false`: structural sticks
//! only, the top row fixed, so `A = J W Jᵀ + εI` is well posed and not redundant (128×128 has
//! 32 385 rows). The rows are gathered at a predicted state (one Verlet step of gravity) and `ε`
//! is the CG default, 10⁻⁶ × the mean diagonal of `J W Jᵀ`. Criterion groups, on 128×128, with a
//! throughput of one element per row (per row and iteration for CG, per nonzero for SpMV):
//!
//! * `assembly_cloth128`: `gather_row_set`, `System::set_jacobian` and `System::assemble`, the last
//!   two with the sparsity pattern reused (the case of every step after the first).
//! * `cg_cloth128`: 50 Jacobi-preconditioned CG iterations on the assembled `A` and matrix-free,
//!   and one `System::apply` (`A·x`) each way.
//! * `cholesky_cloth128`: faer's symbolic factorisation (AMD ordering and elimination tree),
//!   the numeric factorisation reusing it, the triangular solves, and the whole
//!   `Cholesky::factor_and_solve` with the symbolic part reused.
//! * `spmv_cloth128`: `csr_mul` against faer's `sparse_dense_matmul` on the same `A`.
//!
//! The `linear cloth …` lines printed at the end time the same operations with `Instant`, median
//! of 15 rounds, for 128×128 and 64×64; the SpMV ratio alternates ours and faer's within each
//! round, like the `ratio` lines of `kernels.rs`.

#![allow(missing_docs)] // criterion_group! generates undocumented items

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, SymbolicCholeskyRaw};
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Accum, MatMut, MatRef, Par, Side};
use nalgebra_sparse::CsrMatrix;
use solverlab_core::rows::{gather_row_set, RowSet, RowView};
use solverlab_core::{NullObserver, Scene, Vec3};
use solverlab_solvers::cg::Pcg;
use solverlab_solvers::direct::Cholesky;
use solverlab_solvers::jacobian::{csr_mul, System};
use solverlab_solvers::newton::{Linear, LinearStop};
use solverlab_solvers::Preconditioner;

/// CG iterations per timed solve.
const CG_ITERATIONS: usize = 50;
/// Rounds per median in the printed summary.
const ROUNDS: usize = 15;

/// The rows, `J` and `A` of a hanging cloth at a predicted state.
struct Fixture {
    n: usize,
    scene: Scene,
    x: Vec<Vec3>,
    t: f64,
    w: Vec<f64>,
    rows: RowSet,
    eps: f64,
    /// `J` set and `A` assembled.
    sys: System,
    /// The Newton right-hand side `−C`.
    b: Vec<f64>,
}

impl Fixture {
    fn new(n: usize) -> Self {
        let params =
            [format!("nx={n}"), format!("ny={n}"), "pin=top".into(), "layout=vertical".into(), "shear=false".into()];
        let scene = solverlab_scenes::resolve("cloth", &params).expect("cloth builds");
        let mut state = scene.initial_state(scene.dt);
        solverlab_core::integrate::predict(&scene, &[], &mut state, scene.dt);
        let w = scene.inverse_masses();
        let mut rows = RowSet::default();
        gather_row_set(&scene, &state.x, state.time, 0.0, |_| 0.0, &mut rows);
        let eps = 1e-6 * rows.iter().map(|r| r.w_grad2(&w)).sum::<f64>() / rows.len() as f64;
        let b = rows.iter().map(|r| -r.c).collect();
        let mut fx = Fixture { n, scene, x: state.x, t: state.time, w, rows, eps, sys: System::default(), b };
        let mut sys = System::default();
        fx.set_jacobian(&mut sys);
        sys.assemble(&fx.rows, &fx.w);
        fx.sys = sys;
        fx
    }

    fn name(&self) -> String {
        format!("{0}×{0}", self.n)
    }

    fn m(&self) -> usize {
        self.rows.len()
    }

    fn a(&self) -> &CsrMatrix<f64> {
        self.sys.a.as_ref().expect("assembled")
    }

    fn gather(&self, rows: &mut RowSet) {
        gather_row_set(&self.scene, &self.x, self.t, 0.0, |_| 0.0, rows);
    }

    fn set_jacobian(&self, sys: &mut System) -> bool {
        let h = self.scene.dt;
        sys.set_jacobian(&self.rows, &self.w, |r: &RowView| r.compliance / (h * h), self.eps)
    }

    /// The system with `J` only: `System::apply` and CG go matrix-free.
    fn matrix_free(&self) -> System {
        let mut sys = self.sys.clone();
        sys.a = None;
        sys
    }
}

/// The CSR arrays of the symmetric `A` read as CSC, which is `A` itself.
fn faer_view(a: &CsrMatrix<f64>) -> SparseColMatRef<'_, usize, f64> {
    let n = a.nrows();
    let symbolic = SymbolicSparseColMatRef::new_checked(n, n, a.row_offsets(), None, a.col_indices());
    SparseColMatRef::new(symbolic, a.values())
}

/// `y = A x` by faer (a column-wise scatter of the CSC view).
fn faer_mul(a: SparseColMatRef<'_, usize, f64>, x: &[f64], y: &mut [f64]) {
    let n = x.len();
    sparse_dense_matmul(
        MatMut::from_column_major_slice_mut(y, n, 1),
        Accum::Replace,
        a,
        MatRef::from_column_major_slice(x, n, 1),
        1.0,
        Par::Seq,
    );
}

fn faer_solve(llt: &Llt<usize, f64>, b: &[f64], x: &mut [f64]) {
    x.copy_from_slice(b);
    llt.solve_in_place(MatMut::from_column_major_slice_mut(x, b.len(), 1));
}

/// Exactly `iterations` Jacobi-PCG iterations from zero (the tolerance is unreachable) on the
/// assembled `A`, or matrix-free when `sys` is given.
fn cg_fixed(a: &CsrMatrix<f64>, sys: Option<&mut System>, b: &[f64], iterations: usize) -> usize {
    let mut pcg = Pcg::new(1e-300, iterations, Preconditioner::Jacobi);
    let mut x = vec![0.0; b.len()];
    let info = match sys {
        None => pcg.solve_csr(a, b, &mut x, &mut NullObserver),
        Some(sys) => {
            let stop = LinearStop { relative: 1e-300, absolute: 0.0, max_iterations: 0 };
            pcg.solve(sys, b, &mut x, false, stop, &mut |_, _, _| {}).expect("finite")
        }
    };
    assert_eq!(info.iterations, iterations, "CG stopped early");
    std::hint::black_box(&x);
    info.iterations
}

/// Sanity checks before timing: both products agree, and the factorisation solves `A x = b`.
fn check(fx: &Fixture) {
    let a = fx.a();
    let m = fx.m();
    let x: Vec<f64> = (0..m).map(|i| (i as f64 * 0.37).sin()).collect();
    let (mut ours, mut theirs, mut free) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    csr_mul(a, &x, &mut ours);
    faer_mul(faer_view(a), &x, &mut theirs);
    fx.matrix_free().apply(&x, &mut free, &mut Vec::new());
    let scale = ours.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    for other in [&theirs, &free] {
        let worst = ours.iter().zip(other).fold(0.0f64, |s, (p, q)| s.max((p - q).abs()));
        assert!(worst <= 1e-12 * scale, "products disagree by {worst:e} (scale {scale:e})");
    }
    let view = faer_view(a);
    let llt =
        Llt::try_new_with_symbolic(SymbolicLlt::try_new(view.symbolic(), Side::Lower).unwrap(), view, Side::Lower)
            .expect("A is SPD");
    let mut sol = vec![0.0; m];
    faer_solve(&llt, &fx.b, &mut sol);
    csr_mul(a, &sol, &mut ours);
    let norm = |v: &mut dyn Iterator<Item = f64>| v.map(|e| e * e).sum::<f64>().sqrt();
    let residual = norm(&mut ours.iter().zip(&fx.b).map(|(p, q)| p - q)) / norm(&mut fx.b.iter().copied());
    assert!(residual < 1e-8, "direct solve residual {residual:e}");
}

/// `gather_row_set` into a reused store, `set_jacobian` and `assemble` with the pattern reused.
fn assembly(c: &mut Criterion) {
    let fx = Fixture::new(128);
    check(&fx);
    let mut group = c.benchmark_group("assembly_cloth128");
    group.sample_size(10).throughput(Throughput::Elements(fx.m() as u64));
    let mut rows = RowSet::default();
    group.bench_function("gather_row_set", |b| b.iter(|| fx.gather(&mut rows)));
    let mut sys = fx.sys.clone();
    group.bench_function("set_jacobian_reuse", |b| b.iter(|| assert!(!fx.set_jacobian(&mut sys))));
    group.bench_function("assemble_reuse", |b| b.iter(|| sys.assemble(&fx.rows, &fx.w)));
    group.finish();
}

/// Whole CG solves of exactly 50 iterations (assembled and matrix-free; the time includes the
/// diagonal extraction and two extra products, for the initial and final true residual), and
/// single products `A·x` through `System::apply`.
fn cg(c: &mut Criterion) {
    let fx = Fixture::new(128);
    let m = fx.m();
    let mut group = c.benchmark_group("cg_cloth128");
    group.sample_size(10).throughput(Throughput::Elements((m * CG_ITERATIONS) as u64));
    let mut free = fx.matrix_free();
    group.bench_function("pcg_jacobi_50_assembled", |b| b.iter(|| cg_fixed(fx.a(), None, &fx.b, CG_ITERATIONS)));
    group.bench_function("pcg_jacobi_50_matrix_free", |b| {
        b.iter(|| cg_fixed(fx.a(), Some(&mut free), &fx.b, CG_ITERATIONS))
    });
    group.throughput(Throughput::Elements(m as u64));
    let sys = fx.sys.clone();
    let mut y = vec![0.0; m];
    let mut scratch = Vec::new();
    group.bench_function("apply_assembled", |b| b.iter(|| sys.apply(&fx.b, &mut y, &mut scratch)));
    group.bench_function("apply_matrix_free", |b| b.iter(|| free.apply(&fx.b, &mut y, &mut scratch)));
    group.finish();
}

/// faer's sparse Cholesky in its three parts, and `Cholesky::factor_and_solve` with the
/// symbolic factorisation kept (numeric factorisation, solve and the wrapper's checks).
fn cholesky(c: &mut Criterion) {
    let fx = Fixture::new(128);
    let (a, m) = (fx.a(), fx.m());
    let view = faer_view(a);
    let mut group = c.benchmark_group("cholesky_cloth128");
    group.sample_size(10).sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(m as u64));
    group.bench_function("faer_symbolic", |b| b.iter(|| SymbolicLlt::try_new(view.symbolic(), Side::Lower).unwrap()));
    let symbolic = SymbolicLlt::try_new(view.symbolic(), Side::Lower).unwrap();
    group.bench_function("faer_numeric", |b| {
        b.iter(|| Llt::try_new_with_symbolic(symbolic.clone(), view, Side::Lower).unwrap())
    });
    let llt = Llt::try_new_with_symbolic(symbolic.clone(), view, Side::Lower).unwrap();
    let mut x = vec![0.0; m];
    group.bench_function("faer_solve", |b| b.iter(|| faer_solve(&llt, &fx.b, &mut x)));
    let ids: Vec<u64> = (0..m as u64).collect();
    let mut chol = Cholesky::default();
    chol.factor_and_solve(a, &ids, &fx.b, 0.0, &mut x).unwrap();
    group.bench_function("factor_and_solve_reuse", |b| {
        b.iter(|| chol.factor_and_solve(a, &ids, &fx.b, 0.0, &mut x).unwrap())
    });
    group.finish();
}

/// One product `y = A x` by our CSR gather loop and by faer's CSC scatter on the same arrays.
fn spmv(c: &mut Criterion) {
    let fx = Fixture::new(128);
    let (a, m) = (fx.a(), fx.m());
    let view = faer_view(a);
    let mut group = c.benchmark_group("spmv_cloth128");
    group.sample_size(10).throughput(Throughput::Elements(a.nnz() as u64));
    let mut y = vec![0.0; m];
    group.bench_function("csr_mul", |b| b.iter(|| csr_mul(a, &fx.b, &mut y)));
    group.bench_function("faer_sparse_dense_matmul", |b| b.iter(|| faer_mul(view, &fx.b, &mut y)));
    group.finish();
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median over [`ROUNDS`] of the time (s) of one call of `f`, each round timing `batch` calls.
fn time(batch: usize, mut f: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_secs_f64() / batch as f64
        })
        .collect();
    median(&mut samples)
}

/// Median over [`ROUNDS`] of the time (s) of `run` on a fresh `setup()`, setup not timed.
fn time_fresh<S>(mut setup: impl FnMut() -> S, mut run: impl FnMut(&mut S)) -> f64 {
    let mut samples: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let mut s = setup();
            let t = Instant::now();
            run(&mut s);
            let dt = t.elapsed().as_secs_f64();
            std::hint::black_box(&s);
            dt
        })
        .collect();
    median(&mut samples)
}

/// Prints the `linear cloth …` lines for one cloth size.
fn print_summary(n: usize) {
    let fx = Fixture::new(n);
    check(&fx);
    let (a, m) = (fx.a(), fx.m());
    let mf = m as f64;
    let p = format!("linear cloth {}", fx.name());
    let ns_row = |s: f64| s * 1e9 / mf;
    let j_nnz = fx.sys.j.as_ref().expect("set").nnz();
    println!(
        "{p}: {m} rows, {j_nnz} nonzeros in J, {} in A ({:.2} per row), ε = {:.2e}",
        a.nnz(),
        a.nnz() as f64 / mf,
        fx.eps
    );

    let mut rows = RowSet::default();
    let s = time(5, || fx.gather(&mut rows));
    println!("{p}: gather_row_set {:.2} ns per row ({:.3} ms)", ns_row(s), s * 1e3);
    let mut sys = fx.sys.clone();
    let s = time(5, || assert!(!fx.set_jacobian(&mut sys)));
    println!("{p}: set_jacobian, pattern reused {:.2} ns per row ({:.3} ms)", ns_row(s), s * 1e3);
    let s = time_fresh(System::default, |sys| assert!(fx.set_jacobian(sys)));
    println!("{p}: set_jacobian, new pattern {:.2} ns per row ({:.3} ms)", ns_row(s), s * 1e3);
    let s = time(5, || sys.assemble(&fx.rows, &fx.w));
    println!("{p}: assemble A, pattern reused {:.2} ns per row ({:.3} ms)", ns_row(s), s * 1e3);
    let s = time_fresh(|| fx.matrix_free(), |sys| sys.assemble(&fx.rows, &fx.w));
    println!("{p}: assemble A, new pattern {:.2} ns per row ({:.3} ms)", ns_row(s), s * 1e3);

    let mut free = fx.matrix_free();
    let mut y = vec![0.0; m];
    let mut scratch = Vec::new();
    let s = time(10, || sys.apply(&fx.b, &mut y, &mut scratch));
    println!("{p}: apply A·x assembled (csr_mul) {:.2} ns per row per product", ns_row(s));
    let s = time(10, || free.apply(&fx.b, &mut y, &mut scratch));
    println!("{p}: apply A·x matrix-free J(W(Jᵀx)) + shift {:.2} ns per row per product", ns_row(s));
    for (label, assembled) in [("assembled A", true), ("matrix-free", false)] {
        let mut run = |it: usize| {
            time(1, || {
                cg_fixed(a, (!assembled).then_some(&mut free), &fx.b, it);
            })
        };
        let (t10, t50) = (run(10), run(CG_ITERATIONS));
        println!(
            "{p}: cg Jacobi {label}, {CG_ITERATIONS} iterations {:.2} ns per row per iteration ({:.3} ms per solve, setup included)",
            ns_row(t50) / CG_ITERATIONS as f64,
            t50 * 1e3
        );
        println!(
            "{p}: cg Jacobi {label}, marginal iteration (t50 − t10)/40 {:.2} ns per row",
            ns_row(t50 - t10) / (CG_ITERATIONS - 10) as f64
        );
    }

    let view = faer_view(a);
    let raw = factorize_symbolic_cholesky(view.symbolic(), Side::Lower, Default::default(), Default::default())
        .expect("symbolic");
    let kind = match raw.raw() {
        SymbolicCholeskyRaw::Simplicial(_) => "simplicial",
        SymbolicCholeskyRaw::Supernodal(_) => "supernodal",
    };
    let s = time(1, || {
        std::hint::black_box(SymbolicLlt::try_new(view.symbolic(), Side::Lower).unwrap());
    });
    println!(
        "{p}: faer symbolic Cholesky (AMD + elimination tree, {kind}, {} stored values in L, {:.1} per row) {:.3} ms",
        raw.len_val(),
        raw.len_val() as f64 / mf,
        s * 1e3
    );
    let symbolic = SymbolicLlt::try_new(view.symbolic(), Side::Lower).unwrap();
    let s = time(1, || {
        std::hint::black_box(Llt::try_new_with_symbolic(symbolic.clone(), view, Side::Lower).unwrap());
    });
    println!("{p}: faer numeric Cholesky, symbolic reused {:.3} ms ({:.1} ns per row)", s * 1e3, ns_row(s));
    let llt = Llt::try_new_with_symbolic(symbolic, view, Side::Lower).unwrap();
    let mut x = vec![0.0; m];
    let s = time(5, || faer_solve(&llt, &fx.b, &mut x));
    println!("{p}: faer solve L Lᵀ x = b {:.3} ms ({:.1} ns per row)", s * 1e3, ns_row(s));
    let ids: Vec<u64> = (0..m as u64).collect();
    let s = time(1, || Cholesky::default().factor_and_solve(a, &ids, &fx.b, 0.0, &mut x).unwrap());
    println!("{p}: Cholesky::factor_and_solve, new pattern {:.3} ms", s * 1e3);
    let mut chol = Cholesky::default();
    chol.factor_and_solve(a, &ids, &fx.b, 0.0, &mut x).unwrap();
    let s = time(1, || chol.factor_and_solve(a, &ids, &fx.b, 0.0, &mut x).unwrap());
    println!("{p}: Cholesky::factor_and_solve, symbolic reused {:.3} ms", s * 1e3);

    // SpMV: ours and faer's alternate within each round; 10 products per timing.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let per = 10.0 * a.nnz() as f64;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..10 {
            csr_mul(a, &fx.b, &mut y);
        }
        ours.push(t.elapsed().as_secs_f64() * 1e9 / per);
        let t = Instant::now();
        for _ in 0..10 {
            faer_mul(view, &fx.b, &mut y);
        }
        theirs.push(t.elapsed().as_secs_f64() * 1e9 / per);
        std::hint::black_box(&y);
    }
    let (o, f) = (median(&mut ours), median(&mut theirs));
    println!(
        "{p}: spmv A·x csr_mul {o:.3} ns per nonzero, faer sparse_dense_matmul {f:.3} ns per nonzero, ratio ours/faer {:.2}",
        o / f
    );
}

/// The summary block: every measurement above, timed directly, on 128×128 and 64×64.
fn summary(_: &mut Criterion) {
    println!();
    for n in [128, 64] {
        print_summary(n);
    }
}

criterion_group!(benches, assembly, cg, cholesky, spmv, summary);
criterion_main!(benches);
