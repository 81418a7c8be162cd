// The test suite's System One server is the product's own mock (clef/mock.hpp), under the names
// the tests were written with.
#pragma once

#include "clef/mock.hpp"

namespace clef::testing {

using FakeServer = clef::MockServer;
using ServerShape = clef::MockProfile;
using RecordedRequest = clef::MockRequest;
using Scripted = clef::MockReply;
using AnswerRule = clef::MockRule;
using clef::first_attempt_faults;
using clef::refusing_port;
using clef::unused_port;

}  // namespace clef::testing
