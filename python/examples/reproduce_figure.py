"""Reproduce a committed figure with matplotlib from `solverlab.run` output: the friction ramp
(results/friction_ramp/acceleration.png), a block released on an incline with μ = 0.5 under
every family, against Coulomb's a = g·max(0, sin θ − μ cos θ).

    pip install ./python matplotlib            # from the repository root
    python python/examples/reproduce_figure.py [--out friction_ramp]

Runs experiments/friction_ramp.toml into OUT (a second of computing), then draws OUT/ramp.png
from the steps table alone, as the experiment's own figure does.
"""

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import solverlab  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="friction_ramp", help="results folder")
    args = parser.parse_args()

    results = solverlab.run(ROOT / "experiments" / "friction_ramp.toml", out=args.out)
    steps = results.steps
    # The experiment's figure: at each run's last frame, the constant acceleration that carries
    # the block as far as it went, 2Δx/t² (m/s²), Δx the centre of mass' travel along x.
    start = steps[steps["frame"] == 0].set_index("run")["com_x"]
    last = steps.loc[steps.groupby("run")["frame"].idxmax()].copy()
    last["slide_acceleration"] = 2.0 * (last["com_x"] - last["run"].map(start)) / last["time"] ** 2

    scenes = list(dict.fromkeys(last["scene"]))
    fig, axes = plt.subplots(1, len(scenes), figsize=(4.2 * len(scenes), 3.4), sharey=True)
    theta = [0.5 * k for k in range(101)]
    coulomb = [9.81 * max(0.0, math.sin(math.radians(t)) - 0.5 * math.cos(math.radians(t))) for t in theta]
    for ax, scene in zip(axes, scenes):
        for label, runs in last[last["scene"] == scene].groupby("label", sort=False):
            runs = runs.sort_values("scene.angle")
            ax.plot(runs["scene.angle"], runs["slide_acceleration"], marker="o", ms=3, label=label)
        ax.plot(theta, coulomb, "k--", lw=1, label="Coulomb")
        ax.axvline(math.degrees(math.atan(0.5)), color="grey", lw=0.5)
        ax.set_title(scene)
        ax.set_xlabel("incline angle θ (°)")
    axes[0].set_ylabel("acceleration from rest, 2Δx/t² (m/s²)")
    axes[-1].legend(fontsize=7)
    fig.tight_layout()
    path = Path(args.out) / "ramp.png"
    fig.savefig(path, dpi=150)
    print(f"figure: {path} (compare with results/friction_ramp/acceleration.png)")


if __name__ == "__main__":
    main()
