#!/usr/bin/env python3
"""Helper for run.sh: reads mutants.toml, applies one mutant to a tree.

  mutate.py ids     TOML                 -> mutant ids, one per line
  mutate.py meta    TOML ID              -> "class<TAB>expect<TAB>sim_visible"
  mutate.py apply   TOML ID TREE         -> applies; exit 2 if `find` is not
                                            found exactly once (or no file);
                                            `[[mutant.alt]]` variants are
                                            tried only when `find` is absent
  mutate.py check   TOML TREE [ID...]    -> checks every `find` occurs once
"""
import os
import sys
import tomllib


def load(path):
    with open(path, "rb") as f:
        mutants = tomllib.load(f)["mutant"]
    ids = [m["id"] for m in mutants]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        sys.exit(f"mutants.toml: duplicate ids {sorted(dup)}")
    return {m["id"]: m for m in mutants}, ids


def resolve(tree, rel):
    """src/dist/... may have been renamed src/distribution/..."""
    candidates = [rel]
    if rel.startswith("src/dist/"):
        candidates.append("src/distribution/" + rel[len("src/dist/"):])
    elif rel.startswith("src/distribution/"):
        candidates.append("src/dist/" + rel[len("src/distribution/"):])
    for c in candidates:
        if os.path.isfile(os.path.join(tree, c)):
            return c
    return None


def locate(tree, m):
    """-> (path, text, (find, replace, variant) or None, error or None).

    The primary `find` must occur exactly once. Only when it occurs zero
    times (or its file is gone) are the optional `[[mutant.alt]]` variants
    tried (the same bug written against a later version of the code, in
    the mutant's file unless the alt names its own `file`: code that
    moved), first match wins; each must also occur exactly once."""
    rel = resolve(tree, m["file"])
    counts = []
    if rel is not None:
        text = open(os.path.join(tree, rel), encoding="utf-8").read()
        n = text.count(m["find"])
        if n == 1:
            return rel, text, (m["find"], m["replace"], "primary"), None
        counts.append(f"primary x{n}")
        if n > 1:
            return rel, text, None, f"{m['id']}: `find` must occur exactly once in {rel}: {', '.join(counts)}"
    else:
        counts.append(f"no file {m['file']}")
    for i, alt in enumerate(m.get("alt", []), 1):
        alt_rel = resolve(tree, alt.get("file", m["file"]))
        if alt_rel is None:
            counts.append(f"alt{i}: no file {alt.get('file', m['file'])}")
            continue
        alt_text = open(os.path.join(tree, alt_rel), encoding="utf-8").read()
        k = alt_text.count(alt["find"])
        if k == 1:
            return alt_rel, alt_text, (alt["find"], alt["replace"], f"alt{i}"), None
        counts.append(f"alt{i} x{k}")
    if rel is None and not m.get("alt"):
        return None, None, None, f"{m['id']}: no file {m['file']} (nor its src/distribution twin) in {tree}"
    return rel, None, None, f"{m['id']}: `find` must occur exactly once in {rel or m['file']}: {', '.join(counts)}"


def main():
    cmd, toml = sys.argv[1], sys.argv[2]
    mutants, ids = load(toml)
    if cmd == "ids":
        print("\n".join(ids))
    elif cmd == "meta":
        m = mutants[sys.argv[3]]
        expect = ",".join(m.get("expect", []))
        print(f"{m.get('class', '')}\t{expect}\t{str(m.get('sim_visible', 'unknown')).lower()}")
    elif cmd == "apply":
        mid, tree = sys.argv[3], sys.argv[4]
        if mid not in mutants:
            sys.exit(f"unknown mutant {mid}")
        m = mutants[mid]
        rel, text, edit, err = locate(tree, m)
        if err:
            print(err, file=sys.stderr)
            sys.exit(2)
        find, replace, variant = edit
        with open(os.path.join(tree, rel), "w", encoding="utf-8") as f:
            f.write(text.replace(find, replace, 1))
        print(f"{rel} ({variant})")
    elif cmd == "check":
        tree = sys.argv[3]
        bad = 0
        for mid in sys.argv[4:] or ids:
            _, _, edit, err = locate(tree, mutants[mid])
            if err:
                print(err)
                bad += 1
            elif edit[2] != "primary":
                print(f"{mid}: applies as {edit[2]}")
        print(f"{len(sys.argv[4:] or ids) - bad} ok, {bad} bad")
        sys.exit(1 if bad else 0)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
