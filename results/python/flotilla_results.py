"""flotilla_results: a flotilla campaign file (HDF5) as pandas DataFrames.

    import flotilla_results
    campaign = flotilla_results.read_campaign("quickstart.h5")
    campaign.candidates     # one row per candidate, with its status, objective and parameters
    campaign.trials         # one row per recorded trial (explore repeats, evaluate shards, confirmation pairs;
                            # a pair's duration is its own; in older files, its share of its
                            # confirmation's time)
    campaign.metrics        # every reported metric, one row per (trial, name)
    campaign.test_outcomes  # one row per evaluate shard: the test outcomes recorded so far
    campaign.tests          # per-test outcomes, one row per (candidate, test), when the file records
                            # them (the /tests group, docs/tests.md); else None
    campaign.test_numbers   # per-test numbers (per_file suites' summary groups), one row per
                            # (candidate, test, name) with its value; None when there are none
    campaign.events         # the scheduler's journal
    campaign.confirmations  # one row per confirmation: verdict, ratio and its interval (schema 2)
    campaign.estimates      # each explored candidate's estimate as the scheduler recorded it (schema 2)
    campaign.proposals      # the proposal journal (docs/propose.md): one row per proposal or
                            # proposer answer, with its patch, rationale and the candidate it became
    campaign.best           # the winner (a row of candidates), or None
    campaign.lineage        # candidate ids from the root to the winner (a proposer's chain)
    campaign.space          # the parameters as recorded: {name: (kind, choices)}, in declared order
    campaign.complete       # False for a crashed, interrupted or still running campaign

Candidate status, objective and winner follow flotilla's own rules (results/Analysis.h), so this
reader and `flotilla results summary` reach the same conclusions:
  - for each (candidate, kind, index) only the latest attempt counts;
  - the objective is the median over the explore repeats (the first `repeats` and any adaptive
    ones), defined once `repeats` are recorded and every recorded one is ok; spread is
    (max - min) / |median|; interval_low/high is the median's order-statistic interval at the
    campaign's confirm confidence, interval_coverage its actual coverage (docs/verdicts.md);
  - verified: every evaluate shard recorded and ok; rolled_back: a shard recorded and not ok;
  - an objective counted from the tests (tests.passed, tests.GROUP; docs/propose.md) is that
    metric of the test gate's verdict, for a campaign with no explore repeats;
  - verdict, ratio, ratio_low, ratio_high, pairs: the candidate's confirmation against the
    baseline, as recorded in /confirmations (a failed one whose reason is an order effect or a
    trend is "unreliable", as flotilla says);
  - parameter columns are typed from the recorded space: int -> int64, real -> float64, enum and
    ordinal -> an ordered pandas Categorical in the declared order (a groupby lists 16 before 128);
  - the winner: with confirmation on and a baseline, the eligible candidate (verified, or
    explored without an evaluate stage) confirmed faster with the highest ratio, unless another
    one confirmed faster, its interval overlapping the holder's, beat it head to head (a
    /confirmations row whose reference is that candidate), and so on; else the baseline when it
    is eligible; otherwise the best eligible one (the lowest id wins a tie);
  - with a fidelity parameter (/campaign attribute `fidelity`, "n=1024"), an explored candidate
    at another value is "screened": never verified or the winner (docs/search.md#fidelity);
  - with several objectives (attributes `objectives`, `pick`), the winner is the pick rule's
    member of the front of the eligible candidates; `front` lists the front of every candidate
    not rolled back (docs/objectives.md);
  - a candidate a proposer wrote has origin "proposal ID" (its row in /proposals): `proposal` is
    that proposal's name, `parent` the candidate it built on, `chain` the names of the proposals
    its tree applies, root first (results/Lineage.h); others have None, <NA> and ().
Files are opened in SWMR mode, so a campaign that is running, or whose writer was killed, reads
like any other; `complete`, `state` and `note` say how far it got. Needs h5py, numpy, pandas
(Debian: python3-h5py, python3-pandas).
"""
import fcntl
import math
import os
import re
import struct

import h5py
import numpy as np
import pandas as pd

SUPPORTED_SCHEMAS = (1, 2)
_LIFECYCLE = ("campaign_started", "campaign_resumed", "campaign_finished", "interrupted", "cancelled")
_LOCK_OFFSET = 1 << 62  # the byte flotilla's writer locks (results/src/WriterLock.cpp)
_UNRELIABLE = ("order effect:", "trend across runs:")  # reasons of results/Stats.cpp's unreliability()


class CampaignFileError(Exception):
    """A missing file, a file that is not a flotilla campaign, or an unsupported schema."""


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _enum_names(dtype, field):
    mapping = h5py.check_enum_dtype(dtype[field])
    return {v: k for k, v in mapping.items()} if mapping else {}


