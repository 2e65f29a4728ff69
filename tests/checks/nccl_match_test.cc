// NCCL's list syntax, table-driven against NCCL's own parse/match code
// (src/misc/utils.cc parseStringList/matchIfList, v2.23.4).
#include "checks/nccl_match.h"

#include <gtest/gtest.h>

namespace fabcheck::checks {
namespace {

struct Case {
  const char* list;
  const char* name;
  int port;
  bool selected;
};

class NcclMatchTest : public ::testing::TestWithParam<Case> {};

TEST_P(NcclMatchTest, SelectsAsNcclDoes) {
  const Case& c = GetParam();
  NcclList list = ParseNcclList(c.list, kNcclMaxIbDevs);
  EXPECT_EQ(NcclSelects(list, c.name, c.port), c.selected)
      << "list '" << c.list << "' name " << c.name << " port " << c.port;
}

INSTANTIATE_TEST_SUITE_P(
    Table, NcclMatchTest,
    ::testing::Values(
        // Prefixes: mlx5_1 also selects mlx5_10..19 (the classic trap).
        Case{"mlx5_1", "mlx5_1", 1, true}, Case{"mlx5_1", "mlx5_10", 1, true}, Case{"mlx5_1", "mlx5_19", 1, true},
        Case{"mlx5_1", "mlx5_2", 1, false}, Case{"mlx5", "mlx5_7", 1, true},
        // '=' makes every entry exact.
        Case{"=mlx5_1", "mlx5_1", 1, true}, Case{"=mlx5_1", "mlx5_10", 1, false},
        Case{"=mlx5_1,mlx5_2", "mlx5_2", 1, true}, Case{"=mlx5_1,mlx5_2", "mlx5_21", 1, false},
        // '^' excludes, prefix-wise unless followed by '='.
        Case{"^mlx5_1", "mlx5_10", 1, false}, Case{"^mlx5_1", "mlx5_2", 1, true},
        Case{"^=mlx5_1", "mlx5_10", 1, true}, Case{"^=mlx5_1", "mlx5_1", 1, false},
        // '=' before '^' is not an exclusion: the list is exact and the name starts with '^'.
        Case{"=^mlx5_1", "mlx5_1", 1, false},
        // Ports: name:port restricts to that port; -1 on either side matches.
        Case{"mlx5_0:1", "mlx5_0", 1, true}, Case{"mlx5_0:1", "mlx5_0", 2, false},
        Case{"mlx5_0:2,mlx5_1", "mlx5_1", 2, true}, Case{"mlx5_0:1", "mlx5_0", -1, true},
        // Empty list: everything (NCCL's "no user list" exception); "^" alone: nothing.
        Case{"", "mlx5_0", 1, true}, Case{"^", "mlx5_0", 1, false},
        // Empty entries are skipped; the match is case-sensitive.
        Case{",,mlx5_3,,", "mlx5_3", 1, true}, Case{"MLX5_0", "mlx5_0", 1, false},
        // Socket names.
        Case{"eth", "eth0", -1, true}, Case{"eth", "enp1s0", -1, false}, Case{"^docker,lo", "lo", -1, false},
        Case{"^docker,lo", "docker0", -1, false}, Case{"^docker,lo", "eno1", -1, true},
        Case{"=eth0", "eth0.100", -1, false}));

TEST(NcclListTest, ParsesFlagsEntriesAndPorts) {
  NcclList l = ParseNcclList("^=mlx5_0:1,mlx5_2,:3,mlx5_4:x", kNcclMaxIbDevs);
  EXPECT_TRUE(l.exclude);
  EXPECT_TRUE(l.exact);
  ASSERT_EQ(l.entries.size(), 3u);  // ":3" has no name and is dropped, as in NCCL
  EXPECT_EQ(l.entries[0].name, "mlx5_0");
  EXPECT_EQ(l.entries[0].port, 1);
  EXPECT_EQ(l.entries[1].port, -1);
  EXPECT_EQ(l.entries[2].port, 0);  // atoi("x") == 0
  EXPECT_EQ(FormatNcclList(l), "^=mlx5_0:1,mlx5_2,mlx5_4:0");
}

TEST(NcclListTest, EntriesBeyondTheLimitAreDropped) {
  std::string many;
  for (int i = 0; i < 20; ++i) many += (i ? "," : "") + std::string("eth") + std::to_string(i);
  NcclList l = ParseNcclList("=" + many, kNcclMaxSocketIfs);
  EXPECT_EQ(l.entries.size(), 16u);
  EXPECT_EQ(l.dropped, 4);
  EXPECT_FALSE(NcclSelects(l, "eth19", -1));
}

}  // namespace
}  // namespace fabcheck::checks
