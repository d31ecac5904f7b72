"""The Python package: listings, scenes, simulate, errors, the same numbers as the command line,
threads, Ctrl-C, an ω sweep in one DataFrame, experiments and reports."""

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pandas as pd
import pytest

import solverlab

ROOT = Path(__file__).resolve().parents[2]
SMALL_CLOTH = {"nx": 8, "ny": 8}


def cli_binary() -> Path:
    """The command line to compare with: $SOLVERLAB_BIN, else the workspace's release or debug
    build."""
    if os.environ.get("SOLVERLAB_BIN"):
        return Path(os.environ["SOLVERLAB_BIN"])
    for profile in ("release", "debug"):
        path = ROOT / "target" / profile / "solverlab"
        if path.is_file():
            return path
    raise AssertionError("no solverlab binary: build it (cargo build -p solverlab-cli) or set SOLVERLAB_BIN")


def test_listings_match_the_command_line():
    names = [s["name"] for s in solverlab.scenes()]
    assert "cloth" in names and "rigid-stack" in names
    cloth = next(s for s in solverlab.scenes() if s["name"] == "cloth")
    nx = next(p for p in cloth["params"] if p["name"] == "nx")
    assert nx["default"] == 20 and "particles" in nx["doc"]
    listing = solverlab.solvers()
    kinds = [f["kind"] for f in listing["families"]]
    assert kinds == ["relax", "cg", "direct", "pgs", "block_descent"]
    sor = next(p for p in listing["presets"] if p["name"] == "sor")
    assert sor["settings"]["kind"] == "relax" and sor["settings"]["omega"] == 1.5
    text = subprocess.run([cli_binary(), "solver", "list"], capture_output=True, text=True, check=True).stdout
    for preset in listing["presets"]:
        assert preset["name"] in text


def test_simulate_returns_every_table_with_the_csv_columns(tmp_path):
    result = solverlab.simulate(solverlab.scene("cloth", **SMALL_CLOTH), "gs", frames=20, out=tmp_path / "run")
    assert result.status == "ok" and len(result.hash) == 16
    for name in ("steps", "trace", "positions", "sticks"):
        table = getattr(result, name)
        with open(tmp_path / "run" / f"{name}.csv") as f:
            header = f.readline().strip().split(",")
        assert list(table.columns) == header, name
    assert len(result.steps) == 21 and result.steps["frame"].tolist() == list(range(21))
    assert len(result.positions) == 21 * 64
    assert result.meta["runs"][0]["final_state_hash"] == result.hash
    assert result.forces.empty or "force" in result.forces.columns
    # Without out= the folder is read and removed.
    temporary = solverlab.simulate("chain", "gs", frames=5)
    assert temporary.folder is None and len(temporary.steps) == 6


def test_solver_settings_as_a_dict_and_scenes_from_toml_and_dicts():
    scene = solverlab.scene("cloth", **SMALL_CLOTH)
    as_dict = solverlab.simulate(scene, {"kind": "relax", "mode": "gauss_seidel", "omega": 1.5, "iterations": 10}, frames=10)
    preset = solverlab.simulate(scene, "sor", frames=10)
    assert as_dict.hash == preset.hash
    again = solverlab.scene_from_toml(scene.to_toml())
    assert solverlab.simulate(again, "sor", frames=10).hash == preset.hash
    pendulum = {
        "name": "pendulum",
        "particle": [{"x": [0.0, 1.0, 0.0], "fixed": True}, {"x": [1.0, 1.0, 0.0], "mass": 1.0}],
        "constraint": [{"type": "distance", "a": 0, "b": 1}],
    }
    result = solverlab.simulate(solverlab.scene_from_dict(pendulum), "gs", frames=30)
    assert result.steps["violation"].max() < 1e-6
    # The bob swings down: its height falls.
    bob = result.positions[result.positions["particle"] == 1]
    assert bob["y"].iloc[-1] < 0.9


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda: solverlab.scene("clth"), "did you mean `cloth`"),
        (lambda: solverlab.scene("cloth", nxx=3), "did you mean `nx`"),
        (lambda: solverlab.scene("cloth", nx=-3), "nx"),
        (lambda: solverlab.simulate("chain", "PGS"), "did you mean `pgs`"),
        (lambda: solverlab.simulate("chain", {"kind": "relax", "omega": -1.0}), "omega"),
        (lambda: solverlab.simulate("chain", {"kind": "relx"}), "relax"),
        (lambda: solverlab.simulate("chain", frames=0), "frames"),
        (lambda: solverlab.simulate("chain", dt=float("nan")), "dt"),
        (lambda: solverlab.scene_from_dict({"name": "x", "particle": [{"x": [0, 0, 0], "mass": -1.0}]}), "mass"),
        (lambda: solverlab.run("no/such/experiment.toml"), "experiment.toml"),
    ],
)
def test_bad_input_raises_value_error_naming_the_field(make, says):
    with pytest.raises(ValueError) as info:
        make()
    assert says in str(info.value)


