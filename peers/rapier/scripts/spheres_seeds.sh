#!/usr/bin/env bash
# The 10,000 spheres of the peer's benchmark under eight lattice seeds: Rapier 0.36 (matched and
# box2d modes) against solverlab's tgs-soft and soft-step, 30 frames each, one thread. Writes,
# for every run, to results/rapier_peer_spheres/seeds.csv:
#   max_penetration_mm        the largest penetration over the run (mm), as the benchmark's table;
#   kinetic_energy_frame_30_j the kinetic energy of frame 30 (J);
# and the pile in frame 30, over the pairs of spheres that overlap (sphere-sphere only):
#   overlaps                  how many pairs overlap;
#   mean_overlap_mm           their mean depth (mm);
#   p999_overlap_mm           the 99.9th percentile of their depths (mm, nearest rank);
#   overlaps_over_10mm        how many are deeper than 10 mm;
#   max_overlap_mm            the deepest (mm).
# About four minutes with both builds. Run from the repository root:
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
echo "seed,engine,max_penetration_mm,kinetic_energy_frame_30_j,overlaps,mean_overlap_mm,p999_overlap_mm,overlaps_over_10mm,max_overlap_mm" > "$rows"
for seed in 1 2 3 4 5 6 7 8; do
    "$peer" scene --scene balls --set n=10000 --set width=2 --set seed=$seed --rigid-spheres > "$work/s.toml"
    for mode in matched box2d; do
        RAYON_NUM_THREADS=1 "$peer" run --scene-file "$work/s.toml" --mode $mode --frames 30 --bodies --out "$work/rapier-$mode" > /dev/null
    done
    for preset in tgs-soft soft-step; do
        RAYON_NUM_THREADS=1 "$sl" simulate --scene "$work/s.toml" --solver $preset --frames 30 \
            --positions-every 30 --no-figures --out "$work/$preset" > /dev/null
    done
    for run in rapier-matched rapier-box2d tgs-soft soft-step; do
        python3 - "$work/$run" "$seed" "$run" "$work/s.toml" >> "$rows" <<'PY'
import csv, math, sys
from collections import defaultdict
run, seed, name, scene = sys.argv[1:5]
rows = [r for r in csv.DictReader(open(f"{run}/steps.csv")) if r["frame"] != "0"]
pen = max(float(r["max_penetration"]) for r in rows) * 1000
radius = {float(l.split("=")[1]) for l in open(scene) if l.startswith("radius")}
assert len(radius) == 1, "spheres of one radius"
r = radius.pop()
centres = [tuple(float(b[c]) for c in ("cx", "cy", "cz")) for b in csv.DictReader(open(f"{run}/bodies.csv")) if b["frame"] == "30"]
assert len(centres) > 1000, f"{run}: frame 30's bodies"
cells = defaultdict(list)
for i, c in enumerate(centres):
    cells[tuple(math.floor(v / (2 * r)) for v in c)].append(i)
depths = []
for (x, y, z), members in cells.items():
    for i in members:
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for dz in (-1, 0, 1):
                    for j in cells.get((x + dx, y + dy, z + dz), ()):
                        if j > i:
                            d = 2 * r - math.dist(centres[i], centres[j])
                            if d > 0:
                                depths.append(d * 1000)
depths.sort()
p999 = depths[math.ceil(0.999 * len(depths)) - 1]
deep = sum(d > 10 for d in depths)
print(f"{seed},{name},{pen:.1f},{float(rows[-1]['kinetic_energy']):.0f},{len(depths)},"
      f"{sum(depths) / len(depths):.2f},{p999:.1f},{deep},{depths[-1]:.1f}")
PY
    done
done
mv "$rows" "$out/seeds.csv"
rm -rf "$work"
echo "wrote $out/seeds.csv"
