// TypeSafe's Box question and its image form: the request byte for byte against the published
// example (LiteLLM's, in TypeSafe's shape), the answer read from the published box, geometry
// refused rather than clamped, every limit refused before sending naming it, the header on
// exactly the requests that need it, and the typesafe mock holding the Danger Zone's rules.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>

#include <nlohmann/json.hpp>

#include "clef/clef.hpp"
#include "clef/mock.hpp"

namespace {

using Json = nlohmann::ordered_json;

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

/// A PNG's first 33 bytes (signature and IHDR), `bytes` long in all.
std::string png(std::uint32_t width, std::uint32_t height, std::size_t bytes = 33) {
  std::string out = std::string("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16) + be32(width) + be32(height);
  out += std::string("\x08\x02\0\0\0", 5);
  return out + std::string(bytes > out.size() ? bytes - out.size() : 0, '\0');
}

clef::Image image(std::string bytes) {
  return clef::Image::from_bytes(std::move(bytes), 64u << 20).value();
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(CLEF_TEST_DATA) + "/media/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The published example's request: a photo in the state, a yes/no and a box about it.
clef::DecisionRequest red_square_request() {
  clef::DecisionRequest request;
  request.state = clef::State::json(R"({"photo": "photo-7f3a9c"})").value();
  request.questions = {
      clef::Question::yes_no("has_red_square", "Is there a red square in `photo`?"),
      clef::Question::box("red_square", "the red square in `photo`")};
  request.images = {image(png(280, 280))};
  request.image_references = {"photo-7f3a9c"};
  return request;
}

clef::ClientOptions typesafe(const std::string& base_url, const std::string& model) {
  clef::ClientOptions options;
  options.backend = clef::Backend::systemone;
  options.base_url = base_url;
  options.model = model;
  options.retry.max_attempts = 1;
  return options;
}

bool has_header(const clef::Headers& headers, const std::string& name, const std::string& value) {
  for (const auto& [n, v] : headers)
    if (n == name && v == value) return true;
  return false;
}

clef::Error refused(const clef::DecisionRequest& request, const std::string& model,
                    clef::Backend backend = clef::Backend::systemone) {
  clef::MockServer server(clef::MockProfile::typesafe);
  auto options = typesafe(server.base_url(), model);
  options.backend = backend;
  options.api_token = "test-token";
  options.account_id = "acc9";
  auto client = clef::Client::create(options).value();
  auto body = client.request_body(request);
  EXPECT_FALSE(body.ok());
  auto decision = client.decide(request);
  EXPECT_FALSE(decision.ok());
  EXPECT_EQ(server.request_count(), 0) << "refused before sending";
  return body.ok() ? clef::Error{} : body.error();
}

TEST(Box, TheRequestIsTheWrittenExample) {
  const auto request = red_square_request();
  auto client = clef::Client::create(typesafe("http://127.0.0.1:9", "jev-1.14.0")).value();
  // LiteLLM's published request (docs.litellm.ai, decisions/typesafe_images), compact, with
  // Cloudflare's published 280 x 280 PNG's first bytes as the image.
  EXPECT_EQ(client.request_body(request).value(),
            R"({"model":"jev-1.14.0","state":{"photo":"photo-7f3a9c"},)"
            R"("assets":{"photo-7f3a9c":{"type":"image","format":"png",)"
            R"("data_base64":"iVBORw0KGgoAAAANSUhEUgAAARgAAAEYCAIAAAAAAAAA"}},)"
            R"("questions":{"has_red_square":{"type":"noul",)"
            R"("instructions":"Is there a red square in `photo`?"},)"
            R"("red_square":{"type":"box","instructions":"the red square in `photo`"}}})");
  EXPECT_TRUE(has_header(client.redacted_headers(request), "TypeSafe-Danger-Zone-Images", "true"));
  // JPEG is "jpeg"; references default to image_1, image_2 in order.
  auto two = red_square_request();
  two.image_references.clear();
  two.state = clef::State::text("image_1 beside image_2");
  two.images = {image(png(280, 280)), image(fixture("red-square-400x300.jpg"))};
  const auto body = Json::parse(client.request_body(two).value());
  EXPECT_EQ(body["assets"]["image_1"]["format"], "png");
  EXPECT_EQ(body["assets"]["image_2"]["format"], "jpeg");
  EXPECT_FALSE(body.contains("images"));
}

TEST(Box, TheHeaderGoesOnImagesAndBoxesInTypeSafesFormAndNowhereElse) {
  auto client = clef::Client::create(typesafe("http://127.0.0.1:9", "jev-1.14.0")).value();
  const std::string header = "TypeSafe-Danger-Zone-Images";
  clef::DecisionRequest plain;
  plain.state = clef::State::text("a ticket");
  plain.questions = {clef::Question::yes_no("refund", "Asks for a refund?")};
  EXPECT_FALSE(has_header(client.redacted_headers(plain), header, "true"));
  EXPECT_FALSE(has_header(client.redacted_headers(), header, "true"));
  auto with_image = plain;
  with_image.images = {image(png(280, 280))};
  with_image.state = clef::State::text("image_1");
  EXPECT_TRUE(has_header(client.redacted_headers(with_image), header, "true"));
  // Another System One model with an image: the images array of llama.cpp and the rest, no
  // header.
  auto llama = clef::Client::create(typesafe("http://127.0.0.1:9", "clef-flash")).value();
  EXPECT_FALSE(has_header(llama.redacted_headers(with_image), header, "true"));
  const auto body = Json::parse(llama.request_body(with_image).value());
  EXPECT_TRUE(body["images"][0].get<std::string>().rfind("data:image/png;base64,", 0) == 0);
  EXPECT_FALSE(body.contains("assets"));
}

TEST(Box, TheAnswerIsReadFromThePublishedBox) {
  // The Drupal issue's published box beside LiteLLM's noul, in TypeSafe's envelope. Declared
  // before the server, whose destructor ends the threads that read it.
  const std::string body =
      R"({"model":"jev-1.14.0","answers":{"has_red_square":{"type":"noul","noul":0.99},)"
      R"("red_square":{"type":"box","box":{"top":0.25,"bottom":0.82,"left":0.44,"right":0.84},)"
      R"("confidence":0.92}},"usage":{"input_tokens":612,"output_tokens":20}})";
  clef::MockServer server(clef::MockProfile::typesafe);
  server.set_script([&](const clef::MockRequest&, int) -> std::optional<clef::MockReply> {
    return clef::MockReply{200, body, "application/json", {}};
  });
  auto decision = clef::Client::create(typesafe(server.base_url(), "jev-1.14.0"))
                      .value()
                      .decide(red_square_request());
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  const clef::Answer* box = decision->answer("red_square");
  ASSERT_TRUE(box && box->ok()) << (box ? box->problem : "none");
  ASSERT_NE(box->box(), nullptr);
  EXPECT_EQ(box->box()->top, 0.25);
  EXPECT_EQ(box->box()->bottom, 0.82);
  EXPECT_EQ(box->box()->left, 0.44);
  EXPECT_EQ(box->box()->right, 0.84);
  EXPECT_EQ(box->box()->confidence, 0.92);
  EXPECT_EQ(box->winner(), "0.25,0.82,0.44,0.84");
  EXPECT_EQ(box->winner_probability(), 0.92);
  EXPECT_EQ(box->raw_json,
            R"({"type":"box","box":{"top":0.25,"bottom":0.82,"left":0.44,"right":0.84},)"
            R"("confidence":0.92})");
  EXPECT_EQ(decision->request_id, "req_0");  // the mock's x-typesafe-request-id
  // clef's JSON carries the box, and reads back to the same answer.
  const Json json = clef::to_json(*box);
  EXPECT_EQ(json["box"].dump(), R"({"top":0.25,"bottom":0.82,"left":0.44,"right":0.84})");
  EXPECT_EQ(json["confidence"], 0.92);
  const auto back =
      clef::decision_from_json(clef::to_json(decision.value()), red_square_request().questions);
  ASSERT_NE(back.answer("red_square"), nullptr);
  ASSERT_NE(back.answer("red_square")->box(), nullptr);
  EXPECT_EQ(back.answer("red_square")->winner(), "0.25,0.82,0.44,0.84");
  EXPECT_EQ(clef::to_json(back).dump(), clef::to_json(decision.value()).dump());
}

TEST(Box, GeometryOutsideTheImageOrInsideOutIsRefusedNotClamped) {
  // The answer the mock's threads read, set between requests: under a lock, and declared before
  // the server, whose destructor ends those threads.
  std::mutex mutex;
  std::string box_json;
  auto answer_with = [&](std::string json) {
    std::lock_guard<std::mutex> lock(mutex);
    box_json = std::move(json);
  };
  clef::MockServer server(clef::MockProfile::typesafe);
  server.set_script([&](const clef::MockRequest&, int) -> std::optional<clef::MockReply> {
    std::lock_guard<std::mutex> lock(mutex);
    return clef::MockReply{200,
                           R"({"model":"jev-1.14.0","answers":{"has_red_square":{"type":"noul",)"
                           R"("noul":0.5},"red_square":)" +
                               box_json + "}}",
                           "application/json",
                           {}};
  });
  auto client = clef::Client::create(typesafe(server.base_url(), "jev-1.14.0")).value();
  const std::pair<std::string, std::string> cases[] = {
      {R"({"type":"box","box":{"top":-0.01,"bottom":0.5,"left":0.1,"right":0.2},"confidence":0.9})",
       "box.top is -0.01, outside [0, 1]"},
      {R"({"type":"box","box":{"top":0.1,"bottom":1.2,"left":0.1,"right":0.2},"confidence":0.9})",
       "box.bottom is 1.2, outside [0, 1]"},
      {R"({"type":"box","box":{"top":0.5,"bottom":0.5,"left":0.1,"right":0.2},"confidence":0.9})",
       "box.top 0.5 is not above box.bottom 0.5 (top < bottom)"},
      {R"({"type":"box","box":{"top":0.1,"bottom":0.5,"left":0.3,"right":0.2},"confidence":0.9})",
       "box.left 0.3 is not left of box.right 0.2 (left < right)"},
      {R"({"type":"box","box":{"top":0.1,"bottom":0.5,"left":"0.1","right":0.2},"confidence":0.9})",
       "box.left is missing or not a number"},
      {R"({"type":"box","box":{"top":0.1,"bottom":0.5,"right":0.2},"confidence":0.9})",
       "box.left is missing or not a number"},
      {R"({"type":"box","box":[0.1,0.5,0.1,0.2],"confidence":0.9})",
       "the answer has no \"box\" object"},
      {R"({"type":"box","top":0.1,"bottom":0.5,"left":0.1,"right":0.2,"confidence":0.9})",
       "the answer has no \"box\" object"},
      {R"({"type":"box","box":{"top":-1e-9,"bottom":0.5,"left":0.1,"right":0.2},"confidence":0.9})",
       "box.top is -1e-09, outside [0, 1]"},
      {R"({"type":"box","box":{"top":0.3000000001,"bottom":0.3,"left":0.1,"right":0.2},)"
       R"("confidence":0.9})",
       "box.top 0.3000000001 is not above box.bottom 0.3 (top < bottom)"},
      {R"({"type":"box","box":{"top":0.1,"bottom":0.5,"left":0.1,"right":0.2}})",
       "the box's confidence is missing or outside [0, 1]"},
      {R"({"type":"box","box":{"top":0.1,"bottom":0.5,"left":0.1,"right":0.2},"confidence":1.5})",
       "the box's confidence is missing or outside [0, 1]"},
  };
  for (const auto& [answer, problem] : cases) {
    answer_with(answer);
    auto decision = client.decide(red_square_request());
    ASSERT_TRUE(decision.ok()) << decision.error().to_string();
    const clef::Answer* box = decision->answer("red_square");
    ASSERT_NE(box, nullptr);
    EXPECT_EQ(box->status, clef::AnswerStatus::invalid) << answer;
    EXPECT_EQ(box->problem, problem) << answer;
    EXPECT_EQ(box->box(), nullptr) << "no clamped box is kept: " << answer;
    EXPECT_TRUE(decision->answer("has_red_square")->ok()) << "the other answer stands";
  }
  answer_with(R"({"type":"noul","noul":0.5})");
  auto wrong = client.decide(red_square_request());
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->answer("red_square")->status, clef::AnswerStatus::wrong_type);
  // The edges of the image itself are a box.
  answer_with(R"({"type":"box","box":{"top":0,"bottom":1,"left":-0.0,"right":1},"confidence":0})");
  auto whole = client.decide(red_square_request());
  ASSERT_TRUE(whole.ok());
  EXPECT_TRUE(whole->answer("red_square")->ok()) << whole->answer("red_square")->problem;
  EXPECT_EQ(whole->answer("red_square")->winner(), "0,1,0,1") << "-0 is 0";
}

TEST(Box, EachLimitIsRefusedBeforeSendingNamingIt) {
  const std::string jev = "jev-1.14.0";
  auto with_images = [](std::vector<clef::Image> images) {
    auto request = red_square_request();
    request.image_references.clear();
    request.state = clef::State::text("image_1 image_2 image_3");
    request.images = std::move(images);
    return request;
  };
  auto webp = with_images({image(fixture("pattern-64x48.webp"))});
  auto error = refused(webp, jev);
  EXPECT_EQ(error.message, "image is WebP; TypeSafe's assets take PNG or JPEG only");
  EXPECT_EQ(error.where, "images[0]");
  EXPECT_EQ(refused(with_images({image(png(279, 600))}), jev).message,
            "image is 279 x 600 pixels; TypeSafe takes 280 to 1568 pixels a side (it does not "
            "resize)");
  EXPECT_EQ(refused(with_images({image(png(280, 280)), image(png(1569, 400))}), jev).where,
            "images[1]");
  EXPECT_EQ(refused(with_images({image(png(400, 400, (16u << 20) + 1))}), jev).message,
            "image is 16777217 bytes (16.0 MiB), over TypeSafe's 16 MiB (16777216 bytes) per "
            "image");
  // At the limits exactly: accepted.
  auto client = clef::Client::create(typesafe("http://127.0.0.1:9", jev)).value();
  EXPECT_TRUE(client.request_body(with_images({image(png(280, 1568, 16u << 20))})).ok());
  // Two images of 13 MiB: each within 16 MiB, the body over 32 MiB.
  error =
      refused(with_images({image(png(400, 400, 13u << 20)), image(png(400, 400, 13u << 20))}), jev);
  EXPECT_NE(error.message.find("over TypeSafe's 32 MiB (33554432 bytes) per request"),
            std::string::npos)
      << error.message;
  EXPECT_EQ(error.where, "request");

  auto unreferenced = red_square_request();
  unreferenced.state = clef::State::json(R"({"photo-7f3a9c": "a key is not a place"})").value();
  unreferenced.questions = {clef::Question::box("red_square", "the red square")};
  error = refused(unreferenced, jev);
  EXPECT_EQ(error.where, "image_references[0]");
  EXPECT_NE(error.message.find("\"photo-7f3a9c\" appears nowhere in the state or the questions"),
            std::string::npos)
      << error.message;
  auto twice = with_images({image(png(280, 280)), image(png(280, 280))});
  twice.image_references = {"p", "p"};
  twice.state = clef::State::text("p");
  EXPECT_EQ(refused(twice, jev).message, "image reference \"p\" is given twice");
  auto odd = red_square_request();
  odd.image_references = {"photo 1"};
  EXPECT_EQ(refused(odd, jev).message,
            "image reference \"photo 1\" must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-'");
  auto cut = with_images({image(std::string("\x89PNG\r\n\x1a\n", 8))});
  error = refused(cut, jev);
  EXPECT_EQ(error.message,
            "the image's header is cut short, so its size cannot be read; TypeSafe refuses an "
            "image outside 280 to 1568 pixels a side");
  std::vector<clef::Image> eleven(11, image(png(280, 280)));
  auto many = with_images(eleven);
  many.state = clef::State::text(
      "image_1 image_2 image_3 image_4 image_5 image_6 image_7 "
      "image_8 image_9 image_10 image_11");
  error = refused(many, jev);
  EXPECT_EQ(error.message,
            "image reference \"image_1\" occurs inside \"image_10\"; TypeSafe matches "
            "references as plain text, so each must be distinct from every part of the others");
  EXPECT_EQ(error.where, "images[0] (image_1)");
  auto counted = red_square_request();
  counted.image_references = {"a", "b"};
  EXPECT_EQ(refused(counted, jev).message, "image_references has 2 entries for 1 images");

  auto no_image = red_square_request();
  no_image.images.clear();
  no_image.image_references.clear();
  error = refused(no_image, jev);
  EXPECT_EQ(error.message, "a box question finds something in an image, and the request has none");
  EXPECT_EQ(error.where, "questions.red_square");
  for (const std::string old : {"jev-latest", "jev-1.13.0", "typesafe/jev-1.13.0"}) {
    EXPECT_EQ(refused(red_square_request(), old).message,
              "model \"" + old +
                  "\" is Jev 1.13 or older, which has no box question: use jev-preview or "
                  "jev-1.14.0");
  }
  auto plain = red_square_request();
  plain.image_references.clear();
  plain.state = clef::State::text("image_1");
  EXPECT_EQ(refused(plain, "@cf/cloudflare/clef-flash", clef::Backend::workers_ai).message,
            "a box question is TypeSafe's (Jev 1.14, on the systemone backend); Workers AI's "
            "Clef schema has no box type");
  EXPECT_EQ(refused(plain, "clef-flash", clef::Backend::ollama).message,
            "a box question is TypeSafe's (Jev 1.14, on the systemone backend); Ollama's System "
            "One API has no box type");
  EXPECT_EQ(refused(plain, "gpt-6-luna", clef::Backend::openai).message,
            "a box question is TypeSafe's (Jev 1.14, on the systemone backend); OpenAI's "
            "/v1/decisions has no box type");
  auto referenced = red_square_request();
  referenced.questions.pop_back();
  EXPECT_EQ(refused(referenced, "@cf/cloudflare/clef-flash", clef::Backend::workers_ai).message,
            "image references are TypeSafe's assets form, for the systemone backend");
}

TEST(Box, TheTypeSafeMockAnswersBoxesAndHoldsTheDangerZone) {
  clef::MockServer server(clef::MockProfile::typesafe);
  server.set_rules(
      {{"", "red_square", clef::MockPattern::compile("photo").value(), "0.2,0.5,0.5,0.7", 0.96}});
  auto request = red_square_request();
  request.images = {image(fixture("red-square-400x300.png"))};
  auto decision =
      clef::Client::create(typesafe(server.base_url(), "jev-preview")).value().decide(request);
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  EXPECT_EQ(decision->model, "jev-1.14.0");
  const clef::Answer* box = decision->answer("red_square");
  ASSERT_TRUE(box && box->box()) << (box ? box->problem : "none");
  EXPECT_EQ(box->winner(), "0.2,0.5,0.5,0.7");
  EXPECT_EQ(box->box()->confidence, 0.96);
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].header("TypeSafe-Danger-Zone-Images"), "true");
  // Without a rule the simulated model still answers a whole box, in TypeSafe's two decimals.
  server.set_rules({});
  auto simulated =
      clef::Client::create(typesafe(server.base_url(), "jev-preview")).value().decide(request);
  ASSERT_TRUE(simulated.ok());
  ASSERT_TRUE(simulated->answer("red_square")->ok()) << simulated->answer("red_square")->problem;