def _open(path):
    if not os.path.exists(path):
        raise CampaignFileError(f"{path}: no such file")
    if not h5py.is_hdf5(path):
        raise CampaignFileError(f"{path}: not an HDF5 file")
    try:
        f = h5py.File(path, "r", swmr=True)
    except OSError:  # a file not written in the SWMR-capable format
        try:
            f = h5py.File(path, "r")
        except OSError as error:
            if "already open for write" not in str(error):
                raise
            # A writer killed before its switch to SWMR mode left the file marked open for write
            # (docs/results-schema.md): flotilla's own readers clear that; this one only reads.
            raise CampaignFileError(
                f"{path}: marked as open for write by a writer that "
                f"{'is starting now: try again in a moment' if has_live_writer(path) else 'was killed'}; "
                f"`flotilla results summary {path}` (or `h5clear -s {path}`) clears the mark") from None
    if "flotilla_schema" not in f.attrs:
        f.close()
        raise CampaignFileError(f"{path}: not a flotilla campaign file (no 'flotilla_schema' attribute on /)")
    version = int(f.attrs["flotilla_schema"])
    if version not in SUPPORTED_SCHEMAS:
        f.close()
        raise CampaignFileError(f"{path}: schema version {version} is not supported by this reader "
                                f"(supports {SUPPORTED_SCHEMAS[0]} to {SUPPORTED_SCHEMAS[-1]})")
    return f


def has_live_writer(path):
    """True when a flotilla process holds the file's writer lock (the campaign is running)."""
    getlk = getattr(fcntl, "F_OFD_GETLK", 36)  # 36 on Linux
    # struct flock on Linux x86-64/aarch64: short type, short whence, off_t start, off_t len,
    # pid_t pid, padded to 32 bytes.
    request = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, _LOCK_OFFSET, 1, 0)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        reply = fcntl.fcntl(fd, getlk, request)
        return struct.unpack("hhqqi4x", reply)[0] != fcntl.F_UNLCK
    except OSError:
        return False
    finally:
        os.close(fd)


def _read_table(f, name):
    dataset = f[name]
    dataset.refresh()  # a SWMR reader sees rows appended since the file was opened
    return dataset[:]


def _written(rows, ok):
    """The leading rows that were written: a write that failed half-way (a full disk) can leave
    rows of fill values (zeros) at the end of a table, which flotilla cuts on resume (Schema.h)."""
    bad = np.nonzero(~ok)[0]
    return rows[:bad[0]] if len(bad) else rows


def _recorded_space(fingerprint):
    """The campaign's parameters in their declared order, from the "param NAME: ..." lines of the
    /campaign fingerprint (the canonical text of the space, docs/results-schema.md):
    {name: (kind, choices)} with kind "int", "real", "enum" or "ordinal", and choices the labels
    of an enum or ordinal in their declared order (None otherwise)."""
    space = {}
    for line in fingerprint.splitlines():
        if not line.startswith("param ") or ":" not in line:
            continue
        name, _, spec = line[len("param "):].partition(":")
        words = spec.split()
        if words and words[0] == "real":
            space[name] = ("real", None)
        elif words and words[0] in ("enum", "ordinal") and len(words) % 2 == 0:
            space[name] = (words[0], words[1::2])
        else:
            space[name] = ("int", None)
    return space


def _typed(values, kind, choices, index):
    """One parameter's column typed by its kind: int64 (Int64 with a value missing), float64, or an
    ordered Categorical whose order is the space's (so groupby and sort follow it, not the text)."""
    text = pd.Series(values, index=index, dtype=object)
    if kind == "int":
        numbers = pd.to_numeric(text, errors="coerce")
        return numbers.astype(np.int64) if numbers.notna().all() else numbers.astype("Int64")
    if kind == "real":
        return pd.to_numeric(text, errors="coerce").astype(np.float64)
    return text.astype(pd.CategoricalDtype(categories=choices, ordered=True))


def _parameter_columns(configs, space):
    """One column per parameter of the "name=value ..." configurations: typed from the recorded
    space (in its order), text for a parameter the space does not name (a file without one)."""
    parsed = [dict(w.split("=", 1) for w in c.split() if "=" in w) for c in configs]
    names = list(space) + sorted({n for p in parsed for n in p} - set(space))
    columns = {}
    for name in names:
        values = [p.get(name) for p in parsed]
        columns[name] = (_typed(values, *space[name], configs.index) if name in space
                         else pd.Series(values, index=configs.index, dtype=object))
    return pd.DataFrame(columns, index=configs.index, columns=names)


