#include "perf/verbs/gid.h"

#include <gtest/gtest.h>

namespace fabcheck::perf::verbs {
namespace {

GidEntry Entry(int index, const char* gid, GidType type, const char* netdev) {
  GidEntry e;
  e.index = index;
  e.gid = *ParseGid(gid);
  e.type = type;
  e.netdev = netdev;
  return e;
}

TEST(GidTest, ParsesSysfsAndTextForms) {
  auto a = ParseGid("0000:0000:0000:0000:0000:ffff:0a00:0001");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(FormatGid(*a), "::ffff:10.0.0.1");
  EXPECT_TRUE(GidIsIpv4Mapped(*a));
  EXPECT_EQ(GidIpv4(*a), "10.0.0.1");
  auto ll = ParseGid("fe80:0000:0000:0000:5054:00ff:fe12:3456");
  ASSERT_TRUE(ll.ok());
  EXPECT_TRUE(GidIsLinkLocal(*ll));
  EXPECT_FALSE(GidIsIpv4Mapped(*ll));
  EXPECT_EQ(GidIpv4(*ll), std::nullopt);
  EXPECT_TRUE(GidIsZero(*ParseGid("0000:0000:0000:0000:0000:0000:0000:0000")));
  EXPECT_FALSE(ParseGid("not a gid").ok());
  EXPECT_FALSE(ParseGid("").ok());
}

TEST(GidTest, ParsesTypes) {
  EXPECT_EQ(ParseGidType("RoCE v2\n"), GidType::kRoceV2);
  EXPECT_EQ(ParseGidType("IB/RoCE v1"), GidType::kRoceV1);
  EXPECT_EQ(ParseGidType("bogus"), GidType::kUnknown);
  EXPECT_EQ(GidTypeName(GidType::kRoceV2), "RoCE v2");
}

TEST(GidTest, RangeContains) {
  auto r = GidRange::Parse("10.0.0.0/8");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Contains(*ParseGid("::ffff:10.1.2.3")));
  EXPECT_FALSE(r->Contains(*ParseGid("::ffff:11.1.2.3")));
  auto r6 = GidRange::Parse("fd00::/8");
  ASSERT_TRUE(r6.ok());
  EXPECT_TRUE(r6->Contains(*ParseGid("fd12::1")));
  EXPECT_FALSE(r6->Contains(*ParseGid("fe80::1")));
  EXPECT_FALSE(GidRange::Parse("10.0.0.0/33").ok());
  EXPECT_FALSE(GidRange::Parse("10.0.0.0").ok());
  EXPECT_FALSE(GidRange::Parse("garbage/8").ok());
}

// A typical mlx5 table: v1 and v2 link-local, then v1 and v2 IPv4.
std::vector<GidEntry> Mlx5Table() {
  return {Entry(0, "fe80::ba59:9fff:fed4:4a2e", GidType::kRoceV1, "ens1f0"),
          Entry(1, "fe80::ba59:9fff:fed4:4a2e", GidType::kRoceV2, "ens1f0"),
          Entry(2, "::ffff:10.0.10.5", GidType::kRoceV1, "ens1f0"),
          Entry(3, "::ffff:10.0.10.5", GidType::kRoceV2, "ens1f0")};
}

TEST(GidSelectTest, PicksRoceV2Ipv4OnMlx5Table) {
  auto c = SelectGid(Mlx5Table(), false, {"ens1f0"}, std::nullopt);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->entry.index, 3);
  EXPECT_NE(c->reason.find("RoCE v2 IPv4 ::ffff:10.0.10.5 on ens1f0"), std::string::npos) << c->reason;
  EXPECT_TRUE(c->notes.empty());
}

TEST(GidSelectTest, IpOrderDoesNotMatterAndIpv6ComesFirst) {
  // An IPv6 address added before the IPv4 one shifts the IPv4 GIDs to 4/5:
  // a hard-coded index 3 would pick the IPv6 v2 GID here.
  std::vector<GidEntry> t = {Entry(0, "fe80::1", GidType::kRoceV1, "eth0"),
                             Entry(1, "fe80::1", GidType::kRoceV2, "eth0"),
                             Entry(2, "fd00::5", GidType::kRoceV1, "eth0"),
                             Entry(3, "fd00::5", GidType::kRoceV2, "eth0"),
                             Entry(4, "::ffff:192.168.1.5", GidType::kRoceV1, "eth0"),
                             Entry(5, "::ffff:192.168.1.5", GidType::kRoceV2, "eth0")};
  auto c = SelectGid(t, false, {"eth0"}, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry.index, 5);
  GidPolicy v6;
  v6.family = AddrFamily::kIpv6;
  auto c6 = SelectGid(t, false, {"eth0"}, std::nullopt, v6);
  ASSERT_TRUE(c6.ok());
  EXPECT_EQ(c6->entry.index, 3);
}