  // Raw bodies clef itself would never send, straight to the mock.
  auto send = [&](const std::string& body, bool header = true) {
    clef::HttpRequest raw;
    raw.method = "POST";
    raw.url = server.base_url() + "/v1/systemone";
    raw.body = body;
    raw.headers = {{"Content-Type", "application/json"}};
    if (header) raw.headers.emplace_back("TypeSafe-Danger-Zone-Images", "true");
    return clef::make_curl_transport()->send(raw);
  };
  const std::string photo = clef::Image::from_bytes(fixture("red-square-400x300.png"))->base64();
  const std::string asset =
      R"("assets":{"p1":{"type":"image","format":"png","data_base64":")" + photo + R"("}})";
  auto body = [&](const std::string& model, const std::string& state, const std::string& assets) {
    return R"({"model":")" + model + R"(","state":)" + state + (assets.empty() ? "" : ",") +
           assets + R"(,"questions":{"b":{"type":"box","instructions":"the square in `photo`"}}})";
  };
  auto expect_refusal = [&](const clef::Result<clef::HttpResponse>& response,
                            const std::string& message) {
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(response->status, 400) << response->body;
    const Json detail = Json::parse(response->body)["detail"];
    EXPECT_EQ(detail["error_type"], "api_usage_error");
    EXPECT_EQ(detail["message"], message) << response->body;
  };
  auto ok = send(body("jev-1.14.0", R"({"photo":"p1"})", asset));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200) << ok->body;
  expect_refusal(send(body("jev-1.14.0", R"({"photo":"p1"})", asset), false),
                 "Images and box questions are experimental: send TypeSafe-Danger-Zone-Images: "
                 "true");
  expect_refusal(send(body("jev-latest", R"({"photo":"p1"})", asset)), "Invalid request.");
  expect_refusal(send(body("jev-1.14.0", R"({"p1":"a key"})", asset)),
                 "Asset \"p1\" is not referenced in the state or the questions");
  expect_refusal(send(body("jev-1.14.0", R"({"photo":"p1"})", "")),
                 "A box question needs an image in assets");
  const std::string small = clef::Image::from_bytes(fixture("pattern-64x48.png"))->base64();
  expect_refusal(send(body("jev-1.14.0", R"({"photo":"p1"})",
                           R"("assets":{"p1":{"format":"png","data_base64":")" + small + R"("}})")),
                 "Invalid image dimensions");
  expect_refusal(send(body("jev-1.14.0", R"({"photo":"p1"})",
                           R"("assets":{"p1":{"format":"gif","data_base64":")" + photo + R"("}})")),
                 "assets.p1.format: must be png, jpg or jpeg");
  expect_refusal(
      send(body("jev-1.14.0", R"({"photo":"p1"})",
                R"("assets":{"p1":{"format":"png","data_base64":"data:image/png;base64,AAAA"}})")),
      "assets.p1.data_base64: must be standard padded base64");
  expect_refusal(
      send(body("jev-1.14.0", R"({"photo":"p1"})",
                R"("assets":{"p1":{"format":"png","part":"f","data_base64":")" + photo + R"("}})")),
      "assets.p1.part: unknown field");
  // Other servers have no box type.
  clef::MockServer ollama(clef::MockProfile::ollama);
  clef::HttpRequest raw;
  raw.method = "POST";
  raw.url = ollama.base_url() + "/v1/systemone";
  raw.body =
      R"({"model":"clef-flash","state":"x","questions":{"b":{"type":"box","instructions":"?"}}})";
  auto refused_box = clef::make_curl_transport()->send(raw);
  ASSERT_TRUE(refused_box.ok());
  EXPECT_EQ(refused_box->status, 400) << refused_box->body;
  EXPECT_NE(refused_box->body.find("unknown question type \\\"box\\\""), std::string::npos)
      << refused_box->body;
}

