#!/usr/bin/env python3
"""Counts the hourly plan lines of runs that share no topic word with the day plan's lines
for their hour (the line in effect at the hour's start and those starting within it).

    python3 benches/hourly_vs_day_plan.py RUN_DIR...

A topic word is a Latin-script word of four letters or more, not small talk, compared on its
first five letters: close to `topic_words` in src/agent/utterance.rs (this script has a short
small-talk list and reads English only). Each run's first `day_plan` and `hourly_plan` event
per agent are read from its events.jsonl; the hourly lines printed are those events' (after
any rule the run applied).
"""

import json
import re
import sys

SMALL_TALK = set("going ready thanks great about with that this have from what when your just".split())


def minutes(text):
    hm, half = text.split()
    h, m = (int(x) for x in hm.split(":"))
    return (h % 12 + (12 if half == "pm" else 0)) * 60 + m


def keys(text):
    return {
        w[:5]
        for w in re.findall(r"[a-z']+", text.lower())
        if len(w) >= 4 and w not in SMALL_TALK
    }


def first_plans(path, kind):
    plans = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if e.get("type") == kind and e["agent"] not in plans:
                plans[e["agent"]] = [(minutes(x[:8]), x[10:]) for x in e["lines"]]
    return plans


def main(runs):
    total = strayed = 0
    for run in runs:
        path = f"{run}/events.jsonl"
        day, hourly = first_plans(path, "day_plan"), first_plans(path, "hourly_plan")
        n = t = 0
        for agent, lines in hourly.items():
            plan = day.get(agent, [])
            for m, activity in lines:
                before = [a for (s, a) in plan if s <= m]
                planned = [before[-1] if before else "asleep"]
                planned += [a for (s, a) in plan if m < s < m + 60]
                want = set().union(*(keys(p) for p in planned))
                got = keys(activity)
                t += 1
                if got and want and not got & want:
                    n += 1
                    print(f"  {agent} {m // 60:02d}:00 plan {planned!r}, hourly {activity!r}")
        print(f"{run}: {n} of {t} hourly lines about none of the day plan's lines")
        total, strayed = total + t, strayed + n
    print(f"all: {strayed} of {total}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