def _trials_frame(rows, metric_rows):
    kinds, statuses = _enum_names(rows.dtype, "kind"), _enum_names(rows.dtype, "status")
    frame = pd.DataFrame({
        "candidate": rows["candidate"].astype(np.int64),
        "kind": [kinds.get(int(k), str(k)) for k in rows["kind"]],
        "index": rows["index"].astype(np.int64),
        "attempt": rows["attempt"].astype(np.int64),
        "status": [statuses.get(int(s), str(s)) for s in rows["status"]],
        "start": rows["start"], "end": rows["end"],
        "exit_code": rows["exit_code"].astype(np.int64),
        "objective": rows["objective"],
        "reason": [_text(r) for r in rows["reason"]],
        "output_tail": [_text(o) for o in rows["output_tail"]],
    })
    frame["duration"] = frame["end"] - frame["start"]
    # Each confirmation pair is recorded with its own start and end (flotilla-pairs times them).
    # Files written before it did record the whole confirmation's span on every pair: there each
    # pair's duration is its share, so that summing durations counts that time once, not once per
    # pair (a pair of its own time shares its start and end with no other: its share is itself).
    confirm = frame["kind"] == "confirm"
    if confirm.any():
        share = frame[confirm].groupby(["candidate", "start", "end"])["duration"].transform("size")
        frame.loc[confirm, "duration"] = frame.loc[confirm, "duration"] / share
    for column in ("rank", "host", "device", "cores"):  # recorded by newer writers
        if column in (rows.dtype.names or ()):
            values = rows[column]
            frame[column] = values.astype(np.int64) if column == "rank" else [_text(v) for v in values]
    frame.index.name = "trial"
    # Metrics of a trial still being written (row not yet in /trials) are ignored.
    metrics = pd.DataFrame({
        "trial": metric_rows["trial"].astype(np.int64),
        "name": [_text(n) for n in metric_rows["name"]],
        "value": metric_rows["value"],
    })
    metrics = metrics[(metrics["trial"] >= 0) & (metrics["trial"] < len(frame))].reset_index(drop=True)
    return frame, metrics


_OUTCOMES = ("not_run", "pass", "fail", "skip", "error", "timeout")


def _tests_frame(f):
    """The /tests group as one row per (candidate, test); None when no candidate has any.

    Follows results/TestOutcomes.h: the low nibble is the first run, the high nibble the re-run
    (0: none); the outcome that counts is the re-run's when there was one; durations are
    1 ms * 1.07**(q - 1) for q >= 1, NaN for 0.
    """
    runs = _read_table(f, "tests/runs")
    if len(runs) == 0:
        return None
    suites = _read_table(f, "tests/suites")
    names_bytes = f["tests/names"]
    names_bytes.refresh()
    messages = _read_table(f, "tests/messages")
    outcomes, durations = f["tests/outcomes"], f["tests/durations"]
    outcomes.refresh()
    durations.refresh()
    frames = []
    for run in runs:
        suite = suites[int(run["suite"])]
        start, size = int(suite["names_start"]), int(suite["names_bytes"])
        names = bytes(names_bytes[start:start + size]).decode("utf-8", "replace").split("\n")[:-1]
        count = int(run["tests"])
        codes = outcomes[int(run["outcomes_start"]):int(run["outcomes_start"]) + count].astype(np.int64)
        first, rerun = codes & 0x0F, codes >> 4
        effective = np.where(rerun != 0, rerun, first)
        seconds = np.full(count, np.nan)
        if int(run["durations_start"]) >= 0:
            q = durations[int(run["durations_start"]):int(run["durations_start"]) + count].astype(np.float64)
            seconds = np.where(q > 0, 1e-3 * 1.07 ** (q - 1), np.nan)
        text = [""] * count
        m0 = int(run["messages_start"])
        for row in messages[m0:m0 + int(run["messages"])]:
            text[int(row["test"])] = _text(row["text"])
        frames.append(pd.DataFrame({
            "candidate": np.full(count, int(run["candidate"]), dtype=np.int64),
            "test": names,
            "first": [_OUTCOMES[i] if i < len(_OUTCOMES) else str(i) for i in first],
            "rerun": [_OUTCOMES[i] if i < len(_OUTCOMES) else str(i) for i in rerun],
            "outcome": [_OUTCOMES[i] if i < len(_OUTCOMES) else str(i) for i in effective],
            "flaky": (np.isin(first, (2, 4, 5))) & (rerun == 1),
            "duration_s": seconds,
            "message": text,
        }))
    return pd.concat(frames, ignore_index=True)


def _test_numbers_frame(f):
    """/tests/numbers as one row per (candidate, test, name): value; None when the file has none
    (suites that report no numbers, or a file from before them). As results/TestTables.cpp reads
    them: only candidates with a /tests/runs row, and a candidate's last /tests/number_runs row."""
    if "numbers" not in f["tests"]:
        return None
    locators = _read_table(f, "tests/number_runs")
    runs = {int(r["candidate"]): r for r in _read_table(f, "tests/runs")}
    last = {int(r["candidate"]): r for r in locators if int(r["candidate"]) in runs}
    if not last:
        return None
    suites = _read_table(f, "tests/suites")
    names_bytes, numbers = f["tests/names"], f["tests/numbers"]
    names_bytes.refresh()
    numbers.refresh()
    rows = {"candidate": [], "test": [], "name": [], "value": []}
    for candidate, locator in sorted(last.items()):
        suite = suites[int(runs[candidate]["suite"])]
        start, size = int(suite["names_start"]), int(suite["names_bytes"])
        names = bytes(names_bytes[start:start + size]).decode("utf-8", "replace").split("\n")[:-1]
        first = int(locator["numbers_start"])
        for n in numbers[first:first + int(locator["numbers"])]:
            rows["candidate"].append(candidate)
            rows["test"].append(names[int(n["test"])])
            rows["name"].append(_text(n["name"]))
            rows["value"].append(float(n["value"]))
    return pd.DataFrame(rows).astype({"candidate": np.int64, "value": np.float64})


