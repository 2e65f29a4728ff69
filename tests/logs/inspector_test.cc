// NCCL Inspector output: one object per line or pretty-printed one after
// another; records without coll_perf (P2P, verbose events) are counted, not read.
#include <gtest/gtest.h>

#include "logs/nccl_inspector.h"

namespace fabcheck::logs {
namespace {

constexpr char kPretty[] = R"({
  "header": {"id": "0x7f8c496ae9f661", "rank": 2, "n_ranks": 8, "nnodes": 1},
  "metadata": {"inspector_output_format_version": "v4.0", "git_rev": "", "rec_mechanism": "profiler_plugin",
               "dump_timestamp_us": 1748030377748202, "hostname": "example-hostname", "pid": 1639453},
  "coll_perf": {"coll": "AllReduce", "coll_sn": 1407, "coll_msg_size_bytes": 17179869184,
                "coll_exec_time_us": 61974, "coll_algobw_gbs": 277.210914, "coll_busbw_gbs": 485.119099}
}
{"header": {"id": "0x1", "rank": 0, "n_ranks": 2, "nnodes": 1}, "metadata": {"hostname": "h", "pid": 1},
 "p2p_perf": {"op": "Send"}}
{"broken": )";

TEST(NcclInspector, PrettyPrintedAndSkippedObjects) {
  EXPECT_TRUE(LooksLikeInspectorJson(kPretty));
  EXPECT_FALSE(LooksLikeInspectorJson("{\"schema\": \"fabcheck.perf/v1\"}"));
  InspectorFile f = ParseInspectorJson(kPretty);
  ASSERT_EQ(f.records.size(), 1u);
  const auto& r = f.records[0];
  EXPECT_EQ(r.comm_id, "0x7f8c496ae9f661");
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.n_ranks, 8);
  EXPECT_EQ(r.hostname, "example-hostname");
  EXPECT_EQ(r.pid, 1639453);
  EXPECT_EQ(r.version, "v4.0");
  EXPECT_EQ(r.coll, "AllReduce");
  EXPECT_EQ(r.seq, 1407u);
  EXPECT_EQ(r.bytes, 17179869184u);
  EXPECT_DOUBLE_EQ(r.busbw_gbs, 485.119099);
  EXPECT_EQ(f.skipped, 1);  // the P2P record; the unterminated object is never complete
}

}  // namespace
}  // namespace fabcheck::logs
