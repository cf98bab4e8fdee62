#!/usr/bin/env bash
# Mutation runner for lanesim: which hand-made mutants do the simulated
# worlds catch?
#
#   run.sh <repo-checkout> [--label L] [--tests] [--sims-tests] [--hunt SECS]
#          [--models] [--cascade] [--no-baseline] [--keep] [--timeout SECS]
#          [--corpus FILE] [--until TIME] [mutant-id...]
#
# For each mutant (all of the corpus unless ids are given; the corpus is
# mutants.toml beside this script unless --corpus names another file in
# the same format, e.g. a batch written blind by someone else):
#   1. copies the checkout's working tree (uncommitted changes included,
#      target/ excluded) to $LANESIM_MUTANTS_OUT/work/<id>;
#   2. applies the mutant (fails loudly unless `find` occurs exactly once;
#      src/dist/... is mapped to src/distribution/... when renamed);
#   3. builds with a shared CARGO_TARGET_DIR=$LANESIM_MUTANTS_OUT/target:
#      nice -n 19 cargo build --release -p lanesim-sims
#   4. runs, from the copy's root, with a timeout (default 600 s):
#      nice -n 19 target/release/lanesim run scenarios --jobs 1
#   5. with --tests, also: nice -n 19 cargo test --release -p lanesim
#   5b. with --sims-tests, also the testbed's own tests (for mutants of the
#      testbed itself, sims/ and examples/, whose bugs are dishonest verdicts
#      `run scenarios` on lanesim's own components cannot see; column
#      `sims_tests`: pass, or FAIL:<failing tests> / FAIL:build-or-timeout):
#      nice -n 19 cargo test --release --no-fail-fast -p lanesim-sims -p lanesim-examples
#   6. with --hunt SECS, also a generated-case hunt of SECS per world
#      (fixed seed, one job; lanes and sender cases, then mesh cases):
#      nice -n 19 target/release/lanesim hunt --world both|mesh --for SECS --seed 1 --no-shrink
#   7. with --models, also every loom and shuttle model, as CI runs them
#      (own target dirs beside the shared one; the thread-level races no
#      single-threaded run can reach are judged here):
#      RUSTFLAGS="--cfg loom" cargo test --release -p lanesim --features planted-bugs --test 'loom_*'
#      RUSTFLAGS="--cfg shuttle" cargo test ... --test 'shuttle_*'
# --cascade: the hunt, the models, the unit tests and the testbed tests run
# for a mutant only while no earlier one caught it (scenarios, hunt,
# models, unit tests, in that order): a batch judged layer by layer in the
# time of its misses. The summary's "by layer" line counts each mutant once,
# by the first layer that caught it, and the share the worlds (scenarios
# and hunts) caught.
# --until TIME (anything `date -d` reads, e.g. 08:40Z): start no mutant
# after TIME; those left get the verdict not-started (a time-boxed batch).
# Results: $LANESIM_MUTANTS_OUT/results-<label>.tsv (label = --label, else the
# checkout's short git hash, "-dirty" appended if it has uncommitted
# changes), logs under $LANESIM_MUTANTS_OUT/logs/<label>/.
# An unmutated "_baseline" row runs first (skip with --no-baseline); if the
# baseline does not pass, every other row is meaningless.
#
# Verdicts: caught = run exit 1 (violation) or 3 (liveness); mark-miss =
# exit 5 (no contract broken, but a scenario stopped reaching a coverage mark
# it lists); missed = exit 0; crash = exit 4, other codes, or the timeout;
# build-fail; apply-fail.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOML="$HERE/mutants.toml"
# Everything the runner writes lives outside the checkout it mutates.
OUT="${LANESIM_MUTANTS_OUT:-${TMPDIR:-/tmp}/lanesim-mutants}"
mkdir -p "$OUT"
WORK="$OUT/work"
export CARGO_TARGET_DIR="$OUT/target"
BIN="$CARGO_TARGET_DIR/release/lanesim"

# The whole comment block above, however long it grows.
# With --cascade, a later layer (hunt, models, unit tests, testbed tests)
# runs only for a mutant no earlier layer caught.
later() {
  [ "$CASCADE" = 0 ] && return 0
  [ "$verdict" != caught ] && [ "$hunt" != caught ] && [[ "$models" != FAIL* ]] && [ "$tests" != FAIL ]
}

