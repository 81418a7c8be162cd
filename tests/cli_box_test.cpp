// The Box question from the command line: clef ask draws the box on its image, clef batch and
// clef eval read each item's image from the data (--image-field), and eval scores boxes by their
// overlap with the gold box — against the typesafe mock, whose rules fix each answer, so every
// number can be worked out by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::lines_by_id;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::write_temp_file;
using Json = nlohmann::json;

const std::string square_png = std::string(CLEF_TEST_DATA) + "/media/red-square-400x300.png";

clef::MockRule rule(std::string match, std::string answer, double probability) {
  return {"", "square", clef::MockPattern::compile(match).value(), std::move(answer), probability};
}

std::string test_name() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

std::vector<std::string> typesafe_args(const FakeServer& server, std::vector<std::string> more) {
  std::vector<std::string> args = {"--backend",       "systemone", "--host",
                                   server.base_url(), "-m",        "jev-preview"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(CliBox, AskDrawsTheBoxOnItsImage) {
  FakeServer server(clef::MockProfile::typesafe);
  server.set_rules({rule("photo", "0.2,0.5,0.5,0.7", 0.93)});
  std::vector<std::string> args = {"ask"};
  for (const auto& arg :
       typesafe_args(server, {"--image", square_png, "--box", "square: the red square in `photo`",
                              "--state-json", R"({"photo": "image_1"})", "--color", "never"})) {
    args.push_back(arg);
  }
  auto drawn = run_clef(args);
  ASSERT_EQ(drawn.code, 0) << drawn.err;
  EXPECT_NE(drawn.out.find("square  0.2,0.5,0.5,0.7  confidence 0.93\n"), std::string::npos)
      << drawn.out;
  EXPECT_NE(drawn.out.find("top 20.0%  bottom 50.0%  left 50.0%  right 70.0%  (x 200-280, y "
                           "60-150 of 400x300 px)"),
            std::string::npos)
      << drawn.out;
  // A 400 x 300 image is 48 cells across and 18 down: the box is rows 3 to 9, columns 24 to 33.
  const std::string edge = "  |" + std::string(24, ' ') + "+--------+" + std::string(14, ' ') + "|";
  const std::string side = "  |" + std::string(24, ' ') + "|        |" + std::string(14, ' ') + "|";
  const std::string blank = "  |" + std::string(48, ' ') + "|";
  const std::string frame = "  +" + std::string(48, '-') + "+";
  std::string expected = frame + "\n";
  for (int row = 0; row < 18; ++row) {
    expected += (row == 3 || row == 9) ? edge : (row > 3 && row < 9) ? side : blank;
    expected += "\n";
  }
  expected += frame + "\n";
  EXPECT_NE(drawn.out.find(expected), std::string::npos) << drawn.out;
  EXPECT_EQ(server.requests().at(0).header("TypeSafe-Danger-Zone-Images"), "true");

  args.push_back("--json");
  auto json = run_clef(args);
  ASSERT_EQ(json.code, 0) << json.err;
  const Json answer = Json::parse(json.out)["answers"]["square"];
  EXPECT_EQ(answer["winner"], "0.2,0.5,0.5,0.7");
  EXPECT_EQ(answer["box"].dump(), R"({"bottom":0.5,"left":0.5,"right":0.7,"top":0.2})");
  args.pop_back();

  args.push_back("--expect");
  args.push_back("square=0.2,0.5,0.5,0.7");
  auto expect = run_clef(args);
  EXPECT_EQ(expect.code, 2);
  EXPECT_NE(expect.err.find("\"square\" is a box question: a box has edges, not a label to expect"),
            std::string::npos)
      << expect.err;
}

TEST(CliBox, BatchReadsEachItemsImageFromTheData) {
  FakeServer server(clef::MockProfile::typesafe);
  server.set_rules({rule("one", "0.2,0.5,0.5,0.7", 0.9)});
  // Relative paths are read from the data's directory: the copy sits beside it.
  const std::string copy_name = "box_copy_" + test_name() + ".png";
  std::ifstream source(square_png, std::ios::binary);
  write_temp_file(copy_name, std::string(std::istreambuf_iterator<char>(source), {}));
  const std::string data = write_temp_file(
      "box_items_" + test_name() + ".jsonl",
      R"({"id":"a","state":{"photo":"image_1","n":"one"},"image":")" + copy_name + "\"}\n" +
          R"({"id":"b","state":{"photo":"image_1","n":"two"},"image":")" + square_png + "\"}\n" +
          R"({"id":"c","state":{"photo":"image_1","n":"three"},"image":"no-such.png"})" + "\n");
  const std::string out = fresh_path("box_items_out.jsonl");
  std::vector<std::string> args = {"batch", data, "-o", out};
  for (const auto& arg : typesafe_args(
           server, {"--image-field", "image", "--box", "square: the red square in `photo`"})) {
    args.push_back(arg);
  }
  auto run = run_clef(args);
  EXPECT_EQ(run.code, 6) << run.err;  // one item failed; its error is in its line
  EXPECT_NE(run.err.find("square: box 2"), std::string::npos) << run.err;
  auto lines = lines_by_id(out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines["a"]["answers"]["square"]["winner"], "0.2,0.5,0.5,0.7") << lines["a"].dump();
  EXPECT_EQ(lines["b"]["answers"]["square"]["status"], "ok") << lines["b"].dump();
  EXPECT_NE(lines["c"]["error"]["where"].get<std::string>().find("no-such.png"), std::string::npos)
      << lines["c"].dump();
  EXPECT_EQ(server.request_count(), 2);

  // Text lines have no field to name an image.
  auto text = run_clef({"batch", data, "--input-format", "text", "--image-field", "image", "--host",
                        server.base_url(), "--box", "square: it", "-o", fresh_path("box_t.jsonl")});
  EXPECT_EQ(text.code, 2);
  EXPECT_NE(text.err.find("--image-field names a field of JSONL or a column of CSV/TSV"),
            std::string::npos)
      << text.err;
  // Nor an id or a state: a text line is the state, its line number the id.
  for (const char* flag : {"--id-field", "--state-field"}) {
    auto named =
        run_clef({"batch", data, "--input-format", "text", flag, "x", "--host", server.base_url(),
                  "--box", "square: it", "-o", fresh_path("box_t.jsonl")});
    EXPECT_EQ(named.code, 2) << flag;
    EXPECT_NE(named.err.find(std::string(flag) + " names a field of JSONL"), std::string::npos)
        << named.err;
  }
}

