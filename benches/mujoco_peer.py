#!/usr/bin/env python3
"""MuJoCo as a peer on solverlab's rigid-box scenes: cost per step and whether the stacks stand.

What it measures
    For each scene and each MuJoCo solver (PGS, CG, Newton) the script builds the scene as MJCF,
    steps it `--steps` times (default 1000, i.e. 16.7 s at dt = 1/60 s) and reports
      stood                  1 if every cube's centre stayed within 0.125 m (half the half edge,
                             the rule solverlab uses) of its initial position in every step, else 0;
      max_drift_m            the largest distance of any cube centre from its start, over all steps;
      ms_per_step            wall time of the whole loop of mj_step calls (time.perf_counter) divided
                             by the steps; the median over `--repeats` fresh runs (default 5), as the
                             machine is shared and noisy. The timed runs do nothing but mj_step; drift
                             and force come from a separate untimed run (MuJoCo is deterministic);
      floor_normal_force_N   the sum of the normal components (mj_contactForce, first entry in the
                             contact frame) of the contacts involving the floor at the last step,
                             next to weight_N = total mass * 9.81.
    Results go to results/mujoco_peer/runs.csv and meta.json (relative to the repository root).

How to run (from the repository root; takes a few minutes)
    python3 benches/mujoco_peer.py [--steps 1000] [--repeats 5]

Scenes (SI units). solverlab has gravity -9.81 along y; here MuJoCo's convention is used: z up,
gravity (0, 0, -9.81), so solverlab's "height" is z and its sideways axis x is x.
    stack       10 cubes of edge 0.5 m (half 0.25), 10 kg each, friction mu = 0.5 (box-box and
                box-floor), exactly touching; cube i centred at z = 0.25 + 0.5 i and
                x = +0.005 m for even i, -0.005 m for odd i.
    stack x10   the same with the top cube 10 times heavier (100 kg).
    pyramid     rows r = 0..9 (0 = bottom) of 10 - r cubes (same size, mass, mu) centred on x = 0
                with pitch 0.55 m (edge 0.5 + gap 0.05), row r at z = 0.25 + 0.5 r; 55 cubes.
    Every cube is a free body (freejoint) with a box geom (density-free: explicit mass, uniform-box
    inertia); the floor is a plane geom at z = 0.

MuJoCo settings: timestep 1/60 s, integrator Euler (default), cone pyramidal (default), condim 3
(plain Coulomb friction, geom friction "0.5 0.005 0.0001", only the first entry matters for condim 3;
MuJoCo combines a pair's friction by max, both are 0.5), default contact softness solref (0.02, 1)
and solimp (0.9, 0.95, 0.001, 0.5, 2), margin 0, impratio 1, no noslip; solver iterations and
tolerance left at their defaults (printed and written to the CSV). Note MuJoCo clamps the solref
time constant to at least 2 dt (0.033 s here), so contacts are somewhat softer than the nominal 0.02 s.

Caveat on max_drift_m: with margin 0 MuJoCo drops contacts whose distance is exactly 0 (exclude = 1,
"in gap"), so the exactly-touching cubes first fall together and the contacts switch on one layer
per step from the floor up; the top cube free-falls ~8-9 steps (g dt^2 n(n+1)/2 = 0.098-0.123 m)
before it is caught. max_drift_m therefore mostly records this start-up drop, not later drift.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import statistics
import sys
import time

import mujoco
import numpy as np

SIZE, MASS, MU, G = 0.5, 10.0, 0.5, 9.81
HALF = SIZE / 2
IN_PLACE = 0.5 * HALF  # 0.125 m
SOLVERS = ["PGS", "CG", "Newton"]


def stack_cubes(top_ratio):
    """(x, z, mass) of the 10-cube stack, the top cube `top_ratio` times heavier."""
    n = 10
    return [(0.005 if i % 2 == 0 else -0.005, HALF + SIZE * i, MASS * (top_ratio if i == n - 1 else 1.0))
            for i in range(n)]


def pyramid_cubes(base=10, gap=0.05):
    pitch, cubes = SIZE + gap, []
    for r in range(base):
        count = base - r
        cubes += [((k - (count - 1) / 2) * pitch, HALF + SIZE * r, MASS) for k in range(count)]
    return cubes


SCENES = {"stack": stack_cubes(1.0), "stack x10": stack_cubes(10.0), "pyramid": pyramid_cubes()}


def mjcf(cubes, solver):
    """MJCF text for a list of (x, z, mass) cubes on a floor, using `solver`."""
    fr = f"{MU} 0.005 0.0001"
    bodies = []
    for k, (x, z, m) in enumerate(cubes):
        inertia = m * SIZE * SIZE / 6  # uniform cube: m (a^2 + a^2) / 12
        bodies.append(
            f'<body name="cube{k}" pos="{x!r} 0 {z!r}"><freejoint/>'
            f'<inertial pos="0 0 0" mass="{m!r}" diaginertia="{inertia!r} {inertia!r} {inertia!r}"/>'
            f'<geom type="box" size="{HALF} {HALF} {HALF}" condim="3" friction="{fr}"/></body>')
    return (f'<mujoco><option timestep="{1 / 60!r}" gravity="0 0 {-G}" solver="{solver}"/>'
            f'<worldbody><geom name="floor" type="plane" size="0 0 1" condim="3" friction="{fr}"/>'
            + "".join(bodies) + "</worldbody></mujoco>")


def centres(model, data, adr):
    return data.qpos[adr[:, None] + np.arange(3)]


def measure(model, steps):
    """Untimed run: (stood, max drift, floor normal force at the last step)."""
    data = mujoco.MjData(model)
    adr = model.jnt_qposadr[model.body_jntadr[1:]]
    start = centres(model, data, adr).copy()
    worst = 0.0
    for _ in range(steps):
        mujoco.mj_step(model, data)
        worst = max(worst, float(np.linalg.norm(centres(model, data, adr) - start, axis=1).max()))
    floor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    f, total = np.zeros(6), 0.0
    for i in range(data.ncon):
        c = data.contact[i]
        if floor in (c.geom1, c.geom2):
            mujoco.mj_contactForce(model, data, i, f)
            total += f[0]
    return worst <= IN_PLACE, worst, total


def time_steps(model, steps, repeats):
    """Median over `repeats` fresh runs of the mean wall time per mj_step (ms)."""
    per = []
    for _ in range(repeats):
        data = mujoco.MjData(model)
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(model, data)
        per.append((time.perf_counter() - t0) / steps * 1e3)
    return statistics.median(per)


def write_atomic(path, write):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as fh:
        write(fh)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "results", "mujoco_peer")
    os.makedirs(out, exist_ok=True)

    rows = []
    print(f"MuJoCo {mujoco.__version__}, {args.steps} steps of 1/60 s, median of {args.repeats} timings")
    print(f"{'scene':<10} {'solver':<7} {'iter':>5} {'tol':>7} {'stood':>5} {'drift m':>9} "
          f"{'ms/step':>8} {'floor N':>9} {'weight N':>9}")
    for scene, cubes in SCENES.items():
        weight = sum(m for _, _, m in cubes) * G
        for solver in SOLVERS:
            model = mujoco.MjModel.from_xml_string(mjcf(cubes, solver))
            stood, drift, force = measure(model, args.steps)
            ms = time_steps(model, args.steps, args.repeats)
            row = dict(scene=scene, solver=solver, iterations=model.opt.iterations,
                       tolerance=model.opt.tolerance, steps=args.steps, stood=int(stood),
                       max_drift_m=drift, ms_per_step=ms, floor_normal_force_N=force,
                       weight_N=weight, mujoco_version=mujoco.__version__)
            rows.append(row)
            print(f"{scene:<10} {solver:<7} {row['iterations']:>5} {row['tolerance']:>7.0e} {row['stood']:>5} "
                  f"{drift:>9.4f} {ms:>8.3f} {force:>9.1f} {weight:>9.1f}", flush=True)

    def write_csv(fh):
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    write_atomic(os.path.join(out, "runs.csv"), write_csv)
    m = mujoco.MjModel.from_xml_string(mjcf(SCENES["stack"], "Newton"))
    meta = {
        "mujoco_version": mujoco.__version__,
        "python_version": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python3"] + sys.argv),
        "steps": args.steps, "repeats": args.repeats, "timestep": m.opt.timestep,
        "iterations": int(m.opt.iterations), "tolerance": float(m.opt.tolerance),
        "ls_iterations": int(m.opt.ls_iterations), "cone": int(m.opt.cone),
        "integrator": int(m.opt.integrator), "impratio": float(m.opt.impratio),
        "solref": m.geom_solref[1].tolist(), "solimp": m.geom_solimp[1].tolist(),
        "condim": 3, "friction": MU,
    }
    write_atomic(os.path.join(out, "meta.json"), lambda fh: json.dump(meta, fh, indent=2))
    print(f"wrote {os.path.relpath(out, root)}/runs.csv and meta.json")


if __name__ == "__main__":
    main()
