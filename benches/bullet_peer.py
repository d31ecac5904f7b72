#!/usr/bin/env python3
"""Bullet (pybullet) as a peer of the `pgs` presets: does the textbook sequential-impulse solver
hold solverlab's rigid stacks at the same iteration and substep budgets?

Why
    Bullet's btSequentialImpulseConstraintSolver is the reference implementation of projected
    Gauss-Seidel with accumulated clamped impulses, warm starting, Baumgarte/ERP feedback and split
    impulses, i.e. what solverlab's `pgs` preset implements. When `pgs` loses a scene, running the
    same scene here tells whether the method or solverlab's implementation lost it.

What it measures
    For each scene, solver iteration count (`--iterations`, default 10 20 50 100) and substeps per
    1/60 s frame (1 and 4), the script steps `--frames` frames (default 1000) and reports
      stood             1 if every cube's centre stayed within 0.125 m of its start in every frame
                        (solverlab's in_place rule), else 0;
      max_drift_m       the largest distance of any cube centre from its start over all frames;
      max_ke_J, final_ke_J  the largest and the last kinetic energy (translational + rotational);
      floor_normal_force_N  the summed normal force of the floor contacts in the last frame, next
                        to weight_N;
      ms_per_frame      wall time of the stepping loop over the frames (shared machine: a rough
                        figure, not a benchmark).

Scenes (SI units, z up in Bullet; solverlab's y is z here)
    stack       10 cubes, edge 0.5 m, 10 kg, mu 0.5 (box-box and floor), exactly touching, cube i at
                height 0.25 + 0.5 i and x = -0.005 m (even i) or +0.005 m (odd i): solverlab's
                `rigid-stack` builtin with its defaults.
    stack x10   the same with a 100 kg top cube (`rigid-stack --set ratio=10`).
    pyramid     rows of 10, 9, ..., 1 cubes (55), pitch 0.55 m (`rigid-pyramid` defaults).

Bullet settings: fixedTimeStep 1/60 s / substeps, numSubSteps 0 (one internal step per call),
numSolverIterations as swept, useSplitImpulse 1 (pybullet's default), erp = contactERP = 0.2,
warm starting on (Bullet's default factor 0.85), no damping, sleeping disabled; Bullet's own
collision margin (0.04 m, inside the box extents) and contact breaking threshold are left at their
defaults. Results: results/bullet_peer/runs.csv and meta.json.

How to run (from the repository root; about a minute)
    python3 -m venv /tmp/pb && /tmp/pb/bin/pip install pybullet numpy
    /tmp/pb/bin/python benches/bullet_peer.py
"""
import argparse
import csv
import datetime
import json
import os
import platform
import time

import pybullet as p

SIZE, MASS, MU, G = 0.5, 10.0, 0.5, 9.81
HALF = SIZE / 2
IN_PLACE = 0.5 * HALF
I_CUBE = MASS * SIZE * SIZE / 6.0


def layout(scene):
    """(x, z, mass) of every cube."""
    if scene.startswith("stack"):
        top = 10.0 if scene == "stack x10" else 1.0
        return [(0.005 if k % 2 else -0.005, HALF + SIZE * k, MASS * (top if k == 9 else 1.0)) for k in range(10)]
    cubes = []
    for r in range(10):
        n = 10 - r
        for c in range(n):
            cubes.append(((c - (n - 1) / 2) * 0.55, HALF + SIZE * r, MASS))
    return cubes


def run(scene, iterations, substeps, frames):
    p.connect(p.DIRECT)
    p.setGravity(0, 0, -G)
    p.setPhysicsEngineParameter(fixedTimeStep=1 / 60 / substeps, numSubSteps=0, numSolverIterations=iterations,
                                useSplitImpulse=1, erp=0.2, contactERP=0.2)
    floor = p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE))
    p.changeDynamics(floor, -1, lateralFriction=MU)
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[HALF] * 3)
    cubes = layout(scene)
    ids = []
    for x, z, m in cubes:
        b = p.createMultiBody(m, shape, basePosition=[x, 0, z])
        p.changeDynamics(b, -1, lateralFriction=MU, linearDamping=0, angularDamping=0,
                         activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING)
        ids.append(b)
    stood, max_drift, max_ke, ke = 1, 0.0, 0.0, 0.0
    start = time.perf_counter()
    for _ in range(frames):
        for _ in range(substeps):
            p.stepSimulation()
        ke = 0.0
        for b, (x, z, m) in zip(ids, cubes):
            pos = p.getBasePositionAndOrientation(b)[0]
            drift = ((pos[0] - x) ** 2 + pos[1] ** 2 + (pos[2] - z) ** 2) ** 0.5
            max_drift = max(max_drift, drift)
            if drift > IN_PLACE:
                stood = 0
            v, w = p.getBaseVelocity(b)
            ke += 0.5 * m * sum(c * c for c in v) + 0.5 * (m * SIZE * SIZE / 6.0) * sum(c * c for c in w)
        max_ke = max(max_ke, ke)
    seconds = time.perf_counter() - start
    force = sum(c[9] for c in p.getContactPoints(bodyA=floor))
    weight = sum(m for _, _, m in cubes) * G
    p.disconnect()
    return dict(scene=scene, iterations=iterations, substeps=substeps, frames=frames, stood=stood,
                max_drift_m=max_drift, max_ke_J=max_ke, final_ke_J=ke, floor_normal_force_N=force,
                weight_N=weight, ms_per_frame=1e3 * seconds / frames)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=1000)
    ap.add_argument("--iterations", type=int, nargs="+", default=[10, 20, 50, 100])
    ap.add_argument("--out", default="results/bullet_peer")
    a = ap.parse_args()
    rows = []
    for scene in ["stack", "stack x10", "pyramid"]:
        for substeps in [1, 4]:
            for it in a.iterations:
                r = run(scene, it, substeps, a.frames)
                r["bullet_version"] = p.getAPIVersion()
                print(r, flush=True)
                rows.append(r)
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, ".runs.csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, os.path.join(a.out, "runs.csv"))
    meta = dict(script="benches/bullet_peer.py", frames=a.frames, python=platform.python_version(),
                pybullet_api=p.getAPIVersion(), machine=platform.machine(),
                written=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)


if __name__ == "__main__":
    main()
