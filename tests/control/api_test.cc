// The control API's JSON from clients and agents: numbers are checked against
// the field's type (a float out of an integer's range is refused by name,
// never cast: found by the control_api fuzz target).
#include "control/api.h"

#include <gtest/gtest.h>

#include "fabcheck/model/json_fields.h"

namespace fabcheck::control {
namespace {

TEST(ControlApi, NumbersOutOfTheirFieldsRangeAreRefusedByName) {
  auto huge = ParsePeerTestRequest(R"({"peer": "10.0.0.1", "timeout_ms": 2.13333e12})");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("timeout_ms"), std::string::npos) << huge.status().message();
  EXPECT_FALSE(ParsePeerTestRequest(R"({"peer": "10.0.0.1", "streams": -1e300})").ok());
  EXPECT_FALSE(ParsePeerTestRequest(R"({"peer": "10.0.0.1", "perf_port": 1.5})").ok());
  EXPECT_FALSE(ParsePeerTestRequest(R"({"peer": "10.0.0.1", "bw_size": -1})").ok());
  // A whole number written as a float is still that number.
  auto fine = ParsePeerTestRequest(R"({"peer": "10.0.0.1", "perf_port": 18520, "mtu_port": 18521, "timeout_ms": 2e4, "bw_size": 65536})");
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  EXPECT_EQ(fine->timeout_ms, 20000);
  EXPECT_EQ(fine->bw_size, 65536u);
  auto info = nlohmann::json::parse(R"({"perf_port": 2.13333e12, "mtu_port": 1})");
  EXPECT_THROW((void)info.get<AgentInfo>(), nlohmann::json::exception);
}

TEST(ControlApi, CheckedNumbersKeepEveryTypesLimits) {
  using model::json_fields::Number;
  EXPECT_EQ(Number<int>(nlohmann::json(2147483647), "x"), 2147483647);
  EXPECT_THROW(Number<int>(nlohmann::json(2147483648LL), "x"), nlohmann::json::exception);
  EXPECT_THROW(Number<uint64_t>(nlohmann::json(-1), "x"), nlohmann::json::exception);
  EXPECT_EQ(Number<uint64_t>(nlohmann::json(18446744073709551615ULL), "x"), 18446744073709551615ULL);
  EXPECT_THROW(Number<uint64_t>(nlohmann::json(3.11778e66), "x"), nlohmann::json::exception);
  EXPECT_THROW(Number<int>(nlohmann::json("7"), "x"), nlohmann::json::exception);
  EXPECT_DOUBLE_EQ(Number<double>(nlohmann::json(3), "x"), 3.0);
}

}  // namespace
}  // namespace fabcheck::control
