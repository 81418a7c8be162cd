// For bench/wrk_bench.py: the wall and CPU time (every thread's, user + system) of a program's
// measured phase alone — the decisions, not the set-up before them (building 40,000 requests,
// loading libraries) — printed after its count of successes as "N ok WALL_S CPU_S".
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <cstddef>
#include <iostream>

namespace bench {

class PhaseClock {
 public:
  PhaseClock() : m_wall(std::chrono::steady_clock::now()), m_cpu(process_cpu_seconds()) {}

  /// Prints "N ok WALL_S CPU_S" for the time since this clock was made.
  void report(std::size_t ok) const {
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - m_wall;
    std::cout << ok << " ok " << wall.count() << " " << process_cpu_seconds() - m_cpu << "\n";
  }

 private:
  static double process_cpu_seconds() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
  }

  std::chrono::steady_clock::time_point m_wall;
  double m_cpu;
};

}  // namespace bench
