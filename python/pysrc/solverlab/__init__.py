"""solverlab from Python: scenes, solvers, runs and experiments, with results as pandas tables.

The package calls the same Rust code as the ``solverlab`` command line and writes the same
folders, so a scene and a solver give bit-identical results (the same state hash) from Python
and from the command line. Every table has exactly the columns and units of its CSV (see
``docs/experiments.md`` and ``docs/usage.md`` in the repository).

>>> import solverlab
>>> cloth = solverlab.scene("cloth", nx=12, ny=12)
>>> result = solverlab.simulate(cloth, {"kind": "relax", "mode": "jacobi", "omega": 1.5}, frames=60)
>>> result.steps[["frame", "violation"]].tail(1)            # doctest: +SKIP

Errors: bad input (an unknown scene, solver or parameter, an impossible value) raises
``ValueError`` with the command line's message, which names the field; a run that diverges
(NaN or Inf) or tears raises :class:`DivergedError`, which carries the rows computed so far; a
file that cannot be written raises ``OSError``; Ctrl-C raises ``KeyboardInterrupt`` within about
50 ms of the current frame's end. Simulations release the GIL, so threads can run scenes side by
side (Ctrl-C stops the runs of every thread).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _solverlab as _core

__all__ = [
    "DivergedError",
    "Experiment",
    "Result",
    "Scene",
    "load",
    "plot",
    "report",
    "run",
    "scene",
    "scene_from_dict",
    "scene_from_toml",
    "scenes",
    "simulate",
    "solvers",
]

__version__ = _core.__version__

#: The tables a ``simulate`` folder may hold, by attribute name.
RUN_TABLES = ("steps", "trace", "positions", "forces", "bodies", "contacts", "sticks", "shapes", "colliders")
#: The tables an experiment folder may hold.
EXPERIMENT_TABLES = ("runs", "steps", "trace", "convergence", "frozen_trace", "positions", "forces", "bodies", "contacts")


class DivergedError(RuntimeError):
    """A run diverged (NaN or Inf) or tore. ``frame`` is the frame where it happened and
    ``result`` the :class:`Result` with every row computed (a torn run goes on to its last
    frame; a diverged one stops at ``frame``)."""

    def __init__(self, message: str, frame: int, result: "Result"):
        super().__init__(message)
        self.frame = frame
        self.result = result


def scenes() -> List[Dict[str, Any]]:
    """The builtin scenes, as ``solverlab scene list`` shows them: a list of dicts with
    ``name``, ``summary``, ``source`` and ``params`` (each ``name``, ``default``, ``doc`` with
    its unit). Every scene also takes ``dt`` (s), ``damping`` in [0, 1) and ``gravity`` (m/s²)."""
    return json.loads(_core.scenes())


def solvers() -> Dict[str, List[Dict[str, Any]]]:
    """The solver families and presets, as ``solverlab solver list`` shows them:
    ``{"families": [{"kind", "summary"}], "presets": [{"name", "summary", "settings"}]}``,
    ``settings`` holding every key of the preset with its value."""
    return json.loads(_core.solvers())


def _set_value(key: str, value: Any) -> str:
    """A parameter value in the form ``--set key=value`` takes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{key}: {value} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_set_value(key, v) for v in value) + "]"
    raise ValueError(f"{key}: {value!r} is not a number, a flag, a word or a list of numbers")


class Scene:
    """A scene: a builtin with parameters, or a scene file's text. Make one with :func:`scene`,
    :func:`scene_from_toml` or :func:`scene_from_dict`; it is checked when made."""

    def __init__(self, name: str, params: Optional[Mapping[str, Any]] = None, text: Optional[str] = None):
        self.name = name
        self.params = dict(params or {})
        self._text = text
        self.to_toml()  # checks it, raising ValueError

    def _sets(self) -> List[str]:
        return [f"{k}={_set_value(k, v)}" for k, v in self.params.items()]

    def _with_file(self, work: Any) -> Any:
        """Calls ``work(name_or_path, sets)``, with the text in a temporary file if it has one."""
        if self._text is None:
            return work(self.name, self._sets())
        folder = Path(tempfile.mkdtemp(prefix="solverlab-scene-"))
        try:
            path = folder / f"{self.name}.toml"
            path.write_text(self._text)
            try:
                return work(str(path), self._sets())
            except ValueError as e:
                # The temporary file means nothing to the caller: name the scene instead.
                raise ValueError(str(e).replace(str(path), f"scene {self.name!r}")) from None
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def to_toml(self) -> str:
        """The resolved scene as a scene file (every particle, stick, body and collider)."""
        return self._with_file(_core.scene_toml)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"solverlab.Scene({self.name!r}{', ' if params else ''}{params})"


