#pragma once
// The header row of `ncu --csv --page details`, for the tests that write Nsight Compute exports
// (ncu_report_test.cpp, kernel_findings_test.cpp) row by row.
namespace fusebox::profiler::ptest {

inline const char* const kNcuDetailsHeader =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\",\"Rule Name\","
    "\"Rule Type\",\"Rule Description\",\"Estimated Speedup Type\",\"Estimated Speedup\"\n";

}  // namespace fusebox::profiler::ptest
