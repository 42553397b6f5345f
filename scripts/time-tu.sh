#!/usr/bin/env bash
# Compiler/linker launcher that logs the CPU time of every compile and link, so
# a build's cost can be read per translation unit on a busy machine (CPU time
# barely depends on the load; wall time does). Used by scripts/ci-time.sh:
#   cmake ... -DCMAKE_CXX_COMPILER_LAUNCHER=$PWD/scripts/time-tu.sh \
#             -DCMAKE_C_COMPILER_LAUNCHER=... -DCMAKE_CXX_LINKER_LAUNCHER=...
# with PROCGEN_TU_LOG=/abs/path/log.tsv in the environment. Each line:
#   start_s  end_s  user_s  sys_s  wall_s  output   (times: seconds since the epoch)
# Without PROCGEN_TU_LOG it only runs the command.
if [[ -z ${PROCGEN_TU_LOG:-} ]]; then exec "$@"; fi
out=?
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [[ ${args[i]} == -o ]]; then out=${args[i + 1]}; break; fi
done
start=$(date +%s.%N)
times=$(mktemp)
/usr/bin/time -f '%U %S %e' -o "$times" "$@"
status=$?
read -r user sys wall < <(tail -n 1 "$times")
rm -f "$times"
printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$start" "$(date +%s.%N)" "$user" "$sys" "$wall" "$PWD/$out" >> "$PROCGEN_TU_LOG"
exit "$status"
