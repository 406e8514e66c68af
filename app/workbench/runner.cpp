#include "app/workbench/runner.h"

#include <exception>
#include <string>

#include "app/workbench/refused_model.h"
#include "core/base/error.h"

namespace fusebox::workbench {

Runner::Runner(Pipeline::RooflineSource roofline)
    : s_(std::make_shared<State>(std::move(roofline))), worker_([s = s_] { work(*s); }) {}

Runner::~Runner() {
  State& s = *s_;
  std::unique_lock<std::mutex> lock(s.mu);
  s.stop = true;
  s.pending.reset();
  s.cancel.store(true);
  s.wake.notify_all();
  const bool exited = s.idle.wait_for(lock, kShutdownWait, [&] { return s.exited; });
  lock.unlock();
  // The worker holds its own reference to the state: left running, it ends when its stage does.
  if (exited)
    worker_.join();
  else
    worker_.detach();
}

uint64_t Runner::request(const Settings& settings) {
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->pending = settings;
    n = ++s_->requested;
    if (s_->running) s_->cancel.store(true);
  }
  s_->wake.notify_one();
  return n;
}

void Runner::cancel() {
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->pending.reset();
  if (s_->running) s_->cancel.store(true);
  s_->idle.notify_all();
}

bool Runner::wait_idle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(s_->mu);
  auto idle = [&] { return !s_->running && !s_->pending; };
  if (timeout == std::chrono::milliseconds::max()) {
    s_->idle.wait(lock, idle);
    return true;
  }
  return s_->idle.wait_for(lock, timeout, idle);
}

Runner::Snapshot Runner::snapshot() const {
  const State& st = *s_;
  std::lock_guard<std::mutex> lock(st.mu);
  Snapshot s;
  s.result = st.result;
  s.error = st.error;
  s.busy = st.running || st.pending.has_value();
  s.stage = static_cast<Stage>(st.progress.stage.load());
  s.done = st.progress.done.load();
  s.total = st.progress.total.load();
  s.requested = st.requested;
  s.finished = st.finished;
  return s;
}

void Runner::pin_baseline() {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (!s_->result || !s_->result->measured())
    throw Error("pin: no measured result yet (the run is still going)");
  s_->baseline = s_->result;
}

void Runner::clear_baseline() {
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->baseline.reset();
}

std::shared_ptr<const RunResult> Runner::baseline() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->baseline;
}

std::array<int64_t, kStageCount> Runner::executions() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->executions;
}

void Runner::work(State& s) {
  std::unique_lock<std::mutex> lock(s.mu);
  while (true) {
    s.wake.wait(lock, [&] { return s.stop || s.pending.has_value(); });
    if (s.stop) break;
    Settings settings = std::move(*s.pending);
    s.pending.reset();
    s.running = true;
    s.cancel.store(false);
    s.progress.done.store(0);
    s.progress.total.store(0);
    lock.unlock();

    std::shared_ptr<const RunResult> result;
    std::shared_ptr<const RunError> error;
    try {
      // The graph and the plan first, published before the measuring starts: a flip shows its
      // new graph and arena in milliseconds, the figures follow when the calls are done. The
      // second run reuses every stage of the first.
      auto unmeasured = s.pipeline.run(settings, &s.cancel, &s.progress, Stage::Bind);
      {
        std::lock_guard<std::mutex> publish(s.mu);
        s.result = std::move(unmeasured);
        s.error.reset();
      }
      result = s.pipeline.run(settings, &s.cancel, &s.progress);
    } catch (const Cancelled&) {
      // A newer request (or cancel()) superseded this one: nothing to publish.
    } catch (const std::exception& e) {
      // A refused .onnx file is still drawn: its outline is read here, off the UI thread.
      error = std::make_shared<const RunError>(RunError{e.what(), settings, refused_model(settings)});
    }

    lock.lock();
    s.executions = s.pipeline.executions();
    if (result) {
      s.result = std::move(result);
      s.error.reset();
    } else if (error) {
      s.error = std::move(error);
    }
    s.running = false;
    ++s.finished;
    s.idle.notify_all();
  }
  s.exited = true;
  s.idle.notify_all();
}

}  // namespace fusebox::workbench