usage() { awk 'NR>1 && /^#/ {print; next} NR>1 {exit}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }

CHECKOUT=""; LABEL=""; CASCADE=0; TESTS=0; SIMS_TESTS=0; HUNT=0; MODELS=0; BASELINE=1; KEEP=0; TIMEOUT=600; UNTIL=""; IDS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --label) LABEL="$2"; shift 2 ;;
    --tests) TESTS=1; shift ;;
    --cascade) CASCADE=1; shift ;;
    --sims-tests) SIMS_TESTS=1; shift ;;
    --hunt) HUNT="$2"; shift 2 ;;
    --models) MODELS=1; shift ;;
    --no-baseline) BASELINE=0; shift ;;
    --keep) KEEP=1; shift ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    --until) UNTIL="$(date -d "$2" +%s)" || exit 2; shift 2 ;;
    --corpus) TOML="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")" || exit 2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "unknown option $1" >&2; usage ;;
    *) if [ -z "$CHECKOUT" ]; then CHECKOUT="$1"; else IDS+=("$1"); fi; shift ;;
  esac
done
[ -n "$CHECKOUT" ] || usage
CHECKOUT="$(cd "$CHECKOUT" && pwd)" || { echo "no checkout $CHECKOUT" >&2; exit 2; }
[ -f "$CHECKOUT/Cargo.toml" ] && [ -d "$CHECKOUT/scenarios" ] || { echo "$CHECKOUT is not a lanesim checkout" >&2; exit 2; }
case "$OUT/" in "$CHECKOUT"/*) echo "refusing: LANESIM_MUTANTS_OUT ($OUT) inside the checkout" >&2; exit 2 ;; esac

if [ -z "$LABEL" ]; then
  LABEL="$(git -C "$CHECKOUT" rev-parse --short HEAD 2>/dev/null || echo nogit)"
  if [ -n "$(git -C "$CHECKOUT" status --porcelain 2>/dev/null)" ]; then LABEL="$LABEL-dirty"; fi
fi
if [ ${#IDS[@]} -eq 0 ]; then mapfile -t IDS < <(python3 "$HERE/mutate.py" ids "$TOML") || exit 2; fi
# Unknown ids fail before any build.
for id in "${IDS[@]}"; do python3 "$HERE/mutate.py" meta "$TOML" "$id" >/dev/null || exit 2; done
[ "$BASELINE" = 1 ] && IDS=("_baseline" "${IDS[@]}")

LOGS="$OUT/logs/$LABEL"; mkdir -p "$LOGS" "$WORK"
RESULTS="$OUT/results-$LABEL.tsv"
# One runner at a time: the target dir and the binary are shared.
exec 9>"$OUT/.runner.lock"
flock -n 9 || { echo "another run.sh holds $OUT/.runner.lock" >&2; exit 2; }

printf 'id\tsim_visible\texpect\tbuild\texit\tverdict\tcontracts_seen\tfailing_scenarios\ttests\twall_s\tclass\tvariant\thunt\thunt_found\tmodels\tsims_tests\n' > "$RESULTS"
echo "checkout $CHECKOUT  label $LABEL  mutants ${#IDS[@]}  results $RESULTS"

copy_tree() { # src dst: working tree, without build output
  rm -rf "$2"; mkdir -p "$2"
  # -m: files get the current mtime. Every copy shares one target dir and the
  # same unit hashes, so with the checkout's old mtimes cargo would call the
  # last (mutated) build fresh and run a stale binary.
  tar -C "$1" --exclude=./target --exclude=./sims/target -cf - . | tar -C "$2" -xmf -
}

for id in "${IDS[@]}"; do
  start=$(date +%s)
  if [ "$id" = "_baseline" ]; then
    meta=$'unmutated checkout\t\tn/a'
  else
    meta="$(python3 "$HERE/mutate.py" meta "$TOML" "$id")"
  fi
  IFS=$'\t' read -r class expect sim <<<"$meta"
  dst="$WORK/$id"
  build="-"; code="-"; verdict=""; seen=""; failing=""; tests="-"; variant="-"; hunt="-"; hunt_found="-"; models="-"; sims_tests="-"
  if [ -n "$UNTIL" ] && [ "$start" -ge "$UNTIL" ]; then
    verdict="not-started"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$sim" "$expect" "$build" "$code" "$verdict" \
      - - "$tests" 0 "$class" "$variant" "$hunt" "$hunt_found" "$models" "$sims_tests" >> "$RESULTS"
    echo "$id: not started (--until)"
    continue
  fi
  copy_tree "$CHECKOUT" "$dst"
  if [ "$id" != "_baseline" ] && ! python3 "$HERE/mutate.py" apply "$TOML" "$id" "$dst" > "$LOGS/$id.apply.log" 2>&1; then
    verdict="apply-fail"
    echo "!! $id: $(cat "$LOGS/$id.apply.log")" >&2
  else
    [ "$id" = "_baseline" ] || variant="$(sed -n 's/.*(\(.*\))$/\1/p' "$LOGS/$id.apply.log")"
    # The production code's diff, and the testbed's (mutants of sims/ and
    # the target crate: blind-honest.toml).
    ( cd "$dst" && for d in src sims/src lanesim-target/src examples/src; do
        [ -d "$d" ] && diff -ru --exclude=.git --exclude=target "$CHECKOUT/$d" "$d"; done ) > "$LOGS/$id.diff" 2>&1
    built_after="$(date +%s)"
    if ( cd "$dst" && timeout -k 30 3600 nice -n 19 cargo build --release -p lanesim-sims ) > "$LOGS/$id.build.log" 2>&1 \
       && [ "$(stat -c %Y "$BIN" 2>/dev/null || echo 0)" -ge "$built_after" ]; then
      build="ok"
      ( cd "$dst" && timeout -k 10 "$TIMEOUT" nice -n 19 "$BIN" run scenarios --jobs 1 ) > "$LOGS/$id.run.log" 2>&1
      code=$?
      # `    DC-1 (send or down) violated: ...` and
      # `FAIL  sender_late_down   seeds 0..32   0/32 pass, 32 violated`.
      seen="$(grep -oE '^ +[A-Za-z][A-Za-z0-9-]* (\([^)]*\) )?violated:' "$LOGS/$id.run.log" | awk '{print $1}' | sort -u | paste -sd, -)"
      failing="$(grep -E '^FAIL +[a-z0-9_]+ ' "$LOGS/$id.run.log" \
                 | awk '{for (i = 3; i < NF; i++) if ($(i+1) ~ /^pass/) print $2"("$i")"}' | paste -sd' ' -)"
      case "$code" in
        0) if [ "$id" = "_baseline" ]; then verdict="pass"; else verdict="missed"; fi ;;
        1|3) verdict="caught" ;;
        5) verdict="mark-miss" ;;
        124|137) verdict="crash(timeout)" ;;
        *) verdict="crash" ;;
      esac
      if [ "$id" = "_baseline" ] && [ "$code" != 0 ]; then
        echo "!! baseline does not pass (exit $code): every mutant result is suspect" >&2
      fi
      if [ "$HUNT" != 0 ] && later; then
        # SECS per world: lanes and sender cases alternating, then mesh
        # cases; each guided toward the marks its corpus reached least.
        hunt="missed"
        for world in both mesh; do
          : > "$LOGS/$id.hunt-regressions-$world.txt"
          ( cd "$dst" && timeout -k 10 $(( HUNT + 600 )) nice -n 19 "$BIN" hunt --world "$world" --for "${HUNT}s" --seed 1 --no-shrink \
              --regressions "$LOGS/$id.hunt-regressions-$world.txt" ) > "$LOGS/$id.hunt-$world.log" 2>&1
          case "$?" in
            0) ;;
            1|3) hunt="caught"
                 hunt_found="$world:$(grep -m1 -E '^FAIL case [0-9]+ ' "$LOGS/$id.hunt-$world.log" \
                   | sed -E 's/^FAIL case ([0-9]+) \([^)]*\): ([A-Za-z0-9-]+|liveness).*/\2@case\1/')"
                 break ;;
            *) hunt="crash" ;;
          esac
        done
      fi
      if [ "$MODELS" = 1 ] && later; then
        if ( cd "$dst" \
             && RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$OUT/target-loom" timeout -k 30 3600 nice -n 19 \
                  cargo test --release -p lanesim --features planted-bugs --test 'loom_*' \
             && RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR="$OUT/target-shuttle" timeout -k 30 3600 nice -n 19 \
                  cargo test --release -p lanesim --features planted-bugs --test 'shuttle_*' ) > "$LOGS/$id.models.log" 2>&1; then
          models="pass"
        else
          # The models that failed, by name; none named means a build failure or a timeout.
          # A model that aborts the test process (loom panicking inside a
          # panic, e.g. on a deadlock) prints no "... FAILED" line: name it
          # from its "thread '<model>' ... panicked" line instead.
          models="FAIL:$( { grep -oE '^test [A-Za-z0-9_:]+ \.\.\. FAILED' "$LOGS/$id.models.log" | awk '{print $2}'
                            grep -oE "^thread '[A-Za-z0-9_:]+' \([0-9]+\) panicked" "$LOGS/$id.models.log" | cut -d"'" -f2; } \
                          | awk '!seen[$0]++' | paste -sd, -)"
        fi
      fi
      if [ "$TESTS" = 1 ] && later; then
        if ( cd "$dst" && timeout -k 30 3600 nice -n 19 cargo test --release -p lanesim ) > "$LOGS/$id.tests.log" 2>&1; then
          tests="pass"; else tests="FAIL"; fi
      fi
      if [ "$SIMS_TESTS" = 1 ] && later; then
        if ( cd "$dst" && timeout -k 30 3600 nice -n 19 \
               cargo test --release --no-fail-fast -p lanesim-sims -p lanesim-examples ) > "$LOGS/$id.sims-tests.log" 2>&1; then
          sims_tests="pass"
        else
          # The failing tests by name (a doctest's name has spaces: its
          # file and line, joined by '_'); none named means the tests did
          # not build or timed out.
          failed_tests="$(sed -n 's/^test \(.*\) \.\.\. FAILED$/\1/p' "$LOGS/$id.sims-tests.log" \
                          | tr ' ' '_' | awk '!seen[$0]++' | paste -sd, -)"
          sims_tests="FAIL:${failed_tests:-build-or-timeout}"
        fi
      fi
    else
      build="FAIL"; verdict="build-fail"
      echo "!! $id: build failed (or left a stale $BIN), see $LOGS/$id.build.log" >&2
    fi
  fi
  [ "$KEEP" = 1 ] || rm -rf "$dst"
  wall=$(( $(date +%s) - start ))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$sim" "$expect" "$build" "$code" "$verdict" \
    "${seen:--}" "${failing:--}" "$tests" "$wall" "$class" "$variant" "$hunt" "$hunt_found" "$models" "$sims_tests" >> "$RESULTS"
  printf '%-40s %-10s exit=%-4s %-14s seen=%s tests=%s sims-tests=%s hunt=%s %s models=%s (%ss)\n' "$id" "build=$build" "$code" "$verdict" "${seen:--}" "$tests" "$sims_tests" "$hunt" "$hunt_found" "$models" "$wall"
