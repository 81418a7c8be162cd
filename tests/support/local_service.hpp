// A real server from a Debian package (Prometheus' Pushgateway, redis-server) run by a test on
// 127.0.0.1: started on a free port, waited for until it accepts connections, stopped with the
// test.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace clef::testing {

/// The program's path when it is installed (/usr/bin/NAME or /usr/sbin/NAME), else "".
std::string installed_program(const std::string& name);

class LocalService {
 public:
  /// Runs `program` with `args`, each "{port}" in them replaced by a free port of 127.0.0.1;
  /// its output goes to `log_path`. ready() says whether it came up.
  LocalService(const std::string& program, std::vector<std::string> args,
               const std::string& log_path,
               std::chrono::milliseconds deadline = std::chrono::seconds(30));
  LocalService(const LocalService&) = delete;
  LocalService& operator=(const LocalService&) = delete;
  /// SIGTERM, then SIGKILL if it has not gone within 5 s.
  ~LocalService();

  bool ready() const { return m_ready; }
  int port() const { return m_port; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  /// Stops it now (a server that goes away mid-run).
  void stop();

 private:
  pid_t m_pid = -1;
  int m_port = 0;
  bool m_ready = false;
};

}  // namespace clef::testing
