#pragma once
// When the CUDA backend's CUPTI collection is on: only around recorded runs. Every caller that
// records does it the same way (app/workbench/pipeline.cpp, the self-test's trace row, the device
// tests): one Backend::take_activity() to drop what came before, the runs, one take_activity()
// for theirs. So the first call begins collecting (and returns nothing) and the second returns
// what was collected and ends it; an unrecorded run pays nothing for CUPTI and piles up no
// records. A failed run, or the backend going, ends a recording left open (abandon).
// Plain logic over the collector's three calls, tested with a fake in
// tests/cuda/recording_switch_test.cpp.
#include <string>
#include <utility>
#include <vector>

#include "core/backend/device_activity.h"

namespace fusebox::cuda {

class RecordingSwitch {
 public:
  // CuptiCollector's calls (cupti_collector.h); begin() returns "" when collecting, else why not.
  struct Collector {
    virtual ~Collector() = default;
    virtual std::string begin() = 0;
    virtual std::vector<exec::DeviceActivity> take() = 0;
    virtual void end() = 0;
  };

  std::vector<exec::DeviceActivity> take_activity(Collector& c) {
    if (!recording_) {
      note_ = c.begin();
      recording_ = note_.empty();
      return {};
    }
    std::vector<exec::DeviceActivity> a = c.take();
    c.end();
    recording_ = false;
    return a;
  }
  // Ends the recording, if one is open, without taking its records.
  void abandon(Collector& c) {
    if (!recording_) return;
    c.end();
    recording_ = false;
  }
  bool recording() const { return recording_; }
  // Why the last begin did not collect ("" when it did, or before any).
  const std::string& note() const { return note_; }

 private:
  bool recording_ = false;
  std::string note_;
};

}  // namespace fusebox::cuda
