//! The block solves of a manifold's normal rows in a sweep (step 6 of [`super`]): Rapier 0.36's
//! pairs of rows (`block_pairs`, [`Visit::normal_pair`]) and the whole manifold's small
//! complementarity problem (`block`, [`Visit::block_normals`]).

use super::sweep::{apply_impulse, push, row_speed, Visit};
use super::*;
use crate::pgs::joints::Velocities;

impl Visit<'_> {
    /// Two normal rows of one manifold solved together (`block_pairs`, Rapier 0.36's block
    /// solver): with `K₁₂` the rows' coupling, `K₁₁ = 1/m₁`, `K₂₂ = 1/m₂`, the softness in
    /// `K'ᵢᵢ = Kᵢᵢ/sᵢ` (`sᵢ` the row's mass scale, 1 in the relax sweeps and for a speculative
    /// point), speeds `vᵢ = J v + biasᵢ` and impulses `λ`, the 2 × 2 problem
    /// `x ≥ 0, K'x + b ≥ 0, xᵢ(K'x + b)ᵢ = 0` with `b = v − Kλ` (one row alone gives the
    /// point-by-point soft rule `x = s·(λ − m·v)`). The candidates are tried in the order both,
    /// the first only, the second only, neither (a candidate's row at zero is checked at its
    /// physical speed `bᵢ + K₁₂x_j`); with none valid the impulses stay. SOR `ω` scales the
    /// change (clamped to `x ≥ 0`). A pair that is not a block ([`Pair::block`]) goes point by point.
    /// Each point's residual is its impulse change times `1/(m·s)` over `ω`, m/s (none in a
    /// pass that is not counted, [`Visit::counted`]).
    #[inline(always)]
    pub(super) fn normal_pair<V: Velocities + ?Sized>(
        &self,
        vel: &mut V,
        Pair { k11, k12, k22, block }: Pair,
        pair: &mut [Point],
        inv_omega: f64,
        pass: usize,
    ) -> [(f64, Option<f64>); 2] {
        let [p, q] = pair else { unreachable!("a pair has two points") };
        let (bias_p, s_p, bias_q, s_q) = if pass == 0 {
            (p.bias, p.mass_scale, q.bias, q.mass_scale)
        } else {
            (p.relax_bias, 1.0, q.relax_bias, 1.0)
        };
        if !(block && s_p > 0.0 && s_q > 0.0) {
            return [self.normal_row(vel, p, inv_omega, pass), self.normal_row(vel, q, inv_omega, pass)];
        }
        let vp = row_speed(vel, p.a, p.b, &p.n, &p.row) + bias_p;
        let vq = row_speed(vel, q.a, q.b, &q.n, &q.row) + bias_q;
        let (kp11, kp22) = (k11 / s_p, k22 / s_q);
        let det = kp11 * kp22 - k12 * k12;
        let inv_det = 1.0 / det;
        let (lp, lq) = (p.ln, q.ln);
        let b1 = vp - k11 * lp - k12 * lq;
        let b2 = vq - k12 * lp - k22 * lq;
        let both = ((k12 * b2 - kp22 * b1) * inv_det, (k12 * b1 - kp11 * b2) * inv_det);
        let (first, second) = (-b1 * (s_p * p.mn), -b2 * (s_q * q.mn));
        let (x, y) = if det > 0.0 && both.0 >= 0.0 && both.1 >= 0.0 {
            both
        } else if first >= 0.0 && b2 + k12 * first >= 0.0 {
            (first, 0.0)
        } else if second >= 0.0 && b1 + k12 * second >= 0.0 {
            (0.0, second)
        } else if b1 >= 0.0 && b2 >= 0.0 {
            (0.0, 0.0)
        } else {
            (lp, lq)
        };
        let omega = self.omega;
        let (x, y) =
            if omega == 1.0 { (x, y) } else { ((lp + omega * (x - lp)).max(0.0), (lq + omega * (y - lq)).max(0.0)) };
        let (dp, dq) = (x - lp, y - lq);
        (p.ln, q.ln) = (x, y);
        let (rp, rq) = (&p.row, &q.row);
        push(vel, p.a, p.b, p.n * dp + q.n * dq, (rp.ima, rp.imb), rp.ga * dp + rq.ga * dq, rp.gb * dp + rq.gb * dq);
        if !self.counted() {
            return [(dp, None), (dq, None)];
        }
        [(dp, Some(dp.abs() * inv_omega * p.inv_mn[pass])), (dq, Some(dq.abs() * inv_omega * q.inv_mn[pass]))]
    }

    /// One block visit of manifold `m`'s normal rows (`block`): the linear complementarity
    /// problem `x ≥ 0, w = v + A·(x − λ) ≥ 0, xᵢ·wᵢ = 0` of its points, with `v` their (biased)
    /// normal speeds, `A` their coupling ([`Coupling`]) and `λ` their accumulated
    /// impulses. Active sets are tried from all points down (fewest points dropped first); the
    /// first whose impulses are non-negative and whose other points do not approach wins. Within
    /// a set the change is the minimum-norm solution (pseudo-inverse): four coplanar points carry
    /// a body that has three degrees of freedom against them, so the split of the load among them
    /// is not unique, and the minimum change keeps the part the warm start brought. The result
    /// is scaled by `omega` and clamped to `x ≥ 0`. `None` (the caller goes point by point)
    /// when no set qualifies or the rows are soft.
    pub(super) fn block_normals<V: Velocities + ?Sized>(
        &self,
        vel: &mut V,
        m: &Manifold,
        points: &mut [Point],
    ) -> Option<(f64, SweepStats)> {
        let omega = self.omega;
        let biased = self.pass == Pass::Biased;
        let c = points.len();
        let (mut v, mut lam) = ([0.0; 4], [0.0; 4]);
        let (mut max, mut sum2, mut count) = (0.0_f64, 0.0, 0usize);
        for i in 0..c {
            let p = &points[i];
            if biased && (p.mass_scale != 1.0 || p.impulse_scale != 0.0) {
                return None;
            }
            let bias = if biased { p.bias } else { p.relax_bias };
            let (va, wa) = vel.get(p.a);
            let mut rel = va + wa.cross(&p.ra);
            if let Some(b) = p.b {
                let (vb, wb) = vel.get(b);
                rel -= vb + wb.cross(&p.rb);
            }
            v[i] = p.n.dot(&rel) + bias;
            lam[i] = p.ln;
            if p.mn > 0.0 {
                // The residual the point-by-point rule reports (see the module docs).
                let r = ((p.ln - p.mn * v[i]).max(0.0) - p.ln).abs() * p.inv_mn[1];
                max = max.max(r);
                sum2 += r * r;
                count += 1;
            }
        }
        let block = &self.couplings[m.index];
        let a = |i: usize, j: usize| block.a[4 * i + j];
        let scale = (0..c).map(|i| a(i, i)).fold(0.0, f64::max);
        let lam_max = lam[..c].iter().copied().fold(0.0, f64::max);
        let full = (1usize << c) - 1;
        for set in ACTIVE_SETS.into_iter().filter(|&set| set & !full == 0) {
            let inside = |i: usize| set & (1 << i) != 0;
            let mut d = [0.0; 4];
            for i in (0..c).filter(|&i| !inside(i)) {
                d[i] = -lam[i];
            }
            let mut rhs = [0.0; 4];
            for i in (0..c).filter(|&i| inside(i)) {
                rhs[i] = -(v[i] + (0..c).filter(|&j| !inside(j)).map(|j| a(i, j) * d[j]).sum::<f64>());
            }
            if set == full {
                for (i, di) in d.iter_mut().enumerate().take(c) {
                    *di = (0..c).map(|j| block.pinv[4 * i + j] * rhs[j]).sum();
                }
            } else if set != 0 {
                let (mut idx, mut k) = ([0usize; 4], 0);
                for i in (0..c).filter(|&i| inside(i)) {
                    (idx[k], k) = (i, k + 1);
                }
                let idx = &idx[..k];
                // A proper subset has at most three points: a direct solve (Cholesky for three),
                // or the pseudo-inverse when the block is (nearly) singular.
                let mut sub = Matrix3::identity();
                let mut b = Vec3::zeros();
                for (r, &i) in idx.iter().enumerate() {
                    for (q, &j) in idx.iter().enumerate() {
                        sub[(r, q)] = a(i, j);
                    }
                    b[r] = rhs[i];
                }
                let tiny = 1e-9 * scale;
                let det2 = sub[(0, 0)] * sub[(1, 1)] - sub[(0, 1)] * sub[(1, 0)];
                let direct = match k {
                    1 if sub[(0, 0)] > tiny => Some(Vec3::new(b[0] / sub[(0, 0)], 0.0, 0.0)),
                    2 if det2 > tiny * scale => Some(Vec3::new(
                        (sub[(1, 1)] * b[0] - sub[(0, 1)] * b[1]) / det2,
                        (sub[(0, 0)] * b[1] - sub[(1, 0)] * b[0]) / det2,
                        0.0,
                    )),
                    3 => sub
                        .cholesky()
                        .filter(|ch| (0..3).all(|r| ch.l_dirty()[(r, r)].powi(2) > tiny))
                        .map(|ch| ch.solve(&b)),
                    _ => None,
                };
                let x = match direct {
                    Some(x) => x,
                    None => {
                        let mut sub4 = Matrix4::zeros();
                        sub4.fixed_view_mut::<3, 3>(0, 0).copy_from(&sub);
                        let pinv = pseudo_inverse(&sub4, k);
                        Vec3::from_fn(|r, _| (0..k).map(|q| pinv[(r, q)] * b[q]).sum())
                    }
                };
                for (r, &i) in idx.iter().enumerate() {
                    d[i] = x[r];
                }
            }
            let impulses_ok = (0..c).filter(|&i| inside(i)).all(|i| lam[i] + d[i] >= -1e-12 * lam_max.max(1e-12));
            let speeds_ok = (0..c)
                .filter(|&i| !inside(i))
                .all(|i| v[i] + (0..c).map(|j| a(i, j) * d[j]).sum::<f64>() >= -1e-9 * scale.max(1.0));
            if !(impulses_ok && speeds_ok) {
                continue;
            }
            let (mut total, mut dl2) = (0.0, 0.0);
            for (i, p) in points.iter_mut().enumerate() {
                let new = (lam[i] + omega * d[i]).max(0.0);
                let change = new - p.ln;
                p.ln = new;
                total += new;
                dl2 += change * change;
                let masses = (self.inv_m, self.inv_i);
                apply_impulse(vel, masses, p.a, p.b, &p.ra, &p.rb, p.n * change, Vec3::zeros());
            }
            return Some((total, (max, sum2, count, dl2)));
        }
        None
    }
}

