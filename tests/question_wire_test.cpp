// clef::parse_questions, the reader of the wire format, against the writer and vectors.md.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "clef/clef.hpp"
#include "model/question_wire.hpp"

namespace {

using clef::Guidance;
using clef::Question;
using clef::QuestionType;

std::string written(const std::vector<Question>& questions) {
  std::string out;
  EXPECT_TRUE(clef::detail::append_questions(out, questions).ok());
  return out;
}

// TV-11: the TypeSafe API reference's request, with structured instructions, structured option
// descriptions, a null option and noul criteria.
const char* const tv11_questions = R"({
    "is_urgent": {
      "type": "noul",
      "instructions": "Does this convey urgency?",
      "criteria": {"true": "Explicitly time-sensitive", "false": "No urgency expressed"}
    },
    "department": {
      "type": "choice",
      "instructions": {
        "question": "Which team should handle this message?",
        "focus": "Classify the customer's primary request, not every topic mentioned."
      },
      "criteria": {
        "billing": {"what": "Payments, invoicing, refunds", "not_for": "Bugs or outages"},
        "technical": {"what": "Bugs, outages, integrations", "not_for": "Charges or refunds"},
        "sales": null
      }
    },
    "frustration": {
      "type": "score",
      "instructions": "How frustrated is the customer?",
      "criteria": ["Calm", "Frustrated", "Very angry"]
    }
  })";

TEST(ParseQuestions, Tv11StructuredGuidanceIsModelledAndSentVerbatim) {
  auto questions = clef::parse_questions(tv11_questions);
  ASSERT_TRUE(questions.ok()) << questions.error().to_string();
  ASSERT_EQ(questions->size(), 3u);
  const Question& department = questions->at(1);
  EXPECT_EQ(department.type, QuestionType::choice);
  EXPECT_TRUE(department.instructions.is_structured());
  ASSERT_EQ(department.options.size(), 3u);
  EXPECT_TRUE(department.options[0].description->is_structured());
  EXPECT_FALSE(department.options[2].description.has_value());
  EXPECT_EQ(questions->at(0).true_means, "Explicitly time-sensitive");
  EXPECT_EQ(questions->at(2).levels,
            (std::vector<std::string>{"Calm", "Frustrated", "Very angry"}));
  // Written back, it is the input with the white space removed: same keys, same order.
  EXPECT_EQ(written(questions.value()), nlohmann::ordered_json::parse(tv11_questions).dump());
}

TEST(ParseQuestions, StructuredGuidanceFromCode) {
  auto focus = Guidance::structured(R"({"question": "Which team?", "focus": "the main ask"})");
  ASSERT_TRUE(focus.ok());
  EXPECT_EQ(focus->text(), R"({"question":"Which team?","focus":"the main ask"})");
  EXPECT_FALSE(Guidance::structured("\"plain\"").ok());
  EXPECT_FALSE(Guidance::structured("{").ok());
  auto empty = Guidance::structured("{}");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->blank());
  auto refused = clef::validate(Question::yes_no("q", empty.value()));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "instructions are empty");
}

// Workers AI's clef-flash schema: "ordered level descriptions (string, object, or array), lowest
// first". The issue's example was refused with "must be a string"; it is read, labelled and sent
// byte for byte.
TEST(ParseQuestions, ScoreLevelsMayBeStructuredAsWorkersAiAllows) {
  const char* const text = R"({"urgency": {"type": "score", "instructions": "How urgent?",
      "criteria": ["Routine", {"level": "Soon", "examples": ["next week"]}, "Urgent",
                   ["after", "the", "holidays"], {"when": "never"}]}})";
  auto questions = clef::parse_questions(text);
  ASSERT_TRUE(questions.ok()) << questions.error().to_string();
  const Question& urgency = questions->at(0);
  // Labels (for answers, eval's gold and the human view): a string is its own; a structured
  // level's is its "level"/"label"/"name" text, else its place.
  EXPECT_EQ(urgency.levels,
            (std::vector<std::string>{"Routine", "Soon", "Urgent", "level 3", "level 4"}));
  ASSERT_EQ(urgency.level_descriptions.size(), 5u);
  EXPECT_FALSE(urgency.level_descriptions[0].has_value());
  ASSERT_TRUE(urgency.level_descriptions[1].has_value());
  EXPECT_TRUE(urgency.level_descriptions[1]->is_structured());
  EXPECT_EQ(written(questions.value()),
            R"({"urgency":{"type":"score","instructions":"How urgent?","criteria":["Routine",)"
            R"({"level":"Soon","examples":["next week"]},"Urgent",["after","the","holidays"],)"
            R"({"when":"never"}]}})");

  // From code: a label shown to people, a description sent to the model.
  Question severity = Question::score("severity", "How bad?", {"minor", "major"});
  severity.level_descriptions = {Guidance("Cosmetic; nothing is blocked"),
                                 Guidance::structured(R"({"blocks": ["checkout"]})").value()};
  EXPECT_EQ(written({severity}),
            R"({"severity":{"type":"score","instructions":"How bad?","criteria":)"
            R"(["Cosmetic; nothing is blocked",{"blocks":["checkout"]}]}})");
  severity.level_descriptions.pop_back();  // one per level, or none
  auto refused = clef::validate(severity);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("level_descriptions has 1 entries for 2 levels"),
            std::string::npos);
  severity.level_descriptions = {std::nullopt, Guidance::structured("[]").value()};
  EXPECT_FALSE(clef::validate(severity).ok());  // an empty structure says nothing
}

