// Writing the mock's answers into cpp-httplib responses: JSON replies, scripted replies (whole
// or cut short), and dropped connections.
#include "mock/reply.hpp"

#include <memory>
#include <thread>

#include "util/json_text.hpp"

namespace clef::mock_detail {

void send(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  for (const auto& [name, value] : reply.headers) res.set_header(name, value);
  res.set_content(clef::dump_json(reply.body), "application/json; charset=utf-8");
}

void send_scripted(httplib::Response& res, const MockReply& reply) {
  if (reply.delay.count() > 0) std::this_thread::sleep_for(reply.delay);
  res.status = reply.status;
  for (const auto& [name, value] : reply.headers) res.set_header(name, value);
  if (!reply.truncate_at) {
    res.set_content(reply.body, reply.content_type);
    return;
  }
  auto body = std::make_shared<std::string>(reply.body);
  const std::size_t cut = *reply.truncate_at;
  res.set_content_provider(body->size(), reply.content_type,
                           [body, cut](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                             if (offset < cut) sink.write(body->data() + offset, cut - offset);
                             return false;  // close the connection mid-body
                           });
}

void send_headers_then_drop(httplib::Response& res) {
  res.set_content_provider(
      64, "application/json",
      [](std::size_t, std::size_t, httplib::DataSink&) { return false; });  // no body
}

}  // namespace clef::mock_detail
