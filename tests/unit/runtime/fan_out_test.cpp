#include "router/runtime/fan_out.h"

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>

using santral::router::answer_on;
using santral::router::fan_out;
using santral::router::fan_out_async;
using santral::router::FanOutAnswer;
using santral::router::post_to_each;

namespace {

// A worker stand-in: an io_context run by its own thread.
class Place {
 public:
  explicit Place(int index) : index_(index), thread_([this] { io_.run(); }) {}
  ~Place() {
    work_.reset();
    thread_.join();
  }
  boost::asio::io_context& io() { return io_; }
  int index() const { return index_; }
  std::thread::id thread_id() const { return thread_.get_id(); }

 private:
  int index_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::thread thread_;
};

struct Seen {
  int index = -1;
  std::thread::id thread;
};

// Records the thread that destroys each live copy of it: it stands for the client a `done`
// holds, which must never be copied or released off the origin thread.
class ThreadWitness {
 public:
  explicit ThreadWitness(std::shared_ptr<std::vector<std::thread::id>> log)
      : log_(std::move(log)) {}
  ThreadWitness(const ThreadWitness& other) : log_(other.log_) { record(); }
  ThreadWitness(ThreadWitness&& other) noexcept : log_(std::move(other.log_)) {}
  ThreadWitness& operator=(const ThreadWitness&) = delete;
  ThreadWitness& operator=(ThreadWitness&&) = delete;
  ~ThreadWitness() {
    if (log_) record();
  }

 private:
  void record() {
    static std::mutex lock;
    std::lock_guard guard(lock);
    log_->push_back(std::this_thread::get_id());
  }
  std::shared_ptr<std::vector<std::thread::id>> log_;
};

}  // namespace

TEST_CASE("fan_out: results in worker order, done on the origin thread") {
  Place origin(-1);
  std::vector<std::unique_ptr<Place>> owned;
  for (int i = 0; i < 3; ++i) owned.push_back(std::make_unique<Place>(i));
  std::vector<Place*> workers;
  for (auto& place : owned) workers.push_back(place.get());

  std::promise<std::pair<std::vector<Seen>, std::thread::id>> result;
  auto witnessed = std::make_shared<std::vector<std::thread::id>>();
  boost::asio::post(origin.io(), [&] {
    ThreadWitness witness(witnessed);
    fan_out<Seen, Place>(
        origin.io(), workers,
        [](Place& place) {
          // The first worker answers last: arrival order is not worker order.
          std::this_thread::sleep_for(std::chrono::milliseconds(30 * (2 - place.index())));
          return Seen{place.index(), std::this_thread::get_id()};
        },
        [&result, witness](std::vector<Seen> seen) {
          result.set_value({std::move(seen), std::this_thread::get_id()});
        });
  });
  auto [seen, done_thread] = result.get_future().get();

  CHECK(done_thread == origin.thread_id());
  REQUIRE(seen.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(seen[i].index == i);
    CHECK(seen[i].thread == workers[i]->thread_id());
  }
  // Let every handler finish and be destroyed before reading the log.
  std::promise<void> flushed;
  boost::asio::post(origin.io(), [&] { flushed.set_value(); });
  flushed.get_future().get();
  owned.clear();
  for (auto id : *witnessed) CHECK(id == origin.thread_id());
}

TEST_CASE("fan_out_async: workers answer later, from their own callbacks") {
  Place origin(-1);
  Place a(0), b(1);
  std::vector<Place*> workers{&a, &b};
  std::promise<std::pair<std::vector<std::string>, std::thread::id>> result;
  boost::asio::post(origin.io(), [&] {
    fan_out_async<std::string, Place>(
        origin.io(), workers,
        [](Place& place, FanOutAnswer<std::string> answer) {
          auto timer = std::make_shared<boost::asio::steady_timer>(
              place.io(), std::chrono::milliseconds(place.index() == 0 ? 40 : 1));
          timer->async_wait([timer, &place, answer = std::move(answer)](auto) {
            answer("worker " + std::to_string(place.index()));
          });
        },
        [&result](std::vector<std::string> answers) {
          result.set_value({std::move(answers), std::this_thread::get_id()});
        });
  });
  auto [answers, done_thread] = result.get_future().get();
  CHECK(done_thread == origin.thread_id());
  CHECK(answers == std::vector<std::string>{"worker 0", "worker 1"});
}

TEST_CASE("fan_out over no workers still answers, on the origin thread") {
  Place origin(-1);
  std::promise<std::pair<std::size_t, std::thread::id>> result;
  boost::asio::post(origin.io(), [&] {
    fan_out<int, Place>(
        origin.io(), {}, [](Place&) { return 1; },
        [&result](std::vector<int> all) {
          result.set_value({all.size(), std::this_thread::get_id()});
        });
  });
  auto [count, done_thread] = result.get_future().get();
  CHECK(count == 0);
  CHECK(done_thread == origin.thread_id());
}

TEST_CASE("answer_on: called on another thread, runs on the origin thread") {
  Place origin(-1);
  Place other(0);
  std::promise<std::pair<int, std::thread::id>> result;
  auto witnessed = std::make_shared<std::vector<std::thread::id>>();
  boost::asio::post(origin.io(), [&] {
    ThreadWitness witness(witnessed);
    auto answer = answer_on<int>(origin.io(), [&result, witness](int value) {
      result.set_value({value, std::this_thread::get_id()});
    });
    boost::asio::post(other.io(), [answer = std::move(answer)] { answer(42); });
  });
  auto [value, done_thread] = result.get_future().get();
  CHECK(value == 42);
  CHECK(done_thread == origin.thread_id());
  std::promise<void> flushed;
  boost::asio::post(origin.io(), [&] { flushed.set_value(); });
  flushed.get_future().get();
  for (auto id : *witnessed) CHECK(id == origin.thread_id());
}

TEST_CASE("post_to_each runs on every worker's own thread") {
  Place a(0), b(1), c(2);
  std::vector<Place*> workers{&a, &b, &c};
  std::vector<std::promise<std::thread::id>> ran(3);
  post_to_each<Place>(
      workers, [&ran](Place& place) { ran[place.index()].set_value(std::this_thread::get_id()); });
  for (int i = 0; i < 3; ++i) CHECK(ran[i].get_future().get() == workers[i]->thread_id());
}
