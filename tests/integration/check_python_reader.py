#!/usr/bin/python3
"""check_python_reader.py FLOTILLA PYTHON_DIR [--typed TYPED.h5] FILE.h5... — the pandas reader
(results/python) and the C++ CLI agree on every file: candidate and trial counts per status, the best
candidate, completeness; every parameter column has the dtype of its recorded kind; the reader refuses
foreign and unsupported files with the CLI's messages. With --typed, the campaign of typed_params.ini:
int, real, ordinal and enum columns typed, and groupby in numeric and declared order.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

flotilla, python_dir, *files = sys.argv[1:]
typed = None
if files[:1] == ["--typed"]:
    typed, files = files[1], [files[1]] + files[2:]
sys.path.insert(0, python_dir)
import flotilla_results  # noqa: E402
import h5py  # noqa: E402
import pandas as pd  # noqa: E402


def cli(*args):
    return json.loads(subprocess.run([flotilla, "results", *args, "--json"], check=True, capture_output=True,
                                     text=True).stdout)


def expect(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)
    print("ok:", message)


for path in files:
    c = flotilla_results.read_campaign(path)
    summary = cli("summary", path, "--top", "1000")
    progress = {k: v for k, v in summary["progress"].items()}
    expect(c.counts() == progress, f"{path}: counts {c.counts()} == {progress}")
    best, cli_best = c.best, summary["best"]
    if cli_best is None:
        expect(best is None, f"{path}: no best on either side")
    else:
        expect(int(best["id"]) == cli_best["id"] and best["config"] == cli_best["config"]
               and math.isclose(best["objective"], cli_best["objective"]),
               f"{path}: best {best['id']} {best['config']} == {cli_best['id']} {cli_best['config']}")
    expect(c.complete == summary["run"]["complete"] and c.state == summary["run"]["state"]
           and c.note == summary["run"]["note"], f"{path}: state {c.state}, complete {c.complete}")
    exported = cli("export", path)["rows"]
    def agrees(row, mine):
        if row["objective"] is None:
            return row["status"] == mine["status"] and math.isnan(mine["objective"])
        return row["status"] == mine["status"] and row["objective"] == mine["objective"]
    mismatched = [row["id"] for row, (_, mine) in zip(exported, c.candidates.iterrows()) if not agrees(row, mine)]
    expect(len(exported) == len(c.candidates) and not mismatched,
           f"{path}: every candidate agrees on status and objective (mismatched: {mismatched})")
    trials = cli("export", path, "--table", "trials")["rows"]
    expect(len(trials) == len(c.trials) and [t["status"] for t in trials] == list(c.trials["status"]),
           f"{path}: {len(trials)} trials, same statuses")
    shards = sum(1 for t in trials if t["kind"] == "evaluate")
    expect(len(c.test_outcomes) <= shards and c.test_outcomes["passed"].sum() <= shards, f"{path}: test outcomes")
    expect(len(c.events) == len(cli("export", path, "--table", "events")["rows"]), f"{path}: events")
    kinds = {"int": "int64", "real": "float64", "enum": "category", "ordinal": "category"}
    dtypes = {name: str(c.candidates[name].dtype) for name in c.space}
    expect(c.space and dtypes == {name: kinds[kind] for name, (kind, _) in c.space.items()},
           f"{path}: parameter columns typed from the recorded space {dtypes}")


def check_typed(path):
    """typed_params.ini: tile int 16,128,256; lr real; size ordinal small,medium,large; prec enum float,double."""
    c = flotilla_results.read_campaign(path)
    frame = c.candidates
    expect(c.space == {"tile": ("int", None), "lr": ("real", None), "size": ("ordinal", ["small", "medium", "large"]),
                       "prec": ("enum", ["float", "double"])}, f"{path}: space {c.space}")
    expect(str(frame["tile"].dtype) == "int64" and str(frame["lr"].dtype) == "float64",
           f"{path}: tile {frame['tile'].dtype}, lr {frame['lr'].dtype}")
    for name, order in (("size", ["small", "medium", "large"]), ("prec", ["float", "double"])):
        dtype = frame[name].dtype
        expect(isinstance(dtype, pd.CategoricalDtype) and dtype.ordered and list(dtype.categories) == order,
               f"{path}: {name} is an ordered Categorical {list(dtype.categories)}")
    expect(sorted(frame["lr"].unique()) == [0.001, 0.1], f"{path}: lr values {sorted(frame['lr'].unique())}")
    by_tile = frame.groupby("tile")["objective"].mean()
    expect(list(by_tile.index) == [16, 128, 256], f"{path}: groupby orders 16 < 128 < 256: {list(by_tile.index)}")
    expect([round(v, 3) for v in by_tile] == [round(t + 1000 / 3, 3) for t in (16, 128, 256)],
           f"{path}: mean score per tile (a third of the candidates large) {list(by_tile)}")
    by_size = frame.groupby("size", observed=True)["objective"].max()
    expect(list(by_size.index) == ["small", "medium", "large"] and list(by_size) == [256, 256, 1256],
           f"{path}: groupby orders small < medium < large: {by_size.to_dict()}")
    expect(frame["size"].max() == "large" and frame.sort_values("prec")["prec"].iloc[0] == "float",
           f"{path}: comparisons follow the declared order")
    best = c.best
    expect(best is not None and best["tile"] == 256 and best["size"] == "large", f"{path}: best {best['config']}")


if typed:
    check_typed(typed)

with tempfile.TemporaryDirectory() as scratch:
    foreign = os.path.join(scratch, "foreign.h5")
    with h5py.File(foreign, "w") as f:
        f["x"] = [1]
    try:
        flotilla_results.read_campaign(foreign)
        sys.exit("FAILED: a foreign file was read")
    except flotilla_results.CampaignFileError as e:
        expect(str(e) == f"{foreign}: not a flotilla campaign file (no 'flotilla_schema' attribute on /)", str(e))
    with h5py.File(foreign, "a") as f:
        f.attrs["flotilla_schema"] = 7
    try:
        flotilla_results.read_campaign(foreign)
        sys.exit("FAILED: schema 7 was read")
    except flotilla_results.CampaignFileError as e:
        expect(str(e) == f"{foreign}: schema version 7 is not supported by this reader (supports 1 to 2)", str(e))
    text = os.path.join(scratch, "notes.txt")
    open(text, "w").write("hello")
    try:
        flotilla_results.read_campaign(text)
        sys.exit("FAILED: a text file was read")
    except flotilla_results.CampaignFileError as e:
        expect(str(e) == f"{text}: not an HDF5 file", str(e))
