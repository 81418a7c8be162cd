// Test support: how many threads this process runs, less the in-process mock's (named
// clef-mock-…), whose connection threads come and go with its load — so a test can see the
// threads the client itself adds. A connection thread carries its creator's name, clef-mock-http,
// from the instant it exists, so none is counted in the moment before it names itself.
#pragma once

#include <dirent.h>

#include <fstream>
#include <string>

namespace clef::testing {

inline int client_threads() {
  int n = 0;
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (dirent* entry = ::readdir(tasks)) {
      if (entry->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      n += name.rfind("clef-mock-", 0) != 0;
    }
    ::closedir(tasks);
  }
  return n;
}

/// This process's threads whose name starts with `prefix` ("clef-pool", "clef-loop").
inline int threads_named(const std::string& prefix) {
  int n = 0;
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (dirent* entry = ::readdir(tasks)) {
      if (entry->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      n += name.rfind(prefix, 0) == 0;
    }
    ::closedir(tasks);
  }
  return n;
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
