#!/usr/bin/env bash
# The 10,000 spheres of the peer's benchmark under eight lattice seeds: Rapier 0.36 (matched and
# box2d modes) against solverlab's tgs-soft and soft-step, 30 frames each, one thread; writes the
# largest penetration over the run (mm) and the kinetic energy of frame 30 (J) of every run to
# results/rapier_peer_spheres/seeds.csv. About four minutes with both builds. Run from the
# repository root:
#   bash peers/rapier/scripts/spheres_seeds.sh
set -euo pipefail
root=$(pwd)
(cd peers/rapier && cargo build --release -q)
cargo build --release -q -p solverlab-cli
peer="$root/peers/rapier/target/release/rapier-peer"
sl="$root/target/release/solverlab"
work=$(mktemp -d)
out="$root/results/rapier_peer_spheres"
mkdir -p "$out"
rows="$work/seeds.csv"
echo "seed,engine,max_penetration_mm,kinetic_energy_frame_30_j" > "$rows"
for seed in 1 2 3 4 5 6 7 8; do
    "$peer" scene --scene balls --set n=10000 --set width=2 --set seed=$seed --rigid-spheres > "$work/s.toml"
    for mode in matched box2d; do
        RAYON_NUM_THREADS=1 "$peer" run --scene-file "$work/s.toml" --mode $mode --frames 30 --out "$work/rapier-$mode" > /dev/null
    done
    for preset in tgs-soft soft-step; do
        RAYON_NUM_THREADS=1 "$sl" simulate --scene "$work/s.toml" --solver $preset --frames 30 \
            --positions-every 0 --no-figures --out "$work/$preset" > /dev/null
    done
    for run in rapier-matched rapier-box2d tgs-soft soft-step; do
        python3 - "$work/$run/steps.csv" "$seed" "$run" >> "$rows" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["frame"] != "0"]
pen = max(float(r["max_penetration"]) for r in rows) * 1000
print(f"{sys.argv[2]},{sys.argv[3]},{pen:.1f},{float(rows[-1]['kinetic_energy']):.0f}")
PY
    done
done
mv "$rows" "$out/seeds.csv"
rm -rf "$work"
echo "wrote $out/seeds.csv"
