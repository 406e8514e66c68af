// The CUDA backend's CUPTI on/off protocol (ops/cuda/host/recording_switch.h), with a fake
// collector: collection runs from begin() to end() only, a failed begin leaves it off and says
// why, a second begin drops what the first left open, and abandon() (a failed run, the backend's
// destructor) ends an open one.
#include <gtest/gtest.h>

#include "ops/cuda/host/recording_switch.h"

using namespace fusebox;
using namespace fusebox::cuda;

namespace {

struct FakeCollector : RecordingSwitch::Collector {
  int begins = 0, takes = 0, ends = 0;
  bool on = false;
  std::string refuse;  // what begin() answers
  std::string begin() override {
    ++begins;
    if (refuse.empty()) on = true;
    return refuse;
  }
  std::vector<exec::DeviceActivity> take() override {
    ++takes;
    EXPECT_TRUE(on) << "taken while collection is off";
    return std::vector<exec::DeviceActivity>(3);
  }
  void end() override {
    ++ends;
    EXPECT_TRUE(on) << "ended while collection is off";
    on = false;
  }
};

TEST(RecordingSwitch, CollectsOnlyFromBeginToEnd) {
  FakeCollector c;
  RecordingSwitch s;
  EXPECT_FALSE(s.recording());
  EXPECT_TRUE(s.end(c).empty()) << "nothing open: nothing to end";
  EXPECT_EQ(c.takes + c.ends, 0);
  s.begin(c);
  EXPECT_TRUE(c.on);
  EXPECT_TRUE(s.recording());
  EXPECT_EQ(s.end(c).size(), 3u) << "end returns what was collected";
  EXPECT_FALSE(c.on) << "and stops collecting";
  EXPECT_FALSE(s.recording());
  EXPECT_TRUE(s.end(c).empty()) << "a second end has nothing";
  EXPECT_EQ(c.begins, 1);
  EXPECT_EQ(c.takes, 1);
  EXPECT_EQ(c.ends, 1);
  // The next recording begins again.
  s.begin(c);
  EXPECT_EQ(s.end(c).size(), 3u);
  EXPECT_EQ(c.begins, 2);
  EXPECT_EQ(c.ends, 2);
}

TEST(RecordingSwitch, ASecondBeginDropsWhatTheFirstLeftOpen) {
  FakeCollector c;
  RecordingSwitch s;
  s.begin(c);
  s.begin(c);
  EXPECT_EQ(c.ends, 1) << "the open one ended, untaken";
  EXPECT_EQ(c.takes, 0);
  EXPECT_TRUE(c.on);
  EXPECT_EQ(s.end(c).size(), 3u);
  EXPECT_EQ(c.begins, 2);
}

TEST(RecordingSwitch, AFailedBeginLeavesItOffAndSaysWhy) {
  FakeCollector c;
  c.refuse = "CUPTI tracing unavailable: libcupti.so.13 was not found";
  RecordingSwitch s;
  s.begin(c);
  EXPECT_FALSE(s.recording());
  EXPECT_EQ(s.note(), c.refuse);
  EXPECT_TRUE(s.end(c).empty()) << "nothing was collected";
  EXPECT_EQ(c.takes, 0);
  EXPECT_EQ(c.ends, 0);
  c.refuse.clear();
  s.begin(c);
  EXPECT_TRUE(s.recording());
  EXPECT_EQ(s.note(), "");
}

TEST(RecordingSwitch, AbandonEndsAnOpenRecordingOnly) {
  FakeCollector c;
  RecordingSwitch s;
  s.abandon(c);
  EXPECT_EQ(c.ends, 0) << "nothing open";
  s.begin(c);
  s.abandon(c);
  EXPECT_EQ(c.ends, 1);
  EXPECT_FALSE(c.on);
  EXPECT_FALSE(s.recording());
  EXPECT_TRUE(s.end(c).empty()) << "an abandoned recording's end has nothing";
  EXPECT_EQ(c.takes, 0);
  s.begin(c);
  EXPECT_TRUE(c.on) << "the next begin starts a new one";
}

}  // namespace
