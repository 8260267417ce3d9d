// Stops Z3 when the run is interrupted (SIGINT/SIGTERM, checker/cli/interrupt.h): Z3 does not read our flag, but
// Z3_interrupt may be called from another thread while a solver call runs; that call then returns unknown (reason
// "interrupted"). Used by the engine (engine.cc) around every solver call of a run.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <z3++.h>

namespace qpcheck::symbolic {

// While alive, polls `flag` every 20 ms and, once it is set, interrupts `ctx` and keeps interrupting it every 20 ms
// (so that a call started after the first interrupt is stopped too). Destruction stops and joins the thread; `ctx`
// must outlive the watch. A null flag: no thread, nothing happens.
class InterruptWatch {
 public:
  InterruptWatch(z3::context& ctx, const std::atomic<bool>* flag) {
    if (flag == nullptr) return;
    thread_ = std::thread([this, &ctx, flag] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!stop_) {
        if (flag->load(std::memory_order_relaxed)) ctx.interrupt();
        cv_.wait_for(lock, std::chrono::milliseconds(20));
      }
    });
  }
  ~InterruptWatch() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace qpcheck::symbolic