_PROPOSAL_STATUS = ("accepted", "refused", "answered")  # ProposalStatus in results/Store.h


def _proposals_frame(f):
    """/proposals with its texts from /proposal_text, one row per proposal or proposer answer, as
    results/Store.cpp reads them: rows up to the first one never written (time 0), a text whose
    bytes are not all there reads as empty. An empty frame for a file written before proposals."""
    columns = ["id", "round", "proposer", "parent", "hash", "status", "name", "reason", "time", "patch", "rationale"]
    if "proposals" not in f:
        return pd.DataFrame(columns=columns)
    rows = _read_table(f, "proposals")
    rows = _written(rows, rows["time"] != 0)
    text = f["proposal_text"]
    text.refresh()
    size = len(text)

    def text_of(start, length):
        start, length = int(start), int(length)
        if length <= 0 or start < 0 or start + length > size:
            return ""
        return bytes(text[start:start + length]).decode("utf-8", "replace")

    return pd.DataFrame({
        "id": np.arange(len(rows), dtype=np.int64),
        "round": rows["round"].astype(np.int64),
        "proposer": rows["proposer"].astype(np.int64),
        "parent": pd.array([p if p >= 0 else pd.NA for p in rows["parent"].tolist()], dtype="Int64"),
        "hash": [f"{int(h):016x}" for h in rows["hash"]],
        "status": [_PROPOSAL_STATUS[s] if 0 <= s < len(_PROPOSAL_STATUS) else str(s) for s in rows["status"].tolist()],
        "name": [_text(n) for n in rows["name"]],
        "reason": [_text(r) for r in rows["reason"]],
        "patch": [text_of(r["patch_start"], r["patch_bytes"]) for r in rows],
        "rationale": [text_of(r["rationale_start"], r["rationale_bytes"]) for r in rows],
        "time": rows["time"],
    }, columns=columns)


def _proposal_of(origin):
    """The proposal id in a candidate's origin ("proposal 12" -> 12), or None (results/Lineage.h)."""
    prefix = "proposal "
    digits = origin[len(prefix):] if origin.startswith(prefix) else ""
    if not re.fullmatch(r"-?[0-9]+", digits):
        return None
    value = int(digits)
    return value if 0 <= value < 2 ** 63 else None


def _lineage_of(candidate, origins, parents):
    """The candidates from the root down to `candidate` (itself last), following each proposal's
    parent; `parents` maps proposal id -> parent candidate. A damaged file cannot make it loop."""
    line, seen, at = [], set(), candidate
    while 0 <= at < len(origins) and at not in seen:
        seen.add(at)
        line.append(at)
        proposal = _proposal_of(origins[at])
        if proposal is None or proposal >= len(parents):
            break
        at = parents[proposal]
    return line[::-1]


def _proposal_columns(candidates, proposals):
    """Each candidate's proposal name, parent candidate and chain of proposal names (Analysis.cpp)."""
    origins = list(candidates["origin"])
    parents = [int(p) if p is not pd.NA else -1 for p in proposals["parent"]]
    names = list(proposals["name"])
    valid = [p if p is not None and p < len(names) else None for p in map(_proposal_of, origins)]
    chains = []
    for i, proposal in enumerate(valid):
        line = _lineage_of(i, origins, parents) if proposal is not None else []
        steps = [_proposal_of(origins[c]) for c in line]
        chains.append(tuple(names[p] for p in steps if p is not None and p < len(names)))
    return pd.DataFrame({
        "proposal": [names[p] if p is not None else None for p in valid],
        "chain": chains,
        "parent": pd.array([parents[p] if p is not None and parents[p] >= 0 else pd.NA for p in valid], dtype="Int64"),
    }, index=candidates.index)


def _latest(trials, kind, limit=None):
    """Latest attempt of each (candidate, index) of one kind, for indices below limit (if any)."""
    of_kind = trials[trials["kind"] == kind]
    if limit is not None:
        of_kind = of_kind[of_kind["index"] < limit]
    # Ties in attempt: the later row wins, as in the C++ rule (attempt >= kept attempt).
    order = of_kind.reset_index().sort_values(["candidate", "index", "attempt", "trial"], kind="stable")
    return order.groupby(["candidate", "index"], sort=False).tail(1).set_index("trial")


def _binomial_half_cdf(n, k):
    """P(Bin(n, 1/2) <= k)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n


def _median_interval(values, confidence):
    """The median's order-statistic interval and its coverage (results/Stats.h)."""
    v = np.sort(np.asarray(values, dtype=float))
    n, alpha, k = len(v), 1 - confidence, 1
    while k + 1 <= (n + 1) // 2 and 2 * _binomial_half_cdf(n, k) <= alpha:
        k += 1
    return float(v[k - 1]), float(v[n - k]), max(0.0, 1 - 2 * _binomial_half_cdf(n, k - 1))


