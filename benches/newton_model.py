"""An independent model of one implicit-Euler step of a particle scene with rigid sticks, to test
why the Newton family's Gauss-Newton loop stalls on the cloth (and what would converge).

    python benches/newton_model.py --scene scene.toml --positions positions.csv --frame 50

The scene file comes from `solverlab scene export`; the positions from a run of it with
`--positions-every 1` (frames F-1 and F give the Verlet prediction of step F+1, as solverlab
forms it: x̃ = 2x_F − x_{F−1} + h²g, damping 0). From x̃ it solves

    min ½ (x − x̃)ᵀ M (x − x̃)   subject to   C_i(x) = |x_a − x_b| − L_i = 0

in two ways and prints the violation max|C| after each outer iteration:

* `gauss-newton`: the projection the Newton family runs, Δλ = −(J W Jᵀ)⁻¹ C, x += W Jᵀ Δλ,
  with the same backtracking on Σ C² (halving up to 1/64), Levenberg-Marquardt damping when
  no step lowers it;
* `full-newton`: Newton on the KKT conditions M(x − x̃) − Jᵀλ = 0, C(x) = 0 with the
  geometric stiffness −Σ λ_i ∇²C_i in the (x, x) block (∇²C of a stick is (I − nnᵀ)/ℓ in
  the blocks of its two ends, with opposite signs across them; a stick in tension has λ < 0,
  so its term is positive semidefinite; compressed sticks' terms are dropped to keep the
  block positive definite), backtracking on the mass-weighted KKT residual.

Dense linear algebra (numpy): fine for the 20 × 20 cloth (about 2 700 unknowns).
"""

import argparse
import csv
import sys

import numpy as np

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib


def load(scene_path, positions_path, frame):
    scene = tomllib.load(open(scene_path, "rb"))
    particles = scene["particle"]
    n = len(particles)
    inv_mass = np.array([0.0 if p.get("fixed") else 1.0 / p["mass"] for p in particles])
    x0 = np.array([p["x"] for p in particles], dtype=float)
    sticks = []
    for c in scene.get("constraint", []):
        if c.get("type", "distance") != "distance":
            continue
        a, b = c["a"], c["b"]
        if inv_mass[a] == 0 and inv_mass[b] == 0:
            continue  # between two fixed particles: constant, no row
        rest = c.get("rest", float(np.linalg.norm(x0[a] - x0[b])))
        sticks.append((a, b, rest, c.get("compliance", 0.0)))
    gravity = np.array(scene.get("gravity", [0.0, -9.81, 0.0]))
    h = scene.get("dt", 1.0 / 60.0)
    pos = {}
    with open(positions_path) as f:
        for row in csv.DictReader(f):
            fr = int(row["frame"])
            if fr in (frame - 1, frame):
                pos.setdefault(fr, np.zeros((n, 3)))[int(row["particle"])] = [float(row["x"]), float(row["y"]), float(row["z"])]
    x, x_prev = pos[frame], pos[frame - 1]
    free = inv_mass > 0
    pred = x.copy()
    pred[free] = 2 * x[free] - x_prev[free] + h * h * gravity
    return inv_mass, sticks, pred


def constraints(x, sticks):
    c = np.empty(len(sticks))
    n = np.empty((len(sticks), 3))
    length = np.empty(len(sticks))
    for i, (a, b, rest, _) in enumerate(sticks):
        d = x[a] - x[b]
        l = np.linalg.norm(d)
        c[i], n[i], length[i] = l - rest, d / l, l
    return c, n, length


def jacobian(x, sticks, nparticles):
    c, n, length = constraints(x, sticks)
    J = np.zeros((len(sticks), 3 * nparticles))
    for i, (a, b, _, _) in enumerate(sticks):
        J[i, 3 * a : 3 * a + 3] = n[i]
        J[i, 3 * b : 3 * b + 3] = -n[i]
    return c, n, length, J


