// BoundedQueue (core/base/bounded_queue.h): items in order, a producer held to the capacity, an
// error arriving after the items before it, and either end able to give up without a hang.
#include "core/base/bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

using fusebox::BoundedQueue;

TEST(BoundedQueue, ItemsArriveInOrderAndTheProducerIsHeldToTheCapacity) {
  BoundedQueue<int> q(3);
  std::atomic<int> pushed{0};
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(q.push(i));
      pushed = i + 1;
    }
    q.close();
  });
  int expected = 0;
  while (std::optional<int> v = q.pop()) {
    // Popped `expected` items so far (v among them): the producer can be at most the capacity
    // plus the one it is pushing ahead.
    EXPECT_LE(pushed.load(), expected + 1 + 3);
    EXPECT_EQ(*v, expected++);
  }
  producer.join();
  EXPECT_EQ(expected, 1000);
  EXPECT_FALSE(q.pop().has_value()) << "closed and drained stays empty";
}

TEST(BoundedQueue, AFailureArrivesAfterTheItemsPushedBeforeIt) {
  BoundedQueue<std::string> q(8);
  std::thread producer([&] {
    q.push("a");
    q.push("b");
    try {
      throw std::runtime_error("corrupt at byte 3");
    } catch (...) {
      q.fail(std::current_exception());
    }
  });
  producer.join();
  EXPECT_EQ(q.pop().value(), "a");
  EXPECT_EQ(q.pop().value(), "b");
  try {
    q.pop();
    ADD_FAILURE() << "no error after the items";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "corrupt at byte 3");
  }
  EXPECT_THROW(q.pop(), std::runtime_error) << "and on every later call";
}

TEST(BoundedQueue, CancellingWakesAProducerWaitingForRoomAndAConsumerWaitingForItems) {
  BoundedQueue<int> full(1);
  ASSERT_TRUE(full.push(1));
  std::atomic<bool> returned{false};
  bool accepted = true;
  std::thread producer([&] {
    accepted = full.push(2);  // waits: the queue is full
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(returned.load()) << "push did not wait for room";
  full.cancel();
  producer.join();
  EXPECT_FALSE(accepted);
  EXPECT_FALSE(full.pop().has_value()) << "a cancelled queue hands nothing out";

  BoundedQueue<int> empty(1);
  std::optional<int> got = 7;
  std::thread consumer([&] { got = empty.pop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  empty.cancel();
  consumer.join();
  EXPECT_FALSE(got.has_value());
}
