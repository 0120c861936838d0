"""Table (a) of ``bench_board`` printed: seconds per server and file, and the ratios of the
other servers' times to sumlens' taken within each round."""

from __future__ import annotations

import argparse
from typing import Any

from benchmarks.board.anchors import IMPORT_CODE
from benchmarks.board.base_dirs import Anchor
from benchmarks.board.common import TARGETS, VIEW_POINTS
from benchmarks.harness.report import fmt_s, fmt_x
from benchmarks.harness.rounds import Table
from benchmarks.harness.stats import median_of, same_round_pairs, summary, verdict

ROW_LABELS = {
    "sumlens_cold": "sumlens serve, cold workspace",
    "sumlens_warm": "sumlens serve, warm workspace (2nd start)",
    "sumlens_nonumba": "sumlens serve, cold workspace + EMPTY numba cache",
    "tensorboard": "tensorboard (whole product, HTTP)",
    "data_server": "tensorboard-data-server alone (gRPC)",
    "mindinsight": "MindInsight (HTTP, 1,000 samples/tag)",
}
SHORT_NAMES = {
    "sumlens_cold": "sumlens cold",
    "sumlens_warm": "sumlens warm",
    "sumlens_nonumba": "sumlens empty numba cache",
    "tensorboard": "TensorBoard",
    "data_server": "data server",
    "mindinsight": "MindInsight",
}
RATIOS = (
    # anchor file, slower row, sumlens row, target key
    ("tb", "tensorboard", "sumlens_cold", "tensorboard"),
    ("tb", "tensorboard", "sumlens_warm", "tensorboard"),
    ("tb", "data_server", "sumlens_cold", "data_server"),
    ("tb", "data_server", "sumlens_warm", "data_server"),
    ("tb", "tensorboard", "sumlens_nonumba", None),
    ("tb", "data_server", "sumlens_nonumba", None),
    ("ms1", "mindinsight", "sumlens_cold", "mindinsight"),
    ("ms1", "mindinsight", "sumlens_warm", "mindinsight"),
    ("ms1", "mindinsight", "sumlens_nonumba", None),
    ("ms10", "mindinsight", "sumlens_cold", "mindinsight"),
    ("ms10", "mindinsight", "sumlens_warm", "mindinsight"),
    ("ms10", "mindinsight", "sumlens_nonumba", None),
)


def _seconds(result: dict[str, Any]) -> float:
    """A result's time; a capped MindInsight run counts as its cap (a lower bound)."""
    return result["cap_s"] if result.get("timed_out") else result["seconds"]


def _notes(key: str, results: list[dict[str, Any]]) -> str:
    """What else a row measured (medians): when the server answered, listed, engine."""
    parts = []
    answered, listed = median_of(results, "answered_s"), median_of(results, "listed_s")
    if answered is not None:
        parts.append(f"first answer {answered:.2f} s")
    if listed is not None:
        parts.append(f"all listed {listed:.2f} s")
    # a warm start reads nothing, so it names no engine (None)
    engines = sorted({r["engine"] for r in results if r.get("engine")})
    if engines:
        parts.append("engine " + "/".join(engines))
    view = median_of(results, "view_s")
    if view is not None:
        parts.append(f"then a {VIEW_POINTS:,}-point view of every tag {view * 1000:.0f} ms")
    if key.endswith("data_server"):
        parts.append(f"run listed {median_of(results, 'run_listed_s'):.2f} s")
    if key.endswith("mindinsight"):
        parts.append(f"`start` command {median_of(results, 'start_s'):.1f} s")
        if any(r.get("timed_out") for r in results):
            parts.append(f"capped at {results[0]['cap_s']:.0f} s")
        parts += [f"STOP FAILED: {r['stop_problem']}" for r in results if r.get("stop_problem")]
    return "; ".join(parts)


def report_a(files: list[Anchor], table: Table, args: argparse.Namespace) -> dict[str, Any]:
    """Print table (a) and its per-round ratios; return them for the JSON."""
    print()
    print(
        "Table (a): seconds from launching the server until every tag is listed and every "
        f"point can be fetched ({args.rounds} rounds, contenders interleaved)"
    )
    print()
    print("| file | server | runs | median s | min - max s | also measured (medians) |")
    print("|---|---|---:|---:|---:|---|")
    rows = []
    for anchor in files:
        for row, label in ROW_LABELS.items():
            key = f"{anchor.key}/{row}"
            results = table.results.get(key, [])
            if key in table.unavailable:
                print(f"| {anchor.key} | {label} | - | unavailable | | {table.unavailable[key]} |")
                continue
            if not results:
                continue
            values = [_seconds(r) for r in results]
            capped = any(r.get("timed_out") for r in results)
            gt = "> " if capped else ""
            stats = summary(values)
            assert stats is not None
            print(
                f"| {anchor.key} | {label} | {stats['n']} | {gt}{fmt_s(stats['median'])} | "
                f"{fmt_s(stats['min'])} - {gt}{fmt_s(stats['max'])} | {_notes(key, results)} |"
            )
            rows.append({"key": key, "label": label, "summary": stats, "capped": capped})
    info = table.results.get("info/import", [])
    if info:
        imp, bare = median_of(info, "seconds"), median_of(info, "python_s")
        print(
            f"\n  info: `python -c '{IMPORT_CODE}'` {imp:.2f} s (an empty interpreter "
            f"{bare:.2f} s), medians of {len(info)} rounds"
        )
    for name, messages in table.failures.items():
        print(f"  FAILED {name}: " + " | ".join(messages))
    for anchor in files:
        print(f"  {anchor.key}: {anchor.label} ({anchor.base_dir})")

    print()
    print("Ratios (other server's time / sumlens' time, per round, same round only):")
    print("| file | ratio | target | median | min - max | rounds | verdict |")
    print("|---|---|---:|---:|---:|---:|---|")
    ratios = []
    for file_key, slow, fast, target_key in RATIOS:
        pairs = same_round_pairs(
            table.results.get(f"{file_key}/{slow}", []), table.results.get(f"{file_key}/{fast}", [])
        )
        if not pairs:
            continue
        values = [_seconds(s) / f["seconds"] for s, f in pairs]
        capped = any(s.get("timed_out") for s, _ in pairs)
        target = TARGETS[target_key] if target_key else None
        stats = summary(values)
        assert stats is not None
        what = f"{SHORT_NAMES[slow]} / {SHORT_NAMES[fast]}"
        gt = "> " if capped else ""
        target_text = f">= {target:g}x" if target else "-"
        outcome = verdict(values, target, capped)
        print(
            f"| {file_key} | {what} | {target_text} | {gt}{fmt_x(stats['median'])} | "
            f"{gt}{fmt_x(stats['min'])} - {gt}{fmt_x(stats['max'])} | {stats['n']} | "
            f"{outcome} |"
        )
        ratios.append(
            {
                "file": file_key,
                "numerator": slow,
                "denominator": fast,
                "target": target,
                "per_round": values,
                "lower_bound": capped,
                "summary": stats,
                "verdict": outcome,
            }
        )
    print()
    print(
        "Targets: sumlens >= 3x sooner than TensorBoard, >= 1.5x sooner than the data server "
        "alone, >= 100x sooner than MindInsight. Ratios under 1.3x are ties on these machines."
    )
    return {"rows": rows, "ratios": ratios}
