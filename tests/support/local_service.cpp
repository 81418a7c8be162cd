// The implementation of local_service.hpp.
#include "local_service.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "child_clef.hpp"

namespace clef::testing {
namespace {

/// A port nothing listens on now: bound to 0 and released (the service takes it next).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

bool accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return connected;
}

}  // namespace

std::string installed_program(const std::string& name) {
  for (const char* directory : {"/usr/bin/", "/usr/sbin/"}) {
    const std::string path = directory + name;
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

LocalService::LocalService(const std::string& program, std::vector<std::string> args,
                           const std::string& log_path, std::chrono::milliseconds deadline) {
  m_port = free_port();
  if (m_port == 0) return;
  for (auto& arg : args) {
    const auto at = arg.find("{port}");
    if (at != std::string::npos) arg.replace(at, 6, std::to_string(m_port));
  }
  std::vector<std::string> storage = {program};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  m_pid = ::fork();
  if (m_pid == 0) {
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  if (log >= 0) ::close(log);
  if (m_pid < 0) return;
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (accepts(m_port)) {
      m_ready = true;
      return;
    }
    int status = 0;
    if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {  // it died: the port was taken, or worse
      m_pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void LocalService::stop() {
  if (m_pid <= 0) return;
  ::kill(m_pid, SIGTERM);
  wait_for_child(m_pid, std::chrono::seconds(5));  // reaped, killed if it lingers
  m_pid = -1;
}

LocalService::~LocalService() {
  stop();
}

}  // namespace clef::testing
