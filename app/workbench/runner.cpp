#include "app/workbench/runner.h"

#include <exception>
#include <string>

#include "core/base/error.h"

namespace fusebox::workbench {

Runner::Runner(Pipeline::RooflineSource roofline) : pipeline_(std::move(roofline)), worker_([this] { work(); }) {}

Runner::~Runner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    pending_.reset();
    cancel_.store(true);
  }
  wake_.notify_all();
  worker_.join();
}

uint64_t Runner::request(const Settings& settings) {
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = settings;
    n = ++requested_;
    if (running_) cancel_.store(true);
  }
  wake_.notify_one();
  return n;
}

void Runner::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.reset();
  if (running_) cancel_.store(true);
  idle_.notify_all();
}

bool Runner::wait_idle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  auto idle = [&] { return !running_ && !pending_; };
  if (timeout == std::chrono::milliseconds::max()) {
    idle_.wait(lock, idle);
    return true;
  }
  return idle_.wait_for(lock, timeout, idle);
}

Runner::Snapshot Runner::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  Snapshot s;
  s.result = result_;
  s.error = error_;
  s.busy = running_ || pending_.has_value();
  s.stage = static_cast<Stage>(progress_.stage.load());
  s.done = progress_.done.load();
  s.total = progress_.total.load();
  s.requested = requested_;
  s.finished = finished_;
  return s;
}

void Runner::pin_baseline() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!result_ || !result_->measured()) throw Error("pin: no measured result yet (the run is still going)");
  baseline_ = result_;
}

void Runner::clear_baseline() {
  std::lock_guard<std::mutex> lock(mu_);
  baseline_.reset();
}

std::shared_ptr<const RunResult> Runner::baseline() const {
  std::lock_guard<std::mutex> lock(mu_);
  return baseline_;
}

std::array<int64_t, kStageCount> Runner::executions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return executions_;
}

void Runner::work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || pending_.has_value(); });
    if (stop_) return;
    Settings settings = std::move(*pending_);
    pending_.reset();
    running_ = true;
    cancel_.store(false);
    progress_.done.store(0);
    progress_.total.store(0);
    lock.unlock();

    std::shared_ptr<const RunResult> result;
    std::shared_ptr<const RunError> error;
    try {
      // The graph and the plan first, published before the measuring starts: a flip shows its
      // new graph and arena in milliseconds, the figures follow when the calls are done. The
      // second run reuses every stage of the first.
      auto unmeasured = pipeline_.run(settings, &cancel_, &progress_, Stage::Bind);
      {
        std::lock_guard<std::mutex> publish(mu_);
        result_ = std::move(unmeasured);
        error_.reset();
      }
      result = pipeline_.run(settings, &cancel_, &progress_);
    } catch (const Cancelled&) {
      // A newer request (or cancel()) superseded this one: nothing to publish.
    } catch (const std::exception& e) {
      error = std::make_shared<const RunError>(RunError{e.what(), settings});
    }

    lock.lock();
    executions_ = pipeline_.executions();
    if (result) {
      result_ = std::move(result);
      error_.reset();
    } else if (error) {
      error_ = std::move(error);
    }
    running_ = false;
    ++finished_;
    idle_.notify_all();
  }
}

}  // namespace fusebox::workbench