done

echo
echo "== summary ($RESULTS) =="
awk -F'\t' 'NR>1 && $1!="_baseline" {
    n++; v[$6]++
    if ($6=="caught") c[$2]++
    if ($13=="caught") h++
    if ($13=="caught" && $6!="caught") ho++
    if ($15 ~ /^FAIL/) { m++; if ($6!="caught") mo++ }
    if ($16 ~ /^FAIL/) { st++; if ($6!="caught" && $6!="mark-miss") so++ }
    if ($16 != "-" && $16 != "") sran++
    if ($6!="caught" && $6!="mark-miss" && $6!="not-started" && ($16 == "pass" || $16 == "-" || $16 == "") && $9 != "FAIL" && $15 !~ /^FAIL/ && $13 != "caught") none++
    if ($6!="caught" && $13!="caught" && $15 ~ /^FAIL/) mo_first++
    if ($6!="caught" && $13!="caught" && $15 !~ /^FAIL/ && $9=="FAIL") uo++
    if ($6!="caught" && $6!="mark-miss" && $13!="caught" && $15 !~ /^FAIL/ && $9!="FAIL" && $16 ~ /^FAIL/) so_first++
    t[$2]++
  }
  END {
    printf "mutants: %d  caught: %d  mark-miss only: %d  not caught: %d  crash: %d  build failure: %d  apply failure: %d  not started: %d\n",
      n, v["caught"], v["mark-miss"], v["missed"], v["crash"]+v["crash(timeout)"], v["build-fail"], v["apply-fail"], v["not-started"]
    for (s in t) printf "  sim_visible=%-8s caught %d of %d\n", s, c[s]+0, t[s]
    printf "hunt: caught %d (of which %d not caught by the scenarios)\n", h+0, ho+0
    printf "models (loom, shuttle): caught %d (of which %d not caught by the scenarios)\n", m+0, mo+0
    if (sran) printf "testbed tests (--sims-tests): failed for %d (of which %d not caught by the scenarios, exit 1, 3 or 5)\n", st+0, so+0
    printf "caught by nothing run: %d\n", none+0
    # Each mutant once, by the first layer that caught it, in the order
    # the issue tracker asks for: the worlds (scenarios, then hunts), then
    # the models, then unit tests, then the testbed tests.
    worlds = v["caught"] + ho
    judged = n - v["not-started"] - v["build-fail"] - v["apply-fail"]
    printf "by layer: scenarios %d, hunts only %d, models only %d, unit tests only %d, testbed tests only %d, nothing %d",
      v["caught"], ho+0, mo_first+0, uo+0, so_first+0, none+0
    if (judged > 0) printf "; the worlds caught %d of %d (%d %%)", worlds, judged, 100 * worlds / judged
    printf "\n"
  }' "$RESULTS"
awk -F'\t' 'NR>1 && $1=="_baseline" && $6!="pass" {print "WARNING: baseline verdict " $6 " (exit " $5 ")"}' "$RESULTS"
awk -F'\t' 'NR>1 && $1=="_baseline" && $15 ~ /^FAIL/ {print "WARNING: baseline models " $15}' "$RESULTS"
awk -F'\t' 'NR>1 && $1=="_baseline" && $16 ~ /^FAIL/ {print "WARNING: baseline testbed tests " $16}' "$RESULTS"
