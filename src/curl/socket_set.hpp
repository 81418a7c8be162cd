// Internal: the epoll set a curl loop waits on, following what curl says to watch through its
// socket callback (CURLMOPT_SOCKETFUNCTION), and the loop's own wake-up descriptor.
#pragma once

#include <curl/curl.h>

#include <vector>

namespace clef::detail {

class SocketSet {
 public:
  SocketSet();
  ~SocketSet();
  SocketSet(const SocketSet&) = delete;
  SocketSet& operator=(const SocketSet&) = delete;

  /// The epoll descriptor, or -1 when it could not be made (too many open files).
  int descriptor() const noexcept { return m_epoll; }

  /// Watches `fd` for reading, for good (the loop's eventfd).
  void watch_always(int fd);

  /// curl's socket callback: watch `socket` for `what` (CURL_POLL_*), or stop watching it.
  /// `watched` is what curl_multi_assign gave the socket (non-null once it is in the set).
  void follow(CURLM* multi, curl_socket_t socket, int what, void* watched);

  /// `socket` is about to be closed: a parked socket is forgotten, so the loop never touches its
  /// number again (by then another thread's socket may have it).
  void forget(curl_socket_t socket) { unpark(socket); }

  /// Before the loop waits: the sockets curl gave up since the last wait leave the set, so an
  /// idle connection the server closes wakes nobody.
  void drop_parked();

 private:
  bool unpark(curl_socket_t socket);

  const int m_epoll;
  /// Sockets curl removed, left in the set until the loop waits: a kept-alive connection usually
  /// goes to the next transfer before then, and one MOD costs less than a DEL and an ADD.
  std::vector<curl_socket_t> m_parked;
};

}  // namespace clef::detail