def _first_error_line(trial):
    """The first line of a failed trial's output tail that holds "error", else its reason (Analysis.h)."""
    for line in trial["output_tail"].split("\n"):
        if "error" in line.lower():
            return line.rstrip("\r ")
    return trial["reason"]


def _below_full_fidelity(config, fidelity):
    """Whether a configuration has the fidelity parameter ("n=1024") at another value (Analysis.h)."""
    if not fidelity:
        return False
    name, _, full = fidelity.partition("=")
    values = dict(w.split("=", 1) for w in config.split() if "=" in w)
    return name in values and values[name] != full


def _tests_objective(objective, evaluate, metric_values, shards):
    """intent.objective = tests.passed or tests.GROUP (docs/propose.md): each candidate's value is a
    metric of its test gate's verdict (evaluate index `shards`, latest attempt), not a median of
    explore runs. {candidate id: value}."""
    verdicts = evaluate[evaluate["index"] == shards]
    if objective not in metric_values.columns or verdicts.empty:
        return {}
    values = metric_values[objective].reindex(verdicts.index)
    return {int(c): float(v) for c, v in zip(verdicts["candidate"], values) if np.isfinite(v)}


def _last_message_line(text):
    """The last non-blank line of an output tail that is not a metric line (Analysis.cpp)."""
    found = ""
    for line in text.split("\n"):
        line = line.rstrip("\r ")
        if line and not line.startswith(("flotilla-metric:", "{")):
            found = line
    return found


def _rollback_reason(judged, declared):
    """Why a rolled-back candidate failed, as the CLI says it (Analysis.cpp): its first failed
    evaluate trial by index; the test gate's (index `declared`) or a shard's, with its last line."""
    first = judged[judged["status"] != "ok"].sort_values("index").iloc[0]
    if first["index"] == declared:
        return f"test gate: {first['reason']}"
    detail = _last_message_line(first["output_tail"])
    return f"shard {first['index']}/{declared}: {first['reason']}" + (f": {detail}" if detail else "")


def _summarize(candidates, trials, metrics, repeats, shards, confidence, fidelity="", objective="", declared=0):
    """Each candidate's status and objective (Analysis.h). `shards`: the evaluate trials a verdict
    needs (with a test gate, the gate's own trial too); `declared`: the campaign's shards."""
    explore = _latest(trials, "explore")
    builds = _latest(trials, "build")
    evaluate = _latest(trials, "evaluate", shards) if shards > 0 else explore.iloc[0:0]
    metric_values = metrics.pivot_table(index="trial", columns="name", values="value", aggfunc="last")
    counted = (_tests_objective(objective, _latest(trials, "evaluate"), metric_values, declared)
               if objective.startswith("tests.") else {})
    rows = []
    for cid, config in zip(candidates["id"], candidates["config"]):
        mine = explore[explore["candidate"] == cid]
        row = {"status": "pending", "objective": np.nan, "interval_low": np.nan, "interval_high": np.nan,
               "interval_coverage": np.nan, "spread": 0.0, "repeats_done": len(mine),
               "shards_done": 0, "shards_passed": 0, "reason": ""}
        failed = mine[mine["status"] != "ok"]
        build = builds[builds["candidate"] == cid]
        if len(build) and build.iloc[-1]["status"] != "ok":  # never explored (docs/build.md)
            row.update(status="build_failed", reason=_first_error_line(build.iloc[-1]))
        elif repeats == 0:
            row["status"] = "explored"  # nothing to explore: its objective comes from its tests
        elif len(failed):
            first = failed.sort_values("index").iloc[0]
            row.update(status="explore_failed", reason=f"repeat {first['index']}: {first['reason']}")
        elif len(mine) >= repeats:
            values = mine["objective"].to_numpy()
            median = float(np.median(values))
            low, high, coverage = _median_interval(values, confidence)
            row.update(status="explored", objective=median, interval_low=low, interval_high=high,
                       interval_coverage=coverage,
                       spread=(values.max() - values.min()) / abs(median) if median != 0 else 0.0)
            present = metric_values.reindex(mine.index)
            for name in present.columns:
                column = present[name].dropna()
                if len(column):
                    row[f"metric.{name}"] = float(np.median(column))
        if row["status"] == "explored" and _below_full_fidelity(config, fidelity):
            row["status"] = "screened"
        if row["status"] == "explored" and shards > 0:
            judged = evaluate[evaluate["candidate"] == cid]
            row["shards_done"] = len(judged)
            row["shards_passed"] = int((judged["status"] == "ok").sum())
            if row["shards_passed"] == shards:
                row["status"] = "verified"
            elif row["shards_done"] > row["shards_passed"]:
                row["status"] = "rolled_back"
                row["reason"] = _rollback_reason(judged, declared)
        if row["status"] in ("verified", "rolled_back", "explored") and int(cid) in counted:
            row["objective"] = counted[int(cid)]
        rows.append(row)
    fixed = ["status", "objective", "interval_low", "interval_high", "interval_coverage", "spread", "repeats_done",
             "shards_done", "shards_passed", "reason"]
    frame = pd.DataFrame(rows, index=candidates.index)
    return frame.reindex(columns=fixed + sorted(c for c in frame.columns if c not in fixed))


