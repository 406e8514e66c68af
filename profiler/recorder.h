#pragma once
// Recorder: an ExecutionObserver that timestamps what a Session does (its stages, each run, each
// op) on one clock (CLOCK_MONOTONIC_RAW, nanoseconds: the clock NVTXT's ClockMonotonicRaw
// time base and nsys use), and turns that into a Recording: spans on thread tracks, with the
// node, op type, shapes, FLOPs, bytes and arena offsets of every op, plus a counter track of
// live arena bytes per step. While recording, a hook appends one small fixed-size record to a
// preallocated vector; names and arguments are attached afterwards in finish().
//
//   profiler::Recorder rec;
//   exec::SessionOptions opt; opt.observer = &rec;
//   exec::Session session(graph, opt);   // stages are recorded
//   rec.attach(session);                 // node table: names, shapes, costs, offsets
//   session.run(inputs) ...;             // runs and ops are recorded
//   profiler::Recording r = rec.finish();
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/device_activity.h"
#include "core/backend/observer.h"
#include "core/backend/worker_activity.h"
#include "core/exec/session.h"
#include "profiler/recording.h"

namespace fusebox::profiler {

// Nanoseconds on CLOCK_MONOTONIC_RAW.
int64_t now_ns();
// The calling thread's kernel id (cached per thread).
int32_t current_tid();


class Recorder final : public exec::ExecutionObserver {
 public:
  // `reserve_events`: room for this many hook calls before the vector grows (growth is allowed
  // but costs a copy inside a run).
  explicit Recorder(size_t reserve_events = 1 << 16);

  // Reads the node table (names, shapes, FLOPs, bytes, arena offsets, live bytes) and the
  // configuration from the session. Call once the session is built.
  void attach(exec::Session& session, const std::string& model = "");
  // The same from the pieces: the graph that runs, its plan, and the configuration (`config`'s
  // model, label, backend, executor, passes, planner and threads; its other fields are ignored).
  void attach(const ir::Graph& graph, const planner::ExecutionPlan& plan, const Recording& config);
  // Builds the recording from everything seen so far and what the backend noted over the same runs
  // (Backend::end_recording, or BackendRecording::finish): its device activity, and its worker
  // spans, each of which becomes a Worker span tied to the op span
  // around its region's start on the thread that forked it; those outside every recorded op (a
  // region of another thread, or outside a run) are left out. Worker threads other than the
  // ops' own are named "fusebox worker <k>" (k: their index in the team).
  Recording finish(exec::BackendActivity activity = {}) const;
  void clear();  // forgets events (keeps the node table)
  size_t event_count() const { return events_.size(); }

  void on_stage_begin(const std::string& stage) override;
  void on_stage_end(const std::string& stage) override;
  void on_run_begin(int64_t run_index) override;
  void on_run_end(int64_t run_index) override;
  void on_op_begin(size_t node_index) override;
  void on_op_end(size_t node_index) override;

 private:
  struct Event {
    int64_t t;
    int64_t id;      // run index, node index, or stage name index
    int32_t tid;
    uint8_t kind;    // SpanKind
    uint8_t begin;   // 1 = begin, 0 = end
  };
  std::vector<Event> events_;
  std::vector<std::string> stage_names_;
  Recording base_;  // configuration and node table
  int64_t origin_ns_ = 0;
  int64_t origin_utc_ns_ = 0;
};

// Fans one observer slot out to several (e.g. the recorder and NVTX ranges).
class ObserverTee final : public exec::ExecutionObserver {
 public:
  explicit ObserverTee(std::vector<exec::ExecutionObserver*> observers) : observers_(std::move(observers)) {}
  void on_stage_begin(const std::string& s) override {
    for (auto* o : observers_) o->on_stage_begin(s);
  }
  void on_stage_end(const std::string& s) override {
    for (auto it = observers_.rbegin(); it != observers_.rend(); ++it) (*it)->on_stage_end(s);
  }
  void on_run_begin(int64_t r) override {
    for (auto* o : observers_) o->on_run_begin(r);
  }
  void on_run_end(int64_t r) override {
    for (auto it = observers_.rbegin(); it != observers_.rend(); ++it) (*it)->on_run_end(r);
  }
  void on_op_begin(size_t n) override {
    for (auto* o : observers_) o->on_op_begin(n);
  }
  void on_op_end(size_t n) override {
    for (auto it = observers_.rbegin(); it != observers_.rend(); ++it) (*it)->on_op_end(n);
  }

 private:
  std::vector<exec::ExecutionObserver*> observers_;
};

}  // namespace fusebox::profiler
