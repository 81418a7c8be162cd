// The implementation of socket_set.hpp: an epoll set that follows curl's socket callback.
#include "curl/socket_set.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace clef::detail {

SocketSet::SocketSet() : m_epoll(::epoll_create1(EPOLL_CLOEXEC)) {}

SocketSet::~SocketSet() {
  if (m_epoll >= 0) ::close(m_epoll);
}

void SocketSet::watch_always(int fd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = fd;
  ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &event);
}

void SocketSet::follow(CURLM* multi, curl_socket_t socket, int what, void* watched) {
  if (what == CURL_POLL_REMOVE) {
    m_parked.push_back(socket);
    curl_multi_assign(multi, socket, nullptr);
    return;
  }
  epoll_event event{};
  event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  event.data.fd = socket;
  const bool parked = unpark(socket);
  // A socket number curl closed and reused may still be in the set, and a parked socket may
  // have been closed since (the kernel then dropped it): modify, else add.
  if ((!watched && !parked) || ::epoll_ctl(m_epoll, EPOLL_CTL_MOD, socket, &event) != 0) {
    if (::epoll_ctl(m_epoll, EPOLL_CTL_ADD, socket, &event) != 0 && errno == EEXIST)
      ::epoll_ctl(m_epoll, EPOLL_CTL_MOD, socket, &event);
  }
  if (!watched) curl_multi_assign(multi, socket, this);
}

bool SocketSet::unpark(curl_socket_t socket) {
  const auto end = std::remove(m_parked.begin(), m_parked.end(), socket);
  const bool found = end != m_parked.end();
  m_parked.erase(end, m_parked.end());
  return found;
}

void SocketSet::drop_parked() {
  // Only sockets still open: those curl closed were forgotten as it closed them.
  for (const curl_socket_t socket : m_parked) ::epoll_ctl(m_epoll, EPOLL_CTL_DEL, socket, nullptr);
  m_parked.clear();
}

}  // namespace clef::detail
