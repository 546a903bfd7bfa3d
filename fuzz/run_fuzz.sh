#!/usr/bin/env bash
# Runs libFuzzer targets built in a fuzz build directory, one after another, each for
# FUZZ_SECONDS, with its seed corpus and dictionary. Prints execs/s, corpus size and the
# outcome per target; exits non-zero when any target crashed, leaked or timed out.
#   fuzz/run_fuzz.sh <build-dir> <seconds> [target...]
# Env: FUZZ_RSS_MB (default 2048), FUZZ_TIMEOUT (seconds per input, default 10),
#      FUZZ_MAX_LEN (default 8192), FUZZ_JOBS_LOG (log directory, default <build>/fuzz/logs),
#      FUZZ_KEEP_GOING=1: libFuzzer's fork mode with -ignore_crashes/-ignore_timeouts/-ignore_ooms,
#      so a run lasts its full time and counts every crash, timeout and OOM (each input is saved
#      in artifacts/); the target still counts as failed when any occurred.
# Each target keeps a working corpus in <build>/fuzz/corpus/<target> (grows across runs);
# crash/leak/timeout inputs land in <build>/fuzz/artifacts/.
set -uo pipefail
build=${1:?build dir}
seconds=${2:-60}
shift; [ $# -gt 0 ] && shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(jinja_parse jinja_render peg_match schema_to_grammar gbnf_check stream_session
           request_adapter)
fi
rss=${FUZZ_RSS_MB:-2048}
timeout=${FUZZ_TIMEOUT:-10}
max_len=${FUZZ_MAX_LEN:-8192}
logs=${FUZZ_JOBS_LOG:-$build/fuzz/logs}
mkdir -p "$logs" "$build/fuzz/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

failed=0
printf '%-18s %8s %10s %10s %8s  %s\n' target seconds execs execs/s corpus result
for t in "${targets[@]}"; do
  bin="$build/fuzz/fuzz_$t"
  corpus="$build/fuzz/corpus/$t"
  mkdir -p "$corpus"
  log="$logs/$t.log"
  extra=()
  otc=""
  if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
    extra=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  fi
  "$bin" -max_total_time="$seconds" -rss_limit_mb="$rss" -timeout="$timeout" \
    -max_len="$max_len" -print_final_stats=1 -dict="$build/fuzz/dict/$t.dict" "${extra[@]}" \
    -artifact_prefix="$build/fuzz/artifacts/$t-" "$corpus" "$build/fuzz/seeds/$t" >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$')
  size=$(find "$corpus" -type f | wc -l)
  if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
    # fork mode: "#N: cov: C ft: F corp: K exec/s R oom/timeout/crash: O/T/X time: Ss ..."
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
    execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
    elapsed=$(grep -oE 'time: [0-9]+s' <<<"$last" | grep -oE '[0-9]+')
    rate=$(( ${execs:-0} / (${elapsed:-1} > 0 ? ${elapsed:-1} : 1) ))  # average over the run
    otc=$(grep -oE 'oom/timeout/crash: [0-9/]+' <<<"$last" | grep -oE '[0-9/]+$')
    if [ -n "$otc" ] && [ "$otc" != 0/0/0 ]; then rc=1; fi
    [ -n "$otc" ] && echo "oom/timeout/crash: $otc" >>"$log"
  fi
  if [ $rc -eq 0 ]; then
    result=ok
  else
    failed=1
    result="FAILED (exit $rc${otc:+, oom/timeout/crash $otc}): $(grep -m1 -E 'ERROR: |fuzz invariant failed|exception escaped|runtime error' "$log" | cut -c1-120); log $log"
  fi
  printf '%-18s %8s %10s %10s %8s  %s\n' "$t" "$seconds" "${execs:-?}" "${rate:-?}" "$size" "$result"
done
exit $failed
