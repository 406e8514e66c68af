#pragma once
// The first failure of work that cannot throw where it fails (a kernel's run() launches and
// returns; cuBLAS reports a status, the device a fault), kept until the backend's next
// synchronize raises it. Later failures of the same run are counted, not kept: the first is the
// cause, the rest usually follow from it. Thread-safe; plain C++ (tests/cuda/first_failure_test.cpp).
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>

#include "core/base/error.h"

namespace fusebox::cuda {

class FirstFailure {
 public:
  // Keeps `what` when it is the first since the last raise; counts it otherwise.
  void record(std::string what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (first_)
      ++later_;
    else
      first_ = std::move(what);
  }
  bool any() const {
    std::lock_guard<std::mutex> lock(mu_);
    return first_.has_value();
  }
  // Throws fusebox::Error with the first failure (and how many followed it), and forgets both.
  void raise_if_any() {
    std::string message;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!first_) return;
      message = *first_;
      if (later_) message += " (and " + std::to_string(later_) + " later failure" + (later_ == 1 ? "" : "s") + ")";
      first_.reset();
      later_ = 0;
    }
    throw Error(message);
  }

 private:
  mutable std::mutex mu_;
  std::optional<std::string> first_;
  size_t later_ = 0;
};

// "node 'MatMul_3' (MatMul): cublasGemmStridedBatchedEx returned CUBLAS_STATUS_EXECUTION_FAILED (the
// GPU program failed to execute)": what FirstFailure keeps for a library call's failed status.
inline std::string status_failure(const std::string& where, const std::string& call, const std::string& status_name,
                                  const std::string& status_text) {
  return where + ": " + call + " returned " + status_name + " (" + status_text + ")";
}

}  // namespace fusebox::cuda