class Campaign:
    """Everything in one campaign file; see the module docstring."""

    def __init__(self, path):
        self.path = path
        with _open(path) as f:
            attrs = f["campaign"].attrs
            self.info = {key: (_text(value) if isinstance(value, (bytes, str)) else value.item())
                         for key, value in attrs.items()}
            self.schema = int(f.attrs["flotilla_schema"])
            # Trials first: the writer records a candidate before its trials, so while it writes
            # (SWMR) every trial read here finds its candidate in the candidates read after it;
            # metrics after trials, as metrics of a trial not yet read are ignored.
            trial_rows = _read_table(f, "trials")
            trial_rows = _written(trial_rows, (trial_rows["start"] != 0) | (trial_rows["end"] != 0))
            metric_rows = _read_table(f, "metrics")
            metric_rows = _written(metric_rows, metric_rows["name"] != b"")
            candidate_rows = _read_table(f, "candidates")
            candidate_rows = _written(candidate_rows, candidate_rows["id"] == np.arange(len(candidate_rows)))
            event_rows = _read_table(f, "events")
            event_rows = _written(event_rows, (event_rows["time"] != 0) | (event_rows["kind"] != b""))
            # Schema 2: a configuration longer than the row's field is whole in /candidate_text.
            configs = [_text(c) for c in candidate_rows["config"]]
            if "text_bytes" in (candidate_rows.dtype.names or ()) and "candidate_text" in f:
                text = f["candidate_text"]
                text.refresh()
                for i, row in enumerate(candidate_rows):
                    if int(row["text_bytes"]) > 0:
                        start = int(row["text_start"])
                        configs[i] = bytes(text[start:start + int(row["text_bytes"])]).decode("utf-8", "replace")
            confirmation_rows = _read_table(f, "confirmations") if "confirmations" in f else None
            estimate_rows = _read_table(f, "estimates") if "estimates" in f else None
            # Per-test outcomes, in files whose evaluate stage records them (test suites sharded
            # at scale); None otherwise, and test_outcomes stays at shard granularity.
            # After the candidates: a proposal is written before the candidate it becomes.
            self.proposals = _proposals_frame(f)
            self.tests = _tests_frame(f) if isinstance(f.get("tests"), h5py.Group) else None
            self.test_numbers = _test_numbers_frame(f) if isinstance(f.get("tests"), h5py.Group) else None
        self.candidates = pd.DataFrame({
            "id": candidate_rows["id"].astype(np.int64),
            "round": candidate_rows["round"].astype(np.int64),
            "config": configs,
            "origin": [_text(o) for o in candidate_rows["origin"]],
        })
        self.candidates = pd.concat([self.candidates, _proposal_columns(self.candidates, self.proposals)], axis=1)
        made = {_proposal_of(o): i for i, o in zip(self.candidates["id"], self.candidates["origin"])}
        # The candidate each proposal became, where `export --table proposals` has it.
        self.proposals.insert(8, "candidate", pd.array([made.get(p, pd.NA) for p in self.proposals["id"]], dtype="Int64"))
        self.trials, self.metrics = _trials_frame(trial_rows, metric_rows)
        self.events = pd.DataFrame({
            "time": event_rows["time"],
            "kind": [_text(k) for k in event_rows["kind"]],
            "detail": [_text(d) for d in event_rows["detail"]],
        })
        # With a test gate, its verdict (evaluate index `shards`) is one more required trial.
        shards = int(self.info.get("shards", 0))
        required = shards + 1 if shards > 0 and self.info.get("test_gate") else shards
        self.confirmations = _confirmations_frame(confirmation_rows)
        self.estimates = _estimates_frame(estimate_rows)
        summary = _summarize(self.candidates, self.trials, self.metrics,
                             int(self.info.get("repeats", 1)), required,
                             float(self.info.get("confirm_confidence", 0.95)), self.info.get("fidelity", ""),
                             self.info.get("objective", ""), shards)
        summary = summary.join(self._verdicts(), how="left")
        self.space = _recorded_space(self.info.get("fingerprint", ""))
        params = _parameter_columns(self.candidates["config"], self.space)
        params = params.rename(columns={p: f"param.{p}" for p in params.columns if p in summary.columns
                                        or p in self.candidates.columns})
        self.candidates = pd.concat([self.candidates, summary, params], axis=1)
        self.test_outcomes = self._test_outcomes()
        self.state = self._state()

    @property
    def objective(self):
        return self.info["objective"]

    @property
    def maximize(self):
        return self.info.get("direction", "maximize") != "minimize"

    def _baseline_id(self):
        baseline = self.candidates.index[self.candidates["origin"] == "baseline"]
        return int(baseline[0]) if len(baseline) else -1

    def _verdicts(self):
        """Each candidate's confirmation against the baseline (the last recorded one), as columns of
        candidates; rows against another candidate are head to head (head_to_head)."""
        columns = ["verdict", "ratio", "ratio_low", "ratio_high", "pairs"]
        frame = pd.DataFrame(index=self.candidates.index, columns=columns)
        frame["verdict"] = ""
        baseline = self._baseline_id()
        for _, row in self.confirmations.iterrows():
            if int(row["reference"]) != baseline:
                continue
            frame.loc[int(row["candidate"]), columns] = [row["verdict"], row["ratio"], row["low"], row["high"],
                                                         int(row["pairs"])]
        for column in ("ratio", "ratio_low", "ratio_high"):
            frame[column] = frame[column].astype(float)
        return frame

    @property
    def confirming(self):
        return int(self.info.get("confirm_max_pairs", 0)) > 0 and (self.candidates["origin"] == "baseline").any()

    @property
    def goals(self):
        """Several objectives: [(metric, maximize), ...] from the `objectives` attribute; [] with one."""
        text = self.info.get("objectives", "")
        return [(g.rsplit(":", 1)[0], g.rsplit(":", 1)[1] in ("max", "maximize")) for g in text.split(",")] if text else []

    def _goal_values(self, frame):
        columns = ["objective" if m == self.info["objective"] else f"metric.{m}" for m, _ in self.goals]
        present = [c if c in frame.columns else None for c in columns]
        if None in present:
            return None
        return frame[columns].rename(columns=dict(zip(columns, [m for m, _ in self.goals]))).dropna()

    def _front_of(self, frame):
        """The non-dominated rows of `frame` over the goals, best first by the first goal."""
        values = self._goal_values(frame)
        if values is None or values.empty:
            return values.iloc[0:0] if values is not None else frame.iloc[0:0]
        signs = np.array([1.0 if maximize else -1.0 for _, maximize in self.goals])
        v = values.to_numpy() * signs  # higher is better on every column
        # Row i is kept unless some row is at least as good everywhere and better somewhere
        # (one numpy comparison per row, not per pair; a row never dominates itself).
        keep = [not ((v >= v[i]).all(axis=1) & (v > v[i]).any(axis=1)).any() for i in range(len(v))]
        front = values[keep]
        first, first_max = self.goals[0][0], self.goals[0][1]
        return front.sort_values(first, ascending=not first_max, kind="stable")

    @property
    def front(self):
        """Several objectives: the candidates no other (not rolled back) beats on every objective."""
        pool = self.candidates[~self.candidates["status"].isin(("rolled_back", "screened"))]
        front = self._front_of(pool)
        return self.candidates.loc[front.index]

    def _pick(self, front):
        """The member the campaign's pick rule chooses (Objectives.h)."""
        rule = self.info.get("pick", "knee") or "knee"
        v = front.to_numpy()
        if rule == "lexicographic":
            order = sorted(range(len(v)), key=lambda i: tuple(-v[i][g] if m else v[i][g]
                                                              for g, (_, m) in enumerate(self.goals)))
            return front.index[order[0]]
        low, high = v.min(axis=0), v.max(axis=0)
        span = np.where(high > low, high - low, 1.0)
        scaled = np.array([[((high[g] - x[g]) if m else (x[g] - low[g])) / span[g] if high[g] > low[g] else 0.0
                            for g, (_, m) in enumerate(self.goals)] for x in v])
        if rule.startswith("weighted"):
            weights = np.array([float(w) for w in rule[len("weighted"):].split(",")])
            scores = scaled @ weights
        else:
            scores = (scaled ** 2).sum(axis=1)
        return front.index[int(np.argmin(scores))]  # the first of equal scores, as flotilla

    @property
    def best(self):
        """The winner (see the module docstring), or None."""
        eligible = "verified" if int(self.info.get("shards", 0)) > 0 else "explored"
        pool = self.candidates[self.candidates["status"] == eligible]
        if pool.empty:
            return None
        if self.goals:
            front = self._front_of(pool)
            return None if front.empty else self.candidates.loc[self._pick(front)]
        if self.confirming:
            faster = pool[(pool["verdict"] == "faster") & (pool["origin"] != "baseline")]
            if not faster.empty:
                return self.candidates.loc[self._settle_finalists(faster)]
            baseline = pool[pool["origin"] == "baseline"]
            return baseline.iloc[0] if not baseline.empty else None
        values = pool["objective"]
        return pool.loc[values.idxmax() if self.maximize else values.idxmin()]

    def head_to_head(self, a, b):
        """Candidate a's head-to-head confirmation over b as (verdict, ratio, low, high), from either
        one's row in /confirmations (b's against a inverted), or None when they never met."""
        rows = self.confirmations
        for first, second, invert in ((a, b, False), (b, a, True)):
            match = rows[(rows["candidate"] == first) & (rows["reference"] == second)]
            if match.empty:
                continue
            row = match.iloc[-1]
            verdict, ratio, low, high = row["verdict"], float(row["ratio"]), float(row["low"]), float(row["high"])
            if invert:
                verdict = {"faster": "slower", "slower": "faster"}.get(verdict, verdict)
                ratio, low, high = 1 / ratio, 1 / high, 1 / low
            return verdict, ratio, low, high
        return None

    def _settle_finalists(self, faster):
        """The winner among candidates confirmed faster (docs/verdicts.md, "Ties"): the best ratio
        over the baseline, unless a finalist whose interval overlaps the holder's beat it head to
        head, and so on, each holding at most once."""
        order = list(faster.sort_values("ratio", ascending=False, kind="stable").index)
        holder, held = order[0], {order[0]}
        changed = True
        while changed:
            changed = False
            for other in order:
                if other == holder or other in held or faster.loc[other, "ratio_high"] < faster.loc[holder, "ratio_low"]:
                    continue
                duel = self.head_to_head(int(other), int(holder))
                if duel is not None and duel[0] == "faster":
                    holder = other
                    held.add(other)
                    changed = True
                    break
        return holder

    @property
    def lineage(self):
        """The winner's line of descent: candidate ids from its root (the baseline, or the declared
        candidate the first patch applied to) down to the winner; [] without a winner."""
        best = self.best
        if best is None:
            return []
        parents = [int(p) if p is not pd.NA else -1 for p in self.proposals["parent"]]
        return _lineage_of(int(best["id"]), list(self.candidates["origin"]), parents)

    def counts(self):
        """Candidates per status and trial totals, as `flotilla results summary --json` reports."""
        status = self.candidates["status"].value_counts()
        out = {s: int(status.get(s, 0)) for s in
               ("verified", "rolled_back", "explored", "explore_failed", "build_failed", "pending", "screened")}
        counted = self.trials[self.trials["kind"].isin(("explore", "evaluate", "build"))]  # not pairs or warm-ups
        out.update(candidates=len(self.candidates), trials=len(counted),
                   failed_trials=int((counted["status"] != "ok").sum()))
        verdicts = self.candidates["verdict"].value_counts()
        out.update(confirmed_faster=int(verdicts.get("faster", 0)),
                   no_significant_difference=int(verdicts.get("no_difference", 0)),
                   confirmed_slower=int(verdicts.get("slower", 0)),
                   confirmations_failed=int(verdicts.get("failed", 0)),
                   confirmations_unreliable=int(verdicts.get("unreliable", 0)))
        return out

    @property
    def complete(self):
        return self.state == "finished" and self.counts()["pending"] == 0

    @property
    def note(self):
        if self.complete:
            return ""
        pending = self.counts()["pending"]
        tail = f" with {pending} of {len(self.candidates)} candidates pending" if pending else ""
        return {"running": f"incomplete: the campaign is still running{tail}; these are its results so far",
                "interrupted": f"incomplete: the campaign was interrupted{tail}; run it again to resume",
                "cancelled": f"incomplete: the campaign was stopped by `flotilla cancel`{tail}; run it again to resume",
                "stopped": f"incomplete: the campaign stopped without finishing (crashed or killed){tail}; "
                           "run it again to resume",
                "finished": f"incomplete: the campaign finished{tail}"}[self.state]

    def _state(self):
        lifecycle = [k for k in self.events["kind"] if k in _LIFECYCLE]
        last = lifecycle[-1] if lifecycle else ""
        if last == "campaign_finished":
            return "finished"
        if has_live_writer(self.path):
            return "running"
        return last if last in ("interrupted", "cancelled") else "stopped"

    def _test_outcomes(self):
        """One row per evaluate shard (latest attempt): the test outcomes at shard granularity."""
        shards = _latest(self.trials, "evaluate", int(self.info.get("shards", 0)))
        out = shards[["candidate", "index", "attempt", "status", "reason", "exit_code"]].rename(
            columns={"index": "shard"}).reset_index()
        out["passed"] = out["status"] == "ok"
        return out