def scene(name: str, **params: Any) -> Scene:
    """A builtin scene (``solverlab.scenes()`` lists them) or a scene file path, with parameter
    overrides: ``scene("cloth", nx=32, ny=32, pin="top")``."""
    if name.endswith(".toml") or Path(name).is_file():
        return Scene(Path(name).stem, params, Path(name).read_text())
    return Scene(name, params)


def _as_scene(value: Any) -> Any:
    """A :class:`Scene` for a builtin name or a scene file path; anything else as it is."""
    return scene(value) if isinstance(value, str) else value


def scene_from_toml(source: Union[str, Path], **params: Any) -> Scene:
    """A scene from a scene file's path or from its text (the format ``solverlab scene export``
    writes), with the common overrides (``dt``, ``damping``, ``gravity``)."""
    path = Path(source) if isinstance(source, Path) or "\n" not in str(source) else None
    if path is not None and path.is_file():
        return Scene(path.stem, params, path.read_text())
    if path is not None and str(source).endswith(".toml"):
        raise ValueError(f"{source}: no such scene file")
    return Scene("scene", params, str(source))


def scene_from_dict(data: Mapping[str, Any], **params: Any) -> Scene:
    """A scene from a dict in the scene-file format: ``{"name": …, "particle": [{"x": [0, 1, 0],
    "mass": 1.0}, …], "stick": [{"a": 0, "b": 1}], …}``."""
    text = _core.toml_from_json(json.dumps(data), False)
    return Scene(str(data.get("name", "scene")), params, text)


def _solver_arg(solver: Union[str, Mapping[str, Any]]) -> str:
    if isinstance(solver, Mapping):
        return _core.toml_from_json(json.dumps(dict(solver)), True)
    if not isinstance(solver, str):
        raise ValueError(f"solver: {solver!r} is not a preset name, a solver file or a dict of settings")
    return solver


def _read(path: Path) -> pd.DataFrame:
    if not path.is_file():
        return pd.DataFrame()
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


class Result:
    """One run: its tables as pandas DataFrames with the CSV columns and units (an absent table
    is an empty DataFrame), ``meta`` (the ``meta.json`` content), ``hash`` (the final state hash)
    and ``folder`` (where the files are, or ``None`` if they were in a temporary folder)."""

    steps: pd.DataFrame
    trace: pd.DataFrame
    positions: pd.DataFrame
    forces: pd.DataFrame
    bodies: pd.DataFrame
    contacts: pd.DataFrame

    def __init__(self, folder: Path, keep: bool):
        self.folder: Optional[Path] = folder if keep else None
        for name in RUN_TABLES:
            setattr(self, name, _read(folder / f"{name}.csv"))
        meta_path = folder / "meta.json"
        self.meta: Dict[str, Any] = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        runs = self.meta.get("runs") or [{}]
        self.hash: str = runs[0].get("final_state_hash", "")
        self.status: str = runs[0].get("status", "")

    def __repr__(self) -> str:
        frames = int(self.steps["frame"].max()) if "frame" in self.steps else 0
        return f"<solverlab.Result {frames} frames, status {self.status!r}, hash {self.hash}>"