TEST(GidSelectTest, SkipsEmptySlotsAndOtherNetdevs) {
  std::vector<GidEntry> t = {Entry(0, "fe80::1", GidType::kRoceV2, "veth0"),
                             Entry(1, "::", GidType::kUnknown, ""),
                             Entry(2, "::ffff:10.9.9.9", GidType::kRoceV2, "docker0"),
                             Entry(3, "::ffff:10.0.0.1", GidType::kRoceV2, "veth0")};
  auto c = SelectGid(t, false, {"veth0"}, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry.index, 3);
}

TEST(GidSelectTest, PrefersThePortNetdevOverItsVlan) {
  std::vector<GidEntry> t = {Entry(0, "fe80::1", GidType::kRoceV2, "eth0"),
                             Entry(1, "::ffff:172.16.0.1", GidType::kRoceV2, "eth0.100"),
                             Entry(2, "::ffff:10.0.0.1", GidType::kRoceV2, "eth0")};
  auto c = SelectGid(t, false, {"eth0", "eth0.100"}, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry.index, 2);
  // Only the VLAN has an IPv4 address: its GID is used.
  t.pop_back();
  c = SelectGid(t, false, {"eth0", "eth0.100"}, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry.index, 1);
  EXPECT_NE(c->reason.find("eth0.100"), std::string::npos);
}

TEST(GidSelectTest, AddressRangeFilters) {
  std::vector<GidEntry> t = {Entry(0, "::ffff:10.0.0.1", GidType::kRoceV2, "eth0"),
                             Entry(1, "::ffff:192.168.0.1", GidType::kRoceV2, "eth0")};
  GidPolicy p;
  p.range = *GidRange::Parse("192.168.0.0/16");
  auto c = SelectGid(t, false, {"eth0"}, std::nullopt, p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry.index, 1);
}

TEST(GidSelectTest, NoIpv4GidIsAnErrorWithTheTableAndFix) {
  std::vector<GidEntry> t = {Entry(0, "fe80::1", GidType::kRoceV2, "eth0"),
                             Entry(1, "::ffff:10.0.0.1", GidType::kRoceV1, "eth0")};
  auto c = SelectGid(t, false, {"eth0"}, std::nullopt);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find("no RoCE v2 IPv4 GID on netdev eth0"), std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("1 RoCE v1 ::ffff:10.0.0.1 eth0"), std::string::npos);
  EXPECT_NE(c.status().message().find("--gid-index"), std::string::npos);
  EXPECT_FALSE(SelectGid({}, false, {"eth0"}, std::nullopt).ok());
}

TEST(GidSelectTest, RoceV1PolicyPicksV1) {
  GidPolicy p;
  p.roce_version = 1;
  auto c = SelectGid(Mlx5Table(), false, {"ens1f0"}, std::nullopt, p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry.index, 2);
}

TEST(GidSelectTest, InfiniBandUsesIndexZero) {
  std::vector<GidEntry> t = {Entry(0, "fe80::ba59:9f03:d4:4a2e", GidType::kIb, ""),
                             Entry(1, "fec0::ba59:9f03:d4:4a2e", GidType::kIb, "")};
  auto c = SelectGid(t, true, {}, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry.index, 0);
  EXPECT_FALSE(SelectGid({}, true, {}, std::nullopt).ok());
}

TEST(GidSelectTest, UserIndexIsUsedWithANoteWhenUnusual) {
  auto c = SelectGid(Mlx5Table(), false, {"ens1f0"}, 1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry.index, 1);
  ASSERT_EQ(c->notes.size(), 1u);
  EXPECT_NE(c->notes[0].find("link-local"), std::string::npos);
  c = SelectGid(Mlx5Table(), false, {"ens1f0"}, 2);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->notes.at(0).find("RoCE v1"), std::string::npos);
  c = SelectGid(Mlx5Table(), false, {"ens1f0"}, 3);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->notes.empty());
  auto bad = SelectGid(Mlx5Table(), false, {"ens1f0"}, 7);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--gid-index 7 is an empty slot"), std::string::npos);
}

TEST(GidSelectTest, UnknownNetdevAcceptsAnyOwner) {
  std::vector<GidEntry> t = {Entry(4, "::ffff:10.0.0.7", GidType::kRoceV2, "")};
  auto c = SelectGid(t, false, {}, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry.index, 4);
}

}  // namespace
}  // namespace fabcheck::perf::verbs