/// How many units a sweep visits for manifold `m`'s `len` normal rows ([`Visit::normal_unit`]).
#[inline(always)]
pub(super) fn normal_units(m: &Manifold, len: usize) -> usize {
    if m.paired {
        len.div_ceil(2)
    } else {
        len
    }
}

/// The active sets of a block of up to four points, most points first.
pub(super) const ACTIVE_SETS: [usize; 16] = [15, 14, 13, 11, 7, 12, 10, 9, 6, 5, 3, 8, 4, 2, 1, 0];

/// The pseudo-inverse of the symmetric positive semi-definite `a`, whose leading `c × c` block
/// is used (the rest is zero): eigenvalues below `1e-9` of the largest count as zero.
pub(super) fn pseudo_inverse(a: &Matrix4<f64>, c: usize) -> Matrix4<f64> {
    let mut m = Matrix4::zeros();
    for i in 0..c {
        for j in 0..c {
            m[(i, j)] = 0.5 * (a[(i, j)] + a[(j, i)]);
        }
    }
    let e = nalgebra::SymmetricEigen::new(m);
    let largest = e.eigenvalues.iter().fold(0.0_f64, |x, y| x.max(y.abs()));
    let mut out = Matrix4::zeros();
    for k in 0..4 {
        let l = e.eigenvalues[k];
        if l > 1e-9 * largest {
            let v = e.eigenvectors.column(k);
            out += v * v.transpose() / l;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block pair of a settling pyramid, visited once from made-up velocities, ends on the
    /// solution of its 2 × 2 problem: impulses `x ≥ 0`, and each row's soft speed
    /// `w = J v + bias + K₁₁(1/s − 1)·x` (the plain speed in the relax pass, `s = 1`) at least 0,
    /// and 0 where it pushes. (Point by point, the first row's impulse moves the second and
    /// one visit leaves the pair off its solution.)
    #[test]
    fn one_visit_solves_a_pair_exactly() {
        let cfg = crate::pgs::config::preset_config("tgs-soft");
        assert!(cfg.block_pairs, "tgs-soft solves pairs");
        let scene = solverlab_scenes::resolve("rigid-pyramid", &["base=6".to_string()]).unwrap();
        let h = scene.dt / 4.0;
        let mut blocks = 0;
        for pass in [Pass::Biased, Pass::Relax] {
            let mut st = scene.initial_state(scene.dt).rigid;
            let mut si = RigidSi::default();
            si.prepare(&scene, &mut st, &cfg, h, 0.0, 4);
            // (The rows of the batches written whole.)
            si.store_full();
            for (k, s) in st.iter_mut().enumerate() {
                let f = k as f64;
                s.v = Vec3::new((1.3 * f).sin(), -0.5 - 0.1 * (0.7 * f).cos(), (2.1 * f).cos()) * 0.3;
                s.w = Vec3::new((0.9 * f).cos(), (1.7 * f).sin(), (0.4 * f).sin());
            }
            let visit = Visit::new((&si.inv_m, &si.inv_i), 1.0, pass, false, si.cone, &[]);
            let pass_index = usize::from(pass != Pass::Biased);
            for m in &si.manifolds {
                assert!(m.paired || !(2..=4).contains(&(m.end - m.start)), "a manifold of 2 to 4 points is paired");
                for (u, pair) in m.pairs.iter().enumerate().filter(|(u, _)| m.start + 2 * u + 1 < m.end) {
                    if !pair.block {
                        continue;
                    }
                    blocks += 1;
                    let points = &mut si.points[m.start + 2 * u..m.start + 2 * u + 2];
                    let [mut p, mut q] = [points[0], points[1]];
                    (p.ln, q.ln) = (0.3, 0.1);
                    let mut two = [p, q];
                    visit.normal_pair(st.as_mut_slice(), *pair, &mut two, 1.0, pass_index);
                    for (r, kii) in two.iter().zip([pair.k11, pair.k22]) {
                        let (bias, s) = if pass == Pass::Biased { (r.bias, r.mass_scale) } else { (r.relax_bias, 1.0) };
                        let w = row_speed(st.as_slice(), r.a, r.b, &r.n, &r.row) + bias + kii * (1.0 / s - 1.0) * r.ln;
                        let scale = 1.0 + w.abs() + r.ln * kii;
                        assert!(r.ln >= 0.0, "an impulse pulls: {}", r.ln);
                        assert!(w >= -1e-9 * scale, "a row approaches after its pair's visit: {w}");
                        assert!((r.ln * w).abs() <= 1e-9 * scale * scale, "not complementary: x {} w {w}", r.ln);
                    }
                }
            }
        }
        assert!(blocks > 20, "the pyramid has block pairs: {blocks}");
    }
}
