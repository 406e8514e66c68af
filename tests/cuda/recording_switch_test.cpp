// The CUDA backend's CUPTI on/off protocol (ops/cuda/host/recording_switch.h), with a fake
// collector: collection runs from one take_activity() to the next only, a failed begin leaves it
// off and says why, and abandon() (a failed run, the backend's destructor) ends an open one.
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

TEST(RecordingSwitch, CollectsOnlyBetweenTwoTakes) {
  FakeCollector c;
  RecordingSwitch s;
  EXPECT_FALSE(s.recording());
  EXPECT_TRUE(s.take_activity(c).empty()) << "the first take starts collecting and has nothing";
  EXPECT_TRUE(c.on);
  EXPECT_TRUE(s.recording());
  EXPECT_EQ(s.take_activity(c).size(), 3u) << "the second returns what was collected";
  EXPECT_FALSE(c.on) << "and stops collecting";
  EXPECT_FALSE(s.recording());
  EXPECT_EQ(c.begins, 1);
  EXPECT_EQ(c.takes, 1);
  EXPECT_EQ(c.ends, 1);
  // The next recording begins again.
  s.take_activity(c);
  EXPECT_TRUE(c.on);
  EXPECT_EQ(s.take_activity(c).size(), 3u);
  EXPECT_EQ(c.begins, 2);
  EXPECT_EQ(c.ends, 2);
}

TEST(RecordingSwitch, AFailedBeginLeavesItOffAndSaysWhy) {
  FakeCollector c;
  c.refuse = "CUPTI tracing unavailable: libcupti.so.13 was not found";
  RecordingSwitch s;
  EXPECT_TRUE(s.take_activity(c).empty());
  EXPECT_FALSE(s.recording());
  EXPECT_EQ(s.note(), c.refuse);
  EXPECT_TRUE(s.take_activity(c).empty()) << "nothing to take: it tries to begin again";
  EXPECT_EQ(c.begins, 2);
  EXPECT_EQ(c.takes, 0);
  EXPECT_EQ(c.ends, 0);
  c.refuse.clear();
  s.take_activity(c);
  EXPECT_TRUE(s.recording());
  EXPECT_EQ(s.note(), "");
}

TEST(RecordingSwitch, AbandonEndsAnOpenRecordingOnly) {
  FakeCollector c;
  RecordingSwitch s;
  s.abandon(c);
  EXPECT_EQ(c.ends, 0) << "nothing open";
  s.take_activity(c);
  s.abandon(c);
  EXPECT_EQ(c.ends, 1);
  EXPECT_FALSE(c.on);
  EXPECT_FALSE(s.recording());
  EXPECT_TRUE(s.take_activity(c).empty()) << "after an abandoned recording, the next take begins a new one";
  EXPECT_TRUE(c.on);
}

}  // namespace