TEST(ParseQuestions, ErrorsNameQuestionFieldAndByte) {
  struct Case {
    std::string text;
    std::string where;
  };
  const std::string bad_option = R"({"team": {"type": "choice", "instructions": "Which?", )"
                                 R"("criteria": {"a": 5, "b": null}}})";
  const std::vector<Case> cases = {
      {bad_option, "questions.team.criteria.a, byte " + std::to_string(bad_option.find('5'))},
      {R"({"team": {"type": "noul"}})", "questions.team.instructions"},
      {R"({"team": {"type": "vote", "instructions": "x"}})", "questions.team.type, byte 18"},
      {R"({"team": {"type": "noul", "instructions": "x", "weight": 2}})",
       "questions.team.weight, byte 57"},
      {R"({"team": {"type": "noul", "instructions": 7}})", "questions.team.instructions, byte 42"},
      {R"({"team": {"type": "score", "instructions": "x", "criteria": ["a", 2]}})",
       "questions.team.criteria[1], byte 60"},
      {R"({"team": {"type": "choice", "instructions": "x", "criteria": {"a": "A"}}})",
       "questions.team, byte 9"},
      {R"({"team": {"type": "noul", )", "byte 26"},
      {R"({})", "questions"},
      {R"([])", "questions, byte 0"},
  };
  for (const auto& c : cases) {
    auto questions = clef::parse_questions(c.text);
    ASSERT_FALSE(questions.ok()) << c.text;
    EXPECT_EQ(questions.error().kind, clef::ErrorKind::invalid_input);
    EXPECT_EQ(questions.error().where, c.where) << c.text << "\n" << questions.error().to_string();
  }
}

// A file past the limits is refused by its counts before its questions are read, and one at the
// limits is read in one pass: each member's place used to be searched for in its object's whole
// text (20,000 options took 8.6 s; a 16 MB file within the limits, 4 s).
TEST(ParseQuestions, AFileFarPastTheLimitsIsRefusedByItsCountsAndOneAtThemReadInOnePass) {
  std::string options = R"({"o0": "Option 0")";
  for (int i = 1; i < 300'000; ++i)
    options += R"(, "o)" + std::to_string(i) + R"(": "Option )" + std::to_string(i) + "\"";
  const auto wide = clef::parse_questions(
      R"({"team": {"type": "choice", "instructions": "Which?", "criteria": )" + options + "}}}");
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.error().message, "a choice question takes at most 255 options, got 300000");
  EXPECT_EQ(wide.error().where, "questions.team, byte 9");
  std::string many = R"({"q0": {"type": "noul", "instructions": "x"})";
  for (int i = 1; i < 200'000; ++i)
    many += R"(, "q)" + std::to_string(i) + R"(": {"type": "noul", "instructions": "x"})";
  const auto tall = clef::parse_questions(many + "}");
  ASSERT_FALSE(tall.ok());
  EXPECT_EQ(tall.error().message, "a request takes at most 64 questions, got 200000");
  EXPECT_EQ(tall.error().where, "questions");
  // 64 questions of 255 options, each described in 900 characters: 15 MB.
  const std::string description(900, 'd');
  std::string full = "{";
  for (int q = 0; q < 64; ++q) {
    full += std::string(q ? ", " : "") + "\"q" + std::to_string(q) +
            R"(": {"type": "choice", "instructions": "Which?", "criteria": {)";
    for (int o = 0; o < 255; ++o)
      full += std::string(o ? ", " : "") + "\"o" + std::to_string(o) + "\": \"" + description +
              std::to_string(o) + "\"";
    full += "}}";
  }
  const auto read = clef::parse_questions(full + "}");
  ASSERT_TRUE(read.ok()) << read.error().to_string();
  ASSERT_EQ(read->size(), 64u);
  ASSERT_EQ(read->back().options.size(), 255u);
  EXPECT_EQ(read->back().options.back().label, "o254");
  EXPECT_EQ(read->back().options.back().description->text(), description + "254");
}

TEST(ParseQuestions, ReadsBackWhatTheFactoriesWrite) {
  const std::vector<Question> questions = {
      Question::choice("team", "Which team?", {{"billing", "Money"}, {"other", std::nullopt}}),
      Question::yes_no("refund", "Refund?", std::nullopt, "Does not ask"),
      Question::score("urgency", "How urgent?", {"Routine", "Soon", "Urgent"})};
  const std::string once = written(questions);
  auto again = clef::parse_questions(once);
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(written(again.value()), once);
  EXPECT_EQ(again->at(1).false_means, "Does not ask");
  EXPECT_FALSE(again->at(1).true_means.has_value());
}

}  // namespace

