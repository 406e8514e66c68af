# Sourced by tools/gpu-check.sh and tools/gpu-record.sh: the Nsight Compute sections that
# `fusebox kernels` reads (profiler/ncu_report.h), those of them this ncu has.
# ncu_sections NCU LIST_FILE: writes `ncu --list-sections` to LIST_FILE and sets the array
# NCU_SECTION_ARGS to one "--section NAME" pair per section found there.
ncu_sections() {
  "$1" --list-sections > "$2" 2>&1 || true
  NCU_SECTION_ARGS=()
  local s
  for s in SpeedOfLight SpeedOfLight_RooflineChart SpeedOfLight_HierarchicalSingleRooflineChart LaunchStats \
           Occupancy MemoryWorkloadAnalysis SchedulerStats WarpStateStats; do
    grep -qw "$s" "$2" && NCU_SECTION_ARGS+=(--section "$s")
  done
  return 0
}