def _confirmations_frame(rows):
    columns = ["candidate", "reference", "verdict", "pairs", "looks", "ratio", "low", "high", "confidence",
               "min_effect", "time", "reason"]
    if rows is None or len(rows) == 0:
        return pd.DataFrame(columns=columns)
    verdicts = _enum_names(rows.dtype, "verdict")
    reasons = [_text(r) for r in rows["reason"]]
    # An unreliable verdict (an order effect or a trend, results/Stats.h) is stored as failed with
    # its reason, so the file's enum stays the one earlier files have; a failed pair's reason names
    # the pair instead.
    names = [verdicts.get(int(v), str(v)) for v in rows["verdict"]]
    names = ["unreliable" if v == "failed" and r.startswith(_UNRELIABLE) else v for v, r in zip(names, reasons)]
    return pd.DataFrame({
        "candidate": rows["candidate"].astype(np.int64), "reference": rows["reference"].astype(np.int64),
        "verdict": names,
        "pairs": rows["pairs"].astype(np.int64), "looks": rows["looks"].astype(np.int64),
        "ratio": rows["ratio"], "low": rows["low"], "high": rows["high"], "confidence": rows["confidence"],
        "min_effect": rows["min_effect"], "time": rows["time"], "reason": reasons,
    })


def _estimates_frame(rows):
    columns = ["candidate", "repeats", "estimate", "low", "high", "coverage", "time"]
    if rows is None or len(rows) == 0:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame({c: rows[c] for c in columns})


def read_campaign(path):
    """Reads a campaign file; raises CampaignFileError with a clear message for a bad file."""
    return Campaign(str(path))
