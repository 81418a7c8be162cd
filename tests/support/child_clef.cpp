// The implementation of child_clef.hpp: runs the clef executable as a child process with a
// deadline.
#include "child_clef.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace clef::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The child's peak resident memory so far (VmHWM, kB), 0 once it has exited. Read from /proc
/// rather than wait4's ru_maxrss: that one counts the copy of this test process the fork made
/// before exec, so a small clef forked from a big test would look big.
long peak_resident_kb(pid_t child) {
  // Only once it runs clef: between fork and exec it is still a copy of this process.
  char exe[4096];
  const std::string proc = "/proc/" + std::to_string(child);
  const ssize_t n = ::readlink((proc + "/exe").c_str(), exe, sizeof exe - 1);
  char expected[4096];
  if (n <= 0 || !::realpath(CLEF_EXE, expected) || std::string(exe, n) != expected) return 0;
  std::ifstream status(proc + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

}  // namespace

pid_t spawn_clef(const std::vector<std::string>& args, const std::string& stdout_path,
                 const std::string& stderr_path,
                 const std::vector<std::pair<std::string, std::string>>& environment) {
  // Everything the child needs is built before fork: only exec-safe calls happen after it.
  std::vector<std::string> argv_storage = {CLEF_EXE};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) env_storage.emplace_back(*e);
  for (const auto& [name, value] : environment) env_storage.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : env_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);
  auto open_output = [](const std::string& path) {
    return ::open(path.empty() ? "/dev/null" : path.c_str(),
                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  };
  const int out_fd = open_output(stdout_path);
  const int err_fd = open_output(stderr_path);
  const int in_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out_fd < 0 || err_fd < 0 || in_fd < 0) {
    ADD_FAILURE() << "cannot open the child's files " << stdout_path << ", " << stderr_path;
    return -1;
  }
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(in_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::execve(CLEF_EXE, argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  ::close(in_fd);
  return child;
}

ChildResult wait_for_child(pid_t child, std::chrono::milliseconds deadline) {
  ChildResult result;
  if (child < 0) return result;
  const auto started = std::chrono::steady_clock::now();
  int status = 0;
  rusage usage{};
  long peak_kb = 0;
  for (;;) {
    peak_kb = std::max(peak_kb, peak_resident_kb(child));
    const pid_t done = ::wait4(child, &status, WNOHANG, &usage);
    if (done == child) {
      result.finished = true;
      break;
    }
    if (std::chrono::steady_clock::now() - started >= deadline) {
      ::kill(child, SIGKILL);
      ::wait4(child, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.max_rss_kb = peak_kb;
  return result;
}

int wait_for_exit(pid_t child, std::chrono::milliseconds deadline) {
  const ChildResult result = wait_for_child(child, deadline);
  if (result.finished) return result.code;
  ADD_FAILURE() << "clef (pid " << child << ") was still running after " << deadline.count()
                << " ms: killed";
  return -1;
}

ChildResult run_clef_child(const std::vector<std::string>& args, std::chrono::milliseconds deadline,
                           const std::vector<std::pair<std::string, std::string>>& environment) {
  static std::atomic<int> counter{0};
  const std::string stem = ::testing::TempDir() + "child_" + std::to_string(::getpid()) + "_" +
                           std::to_string(counter++);
  const std::string out_path = stem + ".out";
  const std::string err_path = stem + ".err";
  ChildResult result = wait_for_child(spawn_clef(args, out_path, err_path, environment), deadline);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

}  // namespace clef::testing
