// A ladder bundle (written with bundle::Writer, as `fabcheck ladder` does):
// member names, counter samples across rungs, pair results and NCCL logs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bundle/bundle.h"
#include "diagnose/engine.h"
#include "diagnose/inputs.h"

namespace fabcheck::diagnose {
namespace {

namespace fs = std::filesystem;

const model::Diagnosis* One(const model::DiagnoseReport& r, const std::string& rule) {
  for (const auto& d : r.findings) {
    if (d.rule == rule) return &d;
  }
  return nullptr;
}

TEST(Bundle, MembersCountersPairsAndLogs) {
  fs::path dir = fs::temp_directory_path() / ("fabcheck-diagnose-bundle-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const char* out : {"dir", "b.tar.gz"}) {
    std::string path = (dir / out).string();
    fs::create_directories(dir);
    auto w = bundle::Writer::Create(path);
    ASSERT_TRUE(w.ok()) << w.status().message();
    model::LadderManifest m;
    m.fabcheck_version = "test";
    for (const char* id : {"n1", "n2"}) {
      model::LadderMember member;
      member.id = id;
      member.name = id;
      member.data_addresses = {std::string(id) == "n1" ? "10.0.0.1" : "10.0.0.2"};
      m.members.push_back(member);
    }
    // Counter samples before and after three rungs: rnr_nak_retry_err rises in each.
    const char* rungs[] = {"L1L2.node", "L2.path", "L3"};
    model::RungResult l3;
    for (int i = 0; i < 3; ++i) {
      for (const char* phase : {"before", "after"}) {
        model::CounterSample s;
        s.member = "n2";
        s.rung = rungs[i];
        s.phase = phase;
        s.time_unix = 1.7e9 + i * 100 + (std::string(phase) == "after" ? 50 : 0);
        s.values["mlx5_0/1"]["hw_counters/local_ack_timeout_err"] = static_cast<uint64_t>(i * 100 + (phase[0] == 'a' ? 60 : 0));
        ASSERT_TRUE(w->WriteJson(bundle::CounterFile("n2", rungs[i], phase), s).ok());
      }
    }
    l3.id = "L3";
    l3.verdict = model::RungVerdict::kFail;
    l3.members = {"n1", "n2"};
    model::PairTest p;
    p.a = "n1";
    p.b = "n2";
    p.transport = "tcp";
    p.bw_gbps = 19.0;
    p.expected_gbps = 360;
    p.expected_basis = "400 Gb/s port x 90%";
    p.verdict = model::RungVerdict::kFail;
    l3.pairs = {p};
    std::string log = "rungs/L4/nccl.n1.log";
    ASSERT_TRUE(w->WriteFile(log,
                             "n1:5:6 [0] transport/net_ib.cc:2470 NCCL WARN NET/IB: Got completion from peer "
                             "10.0.0.2<4000> with status=12 opcode=0 len=0 vendor err 129 (Recv) hca mlx5_0\n")
                    .ok());
    l3.evidence_files = {log};
    m.rungs = {l3};
    ASSERT_TRUE(w->Finish(m).ok());

    auto ev = LoadEvidence({path}, {});
    ASSERT_TRUE(ev.ok());
    for (const auto& in : ev->inputs) EXPECT_EQ(in.status, "read") << in.path << ": " << in.status;
    auto r = Diagnose(*ev);
    const auto* retrans = One(r, "counters.retransmission");
    ASSERT_NE(retrans, nullptr) << out;
    EXPECT_EQ(retrans->object, "n2 mlx5_0/1");
    EXPECT_EQ(retrans->severity, model::Severity::kWarn);
    const auto* plateau = One(r, "perf.tcp-plateau");
    ASSERT_NE(plateau, nullptr);
    EXPECT_NE(plateau->message.find("on a 400 Gb/s port"), std::string::npos) << plateau->message;
    const auto* wc = One(r, "nccl.ib.wc-error");
    ASSERT_NE(wc, nullptr);
    // The peer's address names the member.
    EXPECT_NE(wc->object.find("n2 (10.0.0.2)"), std::string::npos) << wc->object;
    EXPECT_NE(wc->next.find("and n2"), std::string::npos) << wc->next;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fabcheck::diagnose
