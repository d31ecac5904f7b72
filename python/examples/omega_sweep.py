"""Sweep the relaxation factor ω of Jacobi and SOR on the cloth and collect every run's steps into
one DataFrame.

    pip install ./python            # from the repository root
    python python/examples/omega_sweep.py [--out omega_sweep.csv] [--plot omega_sweep.png]

Prints, for each method and ω, the violation left at the last frame (m) and the run's status
(Jacobi over-relaxed tears the cloth: the run raises DivergedError, and its rows are kept).
With --plot (needs matplotlib) draws the final violation against ω.
"""

import argparse

import pandas as pd

import solverlab


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="omega_sweep.csv", help="the tidy table of every run's steps")
    parser.add_argument("--plot", default=None, help="also draw the final violation against ω (PNG)")
    parser.add_argument("--frames", type=int, default=60)
    args = parser.parse_args()

    cloth = solverlab.scene("cloth", nx=16, ny=16, pin="top", shear=False)
    omegas = [0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 1.9]
    tables = []
    for mode, label in (("jacobi", "Jacobi"), ("gauss_seidel", "SOR")):
        for omega in omegas:
            settings = {"kind": "relax", "mode": mode, "omega": omega, "iterations": 10}
            try:
                result = solverlab.simulate(cloth, settings, frames=args.frames, positions_every=0)
            except solverlab.DivergedError as torn:
                result = torn.result
            tables.append(result.steps.assign(method=label, omega=omega, status=result.status))
    sweep = pd.concat(tables, ignore_index=True)
    sweep.to_csv(args.out, index=False)

    last = sweep[sweep["frame"] == sweep["frame"].max()]
    summary = last.pivot_table(index="omega", columns="method", values="violation")
    status = last.pivot_table(index="omega", columns="method", values="status", aggfunc="first")
    print("violation at the last frame (m), 16×16 cloth pinned along its top, 10 iterations a frame")
    print(summary.to_string(float_format=lambda v: f"{v:.3e}"))
    print("\nstatus")
    print(status.to_string())
    print(f"\nevery step of every run: {args.out} ({len(sweep)} rows)")

    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        for method, column in summary.items():
            ax.semilogy(column.index, column.values, marker="o", label=method)
        ax.set_xlabel("relaxation factor ω")
        ax.set_ylabel("violation at the last frame (m)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=150)
        print(f"figure: {args.plot}")


if __name__ == "__main__":
    main()
