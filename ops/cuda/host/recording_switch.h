#pragma once
// When the CUDA backend's CUPTI collection is on: only around recorded runs, from
// Backend::begin_recording() to end_recording(), so an unrecorded run pays nothing for CUPTI and
// piles up no records. begin() drops what an earlier recording left open; end() returns what was
// collected and stops. A failed run, or the backend going, ends a recording left open
// (abandon), and its end() then returns nothing.
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

  // Starts collecting; a recording still open is ended first and its records dropped.
  void begin(Collector& c) {
    abandon(c);
    note_ = c.begin();
    recording_ = note_.empty();
  }
  // What was collected since begin(), and stops; nothing when no recording is open (begin failed,
  // or a failed run abandoned it).
  std::vector<exec::DeviceActivity> end(Collector& c) {
    if (!recording_) return {};
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
