// Test support: how many threads this process runs, less the in-process mock's connection
// threads (named clef-mock-conn), which come and go with its load — so a test can see the
// threads the client itself adds.
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
      n += name != "clef-mock-conn";
    }
    ::closedir(tasks);
  }
  return n;
}

}  // namespace clef::testing
