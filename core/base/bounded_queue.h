#pragma once
// A queue from one thread to another, bounded so that a fast producer cannot run away with the
// memory: push() waits while it holds `capacity` items, pop() while it is empty.
//
// How it ends:
//   close()        the producer is done: pop() returns what is left, then nothing.
//   fail(error)    the producer stopped on an exception: pop() returns the items pushed before
//                  it, then rethrows it on the consumer's thread, so an error arrives where a
//                  single thread would have met it.
//   cancel()       either side gives up (the consumer threw, or is destroyed): every push() and
//                  pop(), waiting or later, returns false or nothing at once.
//
//   BoundedQueue<Batch> q(4);
//   std::thread t([&] { try { while (more()) if (!q.push(make())) return; q.close(); }
//                       catch (...) { q.fail(std::current_exception()); } });
//   while (std::optional<Batch> b = q.pop()) use(*b);
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <utility>

namespace fusebox {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Waits for room; false (the item dropped) once the queue is cancelled.
  bool push(T item) {
    std::unique_lock<std::mutex> lock(m_);
    changed_.wait(lock, [this] { return items_.size() < capacity_ || cancelled_; });
    if (cancelled_) return false;
    items_.push_back(std::move(item));
    lock.unlock();
    changed_.notify_all();
    return true;
  }

  // The next item, waiting for one; nothing once the queue is closed and empty, or cancelled.
  // After fail(), rethrows its exception once the items before it are taken (and on every
  // later call).
  std::optional<T> pop() {
    std::unique_lock<std::mutex> lock(m_);
    changed_.wait(lock, [this] { return !items_.empty() || ended_ || cancelled_; });
    if (cancelled_) return std::nullopt;
    if (items_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return std::nullopt;
    }
    T item = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    changed_.notify_all();
    return item;
  }

  void close() { end(nullptr); }
  void fail(std::exception_ptr error) { end(std::move(error)); }

  void cancel() {
    {
      const std::lock_guard<std::mutex> lock(m_);
      cancelled_ = true;
      items_.clear();
    }
    changed_.notify_all();
  }

 private:
  void end(std::exception_ptr error) {
    {
      const std::lock_guard<std::mutex> lock(m_);
      ended_ = true;
      error_ = std::move(error);
    }
    changed_.notify_all();
  }

  const size_t capacity_;
  std::mutex m_;  // guards what follows
  std::condition_variable changed_;
  std::deque<T> items_;
  bool ended_ = false;      // close() or fail() was called
  bool cancelled_ = false;  // cancel() was called
  std::exception_ptr error_;
};

}  // namespace fusebox