// The client writes a question set once and reuses it while requests repeat it
// (QuestionMemo): any change to any field must be seen, or a request would carry the questions
// of the one before it.
TEST(QuestionMemo, EveryFieldThatChangesTheWireIsSeen) {
  const std::vector<Question> base = {
      Question::choice("team", "Which team?", {{"billing", "Payments"}, {"other", std::nullopt}}),
      Question::yes_no("refund", "Asks for a refund?", "It does", "It does not"),
      Question::score("urgency", "How urgent?", {"Routine", "Urgent"}),
      Question::yes_no("late", "Is it late?")};
  std::vector<std::function<void(std::vector<Question>&)>> changes = {
      [](auto& q) { q[0].name = "teams"; },
      [](auto& q) { q[3].type = QuestionType::box; },
      [](auto& q) { q[0].instructions = Guidance("Which team ?"); },
      [](auto& q) {
        q[0].instructions = Guidance::structured(R"({"ask": "Which team?"})").value();
      },
      [](auto& q) { q[0].options[0].label = "bill"; },
      [](auto& q) { q[0].options[0].description = Guidance("Refunds"); },
      [](auto& q) { q[0].options[1].description = Guidance("None"); },
      [](auto& q) {
        q[0].options.push_back({"technical", std::nullopt});
      },
      [](auto& q) { q[1].true_means = "Yes"; },
      [](auto& q) { q[1].false_means.reset(); },
      [](auto& q) { q[2].levels[1] = "Now"; },
      [](auto& q) {
        q[2].level_descriptions = {Guidance("Can wait"), std::nullopt};
      },
      [](auto& q) { std::swap(q[0], q[1]); },
      [](auto& q) { q.pop_back(); },
  };
  const clef::detail::QuestionMemo memo;
  auto first = memo.prepare(base);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first.value()->wire_json, written(base));
  EXPECT_EQ(memo.prepare(base).value(), first.value()) << "the same set is prepared once";
  for (std::size_t i = 0; i < changes.size(); ++i) {
    std::vector<Question> changed = base;
    changes[i](changed);
    EXPECT_FALSE(clef::detail::same_questions(base, changed)) << "change " << i;
    auto prepared = memo.prepare(changed);
    ASSERT_TRUE(prepared.ok()) << "change " << i << ": " << prepared.error().to_string();
    EXPECT_EQ(prepared.value()->wire_json, written(changed)) << "change " << i;
    EXPECT_EQ(memo.prepare(base).value()->wire_json, written(base)) << "change " << i;
  }
  // An invalid set is refused each time it is asked, never remembered as prepared.
  std::vector<Question> invalid = base;
  invalid[1].name = invalid[0].name;
  EXPECT_FALSE(memo.prepare(invalid).ok());
  EXPECT_FALSE(memo.prepare(invalid).ok());
}

// A label that is not UTF-8 cannot be printed in the error: its place names it.
TEST(QuestionWire, ALabelThatIsNotUtf8IsNamedByItsPlace) {
  const std::vector<Question> questions = {
      Question::choice("team", "Which team?", {{"billing", "Payments"}, {"oth\xff", "Other"}})};
  std::string out;
  const clef::Status status = clef::detail::append_questions(out, questions);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().where, "questions.team.criteria, option 2's label");
}
