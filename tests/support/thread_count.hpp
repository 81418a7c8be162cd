// Test support: how many threads this process runs, less the in-process mock's (named
// clef-mock-…), whose connection threads come and go with its load — so a test can see the
// threads the client itself adds. A connection thread carries its creator's name, clef-mock-http,
// from the instant it exists, so none is counted in the moment before it names itself.
#pragma once

#include <dirent.h>

#include <fstream>
#include <string>

namespace clef::testing {

/// How many of this process's threads have a name `counted` accepts.
template <typename Predicate>
int threads_whose_name(Predicate counted) {
  int n = 0;
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (dirent* entry = ::readdir(tasks)) {
      if (entry->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      n += counted(name);
    }
    ::closedir(tasks);
  }
  return n;
}

inline int client_threads() {
  return threads_whose_name(
      [](const std::string& name) { return name.rfind("clef-mock-", 0) != 0; });
}

/// This process's threads whose name starts with `prefix` ("clef-pool", "clef-loop").
inline int threads_named(const std::string& prefix) {
  return threads_whose_name([&](const std::string& name) { return name.rfind(prefix, 0) == 0; });
}

/// Every thread of process `pid` (a child clef: no mock of the test's own in it); 0 once it is
/// gone.
inline int threads_of(int pid) {
  int n = 0;
  if (DIR* tasks = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (dirent* entry = ::readdir(tasks)) n += entry->d_name[0] != '.';
    ::closedir(tasks);
  }
  return n;
}

}  // namespace clef::testing
