#!/usr/bin/env python3
"""Checks that a held-out posture set does not overlap the sets written before it.

Run: python3 internal/poison/testdata/posture/overlap_check.py [SET] [DIR]

SET is heldout2.jsonl (the default), heldout3.jsonl, heldout4.jsonl,
heldout5.jsonl, heldout6.jsonl, heldout7.jsonl, heldout8.jsonl, heldout9.jsonl or heldout10.jsonl; it is compared with every set written
before it: poisoned.jsonl, benign.jsonl and heldout.jsonl, for
heldout3.jsonl heldout2.jsonl too, for heldout4.jsonl all five other
files, for heldout5.jsonl all six other files, for heldout6.jsonl
all seven other files, for heldout7.jsonl all eight other files, for
heldout8.jsonl all nine other files, for heldout9.jsonl all ten
other files, and for heldout10.jsonl all eleven other files. DIR defaults to this script's
folder. Reads the other files' texts only to compare them; prints ids and
counts, never a text of another set.
"""
import json, re, sys, difflib, collections
import os
ORDER = ["poisoned.jsonl", "benign.jsonl", "heldout.jsonl", "heldout2.jsonl", "heldout3.jsonl", "heldout4.jsonl", "heldout5.jsonl", "heldout6.jsonl", "heldout7.jsonl", "heldout8.jsonl", "heldout9.jsonl", "heldout10.jsonl"]
args = sys.argv[1:]
name = next((a for a in args if a.endswith(".jsonl")), "heldout2.jsonl")
d = next((a for a in args if not a.endswith(".jsonl")), os.path.dirname(os.path.abspath(__file__)))
if name not in ORDER[2:]:
    sys.exit(f"{name}: not a held-out set ({', '.join(ORDER[2:])})")
def load(name):
    return [json.loads(l) for l in open(f"{d}/{name}") if l.strip()]
mine = load(name)
others = {n: load(n) for n in ORDER[:ORDER.index(name)]}
print(f"{name} against {', '.join(others)}")

def strings(x):
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from strings(v)
norm = lambda s: re.sub(r"\s+", " ", s).strip().lower()
def shingles(s, n=8):
    w = re.findall(r"\w+", s.lower())
    return {" ".join(w[i:i+n]) for i in range(len(w) - n + 1)}

problems = 0
ids = {o["id"] for os in others.values() for o in os}
dup = [m["id"] for m in mine if m["id"] in ids]
print("ids shared with the other sets:", len(dup), dup); problems += len(dup)

srv_other = {o["server"] for os in others.values() for o in os if o.get("server")}
srv_mine = {m["server"] for m in mine if m["label"] == "benign"}
shared = sorted(srv_mine & srv_other)
print("benign servers:", len(srv_mine), "shared with the other sets:", shared); problems += len(shared)

src_other = {o["source"] for os in others.values() for o in os}
src_mine = {m["source"] for m in mine}
print("sources:", len(src_mine), "also cited by the other sets:", sorted(src_mine & src_other)); problems += len(src_mine & src_other)

# Long strings (>= 25 characters) of each of my tools against every string of the other sets.
other_strings = {}
for n, os in others.items():
    for o in os:
        for s in strings(o["tool"]):
            if len(s) >= 25:
                other_strings.setdefault(norm(s), set()).add(o["id"])
other_list = list(other_strings)
other_sh = collections.defaultdict(set)
for s in other_list:
    for sh in shingles(s):
        other_sh[sh].add(s)
exact, contained, similar, shingled = [], [], [], []
for m in mine:
    for s in strings(m["tool"]):
        if len(s) < 25:
            continue
        ns = norm(s)
        if ns in other_strings:
            exact.append(m["id"]); continue
        if any(ns in o or o in ns for o in other_list if len(o) >= 40):
            contained.append(m["id"]); continue
        hits = set()
        for sh in shingles(ns):
            hits |= other_sh.get(sh, set())
        if hits:
            shingled.append(m["id"])
        for o in other_list:
            sm = difflib.SequenceMatcher(None, ns, o)
            if sm.real_quick_ratio() > 0.8 and sm.quick_ratio() > 0.8 and sm.ratio() > 0.8:
                similar.append(m["id"]); break
for name, l in (("identical strings", exact), ("one string inside another (>= 40 chars)", contained),
                ("a shared run of 8 words", shingled), ("similarity ratio > 0.8", similar)):
    l = sorted(set(l))
    print(f"{name}: {len(l)} {l}")
    problems += len(l)
names_other = {o["tool"]["name"] for os in others.values() for o in os}
print("tool names also used in the other sets (informative):", sorted({m['tool']['name'] for m in mine} & names_other))
print("PASS" if problems == 0 else f"FAIL: {problems} overlaps")