TEST(CliBox, EvalScoresBoxesByTheirOverlapWithTheGold) {
  FakeServer server(clef::MockProfile::typesafe);
  // Gold 0.2,0.5,0.5,0.7 for all three: "one" exactly (IoU 1), "two" 0.05 lower (IoU 5/7),
  // "three" beside it (IoU 0).
  server.set_rules({rule("one", "0.2,0.5,0.5,0.7", 0.9), rule("two", "0.25,0.55,0.5,0.7", 0.8),
                    rule("three", "0.2,0.5,0.1,0.3", 0.7)});
  const std::string data =
      write_temp_file("box_gold_" + test_name() + ".jsonl",
                      R"({"id":"a","state":{"photo":"image_1","n":"one"},"image":")" + square_png +
                          R"(","gold":"0.2,0.5,0.5,0.7"})" + "\n" +
                          R"({"id":"b","state":{"photo":"image_1","n":"two"},"image":")" +
                          square_png + R"(","gold":[0.2,0.5,0.5,0.7]})" + "\n" +
                          R"({"id":"c","state":{"photo":"image_1","n":"three"},"image":")" +
                          square_png + R"(","gold":"0.2, 0.5, 0.5, 0.7"})" + "\n");
  const std::string questions = write_temp_file(
      "box_questions_" + test_name() + ".json",
      R"({"square": {"type": "box", "instructions": "the red square in `photo`"}})");
  const std::string report = fresh_path("box_report.json");
  std::vector<std::string> args = {
      "eval",          data,   "-q",      questions, "--label", "square=gold",
      "--report-json", report, "--color", "never"};
  for (const auto& arg : typesafe_args(server, {"--image-field", "image"})) args.push_back(arg);
  auto eval = run_clef(args);
  ASSERT_EQ(eval.code, 0) << eval.err;
  EXPECT_NE(eval.out.find("square (box)  n 3  coverage 100.0%"), std::string::npos) << eval.out;
  EXPECT_NE(eval.out.find("mean IoU 0.571  IoU>=0.5 66.7%"), std::string::npos) << eval.out;
  EXPECT_EQ(eval.out.find("macro-F1"), std::string::npos) << eval.out;
  const Json q = Json::parse(read_file(report))["models"]["jev-preview"]["questions"]["square"];
  EXPECT_NEAR(q["mean_iou"]["value"].get<double>(), (1.0 + 5.0 / 7.0) / 3.0, 1e-12) << q.dump();
  EXPECT_NEAR(q["iou_at_least_half"]["value"].get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(q["accuracy"]["value"].get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_TRUE(q["brier"].is_null());

  // A gold box that is no box names the line and the field.
  const std::string bad = write_temp_file(
      "box_bad_gold_" + test_name() + ".jsonl",
      R"({"id":"a","state":{"photo":"image_1"},"image":"x.png","gold":"0.5,0.2,0.5,0.7"})"
      "\n");
  auto refused = run_clef({"eval", bad, "-q", questions, "--label", "square=gold", "--host",
                           server.base_url(), "--image-field", "image"});
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("box.top 0.5 is not above box.bottom 0.2 (top < bottom)"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("line 1, gold"), std::string::npos) << refused.err;
}

}  // namespace