def simulate(
    scene: Union[Scene, str],
    solver: Union[str, Mapping[str, Any]] = "gs",
    frames: int = 120,
    dt: Optional[float] = None,
    substeps: Optional[int] = None,
    positions_every: int = 1,
    violation: bool = False,
    out: Optional[Union[str, Path]] = None,
    figures: bool = False,
) -> Result:
    """Simulates ``scene`` (a :class:`Scene` or a builtin name) under ``solver`` (a preset name,
    a solver file, or a dict in the TOML's keys such as ``{"kind": "relax", "mode": "jacobi",
    "omega": 1.5}``) for ``frames`` frames of ``dt`` seconds (default the scene's), each of
    ``substeps`` steps (default the solver's own), recording positions every
    ``positions_every`` frames (0: none) and, with ``violation``, the common violation after
    every iteration. The defaults are the command line's. With ``out`` the folder is kept there
    (``figures`` also draws its overview); otherwise it is read and removed."""
    scene = _as_scene(scene)
    if not isinstance(scene, Scene):
        raise ValueError(f"scene: {scene!r} is not a solverlab.Scene or a scene name")
    for key, value, low in (("frames", frames, 1), ("positions_every", positions_every, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{key}: {value!r} must be a whole number of at least {low}")
    if substeps is not None and (not isinstance(substeps, int) or substeps < 1):
        raise ValueError(f"substeps: {substeps!r} must be a whole number of at least 1")
    if dt is not None and not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: {dt!r} must be a positive number of seconds")
    solver_arg = _solver_arg(solver)
    keep = out is not None
    folder = Path(out) if keep else Path(tempfile.mkdtemp(prefix="solverlab-run-")) / "run"

    def work(name: str, sets: List[str]) -> None:
        _core.simulate(name, sets, solver_arg, frames, dt, substeps, str(folder), positions_every, violation)

    try:
        try:
            scene._with_file(work)
        except _core._Diverged as e:
            result = Result(folder, keep)
            message = str(e) if keep else str(e).replace(str(folder), "DivergedError.result")
            found = re.search(r"in frame (\d+)", message)
            last = int(result.steps["frame"].max()) if "frame" in result.steps else 0
            raise DivergedError(message, int(found.group(1)) if found else last, result) from None
        if keep and figures:
            _core.plot(str(folder), False)
        return Result(folder, keep)
    finally:
        if not keep:
            shutil.rmtree(folder.parent, ignore_errors=True)


class Experiment:
    """An experiment's results folder: its tables as DataFrames (read when first used),
    ``meta`` and the figure files."""

    def __init__(self, folder: Union[str, Path]):
        self.folder = Path(folder)
        meta_path = self.folder / "meta.json"
        if not meta_path.is_file():
            raise ValueError(f"{self.folder}: not a results folder (no meta.json)")
        self.meta: Dict[str, Any] = json.loads(meta_path.read_text())
        self._tables: Dict[str, pd.DataFrame] = {}

    def table(self, name: str) -> pd.DataFrame:
        """The table ``name`` (``runs``, ``steps``, ``trace``, ``convergence``, …); an absent
        table is an empty DataFrame."""
        if name not in self._tables:
            self._tables[name] = _read(self.folder / f"{name}.csv")
        return self._tables[name]

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name in EXPERIMENT_TABLES:
            return self.table(name)
        raise AttributeError(name)

    @property
    def figures(self) -> List[Path]:
        """The figure files (SVG and PNG) in the folder."""
        return sorted(p for p in self.folder.iterdir() if p.suffix in (".svg", ".png", ".gif"))

    def __repr__(self) -> str:
        return f"<solverlab.Experiment {self.meta.get('experiment', '?')!r} in {self.folder}, {self.meta.get('runs_total', 0)} runs>"


def run(
    experiment: Union[str, Path],
    out: Optional[Union[str, Path]] = None,
    jobs: Optional[int] = None,
    resume: bool = False,
) -> Experiment:
    """Runs an experiment file (``solverlab run``) into ``out`` (default ``results/NAME``
    relative to the working directory), ``jobs`` runs at a time (default the file's, else one
    per core), finishing an interrupted run with ``resume``; returns its folder's tables."""
    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs: {jobs!r} must be a whole number of at least 1")
    folder = _core.run(str(experiment), None if out is None else str(out), jobs, resume)
    return Experiment(folder)


def report(folder: Union[str, Path, Experiment, Result], out: Optional[Union[str, Path]] = None, max_mb: float = 20.0) -> Path:
    """Writes ``report.html`` (figures, runs table, 3-D replay) for a results or simulate folder
    into ``out`` (default the folder itself), at most ``max_mb`` MB in all (the replay's frames
    are decimated evenly to fit, or left out; a page over the budget says by how much); returns
    its path."""
    if isinstance(folder, (Experiment, Result)):
        if folder.folder is None:
            raise ValueError("report: this result was read from a temporary folder; simulate with out=… to keep it")
        folder = folder.folder
    target = Path(out) if out is not None else Path(folder)
    _core.report(str(folder), str(target), float(max_mb))
    return target / "report.html"


def plot(folder: Union[str, Path], paper: bool = False) -> List[Path]:
    """Redraws a folder's figures from its CSVs (``solverlab plot``); ``paper=True`` writes the
    paper forms into ``folder/paper/``. Returns the files written."""
    return [Path(p) for p in _core.plot(str(folder), paper)]


def load(folder: Union[str, Path]) -> Union[Experiment, Result]:
    """Reads a folder written earlier: an experiment's (it has ``experiment.toml``) or a
    simulate run's."""
    folder = Path(folder)
    if (folder / "experiment.toml").is_file():
        return Experiment(folder)
    if (folder / "meta.json").is_file():
        return Result(folder, True)
    raise ValueError(f"{folder}: not a results folder (no meta.json)")