def test_a_torn_run_raises_diverged_error_with_its_rows():
    with pytest.raises(solverlab.DivergedError) as info:
        solverlab.simulate(solverlab.scene("cloth", **SMALL_CLOTH), "jacobi", frames=30)
    err = info.value
    assert err.frame == 16 and "jacobi" in str(err)
    assert len(err.result.steps) == 31 and err.result.status == "torn"


@pytest.mark.parametrize(
    "scene, sets, solver",
    [
        ("cloth", ["nx=8", "ny=8"], "gs"),
        ("cloth", ["nx=8", "ny=8"], "cg"),
        ("chain", [], "pgs"),
        ("rigid-stack", ["boxes=3"], "soft-step"),
        ("box-stack", ["boxes=3"], "direct"),
        ("balls", [], "avbd"),
    ],
)
def test_the_same_numbers_as_the_command_line(tmp_path, scene, sets, solver):
    out = tmp_path / "cli"
    args = [cli_binary(), "simulate", "--scene", scene, "--solver", solver, "--frames", "15", "--out", str(out), "--no-figures"]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, capture_output=True, check=True)
    cli_hash = json.loads((out / "meta.json").read_text())["runs"][0]["final_state_hash"]
    params = {k: int(v) for k, v in (s.split("=") for s in sets)}
    result = solverlab.simulate(solverlab.scene(scene, **params), solver, frames=15)
    assert result.hash == cli_hash
    cli_steps = pd.read_csv(out / "steps.csv")
    timing = [c for c in cli_steps.columns if c.endswith("_seconds")]
    pd.testing.assert_frame_equal(result.steps.drop(columns=timing), cli_steps.drop(columns=timing))


def test_threads_run_scenes_side_by_side_with_the_same_results():
    scene = solverlab.scene("cloth", nx=12, ny=12)
    alone = [solverlab.simulate(scene, solver, frames=20).hash for solver in ("gs", "sor")]
    together = [None, None]

    def work(k, solver):
        together[k] = solverlab.simulate(scene, solver, frames=20).hash

    threads = [threading.Thread(target=work, args=(k, s)) for k, s in enumerate(("gs", "sor"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert together == alone


def test_ctrl_c_interrupts_a_long_simulation_promptly():
    # Python turns SIGINT into KeyboardInterrupt only if its parent left SIGINT alone; a shell
    # starting the tests in the background (`cmd &`) ignores it, and the signal below would then
    # be lost and the run go on for hours. The test sets Python's own handler for its duration.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    # Sent from another Python thread: it can only run if simulate released the GIL.
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        # 100000 frames would take hours: raising at all means the interrupt stopped the run.
        with pytest.raises(KeyboardInterrupt):
            solverlab.simulate(solverlab.scene("cloth", nx=48, ny=48), "direct", frames=100000)
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
    # The flag is cleared: the next run goes through.
    assert solverlab.simulate("chain", "gs", frames=3).status == "ok"


def test_an_omega_sweep_collects_into_one_dataframe():
    scene = solverlab.scene("cloth", nx=10, ny=10, pin="top", shear=False)
    frames = []
    for omega in (1.0, 1.3, 1.6):
        result = solverlab.simulate(scene, {"kind": "relax", "mode": "gauss_seidel", "omega": omega, "iterations": 5}, frames=30)
        frames.append(result.steps.assign(omega=omega))
    sweep = pd.concat(frames, ignore_index=True)
    assert len(sweep) == 3 * 31 and set(sweep["omega"]) == {1.0, 1.3, 1.6}
    final = sweep[sweep["frame"] == 30].set_index("omega")["violation"]
    # Over-relaxation converges faster on this cloth: the violation left falls with ω.
    assert final[1.6] < final[1.3] < final[1.0]


def test_run_and_report_an_experiment(tmp_path):
    experiment = tmp_path / "tiny.toml"
    experiment.write_text(
        """
name = "tiny"
frames = 10

[[scene]]
name = "chain"
set = { links = 5 }

[[solver]]
label = "GS"
preset = "gs"

[[solver]]
label = "PGS"
preset = "pgs"

[[figure]]
name = "violation"
x = "frame"
y = "violation"
logy = true
"""
    )
    results = solverlab.run(experiment, out=tmp_path / "res", jobs=1)
    assert list(results.runs["label"]) == ["GS", "PGS"]
    assert len(results.steps) == 2 * 11
    assert (tmp_path / "res" / "violation.svg") in results.figures
    page = solverlab.report(results)
    assert page == tmp_path / "res" / "report.html" and page.stat().st_size > 1000
    again = solverlab.load(tmp_path / "res")
    assert isinstance(again, solverlab.Experiment) and len(again.runs) == 2