TEST(Box, AQuestionsFileAndTheBoxFlagReadTheSameQuestion) {
  auto parsed = clef::parse_questions(R"({"mug": {"type": "box", "instructions": "the mug"}})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
  EXPECT_EQ(parsed->at(0).type, clef::QuestionType::box);
  EXPECT_EQ(clef::questions_sha256(parsed.value()).value(),
            clef::questions_sha256({clef::Question::box("mug", "the mug")}).value());
  auto criteria = clef::parse_questions(
      R"({"mug": {"type": "box", "instructions": "the mug", "criteria": ["a", "b"]}})");
  ASSERT_FALSE(criteria.ok());
  EXPECT_EQ(criteria.error().message, "a box question takes no criteria, only instructions");
  EXPECT_EQ(criteria.error().where.rfind("questions.mug.criteria, byte ", 0), 0u)
      << criteria.error().where;
  auto built = clef::Question::box("mug", "the mug");
  built.levels = {"a", "b"};
  EXPECT_EQ(clef::validate(built).error().message,
            "a box question takes instructions only (no criteria)");
}

TEST(Box, OverlapDoesNotDependOnHowSmallTheBoxesAre) {
  // Two identical boxes overlap wholly however small: their areas underflowed to 0 (IoU 0).
  // (At the image's top left corner: 0.25 + 1e-200 would be 0.25 again.)
  for (const double side : {0.5, 1e-10, 1e-160, 1e-200, 1e-300, 4e-320}) {
    const clef::BoxAnswer box{0, side, 0, side, 0.9};
    EXPECT_DOUBLE_EQ(clef::intersection_over_union(box, box), 1.0) << side;
    // Half as wide, sharing its left edge: half of the larger one.
    const clef::BoxAnswer half{0, side, 0, side / 2, 0.9};
    EXPECT_NEAR(clef::intersection_over_union(box, half), 0.5, 1e-9) << side;
  }
  const clef::BoxAnswer a{0.1, 0.2, 0.1, 0.2, 1}, b{0.3, 0.4, 0.3, 0.4, 1};
  EXPECT_EQ(clef::intersection_over_union(a, b), 0.0);
}

TEST(Box, EvalMeasuresOverlapWithTheGoldBox) {
  const auto question = clef::Question::box("square", "the red square");
  EXPECT_EQ(clef::gold_label(question, " 0.2, 0.5 ,0.50,0.7 ").value(), "0.2,0.5,0.5,0.7");
  EXPECT_EQ(clef::gold_label(question, "[0.2,0.5,0.5,0.7]").value(), "0.2,0.5,0.5,0.7");
  EXPECT_EQ(clef::gold_label(question, "").value(), "");
  for (const std::string bad : {"0.2,0.5,0.5", "0.5,0.2,0.5,0.7", "0.2,0.5,0.5,1.1", "left",
                                "0.2,0.5,0.5,0.7,0.9", "nan,0.5,0.5,0.7"}) {
    EXPECT_FALSE(clef::gold_label(question, bad).ok()) << bad;
  }
  EXPECT_NE(clef::gold_label(question, "0.5,0.2,0.5,0.7").error().message.find("top < bottom"),
            std::string::npos);

  auto answer = [](double top, double bottom, double left, double right, double confidence) {
    clef::Answer a;
    a.question = "square";
    a.asked = clef::QuestionType::box;
    a.status = clef::AnswerStatus::ok;
    a.value = clef::BoxAnswer{top, bottom, left, right, confidence};
    return a;
  };
  // Gold 0.2,0.5,0.5,0.7 (0.3 x 0.2 = 0.06): the same box (IoU 1); one shifted 0.05 down
  // (overlap 0.25 x 0.2 = 0.05, union 0.07, IoU 5/7); one beside it (IoU 0); one missing.
  const clef::Answer same = answer(0.2, 0.5, 0.5, 0.7, 0.9);
  const clef::Answer shifted = answer(0.25, 0.55, 0.5, 0.7, 0.8);
  const clef::Answer beside = answer(0.2, 0.5, 0.1, 0.3, 0.7);
  const std::vector<std::string> gold(4, "0.2,0.5,0.5,0.7");
  const auto e = clef::evaluate_question(question, gold, {&same, &shifted, &beside, nullptr});
  EXPECT_EQ(e.n, 4u);
  EXPECT_EQ(e.answered, 3u);
  ASSERT_TRUE(e.mean_iou);
  EXPECT_NEAR(e.mean_iou->value, (1.0 + 5.0 / 7.0 + 0.0) / 3.0, 1e-12);
  ASSERT_TRUE(e.iou_at_least_half);
  EXPECT_NEAR(e.iou_at_least_half->value, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(e.accuracy->value, 2.0 / 4.0, 1e-12);
  EXPECT_FALSE(e.brier);
  EXPECT_EQ(e.confusion.total(), 0u);
  EXPECT_NEAR(
      clef::intersection_over_union(same.box() ? *same.box() : clef::BoxAnswer{}, *shifted.box()),
      5.0 / 7.0, 1e-12);
  // Paired: a beats b on the shifted item only.
  const auto c = clef::compare_question(question, gold, {&same, &shifted, &beside, nullptr},
                                        {&same, &beside, &beside, nullptr});
  EXPECT_EQ(c.only_a_right, 1u);
  EXPECT_EQ(c.only_b_right, 0u);
  EXPECT_NEAR(c.flip_rate->value, 0.25, 1e-12);
}

}  // namespace
