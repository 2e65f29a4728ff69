#include "perf/verbs/conn_info.h"

#include <gtest/gtest.h>

namespace fabcheck::perf::verbs {
namespace {

ConnInfo Sample() {
  ConnInfo c;
  c.device = "rxe0";
  c.gid = *ParseGid("::ffff:10.0.0.1");
  c.gid_index = 1;
  c.gid_type = "RoCE v2";
  c.active_mtu = 1024;
  c.max_rd_atomic = 128;
  c.rkey = 0x1234;
  c.slot_bytes = 65536;
  c.region_bytes = 4 * 65536;
  c.qps = {{0x11, 0xabcdef, 0x7f0000001000}, {0x12, 0x000001, 0x7f0000021000}};
  return c;
}

TEST(ConnInfoTest, RoundTrip) {
  auto back = ParseConnInfo(ConnInfoToJson(Sample()), 2, false);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->device, "rxe0");
  EXPECT_EQ(FormatGid(back->gid), "::ffff:10.0.0.1");
  EXPECT_EQ(back->gid_index, 1);
  EXPECT_EQ(back->active_mtu, 1024);
  EXPECT_EQ(back->rkey, 0x1234u);
  ASSERT_EQ(back->qps.size(), 2u);
  EXPECT_EQ(back->qps[0].psn, 0xabcdefu);
  EXPECT_EQ(back->qps[1].addr, 0x7f0000021000u);
}

TEST(ConnInfoTest, RefusesMismatchesWithAReason) {
  auto j = ConnInfoToJson(Sample());
  auto r = ParseConnInfo(j, 3, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("peer offers 2 QPs, this side has 3"), std::string::npos);
  r = ParseConnInfo(j, 2, true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("link layers differ"), std::string::npos);
  auto v = j;
  v["version"] = 9;
  r = ParseConnInfo(v, 2, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("same fabcheck version"), std::string::npos);
}

TEST(ConnInfoTest, RefusesGarbage) {
  EXPECT_FALSE(ParseConnInfo(nlohmann::json::array(), 1, false).ok());
  EXPECT_FALSE(ParseConnInfo(nlohmann::json{{"version", 1}}, 1, false).ok());
  for (const char* field : {"qpn", "psn"}) {
    auto j = ConnInfoToJson(Sample());
    j["qps"][0][field] = 0x1000000;  // 25 bits
    auto r = ParseConnInfo(j, 2, false);
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_NE(r.status().message().find(field), std::string::npos);
  }
  auto j = ConnInfoToJson(Sample());
  j["active_mtu"] = 1500;
  EXPECT_FALSE(ParseConnInfo(j, 2, false).ok());
  j = ConnInfoToJson(Sample());
  j["rkey"] = -1;
  EXPECT_FALSE(ParseConnInfo(j, 2, false).ok());
  j = ConnInfoToJson(Sample());
  j["gid"] = "::";
  EXPECT_FALSE(ParseConnInfo(j, 2, false).ok());
  j = ConnInfoToJson(Sample());
  j["region_bytes"] = 1024;  // too small for 2 QPs of 64 KiB slots
  EXPECT_FALSE(ParseConnInfo(j, 2, false).ok());
}

TEST(ConnInfoTest, InfiniBandNeedsALid) {
  ConnInfo c = Sample();
  c.infiniband = true;
  c.lid = 0;
  auto r = ParseConnInfo(ConnInfoToJson(c), 2, true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("subnet manager"), std::string::npos);
  c.lid = 7;
  EXPECT_TRUE(ParseConnInfo(ConnInfoToJson(c), 2, true).ok());
}

}  // namespace
}  // namespace fabcheck::perf::verbs