def gauss_newton(inv_mass, sticks, pred, tol, cap):
    npart = len(inv_mass)
    w = np.repeat(inv_mass, 3)
    x = pred.copy()
    damping = 1.0
    history = []
    for _ in range(cap):
        c, _, _, J = jacobian(x, sticks, npart)
        history.append(np.abs(c).max())
        if history[-1] <= tol:
            break
        A = (J * w) @ J.T
        eps = 1e-12 * np.mean(np.diag(A))
        merit = c @ c
        accepted = False
        while not accepted and damping <= 1e12:
            dl = np.linalg.solve(A + np.eye(len(c)) * eps * damping, -c)
            dx = (w * (J.T @ dl)).reshape(-1, 3)
            s = 1.0
            while s >= 1 / 64:
                trial = x + s * dx
                ct, _, _ = constraints(trial, sticks)
                if ct @ ct < merit:
                    x, accepted = trial, True
                    damping = max(1.0, damping / 10) if s == 1.0 else damping
                    break
                s /= 2
            if not accepted:
                damping *= 100
        if not accepted:
            break
    return history


def full_newton(inv_mass, sticks, pred, tol, cap, filter_compressed=True):
    npart = len(inv_mass)
    free = np.repeat(inv_mass > 0, 3)
    m = np.where(free, 1.0 / np.where(free, np.repeat(inv_mass, 3), 1.0), 0.0)
    idx = np.nonzero(free)[0]
    x = pred.copy()
    lam = np.zeros(len(sticks))
    history = []
    nf = len(idx)
    for _ in range(cap):
        c, n, length, J = jacobian(x, sticks, npart)
        history.append(np.abs(c).max())
        g = m * (x - pred).ravel() - J.T @ lam
        if history[-1] <= tol and np.abs(g[idx]).max() <= 1e-9 * max(1.0, np.abs(J.T @ lam).max()):
            break
        K = np.diag(m)
        for i, (a, b, _, _) in enumerate(sticks):
            if filter_compressed and lam[i] > 0:
                continue
            P = (np.eye(3) - np.outer(n[i], n[i])) / length[i] * (-lam[i])
            for p, q, sign in ((a, a, 1), (b, b, 1), (a, b, -1), (b, a, -1)):
                K[3 * p : 3 * p + 3, 3 * q : 3 * q + 3] += sign * P
        Jf = J[:, idx]
        kkt = np.block([[K[np.ix_(idx, idx)], -Jf.T], [Jf, np.zeros((len(c), len(c)))]])
        rhs = -np.concatenate([g[idx], c])
        # Redundant rows (more sticks than movable coordinates, or a taut line) make the KKT
        # matrix singular: least squares then gives the minimum-norm step.
        step = np.linalg.lstsq(kkt, rhs, rcond=1e-14)[0]
        dx = np.zeros(3 * npart)
        dx[idx] = step[:nf]
        dl = step[nf:]

        def residual(xv, lv):
            cv, _, _, Jv = jacobian(xv, sticks, npart)
            gv = (m * (xv - pred).ravel() - Jv.T @ lv)[idx] / np.sqrt(m[idx])
            return gv @ gv + cv @ cv

        r0 = residual(x, lam)
        s = 1.0
        while s >= 1 / 1024:
            xt = x + s * dx.reshape(-1, 3)
            lt = lam + s * dl
            if residual(xt, lt) < r0:
                x, lam = xt, lt
                break
            s /= 2
        else:
            break
    return history


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", required=True)
    p.add_argument("--positions", required=True)
    p.add_argument("--frame", type=int, default=50)
    p.add_argument("--tolerance", type=float, default=1e-12)
    p.add_argument("--cap", type=int, default=50)
    a = p.parse_args()
    inv_mass, sticks, pred = load(a.scene, a.positions, a.frame)
    free = int((inv_mass > 0).sum())
    print(f"{len(sticks)} sticks, {3 * free} movable coordinates")
    for name, method in (("gauss-newton", gauss_newton), ("full-newton", full_newton)):
        h = method(inv_mass, sticks, pred, a.tolerance, a.cap)
        shown = " ".join(f"{v:.1e}" for v in h[:14])
        print(f"{name:13s} {len(h):3d} iterations, final {h[-1]:.2e}: {shown}{' …' if len(h) > 14 else ''}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
