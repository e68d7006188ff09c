#!/usr/bin/python3
"""check_python_reader.py FLOTILLA PYTHON_DIR [--typed TYPED.h5] [--tdd TDD.h5] FILE.h5... — the pandas
reader (results/python) and the C++ CLI agree on every file: candidate and trial counts per status, the
best candidate, completeness, the proposal journal and each candidate's proposal, parent and chain, the
winner's lineage; every parameter column has the dtype of its recorded kind; the reader refuses foreign
and unsupported files with the CLI's messages. With --typed, the campaign of typed_params.ini: int,
real, ordinal and enum columns typed, and groupby in numeric and declared order. With --tdd, the
campaign of configs/tdd.ini: its proposals, chains and lineage as that file describes them.
"""
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile

flotilla, python_dir, *files = sys.argv[1:]
typed = tdd = None
while files[:1] in (["--typed"], ["--tdd"]):
    if files[0] == "--typed":
        typed = files[1]
    else:
        tdd = files[1]
    files = files[2:] + [files[1]]
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
        if row["reason"] != mine["reason"]:
            return False
        if row["objective"] is None:
            return row["status"] == mine["status"] and math.isnan(mine["objective"])
        return row["status"] == mine["status"] and row["objective"] == mine["objective"]
    mismatched = [row["id"] for row, (_, mine) in zip(exported, c.candidates.iterrows()) if not agrees(row, mine)]
    expect(len(exported) == len(c.candidates) and not mismatched,
           f"{path}: every candidate agrees on status, objective and reason (mismatched: {mismatched})")
    trials = cli("export", path, "--table", "trials")["rows"]
    expect(len(trials) == len(c.trials) and [t["status"] for t in trials] == list(c.trials["status"]),
           f"{path}: {len(trials)} trials, same statuses")
    shards = sum(1 for t in trials if t["kind"] == "evaluate")
    expect(len(c.test_outcomes) <= shards and c.test_outcomes["passed"].sum() <= shards, f"{path}: test outcomes")
    expect(len(c.events) == len(cli("export", path, "--table", "events")["rows"]), f"{path}: events")
    # The proposal journal and what each proposal became, as `export --table proposals` writes it.
    journal = cli("export", path, "--table", "proposals", "--with-output")
    mine = c.proposals.astype(object).where(c.proposals.notna(), None).to_dict("records")
    expect(journal["columns"] == list(c.proposals.columns) and journal["rows"] == mine,
           f"{path}: {len(mine)} proposal rows agree with export --table proposals")
    same = [(row["proposal"], row["parent"]) == (p, None if pd.isna(q) else int(q))
            for row, p, q in zip(exported, c.candidates["proposal"], c.candidates["parent"])]
    expect(all(same), f"{path}: each candidate's proposal and parent agree with export")
    chains = {t["id"]: tuple(t.get("chain") or ()) for t in summary["top"] + summary["rolled_back"]}
    expect(all(c.candidates.loc[i, "chain"] == chain for i, chain in chains.items()),
           f"{path}: chains agree with summary --json")
    expect(c.lineage == summary["lineage"], f"{path}: the winner's lineage {c.lineage}")
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


def check_tdd(path):
    """configs/tdd.ini: eight accepted proposals, each on the one before but compare_broken (rolled
    back) and compare both on unary_minus; the winner errors at the end of a chain of seven."""
    c = flotilla_results.read_campaign(path)
    accepted = c.proposals[c.proposals["status"] == "accepted"]
    expect(list(accepted["name"]) == ["multiply", "parentheses", "unary_minus", "compare_broken", "compare",
                                      "modulo", "power", "errors"], f"{path}: accepted {list(accepted['name'])}")
    expect(accepted["candidate"].tolist() == list(range(1, 9)) and all(p.startswith("--- ") or p.startswith("diff ")
                                                                      for p in accepted["patch"]),
           f"{path}: each accepted proposal became candidate 1..8 and has its patch")
    answered = c.proposals[c.proposals["status"] == "answered"]
    expect(len(answered) == 9 and answered["candidate"].isna().all() and answered["parent"].isna().all(),
           f"{path}: nine proposer answers, none a candidate")
    broken = c.candidates.loc[4]
    expect(broken["proposal"] == "compare_broken" and broken["status"] == "rolled_back" and broken["parent"] == 3
           and broken["chain"] == ("multiply", "parentheses", "unary_minus", "compare_broken"),
           f"{path}: candidate 4 is compare_broken on unary_minus, rolled back")
    expect(c.candidates.loc[0, "proposal"] is None and pd.isna(c.candidates.loc[0, "parent"])
           and c.candidates.loc[0, "chain"] == (), f"{path}: the baseline is no proposal")
    expect(int(c.best["id"]) == 8 and c.best["objective"] == 40 and c.lineage == [0, 1, 2, 3, 5, 6, 7, 8],
           f"{path}: the winner errors (40 files) and its lineage {c.lineage}")
    plain = subprocess.run([flotilla, "results", "export", path, "--table", "proposals"], check=True,
                           capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(plain)))
    expect(len(rows) == 17 and "patch" not in rows[0] and rows[0]["name"] == "multiply" and rows[1]["parent"] == "",
           f"{path}: export --table proposals as CSV, without the patches unless --with-output")
    refused = subprocess.run([flotilla, "results", "export", path, "--table", "events", "--with-output"],
                             capture_output=True, text=True)
    expect(refused.returncode == 1 and "--with-output needs --table trials or --table proposals" in refused.stderr,
           f"{path}: --with-output on events is refused: {refused.stderr.strip()}")


if typed:
    check_typed(typed)
if tdd:
    check_tdd(tdd)

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
