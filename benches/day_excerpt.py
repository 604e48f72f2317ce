#!/usr/bin/env python3
"""Prints a Markdown table of a run's day: each agent's activity and place at some hours.

    python3 benches/day_excerpt.py RUN_DIR [--hours 6,8,10,12,13,15,17,19,21,23] [--cut 60]
        [--date 2023-01-03]

The README's day excerpts are made with it. An agent's activity at a time is its latest
`activity` event at or before it, its place the `to` of its latest `location` event (or the
world's starting place); activities longer than --cut characters are cut and end in "…"
only when cut. A time the run did not reach is left out.
"""

import argparse
import json
import os
import sys
import tomllib


def clock(minutes):
    h, m = divmod(minutes, 60)
    half = "am" if h < 12 else "pm"
    return f"{(h - 1) % 12 + 1:02d}:{m:02d} {half}"


def minutes(text):
    hm, half = text.split()
    h, m = (int(x) for x in hm.split(":"))
    return (h % 12 + (12 if half == "pm" else 0)) * 60 + m


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--hours", default="6,8,10,12,13,15,17,19,21,23")
    ap.add_argument("--cut", type=int, default=60)
    ap.add_argument("--date", help="the day to show (default: the run's first)")
    a = ap.parse_args()
    path = os.path.join(a.run, "events.jsonl")
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        sys.exit(f"{path}: {e}")
    events = []
    for n, line in enumerate(lines, 1):
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError as e:
            sys.exit(f"{path}:{n}: not JSON ({e})")
    start = next((e for e in events if e.get("type") == "run_start"), None)
    if start is None:
        sys.exit(f"{path}: no run_start event")
    world = tomllib.loads(start["config"]["world_source"])
    agents = [ag["name"] for ag in world["agents"]]
    place = {ag["name"]: ag["location"] for ag in world["agents"]}
    date = a.date or start["date"]
    wanted = [h * 60 for h in (int(x) for x in a.hours.split(","))]
    activity = {}
    rows = {}
    seen = set()
    for e in events:
        if e.get("date") != date or "agent" not in e:
            continue
        t = minutes(e["time"])
        for w in wanted:
            if w < t and (w, e["agent"]) not in rows and activity.get(e["agent"]):
                rows[(w, e["agent"])] = (activity[e["agent"]], place[e["agent"]])
        seen.add(t)
        if e.get("type") == "activity":
            activity[e["agent"]] = e["activity"]
        elif e.get("type") == "location":
            place[e["agent"]] = e["to"]
    last = max(seen, default=0)
    for w in wanted:
        for ag in agents:
            if (w, ag) not in rows and w <= last and activity.get(ag):
                rows[(w, ag)] = (activity[ag], place[ag])
    print("| time | " + " | ".join(agents) + " |")
    print("|---" * (len(agents) + 1) + "|")
    for w in wanted:
        if not any((w, ag) in rows for ag in agents):
            continue
        cells = []
        for ag in agents:
            act, where = rows.get((w, ag), ("", ""))
            act = " ".join(act.split())
            if len(act) > a.cut:
                act = act[: a.cut].rstrip() + "…"
            room = where.split("/")[-1]
            cells.append(f"{act} *({room})*".replace("|", "\\|") if act else "")
        print(f"| {clock(w)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
