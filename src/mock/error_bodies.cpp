// Each imitated server's error bodies: the same failure in six servers' words.
#include "mock/error_bodies.hpp"

#include <cstdlib>

namespace clef::mock_detail {

namespace {

/// OpenAI's {message, type, param, code}: `code` is the parameter a 400 names, else the code.
Json openai_error(int status, const std::string& message, const std::string& code) {
  const char* type = status == 401 ? "invalid_request_error"
                     : status == 429
                         ? (code == "insufficient_quota" ? "insufficient_quota" : "requests")
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  Json error = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
  if (status == 400 && !code.empty()) error["param"] = code;
  if (status == 401) error["code"] = "invalid_api_key";
  if (status == 429) error["code"] = code.empty() ? "rate_limit_exceeded" : code;
  if (status == 404 && !code.empty()) error["code"] = code;
  return error;
}

}  // namespace

Reply error_reply(MockProfile shape, int status, const std::string& message,
                  const std::string& code) {
  Reply reply;
  reply.status = status;
  switch (shape) {
    case MockProfile::ollama:
      reply.body = {{"error", message}};
      break;
    case MockProfile::workers_ai: {
      // Workers AI's codes are numbers; `code` is one of ours, always digits. Without one: 5021
      // for a body too large, 5006 for anything else it refuses (protocol.md).
      const long number = !code.empty()   ? std::strtol(code.c_str(), nullptr, 10)
                          : status == 413 ? 5021
                                          : 5006;
      reply.body = {{"errors", Json::array({{{"message", message}, {"code", number}}})},
                    {"success", false},
                    {"result", Json::object()},
                    {"messages", Json::array()}};
      break;
    }
    case MockProfile::typesafe:
      if (status == 422) {
        reply.body = {
            {"detail",
             Json::array({{{"loc", Json::array({"body", code.empty() ? "questions" : code})},
                           {"msg", message},
                           {"type", "value_error"}}})}};
      } else {
        reply.body = {
            {"detail",
             {{"type", code.empty() ? "invalid_request_error" : code}, {"message", message}}}};
      }
      break;
    case MockProfile::llamacpp:
      reply.body = {
          {"error",
           {{"code", status},
            {"message", message},
            {"type", status == 422 ? "unprocessable_entity_error" : "invalid_request_error"}}}};
      break;
    case MockProfile::laya:
      reply.body = {{"detail", message}};
      break;
    case MockProfile::ollaya:
      reply.body = {{"error", message},
                    {"code", code.empty() ? "INVALID_REQUEST" : code},
                    {"detail", Json::array()}};
      break;
    case MockProfile::openai:
      reply.body = {{"error", openai_error(status, message, code)}};
      break;
  }
  return reply;
}

int invalid_status(MockProfile shape) {
  switch (shape) {
    case MockProfile::ollama:
    case MockProfile::workers_ai:
    case MockProfile::openai:
      return 400;
    default:
      return 422;
  }
}

Reply invalid_json_reply(MockProfile shape, const std::string& why) {
  if (shape == MockProfile::workers_ai)
    return error_reply(shape, 400, "Malformed JSON: " + why, "5006");
  if (shape == MockProfile::openai) {
    return error_reply(shape, 400,
                       "We could not parse the JSON body of your request. (HINT: This likely "
                       "means you aren't using your HTTP library correctly. The OpenAI API "
                       "expects a JSON payload, but what was sent was not valid JSON.)");
  }
  return error_reply(shape, 400, "invalid JSON body: " + why);
}

}  // namespace clef::mock_detail
